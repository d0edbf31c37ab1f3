// SPDX-License-Identifier: BSL-1.0
// Which drivers can run here. A test on a driver that cannot run says so loudly and returns,
// except under CI=true, where that is a failure: CI always has every engine.
#ifndef SANDBOX_TEST_DRIVER_AVAILABILITY_HPP
#define SANDBOX_TEST_DRIVER_AVAILABILITY_HPP

#include "test_support.hpp"

#include "drivers/driver_spec.hpp"

#include <boost/test/unit_test.hpp>

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sandbox {

// Boost.Test prints the sample of a data test case through this.
inline std::ostream& boost_test_print_type(std::ostream& os, driver d) { return os << to_string(d); }

}  // namespace sandbox

namespace sandbox::test {

/// The drivers of sandbox::all_drivers for which `keep` holds, in its order.
template <class Pred>
std::vector<driver> drivers_where(Pred keep)
{
    std::vector<driver> out;
    for (driver d : all_drivers)
        if (keep(d)) out.push_back(d);
    return out;
}

/// Every driver that runs on this machine alone: all but slurm, which needs a cluster and
/// has its own suite (test_slurm). Made from the library's table, so a new driver is tested
/// everywhere these lists are used without a line here.
inline const std::vector<driver> every_driver = drivers_where([](driver d) { return d != driver::slurm; });
/// Those of every_driver that isolate (a private work dir per run).
inline const std::vector<driver> isolating_drivers =
    drivers_where([](driver d) { return d != driver::slurm && detail::spec_of(d).isolating; });
/// The container engines.
inline const std::vector<driver> container_drivers =
    drivers_where([](driver d) { return detail::spec_of(d).container; });

/// The image docker and podman run: SANDBOX_TEST_IMAGE, else the local busybox image that
/// scripts/setup-engines.sh imports (no registry is reachable).
inline std::string test_image()
{
    const char* v = std::getenv("SANDBOX_TEST_IMAGE");
    return v && *v ? std::string(v) : std::string("sandbox-test/busybox:latest");
}

inline driver_options options_for(driver /*d*/)
{
    driver_options o;
    o.image = test_image();
    return o;
}

inline bool is_container(driver d) { return d == driver::docker || d == driver::podman; }

/// Why `d` cannot run here, or nullopt when `true` runs through it. Tried once per driver.
inline const std::optional<std::string>& unavailable_reason(driver d)
{
    static std::mutex m;
    static std::map<driver, std::optional<std::string>> cache;
    std::lock_guard lock(m);
    if (auto it = cache.find(d); it != cache.end()) return it->second;
    std::optional<std::string> why;
    try {
        auto runner = make_runner(execution_policy::defaults().with_timeout(60s), d, options_for(d));
        const auto r = run_sync(*runner, {"true"});
        if (!r.success())
            why = "`true` exited " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") + ": " + r.err;
    } catch (const launch_error& e) {
        why = e.what();
    } catch (const std::exception& e) {
        why = std::string("unexpected exception: ") + e.what();
    }
    return cache.emplace(d, std::move(why)).first->second;
}

/// True when `d` can run here. Otherwise a loud skip message, or a test failure under CI=true
/// (engine tests are never skipped in CI).
inline bool driver_ready(driver d)
{
    // SANDBOX_TEST_DRIVERS=landlock,bubblewrap: only these (a suite run again as another user).
    if (const char* only = std::getenv("SANDBOX_TEST_DRIVERS"); only && *only) {
        const std::string list = "," + std::string(only) + ",";
        if (list.find("," + std::string(to_string(d)) + ",") == std::string::npos) {
            BOOST_TEST_MESSAGE("not selected by SANDBOX_TEST_DRIVERS: " << to_string(d));
            return false;
        }
    }
    const auto& why = unavailable_reason(d);
    if (!why) return true;
    if (running_in_ci()) {
        BOOST_ERROR("driver " << to_string(d) << " cannot run here, and CI=true forbids skipping: " << *why);
    } else {
        BOOST_TEST_MESSAGE("SKIPPED: " << to_string(d) << " cannot run here: " << *why);
        BOOST_WARN_MESSAGE(false, "SKIPPED: " << to_string(d) << " cannot run here: " << *why);
    }
    return false;
}

#define SANDBOX_REQUIRE_DRIVER(d)                                                                                      \
    do {                                                                                                               \
        if (!::sandbox::test::driver_ready(d)) return;                                                                \
    } while (0)

/// driver_options for tests: the test image.
inline driver_options test_options() { return options_for(driver::host); }

/// The same as driver_ready(): true when the test may go on with `d`.
inline bool require_driver(driver d) { return driver_ready(d); }

}  // namespace sandbox::test

#endif
