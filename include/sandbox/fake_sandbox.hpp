// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_FAKE_SANDBOX_HPP
#define SANDBOX_FAKE_SANDBOX_HPP

#include <sandbox/command_runner.hpp>
#include <sandbox/detail/export.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox {

/// A command_runner for tests: answers from canned results and records every call.
///
/// The key of a command is its argv joined by spaces. Each key's results are returned first
/// in, first out; when they run out, the default response (never consumed), else
/// std::runtime_error "fake_sandbox has no response for command: <key>". The callback gets
/// (out, stdout) then (err, stderr), each skipped when empty. Safe to use from several
/// threads.
class SANDBOX_DECL fake_sandbox final : public command_runner {
public:
    /// Canned results by command key, each key's in the order they are returned.
    using response_map = std::map<std::string, std::vector<exec_result>>;

    /// A fake whose policy() is `policy`, answering from `responses`, then from
    /// `default_response` when set.
    explicit fake_sandbox(execution_policy policy, response_map responses = {},
                          std::optional<exec_result> default_response = std::nullopt);
    /// Takes over the other's responses and recorded calls.
    fake_sandbox(fake_sandbox&&) noexcept;
    /// Takes over the other's responses and recorded calls.
    fake_sandbox& operator=(fake_sandbox&&) noexcept;
    ~fake_sandbox() override;

    /// With execution_policy::defaults().
    [[nodiscard]] static fake_sandbox from_responses(response_map responses,
                                                     std::optional<exec_result> default_response = std::nullopt);

    /// Appends a result to `key`'s queue.
    void enqueue(const std::string& key, exec_result result);

    /// Every call's argv, in call order, plus "[stdin=<data>]" when stdin was non-empty.
    std::vector<std::vector<std::string>> commands() const;

    const execution_policy& policy() const override { return policy_; }
    capabilities caps() const override { return {}; }
    void async_run(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                     execute_handler handler) override;
    using command_runner::execute;

    /// The same lookup as execute(), without a coroutine.
    exec_result respond(const std::vector<std::string>& args, const std::optional<std::string>& stdin_data,
                        const output_callback& on_output = {});

private:
    struct state;
    execution_policy policy_;
    std::unique_ptr<state> state_;
};

}  // namespace sandbox

#endif
