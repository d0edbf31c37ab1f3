// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_COMMAND_HPP
#define SANDBOX_COMMAND_HPP

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sandbox {

/// An immutable argument vector: `argv::of({"ls", "-l"}).with("/tmp")`.
class argv {
public:
    /// An empty argument vector.
    argv() = default;
    /// The program and its arguments, in order.
    explicit argv(std::vector<std::string> items) : items_(std::move(items)) {}

    /// The same as the constructor.
    [[nodiscard]] static argv of(std::vector<std::string> items) { return argv(std::move(items)); }
    /// From a braced list: `argv::of({"ls", "-l"})`.
    [[nodiscard]] static argv of(std::initializer_list<std::string> items)
    {
        return argv(std::vector<std::string>(items));
    }

    /// A new argv with `item` appended; this one is unchanged.
    [[nodiscard]] argv with(std::string item) const
    {
        auto items = items_;
        items.push_back(std::move(item));
        return argv(std::move(items));
    }

    /// The words, as command_runner::execute() takes them.
    const std::vector<std::string>& to_vector() const noexcept { return items_; }
    /// Every API that takes a command's words takes an argv too: `runner.execute(a)`.
    operator const std::vector<std::string>&() const& noexcept { return items_; }
    /// The same, moving the words out of a temporary.
    operator std::vector<std::string>() && noexcept { return std::move(items_); }
    /// How many words, the program included.
    std::size_t size() const noexcept { return items_.size(); }
    /// True when there is not even a program.
    bool empty() const noexcept { return items_.empty(); }

    /// Equal when the words are.
    friend bool operator==(const argv&, const argv&) = default;

private:
    std::vector<std::string> items_;
};

/// A command and what to feed its stdin: command_runner::execute(), async_execute() and
/// run_sync() take one in place of the words and exec_options::stdin_data.
struct command_spec {
    /// No words and no stdin.
    command_spec() = default;
    /// `command_spec{argv::of({"cat"}), "input"}`. A constructor rather than an aggregate:
    /// g++ 12 frees an aggregate temporary made inside a co_await expression twice.
    explicit command_spec(sandbox::argv words, std::optional<std::string> input = std::nullopt)
        : argv(std::move(words)), stdin(std::move(input))
    {
    }

    sandbox::argv argv;                ///< the command
    std::optional<std::string> stdin;  ///< written to its stdin, then EOF; none: EOF at once

    /// Equal when both members are.
    friend bool operator==(const command_spec& a, const command_spec& b)
    {
        // Not `= default`: g++ 12 with sanitizers warns (maybe-uninitialized) that optional's
        // == reads the string of a disengaged temporary.
        if (!(a.argv == b.argv) || a.stdin.has_value() != b.stdin.has_value()) return false;
        return !a.stdin || *a.stdin == *b.stdin;
    }
};

}  // namespace sandbox

#endif
