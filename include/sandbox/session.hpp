// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SESSION_HPP
#define SANDBOX_SESSION_HPP

#include <sandbox/command_runner.hpp>
#include <sandbox/detail/export.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox {

/// Settings of a session that are neither policy nor driver.
struct session_options {
    /// Where a host-driver session makes its private directory (the caller's, 0700 inside
    /// it). Empty: the temporary directory (TMPDIR, else /tmp).
    std::filesystem::path state_root;
};

/// Consecutive shell commands that share their working directory and exported variables,
/// like lines typed into one shell, without keeping a shell running: each command runs
/// through an ordinary execution wrapped in a small script that restores the state first
/// and saves it on exit (also after `exit N` and after a failing command).
///
/// The state lives in a private session directory (0700, files 0600), removed by close(),
/// and never in the directory the commands work in: on the host driver it is made under
/// session_options::state_root (the base dir is often a workspace the commands list and
/// clean); an isolating driver keeps it beside the session's one work dir under the base
/// dir, out of the commands' sight (they see /work), and mounts only the state in. That
/// work dir lasts the session's life, so files and `cd` into them survive between commands.
/// Sessions are isolated from each other. Not for concurrent use: one command at a time.
class SANDBOX_DECL session final : public command_runner {
public:
    /// A session on driver `d` under `policy`: any driver but slurm, which has no node to
    /// keep a work dir on. Throws launch_error when the base dir or the session directory
    /// cannot be used.
    session(execution_policy policy, driver d, driver_options options = {}, session_options settings = {});
    ~session() override;
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    const execution_policy& policy() const override { return policy_; }
    capabilities caps() const override { return inner_->caps(); }

    /// `sh -c <script>` and `bash -c <script>` run in the session; any other argv passes
    /// straight through to the driver, without session state.
    void async_run(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                     execute_handler handler) override;
    using command_runner::execute;

    /// `sh -c script` in the session.
    asio::awaitable<exec_result> run(std::string script, std::optional<std::string> stdin_data = std::nullopt,
                                     output_callback on_output = {});

    /// `sh -c script` starting in `dir` (relative to where the session's commands start)
    /// instead of the saved working directory; `dir` then becomes the saved one.
    asio::awaitable<exec_result> run_in(std::string dir, std::string script,
                                        std::optional<std::string> stdin_data = std::nullopt,
                                        output_callback on_output = {});

    /// Sandboxes started ahead for the session's commands, as command_runner::prewarm: each
    /// shares the session's work dir.
    asio::awaitable<void> prewarm(std::size_t count, std::chrono::seconds idle) override;
    using command_runner::prewarm;

    /// A long-lived process in the session's sandbox (its work dir), without shell state.
    process start(asio::any_io_executor ex, std::vector<std::string> args, const exec_options& options) override;
    using command_runner::start;

    /// Removes the session's directory. Idempotent; the destructor calls it.
    void close() noexcept;

    /// The session directory on the host (empty after close()).
    const std::filesystem::path& directory() const noexcept { return dir_; }

private:
    std::vector<std::string> wrapped(std::string shell, std::string dir, std::string script) const;
    asio::awaitable<exec_result> run_wrapped(std::string shell, std::string dir, std::string script,
                                             std::optional<std::string> stdin_data, output_callback on_output);

    execution_policy policy_;
    std::filesystem::path dir_;
    std::string state_path_;  // the state directory as the commands see it
    std::unique_ptr<command_runner> inner_;
    std::shared_ptr<void> record_;  // lets a later process clean up if this one dies
    bool bounded_ = false;          // a tmpfs of the disk limit is over dir_
};

}  // namespace sandbox

#endif
