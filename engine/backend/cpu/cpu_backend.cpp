#include "engine/backend/cpu/cpu_backend.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "engine/core/error.hpp"
#include "engine/io/half.hpp"
#include "engine/ops/attention.hpp"
#include "engine/ops/column_concat.hpp"
#include "engine/ops/column_slice.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/element_math.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/fft_conv.hpp"
#include "engine/ops/first_token.hpp"
#include "engine/ops/flip.hpp"
#include "engine/ops/gate_softmax.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/layernorm.hpp"
#include "engine/ops/linear_scan.hpp"
#include "engine/ops/mean_pool.hpp"
#include "engine/ops/neighbour_shift.hpp"
#include "engine/ops/row_readout.hpp"
#include "engine/ops/s4d_kernel.hpp"
#include "engine/ops/sequence_broadcast.hpp"
#include "engine/ops/sequence_softmax.hpp"
#include "engine/ops/sigmoid.hpp"
#include "engine/ops/spatial_mix.hpp"
#include "engine/ops/tanh.hpp"
#include "engine/ops/weighted_sequence_sum.hpp"

namespace routescope {

using ops::OpCall;
using ops::OpId;

struct CpuBackend::FftEntry {
    std::int64_t B, L, d, H;
    DType real;
    std::unique_ptr<ops::FftConvWorkspace<float>> f32;
    std::unique_ptr<ops::FftConvWorkspace<double>> f64;
};

CpuBackend::CpuBackend(ThreadPool& pool) : pool_(pool) {}
CpuBackend::~CpuBackend() = default;

bool CpuBackend::supports(OpId op, DType real) const {
    return static_cast<int>(op) < ops::kOpCount && (real == DType::f32 || real == DType::f64);
}

void* CpuBackend::allocate(std::size_t bytes) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!p) throw std::bad_alloc();
    return p;
}
void CpuBackend::release(void* p) noexcept {
    std::free(p);
}
void CpuBackend::zero(void* p, std::size_t bytes) {
    if (p && bytes) std::memset(p, 0, bytes);
}
void CpuBackend::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) {
    if (bytes) std::memmove(dst, src, bytes);
    count_copy(bytes, kind);
}

// ---------------------------------------------------------------- workspaces
template <class T>
T* CpuBackend::attention_scratch(int L) {
    auto& buf = [this]() -> std::vector<T>& {
        if constexpr (std::is_same_v<T, float>)
            return attention_scratch_f32_;
        else
            return attention_scratch_f64_;
    }();
    const auto need = static_cast<std::size_t>(ops::attention_backward_scratch_size(L, pool_));
    if (buf.size() < need) buf.resize(need);
    return buf.data();
}

template <class T>
void* CpuBackend::fft_workspace(const OpCall& c) {
    const auto* s = c.i.data();
    constexpr DType real = std::is_same_v<T, float> ? DType::f32 : DType::f64;
    for (auto& e : fft_)
        if (e->B == s[0] && e->L == s[1] && e->d == s[2] && e->H == s[3] && e->real == real)
            return real == DType::f32 ? static_cast<void*>(e->f32.get())
                                      : static_cast<void*>(e->f64.get());
    auto e = std::make_unique<FftEntry>(FftEntry{s[0], s[1], s[2], s[3], real, nullptr, nullptr});
    const int B = static_cast<int>(s[0]), L = static_cast<int>(s[1]), d = static_cast<int>(s[2]),
              H = static_cast<int>(s[3]);
    if constexpr (std::is_same_v<T, float>)
        e->f32 = std::make_unique<ops::FftConvWorkspace<float>>(B, L, d, H, pool_.size());
    else
        e->f64 = std::make_unique<ops::FftConvWorkspace<double>>(B, L, d, H, pool_.size());
    fft_.push_back(std::move(e));
    return fft_workspace<T>(c);
}

void CpuBackend::prepare(const OpCall& c) {
    const DType real = ops::call_real_type(c);
    if (c.op == OpId::fft_conv)
        real == DType::f64 ? (void)fft_workspace<double>(c) : (void)fft_workspace<float>(c);
    if (c.op == OpId::attention)
        real == DType::f64 ? (void)attention_scratch<double>(static_cast<int>(c.i[1]))
                           : (void)attention_scratch<float>(static_cast<int>(c.i[1]));
}

void CpuBackend::forward(const OpCall& c) {
    ops::call_real_type(c) == DType::f64 ? forward_as<double>(c) : forward_as<float>(c);
}
void CpuBackend::backward(const OpCall& c) {
    ops::call_real_type(c) == DType::f64 ? backward_as<double>(c) : backward_as<float>(c);
}

// ---------------------------------------------------------------- the ops
// Operand numbers follow the layouts of engine/ops/op_defs.cpp: inputs, outputs, saved.
namespace {
ops::DropoutSite dropout_site(const OpCall& c) {
    return {static_cast<float>(c.f), c.seed, static_cast<std::uint32_t>(c.i[1]),
            static_cast<std::uint32_t>(c.i[2]), static_cast<std::uint64_t>(c.i[3])};
}
int n32(std::int64_t v) {
    return static_cast<int>(v);
}
}  // namespace

template <class T>
void CpuBackend::forward_as(const OpCall& c) {
    ThreadPool& P = pool_;
    const auto* s = c.i.data();
    const auto v = [&c](int k) { return c.value<T>(k); };
    const auto id = [&c](int k) { return c.value<std::int32_t>(k); };
    const int B = n32(s[0]), L = n32(s[1]), d = n32(s[2]);
    switch (c.op) {
        case OpId::dense:
            return ops::dense_forward(v(3), v(0), v(1), v(2), s[0], L, d, P);
        case OpId::embedding:
            return ops::embedding_forward(v(2), id(0), v(1), s[0], n32(s[2]), L, P);
        case OpId::layernorm:
            return ops::layernorm_forward(v(3), v(4), v(5), v(0), v(1), v(2), s[0], L,
                                          static_cast<T>(c.f), P);
        case OpId::gelu_tanh:
            return ops::gelu_tanh_forward(v(1), v(0), s[0], P);
        case OpId::gelu_erf:
            return ops::gelu_erf_forward(v(1), v(0), s[0], P);
        case OpId::tanh:
            return ops::tanh_forward(v(1), v(0), s[0], P);
        case OpId::sigmoid:
            return ops::sigmoid_forward(v(1), v(0), s[0], P);
        case OpId::add:
            return ops::add_forward(v(2), v(0), v(1), s[0], P);
        case OpId::mul:
            return ops::mul_forward(v(2), v(0), v(1), s[0], P);
        case OpId::flip:
            return ops::flip_forward(v(1), v(0), B, L, d, P);
        case OpId::dropout:
            return ops::dropout_forward(v(1), v(0), s[0], dropout_site(c), P);
        case OpId::s4d_kernel:
            return ops::s4d_kernel_forward(v(4), v(0), v(1), v(2), v(3), B, L, d, P);
        case OpId::fft_conv:
            return ops::fft_conv_forward(
                v(3), v(0), v(1), v(2), B, L, d, n32(s[3]),
                *static_cast<ops::FftConvWorkspace<T>*>(fft_workspace<T>(c)), P);
        case OpId::attention:
            return ops::attention_forward(v(4), v(5), v(0), v(1), v(2), id(3), B, L, d, n32(s[3]),
                                          s[4] != 0, P);
        case OpId::spatial_mix:
            return ops::spatial_mix_forward(v(3), v(0), v(1), v(2), B, L, d, n32(s[3]), s[4] != 0,
                                            P);
        case OpId::column_slice:
            return ops::column_slice_forward(v(1), v(0), s[0], L, d, n32(s[3]), P);
        case OpId::column_concat: {
            const int K = d;
            std::array<const T*, ops::kMaxPieces> x{};
            std::array<int, ops::kMaxPieces> cols{};
            for (int k = 0; k < K; ++k) {
                x[static_cast<std::size_t>(k)] = v(k);
                cols[static_cast<std::size_t>(k)] = n32(s[3 + k]);
            }
            return ops::column_concat_forward(v(K), x.data(), cols.data(), K, s[0], P);
        }
        case OpId::mean_pool:
            return ops::mean_pool_forward(v(2), v(0), id(1), B, L, d, P);
        case OpId::first_token:
            return ops::first_token_forward(v(1), v(0), B, L, d, P);
        case OpId::neighbour_shift:
            return ops::neighbour_shift_forward(v(2), v(0), id(1), B, L, d, n32(s[3]), P);
        case OpId::gate_softmax: {
            const int K = B;
            std::array<const T*, ops::kMaxPieces> x{};
            std::array<T*, ops::kMaxPieces> y{};
            for (int k = 0; k < K; ++k) {
                x[static_cast<std::size_t>(k)] = v(k);
                y[static_cast<std::size_t>(k)] = v(K + k);
            }
            return ops::gate_softmax_forward(y.data(), x.data(), K, s[1], P);
        }
        case OpId::sequence_softmax:
            return ops::sequence_softmax_forward(v(3), v(4), v(0), v(1), id(2), B, L, d, P);
        case OpId::weighted_sequence_sum:
            return ops::weighted_sequence_sum_forward(v(3), v(0), v(1), id(2), B, L, d, P);
        case OpId::sequence_broadcast:
            return ops::sequence_broadcast_forward(v(1), v(0), B, L, d, P);
        case OpId::linear_scan: {
            const int N = d, nf = n32(s[3]);
            ops::linear_scan_forward(v(4), v(0), v(1), id(2), B, L, N, 0, nf,
                                     ops::ScanDirection::forward, P);
            return ops::linear_scan_forward(v(4), v(0), v(1), id(3), B, L, N, nf, N,
                                            ops::ScanDirection::reverse, P);
        }
        case OpId::cross_entropy:
            *c.value<double>(2) = ops::cross_entropy_forward(v(3), v(0), id(1), s[0], L, P);
            return;
        case OpId::count:
            break;
    }
    throw Error("CpuBackend: no forward for op " + std::to_string(static_cast<int>(c.op)));
}

template <class T>
void CpuBackend::backward_as(const OpCall& c) {
    ThreadPool& P = pool_;
    const auto* s = c.i.data();
    const auto v = [&c](int k) { return c.value<T>(k); };
    const auto g = [&c](int k) { return c.gradient<T>(k); };
    const auto id = [&c](int k) { return c.value<std::int32_t>(k); };
    const int B = n32(s[0]), L = n32(s[1]), d = n32(s[2]);
    switch (c.op) {
        case OpId::dense:
            return ops::dense_backward(g(0), g(1), g(2), g(3), v(0), v(1), s[0], L, d, P);
        case OpId::embedding:
            if (!g(1)) return;
            return ops::embedding_backward(g(1), g(2), id(0), s[0], n32(s[2]), L, P);
        case OpId::layernorm:
            return ops::layernorm_backward(g(0), g(1), g(2), g(3), v(0), v(1), v(4), v(5), s[0], L,
                                           P);
        case OpId::gelu_tanh:
            return ops::gelu_tanh_backward(g(0), g(1), v(0), s[0], P);
        case OpId::gelu_erf:
            return ops::gelu_erf_backward(g(0), g(1), v(0), s[0], P);
        case OpId::tanh:
            return ops::tanh_backward(g(0), g(1), v(1), s[0], P);
        case OpId::sigmoid:
            return ops::sigmoid_backward(g(0), g(1), v(1), s[0], P);
        case OpId::add:
            return ops::add_backward(g(0), g(1), g(2), s[0], P);
        case OpId::mul:
            return ops::mul_backward(g(0), g(1), g(2), v(0), v(1), s[0], P);
        case OpId::flip:
            return ops::flip_backward(g(0), g(1), B, L, d, P);
        case OpId::dropout:
            return ops::dropout_backward(g(0), g(1), s[0], dropout_site(c), P);
        case OpId::s4d_kernel:
            return ops::s4d_kernel_backward(g(0), g(1), g(2), g(3), g(4), v(0), v(1), v(2), v(3), B,
                                            L, d, c.value<double>(5), P);
        case OpId::fft_conv:
            return ops::fft_conv_backward(
                g(0), g(1), g(2), g(3), v(0), v(1), v(2), B, L, d, n32(s[3]),
                *static_cast<ops::FftConvWorkspace<T>*>(fft_workspace<T>(c)), P);
        case OpId::attention:
            return ops::attention_backward(g(0), g(1), g(2), attention_scratch<T>(L), g(4), v(5),
                                           v(0), v(1), v(2), id(3), B, L, d, n32(s[3]), s[4] != 0,
                                           P);
        case OpId::spatial_mix:
            return ops::spatial_mix_backward(g(0), g(1), g(2), g(3), v(0), v(1), B, L, d, n32(s[3]),
                                             s[4] != 0, P);
        case OpId::column_slice:
            return ops::column_slice_backward(g(0), g(1), s[0], L, d, n32(s[3]), P);
        case OpId::column_concat: {
            const int K = d;
            std::array<T*, ops::kMaxPieces> dx{};
            std::array<int, ops::kMaxPieces> cols{};
            for (int k = 0; k < K; ++k) {
                dx[static_cast<std::size_t>(k)] = g(k);
                cols[static_cast<std::size_t>(k)] = n32(s[3 + k]);
            }
            return ops::column_concat_backward(dx.data(), g(K), cols.data(), K, s[0], P);
        }
        case OpId::mean_pool:
            return ops::mean_pool_backward(g(0), g(2), id(1), B, L, d, P);
        case OpId::first_token:
            return ops::first_token_backward(g(0), g(1), B, L, d, P);
        case OpId::neighbour_shift:
            return ops::neighbour_shift_backward(g(0), g(2), id(1), B, L, d, n32(s[3]), P);
        case OpId::gate_softmax: {
            const int K = B;
            std::array<T*, ops::kMaxPieces> dx{};
            std::array<const T*, ops::kMaxPieces> dy{}, y{};
            for (int k = 0; k < K; ++k) {
                dx[static_cast<std::size_t>(k)] = g(k);
                dy[static_cast<std::size_t>(k)] = g(K + k);
                y[static_cast<std::size_t>(k)] = v(K + k);
            }
            return ops::gate_softmax_backward(dx.data(), dy.data(), y.data(), K, s[1], P);
        }
        case OpId::sequence_softmax:
            return ops::sequence_softmax_backward(g(0), g(1), g(3), g(4), v(3), v(4), id(2), B, L,
                                                  d, P);
        case OpId::weighted_sequence_sum:
            return ops::weighted_sequence_sum_backward(g(0), g(1), g(3), v(0), v(1), id(2), B, L, d,
                                                       P);
        case OpId::sequence_broadcast:
            return ops::sequence_broadcast_backward(g(0), g(1), B, L, d, P);
        case OpId::linear_scan: {
            const int N = d, nf = n32(s[3]);
            ops::linear_scan_backward(g(0), g(1), g(4), v(4), v(0), id(2), B, L, N, 0, nf,
                                      ops::ScanDirection::forward, P);
            return ops::linear_scan_backward(g(0), g(1), g(4), v(4), v(0), id(3), B, L, N, nf, N,
                                             ops::ScanDirection::reverse, P);
        }
        case OpId::cross_entropy:
            // The loss is the graph's output: ∂loss/∂loss = 1 (or the tape's seed in grad[2]).
            return ops::cross_entropy_backward(
                g(0), v(0), v(3), id(1), s[0], L,
                c.grad[2] ? static_cast<T>(*c.gradient<double>(2)) : T(1), P);
        case OpId::count:
            break;
    }
    throw Error("CpuBackend: no backward for op " + std::to_string(static_cast<int>(c.op)));
}

// ---------------------------------------------------------------- flat buffers
double CpuBackend::sum_squares(const float* x, std::size_t n) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
        sum += static_cast<double>(x[i]) * x[i];
    return sum;
}

void CpuBackend::scale(float* x, float a, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        x[i] *= a;
}

void CpuBackend::adamw(const AdamWSpan& s) {
    const ops::element::AdamWCoefficients c = adamw_coefficients(s);
    float *p = s.params, *m = s.m, *v = s.v;
    const float* g = s.grads;
    pool_.parallel_for(static_cast<std::int64_t>(s.n), 4096, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
            ops::element::adamw_element(p[i], g[i], m[i], v[i], c);
    });
}

void CpuBackend::row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                             std::int64_t width, std::int32_t* argmax, double* nll) {
    ops::row_readout(logits, targets, rows, width, argmax, nll, pool_);
}

// F16C, 8 values an instruction (engine/io/half.cpp), on the pool's threads: the bits of half_bits.
void CpuBackend::to_half(const float* x, std::uint16_t* out, std::size_t n) {
    constexpr std::int64_t kBlock = 1 << 16;
    const auto blocks = static_cast<std::int64_t>((n + kBlock - 1) / kBlock);
    pool_.parallel_for(blocks, [&](std::int64_t s, std::int64_t e) {
        const auto begin = static_cast<std::size_t>(s * kBlock);
        const auto end = std::min(n, static_cast<std::size_t>(e * kBlock));
        routescope::to_half(x + begin, end - begin, out + begin);
    });
}

}  // namespace routescope
