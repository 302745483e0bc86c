// Times the SSM ops of BiGS at the bigs-small shape (B = 8, L = 512, d = 256, H = 1, N = 64) in
// float, with 1 and 2 threads. Not a test: its figures go to docs/benchmarks.md ("SSM ops").
// Usage: bench_ssm_ops [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/fft_conv.hpp"
#include "engine/ops/hippo.hpp"
#include "engine/ops/s4d_kernel.hpp"

using namespace routescope;
using namespace routescope::ops;

namespace {

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Median wall time of `reps` runs of fn in milliseconds (after two warm-up runs), and the
// process CPU time per run (all threads): on a loaded machine the CPU time of a 1-thread run is
// the steadier figure.
struct Timing {
    double wall_ms, cpu_ms;
};

template <class F>
Timing median_ms(int reps, F&& fn) {
    fn();
    fn();
    std::vector<double> t;
    const double c0 = cpu_seconds();
    for (int r = 0; r < reps; ++r) {
        const auto a = std::chrono::steady_clock::now();
        fn();
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    const double cpu = (cpu_seconds() - c0) * 1e3 / reps;
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], cpu};
}

}  // namespace

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
    const int B = 8, L = 512, d = 256, H = 1, N = 64;
    std::mt19937 gen(1);
    std::normal_distribution<float> nd;
    std::vector<float> u(std::size_t(B) * L * d), y(u.size()), dy(u.size()), du(u.size());
    for (auto& v : u)
        v = nd(gen);
    for (auto& v : dy)
        v = nd(gen);
    std::vector<float> A_re(H * N), A_im(H * N), C(2 * H * N), D(H), ls(H), K(H * L), dK(H * L),
        dD(H), dA_re(H * N), dA_im(H * N), dC(2 * H * N), dls(H);
    std::vector<double> scratch(s4d_kernel_scratch_size(H, N));
    ssm_init(A_re.data(), A_im.data(), C.data(), D.data(), ls.data(), SsmInitConfig{},
             std::uint64_t(1));

    std::printf("SSM ops, float, B=%d L=%d d=%d H=%d N=%d, median of %d\n", B, L, d, H, N, reps);
    for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        FftConvWorkspace<float> ws(B, L, d, H, threads);
        const Timing kf = median_ms(reps, [&] {
            s4d_kernel_forward(K.data(), A_re.data(), A_im.data(), C.data(), ls.data(), H, N, L,
                               pool);
        });
        const Timing kb = median_ms(reps, [&] {
            s4d_kernel_backward(dA_re.data(), dA_im.data(), dC.data(), dls.data(), K.data(),
                                A_re.data(), A_im.data(), C.data(), ls.data(), H, N, L,
                                scratch.data(), pool);
        });
        const Timing cf = median_ms(reps, [&] {
            fft_conv_forward(y.data(), u.data(), K.data(), D.data(), B, L, d, H, ws, pool);
        });
        const Timing cb = median_ms(reps, [&] {
            fft_conv_backward(du.data(), dK.data(), dD.data(), dy.data(), u.data(), K.data(),
                              D.data(), B, L, d, H, ws, pool);
        });
        const OpCost cost = fft_conv_cost(B, L, d, H, sizeof(float));
        std::printf(
            "threads=%d  s4d_kernel fwd %.3f ms  bwd %.3f ms | fft_conv fwd %.2f ms (%.1f GFLOP/s) "
            " "
            "bwd %.2f ms  fwd+bwd %.2f ms | CPU ms/run: kernel %.3f + %.3f, conv %.2f + %.2f\n",
            threads, kf.wall_ms, kb.wall_ms, cf.wall_ms, cost.flops / cf.wall_ms * 1e-6, cb.wall_ms,
            cf.wall_ms + cb.wall_ms, kf.cpu_ms, kb.cpu_ms, cf.cpu_ms, cb.cpu_ms);
    }
    return 0;
}
