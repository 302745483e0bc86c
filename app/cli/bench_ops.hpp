#pragma once
// routescope-cli bench ops: every op of the op table (or one) at the benchmark sizes of
// engine/backend/op_specs.hpp, forward and backward, on one backend: µs, GFLOP/s and GB/s per op
// and shape (the cost is the op table's; a backward is priced at twice its forward).
#include <string>

namespace routescope::cli {

struct OpsBenchArgs {
    std::string backend = "cpu";
    std::string op;  ///< empty: every op
    int threads = 2;
    double seconds = 0.2;  ///< time per measurement (at least 3 runs)
};

int run_bench_ops(const OpsBenchArgs& a);

/// The 1-, 5- and 15-minute load averages ("0.52 0.61 0.70"), which every bench prints before and
/// after its runs.
std::string load_average();

}  // namespace routescope::cli
