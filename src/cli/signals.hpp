// SPDX-License-Identifier: BSL-1.0
// SIGINT, SIGTERM and SIGHUP as events on the io_context: the first one asks the run to stop;
// later ones never kill the tool while the running commands are being stopped (that takes at
// most the kill grace), so a second Ctrl-C cannot leave them behind: they go to `on_later`,
// if given, and are swallowed otherwise.
#ifndef SANDBOX_CLI_SIGNALS_HPP
#define SANDBOX_CLI_SIGNALS_HPP

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <functional>
#include <string>

namespace sandbox::cli {

class stop_signals {
public:
    stop_signals(boost::asio::io_context& ctx, std::function<void(int)> on_stop,
                 std::function<void(int)> on_later = {});

    /// The first signal received, 0 if none.
    int received() const noexcept { return received_; }
    /// Stops listening, so the io_context can run out of work.
    void close();

private:
    void wait();

    boost::asio::signal_set set_;
    std::function<void(int)> on_stop_;
    std::function<void(int)> on_later_;
    int received_ = 0;
};

/// "SIGINT" for SIGINT, and so on.
std::string signal_name(int sig);

}  // namespace sandbox::cli

#endif
