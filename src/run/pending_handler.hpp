// SPDX-License-Identifier: BSL-1.0
#ifndef SANDBOX_SRC_RUN_PENDING_HANDLER_HPP
#define SANDBOX_SRC_RUN_PENDING_HANDLER_HPP

#include <sandbox/detail/config.hpp>
#include <sandbox/exec_result.hpp>
#include <sandbox/output.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <exception>
#include <utility>

namespace sandbox::detail {

using run_signature = void(std::exception_ptr, exec_result);
using run_handler = asio::any_completion_handler<run_signature>;

/// A caller's completion handler until it is called: it keeps the handler's executor busy
/// (its io_context must not run out of work while the command runs) and owns its
/// cancellation slot, cleared just before the call.
class pending_handler {
public:
    pending_handler(run_handler h, const asio::any_io_executor& fallback)
        : handler_(std::move(h)),
          work_(asio::prefer(asio::get_associated_executor(handler_, fallback),
                             asio::execution::outstanding_work.tracked)),
          slot_(asio::get_associated_cancellation_slot(handler_))
    {
    }

    /// Installs `f` as the cancellation handler, if the caller can cancel. Call it on the
    /// initiating thread, where the slot may be touched.
    template <typename F>
    void on_cancel(F f)
    {
        if (slot_.is_connected()) slot_.template emplace<F>(std::move(f));
    }

    /// Calls the handler once, through its associated executor.
    void complete(std::exception_ptr ep, exec_result r)
    {
        auto ex = std::exchange(work_, {});
        asio::dispatch(ex, [h = std::move(handler_), slot = slot_, ep, r = std::move(r)]() mutable {
            // Cleared on the handler's executor, where the cancellation signal is emitted.
            if (slot.is_connected()) slot.clear();
            std::move(h)(ep, std::move(r));
        });
    }

private:
    run_handler handler_;
    asio::any_completion_executor work_;
    asio::cancellation_slot slot_;
};

/// Completes `h` with `ep` as a fresh operation would: posted, never from inside the
/// initiating call, through the handler's associated executor (else `ex`).
inline void complete_later(const asio::any_io_executor& ex, run_handler h, std::exception_ptr ep)
{
    pending_handler p(std::move(h), ex);
    asio::post(ex, [p = std::move(p), ep]() mutable { p.complete(ep, {}); });
}

/// Completes `h` with the result of a command that could not start, likewise: `on_output`
/// sees its stderr first, as for a command that ran (what it throws completes `h` instead).
inline void complete_later(const asio::any_io_executor& ex, run_handler h, exec_result r, output_callback on_output)
{
    pending_handler p(std::move(h), ex);
    asio::post(ex, [p = std::move(p), r = std::move(r), on_output = std::move(on_output)]() mutable {
        std::exception_ptr ep;
        if (on_output && !r.err.empty()) {
            try {
                on_output(stream_kind::err, r.err);
            } catch (...) {
                ep = std::current_exception();
            }
        }
        p.complete(ep, ep ? exec_result{} : std::move(r));
    });
}

}  // namespace sandbox::detail

#endif
