// SPDX-License-Identifier: BSL-1.0
// The report's timeline, one row per slot.
//
// The page's size is bounded: beyond a budget of bars, short jobs are merged into per-slot
// strips of a few pixels, and only so many slots are drawn.
#include "report_page.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sandbox::cli {

namespace {

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

}  // namespace

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
                std::string title = count_of(std::accumulate(n.begin(), n.end(), std::uint64_t{0}), "job", "jobs") +
                                    " merged, " +
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
        notes.push_back(count_text(bars) +
                        (bars == 1 ? " job is drawn as a bar of its own" : " jobs are drawn as bars of their own") +
                        "; the other " + count_text(merged) +
                        " (shorter than a strip, or beyond " + count_text(bar_budget) +
                        " bars) are merged into strips of " + fixed(strip_width, 0) +
                        " px, each coloured by the outcome that filled it most.");
    if (hidden)
        notes.push_back("Only the first " + count_text(rows) + " of " + count_text(t.slots) + " slots are drawn: " +
                        count_text(hidden) +
                        (hidden == 1 ? " job in the others is not shown." : " jobs in the others are not shown."));
    if (untimed)
        notes.push_back(count_text(untimed) + (untimed == 1
                                                   ? " job has no started_at/ended_at and is not on the timeline."
                                                   : " jobs have no started_at/ended_at and are not on the timeline."));
    for (const auto& n : notes) p.add("<p class=\"note\">" + esc(n) + "</p>\n");
}

}  // namespace sandbox::cli
