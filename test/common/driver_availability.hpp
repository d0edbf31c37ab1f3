// SPDX-License-Identifier: BSL-1.0
// Whether a driver can run here. Tests on a driver that cannot run say so loudly and return,
// except under CI=true, where that is a failure: CI always has every engine.
#ifndef SANDBOX_TEST_DRIVER_AVAILABILITY_HPP
#define SANDBOX_TEST_DRIVER_AVAILABILITY_HPP

#include "test_support.hpp"

#include <map>
#include <mutex>

namespace sandbox::test {

/// The image docker and podman tests use: SANDBOX_TEST_IMAGE, default the local busybox
/// image scripts/setup-engines.sh imports.
inline std::string test_image()
{
    const char* v = std::getenv("SANDBOX_TEST_IMAGE");
    return v && *v ? v : "sandbox-test/busybox:latest";
}

inline driver_options test_options()
{
    driver_options o;
    o.image = test_image();
    return o;
}

/// Empty when `d` runs `true`; else why not (once per driver and process).
inline std::string why_unavailable(driver d)
{
    static std::mutex m;
    static std::map<driver, std::string> cache;
    std::lock_guard lock(m);
    if (auto it = cache.find(d); it != cache.end()) return it->second;
    std::string why;
    try {
        auto r = make_runner(execution_policy::defaults().with_timeout(60s), d, test_options());
        auto res = run_sync(*r, {"true"});
        if (!res.success()) why = "`true` failed with exit " + std::to_string(res.exit_code) + ": " + res.err;
    } catch (const std::exception& e) {
        why = e.what();
    }
    return cache[d] = why;
}

/// True when the test may go on with `d`. Otherwise reports a skip (or, under CI, a
/// failure) naming the driver and the reason.
inline bool require_driver(driver d)
{
    const auto why = why_unavailable(d);
    if (why.empty()) return true;
    if (running_in_ci()) {
        BOOST_FAIL("driver " << to_string(d) << " cannot run under CI=true: " << why);
    }
    BOOST_TEST_MESSAGE("SKIPPED: driver " << to_string(d) << " cannot run here: " << why);
    BOOST_WARN_MESSAGE(false, "SKIPPED: driver " << to_string(d) << " cannot run here: " << why);
    return false;
}

}  // namespace sandbox::test

namespace sandbox {
inline std::ostream& boost_test_print_type(std::ostream& os, driver d) { return os << to_string(d); }
}  // namespace sandbox

#endif
