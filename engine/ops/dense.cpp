#include "engine/ops/dense.hpp"

#include "engine/backend/cpu/blas.hpp"

namespace routescope::ops {

using cpu::gemm;
using cpu::Trans;

template <class T>
void dense_forward(T* y, const T* x, const T* weight, const std::type_identity_t<T>* bias,
                   std::int64_t rows, int in, int out, ThreadPool& pool) {
    // Each block first holds the bias (or zeros), then the GEMM accumulates onto it (beta = 1).
    const bool by_rows = rows >= out;
    pool.parallel_for(by_rows ? rows : out, [&](std::int64_t b, std::int64_t e) {
        const std::int64_t n = e - b;
        const std::int64_t r0 = by_rows ? b : 0, r1 = by_rows ? e : rows;
        const std::int64_t c0 = by_rows ? 0 : b, c1 = by_rows ? out : e;
        for (std::int64_t r = r0; r < r1; ++r) {
            T* row = y + r * out;
            for (std::int64_t o = c0; o < c1; ++o)
                row[o] = bias ? bias[o] : T(0);
        }
        if (by_rows) {
            gemm<T>(Trans::no, Trans::yes, n, out, in, T(1), x + b * in, in, weight, in, T(1),
                    y + b * out, out);
        } else {
            gemm<T>(Trans::no, Trans::yes, rows, n, in, T(1), x, in, weight + b * in, in, T(1),
                    y + b, out);
        }
    });
}

template <class T>
void dense_backward(std::type_identity_t<T>* dx, std::type_identity_t<T>* dweight,
                    std::type_identity_t<T>* dbias, const T* dy, const T* x, const T* weight,
                    std::int64_t rows, int in, int out, ThreadPool& pool) {
    if (dx) {
        // dx += dy W: [rows, out] · [out, in].
        const bool by_rows = rows >= in;
        pool.parallel_for(by_rows ? rows : in, [&](std::int64_t b, std::int64_t e) {
            if (by_rows) {
                gemm<T>(Trans::no, Trans::no, e - b, in, out, T(1), dy + b * out, out, weight, in,
                        T(1), dx + b * in, in);
            } else {
                gemm<T>(Trans::no, Trans::no, rows, e - b, out, T(1), dy, out, weight + b, in, T(1),
                        dx + b, in);
            }
        });
    }
    if (dweight || dbias) {
        // Each worker owns a slice of output features, so every gradient element is one
        // sequential sum over rows: no cross-thread reduction, bit-identical per thread count.
        pool.parallel_for(out, [&](std::int64_t b, std::int64_t e) {
            if (dweight) {
                // dweight[b:e] += dy[:, b:e]ᵀ x: [e-b, rows] · [rows, in].
                gemm<T>(Trans::yes, Trans::no, e - b, in, rows, T(1), dy + b, out, x, in, T(1),
                        dweight + b * in, in);
            }
            if (dbias) {
                for (std::int64_t r = 0; r < rows; ++r) {
                    const T* g = dy + r * out;
                    for (std::int64_t o = b; o < e; ++o)
                        dbias[o] += g[o];
                }
            }
        });
    }
}

OpCost dense_cost(std::int64_t rows, int in, int out, int bytes_per_element) {
    const double r = static_cast<double>(rows);
    return {2.0 * r * in * out, static_cast<double>(bytes_per_element) *
                                    (r * in + static_cast<double>(out) * in + out + r * out)};
}

template void dense_forward<float>(float*, const float*, const float*, const float*, std::int64_t,
                                   int, int, ThreadPool&);
template void dense_forward<double>(double*, const double*, const double*, const double*,
                                    std::int64_t, int, int, ThreadPool&);
template void dense_backward<float>(float*, float*, float*, const float*, const float*,
                                    const float*, std::int64_t, int, int, ThreadPool&);
template void dense_backward<double>(double*, double*, double*, const double*, const double*,
                                     const double*, std::int64_t, int, int, ThreadPool&);

}  // namespace routescope::ops
