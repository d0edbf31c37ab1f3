// SPDX-License-Identifier: BSL-1.0
// What the report computes from the jobs: the timeline's slots, quantiles, axis steps.
#include "report_data.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>

namespace sandbox::cli {

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

double outlier_fence(const std::vector<double>& sorted)
{
    if (sorted.size() < 8) return -1;  // too few to call one far from the rest
    const double q1 = quantile(sorted, 0.25);
    const double q3 = quantile(sorted, 0.75);
    return q3 + 3 * (q3 - q1);
}

double nice_step(double span, int ticks)
{
    const double raw = span / ticks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0})
        if (m * mag >= raw) return m * mag;
    return 10 * mag;
}

}  // namespace sandbox::cli
