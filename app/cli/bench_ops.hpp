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

}  // namespace routescope::cli
