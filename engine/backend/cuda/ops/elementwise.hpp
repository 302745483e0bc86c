#pragma once
// CUDA backend ops, elementwise (exec.hpp says how an op is written): gelu_tanh, gelu_erf, tanh,
// sigmoid, add, mul and dropout. One index per element; the element math is the CPU's
// (engine/ops/element_math.hpp), the dropout mask the engine's Philox stream (core/philox.hpp),
// so a mask is bit-identical to the CPU's for the same seed, step, stream and offset.
//
// Operands as engine/ops/op_defs.cpp lays them out: unary x = 0, y = 1; binary a = 0, b = 1,
// y = 2. Backwards accumulate (+=) into the input gradients that are not null.
#include <cstdint>
#include <string>

#include "engine/backend/cuda/exec.hpp"
#include "engine/core/error.hpp"
#include "engine/core/philox.hpp"
#include "engine/ops/element_math.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

namespace el = ops::element;

// ---------------------------------------------------------------- bodies
enum class Unary : std::uint8_t { gelu_tanh, gelu_erf, tanh, sigmoid };

/// y = f(x)
template <class T, Unary F>
struct UnaryForward {
    T* y;
    const T* x;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        if constexpr (F == Unary::gelu_tanh) y[i] = el::gelu_tanh(x[i]);
        if constexpr (F == Unary::gelu_erf) y[i] = el::gelu_erf(x[i]);
        if constexpr (F == Unary::tanh) y[i] = std::tanh(x[i]);
        if constexpr (F == Unary::sigmoid) y[i] = el::sigmoid(x[i]);
    }
};

/// dx += dy·f′, with f′ from x (GELUs) or from y (tanh: 1 − y², sigmoid: y(1 − y)).
template <class T, Unary F>
struct UnaryBackward {
    T* dx;
    const T* dy;
    const T* x;
    const T* y;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        if constexpr (F == Unary::gelu_tanh) dx[i] += dy[i] * el::gelu_tanh_grad(x[i]);
        if constexpr (F == Unary::gelu_erf) dx[i] += dy[i] * el::gelu_erf_grad(x[i]);
        if constexpr (F == Unary::tanh) dx[i] += dy[i] * (T(1) - y[i] * y[i]);
        if constexpr (F == Unary::sigmoid) dx[i] += dy[i] * (y[i] * (T(1) - y[i]));
    }
};

template <class T>
struct AddForward {
    T* y;
    const T* a;
    const T* b;
    ROUTESCOPE_HD void operator()(std::int64_t i) const { y[i] = a[i] + b[i]; }
};
template <class T>
struct MulForward {
    T* y;
    const T* a;
    const T* b;
    ROUTESCOPE_HD void operator()(std::int64_t i) const { y[i] = a[i] * b[i]; }
};
/// da += dy·(b or 1), db += dy·(a or 1): mul when a and b are given, add when they are null.
template <class T>
struct BinaryBackward {
    T* da;
    T* db;
    const T* dy;
    const T* a;
    const T* b;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const T g = dy[i];
        if (da) da[i] += b ? g * b[i] : g;
        if (db) db[i] += a ? g * a[i] : g;
    }
};

/// Inverted dropout, the mask recomputed from Philox: out = x·m/(1 − p) (forward: out = y,
/// accumulate = false) or dx += dy·m/(1 − p) (backward: accumulate = true).
template <class T>
struct DropoutBody {
    T* out;
    const T* in;
    float p;
    std::uint64_t seed;
    std::uint32_t step, stream;
    std::uint64_t offset;
    bool accumulate;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const float scale = 1.0f / (1.0f - p);
        const std::uint32_t bits =
            philox_bits(seed, step, stream, offset + static_cast<std::uint64_t>(i));
        const float m = uniform_from_bits(bits) >= p ? scale : 0.0f;
        const T v = in[i] * T(m);
        if (accumulate)
            out[i] += v;
        else
            out[i] = v;
    }
};

// ---------------------------------------------------------------- ops
template <class T, Unary F, class X>
void unary_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0], UnaryForward<T, F>{c.value<T>(1), c.value<T>(0)});
}
template <class T, Unary F, class X>
void unary_backward(X& x, const ops::OpCall& c) {
    if (!c.gradient<T>(0)) return;
    x.each(c.i[0],
           UnaryBackward<T, F>{c.gradient<T>(0), c.gradient<T>(1), c.value<T>(0), c.value<T>(1)});
}

template <class T, class X>
void add_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0], AddForward<T>{c.value<T>(2), c.value<T>(0), c.value<T>(1)});
}
template <class T, class X>
void add_backward(X& x, const ops::OpCall& c) {
    if (!c.gradient<T>(0) && !c.gradient<T>(1)) return;
    x.each(c.i[0], BinaryBackward<T>{c.gradient<T>(0), c.gradient<T>(1), c.gradient<T>(2), nullptr,
                                     nullptr});
}
template <class T, class X>
void mul_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0], MulForward<T>{c.value<T>(2), c.value<T>(0), c.value<T>(1)});
}
template <class T, class X>
void mul_backward(X& x, const ops::OpCall& c) {
    if (!c.gradient<T>(0) && !c.gradient<T>(1)) return;
    x.each(c.i[0], BinaryBackward<T>{c.gradient<T>(0), c.gradient<T>(1), c.gradient<T>(2),
                                     c.value<T>(0), c.value<T>(1)});
}

/// Arguments: n, step, stream, offset; p = c.f, seed = c.seed.
template <class T>
DropoutBody<T> dropout_body(const ops::OpCall& c, T* out, const T* in, bool accumulate) {
    const auto p = static_cast<float>(c.f);
    if (!(p >= 0.0f && p < 1.0f))
        throw Error("dropout: probability " + std::to_string(p) + " is outside [0, 1)");
    return {out,
            in,
            p,
            c.seed,
            static_cast<std::uint32_t>(c.i[1]),
            static_cast<std::uint32_t>(c.i[2]),
            static_cast<std::uint64_t>(c.i[3]),
            accumulate};
}
template <class T, class X>
void dropout_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0], dropout_body<T>(c, c.value<T>(1), c.value<T>(0), false));
}
template <class T, class X>
void dropout_backward(X& x, const ops::OpCall& c) {
    if (!c.gradient<T>(0)) return;
    x.each(c.i[0], dropout_body<T>(c, c.gradient<T>(0), c.gradient<T>(1), true));
}

}  // namespace routescope::cuda::kernels
