#include "engine/ops/fft_conv.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/aligned_buffer.hpp"
#include "engine/core/error.hpp"

namespace routescope::ops {

namespace {

// Channels per FFTW batch: 32 columns of [2L] floats at L = 512 keep the real buffer and the two
// spectra of one work item (≈ 390 KiB) near the L2 of the machines we measured on; see
// docs/benchmarks.md "SSM ops" for the measurement behind the choice.
constexpr int kChannelBlock = 32;

// Distance between the padded real columns of a batch: 2L plus one cache line, so that 32 columns
// of 2L = 1024 floats (4 KiB apart) do not all map to the same L1 set when the block is transposed
// in and out (perf showed the transposes, not FFTW, dominating without it).
template <typename T>
int column_stride(int n) {
    return n + static_cast<int>(64 / sizeof(T));
}

// Positions moved together by the transposes between [L, d] rows and per-channel columns.
constexpr int kTile = 16;

// cols[j·ns + t] = rows[t·d + j] for t < L, j < w: a tile of kTile rows stays in L1 while its w
// columns are written.
template <typename T>
void rows_to_columns(T* __restrict cols, const T* __restrict rows, int L, int d, int w, int ns) {
    for (int t0 = 0; t0 < L; t0 += kTile) {
        const int t1 = std::min(L, t0 + kTile);
        for (int j = 0; j < w; ++j) {
            T* col = cols + std::size_t(j) * ns;
            for (int t = t0; t < t1; ++t)
                col[t] = rows[std::size_t(t) * d + j];
        }
    }
}

// out[t·d + j] (+)= scale·cols[j·ns + t] + D[j]·skip[t·d + j] for t < L, j < w, through a
// [kTile, w] tile so that the row-side loop runs over contiguous channels.
template <bool Accumulate, typename T>
void columns_to_rows(T* __restrict out, const T* __restrict cols, const T* __restrict skip,
                     const T* __restrict D, int L, int d, int w, int ns, T* __restrict tile) {
    for (int t0 = 0; t0 < L; t0 += kTile) {
        const int rows = std::min(L, t0 + kTile) - t0;
        for (int j = 0; j < w; ++j) {
            const T* col = cols + std::size_t(j) * ns + t0;
            for (int r = 0; r < rows; ++r)
                tile[r * w + j] = col[r];
        }
        for (int r = 0; r < rows; ++r) {
            const std::size_t row = std::size_t(t0 + r) * d;
            const T* tr = tile + r * w;
            for (int j = 0; j < w; ++j) {
                const T v = tr[j] + D[j] * skip[row + j];
                if constexpr (Accumulate)
                    out[row + j] += v;
                else
                    out[row + j] = v;
            }
        }
    }
}

// FFTW's planner is not thread-safe (execution with the new-array functions is); every plan
// creation and destruction of both precisions goes through this lock.
std::mutex& planner_mutex() {
    static std::mutex m;
    return m;
}

template <typename T>
struct Fftw;

template <>
struct Fftw<float> {
    using Plan = fftwf_plan;
    using Complex = fftwf_complex;
    static Plan r2c(int n, int howmany, float* in, Complex* out) {
        return fftwf_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, column_stride<float>(n), out,
                                       nullptr, 1, n / 2 + 1, FFTW_ESTIMATE);
    }
    static Plan c2r(int n, int howmany, Complex* in, float* out) {
        return fftwf_plan_many_dft_c2r(1, &n, howmany, in, nullptr, 1, n / 2 + 1, out, nullptr, 1,
                                       column_stride<float>(n), FFTW_ESTIMATE);
    }
    static void run_r2c(Plan p, float* in, Complex* out) { fftwf_execute_dft_r2c(p, in, out); }
    static void run_c2r(Plan p, Complex* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
    static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

template <>
struct Fftw<double> {
    using Plan = fftw_plan;
    using Complex = fftw_complex;
    static Plan r2c(int n, int howmany, double* in, Complex* out) {
        return fftw_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, column_stride<double>(n), out,
                                      nullptr, 1, n / 2 + 1, FFTW_ESTIMATE);
    }
    static Plan c2r(int n, int howmany, Complex* in, double* out) {
        return fftw_plan_many_dft_c2r(1, &n, howmany, in, nullptr, 1, n / 2 + 1, out, nullptr, 1,
                                      column_stride<double>(n), FFTW_ESTIMATE);
    }
    static void run_r2c(Plan p, double* in, Complex* out) { fftw_execute_dft_r2c(p, in, out); }
    static void run_c2r(Plan p, Complex* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
    static void destroy(Plan p) { fftw_destroy_plan(p); }
};

// Process-wide plans keyed by (direction, size 2L, columns). A plan describes `howmany`
// contiguous columns (n reals or n/2 + 1 complex each, one after the other) in 64-byte aligned
// buffers, so the workspaces of all the SSMs of a model share one pair of plans per shape.
// Contiguous columns rather than the [L, d] layout's interleaved ones (stride d): FFTW 3.3.10 ran
// 32 interleaved r2c of size 1024 at 4.2 µs each, 32 contiguous ones at 1.6 µs (docs/decisions.md).
template <typename T>
class PlanCache {
public:
    using Plan = typename Fftw<T>::Plan;

    static PlanCache& instance() {
        static PlanCache cache;
        return cache;
    }

    Plan get(bool inverse, int n, int howmany, T* real, typename Fftw<T>::Complex* spectrum) {
        std::lock_guard<std::mutex> lock(planner_mutex());
        const auto key = std::make_tuple(inverse, n, howmany);
        auto it = plans_.find(key);
        if (it != plans_.end()) return it->second;
        Plan p = inverse ? Fftw<T>::c2r(n, howmany, spectrum, real)
                         : Fftw<T>::r2c(n, howmany, real, spectrum);
        if (!p)
            throw Error("fft_conv: FFTW could not plan a " + std::string(inverse ? "c2r" : "r2c") +
                        " transform of size " + std::to_string(n) + " over " +
                        std::to_string(howmany) + " columns");
        plans_.emplace(key, p);
        return p;
    }

    ~PlanCache() {
        std::lock_guard<std::mutex> lock(planner_mutex());
        for (auto& [key, p] : plans_)
            Fftw<T>::destroy(p);
    }

private:
    std::map<std::tuple<bool, int, int>, Plan> plans_;
};

}  // namespace

template <typename T>
struct FftConvWorkspace<T>::Impl {
    using F = Fftw<T>;
    using Plan = typename F::Plan;

    int B, L, d, H, threads;
    int n, nf;                  // transform size 2L and its number of bins L + 1
    int ns;                     // distance between real columns, column_stride(n)
    int gs;                     // channels per group, d / H
    int cb, nblocks;            // channel block width and count (the last block may be narrower)
    std::vector<int> group_of;  // [d]

    struct ThreadBuffers {
        AlignedBuffer<T> real;  // [cb, n]: one padded column per channel
        AlignedBuffer<T> x, y;  // [cb, nf] complex (re, im interleaved)
        AlignedBuffer<T> tile;  // [kTile, cb] for columns_to_rows
        AlignedBuffer<T> dj;    // [cb] D of the block's channels
    };
    std::vector<ThreadBuffers> buf;
    AlignedBuffer<T> kf;  // [H, nf] complex: rfft(pad(K)) / n

    // Backward partial sums, one slot per item (b, block) for each group the block touches.
    std::vector<int> g_lo, g_hi;     // [nblocks]
    std::vector<std::size_t> p_off;  // [B·nblocks] offset into part (complex doubles)
    AlignedBuffer<double> part;      // Σ conj(U)·DY per (item, group, bin), interleaved

    Plan r2c_block = nullptr, c2r_block = nullptr, r2c_tail = nullptr, c2r_tail = nullptr;
    Plan r2c_one = nullptr, c2r_one = nullptr;

    int width(int blk) const { return blk + 1 < nblocks ? cb : d - cb * (nblocks - 1); }
    Plan r2c_for(int w) const { return w == cb ? r2c_block : w == 1 ? r2c_one : r2c_tail; }
    Plan c2r_for(int w) const { return w == cb ? c2r_block : w == 1 ? c2r_one : c2r_tail; }
    typename F::Complex* cx(AlignedBuffer<T>& b) {
        return reinterpret_cast<typename F::Complex*>(b.data());
    }

    Impl(int B_, int L_, int d_, int H_, int threads_)
        : B(B_), L(L_), d(d_), H(H_), threads(threads_) {
        if (B <= 0 || L <= 0 || d <= 0 || H <= 0 || threads <= 0)
            throw Error("fft_conv: bad shape B = " + std::to_string(B) +
                        ", L = " + std::to_string(L) + ", d = " + std::to_string(d) +
                        ", H = " + std::to_string(H) + ", threads = " + std::to_string(threads));
        if (d % H != 0)
            throw ConfigError("fft_conv: d = " + std::to_string(d) +
                              " channels do not split into H = " + std::to_string(H) +
                              " kernels (model.ssm.n_kernels must divide model.d_model)");
        n = 2 * L;
        nf = L + 1;
        ns = column_stride<T>(n);
        gs = d / H;
        cb = std::min(d, kChannelBlock);
        nblocks = (d + cb - 1) / cb;
        group_of.resize(static_cast<std::size_t>(d));
        for (int c = 0; c < d; ++c)
            group_of[c] = c / gs;

        const std::size_t real_size = std::size_t(ns) * cb;
        const std::size_t cplx_size = 2 * std::size_t(nf) * cb;
        for (int t = 0; t < threads; ++t)
            buf.push_back({AlignedBuffer<T>(real_size), AlignedBuffer<T>(cplx_size),
                           AlignedBuffer<T>(cplx_size), AlignedBuffer<T>(std::size_t(kTile) * cb),
                           AlignedBuffer<T>(std::size_t(cb))});
        kf = AlignedBuffer<T>(2 * std::size_t(H) * nf);

        g_lo.resize(nblocks);
        g_hi.resize(nblocks);
        for (int blk = 0; blk < nblocks; ++blk) {
            g_lo[blk] = group_of[blk * cb];
            g_hi[blk] = group_of[blk * cb + width(blk) - 1];
        }
        std::size_t p = 0;
        for (int b = 0; b < B; ++b)
            for (int blk = 0; blk < nblocks; ++blk) {
                p_off.push_back(p);
                const int groups = g_hi[blk] - g_lo[blk] + 1;
                p += 2 * std::size_t(groups) * nf;
            }
        part = AlignedBuffer<double>(p);

        auto& cache = PlanCache<T>::instance();
        auto& b0 = buf[0];
        r2c_block = cache.get(false, n, cb, b0.real.data(), cx(b0.x));
        c2r_block = cache.get(true, n, cb, b0.real.data(), cx(b0.x));
        r2c_one = cache.get(false, n, 1, b0.real.data(), cx(b0.x));
        c2r_one = cache.get(true, n, 1, b0.real.data(), cx(b0.x));
        const int tail = width(nblocks - 1);
        if (tail != cb && tail != 1) {
            r2c_tail = cache.get(false, n, tail, b0.real.data(), cx(b0.x));
            c2r_tail = cache.get(true, n, tail, b0.real.data(), cx(b0.x));
        }
    }

    void check(int B_, int L_, int d_, int H_, const ThreadPool& pool) const {
        if (B_ != B || L_ != L || d_ != d || H_ != H)
            throw Error("fft_conv: called with B, L, d, H = " + std::to_string(B_) + ", " +
                        std::to_string(L_) + ", " + std::to_string(d_) + ", " + std::to_string(H_) +
                        " on a workspace made for " + std::to_string(B) + ", " + std::to_string(L) +
                        ", " + std::to_string(d) + ", " + std::to_string(H));
        if (pool.size() > threads)
            throw Error("fft_conv: thread pool of " + std::to_string(pool.size()) +
                        " workers on a workspace made for " + std::to_string(threads));
    }

    // kf[h] = rfft(pad(K[h], 2L)) / 2L, the 1/2L of the inverse transform folded in.
    void kernel_spectra(const T* K, ThreadPool& pool) {
        pool.parallel_for(H, [&](std::int64_t begin, std::int64_t end, int t) {
            auto& tb = buf[t];
            const T scale = T(1) / T(n);
            for (std::int64_t h = begin; h < end; ++h) {
                std::copy(K + h * L, K + (h + 1) * L, tb.real.data());
                std::fill(tb.real.data() + L, tb.real.data() + n, T(0));
                F::run_r2c(r2c_one, tb.real.data(), cx(tb.x));
                T* dst = kf.data() + 2 * h * nf;
                for (int i = 0; i < 2 * nf; ++i)
                    dst[i] = tb.x.data()[i] * scale;
            }
        });
    }

    // Channels c0..c0+w of src[b] transposed into the columns of R [w, n], each zero-padded from
    // L to n; then rfft of every column.
    void load_and_transform(const T* src, int b, int c0, int w, ThreadBuffers& tb,
                            AlignedBuffer<T>& spectrum) {
        T* R = tb.real.data();
        rows_to_columns(R, src + std::size_t(b) * L * d + c0, L, d, w, ns);
        for (int j = 0; j < w; ++j)
            std::fill(R + std::size_t(j) * ns + L, R + std::size_t(j) * ns + n, T(0));
        F::run_r2c(r2c_for(w), R, cx(spectrum));
    }

    // X[j][k] ← X[j][k] · kf[g(c0 + j)][k], or · conj(kf) for the correlation of the backward.
    template <bool Conj>
    void multiply_by_kernel(T* X, int c0, int w) const {
        const T sign = Conj ? T(-1) : T(1);
        for (int j = 0; j < w; ++j) {
            T* col = X + 2 * std::size_t(j) * nf;
            const T* kg = kf.data() + 2 * std::size_t(group_of[c0 + j]) * nf;
            for (int k = 0; k < nf; ++k) {
                const T xr = col[2 * k], xi = col[2 * k + 1];
                const T kr = kg[2 * k], ki = sign * kg[2 * k + 1];
                col[2 * k] = xr * kr - xi * ki;
                col[2 * k + 1] = xr * ki + xi * kr;
            }
        }
    }

    void forward_item(T* y, const T* u, const T* D, int b, int blk, ThreadBuffers& tb) {
        const int c0 = blk * cb, w = width(blk);
        load_and_transform(u, b, c0, w, tb, tb.x);
        multiply_by_kernel<false>(tb.x.data(), c0, w);
        F::run_c2r(c2r_for(w), cx(tb.x), tb.real.data());
        for (int j = 0; j < w; ++j)
            tb.dj.data()[j] = D[group_of[c0 + j]];
        const std::size_t at = std::size_t(b) * L * d + c0;
        columns_to_rows<false>(y + at, tb.real.data(), u + at, tb.dj.data(), L, d, w, ns,
                               tb.tile.data());
    }

    void backward_item(T* du, const T* dy, const T* u, const T* D, int b, int blk,
                       ThreadBuffers& tb) {
        const int c0 = blk * cb, w = width(blk);
        const std::size_t item = std::size_t(b) * nblocks + blk;
        load_and_transform(u, b, c0, w, tb, tb.x);
        load_and_transform(dy, b, c0, w, tb, tb.y);

        // dK partial: Σ_{j in group} conj(U)·DY per bin, in double.
        double* P = part.data() + p_off[item];
        const int groups = g_hi[blk] - g_lo[blk] + 1;
        std::fill(P, P + 2 * std::size_t(groups) * nf, 0.0);
        const T* X = tb.x.data();
        const T* Y = tb.y.data();
        for (int j = 0; j < w; ++j) {
            const T* xc = X + 2 * std::size_t(j) * nf;
            const T* yc = Y + 2 * std::size_t(j) * nf;
            double* p = P + 2 * (std::size_t(group_of[c0 + j]) - g_lo[blk]) * nf;
            for (int k = 0; k < nf; ++k) {
                const double xr = xc[2 * k], xi = xc[2 * k + 1], yr = yc[2 * k], yi = yc[2 * k + 1];
                p[2 * k] += xr * yr + xi * yi;
                p[2 * k + 1] += xr * yi - xi * yr;
            }
        }
        // du: correlation of dy with K, then the skip.
        multiply_by_kernel<true>(tb.y.data(), c0, w);
        F::run_c2r(c2r_for(w), cx(tb.y), tb.real.data());
        for (int j = 0; j < w; ++j)
            tb.dj.data()[j] = D[group_of[c0 + j]];
        const std::size_t at = std::size_t(b) * L * d + c0;
        columns_to_rows<true>(du + at, tb.real.data(), dy + at, tb.dj.data(), L, d, w, ns,
                              tb.tile.data());
    }

    // dK[g] += irfft(Σ_items partial[g])[0:L] / 2L, items summed in order. dD[g] is the same
    // correlation at lag 0, Σ_t u·dy = (P_0 + P_L + 2·Σ_{0<k<L} Re P_k) / 2L, taken in double.
    void reduce_groups(T* dK, T* dD, ThreadPool& pool) {
        pool.parallel_for(H, [&](std::int64_t begin, std::int64_t end, int t) {
            auto& tb = buf[t];
            for (std::int64_t g = begin; g < end; ++g) {
                const int blk_lo = int(g * gs / cb), blk_hi = int(((g + 1) * gs - 1) / cb);
                T* S = tb.x.data();
                double lag0 = 0;
                for (int i = 0; i < 2 * nf; ++i) {
                    double s = 0;
                    for (int b = 0; b < B; ++b)
                        for (int blk = blk_lo; blk <= blk_hi; ++blk) {
                            const std::size_t item = std::size_t(b) * nblocks + blk;
                            s += part.data()[p_off[item] + 2 * (g - g_lo[blk]) * nf + i];
                        }
                    S[i] = static_cast<T>(s);
                    if (i % 2 == 0) lag0 += (i == 0 || i == 2 * L) ? s : 2 * s;
                }
                F::run_c2r(c2r_one, cx(tb.x), tb.real.data());
                const T scale = T(1) / T(n);
                for (int l = 0; l < L; ++l)
                    dK[g * L + l] += tb.real.data()[l] * scale;
                dD[g] += static_cast<T>(lag0 / n);
            }
        });
    }
};

template <typename T>
FftConvWorkspace<T>::FftConvWorkspace(int B, int L, int d, int H, int threads)
    : impl_(std::make_unique<Impl>(B, L, d, H, threads)) {}

template <typename T>
FftConvWorkspace<T>::~FftConvWorkspace() = default;

template <typename T>
void fft_conv_forward(T* y, const T* u, const T* K, const T* D, int B, int L, int d, int H,
                      FftConvWorkspace<T>& ws, ThreadPool& pool) {
    auto& w = ws.impl();
    w.check(B, L, d, H, pool);
    w.kernel_spectra(K, pool);
    pool.parallel_for(
        std::int64_t(B) * w.nblocks, [&](std::int64_t begin, std::int64_t end, int t) {
            for (std::int64_t item = begin; item < end; ++item)
                w.forward_item(y, u, D, int(item / w.nblocks), int(item % w.nblocks), w.buf[t]);
        });
}

template <typename T>
void fft_conv_backward(T* du, T* dK, T* dD, const T* dy, const T* u, const T* K, const T* D, int B,
                       int L, int d, int H, FftConvWorkspace<T>& ws, ThreadPool& pool) {
    auto& w = ws.impl();
    w.check(B, L, d, H, pool);
    w.kernel_spectra(K, pool);
    pool.parallel_for(std::int64_t(B) * w.nblocks, [&](std::int64_t begin, std::int64_t end,
                                                       int t) {
        for (std::int64_t item = begin; item < end; ++item)
            w.backward_item(du, dy, u, D, int(item / w.nblocks), int(item % w.nblocks), w.buf[t]);
    });
    w.reduce_groups(dK, dD, pool);
}

OpCost fft_conv_cost(int B, int L, int d, int H, std::size_t scalar_bytes) {
    const double n = 2.0 * L, fft = 2.5 * n * std::log2(n);
    const double columns = double(B) * d;
    OpCost c;
    // Per column: rfft + irfft, a complex product per bin (6), the skip (2 per position); plus
    // one rfft per kernel.
    c.flops = columns * (2 * fft + 6 * (L + 1) + 2.0 * L) + H * fft;
    c.bytes = double(scalar_bytes) * (2 * columns * L + double(H) * L + H);
    return c;
}

template class FftConvWorkspace<float>;
template class FftConvWorkspace<double>;
template void fft_conv_forward<float>(float*, const float*, const float*, const float*, int, int,
                                      int, int, FftConvWorkspace<float>&, ThreadPool&);
template void fft_conv_forward<double>(double*, const double*, const double*, const double*, int,
                                       int, int, int, FftConvWorkspace<double>&, ThreadPool&);
template void fft_conv_backward<float>(float*, float*, float*, const float*, const float*,
                                       const float*, const float*, int, int, int, int,
                                       FftConvWorkspace<float>&, ThreadPool&);
template void fft_conv_backward<double>(double*, double*, double*, const double*, const double*,
                                        const double*, const double*, int, int, int, int,
                                        FftConvWorkspace<double>&, ThreadPool&);

}  // namespace routescope::ops
