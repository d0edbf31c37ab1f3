// SPDX-License-Identifier: BSL-1.0
//
// The input is read a line at a time and each line parsed on its own; per job only what the
// page shows is kept (times, duration, outcome, a shortened id and status), and the error
// text only for the failures listed, so memory does not grow with what the jobs printed:
// about a hundred bytes a job. The page's size is bounded too: beyond a budget of bars,
// short jobs are merged into per-slot strips of a few pixels, and only so many slots are
// drawn.
#include "report.hpp"

#include "io.hpp"
#include "options.hpp"
#include "signals.hpp"

#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <queue>

namespace sandbox::cli {

namespace json = boost::json;

namespace {

enum class outcome : unsigned char { succeeded, failed, timed_out, cancelled, error };
constexpr std::size_t outcome_count = 5;

struct outcome_style {
    const char* name;
    const char* colour;
};
// Exact colours: the browser test counts their pixels in a screenshot.
constexpr std::array<outcome_style, outcome_count> styles{{
    {"succeeded", "#2e9d4a"},
    {"failed", "#d1352b"},
    {"timed out", "#e08a00"},
    {"cancelled", "#7d6cc4"},
    {"error", "#6b6b6b"},
}};

std::size_t index_of(outcome o) { return static_cast<std::size_t>(o); }

// What the page draws; chosen so that 100,000 jobs still make a page of a few megabytes.
constexpr double chart_width = 1000;     // px of the time axis
constexpr double chart_left = 56;        // px for the slot labels
constexpr double strip_width = 2;        // px of one merged strip
constexpr std::size_t bar_budget = 4000;  // jobs drawn as bars of their own
constexpr std::size_t max_rows = 100;     // slots drawn
constexpr std::size_t slowest_count = 20;
constexpr std::size_t failure_count = 100;
constexpr std::size_t max_warnings = 10;
constexpr std::size_t histogram_bins = 30;

struct job_record {
    std::int64_t start_us = 0;  // since the epoch, when `timed`
    std::int64_t end_us = 0;
    double duration = -1;       // seconds; negative: unknown
    std::uint64_t line = 0;     // in the jobs file (the result's "line"), else 0
    std::string id;             // shortened, not escaped
    std::string status;         // "exit 3", "SIGKILL", "timed out (wall)", ...
    outcome kind = outcome::error;
    bool timed = false;
};

struct failure {
    std::size_t job;     // index into the records
    std::string detail;  // the error, or the start error, or the last line of stderr
};

struct report_options {
    std::string input;
    std::optional<std::string> output;
    std::optional<std::string> title;
    bool help = false;
};

void say(const std::string& s) noexcept
{
    try {
        write_all(STDERR_FILENO, std::string(program_name) + " report: " + s + "\n");
    } catch (...) {
    }
}

// ---- text ---------------------------------------------------------------------------------

// At most `max` bytes, cut at a character boundary, with an ellipsis when cut.
std::string shorten(std::string_view s, std::size_t max)
{
    if (s.size() <= max) return std::string(s);
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return std::string(s.substr(0, n)) + "\u2026";
}

void escape_into(std::string& out, std::string_view s)
{
    for (const char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            // Other control characters are not allowed in HTML text.
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += "\uFFFD";
            else out += c;
        }
    }
}

std::string esc(std::string_view s)
{
    std::string out;
    out.reserve(s.size() + 8);
    escape_into(out, s);
    return out;
}

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// A coordinate: one decimal is finer than any screen.
std::string px(double v) { return fixed(std::round(v * 10) / 10, 1); }

std::string seconds_text(double s)
{
    if (s < 0) return "?";
    if (s == 0) return "0 s";
    if (s < 1e-3) return fixed(s * 1e6, 0) + " \u00b5s";
    if (s < 1) return fixed(s * 1e3, s < 0.01 ? 2 : 1) + " ms";
    if (s < 100) return fixed(s, 3) + " s";
    return fixed(s, 1) + " s";
}

// An axis label: as few digits as the step between ticks needs.
std::string tick_text(double t, double step)
{
    int decimals = 0;
    while (decimals < 6 && step * std::pow(10.0, decimals) < 0.999) ++decimals;
    return fixed(t, decimals);
}

std::string count_text(std::uint64_t n) { return std::to_string(n); }

std::string percent(std::uint64_t part, std::uint64_t whole)
{
    if (whole == 0) return "";
    return " (" + fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%)";
}

// ---- input --------------------------------------------------------------------------------

// Lines of a descriptor, of any length, without the newline.
class line_reader {
public:
    line_reader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

    bool next(std::string& line)
    {
        for (;;) {
            const auto nl = buf_.find('\n', pos_);
            if (nl != std::string::npos) {
                line.assign(buf_, pos_, nl - pos_);
                pos_ = nl + 1;
                return true;
            }
            if (eof_) {
                if (pos_ >= buf_.size()) return false;
                line.assign(buf_, pos_);
                pos_ = buf_.size();
                return true;
            }
            buf_.erase(0, pos_);
            pos_ = 0;
            char chunk[1 << 16];
            const ssize_t n = ::read(fd_, chunk, sizeof chunk);
            if (n > 0) buf_.append(chunk, static_cast<std::size_t>(n));
            else if (n == 0) eof_ = true;
            else if (errno != EINTR)
                throw usage_error(name_ + ": cannot read it: " + std::strerror(errno));
        }
    }

private:
    int fd_;
    std::string name_;
    std::string buf_;
    std::size_t pos_ = 0;
    bool eof_ = false;
};

std::optional<double> number(const json::value* v)
{
    if (!v) return std::nullopt;
    if (v->is_int64()) return static_cast<double>(v->get_int64());
    if (v->is_uint64()) return static_cast<double>(v->get_uint64());
    if (v->is_double()) return v->get_double();
    return std::nullopt;
}

std::optional<std::string_view> string_of(const json::value* v)
{
    if (v && v->is_string()) return std::string_view(v->get_string());
    return std::nullopt;
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// RFC 3339 ("2026-12-02T20:31:40.123456Z", or with an offset) as microseconds since the epoch.
std::optional<std::int64_t> parse_time(std::string_view s)
{
    std::size_t i = 0;
    const auto digits = [&](std::size_t n) -> std::optional<int> {
        if (i + n > s.size()) return std::nullopt;
        int v = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const char c = s[i + k];
            if (c < '0' || c > '9') return std::nullopt;
            v = v * 10 + (c - '0');
        }
        i += n;
        return v;
    };
    const auto expect = [&](std::string_view any) {
        if (i < s.size() && any.find(s[i]) != std::string_view::npos) {
            ++i;
            return true;
        }
        return false;
    };
    const auto year = digits(4);
    if (!year || !expect("-")) return std::nullopt;
    const auto month = digits(2);
    if (!month || !expect("-")) return std::nullopt;
    const auto day = digits(2);
    if (!day || !expect("Tt ")) return std::nullopt;
    const auto hour = digits(2);
    if (!hour || !expect(":")) return std::nullopt;
    const auto minute = digits(2);
    if (!minute || !expect(":")) return std::nullopt;
    const auto second = digits(2);
    if (!second || *month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60)
        return std::nullopt;
    std::int64_t micros = 0;
    if (expect(".")) {
        std::int64_t scale = 100000;
        const std::size_t first = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            micros += (s[i] - '0') * scale;
            scale /= 10;
            ++i;
        }
        if (i == first) return std::nullopt;
    }
    std::int64_t offset_s = 0;
    if (expect("Zz")) {
    } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        const int sign = s[i] == '-' ? -1 : 1;
        ++i;
        const auto oh = digits(2);
        if (!oh || !expect(":")) return std::nullopt;
        const auto om = digits(2);
        if (!om) return std::nullopt;
        offset_s = sign * (*oh * 3600 + *om * 60);
    } else {
        return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    const std::int64_t days =
        days_from_civil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
    const std::int64_t secs = days * 86400 + *hour * 3600 + *minute * 60 + *second - offset_s;
    return secs * 1000000 + micros;
}

std::string last_line(std::string_view text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    const auto nl = text.rfind('\n');
    return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

struct report_data {
    std::vector<job_record> jobs;
    std::vector<failure> failures;  // the first failure_count, in file order
    std::uint64_t failures_total = 0;
    std::uint64_t bad_lines = 0;
    std::uint64_t retried = 0;        // jobs with more than one attempt
    std::uint64_t attempts_total = 0;  // over the jobs that say
    std::array<std::uint64_t, outcome_count> counts{};
};

// One result line into `d`; an empty return, or why the line is not a result.
std::string take_line(report_data& d, const json::object& o)
{
    job_record r;
    std::string detail;
    if (const auto line = number(o.if_contains("line")); line && *line >= 1 && *line < 1e18)
        r.line = static_cast<std::uint64_t>(*line);
    if (const auto* id = o.if_contains("id")) {
        r.id = id->is_string() ? shorten(id->get_string(), 80) : shorten(json::serialize(*id), 80);
    } else {
        r.id = r.line ? "line " + std::to_string(r.line) : "?";
    }

    if (const auto error = string_of(o.if_contains("error"))) {
        r.kind = error->starts_with("cancelled") ? outcome::cancelled : outcome::error;
        r.status = r.kind == outcome::cancelled ? "cancelled" : "error";
        detail = *error;
    } else if (o.contains("exit_code") || o.contains("success")) {
        const auto* success = o.if_contains("success");
        const auto* timed_out = o.if_contains("timed_out");
        const bool ok = success && success->is_bool() && success->get_bool();
        const bool late = timed_out && timed_out->is_bool() && timed_out->get_bool();
        r.kind = ok ? outcome::succeeded : late ? outcome::timed_out : outcome::failed;
        const auto sig = std::clamp(number(o.if_contains("term_signal")).value_or(0), 0.0, 1024.0);
        if (late) {
            r.status = "timed out";
            if (const auto why = string_of(o.if_contains("timeout_reason"))) r.status += " (" + shorten(*why, 40) + ")";
        } else if (sig > 0) {
            r.status = signal_name(static_cast<int>(sig));
        } else if (const auto code = number(o.if_contains("exit_code"))) {
            r.status = "exit " + fixed(*code, 0);
        }
        if (const auto* oom = o.if_contains("oom_killed"); oom && oom->is_bool() && oom->get_bool())
            r.status += ", out of memory";
        if (const auto start_error = string_of(o.if_contains("start_error"))) detail = *start_error;
        else if (const auto err = string_of(o.if_contains("stderr"))) detail = last_line(*err);
    } else {
        return "not a result line: it has neither \"exit_code\" nor \"error\"";
    }

    const auto started = string_of(o.if_contains("started_at"));
    const auto ended = string_of(o.if_contains("ended_at"));
    const auto start = started ? parse_time(*started) : std::nullopt;
    const auto end = ended ? parse_time(*ended) : std::nullopt;
    if (start && end) {
        r.timed = true;
        r.start_us = *start;
        r.end_us = std::max(*start, *end);
    }
    // Only a job that ran to its end has a duration: the time an error or a cancellation
    // took says nothing about the commands.
    if (const auto dur = number(o.if_contains("duration")); dur && *dur >= 0) r.duration = *dur;

    if (const auto attempts = number(o.if_contains("attempts")); attempts && *attempts >= 1 && *attempts < 1e9) {
        d.attempts_total += static_cast<std::uint64_t>(*attempts);
        if (*attempts > 1) ++d.retried;
    }

    ++d.counts[index_of(r.kind)];
    if (r.kind != outcome::succeeded) {
        if (d.failures.size() < failure_count) d.failures.push_back({d.jobs.size(), shorten(detail, 300)});
        ++d.failures_total;
    }
    d.jobs.push_back(std::move(r));
    return {};
}

report_data read_results(int fd, const std::string& name)
{
    report_data d;
    line_reader reader(fd, name);
    json::parser parser;
    std::string line;
    std::uint64_t number = 0;
    while (reader.next(line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::string problem;
        parser.reset();
        boost::system::error_code ec;
        parser.write(line, ec);
        if (ec) {
            problem = "not JSON (" + ec.message() + ")";
        } else {
            const json::value v = parser.release();
            if (!v.is_object()) problem = "not a JSON object";
            else problem = take_line(d, v.get_object());
        }
        if (!problem.empty()) {
            if (++d.bad_lines <= max_warnings) say(name + ":" + std::to_string(number) + ": " + problem + "; skipped");
        }
    }
    if (d.bad_lines > max_warnings)
        say(name + ": " + std::to_string(d.bad_lines - max_warnings) + " more bad lines skipped");
    return d;
}

// ---- statistics -------------------------------------------------------------------------

struct timeline {
    std::int64_t t0 = 0;                  // the first start
    std::int64_t t1 = 0;                  // the last end
    std::vector<std::size_t> order;       // timed jobs by start
    std::vector<std::uint32_t> slot;      // per job; meaningful for the timed ones
    std::size_t slots = 0;                // the most jobs that ran at once
};

// Each job, by start, takes the lowest slot free at its start (a job ending exactly then
// frees it): the greedy colouring of an interval graph, so the slots are as many as the most
// jobs that ever overlapped.
timeline place(const std::vector<job_record>& jobs)
{
    timeline t;
    t.slot.assign(jobs.size(), 0);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        if (jobs[i].timed) t.order.push_back(i);
    if (t.order.empty()) return t;
    std::sort(t.order.begin(), t.order.end(), [&](std::size_t a, std::size_t b) {
        if (jobs[a].start_us != jobs[b].start_us) return jobs[a].start_us < jobs[b].start_us;
        return a < b;
    });
    using busy_slot = std::pair<std::int64_t, std::uint32_t>;  // (end, slot)
    std::priority_queue<busy_slot, std::vector<busy_slot>, std::greater<>> busy;
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free_slots;
    t.t0 = jobs[t.order.front()].start_us;
    t.t1 = t.t0;
    for (const auto i : t.order) {
        const auto& j = jobs[i];
        while (!busy.empty() && busy.top().first <= j.start_us) {
            free_slots.push(busy.top().second);
            busy.pop();
        }
        std::uint32_t s;
        if (free_slots.empty()) s = static_cast<std::uint32_t>(t.slots++);
        else {
            s = free_slots.top();
            free_slots.pop();
        }
        t.slot[i] = s;
        busy.emplace(j.end_us, s);
        t.t1 = std::max(t.t1, j.end_us);
    }
    return t;
}

double quantile(const std::vector<double>& sorted, double q)
{
    // Nearest rank: a duration that some job really had.
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// A tick step of 1, 2 or 5 times a power of ten, giving about `ticks` ticks over `span`.
double nice_step(double span, int ticks)
{
    const double raw = span / ticks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0})
        if (m * mag >= raw) return m * mag;
    return 10 * mag;
}

// ---- page ---------------------------------------------------------------------------------

const char* const page_style = R"(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#222;background:#fff;
margin:16px 24px;max-width:1140px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
.sub,.note{color:#555}.note{margin:6px 0}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
table.list td,table.list th{border-bottom:1px solid #eee;padding:3px 12px 3px 0}
table.list td.text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;
word-break:break-all;max-width:520px}
.summary{display:flex;gap:48px;flex-wrap:wrap}.summary th{font-weight:normal;color:#555}
.summary td{font-weight:600;text-align:right}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.legend span{display:inline-block;margin-right:16px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}
svg{display:block;margin:6px 0}svg text{font:11px system-ui,sans-serif;fill:#444}
svg rect.bar{shape-rendering:crispEdges}svg line{stroke:#ddd;shape-rendering:crispEdges}svg line.axis{stroke:#888}
)";

struct page {
    std::string html;

    void add(std::string_view s) { html += s; }
    void text(std::string_view s) { escape_into(html, s); }
};

void add_legend(page& p, const std::array<std::uint64_t, outcome_count>& counts)
{
    p.add("<div class=\"legend\">");
    for (std::size_t k = 0; k < outcome_count; ++k) {
        if (counts[k] == 0 && k >= index_of(outcome::cancelled)) continue;
        p.add("<span><i style=\"background:");
        p.add(styles[k].colour);
        p.add("\"></i>");
        p.add(styles[k].name);
        p.add(" " + count_text(counts[k]) + "</span>");
    }
    p.add("</div>\n");
}

std::string bar_title(const job_record& j, std::int64_t t0)
{
    std::string s = esc(j.id);
    if (j.line) s += " (line " + std::to_string(j.line) + ")";
    s += ": " + seconds_text(j.duration >= 0 ? j.duration : static_cast<double>(j.end_us - j.start_us) / 1e6);
    if (!j.status.empty()) s += ", " + esc(j.status);
    s += "; from " + fixed(static_cast<double>(j.start_us - t0) / 1e6, 3) + " s";
    return s;
}

// The outcome that filled a strip most.
std::size_t dominant(const std::array<double, outcome_count>& fill)
{
    return static_cast<std::size_t>(std::max_element(fill.begin(), fill.end()) - fill.begin());
}

void add_timeline(page& p, const report_data& d, const timeline& t)
{
    p.add("<h2>Timeline</h2>\n");
    if (t.order.empty()) {
        p.add("<p class=\"note\">No timeline: ");
        p.add(d.jobs.empty() ? "there are no jobs." :
                               "it needs <code>started_at</code> and <code>ended_at</code> in the result lines, "
                               "which these lack (an older <code>sandbox-run --batch</code> wrote them); the jobs "
                               "are shown by duration only, below.");
        p.add("</p>\n");
        return;
    }
    const std::size_t untimed = d.jobs.size() - t.order.size();  // lines of an older batch
    const double span = std::max(static_cast<double>(t.t1 - t.t0) / 1e6, 1e-6);
    const std::size_t rows = std::min(t.slots, max_rows);
    const double row_h = std::clamp(std::floor(520.0 / static_cast<double>(rows)), 3.0, 18.0);
    const double gap = row_h >= 8 ? 2 : row_h >= 5 ? 1 : 0;
    const double top = 4;
    const double chart_h = row_h * static_cast<double>(rows);
    const double height = top + chart_h + 24;
    const auto x_of = [&](std::int64_t us) {
        return chart_left + static_cast<double>(us - t.t0) / 1e6 / span * chart_width;
    };

    p.add("<p class=\"sub\">One row per slot: each job takes the lowest slot free when it starts, so there are as "
          "many rows as jobs ever ran at once (" + count_text(t.slots) + ").</p>\n");
    std::array<std::uint64_t, outcome_count> drawn_counts{};
    for (const auto i : t.order) ++drawn_counts[index_of(d.jobs[i].kind)];
    add_legend(p, drawn_counts);

    // Bars of their own while the budget lasts (all of them when the jobs are few); beyond
    // that, jobs narrower than a strip are merged into strips coloured by what filled them most.
    const bool all_bars = t.order.size() <= bar_budget;
    const std::size_t strips = static_cast<std::size_t>(chart_width / strip_width);
    std::vector<std::array<double, outcome_count>> fill;        // per row * strips: seconds by outcome
    std::vector<std::array<std::uint32_t, outcome_count>> starts;  // jobs starting there, by outcome
    std::vector<std::string> row_svg(rows);
    std::size_t bars = 0, merged = 0, hidden = 0;
    for (const auto i : t.order) {
        const auto& j = d.jobs[i];
        const std::size_t row = t.slot[i];
        if (row >= rows) {
            ++hidden;
            continue;
        }
        const double x0 = x_of(j.start_us), x1 = x_of(j.end_us);
        if (all_bars || (x1 - x0 >= strip_width && bars < bar_budget)) {
            ++bars;
            auto& s = row_svg[row];
            s += "<rect class=\"bar o" + std::to_string(index_of(j.kind)) + "\" x=\"" + px(x0) + "\" y=\"" +
                 px(top + static_cast<double>(row) * row_h + gap / 2) + "\" width=\"" + px(std::max(x1 - x0, 1.0)) +
                 "\" height=\"" + px(row_h - gap) + "\"><title>" + bar_title(j, t.t0) + "</title></rect>";
            continue;
        }
        if (fill.empty()) {
            fill.assign(rows * strips, {});
            starts.assign(rows * strips, {});
        }
        ++merged;
        const double a = (x0 - chart_left) / strip_width, b = (x1 - chart_left) / strip_width;
        const auto first = std::min(static_cast<std::size_t>(a), strips - 1);
        const auto last = std::min(static_cast<std::size_t>(b), strips - 1);
        ++starts[row * strips + first][index_of(j.kind)];
        for (std::size_t k = first; k <= last; ++k) {
            const double covered = std::min(b, static_cast<double>(k + 1)) - std::max(a, static_cast<double>(k));
            // An instant job still shows in its strip.
            fill[row * strips + k][index_of(j.kind)] += std::max(covered, 1e-3);
        }
    }
    if (!fill.empty()) {
        for (std::size_t row = 0; row < rows; ++row) {
            std::size_t k = 0;
            while (k < strips) {
                const auto best = dominant(fill[row * strips + k]);
                if (fill[row * strips + k][best] <= 0) {
                    ++k;
                    continue;
                }
                std::array<std::uint64_t, outcome_count> n{};
                std::size_t end = k;
                for (; end < strips; ++end) {
                    if (fill[row * strips + end][best] <= 0 || dominant(fill[row * strips + end]) != best) break;
                    for (std::size_t o = 0; o < outcome_count; ++o) n[o] += starts[row * strips + end][o];
                }
                std::string title = count_text(std::accumulate(n.begin(), n.end(), std::uint64_t{0})) +
                                    " jobs merged, " +
                                    fixed(static_cast<double>(k) * strip_width / chart_width * span, 3) + " s to " +
                                    fixed(static_cast<double>(end) * strip_width / chart_width * span, 3) + " s:";
                for (std::size_t o = 0; o < outcome_count; ++o)
                    if (n[o]) title += " " + count_text(n[o]) + " " + styles[o].name;
                row_svg[row] += "<rect class=\"bar o" + std::to_string(best) + "\" x=\"" +
                                px(chart_left + static_cast<double>(k) * strip_width) + "\" y=\"" +
                                px(top + static_cast<double>(row) * row_h + gap / 2) + "\" width=\"" +
                                px(static_cast<double>(end - k) * strip_width) + "\" height=\"" + px(row_h - gap) +
                                "\"><title>" + title + "</title></rect>";
                k = end;
            }
        }
    }

    p.add("<svg width=\"" + px(chart_left + chart_width + 30) + "\" height=\"" + px(height) + "\" viewBox=\"0 0 " +
          px(chart_left + chart_width + 30) + " " + px(height) + "\" role=\"img\" aria-label=\"timeline\">\n");
    const double step = nice_step(span, 10);
    for (double tick = 0; tick <= span * 1.0000001; tick += step) {
        const double x = chart_left + tick / span * chart_width;
        p.add("<line x1=\"" + px(x) + "\" y1=\"" + px(top) + "\" x2=\"" + px(x) + "\" y2=\"" + px(top + chart_h + 4) +
              "\"/><text x=\"" + px(x) + "\" y=\"" + px(top + chart_h + 16) + "\" text-anchor=\"middle\">" +
              tick_text(tick, step) + "</text>\n");
    }
    p.add("<text x=\"" + px(chart_left + chart_width + 4) + "\" y=\"" + px(top + chart_h + 16) + "\">s</text>\n");
    const std::size_t label_every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(12.0 / row_h)));
    for (std::size_t row = 0; row < rows; ++row) {
        p.add("<g class=\"slot\">");
        if (row % label_every == 0 || rows <= 1)
            p.add("<text x=\"" + px(chart_left - 6) + "\" y=\"" +
                  px(top + static_cast<double>(row) * row_h + row_h / 2 + 4) + "\" text-anchor=\"end\">" +
                  std::to_string(row + 1) + "</text>");
        p.add(row_svg[row]);
        p.add("</g>\n");
    }
    p.add("<line class=\"axis\" x1=\"" + px(chart_left) + "\" y1=\"" + px(top + chart_h) + "\" x2=\"" +
          px(chart_left + chart_width) + "\" y2=\"" + px(top + chart_h) + "\"/>\n</svg>\n");

    std::vector<std::string> notes;
    if (merged)
        notes.push_back(count_text(bars) + " jobs are drawn as bars of their own; the other " + count_text(merged) +
                        " (shorter than a strip, or beyond " + count_text(bar_budget) +
                        " bars) are merged into strips of " + fixed(strip_width, 0) +
                        " px, each coloured by the outcome that filled it most.");
    if (hidden)
        notes.push_back("Only the first " + count_text(rows) + " of " + count_text(t.slots) + " slots are drawn: " +
                        count_text(hidden) + " jobs in the others are not shown.");
    if (untimed)
        notes.push_back(count_text(untimed) +
                        " jobs have no started_at/ended_at and are not on the timeline.");
    for (const auto& n : notes) p.add("<p class=\"note\">" + esc(n) + "</p>\n");
}

void add_histogram(page& p, const report_data& d, const std::vector<double>& sorted)
{
    p.add("<h2>Durations</h2>\n");
    if (sorted.empty()) {
        p.add("<p class=\"note\">No durations.</p>\n");
        return;
    }
    const double hi = sorted.back();
    const auto positive = std::upper_bound(sorted.begin(), sorted.end(), 0.0);
    const double lo_pos = positive == sorted.end() ? hi : *positive;
    // Log-scaled bins when the durations span two orders of magnitude or more: otherwise the
    // short jobs all fall into the first bin.
    const bool log_scale = hi > 0 && lo_pos > 0 && hi / lo_pos >= 100;
    const double lo = log_scale ? lo_pos : sorted.front();
    const double width = hi > lo ? hi - lo : std::max(hi, 1e-3);
    const std::size_t bins = histogram_bins;
    const auto edge = [&](std::size_t k) {
        const double f = static_cast<double>(k) / static_cast<double>(bins);
        return log_scale ? std::exp(std::log(lo) + f * (std::log(hi) - std::log(lo))) : lo + f * width;
    };
    const auto bin_of = [&](double v) {
        double f = log_scale ? (v <= lo ? 0 : (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)))
                             : (v - lo) / width;
        return std::min(static_cast<std::size_t>(std::max(f, 0.0) * static_cast<double>(bins)), bins - 1);
    };
    std::vector<std::array<std::uint64_t, outcome_count>> counts(bins);
    for (const auto& j : d.jobs)
        if (j.duration >= 0) ++counts[bin_of(j.duration)][index_of(j.kind)];
    std::uint64_t most = 1;
    for (const auto& c : counts) most = std::max(most, std::accumulate(c.begin(), c.end(), std::uint64_t{0}));

    p.add("<p class=\"sub\">" + count_text(sorted.size()) + " jobs in " + std::to_string(bins) + " " +
          (log_scale ? "log-scaled bins (the durations span " + fixed(std::log10(hi / lo_pos), 1) +
                           " orders of magnitude)"
                     : std::string("linear bins")) +
          ", stacked by outcome.</p>\n");
    const double left = chart_left, top = 8, chart_h = 180, bin_w = chart_width / static_cast<double>(bins);
    const double height = top + chart_h + 24;
    p.add("<svg width=\"" + px(left + chart_width + 30) + "\" height=\"" + px(height) + "\" viewBox=\"0 0 " +
          px(left + chart_width + 30) + " " + px(height) + "\" role=\"img\" aria-label=\"durations\">\n");
    for (const std::uint64_t v : {std::uint64_t{0}, most / 2, most}) {
        if (v == most / 2 && most < 4) continue;  // a middle line only where it is a whole count apart
        const double y = top + chart_h - static_cast<double>(v) / static_cast<double>(most) * chart_h;
        p.add("<line x1=\"" + px(left) + "\" y1=\"" + px(y) + "\" x2=\"" + px(left + chart_width) + "\" y2=\"" + px(y) +
              "\"/><text x=\"" + px(left - 6) + "\" y=\"" + px(y + 4) + "\" text-anchor=\"end\">" + count_text(v) +
              "</text>\n");
    }
    for (std::size_t k = 0; k < bins; ++k) {
        const auto& c = counts[k];
        const std::uint64_t total = std::accumulate(c.begin(), c.end(), std::uint64_t{0});
        if (total == 0) continue;
        std::string title =
            seconds_text(edge(k)) + " to " + seconds_text(edge(k + 1)) + ": " + count_text(total) + " jobs";
        for (std::size_t o = 0; o < outcome_count; ++o)
            if (c[o]) title += ", " + count_text(c[o]) + " " + styles[o].name;
        p.add("<g><title>" + title + "</title>");
        double y = top + chart_h;
        for (std::size_t o = 0; o < outcome_count; ++o) {
            if (!c[o]) continue;
            const double h = static_cast<double>(c[o]) / static_cast<double>(most) * chart_h;
            p.add("<rect class=\"bar o" + std::to_string(o) + "\" x=\"" +
                  px(left + static_cast<double>(k) * bin_w + 1) + "\" y=\"" + px(y - h) + "\" width=\"" +
                  px(bin_w - 2) + "\" height=\"" + px(h) + "\"/>");
            y -= h;
        }
        p.add("</g>\n");
    }
    for (std::size_t k = 0; k <= bins; k += 5) {
        const double x = left + static_cast<double>(k) * bin_w;
        p.add("<text x=\"" + px(x) + "\" y=\"" + px(top + chart_h + 16) + "\" text-anchor=\"middle\">" +
              seconds_text(edge(k)) + "</text>\n");
    }
    p.add("<line class=\"axis\" x1=\"" + px(left) + "\" y1=\"" + px(top + chart_h) + "\" x2=\"" +
          px(left + chart_width) + "\" y2=\"" + px(top + chart_h) + "\"/>\n</svg>\n");
}

void add_job_cells(page& p, const job_record& j)
{
    p.add("<td>");
    p.text(j.id);
    p.add("</td><td class=\"num\">" + (j.line ? std::to_string(j.line) : std::string()) + "</td>");
}

void add_slowest(page& p, const report_data& d)
{
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < d.jobs.size(); ++i)
        if (d.jobs[i].duration >= 0) idx.push_back(i);
    const auto n = std::min(idx.size(), slowest_count);
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(), [&](auto a, auto b) {
        if (d.jobs[a].duration != d.jobs[b].duration) return d.jobs[a].duration > d.jobs[b].duration;
        return a < b;
    });
    p.add("<h2>Slowest jobs</h2>\n");
    if (n == 0) {
        p.add("<p class=\"note\">No durations.</p>\n");
        return;
    }
    p.add("<table class=\"list slowest\"><tr><th>#</th><th>id</th><th>line</th><th>duration</th><th>outcome</th>"
          "<th>status</th></tr>\n");
    for (std::size_t r = 0; r < n; ++r) {
        const auto& j = d.jobs[idx[r]];
        p.add("<tr><td class=\"num\">" + std::to_string(r + 1) + "</td>");
        add_job_cells(p, j);
        p.add("<td class=\"num\">" + seconds_text(j.duration) + "</td><td>" + styles[index_of(j.kind)].name +
              "</td><td>");
        p.text(j.status);
        p.add("</td></tr>\n");
    }
    p.add("</table>\n");
}

void add_failures(page& p, const report_data& d)
{
    p.add("<h2>Failed jobs</h2>\n");
    if (d.failures.empty()) {
        p.add("<p class=\"note\">None: every job succeeded.</p>\n");
        return;
    }
    if (d.failures_total > d.failures.size())
        p.add("<p class=\"note\">The first " + count_text(d.failures.size()) + " of " + count_text(d.failures_total) +
              ", in the order of the results.</p>\n");
    p.add("<table class=\"list failures\"><tr><th>id</th><th>line</th><th>outcome</th><th>status</th>"
          "<th>error, or the last line of stderr</th></tr>\n");
    for (const auto& f : d.failures) {
        const auto& j = d.jobs[f.job];
        p.add("<tr>");
        add_job_cells(p, j);
        p.add("<td>" + std::string(styles[index_of(j.kind)].name) + "</td><td>");
        p.text(j.status);
        p.add("</td><td class=\"text\">");
        p.text(f.detail);
        p.add("</td></tr>\n");
    }
    p.add("</table>\n");
}

std::string make_page(const report_data& d, const std::string& input_name, const std::string& title)
{
    const auto t = place(d.jobs);
    std::vector<double> durations;
    durations.reserve(d.jobs.size());
    for (const auto& j : d.jobs)
        if (j.duration >= 0) durations.push_back(j.duration);
    std::sort(durations.begin(), durations.end());

    page p;
    p.html.reserve(64 * 1024);
    p.add("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          // Nothing may be loaded or run, whatever a job's id or output says.
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    p.text(title);
    p.add("</title>\n<style>");
    p.add(page_style);
    for (std::size_t k = 0; k < outcome_count; ++k) p.add(".o" + std::to_string(k) + "{fill:" + styles[k].colour + "}");
    p.add("</style></head>\n<body>\n<h1>");
    p.text(title);
    p.add("</h1>\n<p class=\"sub\">From ");
    p.text(input_name);
    p.add(": " + count_text(d.jobs.size()) + " jobs");
    if (d.bad_lines)
        p.add(", " + count_text(d.bad_lines) + " line" + (d.bad_lines == 1 ? "" : "s") +
              " skipped as not result lines (not JSON, not an object, or neither exit_code nor error)");
    p.add(".</p>\n");

    const auto n = static_cast<std::uint64_t>(d.jobs.size());
    p.add("<h2>Summary</h2>\n");
    if (n == 0) p.add("<p class=\"note\">No jobs: the results file has no result lines.</p>\n");
    p.add("<div class=\"summary\"><table class=\"counts\">\n");
    const auto row = [&](const std::string& name, const std::string& value) {
        p.add("<tr><th>" + name + "</th><td>" + value + "</td></tr>\n");
    };
    row("jobs", count_text(n));
    for (std::size_t k = 0; k < outcome_count; ++k) {
        const std::string name = k == index_of(outcome::error) ? "errors" : styles[k].name;
        p.add("<tr><th>" + name + "</th><td>" + count_text(d.counts[k]) + "</td><td class=\"sub\">" +
              percent(d.counts[k], n) + "</td></tr>\n");
    }
    if (d.retried) row("retried", count_text(d.retried));
    p.add("</table><table class=\"times\">\n");
    if (!t.order.empty()) {
        const double wall = static_cast<double>(t.t1 - t.t0) / 1e6;
        row("wall time", seconds_text(wall));
        row("jobs/s", wall > 0 ? fixed(static_cast<double>(t.order.size()) / wall, 1) : "?");
        row("most at once", count_text(t.slots));
    } else if (n > 0) {
        row("wall time", "?");
    }
    if (!durations.empty()) {
        const double total = std::accumulate(durations.begin(), durations.end(), 0.0);
        row("total duration", seconds_text(total));
        row("mean", seconds_text(total / static_cast<double>(durations.size())));
        row("median", seconds_text(quantile(durations, 0.5)));
        row("p95", seconds_text(quantile(durations, 0.95)));
        row("max", seconds_text(durations.back()));
    }
    p.add("</table></div>\n");

    add_timeline(p, d, t);
    add_histogram(p, d, durations);
    add_slowest(p, d);
    add_failures(p, d);
    p.add("</body></html>\n");
    return std::move(p.html);
}

// ---- files --------------------------------------------------------------------------------

report_options parse_report_options(const std::vector<std::string_view>& args)
{
    report_options o;
    std::vector<std::string> inputs;
    bool only_names = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        const auto value = [&](std::string_view flag) {
            if (i + 1 >= args.size()) throw usage_error(std::string(flag) + " needs a value");
            return std::string(args[++i]);
        };
        if (only_names || a == "-" || !a.starts_with("-")) inputs.emplace_back(a);
        else if (a == "--") only_names = true;
        else if (a == "-h" || a == "--help") o.help = true;
        else if (a == "-o" || a == "--output") o.output = value(a);
        else if (a.starts_with("--output=")) o.output = std::string(a.substr(9));
        else if (a.starts_with("-o")) o.output = std::string(a.substr(2));
        else if (a == "--title") o.title = value(a);
        else if (a.starts_with("--title=")) o.title = std::string(a.substr(8));
        else throw usage_error("unknown option " + std::string(a) + " (see sandbox-run report --help)");
    }
    if (o.help) return o;
    if (inputs.empty()) throw usage_error("no results file given (sandbox-run report RESULTS.jsonl [-o FILE])");
    if (inputs.size() > 1) throw usage_error("one results file only, not " + inputs[1] + " too");
    if (o.output && o.output->empty()) throw usage_error("--output needs a file name");
    o.input = inputs.front();
    return o;
}

int open_input(const std::string& name)
{
    if (name == "-") return STDIN_FILENO;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw usage_error(name + ": cannot open it: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw usage_error(name + ": is a directory");
    }
    return fd;
}

// A regular file is written under a temporary name beside it and renamed when complete, so
// the name never holds half a report; anything else (stdout, a device, a pipe) as it is.
class output_file {
public:
    output_file(const std::optional<std::string>& name, int input_fd)
    {
        if (!name || *name == "-") return;
        const auto fail = [&](const std::string& what) {
            throw usage_error("--output " + *name + ": " + what + ": " + std::strerror(errno));
        };
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode_t mode = 0666 & ~mask;
        struct stat st {};
        if (::stat(name->c_str(), &st) == 0) {
            struct stat in {};
            // The results would be replaced by the page that describes them.
            if (::fstat(input_fd, &in) == 0 && S_ISREG(in.st_mode) && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
                throw usage_error("--output " + *name + " is the results file: the page would replace the results");
            if (S_ISDIR(st.st_mode)) {
                errno = EISDIR;
                fail("cannot write it");
            }
            if (!S_ISREG(st.st_mode)) {
                fd_ = ::open(name->c_str(), O_WRONLY | O_CLOEXEC);
                if (fd_ < 0) fail("cannot open it");
                return;
            }
            mode = st.st_mode & 07777;
        }
        const auto slash = name->rfind('/');
        const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : name->substr(0, slash);
        temp_ = dir + "/." + name->substr(slash == std::string::npos ? 0 : slash + 1) + ".XXXXXX";
        fd_ = ::mkostemp(temp_.data(), O_CLOEXEC);
        if (fd_ < 0) {
            temp_.clear();
            fail("cannot create a file in " + dir);
        }
        ::fchmod(fd_, mode);
        path_ = *name;
    }
    ~output_file()
    {
        if (fd_ != STDOUT_FILENO && fd_ >= 0) ::close(fd_);
        if (!temp_.empty()) ::unlink(temp_.c_str());
    }
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    /// Writes everything and puts it in place. Throws std::runtime_error.
    void commit(std::string_view data)
    {
        write_all(fd_, data);
        if (fd_ == STDOUT_FILENO) return;
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) throw std::runtime_error(std::strerror(errno));
        if (temp_.empty()) return;
        if (::rename(temp_.c_str(), path_.c_str()) != 0)
            throw std::runtime_error("cannot rename " + temp_ + " to it: " + std::strerror(errno));
        temp_.clear();
    }

private:
    int fd_ = STDOUT_FILENO;
    std::string path_;
    std::string temp_;  // non-empty: still to be renamed or removed
};

}  // namespace

std::string report_usage_text()
{
    return R"(Usage: sandbox-run report RESULTS.jsonl [-o REPORT.html] [--title TEXT]

Makes one self-contained HTML page from the result lines of sandbox-run --batch: a summary
(outcomes, wall time, mean, median and p95 duration, jobs/s), a timeline of the jobs with
one row per slot (as many rows as jobs ran at once), a histogram of the durations, the
slowest jobs and the failed ones with their error or last line of stderr. The page has
inline CSS and SVG only: no script, nothing loaded from anywhere.

  RESULTS.jsonl            the results ("-" for stdin)
  -o, --output FILE        write the page to FILE (default, or "-": stdout); a file is
                           written under a temporary name and renamed when complete
  --title TEXT             the page's title
  -h, --help               show this help and exit

The timeline needs "started_at" and "ended_at" in the results; without them the jobs are
shown by duration only. Lines that are not result lines are skipped with a warning on
stderr and counted in the report.
Exit status: 0 the report was written, 1 it could not be written, 2 bad usage or an
input that cannot be read.
)";
}

namespace {

int report(const std::vector<std::string_view>& args)
{
    const auto o = parse_report_options(args);
    if (o.help) {
        write_all(STDOUT_FILENO, report_usage_text());
        return exit_status::ok;
    }
    const int in = open_input(o.input);
    struct closer {
        int fd;
        ~closer()
        {
            if (fd != STDIN_FILENO) ::close(fd);
        }
    } close_in{in};
    output_file out(o.output, in);
    const auto data = read_results(in, o.input);
    const std::string shown_name = o.input == "-" ? "stdin" : o.input;
    const auto html = make_page(data, shown_name, o.title.value_or("sandbox-run report: " + shown_name));
    try {
        out.commit(html);
    } catch (const std::exception& e) {
        say("--output " + o.output.value_or("-") + ": " + e.what());
        return exit_status::some_failed;
    }
    return exit_status::ok;
}

}  // namespace

int run_report(const std::vector<std::string_view>& args)
{
    try {
        return report(args);
    } catch (const usage_error& e) {
        say(e.what());
        return exit_status::usage;
    }
}

}  // namespace sandbox::cli
