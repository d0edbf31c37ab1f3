// SPDX-License-Identifier: BSL-1.0
#include "signals.hpp"

#include <csignal>
#include <string.h>

namespace sandbox::cli {

stop_signals::stop_signals(boost::asio::io_context& ctx, std::function<void(int)> on_stop,
                           std::function<void(int)> on_later)
    : set_(ctx, SIGINT, SIGTERM, SIGHUP), on_stop_(std::move(on_stop)), on_later_(std::move(on_later))
{
    wait();
}

void stop_signals::wait()
{
    set_.async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (received_ == 0) {
            received_ = sig;
            if (on_stop_) on_stop_(sig);
        } else if (on_later_) {
            on_later_(sig);
        }
        wait();
    });
}

void stop_signals::close()
{
    boost::system::error_code ignored;
    set_.cancel(ignored);
    set_.clear(ignored);
}

std::string signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGPIPE: return "SIGPIPE";
    default: break;
    }
    const char* abbrev = ::sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace sandbox::cli
