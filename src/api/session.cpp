// SPDX-License-Identifier: BSL-1.0
#include "drivers/driver_spec.hpp"
#include "api/driver_runner.hpp"
#include "drivers/runner.hpp"
#include "drivers/run_record.hpp"
#include "drivers/support.hpp"
#include "sys/dynamic_uid.hpp"
#include "sys/mounts.hpp"
#include <sandbox/errors.hpp>
#include <sandbox/mount.hpp>
#include <sandbox/session.hpp>

#include "run/pending_handler.hpp"

#include <unistd.h>

namespace sandbox {

namespace {

// Restores the saved environment and directory, runs the body in this same shell (so cd and
// export stick), and saves both: after the body, and from an EXIT trap so that `exit N`
// saves too. Only shell builtins touch the state (a body may change PATH), their own errors
// are silenced, and the body arrives as an argument, never spliced into this text. State
// files are written 0600.
constexpr const char* wrapper_script = R"sh(__sandbox_st=$1 __sandbox_dir=$2 __sandbox_body=$3
set --
if [ -f "$__sandbox_st/env" ]; then . "$__sandbox_st/env" 2>/dev/null; fi
if [ -n "$__sandbox_dir" ]; then
    cd -- "$__sandbox_dir" || exit 1
elif [ -f "$__sandbox_st/cwd" ]; then
    IFS= read -r __sandbox_cwd < "$__sandbox_st/cwd" 2>/dev/null && cd -- "$__sandbox_cwd" 2>/dev/null
    unset __sandbox_cwd
fi
__sandbox_save() {
    (
        umask 077
        pwd > "$__sandbox_st/cwd"
        if [ -n "${BASH_VERSION:-}" ]; then set -o posix; fi
        export -p > "$__sandbox_st/env"
    ) 2>/dev/null
}
trap '__sandbox_rc=$?; __sandbox_save; exit $__sandbox_rc' EXIT
eval "unset __sandbox_body; $__sandbox_body"
__sandbox_rc=$?
__sandbox_save
trap - EXIT
exit $__sandbox_rc
)sh";

std::string basename_of(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Makes a directory owned by the user commands run as, so they can write their state.
void make_private_dir(const std::filesystem::path& dir, uid_t uid, gid_t gid, bool chown_it)
{
    if (::mkdir(dir.c_str(), 0700) != 0) {
        const int err = errno;
        throw launch_error({err, boost::system::system_category()},
                           "Failed to start session: cannot create " + dir.string() + ": " +
                               std::error_code(err, std::system_category()).message());
    }
    if (::chmod(dir.c_str(), 0700) != 0 || (chown_it && ::chown(dir.c_str(), uid, gid) != 0)) {
        const int err = errno;
        ::rmdir(dir.c_str());
        throw launch_error({err, boost::system::system_category()},
                           "Failed to start session: cannot prepare " + dir.string() + ": " +
                           std::error_code(err, std::system_category()).message());
    }
}

// What a session holds for its whole life: the record a later process would clean up by, and
// under a root caller the uid all its commands run as (their work dir is theirs).
struct session_hold {
    detail::run_record record;
    std::optional<detail::run_uid> uid;
};

// Where the state dir appears to commands of isolating drivers: a fixed place of its own,
// so no user path can take its mount index.
constexpr const char* state_mount = "/mnt/.sandbox-session";

}  // namespace

session::session(execution_policy policy, driver d, driver_options options, session_options settings)
    : policy_(std::move(policy))
{
    if (d == driver::slurm)
        throw launch_error(errc::driver_unavailable,
                           "Failed to start session: the slurm driver runs each command on the node the scheduler "
                           "picks, so no work dir is kept between commands");
    const auto& spec = detail::spec_of(d);
    const bool isolating = spec.isolating;
    // Under a root caller commands of an isolating driver run unprivileged: the dirs are theirs.
    const bool chown_it = ::geteuid() == 0 && isolating;
    auto [uid, gid] = detail::command_ids(d, options);
    std::optional<detail::run_uid> own_uid;
    if (chown_it && spec.dynamic_user) {
        std::string why;
        int err = 0;
        own_uid = detail::run_uid::acquire(why, err);
        if (!own_uid)
            throw launch_error(err ? boost::system::error_code(err, boost::system::system_category())
                                   : boost::system::error_code(errc::driver_unavailable),
                               "Failed to start session: no uid of its own: " + why);
        uid = own_uid->uid();
        gid = own_uid->gid();
    }

    const auto name = "sandbox-session-" + detail::random_sandbox_name().substr(8);
    if (isolating) {
        dir_ = policy_.base_dir() / name;
    } else {
        std::error_code ec;
        if (!std::filesystem::is_directory(policy_.base_dir(), ec))
            throw launch_error(errc::bad_working_directory, "Failed to start session: the base dir " +
                                                                policy_.base_dir().string() + " is not a directory");
        const auto root = settings.state_root.empty() ? detail::run_record_dir() : settings.state_root;
        dir_ = std::filesystem::absolute(root, ec) / name;
    }
    // The record first, naming the directory still to be made: a process killed at any moment
    // from here on leaves something a sweep finds.
    record_ = std::make_shared<session_hold>(session_hold{
        detail::run_record::create(dir_.filename().string(), std::filesystem::absolute(dir_), "session"),
        std::move(own_uid)});
    try {
        make_private_dir(dir_, uid, gid, chown_it);
    } catch (...) {
        dir_.clear();  // not ours: nothing to remove
        record_.reset();
        throw;
    }
    try {
        if (isolating && policy_.disk_limit()) {
            // The whole session dir, so its /work keeps what commands leave between them.
            if (::geteuid() != 0)
                throw launch_error(errc::limit_not_enforced,
                                   "Failed to start session: disk_limit " + *policy_.disk_limit() +
                                       " needs a root caller for a session (its /work is a bounded mount)");
            if (auto why = detail::mount_bounded_tmpfs(dir_, policy_.disk_limit_bytes(), chown_it ? uid : ::geteuid(),
                                                       chown_it ? gid : ::getegid());
                !why.empty())
                throw launch_error(errc::limit_not_enforced, "Failed to start session: " + why);
            bounded_ = true;
        }
        make_private_dir(dir_ / "state", uid, gid, chown_it);
        if (isolating) {
            make_private_dir(dir_ / "work", uid, gid, chown_it);
            options.work_dir = dir_ / "work";
            if (dir_.native().find(':') != std::string::npos)
                throw launch_error(errc::bad_working_directory,
                                   "Failed to start session: the session directory " + dir_.string() +
                                   " cannot be mounted (its path holds ':')");
            options.extra_mounts.push_back({(dir_ / "state").string(), state_mount, "rw"});
            state_path_ = spec.host_paths ? (dir_ / "state").string() : state_mount;
        } else {
            state_path_ = (dir_ / "state").string();
        }
        std::optional<std::pair<uid_t, gid_t>> fixed;
        if (chown_it) fixed = std::pair{uid, gid};
        inner_ = detail::make_driver_runner(policy_, std::move(options), d, fixed);
    } catch (...) {
        close();
        throw;
    }
}

session::~session() { close(); }

void session::close() noexcept
{
    if (dir_.empty()) return;
    if (bounded_) detail::detach_mount(dir_);
    bounded_ = false;
    detail::remove_tree(dir_);
    dir_.clear();
    record_.reset();
}

void session::async_run(asio::any_io_executor ex, std::vector<std::string> args, exec_options options,
                          execute_handler handler)
{
    if (args.size() == 3 && args[1] == "-c" && (basename_of(args[0]) == "sh" || basename_of(args[0]) == "bash")) {
        // The shell's own `cd` keeps the session's directory: the option becomes its start.
        try {
            args = wrapped(std::move(args[0]), options.cwd.string(), std::move(args[2]));
        } catch (...) {
            return detail::complete_later(ex, std::move(handler), std::current_exception());
        }
        options.cwd.clear();
    }
    inner_->async_run(std::move(ex), std::move(args), std::move(options), std::move(handler));
}

asio::awaitable<exec_result> session::run(std::string script, std::optional<std::string> stdin_data,
                                          output_callback on_output)
{
    co_return co_await run_wrapped("sh", {}, std::move(script), std::move(stdin_data), std::move(on_output));
}

asio::awaitable<exec_result> session::run_in(std::string dir, std::string script,
                                             std::optional<std::string> stdin_data, output_callback on_output)
{
    if (dir.empty()) dir = ".";
    co_return co_await run_wrapped("sh", std::move(dir), std::move(script), std::move(stdin_data),
                                   std::move(on_output));
}

asio::awaitable<exec_result> session::run_wrapped(std::string shell, std::string dir, std::string script,
                                                  std::optional<std::string> stdin_data, output_callback on_output)
{
    co_return co_await inner_->execute(wrapped(std::move(shell), std::move(dir), std::move(script)),
                                       std::move(stdin_data), std::move(on_output));
}

std::vector<std::string> session::wrapped(std::string shell, std::string dir, std::string script) const
{
    if (dir_.empty()) throw std::logic_error("session: used after close()");
    return {std::move(shell), "-c", wrapper_script, "sandbox-session", state_path_, std::move(dir),
            std::move(script)};
}

asio::awaitable<void> session::prewarm(std::size_t count, std::chrono::seconds idle)
{
    co_await inner_->prewarm(count, idle);
}

process session::start(asio::any_io_executor ex, std::vector<std::string> args, const exec_options& options)
{
    return inner_->start(std::move(ex), std::move(args), options);
}

}  // namespace sandbox
