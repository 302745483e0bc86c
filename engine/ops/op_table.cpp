#include "engine/ops/op_table.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "engine/core/error.hpp"
#include "engine/ops/attention.hpp"
#include "engine/ops/column_concat.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/flip.hpp"
#include "engine/ops/gate_softmax.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/layernorm.hpp"
#include "engine/ops/mean_pool.hpp"
#include "engine/ops/neighbour_shift.hpp"
#include "engine/ops/sequence_broadcast.hpp"
#include "engine/ops/sequence_softmax.hpp"
#include "engine/ops/sigmoid.hpp"
#include "engine/ops/tanh.hpp"
#include "engine/ops/weighted_sequence_sum.hpp"

namespace routescope::ops {

namespace {
int i32(std::int64_t v) {
    return static_cast<int>(v);
}
}  // namespace

const std::vector<OpInfo>& op_table() {
    using D = std::span<const std::int64_t>;
    static const std::vector<OpInfo> table = {
        {"dense", "rows, in, out", [](D s) { return dense_cost(s[0], i32(s[1]), i32(s[2])); }},
        {"embedding", "tokens, d", [](D s) { return embedding_cost(s[0], i32(s[1])); }},
        {"layernorm", "rows, d", [](D s) { return layernorm_cost(s[0], i32(s[1])); }},
        {"gelu_tanh", "n", [](D s) { return gelu_cost(s[0]); }},
        {"gelu_erf", "n", [](D s) { return gelu_cost(s[0]); }},
        {"tanh", "n", [](D s) { return tanh_cost(s[0]); }},
        {"sigmoid", "n", [](D s) { return sigmoid_cost(s[0]); }},
        {"add", "n", [](D s) { return add_cost(s[0]); }},
        {"mul", "n", [](D s) { return mul_cost(s[0]); }},
        {"flip", "B, L, d", [](D s) { return flip_cost(i32(s[0]), i32(s[1]), i32(s[2])); }},
        {"attention", "B, L, d, n_heads",
         [](D s) { return attention_cost(i32(s[0]), i32(s[1]), i32(s[2]), i32(s[3])); }},
        {"cross_entropy", "rows, V", [](D s) { return cross_entropy_cost(s[0], i32(s[1])); }},
        {"dropout", "n", [](D s) { return dropout_cost(s[0]); }},
        {"mean_pool", "B, L, d",
         [](D s) { return mean_pool_cost(i32(s[0]), i32(s[1]), i32(s[2])); }},
        // The S-LSTM's ops (MODELS.md "S-LSTM").
        {"neighbour_shift", "B, L, d",
         [](D s) { return neighbour_shift_cost(i32(s[0]), i32(s[1]), i32(s[2])); }},
        {"gate_softmax", "K, n", [](D s) { return gate_softmax_cost(i32(s[0]), s[1]); }},
        {"sequence_softmax", "B, L, d",
         [](D s) { return sequence_softmax_cost(i32(s[0]), i32(s[1]), i32(s[2])); }},
        {"weighted_sequence_sum", "B, L, d",
         [](D s) { return weighted_sequence_sum_cost(i32(s[0]), i32(s[1]), i32(s[2])); }},
        {"sequence_broadcast", "B, L, d",
         [](D s) { return sequence_broadcast_cost(i32(s[0]), i32(s[1]), i32(s[2])); }},
        {"column_concat", "rows, total_cols",
         [](D s) { return column_concat_cost(s[0], i32(s[1])); }},
    };
    return table;
}

OpCost op_cost(std::string_view name, std::span<const std::int64_t> dims) {
    for (const auto& op : op_table()) {
        if (name != op.name) continue;
        const auto expected =
            1 + std::count(op.shape, op.shape + std::char_traits<char>::length(op.shape), ',');
        if (static_cast<std::int64_t>(dims.size()) != expected) {
            throw Error("op_cost('" + std::string(name) + "'): expected " +
                        std::to_string(expected) + " dims (" + op.shape + "), got " +
                        std::to_string(dims.size()));
        }
        return op.cost(dims);
    }
    throw Error("op_cost: no op named '" + std::string(name) + "' in the op table");
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
