// SPDX-License-Identifier: BSL-1.0
#include "build_paths.hpp"

namespace sandbox::test::build {

const char* source_dir() { return SANDBOX_SOURCE_DIR; }
const char* test_child() { return SANDBOX_TEST_CHILD; }
const char* seccomp_exec() { return SANDBOX_TEST_SECCOMP_EXEC; }
const char* syscall_probe() { return SANDBOX_TEST_SYSCALL_PROBE; }
const char* spawn_helper() { return SANDBOX_TEST_SPAWN_HELPER; }
const char* sweeper() { return SANDBOX_TEST_SWEEP; }
const char* landlock_exec() { return SANDBOX_TEST_LANDLOCK_EXEC; }
const char* run_bin() { return SANDBOX_RUN_BIN; }
const char* no_pidfd_tool() { return SANDBOX_NO_PIDFD_TOOL; }
const char* setuid_sleeper() { return SANDBOX_SETUID_SLEEPER; }

}  // namespace sandbox::test::build
