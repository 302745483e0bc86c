#pragma once
// CUDA backend ops that move elements (exec.hpp says how an op is written): flip (reverse each
// sequence along L, BiGS's backward direction), column_slice and column_concat. One index per
// output element; each backward owns the input element it accumulates into.
//
// Operands (op_defs.cpp): flip x = 0, y = 1; column_slice x = 0, y = 1; column_concat
// x0 … x(K−1), y = K.
#include <cstdint>

#include "engine/backend/cuda/exec.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// out[b, l, c] (+)= in[b, L−1−l, c]: its own inverse, so the backward is the same map.
template <class T>
struct FlipBody {
    T* out;
    const T* in;
    std::int64_t L, d;
    bool accumulate;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % d, r = i / d, l = r % L, b = r / L;
        const T v = in[(b * L + (L - 1 - l)) * d + c];
        if (accumulate)
            out[i] += v;
        else
            out[i] = v;
    }
};

/// Forward: y[r, k] = x[r, begin + k]; backward: dx[r, begin + k] += dy[r, k] (i runs over y).
template <class T>
struct ColumnSliceBody {
    T* x_side;
    T* y_side;
    std::int64_t cols, begin, count;
    bool backward;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / count, k = i % count;
        if (backward)
            x_side[r * cols + begin + k] += y_side[i];
        else
            y_side[i] = x_side[r * cols + begin + k];
    }
};

/// The pieces of a concatenation along columns: piece k is [rows, cols[k]].
template <class T>
struct Pieces {
    T* p[ops::kMaxPieces];
    std::int64_t cols[ops::kMaxPieces];
    int K;
};

/// i runs over y [rows, width]: forward y[i] = piece[r, j − start]; backward piece gradient +=.
template <class T>
struct ColumnConcatBody {
    Pieces<T> x;
    T* y;
    std::int64_t width;
    bool backward;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / width;
        std::int64_t j = i % width;
        int k = 0;
        while (j >= x.cols[k]) {
            j -= x.cols[k];
            ++k;
        }
        T* piece = x.p[k];
        if (!backward)
            y[i] = piece[r * x.cols[k] + j];
        else if (piece)
            piece[r * x.cols[k] + j] += y[i];
    }
};

/// Arguments: B, L, d.
template <class T, class X>
void flip_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[1] * c.i[2],
           FlipBody<T>{c.value<T>(1), c.value<T>(0), c.i[1], c.i[2], false});
}
template <class T, class X>
void flip_backward(X& x, const ops::OpCall& c) {
    if (T* dx = c.gradient<T>(0))
        x.each(c.i[0] * c.i[1] * c.i[2], FlipBody<T>{dx, c.gradient<T>(1), c.i[1], c.i[2], true});
}

/// Arguments: rows, cols, begin, count.
template <class T, class X>
void column_slice_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[3],
           ColumnSliceBody<T>{c.value<T>(0), c.value<T>(1), c.i[1], c.i[2], c.i[3], false});
}
template <class T, class X>
void column_slice_backward(X& x, const ops::OpCall& c) {
    if (T* dx = c.gradient<T>(0))
        x.each(c.i[0] * c.i[3],
               ColumnSliceBody<T>{dx, c.gradient<T>(1), c.i[1], c.i[2], c.i[3], true});
}

/// Arguments: rows, total_cols, K, cols_0 … cols_K−1.
template <class T>
Pieces<T> concat_pieces(const ops::OpCall& c, bool gradients) {
    Pieces<T> p{};
    p.K = static_cast<int>(c.i[2]);
    for (int k = 0; k < p.K; ++k) {
        p.p[k] = gradients ? c.gradient<T>(k) : c.value<T>(k);
        p.cols[k] = c.i[static_cast<std::size_t>(3 + k)];
    }
    return p;
}
template <class T, class X>
void column_concat_forward(X& x, const ops::OpCall& c) {
    const int K = static_cast<int>(c.i[2]);
    x.each(c.i[0] * c.i[1],
           ColumnConcatBody<T>{concat_pieces<T>(c, false), c.value<T>(K), c.i[1], false});
}
template <class T, class X>
void column_concat_backward(X& x, const ops::OpCall& c) {
    const int K = static_cast<int>(c.i[2]);
    x.each(c.i[0] * c.i[1],
           ColumnConcatBody<T>{concat_pieces<T>(c, true), c.gradient<T>(K), c.i[1], true});
}

}  // namespace routescope::cuda::kernels
