#pragma once
// CUDA backend op: dense (exec.hpp says how an op is written). y = x Wᵀ + b with x [rows, in],
// W [out, in] (PyTorch's layout), b [out] or absent: the bias is broadcast into y, then one cuBLAS
// GEMM adds x Wᵀ (beta = 1). Backward: dx += dy W and dW += dyᵀ x as GEMMs with beta = 1; db += the
// column sums of dy in fixed chunks of rows, then the chunks in order (no atomics; exec.hpp's
// column_chunks: one index per column walking all rows was 8× the GEMMs' time at 16 Ki rows).
//
// Operands (op_defs.cpp): x = 0, weight = 1, bias = 2 (optional), y = 3.
#include <cstdint>

#include "engine/backend/cuda/exec.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// y[r, o] = b[o]
template <class T>
struct BroadcastRow {
    T* y;
    const T* b;
    std::int64_t width;
    ROUTESCOPE_HD void operator()(std::int64_t i) const { y[i] = b[i % width]; }
};

/// i = (k, o): part[k, o] = Σ dy[r, o] over chunk k's rows, in order (exec.hpp's column_chunks).
template <class T>
struct ColumnSumPartial {
    T* part;
    const T* dy;
    std::int64_t rows, width, per_chunk;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t k = i / width, o = i % width;
        const std::int64_t end = (k + 1) * per_chunk < rows ? (k + 1) * per_chunk : rows;
        T sum = 0;
        for (std::int64_t r = k * per_chunk; r < end; ++r)
            sum += dy[r * width + o];
        part[i] = sum;
    }
};

/// db[o] += Σ_k part[k, o], chunks in order.
template <class T>
struct ColumnSumFinish {
    T* db;
    const T* part;
    std::int64_t chunks, width;
    ROUTESCOPE_HD void operator()(std::int64_t o) const {
        T sum = 0;
        for (std::int64_t k = 0; k < chunks; ++k)
            sum += part[k * width + o];
        db[o] += sum;
    }
};

/// Arguments: rows, in, out.
template <class T, class X>
void dense_forward(X& x, const ops::OpCall& c) {
    const auto rows = static_cast<int>(c.i[0]), in = static_cast<int>(c.i[1]),
               out = static_cast<int>(c.i[2]);
    T* y = c.value<T>(3);
    const T* bias = c.value<T>(2);
    if (bias) x.each(c.i[0] * c.i[2], BroadcastRow<T>{y, bias, c.i[2]});
    x.gemm(row_major_gemm<T>(Trans::n, Trans::t, rows, out, in, T(1), c.value<T>(0), in,
                             c.value<T>(1), in, bias ? T(1) : T(0), y, out));
}

template <class T, class X>
void dense_backward(X& x, const ops::OpCall& c) {
    const auto rows = static_cast<int>(c.i[0]), in = static_cast<int>(c.i[1]),
               out = static_cast<int>(c.i[2]);
    const T* dy = c.gradient<T>(3);
    if (T* dx = c.gradient<T>(0))
        x.gemm(row_major_gemm<T>(Trans::n, Trans::n, rows, in, out, T(1), dy, out, c.value<T>(1),
                                 in, T(1), dx, in));
    if (T* dw = c.gradient<T>(1))
        x.gemm(row_major_gemm<T>(Trans::t, Trans::n, out, in, rows, T(1), dy, out, c.value<T>(0),
                                 in, T(1), dw, in));
    if (T* db = c.gradient<T>(2)) {
        const std::int64_t chunks = column_chunks(c.i[0], c.i[2]);
        T* part = x.template scratch<T>(chunks * c.i[2]);
        x.each(chunks * c.i[2],
               ColumnSumPartial<T>{part, dy, c.i[0], c.i[2], chunk_rows(c.i[0], chunks)});
        x.each(c.i[2], ColumnSumFinish<T>{db, part, chunks, c.i[2]});
    }
}

}  // namespace routescope::cuda::kernels
