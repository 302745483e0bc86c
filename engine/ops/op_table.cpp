#include "engine/ops/op_table.hpp"
#include <algorithm>
#include <cstdio>
#include <string>

#include "engine/core/error.hpp"
#include "engine/ops/op.hpp"
#include "engine/ops/op_table.hpp"

namespace routescope::ops {

OpCost op_cost(std::string_view name, std::span<const std::int64_t> dims) {
    const auto id = find_op(name);
    if (!id) throw Error("op_cost: no op named '" + std::string(name) + "' in the op table");
    const OpDef& op = op_def(*id);
    if (static_cast<int>(dims.size()) != op.cost_args)
        throw Error("op_cost('" + std::string(name) + "'): expected " +
                    std::to_string(op.cost_args) + " dims (the first of " + op.args + "), got " +
                    std::to_string(dims.size()));
    return op.cost(dims, 4);
}

void OpProfile::record(std::string_view name, double seconds, const OpCost& cost) {
    auto it = stats_.find(name);
    if (it == stats_.end())
        it = stats_.emplace(std::string(name), OpStats{std::string(name)}).first;
    it->second.calls += 1;
    it->second.seconds += seconds;
    it->second.flops += cost.flops;
    it->second.bytes += cost.bytes;
}

void OpProfile::record_phase(std::string_view op, Phase phase, double seconds, const OpCost& cost) {
    std::string name(op);
    name += phase == Phase::forward ? " forward" : " backward";
    record(name, seconds, cost);
}

std::vector<OpStats> OpProfile::stats() const {
    std::vector<OpStats> out;
    for (const auto& [name, s] : stats_)
        out.push_back(s);
    std::stable_sort(out.begin(), out.end(),
                     [](const OpStats& a, const OpStats& b) { return a.seconds > b.seconds; });
    return out;
}

double OpProfile::total_seconds() const {
    double t = 0;
    for (const auto& [name, s] : stats_)
        t += s.seconds;
    return t;
}

std::string OpProfile::report() const {
    const double total = total_seconds();
    std::string text;
    char line[160];
    std::snprintf(line, sizeof line, "%-24s %8s %10s %6s %9s %8s\n", "op", "calls", "ms", "%",
                  "GFLOP/s", "GB/s");
    text += line;
    for (const auto& s : stats()) {
        const double secs = s.seconds > 0 ? s.seconds : 1e-30;
        std::snprintf(line, sizeof line, "%-24s %8lld %10.3f %6.1f %9.2f %8.2f\n", s.name.c_str(),
                      static_cast<long long>(s.calls), 1e3 * s.seconds,
                      total > 0 ? 100.0 * s.seconds / total : 0.0, s.flops / secs * 1e-9,
                      s.bytes / secs * 1e-9);
        text += line;
    }
    return text;
}

}  // namespace routescope::ops
