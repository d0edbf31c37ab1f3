// SPDX-License-Identifier: BSL-1.0
#include "progress.hpp"

#include "io.hpp"
#include "options.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace sandbox::cli {

namespace {

constexpr auto redraw_interval = std::chrono::milliseconds(100);

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string eta_text(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const auto s = static_cast<long long>(std::ceil(seconds));
    if (s < 60) return std::to_string(s) + "s";
    if (s < 3600) return std::to_string(s / 60) + "m" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + "s";
    return std::to_string(s / 3600) + "h" + ((s / 60) % 60 < 10 ? "0" : "") + std::to_string((s / 60) % 60) + "m";
}

// "1 error", "2 errors".
std::string count_of(std::uint64_t n, const char* one, const char* many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

void to_stderr(const std::string& s) noexcept
{
    try {
        write_all(STDERR_FILENO, s);
    } catch (...) {  // a closed stderr loses the progress line, nothing else
    }
}

}  // namespace

void shared_terminal::clear_line() noexcept
{
    if (!line_shown) return;
    to_stderr("\r\033[K");
    line_shown = false;
}

progress_display::progress_display(boost::asio::any_io_executor ex, const batch_counts& counts,
                                   std::optional<std::uint64_t> total, clock::time_point start,
                                   shared_terminal* terminal)
    : timer_(std::move(ex)), counts_(counts), total_(total), start_(start), terminal_(terminal)
{
}

std::string progress_display::render(const batch_counts& c, std::optional<std::uint64_t> total, double elapsed)
{
    const auto done = c.finished();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    std::string s;
    if (total && *total > 0) {
        constexpr int width = 24;
        const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(*total));
        const int filled = static_cast<int>(frac * width);
        s += '[';
        s.append(static_cast<std::size_t>(filled), '#');
        s.append(static_cast<std::size_t>(width - filled), '.');
        s += "] ";
        s += std::to_string(done) + "/" + std::to_string(*total) + " " + fixed(frac * 100, 0) + "%";
    } else {
        s += std::to_string(done) + " done";
    }
    // The same counts, in the same words, as the summary.
    s += ", " + std::to_string(c.running) + " running";
    s += ", " + std::to_string(c.succeeded) + " succeeded";
    s += ", " + std::to_string(c.failed) + " failed";
    s += ", " + std::to_string(c.timed_out) + " timed out";
    if (c.errors > 0) s += ", " + count_of(c.errors, "error", "errors");
    if (c.cancelled > 0) s += ", " + std::to_string(c.cancelled) + " cancelled";
    if (c.skipped > 0) s += ", " + std::to_string(c.skipped) + " skipped";
    s += ", " + fixed(rate, 1) + " jobs/s";
    if (total && *total > done) {
        s += ", ETA ";
        s += rate > 0 ? eta_text(static_cast<double>(*total - done) / rate) : "?";
    }
    return s;
}

void progress_display::start()
{
    running_ = true;
    tick();
}

void progress_display::tick()
{
    if (!running_) return;
    const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
    auto line = render(counts_, total_, elapsed);
    std::unique_lock<std::mutex> lock;
    if (terminal_) {
        lock = std::unique_lock(terminal_->mutex, std::try_to_lock);
        if (lock && !terminal_->line_shown) last_.clear();  // a result was written over it
    }
    if ((!terminal_ || lock) && line != last_) {
        // "\r", the line, then clear whatever a longer previous line left.
        to_stderr("\r" + line + "\033[K");
        last_ = std::move(line);
        if (terminal_) terminal_->line_shown = true;
    }
    if (lock) lock.unlock();
    timer_.expires_after(redraw_interval);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) tick();
    });
}

void progress_display::stop()
{
    if (!running_) return;
    running_ = false;
    timer_.cancel();
    if (terminal_) {
        // Held by the writer: it clears the line before its write, and nothing drew since.
        if (std::unique_lock lock(terminal_->mutex, std::try_to_lock); lock) terminal_->clear_line();
        return;
    }
    if (!last_.empty()) to_stderr("\r\033[K");
}

std::string format_summary(const batch_counts& c, const not_run_info& not_run, double elapsed,
                           const std::string& stopped_by)
{
    const auto done = c.finished();
    std::string s(program_name);
    const auto jobs = done + not_run.lines;
    s += ": " + std::to_string(jobs) + (!not_run.complete ? "+ jobs: " : jobs == 1 ? " job: " : " jobs: ");
    // The whole batch: a job --resume skipped counts as it ended in its earlier run.
    s += std::to_string(c.succeeded + c.skipped - c.skipped_failed) + " succeeded, ";
    s += std::to_string(c.failed + c.skipped_failed) + " failed, ";
    s += std::to_string(c.timed_out) + " timed out, ";
    s += count_of(c.errors, "error", "errors") + ", ";
    s += std::to_string(c.cancelled) + " cancelled, ";
    s += std::to_string(not_run.lines) + (not_run.complete ? "" : "+") + " not run";
    if (c.skipped > 0)
        s += ", " + std::to_string(c.skipped) + " skipped (--resume: " +
             (c.skipped_failed == 0 ? "succeeded" : c.skipped_failed == c.skipped ? "failed" : std::to_string(c.skipped_failed) + " failed") +
             " in an earlier run)";
    if (not_run.lines > 0 && not_run.complete) s += " (from line " + std::to_string(not_run.first_line) + ")";
    else if (not_run.lines > 0) s += " (from line " + std::to_string(not_run.first_line) + "; the rest of the input was not read)";
    else if (!not_run.complete) s += " (the rest of the input was not read)";
    s += "; " + fixed(elapsed, 2) + " s, " + fixed(elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0, 1) +
         " jobs/s";
    if (!stopped_by.empty()) s += "; " + stopped_by;
    return s;
}

}  // namespace sandbox::cli
