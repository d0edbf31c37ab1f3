// SPDX-License-Identifier: BSL-1.0
// Reading result lines into the report's data.
//
// The input is read a line at a time and each line parsed on its own; per job only what the
// page shows is kept (times, duration, outcome, a shortened id and status), and the error
// text only for the failures listed, so memory does not grow with what the jobs printed:
// about a hundred bytes a job.
#include "report_data.hpp"

#include "options.hpp"
#include "report_text.hpp"
#include "signals.hpp"

#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sandbox::cli {

namespace json = boost::json;

namespace {

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

}  // namespace

std::string failure_label(const job_record& j, const std::string& detail)
{
    if (j.kind != outcome::error) return j.status;
    const auto colon = detail.find(':');
    return shorten(colon == std::string::npos ? detail : detail.substr(0, colon), 80);
}

namespace {

// One result line, read.
struct taken {
    std::string key;  // the full id (serialized); empty when the line has none
    job_record job;
    std::string detail;
    double attempts = 0;
};

// One result line into `t`; an empty return, or why the line is not a result.
std::string take_line(taken& t, const json::object& o)
{
    job_record& r = t.job;
    std::string& detail = t.detail;
    if (const auto line = number(o.if_contains("line")); line && *line >= 1 && *line < 1e18)
        r.line = static_cast<std::uint64_t>(*line);
    if (const auto* id = o.if_contains("id"); id && !id->is_null()) {
        t.key = json::serialize(*id);
        r.id = id->is_string() ? shorten(id->get_string(), 80) : shorten(t.key, 80);
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

    if (const auto attempts = number(o.if_contains("attempts")); attempts && *attempts >= 1 && *attempts < 1e9)
        t.attempts = *attempts;
    return {};
}

void count(report_data& d, std::unordered_map<std::string, std::size_t>& groups, taken&& t)
{
    if (t.attempts >= 1) {
        d.attempts_total += static_cast<std::uint64_t>(t.attempts);
        if (t.attempts > 1) ++d.retried;
    }
    ++d.counts[index_of(t.job.kind)];
    if (t.job.kind != outcome::succeeded) {
        ++d.failures_total;
        auto label = failure_label(t.job, t.detail);
        const auto key = std::to_string(index_of(t.job.kind)) + '\n' + label;
        auto at = groups.find(key);
        if (at == groups.end() && d.failure_groups.size() < failure_groups_max) {
            at = groups.emplace(key, d.failure_groups.size()).first;
            d.failure_groups.push_back({t.job.kind, std::move(label), 0, {}});
        }
        if (at == groups.end()) {
            ++d.failures_ungrouped;
        } else {
            auto& g = d.failure_groups[at->second];
            ++g.count;
            if (g.examples.size() < failure_examples) g.examples.push_back({d.jobs.size(), shorten(t.detail, 300)});
        }
    }
    d.jobs.push_back(std::move(t.job));
}

}  // namespace

report_data read_results(int fd, const std::string& name)
{
    report_data d;
    // Each id's last result, in the order of first appearance: results appended with `>>`
    // across a resume hold a cancelled job and then its rerun, which is one job.
    std::vector<taken> results;
    std::unordered_map<std::string, std::size_t> by_id;
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
            else {
                taken t;
                problem = take_line(t, v.get_object());
                if (problem.empty()) {
                    if (t.key.empty()) results.push_back(std::move(t));
                    else if (const auto [at, fresh] = by_id.try_emplace(t.key, results.size()); fresh)
                        results.push_back(std::move(t));
                    else {
                        ++d.superseded;
                        results[at->second] = std::move(t);
                    }
                }
            }
        }
        if (!problem.empty()) {
            if (++d.bad_lines <= max_warnings) say(name + ":" + std::to_string(number) + ": " + problem + "; skipped");
        }
    }
    if (d.bad_lines > max_warnings)
        say(name + ": " + std::to_string(d.bad_lines - max_warnings) + " more bad lines skipped");
    std::unordered_map<std::string, std::size_t> groups;
    for (auto& t : results) count(d, groups, std::move(t));
    // Largest first; of equal ones, the one met first.
    std::stable_sort(d.failure_groups.begin(), d.failure_groups.end(),
                     [](const auto& a, const auto& b) { return a.count > b.count; });
    return d;
}

}  // namespace sandbox::cli
