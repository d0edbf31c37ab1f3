// SPDX-License-Identifier: BSL-1.0
#include <sandbox/fake_sandbox.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <deque>
#include <mutex>
#include <stdexcept>

namespace sandbox {

struct fake_sandbox::state {
    std::mutex mutex;
    std::map<std::string, std::deque<exec_result>> queues;
    std::optional<exec_result> default_response;
    std::vector<std::vector<std::string>> commands;
};

fake_sandbox::fake_sandbox(execution_policy policy, response_map responses, std::optional<exec_result> default_response)
    : policy_(std::move(policy)), state_(std::make_unique<state>())
{
    for (auto& [key, results] : responses)
        state_->queues[key].assign(std::make_move_iterator(results.begin()), std::make_move_iterator(results.end()));
    state_->default_response = std::move(default_response);
}

fake_sandbox::fake_sandbox(fake_sandbox&&) noexcept = default;
fake_sandbox& fake_sandbox::operator=(fake_sandbox&&) noexcept = default;
fake_sandbox::~fake_sandbox() = default;

fake_sandbox fake_sandbox::from_responses(response_map responses, std::optional<exec_result> default_response)
{
    return fake_sandbox(execution_policy::defaults(), std::move(responses), std::move(default_response));
}

void fake_sandbox::enqueue(const std::string& key, exec_result result)
{
    std::lock_guard lock(state_->mutex);
    state_->queues[key].push_back(std::move(result));
}

std::vector<std::vector<std::string>> fake_sandbox::commands() const
{
    std::lock_guard lock(state_->mutex);
    return state_->commands;
}

exec_result fake_sandbox::respond(const std::vector<std::string>& args, const std::optional<std::string>& stdin_data,
                                  const output_callback& on_output)
{
    std::string key;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (i != 0) key += ' ';
        key += args[i];
    }
    exec_result result;
    {
        std::lock_guard lock(state_->mutex);
        auto recorded = args;
        if (stdin_data && !stdin_data->empty()) recorded.push_back("[stdin=" + *stdin_data + "]");
        state_->commands.push_back(std::move(recorded));
        auto it = state_->queues.find(key);
        if (it != state_->queues.end() && !it->second.empty()) {
            result = std::move(it->second.front());
            it->second.pop_front();
        } else if (state_->default_response) {
            result = *state_->default_response;
        } else {
            throw std::runtime_error("fake_sandbox has no response for command: " + key);
        }
    }
    if (on_output) {
        if (!result.out.empty()) on_output(stream_kind::out, result.out);
        if (!result.err.empty()) on_output(stream_kind::err, result.err);
    }
    return result;
}

void fake_sandbox::async_run(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                               execute_handler handler)
{
    // Answered at once, but completed as an operation: posted, through the handler's executor.
    std::exception_ptr ep;
    exec_result result;
    try {
        result = respond(args, options.stdin_data, options.on_output);
    } catch (...) {
        ep = std::current_exception();
    }
    auto hex = asio::get_associated_executor(handler, ex);
    asio::post(ex, asio::bind_executor(hex, [h = std::move(handler), ep, r = std::move(result)]() mutable {
                   std::move(h)(ep, std::move(r));
               }));
}

}  // namespace sandbox
