// SPDX-License-Identifier: BSL-1.0
// The report page: the summary, the failures grouped by how they ended, the timeline, the
// durations histogram and the slowest jobs with the outliers marked.
#include "report_page.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sandbox::cli {

namespace {

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
tr.group th{padding-top:10px;font-weight:600}tr.group i{display:inline-block;width:10px;height:10px;margin-right:6px}
tr.group i.o1{background:#d1352b}tr.group i.o2{background:#e08a00}tr.group i.o3{background:#7d6cc4}
tr.group i.o4{background:#6b6b6b}span.outlier{color:#b0306a;font-weight:600;font-size:12px}
svg{display:block;margin:6px 0}svg text{font:11px system-ui,sans-serif;fill:#444}
svg rect.bar{shape-rendering:crispEdges}svg line{stroke:#ddd;shape-rendering:crispEdges}svg line.axis{stroke:#888}
)";

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

    p.add("<p class=\"sub\">" + count_of(sorted.size(), "job", "jobs") + " in " + std::to_string(bins) + " " +
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
            seconds_text(edge(k)) + " to " + seconds_text(edge(k + 1)) + ": " + count_of(total, "job", "jobs");
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

void add_slowest(page& p, const report_data& d, double fence)
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
    if (fence >= 0)
        p.add("<p class=\"note\">Marked <span class=\"outlier\">outlier</span>: longer than " + seconds_text(fence) +
              ", far above the rest (the third quartile plus three interquartile ranges).</p>\n");
    p.add("<table class=\"list slowest\"><tr><th>#</th><th>id</th><th>line</th><th>duration</th><th>outcome</th>"
          "<th>status</th></tr>\n");
    for (std::size_t r = 0; r < n; ++r) {
        const auto& j = d.jobs[idx[r]];
        const bool outlier = fence >= 0 && j.duration > fence;
        p.add(std::string(outlier ? "<tr class=\"outlier\">" : "<tr>") + "<td class=\"num\">" + std::to_string(r + 1) +
              "</td>");
        add_job_cells(p, j);
        p.add("<td class=\"num\">" + seconds_text(j.duration) + (outlier ? " <span class=\"outlier\">outlier</span>" : "") +
              "</td><td>" + styles[index_of(j.kind)].name + "</td><td>");
        p.text(j.status);
        p.add("</td></tr>\n");
    }
    p.add("</table>\n");
}

// First on the page: what a user opens the report for after a batch. Grouped by how the jobs
// ended, the largest group first, with its first jobs.
void add_failures(page& p, const report_data& d)
{
    p.add("<h2>Failures</h2>\n");
    if (d.failures_total == 0) {
        p.add("<p class=\"note\">None: every job succeeded.</p>\n");
        return;
    }
    const auto n = static_cast<std::uint64_t>(d.jobs.size());
    p.add("<p class=\"note\">" + count_of(d.failures_total, "job", "jobs") + " did not succeed, in " +
          count_of(d.failure_groups.size(), "group", "groups") + " by exit status, signal, timeout or error, " +
          "the largest first; each lists its first " + std::to_string(failure_examples) + " jobs.");
    if (d.failures_ungrouped)
        p.add(" " + count_of(d.failures_ungrouped, "job", "jobs") + " of further kinds are not listed.");
    p.add("</p>\n<table class=\"list failures\"><tr><th>id</th><th>line</th><th>status</th>"
          "<th>error, or the last line of stderr</th></tr>\n");
    for (const auto& g : d.failure_groups) {
        p.add("<tr class=\"group\"><th colspan=\"4\"><i class=\"o" + std::to_string(index_of(g.kind)) + "\"></i>");
        p.text(g.label);
        p.add(" <span class=\"sub\">" + std::string(styles[index_of(g.kind)].name) + ", " +
              count_of(g.count, "job", "jobs") + percent(g.count, n) + "</span></th></tr>\n");
        for (const auto& f : g.examples) {
            const auto& j = d.jobs[f.job];
            p.add("<tr>");
            add_job_cells(p, j);
            p.add("<td>");
            p.text(j.status);
            p.add("</td><td class=\"text\">");
            p.text(f.detail);
            p.add("</td></tr>\n");
        }
        if (g.count > g.examples.size())
            p.add("<tr><td colspan=\"4\" class=\"note\">and " + count_text(g.count - g.examples.size()) +
                  " more</td></tr>\n");
    }
    p.add("</table>\n");
}

}  // namespace

std::string make_page(const report_data& d, const std::string& input_name, const std::string& title)
{
    const auto t = place(d.jobs);
    std::vector<double> durations;
    durations.reserve(d.jobs.size());
    for (const auto& j : d.jobs)
        if (j.duration >= 0) durations.push_back(j.duration);
    std::sort(durations.begin(), durations.end());
    const double fence = outlier_fence(durations);

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
    p.add(": " + count_of(d.jobs.size(), "job", "jobs"));
    if (d.bad_lines)
        p.add(", " + count_of(d.bad_lines, "line", "lines") +
              " skipped as not result lines (not JSON, not an object, or neither exit_code nor error)");
    if (d.superseded)
        p.add(", " + count_text(d.superseded) + (d.superseded == 1 ? " earlier result" : " earlier results") +
              " of an id replaced by its last (a resumed batch appended to the same file)");
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
        if (fence >= 0) {
            const auto far = static_cast<std::uint64_t>(
                durations.end() - std::upper_bound(durations.begin(), durations.end(), fence));
            row("outliers", count_text(far) + " <span class=\"sub\">over " + seconds_text(fence) + "</span>");
        }
    }
    p.add("</table></div>\n");

    add_failures(p, d);
    add_timeline(p, d, t);
    add_histogram(p, d, durations);
    add_slowest(p, d, fence);
    p.add("</body></html>\n");
    return std::move(p.html);
}

}  // namespace sandbox::cli
