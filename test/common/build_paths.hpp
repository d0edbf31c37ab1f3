// SPDX-License-Identifier: BSL-1.0
// Where this build put what the tests run. Compiled in one unit of its own
// (build_paths.cpp): the paths are the build's, and a definition naming them on every test
// unit would make each one differ between checkouts, so none could come from the compiler
// cache of an earlier checkout.
#ifndef SANDBOX_TEST_BUILD_PATHS_HPP
#define SANDBOX_TEST_BUILD_PATHS_HPP

namespace sandbox::test::build {

const char* source_dir();      ///< the checkout
const char* test_child();      ///< test/common/test_child.cpp's program
const char* seccomp_exec();    ///< sandbox-seccomp-exec
const char* syscall_probe();   ///< sandbox_syscall_probe (static)
const char* landlock_exec();   ///< sandbox-landlock-exec
const char* spawn_helper();    ///< sandbox-spawn
const char* sweeper();         ///< sandbox-sweep
const char* run_bin();         ///< sandbox-run ("" when the command-line tool is not built)
const char* no_pidfd_tool();   ///< test/tools/no_pidfd.cpp's program
const char* setuid_sleeper();  ///< test/tools/setuid_sleeper.cpp's program (static)

}  // namespace sandbox::test::build

#endif
