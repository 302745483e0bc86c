#include "engine/backend/op_specs.hpp"

#include <cmath>
#include <cstring>
#include <random>

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
            return {make(op, {2, 5, 6, 2})};
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
            return {make(op, {B, L, d, d})};
        case OpId::attention:
            return {make(op, {B, L, d, 4})};
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
            return {make(op, {B, L, 2 * d, d})};
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
    return size == SpecSize::tiny ? tiny(op) : bench(op);
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
