// bench_gemm: the engine GEMM (ops::dense_forward, fp32) on square shapes against the machine's
// measured FMA peak. Not a test. Usage: bench_gemm [threads=2] [seconds=2] [sizes=512,1024,2048]
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "engine/backend/cpu/gemm_bench.hpp"

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
    std::vector<int> sizes;
    std::stringstream list(argc > 3 ? argv[3] : "512,1024,2048");
    for (std::string s; std::getline(list, s, ',');)
        sizes.push_back(std::stoi(s));

    const double peak = routescope::cpu::measure_fma_peak_gflops(threads, seconds);
    std::printf("FMA peak (%s, %d threads): %.1f GFLOP/s\n", routescope::cpu::fma_peak_isa(),
                threads, peak);
    std::printf("%6s %6s %6s %8s %10s %8s\n", "m", "n", "k", "threads", "GFLOP/s", "% peak");
    for (int s : sizes) {
        const auto r = routescope::cpu::bench_gemm(s, s, s, threads, seconds);
        std::printf("%6d %6d %6d %8d %10.1f %7.1f%%\n", r.m, r.n, r.k, r.threads, r.gflops,
                    100.0 * r.gflops / peak);
    }
    return 0;
}
