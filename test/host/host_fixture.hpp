// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_TEST_HOST_FIXTURE_HPP
#define SANDBOX_TEST_HOST_FIXTURE_HPP

#include "test_support.hpp"

namespace sandbox::test {

/// A host runner with a policy, and helpers to run one command through it.
struct host_fixture {
    execution_policy policy = execution_policy::defaults().with_timeout(10s);
    driver_options options;

    std::unique_ptr<command_runner> runner() const { return make_runner(policy, driver::host, options); }

    exec_result run(std::vector<std::string> argv, std::optional<std::string> stdin_data = std::nullopt,
                    output_callback cb = {}) const
    {
        auto r = runner();
        return run_sync(*r, std::move(argv), std::move(stdin_data), std::move(cb));
    }

    exec_result sh(const std::string& script) const { return run({"sh", "-c", script}); }
};

inline double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace sandbox::test

#endif
