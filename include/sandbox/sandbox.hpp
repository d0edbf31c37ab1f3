// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SANDBOX_HPP
#define SANDBOX_SANDBOX_HPP

#include <sandbox/capabilities.hpp>
#include <sandbox/command.hpp>
#include <sandbox/command_runner.hpp>
#include <sandbox/driver.hpp>
#include <sandbox/driver_options.hpp>
#include <sandbox/errors.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/execution_policy.hpp>
#include <sandbox/environment.hpp>
#include <sandbox/fake_sandbox.hpp>
#include <sandbox/json.hpp>
#include <sandbox/mount.hpp>
#include <sandbox/output.hpp>
#include <sandbox/process.hpp>
#include <sandbox/session.hpp>
#include <sandbox/version.hpp>
#include <sandbox/workspace.hpp>

/// \namespace sandbox
/// Everything the library offers: policies, drivers and runners, results and errors,
/// sessions, long-lived processes and the workspace file API.

#endif
