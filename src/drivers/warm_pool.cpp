// SPDX-License-Identifier: BSL-1.0
#include "drivers/warm_pool.hpp"

#include "drivers/runner.hpp"
#include "drivers/support.hpp"
#include "run/offload.hpp"
#include "run/spawn.hpp"
#include "run/spawn_wire.hpp"

#include <sandbox/errors.hpp>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <list>
#include <thread>

namespace sandbox::detail {

namespace {

using clock = std::chrono::steady_clock;

// How long a sandbox may take to be ready: an engine under load can take seconds.
constexpr auto ready_limit = std::chrono::seconds(60);

// What the tool wrote on stderr so far, without blocking.
std::string drain(int fd)
{
    std::string out;
    char buf[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP))) break;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0 || out.size() > 65536) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

// A sandbox that ended or never said it was ready: its tool's own failure, as a cold run of it
// reports it (the driver's check), or what it wrote.
[[noreturn]] void not_ready(warm_sandbox& w, child_pipes& pipes, const std::string& why)
{
    auto& child = w.started->child;
    child.signal_tree(SIGKILL);
    const auto end = child.kill_and_reap();
    exec_result r;
    r.exit_code = end.exit_code;
    r.term_signal = end.term_signal;
    r.err = drain(pipes.stderr_r.get());
    r.out = drain(pipes.stdout_r.get());
    clean_up_now(w.plan, true);
    if (w.plan.check) w.plan.check(r);  // throws launch_error for the tool's failures
    auto line = engine_error_line(r.err);
    throw launch_error(errc::engine_failed, w.plan.failure_prefix + ": the sandbox started ahead " + why +
                                                (line.empty() ? std::string() : ": " + line));
}

}  // namespace

warm_sandbox start_warm(const driver_context& ctx)
{
    warm_sandbox w;
    driver_context c = ctx;
    c.warm = &w.setup;
    w.plan = ctx.spec.plan(c, {}, exec_options{});
    auto argv = w.plan.argv;  // what was started, for on_launch and the tests
    auto req = take_spawn_request(w.plan);
    w.plan.argv = std::move(argv);
    req.stdin_socket = true;
    child_pipes pipes;
    std::string what;
    std::error_code failed = prepare_spawn(req, pipes, what);
    spawn_outcome o;
    if (!failed) {
        o = spawn_child(req, pipes);
        failed = o.error;
        what = o.what;
    }
    if (failed) {
        clean_up_now(w.plan, false);
        auto code = classify_spawn_error(req, failed, what);
        if (code == errc::command_not_found || code == errc::command_not_executable) code = errc::driver_unavailable;
        throw launch_error(code, w.plan.failure_prefix + ": " + describe_spawn_error(req, failed, what));
    }
    w.started = std::make_shared<started_sandbox>();
    w.started->child = std::move(o.child);
    w.started->child.kill_through(w.plan.kill_request_signal);
    // The stub's one byte on stdout: the sandbox is up and waits for its command.
    pollfd p[2]{{pipes.stdout_r.get(), POLLIN, 0}, {pipes.stderr_r.get(), POLLIN, 0}};
    const auto deadline = clock::now() + ready_limit;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) not_ready(w, pipes, "was not ready after " + std::to_string(ready_limit.count()) + " s");
        const int n = ::poll(p, 2, static_cast<int>(std::min<long long>(left, 1000)));
        if (n < 0 && errno != EINTR) not_ready(w, pipes, "could not be watched");
        if (n <= 0) continue;
        if (p[0].revents) break;
        // stderr before the byte: the tool failed (or warns, and then the byte follows).
        if (p[1].revents & POLLHUP) not_ready(w, pipes, "ended before it was used");
        if (w.started->child.exited()) not_ready(w, pipes, "ended before it was used");
        p[1].events = 0;  // a warning: wait for the byte or the end
    }
    char byte = 0;
    if (::read(pipes.stdout_r.get(), &byte, 1) != 1 || byte != wire::ready_byte)
        not_ready(w, pipes, "ended before it was used");
    w.started->stdin_w = std::move(pipes.stdin_w);
    w.started->stdout_r = std::move(pipes.stdout_r);
    w.started->stderr_r = std::move(pipes.stderr_r);
    w.ready_at = clock::now();
    return w;
}

std::string hand_off_for(const driver_context& ctx, const warm_sandbox& w, const std::vector<std::string>& args,
                         const exec_options& o, std::string& token)
{
    wire::hand_off h;
    h.argv = args;
    h.env = env_strings(with_extra_env(w.setup.env, o.env, ctx.policy));
    std::filesystem::path cwd = w.setup.inside_work;
    if (!o.cwd.empty()) cwd /= fenced_cwd(w.setup.work_dir, o.cwd, ctx.spec.tool);
    h.cwd = cwd.string();
    if (w.setup.report) h.token = token = random_sandbox_name().substr(8);
    return wire::encode(h);
}

launch_plan warm_launch(const driver_context& ctx, warm_sandbox& w, std::vector<std::string> args, const exec_options& o)
{
    std::string token;
    auto hand_off = hand_off_for(ctx, w, args, o, token);
    launch_plan p = std::move(w.plan);
    p.started = std::move(w.started);
    p.started->hand_off = std::move(hand_off);
    p.started->end_token = std::move(token);
    // The stub reports a command it cannot execute as landlock's launcher does.
    p.check = [id = ctx.spec.id, tool = std::string(ctx.spec.tool), command = args.front()](exec_result& r) {
        (void)as_start_failure(r, id, tool, command);
    };
    p.on_launch = o.on_launch;
    return p;
}

void discard(warm_sandbox w) noexcept
{
    if (w.started) (void)w.started->child.kill_and_reap();
    clean_up_now(w.plan, true);
}

// ---- the pool -------------------------------------------------------------------------------

namespace {

// One thread for the whole process that drops what pools kept unused past their idle time
// and starts the replacements whose delay has passed.
class janitor {
public:
    static janitor& instance()
    {
        static auto* j = new janitor;  // never destroyed: pools may go during static destruction
        return *j;
    }

    void watch(const std::shared_ptr<warm_pool>& pool)
    {
        std::lock_guard lock(mutex_);
        pools_.push_back(pool);
        if (!running_) {
            running_ = true;
            try {
                std::thread([this] { run(); }).detach();
            } catch (...) {
                running_ = false;  // no thread: unused sandboxes then go with their runner
            }
        }
    }

    // A replacement is due at `when`: look then rather than at the next second.
    void wake_by(clock::time_point when)
    {
        {
            std::lock_guard lock(mutex_);
            if (when >= next_) return;
            next_ = when;
        }
        wake_.notify_one();
    }

private:
    void run()
    {
        std::unique_lock lock(mutex_);
        while (!pools_.empty()) {
            wake_.wait_until(lock, next_);
            const auto now = clock::now();
            if (now < next_) continue;  // woken early: a nearer replacement is due
            next_ = now + std::chrono::seconds(1);
            for (auto it = pools_.begin(); it != pools_.end();) {
                if (auto p = it->lock()) {
                    lock.unlock();
                    const auto due = p->expire(now);
                    lock.lock();
                    next_ = std::min(next_, due);
                    ++it;
                } else {
                    it = pools_.erase(it);
                }
            }
        }
        running_ = false;
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::list<std::weak_ptr<warm_pool>> pools_;
    clock::time_point next_ = clock::now() + std::chrono::seconds(1);
    bool running_ = false;
};

}  // namespace

void discard_later(std::vector<warm_sandbox> gone)
{
    if (gone.empty()) return;
    auto shared = std::make_shared<std::vector<warm_sandbox>>(std::move(gone));
    run_on(worker::warm, [shared] {
        for (auto& w : *shared) discard(std::move(w));
    });
}

warm_pool::~warm_pool()
{
    std::vector<warm_sandbox> gone(std::make_move_iterator(ready_.begin()), std::make_move_iterator(ready_.end()));
    ready_.clear();
    discard_later(std::move(gone));
}

void warm_pool::fill(std::size_t count, std::chrono::seconds idle, std::function<void(std::exception_ptr)> done)
{
    std::vector<warm_sandbox> gone;
    std::vector<std::function<void(std::exception_ptr)>> finished;
    bool now = false;
    {
        std::unique_lock lock(mutex_);
        closed_ = false;
        failed_ = false;
        forget_owed();  // asked for now: what is missing starts now
        target_ = count;
        idle_ = idle;
        last_use_ = clock::now();
        while (ready_.size() > target_) {  // fewer asked for: the rest go
            gone.push_back(std::move(ready_.back()));
            ready_.pop_back();
        }
        if (ready_.size() < target_) {
            waiting_.push_back(std::move(done));
        } else {
            now = true;
            finished = std::move(waiting_);  // an earlier, larger fill: met too
            waiting_.clear();
        }
        start_missing(lock);
    }
    discard_later(std::move(gone));
    for (auto& d : finished) d(nullptr);
    if (now && done) done(nullptr);
    if (count > 0) janitor::instance().watch(shared_from_this());
}

void warm_pool::start_missing(std::unique_lock<std::mutex>& lock)
{
    std::size_t n = 0;
    while (!closed_ && !failed_ && ready_.size() + starting_ + owed_.size() < target_) {
        ++starting_;
        ++n;
    }
    if (n == 0) return;
    lock.unlock();
    for (std::size_t i = 0; i < n; ++i)
        run_on(worker::warm, [self = shared_from_this()] {
            try {
                self->started_one(self->start_(), nullptr);
            } catch (...) {
                self->started_one(std::nullopt, std::current_exception());
            }
        });
    lock.lock();
}

void warm_pool::started_one(std::optional<warm_sandbox> w, std::exception_ptr error)
{
    std::vector<std::function<void(std::exception_ptr)>> done;
    std::vector<warm_sandbox> gone;
    {
        std::lock_guard lock(mutex_);
        --starting_;
        if (error) {
            failed_ = true;
            done = std::move(waiting_);
        } else if (closed_ || ready_.size() >= target_) {
            gone.push_back(std::move(*w));
        } else {
            ready_.push_back(std::move(*w));
            if (ready_.size() >= target_) done = std::move(waiting_);
        }
        if (!done.empty()) waiting_.clear();
    }
    for (auto& w2 : gone) discard(std::move(w2));
    for (auto& d : done) d(error);
}

// Held by the execution a sandbox went to (started_sandbox::on_end): its end repays the ticket.
struct warm_pool::refill_owed {
    refill_owed(std::weak_ptr<warm_pool> p, std::shared_ptr<bool> t) : pool(std::move(p)), ticket(std::move(t)) {}
    refill_owed(const refill_owed&) = delete;
    refill_owed& operator=(const refill_owed&) = delete;
    ~refill_owed()
    {
        if (auto p = pool.lock()) p->repay(ticket);
    }

    std::weak_ptr<warm_pool> pool;
    std::shared_ptr<bool> ticket;
};

std::optional<warm_sandbox> warm_pool::take()
{
    std::vector<warm_sandbox> gone;
    std::optional<warm_sandbox> out;
    const auto now = clock::now();
    {
        std::unique_lock lock(mutex_);
        if (closed_) return std::nullopt;
        last_use_ = now;
        while (!ready_.empty() && !out) {
            auto w = std::move(ready_.front());
            ready_.pop_front();
            // Ended meanwhile (killed from outside, out of memory): not usable.
            if (w.started->child.exited()) gone.push_back(std::move(w));
            else out = std::move(w);
        }
        if (out) {
            auto ticket = std::make_shared<bool>(false);
            owed_.emplace_back(ticket, now + refill_delay_);
            out->started->on_end = std::make_shared<refill_owed>(weak_from_this(), std::move(ticket));
        } else {
            forget_owed();  // more asked for than is ready: no replacement waits
        }
        start_missing(lock);
    }
    if (out) janitor::instance().wake_by(now + refill_delay_);
    discard_later(std::move(gone));
    return out;
}

void warm_pool::repay(const std::shared_ptr<bool>& ticket)
{
    std::unique_lock lock(mutex_);
    if (*ticket) return;
    *ticket = true;
    std::erase_if(owed_, [&](const auto& o) { return o.first == ticket; });
    start_missing(lock);
}

void warm_pool::forget_owed()
{
    for (auto& o : owed_) *o.first = true;
    owed_.clear();
}

void warm_pool::close()
{
    std::vector<warm_sandbox> gone;
    std::vector<std::function<void(std::exception_ptr)>> done;
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        target_ = 0;
        forget_owed();
        for (auto& w : ready_) gone.push_back(std::move(w));
        ready_.clear();
        done = std::move(waiting_);
        waiting_.clear();
    }
    discard_later(std::move(gone));
    for (auto& d : done)
        d(std::make_exception_ptr(boost::system::system_error(asio::error::operation_aborted)));
}

std::size_t warm_pool::ready() const
{
    std::lock_guard lock(mutex_);
    return ready_.size();
}

clock::time_point warm_pool::expire(clock::time_point now)
{
    std::vector<warm_sandbox> gone;
    auto next = clock::time_point::max();
    {
        std::unique_lock lock(mutex_);
        bool due = false;
        for (auto& o : owed_)
            if (o.second <= now) *o.first = due = true;
        if (due) {
            std::erase_if(owed_, [](const auto& o) { return *o.first; });
            start_missing(lock);
        }
        for (const auto& o : owed_) next = std::min(next, o.second);
        if (ready_.empty() || now - last_use_ < idle_) return next;
        target_ = 0;  // until the next fill()
        forget_owed();
        for (auto& w : ready_) gone.push_back(std::move(w));
        ready_.clear();
    }
    discard_later(std::move(gone));
    return clock::time_point::max();
}

}  // namespace sandbox::detail
