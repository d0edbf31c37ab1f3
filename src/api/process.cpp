// SPDX-License-Identifier: BSL-1.0
//
// sandbox::process, the handle users hold: its I/O and its end.
#include "run/process_state.hpp"

#include <sandbox/errors.hpp>
#include <sandbox/process.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <signal.h>
#include <sys/socket.h>

#include <cstring>

namespace sandbox {

process::process(std::shared_ptr<detail::process_state> state) noexcept : state_(std::move(state)) {}
process::process(process&&) noexcept = default;
process& process::operator=(process&& o) noexcept
{
    if (this != &o) {
        if (state_) state_->shut_down();
        state_ = std::move(o.state_);
    }
    return *this;
}
process::~process()
{
    if (state_) state_->shut_down();
}

pid_t process::pid() const noexcept
{
    if (!state_) return -1;
    std::lock_guard lock(state_->mutex);
    return state_->child.pid();
}

static_assert(process::stderr_tail_bytes == detail::stderr_tail_bytes);

namespace {
[[noreturn]] void refuse_empty(const char* what)
{
    throw system_error(asio::error::bad_descriptor, std::string("process::") + what + ": empty (moved from)");
}
// A read or write on an empty process: bad_descriptor, never inline.
void empty_io(asio::any_completion_handler<process::io_signature> handler)
{
    // Posted through the system executor, then run on the handler's associated executor.
    asio::post(asio::system_executor(),
               asio::append(std::move(handler), boost::system::error_code(asio::error::bad_descriptor), std::size_t{0}));
}
}  // namespace

asio::awaitable<void> process::write(std::string_view data)
{
    auto st = state_;
    if (!st) refuse_empty("write");
    co_await asio::async_write(st->in, asio::buffer(data.data(), data.size()), asio::use_awaitable);
}

void process::close_stdin() noexcept
{
    if (!state_) return;
    // EOF now, so that a write that follows fails (broken_pipe) rather than racing the
    // close; the descriptor is closed on the strand, as a pending write may be running.
    {
        std::lock_guard lock(state_->mutex);
        if (state_->in.is_open()) ::shutdown(state_->in.native_handle(), SHUT_WR);
    }
    asio::dispatch(state_->strand, [st = state_] {
        std::lock_guard lock(st->mutex);
        boost::system::error_code ignored;
        st->in.close(ignored);
    });
}

process::executor_type process::get_executor() const noexcept
{
    return state_ ? executor_type(state_->strand) : executor_type();
}

void process::start_read_some(const std::shared_ptr<detail::process_state>& state, asio::mutable_buffer buffer,
                              asio::any_completion_handler<io_signature> handler)
{
    if (!state) return empty_io(std::move(handler));
    auto& st = *state;
    if (!st.line_buffer.empty() || buffer.size() == 0) {
        // Never completes inline: posted, then run on the handler's associated executor.
        const auto n = std::min(buffer.size(), st.line_buffer.size());
        std::memcpy(buffer.data(), st.line_buffer.data(), n);
        st.line_buffer.erase(0, n);
        asio::post(st.strand, asio::append(std::move(handler), boost::system::error_code(), n));
        return;
    }
    st.out.async_read_some(buffer, std::move(handler));
}

void process::start_write_some(const std::shared_ptr<detail::process_state>& state, asio::const_buffer buffer,
                               asio::any_completion_handler<io_signature> handler)
{
    if (!state) return empty_io(std::move(handler));
    state->in.async_write_some(buffer, std::move(handler));
}

asio::awaitable<std::size_t> process::read_some(asio::mutable_buffer buffer)
{
    boost::system::error_code ec;
    const auto n = co_await async_read_some(buffer, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::eof) co_return 0;
    if (ec) throw system_error(ec, "process: reading stdout: " + ec.message());
    co_return n;
}

asio::awaitable<std::optional<std::string>> process::read_line()
{
    auto st = state_;
    if (!st) refuse_empty("read_line");
    boost::system::error_code ec;
    const auto n = co_await asio::async_read_until(st->out, asio::dynamic_buffer(st->line_buffer), '\n',
                                                   asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
        std::string line = st->line_buffer.substr(0, n - 1);
        st->line_buffer.erase(0, n);
        co_return line;
    }
    if (ec != asio::error::eof) throw system_error(ec, "process: reading stdout: " + ec.message());
    if (st->line_buffer.empty()) co_return std::nullopt;
    co_return std::exchange(st->line_buffer, {});
}

std::string process::stderr_tail() const
{
    if (!state_) return {};
    std::lock_guard lock(state_->mutex);
    detail::tail_buffer copy = state_->err_tail;
    return copy.take();
}

bool process::running() const noexcept
{
    if (!state_) return false;
    std::lock_guard lock(state_->mutex);
    return state_->child && !state_->child.reaped();
}

namespace {
asio::awaitable<exec_result> wait_on(std::shared_ptr<detail::process_state> st)
{
    if (!st) refuse_empty("wait");
    auto w = std::make_shared<detail::process_state::waiter>(co_await asio::this_coro::executor);
    // However this frame ends (cancelled, or destroyed with its io_context), nothing is sent
    // to its channel afterwards.
    struct leave {
        detail::process_state& st;
        const std::shared_ptr<detail::process_state::waiter>& w;
        ~leave()
        {
            std::lock_guard lock(st.mutex);
            std::erase(st.waiters, w);
        }
    } leaving{*st, w};
    if (st->add_waiter(w)) {
        boost::system::error_code ec;
        co_await w->ended.async_receive(asio::redirect_error(asio::use_awaitable, ec));
        std::unique_lock lock(st->mutex);
        if (!st->finished)  // our caller was cancelled, not woken
            throw system_error(asio::error::operation_aborted, "process::wait: cancelled");
    }
    std::lock_guard lock(st->mutex);
    exec_result r = st->result;
    detail::tail_buffer copy = st->err_tail;
    r.truncated_err = copy.truncated();
    r.err = copy.take();
    co_return r;
}
}  // namespace

// The state is taken now, not when the awaitable first runs: the process object may have
// been moved or destroyed by then.
asio::awaitable<exec_result> process::wait() { return wait_on(state_); }

void process::start_wait(std::shared_ptr<detail::process_state> st, asio::any_completion_handler<wait_signature> handler)
{
    if (!st) {
        asio::post(asio::system_executor(),
                   asio::append(std::move(handler), boost::system::error_code(asio::error::bad_descriptor), exec_result{}));
        return;
    }
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto strand = st->strand;
    asio::co_spawn(std::move(strand), wait_on(std::move(st)),
                   asio::bind_cancellation_slot(slot, [h = std::move(handler)](std::exception_ptr e, exec_result r) mutable {
                       boost::system::error_code ec;
                       if (e) {
                           try {
                               std::rethrow_exception(e);
                           } catch (const boost::system::system_error& x) {
                               ec = x.code();
                           } catch (...) {
                               ec = asio::error::fault;
                           }
                       }
                       // On the handler's associated executor.
                       asio::dispatch(asio::append(std::move(h), ec, std::move(r)));
                   }));
}

void process::interrupt() noexcept
{
    if (state_) state_->signal_tree(SIGINT);
}

void process::request_exit() noexcept
{
    if (state_) state_->signal_tree(SIGTERM);
}

void process::terminate() noexcept { kill(); }

void process::kill() noexcept
{
    if (state_) state_->kill_tree();
}

}  // namespace sandbox
