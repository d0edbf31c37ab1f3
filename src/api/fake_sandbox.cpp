// SPDX-License-Identifier: BSL-1.0
#include <sandbox/fake_sandbox.hpp>

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

exec_result fake_sandbox::respond(const std::vector<std::string>& argv, const std::optional<std::string>& stdin_data,
                                  const output_callback& on_output)
{
    std::string key;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (i != 0) key += ' ';
        key += argv[i];
    }
    exec_result result;
    {
        std::lock_guard lock(state_->mutex);
        auto recorded = argv;
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

asio::awaitable<exec_result> fake_sandbox::execute(std::vector<std::string> argv, std::optional<std::string> stdin_data,
                                                   output_callback on_output)
{
    co_return respond(argv, stdin_data, on_output);
}

}  // namespace sandbox
