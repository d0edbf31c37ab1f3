// SPDX-License-Identifier: BSL-1.0
// The steps every start shares, whether it runs one execution (process_runner.cpp), starts a
// long-lived process (process.cpp) or takes a sandbox started ahead: the parent's pipe ends
// handed to Asio all or none, and a spawn's failure told as one code and one message.
#ifndef SANDBOX_SRC_RUN_START_STEPS_HPP
#define SANDBOX_SRC_RUN_START_STEPS_HPP

#include "run/spawn.hpp"

#include <sandbox/detail/unique_fd.hpp>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/system/error_code.hpp>

#include <string>

namespace sandbox::detail {

/// The parent's ends of a child's pipes.
struct parent_ends {
    unique_fd& stdout_r;
    unique_fd& stderr_r;
    unique_fd& stdin_w;  ///< unset: the child's stdin is not ours to write
};

/// Registers `ends` with the reactor through `out`, `err` and `in` (any of Asio's stream
/// descriptors or sockets, or an output_pipe). All or none: on failure (ENOMEM, the epoll
/// watch limit) no object holds a descriptor, `ends` still own and close them, and the code
/// says why; on success the objects own them.
template <class Out, class Err, class In>
boost::system::error_code attach_pipes(parent_ends ends, Out& out, Err& err, In& in)
{
    boost::system::error_code ec;
    if (out.assign(ends.stdout_r.get(), ec) || err.assign(ends.stderr_r.get(), ec) ||
        (ends.stdin_w && in.assign(boost::asio::local::stream_protocol(), ends.stdin_w.get(), ec))) {
        if (out.is_open()) out.release();
        if (err.is_open()) err.release();
        if (in.is_open()) in.release();
        return ec;
    }
    ends.stdout_r.release();
    ends.stderr_r.release();
    ends.stdin_w.release();
    return {};
}

/// A spawn's failure as the caller reports it.
struct spawn_failure {
    boost::system::error_code code;  ///< classify_spawn_error's kind, or the reactor's error
    std::string why;                 ///< without the plan's failure prefix
};

/// What prepare_spawn() or spawn_child() reported, as one code and one message.
inline spawn_failure spawn_failed(const spawn_request& req, std::error_code ec, const std::string& what)
{
    return {classify_spawn_error(req, ec, what), describe_spawn_error(req, ec, what)};
}

/// The reactor refused the pipes.
inline spawn_failure pipes_failed(boost::system::error_code ec)
{
    return {ec, "cannot watch the pipes: " + ec.message()};
}

}  // namespace sandbox::detail

#endif
