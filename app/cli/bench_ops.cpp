#include "app/cli/bench_ops.hpp"
#include "engine/backend/cpu/blas.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/command.hpp"
#include "engine/backend/make_backend.hpp"
#include "engine/backend/op_specs.hpp"
#include "engine/core/error.hpp"

namespace routescope::cli {

namespace {

// Median seconds of fn over at least 3 runs and `seconds` of wall time.
template <class F>
double median_seconds(F&& fn, double seconds) {
    using Clock = std::chrono::steady_clock;
    std::vector<double> runs;
    const auto start = Clock::now();
    while (runs.size() < 3 ||
           (std::chrono::duration<double>(Clock::now() - start).count() < seconds &&
            runs.size() < 1000)) {
        const auto t0 = Clock::now();
        fn();
        runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::nth_element(runs.begin(), runs.begin() + static_cast<long>(runs.size() / 2), runs.end());
    return runs[runs.size() / 2];
}

}  // namespace

int run_bench_ops(const OpsBenchArgs& a) {
    if (a.backend != "cpu" && a.backend != "cuda")
        throw ConfigError("--backend " + a.backend + ": no such backend (cpu, cuda)");
    // cuda where it cannot run: exit 2 naming this command's option (resolve_device's message
    // says --device, which bench ops does not take).
    if (a.backend == "cuda") {
        const std::string reason = cuda_unavailable_reason();
        if (!reason.empty()) throw ConfigError("--backend cuda: " + reason);
    }
    const Device device = resolve_device(a.backend);
    std::vector<ops::OpId> selected;
    if (a.op.empty()) {
        for (const ops::OpDef& d : ops::op_defs())
            selected.push_back(d.id);
    } else {
        const auto id = ops::find_op(a.op);
        if (!id) throw ConfigError("--op " + a.op + ": no such op in the op table");
        selected.push_back(*id);
    }
    ThreadPool pool(a.threads);
    const std::unique_ptr<Backend> owned = make_backend(device, pool);
    Backend& backend = *owned;
    std::printf(
        "# bench ops: backend %s, %d threads, float32, median of >= 3 runs "
        "(each run synchronised)\nload average before: %s\n",
        backend.name(), pool.size(), load_average().c_str());
    std::printf("CPU GEMM: %s\n", cpu::blas_description().c_str());  // the kernels that ran
    nlohmann::ordered_json summary;
    summary["bench"] = "ops";
    summary["backend"] = backend.name();
    summary["threads"] = pool.size();
    summary["ops"] = nlohmann::ordered_json::array();
    std::printf("%-22s %-44s %11s %9s %8s %11s %9s %8s\n", "op", "shape", "fwd us", "GFLOP/s",
                "GB/s", "bwd us", "GFLOP/s", "GB/s");
    for (ops::OpId id : selected) {
        for (const OpSpec& spec : op_specs(id, SpecSize::bench)) {
            OpInstance inst(spec, DType::f32, backend, 7);
            const ops::Layout& l = inst.layout();
            std::mt19937 gen(3);
            std::normal_distribution<double> normal;
            for (int k = 0; k < l.size(); ++k) {
                if (l[k].role != ops::Role::output) continue;
                std::vector<double> r(static_cast<std::size_t>(l[k].numel));
                for (auto& x : r)
                    x = normal(gen);
                inst.set_gradient(k, r);
            }
            ops::OpCall& call = inst.call();
            // One untimed run of each first (a GPU's first launch loads its kernels).
            backend.forward(call);
            backend.backward(call);
            backend.synchronize();
            const double fwd = median_seconds(
                [&] {
                    backend.forward(call);
                    backend.synchronize();
                },
                a.seconds);
            const double bwd = median_seconds(
                [&] {
                    backend.backward(call);
                    backend.synchronize();
                },
                a.seconds);
            const ops::OpCost cost = ops::call_cost(call);
            std::printf("%-22s %-44s %11.1f %9.2f %8.2f %11.1f %9.2f %8.2f\n", ops::op_def(id).name,
                        spec.label.c_str(), fwd * 1e6, cost.flops / fwd * 1e-9,
                        cost.bytes / fwd * 1e-9, bwd * 1e6, 2 * cost.flops / bwd * 1e-9,
                        2 * cost.bytes / bwd * 1e-9);
            std::fflush(stdout);
            summary["ops"].push_back({{"op", ops::op_def(id).name},
                                      {"shape", spec.label},
                                      {"forward_us", fwd * 1e6},
                                      {"backward_us", bwd * 1e6},
                                      {"forward_gflops", cost.flops / fwd * 1e-9},
                                      {"forward_gbs", cost.bytes / fwd * 1e-9},
                                      {"backward_gflops", 2 * cost.flops / bwd * 1e-9},
                                      {"backward_gbs", 2 * cost.bytes / bwd * 1e-9}});
        }
    }
    std::printf("load average after: %s\n", load_average().c_str());
    std::cout << summary.dump() << std::endl;
    return kExitOk;
}

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

}  // namespace routescope::cli
