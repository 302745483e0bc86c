#include "engine/backend/op_specs.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "engine/core/error.hpp"

namespace routescope {

using ops::OpId;

namespace {

OpSpec make(OpId op, std::vector<std::int64_t> args, double f = 0, std::uint64_t seed = 0) {
    OpSpec s{op, std::move(args), f, seed, {}};
    const std::string names = ops::op_def(op).args;
    std::size_t pos = 0;
    for (std::size_t k = 0; k < s.args.size(); ++k) {
        const std::size_t comma = names.find(", ", pos);
        std::string name = names.substr(pos, comma == std::string::npos ? comma : comma - pos);
        if (name.find("...") != std::string::npos || name.find("cols_") == 0) name = "cols";
        if (!s.label.empty()) s.label += ", ";
        s.label += name + "=" + std::to_string(s.args[k]);
        if (comma != std::string::npos) pos = comma + 2;
    }
    return s;
}

// Tiny and odd: every element is perturbed twice by the finite-difference check.
std::vector<OpSpec> tiny(OpId op) {
    switch (op) {
        case OpId::dense:
            return {make(op, {7, 5, 3})};
        case OpId::embedding:
            return {make(op, {9, 4, 6})};
        case OpId::layernorm:
            return {make(op, {5, 7}, 1e-5)};
        case OpId::gelu_tanh:
        case OpId::gelu_erf:
        case OpId::tanh:
        case OpId::sigmoid:
            return {make(op, {13})};
        case OpId::add:
        case OpId::mul:
            return {make(op, {11})};
        case OpId::flip:
            return {make(op, {2, 5, 3})};
        case OpId::dropout:
            return {make(op, {17, 3, 1, 0}, 0.3, 42), make(op, {17, 3, 1, 1021}, 0.3, 42)};
        case OpId::s4d_kernel:
            return {make(op, {2, 3, 7})};
        case OpId::fft_conv:
            return {make(op, {2, 7, 4, 2})};
        case OpId::attention:
            return {make(op, {2, 5, 6, 2, 0}), make(op, {2, 5, 6, 2, 1})};
        case OpId::spatial_mix:
            return {make(op, {2, 5, 3, 6, 0}), make(op, {2, 5, 3, 6, 1})};
        case OpId::column_slice:
            return {make(op, {4, 7, 2, 3})};
        case OpId::column_concat:
            return {make(op, {3, 7, 3, 2, 4, 1})};
        case OpId::mean_pool:
        case OpId::first_token:
        case OpId::sequence_softmax:
        case OpId::weighted_sequence_sum:
        case OpId::sequence_broadcast:
            return {make(op, {2, 5, 3})};
        case OpId::neighbour_shift:
            return {make(op, {2, 5, 3, -1}), make(op, {2, 5, 3, 1})};
        case OpId::gate_softmax:
            return {make(op, {3, 7})};
        case OpId::linear_scan:
            return {make(op, {2, 6, 4, 2})};
        case OpId::cross_entropy:
            return {make(op, {5, 7})};
        case OpId::count:
            break;
    }
    return {};
}

// Prime sizes, a few hundred to a few thousand elements: partial blocks on a GPU, rows longer than
// a warp, more heads and channels than the tiny specs.
std::vector<OpSpec> odd(OpId op) {
    switch (op) {
        case OpId::dense:
            return {make(op, {37, 29, 41})};
        case OpId::embedding:
            return {make(op, {211, 19, 53})};
        case OpId::layernorm:
            return {make(op, {43, 131}, 1e-5)};
        case OpId::gelu_tanh:
        case OpId::gelu_erf:
        case OpId::tanh:
        case OpId::sigmoid:
        case OpId::add:
        case OpId::mul:
            return {make(op, {4099})};
        case OpId::flip:
            return {make(op, {3, 37, 11})};
        case OpId::dropout:
            return {make(op, {4099, 7, 2, 13}, 0.1, 7)};
        case OpId::s4d_kernel:
            return {make(op, {5, 16, 67})};
        case OpId::fft_conv:
            // The last: one kernel for 24 channels (H = 1, the models' default) over 3 sequences,
            // 72 rows per kernel: the kernel gradient's correlation sums them in 3 chunks.
            return {make(op, {3, 37, 10, 5}), make(op, {2, 33, 7, 1}), make(op, {3, 17, 24, 1})};
        case OpId::attention:
            return {make(op, {3, 19, 24, 3, 0}), make(op, {3, 19, 24, 3, 1})};
        case OpId::spatial_mix:
            return {make(op, {3, 23, 13, 29, 0}), make(op, {2, 29, 11, 29, 1})};
        case OpId::column_slice:
            return {make(op, {37, 29, 5, 17})};
        case OpId::column_concat:
            return {make(op, {41, 40, 5, 7, 3, 11, 13, 6})};
        case OpId::mean_pool:
        case OpId::first_token:
        case OpId::sequence_softmax:
        case OpId::weighted_sequence_sum:
        case OpId::sequence_broadcast:
            return {make(op, {3, 37, 19})};
        case OpId::neighbour_shift:
            return {make(op, {3, 37, 19, -1}), make(op, {3, 37, 19, 1})};
        case OpId::gate_softmax:
            return {make(op, {5, 1031})};
        case OpId::linear_scan:
            // The second: one sequence of 131 steps, 5 channels (the CUDA backend's chunked
            // scan: 5 chunks, the last partial, cut carries inside chunks).
            return {make(op, {3, 41, 13, 5}), make(op, {1, 131, 5, 2})};
        case OpId::cross_entropy:
            return {make(op, {37, 263})};
        case OpId::count:
            break;
    }
    return {};
}

// The sizes of a bigs-small step: B = 8, L = 512, d = 256, inner 1024, V = 8000, one SSM kernel
// (H = 1, N = 64), and one kernel per channel (H = d) beside it.
std::vector<OpSpec> bench(OpId op) {
    constexpr std::int64_t B = 8, L = 512, d = 256, I = 1024, rows = B * L;
    switch (op) {
        case OpId::dense:
            return {make(op, {rows, d, I}), make(op, {rows, I, d})};
        case OpId::embedding:
            return {make(op, {rows, d, 8000})};
        case OpId::layernorm:
            return {make(op, {rows, d}, 1e-5)};
        case OpId::gelu_tanh:
        case OpId::gelu_erf:
        case OpId::tanh:
        case OpId::sigmoid:
        case OpId::add:
        case OpId::mul:
            return {make(op, {rows * I})};
        case OpId::flip:
            return {make(op, {B, L, d})};
        case OpId::dropout:
            return {make(op, {rows * d, 3, 1, 0}, 0.1, 42)};
        case OpId::s4d_kernel:
            return {make(op, {d, 64, L})};
        case OpId::fft_conv:
            return {make(op, {B, L, d, d}), make(op, {B, L, d, 1})};  // a kernel per channel; one
        case OpId::attention:
            return {make(op, {B, L, d, 4, 0}), make(op, {B, L, d, 4, 1})};
        case OpId::spatial_mix:
            return {make(op, {B, L, I / 2, L, 0})};
        case OpId::column_slice:
            return {make(op, {rows, I, I / 2, I / 2})};
        case OpId::column_concat:
            return {make(op, {rows, 4 * d, 4, d, d, d, d})};
        case OpId::mean_pool:
        case OpId::first_token:
        case OpId::sequence_softmax:
        case OpId::weighted_sequence_sum:
        case OpId::sequence_broadcast:
            return {make(op, {B, L, d})};
        case OpId::neighbour_shift:
            return {make(op, {B, L, d, -1})};
        case OpId::gate_softmax:
            return {make(op, {5, rows * d})};
        case OpId::linear_scan:
            // And Birdie at batch 1 and a long sequence (B·N small, L long: the chunked scan).
            return {make(op, {B, L, 2 * d, d}), make(op, {1, 8192, 2 * d, d})};
        case OpId::cross_entropy:
            return {make(op, {rows, 8000})};
        case OpId::count:
            break;
    }
    return {};
}

// Element e of input `name` (see the header for the domains).
double input_value(const ops::OpCall& c, const ops::OperandSpec& s, std::int64_t e,
                   std::mt19937_64& gen) {
    const std::string name = s.name;
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    if (s.role == ops::Role::data) {
        if (name == "ids") return static_cast<double>(gen() % static_cast<std::uint64_t>(c.i[2]));
        if (name == "lengths")
            return static_cast<double>(std::max<std::int64_t>(1, c.i[1] - 2 * e));
        if (name == "targets")
            return e % 4 == 3 ? -100.0
                              : static_cast<double>(gen() % static_cast<std::uint64_t>(c.i[1]));
        throw Error("op_specs: no generator for data input '" + name + "'");
    }
    if (s.role == ops::Role::optional_data) return e % 4 == 2 ? 0.0 : 1.0;  // keep masks
    if (name == "A_re") return -0.1 - 0.9 * u01(gen);
    if (name == "log_step") return std::log(1e-3) + u01(gen) * (std::log(1e-1) - std::log(1e-3));
    if (c.op == OpId::linear_scan && name == "f") return 0.3 + 0.65 * u01(gen);
    return std::normal_distribution<double>(0.0, 1.0)(gen);
}

void to_bytes(const std::vector<double>& v, DType t, std::vector<unsigned char>& out) {
    out.resize(v.size() * dtype_size(t));
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (t == DType::f64) {
            std::memcpy(out.data() + 8 * i, &v[i], 8);
        } else if (t == DType::f32) {
            const auto x = static_cast<float>(v[i]);
            std::memcpy(out.data() + 4 * i, &x, 4);
        } else {
            const auto x = static_cast<std::int32_t>(v[i]);
            std::memcpy(out.data() + 4 * i, &x, 4);
        }
    }
}

std::vector<double> from_bytes(const unsigned char* p, std::size_t n, DType t) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (t == DType::f64) {
            std::memcpy(&v[i], p + 8 * i, 8);
        } else if (t == DType::f32) {
            float x;
            std::memcpy(&x, p + 4 * i, 4);
            v[i] = x;
        } else {
            std::int32_t x;
            std::memcpy(&x, p + 4 * i, 4);
            v[i] = x;
        }
    }
    return v;
}

}  // namespace

std::vector<OpSpec> op_specs(OpId op, SpecSize size) {
    if (size == SpecSize::odd) return odd(op);
    return size == SpecSize::tiny ? tiny(op) : bench(op);
}

OpTolerance op_tolerance(OpId op) {
    // float32 against float32: different summation orders (GEMM tiling, FFT against direct sums,
    // exp/tanh implementations) give relative errors of a few ulp per term. Reductions over long
    // rows and the FFT convolution get more headroom; the S4D kernel is computed in double.
    switch (op) {
        case OpId::dense:
        case OpId::attention:
        case OpId::spatial_mix:
            return {1e-10, 1e-4};
        case OpId::fft_conv:
            return {1e-9, 5e-4};
        case OpId::s4d_kernel:
            return {1e-10, 1e-4};
        case OpId::layernorm:
        case OpId::cross_entropy:
        case OpId::linear_scan:
        case OpId::sequence_softmax:
        case OpId::weighted_sequence_sum:
        case OpId::mean_pool:
        case OpId::gate_softmax:
            return {1e-11, 5e-5};
        case OpId::gelu_tanh:
        case OpId::gelu_erf:
        case OpId::tanh:
        case OpId::sigmoid:
            return {1e-12, 1e-5};
        case OpId::embedding:
        case OpId::add:
        case OpId::mul:
        case OpId::flip:
        case OpId::dropout:
        case OpId::column_slice:
        case OpId::column_concat:
        case OpId::first_token:
        case OpId::neighbour_shift:
        case OpId::sequence_broadcast:
            return {1e-13, 1e-6};
        case OpId::count:
            break;
    }
    throw Error("op_tolerance: no tolerance for op " + std::to_string(static_cast<int>(op)));
}

OpTolerance op_tolerance(OpId op, Precision p) {
    switch (p) {
        case Precision::fp32:
            return op_tolerance(op);
        case Precision::tf32:
            if (op == OpId::dense || op == OpId::attention || op == OpId::spatial_mix)
                return {1e-5, 2e-2};
            return op_tolerance(op);
        case Precision::bf16_mixed:
            if (op == OpId::dense || op == OpId::attention || op == OpId::spatial_mix)
                return {2e-4, 8e-2};
            return op_tolerance(op);
    }
    throw Error(std::string("op_tolerance: no tolerance table for precision ") + precision_name(p));
}

std::string agreement_text(const Agreement& a, const OpTolerance& t) {
    std::ostringstream out;
    out << a.what << ": nmse " << a.nmse << " (tolerance " << t.nmse << "), max |Δ| " << a.max_abs
        << " (tolerance " << t.max_abs << " × scale " << a.scale << ")";
    return out.str();
}

Agreement compare_values(std::string what, const std::vector<double>& got,
                         const std::vector<double>& want) {
    Agreement a;
    a.what = std::move(what);
    if (got.size() != want.size()) {
        a.nmse = a.max_abs = std::numeric_limits<double>::infinity();
        return a;
    }
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double d = got[i] - want[i];
        // NaN on either side only where both are NaN (an ignored row's read-out).
        if (std::isnan(got[i]) || std::isnan(want[i])) {
            if (std::isnan(got[i]) && std::isnan(want[i])) continue;
            a.nmse = a.max_abs = std::numeric_limits<double>::infinity();
            a.worst = static_cast<std::int64_t>(i);
            return a;
        }
        err += d * d;
        norm += want[i] * want[i];
        if (std::fabs(d) > a.max_abs) {
            a.max_abs = std::fabs(d);
            a.worst = static_cast<std::int64_t>(i);
        }
    }
    a.nmse = norm > 0 ? err / norm : err;
    a.scale =
        want.empty() ? 1.0 : std::max(1.0, std::sqrt(norm / static_cast<double>(want.size())));
    return a;
}

std::vector<Agreement> conformance_run(const OpSpec& spec, Backend& reference, Backend& other,
                                       std::uint64_t seed) {
    OpInstance want(spec, DType::f32, reference, seed);
    OpInstance got(spec, DType::f32, other, seed);
    const ops::Layout& l = want.layout();
    std::vector<Agreement> out;
    reference.forward(want.call());
    other.forward(got.call());
    for (int k = 0; k < l.size(); ++k) {
        const bool loss = l[k].role == ops::Role::saved && std::string(l[k].name) == "loss";
        if (l[k].role == ops::Role::output || loss)
            out.push_back(compare_values(std::string(loss ? "loss " : "output ") + l[k].name,
                                         got.values(k), want.values(k)));
    }
    std::mt19937_64 gen(seed + 1);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int k = 0; k < l.size(); ++k) {
        const bool input = l[k].role == ops::Role::input || l[k].role == ops::Role::optional;
        if (l[k].role != ops::Role::output && !input) continue;
        std::vector<double> g(static_cast<std::size_t>(l[k].numel));
        for (double& x : g)
            x = input ? 0.25 * normal(gen) : normal(gen);  // prefilled: backward accumulates
        want.set_gradient(k, g);
        got.set_gradient(k, g);
    }
    reference.backward(want.call());
    other.backward(got.call());
    for (int k = 0; k < l.size(); ++k)
        if (l[k].role == ops::Role::input || l[k].role == ops::Role::optional)
            out.push_back(compare_values(std::string("gradient of ") + l[k].name, got.gradient(k),
                                         want.gradient(k)));
    return out;
}

OpInstance::OpInstance(const OpSpec& spec, DType real, Backend& backend, std::uint64_t seed)
    : backend_(backend), layout_(real) {
    call_.op = spec.op;
    for (std::size_t k = 0; k < spec.args.size(); ++k)
        call_.i[k] = spec.args[k];
    call_.f = spec.f;
    call_.seed = spec.seed;
    ops::op_def(spec.op).layout(call_, layout_);
    std::mt19937_64 gen(seed);
    for (int k = 0; k < layout_.size(); ++k) {
        const ops::OperandSpec& s = layout_[k];
        const auto uk = static_cast<std::size_t>(k);
        Tensor& t = call_.t[uk];
        t.shape = s.shape;
        t.rank = s.rank;
        t.dtype = s.dtype;
        t.device = backend.device();
        const std::size_t bytes = static_cast<std::size_t>(s.numel) * dtype_size(s.dtype);
        t.data = backend.allocate(bytes);
        memory_.push_back(t.data);
        backend.zero(t.data, bytes);
        if (s.dtype != DType::i32 && s.role != ops::Role::saved) {
            call_.grad[uk] = backend.allocate(bytes);
            memory_.push_back(call_.grad[uk]);
            backend.zero(call_.grad[uk], bytes);
        }
        const bool input = s.role != ops::Role::output && s.role != ops::Role::saved;
        if (input) {
            std::vector<double> v(static_cast<std::size_t>(s.numel));
            for (std::int64_t e = 0; e < s.numel; ++e)
                v[static_cast<std::size_t>(e)] = input_value(call_, s, e, gen);
            set_values(k, v);
            ++call_.n_inputs;
        }
    }
    call_.n_operands = static_cast<std::uint8_t>(layout_.size());
    ops::check_call(call_);
    backend.prepare(call_);
}

OpInstance::~OpInstance() {
    for (void* p : memory_)
        backend_.release(p);
}

std::vector<double> OpInstance::values(int k) const {
    const Tensor& t = call_.t[static_cast<std::size_t>(k)];
    std::vector<unsigned char> host(t.bytes());
    backend_.copy(host.data(), t.data, host.size(), Backend::CopyKind::device_to_host);
    return from_bytes(host.data(), static_cast<std::size_t>(t.numel()), t.dtype);
}

std::vector<double> OpInstance::gradient(int k) const {
    const Tensor& t = call_.t[static_cast<std::size_t>(k)];
    std::vector<unsigned char> host(t.bytes());
    backend_.copy(host.data(), call_.grad[static_cast<std::size_t>(k)], host.size(),
                  Backend::CopyKind::device_to_host);
    return from_bytes(host.data(), static_cast<std::size_t>(t.numel()), t.dtype);
}

void OpInstance::set_values(int k, const std::vector<double>& v) {
    const Tensor& t = call_.t[static_cast<std::size_t>(k)];
    std::vector<unsigned char> host;
    to_bytes(v, t.dtype, host);
    backend_.copy(t.data, host.data(), host.size(), Backend::CopyKind::host_to_device);
}

void OpInstance::set_gradient(int k, const std::vector<double>& g) {
    const Tensor& t = call_.t[static_cast<std::size_t>(k)];
    std::vector<unsigned char> host;
    to_bytes(g, t.dtype, host);
    backend_.copy(call_.grad[static_cast<std::size_t>(k)], host.data(), host.size(),
                  Backend::CopyKind::host_to_device);
}

void OpInstance::zero_gradients() {
    for (int k = 0; k < layout_.size(); ++k)
        if (call_.grad[static_cast<std::size_t>(k)])
            backend_.zero(call_.grad[static_cast<std::size_t>(k)],
                          call_.t[static_cast<std::size_t>(k)].bytes());
}

}  // namespace routescope
