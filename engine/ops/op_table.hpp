#pragma once
// Pricing an op by name (the op table itself is engine/ops/op.hpp), and OpProfile, accumulating
// per-op wall time, calls, flops and bytes so a training step can print where its time goes.
//
//   OpProfile profile;
//   { OpProfile::Scope s(profile, "dense_forward", ops::dense_cost(rows, in, out));
//     ops::dense_forward(...); }
//   std::cout << profile.report();
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// The forward cost of op `name` (engine/ops/op.hpp's table) for its first OpDef::cost_args
/// integer arguments. Throws routescope::Error naming the op when it is not in the table or dims
/// has the wrong size.
OpCost op_cost(std::string_view name, std::span<const std::int64_t> dims);

struct OpStats {
    std::string name;
    std::int64_t calls = 0;
    double seconds = 0;
    double flops = 0;
    double bytes = 0;
};

class OpProfile {
public:
    void record(std::string_view name, double seconds, const OpCost& cost);
    enum class Phase { forward, backward };
    /// record() under "<op> forward" / "<op> backward" (the engine's per-op profile).
    void record_phase(std::string_view op, Phase phase, double seconds, const OpCost& cost);
    /// Sorted by total time, slowest first.
    std::vector<OpStats> stats() const;
    double total_seconds() const;
    /// A fixed-width table: op, calls, ms, % of time, GFLOP/s, GB/s.
    std::string report() const;
    void clear() { stats_.clear(); }

    /// Times its own lifetime and records it under `name`.
    class Scope {
    public:
        Scope(OpProfile& profile, std::string_view name, const OpCost& cost)
            : profile_(profile), name_(name), cost_(cost), start_(Clock::now()) {}
        ~Scope() {
            profile_.record(name_, std::chrono::duration<double>(Clock::now() - start_).count(),
                            cost_);
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        using Clock = std::chrono::steady_clock;
        OpProfile& profile_;
        std::string_view name_;
        OpCost cost_;
        Clock::time_point start_;
    };

private:
    std::map<std::string, OpStats, std::less<>> stats_;
};

}  // namespace routescope::ops
