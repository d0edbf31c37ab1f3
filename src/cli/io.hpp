// SPDX-License-Identifier: BSL-1.0
// Plain descriptor I/O for the tool's own standard streams and files: unbuffered, so what is
// written is out at once (streamed output, one result line at a time).
#ifndef SANDBOX_CLI_IO_HPP
#define SANDBOX_CLI_IO_HPP

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox::cli {

/// A write to one of our outputs failed; `error` is the errno (EPIPE: the reader went away).
class write_error : public std::runtime_error {
public:
    write_error(int error, const std::string& what) : std::runtime_error(what), error(error) {}
    int error;
};

/// Writes all of `data` to `fd`, retrying on EINTR and short writes. Throws write_error.
void write_all(int fd, std::string_view data);

/// Reads `fd` to its end. Throws std::system_error.
std::string read_all(int fd);

/// `s` as one word for sh: as it is when plain, else in single quotes.
std::string shell_quote(std::string_view s);
/// The words of `args`, each quoted for sh, joined by spaces.
std::string shell_command(const std::vector<std::string>& args);

/// The UTF-8 byte order mark some editors put at the start of a text file.
inline constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

/// `text` without a UTF-8 byte order mark at its start.
inline std::string_view skip_bom(std::string_view text)
{
    return text.starts_with(utf8_bom) ? text.substr(utf8_bom.size()) : text;
}

/// True when `fd` is open and a terminal.
bool is_terminal(int fd) noexcept;

/// This program's own path (empty when unknown): what the slurm driver's nodes start.
std::string own_program_path();

/// Raises the soft limit on open descriptors to at least `wanted` (as far as the hard limit
/// allows). Batch runs need a few descriptors per job in flight.
void ensure_descriptor_limit(unsigned long wanted) noexcept;

}  // namespace sandbox::cli

#endif
