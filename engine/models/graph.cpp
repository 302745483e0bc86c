#include "engine/models/graph.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/ops/attention.hpp"
#include "engine/ops/column_concat.hpp"
#include "engine/ops/column_slice.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/flip.hpp"
#include "engine/ops/gate_softmax.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/layernorm.hpp"
#include "engine/ops/linear_scan.hpp"
#include "engine/ops/mean_pool.hpp"
#include "engine/ops/neighbour_shift.hpp"
#include "engine/ops/s4d_kernel.hpp"
#include "engine/ops/sequence_broadcast.hpp"
#include "engine/ops/sequence_softmax.hpp"
#include "engine/ops/sigmoid.hpp"
#include "engine/ops/spatial_mix.hpp"
#include "engine/ops/tanh.hpp"
#include "engine/ops/weighted_sequence_sum.hpp"

namespace routescope::models {

Graph::Graph(ParamStore& params, Arena& arena, Tape& tape, ThreadPool& pool, bool training)
    : params_(params), arena_(&arena), tape_(&tape), pool_(pool), training_(training) {
    tape.set_recording(training);
}

Graph::Graph(ParamStore& params, ThreadPool& pool, bool training)
    : params_(params), pool_(pool), training_(training), planning_(true) {}

template <class T>
T* Graph::scratch(std::int64_t n, const char* what) {
    if (planning_) {
        planned_ += Arena::footprint<T>(static_cast<std::size_t>(n));
        return nullptr;
    }
    return arena_->alloc<T>(static_cast<std::size_t>(n), what);
}
template float* Graph::scratch<float>(std::int64_t, const char*);
template double* Graph::scratch<double>(std::int64_t, const char*);
template std::int32_t* Graph::scratch<std::int32_t>(std::int64_t, const char*);

Act Graph::alloc(std::int64_t n, const char* what) {
    Act a;
    a.n = n;
    a.v = scratch<float>(n, what);
    if (training_) {
        a.g = scratch<float>(n, what);
        if (a.g) std::fill(a.g, a.g + n, 0.0f);
    }
    return a;
}

const float* Graph::param(const std::string& name) const {
    return params_.param(name);
}
float* Graph::grad(const std::string& name) {
    return params_.grad(name);
}
const std::vector<std::int64_t>& Graph::shape(const std::string& name) const {
    return params_.entry(name).shape;
}

Act Graph::linear(const Act& x, std::int64_t rows, const std::string& name) {
    return linear(x, rows, name + ".weight", name + ".bias");
}

Act Graph::linear(const Act& x, std::int64_t rows, const std::string& weight_name,
                  const std::string& bias_name) {
    const auto& ws = shape(weight_name);
    const int out = static_cast<int>(ws[0]), in = static_cast<int>(ws[1]);
    if (x.n != rows * in)
        throw Error("Graph::linear(" + weight_name + "): input has " + std::to_string(x.n) +
                    " elements, expected " + std::to_string(rows) + "×" + std::to_string(in));
    Act y = alloc(rows * out, "linear");
    if (planning_) return y;
    const float* w = param(weight_name);
    const float* b = param(bias_name);
    ops::dense_forward(y.v, x.v, w, b, rows, in, out, pool_);
    if (training_) {
        float* dw = grad(weight_name);
        float* db = grad(bias_name);
        tape_->record("dense", [=, &pool = pool_] {
            ops::dense_backward(x.g, dw, db, y.g, x.v, w, rows, in, out, pool);
        });
    }
    return y;
}

Act Graph::layernorm(const Act& x, std::int64_t rows, const std::string& name, float eps) {
    const int d = static_cast<int>(shape(name + ".weight")[0]);
    Act y = alloc(x.n, "layernorm");
    float* mean = scratch<float>(rows, "layernorm mean");
    float* rstd = scratch<float>(rows, "layernorm rstd");
    if (planning_) return y;
    const float* w = param(name + ".weight");
    const float* b = param(name + ".bias");
    ops::layernorm_forward(y.v, mean, rstd, x.v, w, b, rows, d, eps, pool_);
    if (training_) {
        float* dw = grad(name + ".weight");
        float* db = grad(name + ".bias");
        tape_->record("layernorm", [=, &pool = pool_] {
            ops::layernorm_backward(x.g, dw, db, y.g, x.v, w, mean, rstd, rows, d, pool);
        });
    }
    return y;
}

Act Graph::gelu(const Act& x, Gelu kind) {
    Act y = alloc(x.n, "gelu");
    if (planning_) return y;
    if (kind == Gelu::tanh) {
        ops::gelu_tanh_forward(y.v, x.v, x.n, pool_);
        if (training_)
            tape_->record("gelu_tanh", [=, &pool = pool_] {
                ops::gelu_tanh_backward(x.g, y.g, x.v, x.n, pool);
            });
    } else {
        ops::gelu_erf_forward(y.v, x.v, x.n, pool_);
        if (training_)
            tape_->record("gelu_erf",
                          [=, &pool = pool_] { ops::gelu_erf_backward(x.g, y.g, x.v, x.n, pool); });
    }
    return y;
}

Act Graph::tanh(const Act& x) {
    Act y = alloc(x.n, "tanh");
    if (planning_) return y;
    ops::tanh_forward(y.v, x.v, x.n, pool_);
    if (training_)
        tape_->record("tanh", [=, &pool = pool_] { ops::tanh_backward(x.g, y.g, y.v, x.n, pool); });
    return y;
}

Act Graph::add(const Act& a, const Act& b) {
    Act y = alloc(a.n, "add");
    if (planning_) return y;
    ops::add_forward(y.v, a.v, b.v, a.n, pool_);
    if (training_)
        tape_->record("add", [=, &pool = pool_] { ops::add_backward(a.g, b.g, y.g, a.n, pool); });
    return y;
}

Act Graph::mul(const Act& a, const Act& b) {
    Act y = alloc(a.n, "mul");
    if (planning_) return y;
    ops::mul_forward(y.v, a.v, b.v, a.n, pool_);
    if (training_)
        tape_->record(
            "mul", [=, &pool = pool_] { ops::mul_backward(a.g, b.g, y.g, a.v, b.v, a.n, pool); });
    return y;
}

Act Graph::flip(const Act& x, int B, int L, int d) {
    Act y = alloc(x.n, "flip");
    if (planning_) return y;
    ops::flip_forward(y.v, x.v, B, L, d, pool_);
    if (training_)
        tape_->record("flip", [=, &pool = pool_] { ops::flip_backward(x.g, y.g, B, L, d, pool); });
    return y;
}

Act Graph::dropout(const Act& x, const ops::DropoutSite& site) {
    if (!training_ || site.p == 0.0f) return x;  // eval, or p = 0: the identity
    Act y = alloc(x.n, "dropout");
    if (planning_) return y;
    ops::dropout_forward(y.v, x.v, x.n, site, pool_);
    tape_->record("dropout",
                  [=, &pool = pool_] { ops::dropout_backward(x.g, y.g, x.n, site, pool); });
    return y;
}

Act Graph::embedding(const std::int32_t* ids, std::int64_t n, const std::string& table_name) {
    const auto& s = shape(table_name);
    const int vocab = static_cast<int>(s[0]), d = static_cast<int>(s[1]);
    Act y = alloc(n * d, "embedding");
    if (planning_) return y;
    const float* table = param(table_name);
    ops::embedding_forward(y.v, ids, table, n, vocab, d, pool_);
    if (training_) {
        float* dtable = grad(table_name);
        tape_->record("embedding", [=, &pool = pool_] {
            ops::embedding_backward(dtable, y.g, ids, n, vocab, d, pool);
        });
    }
    return y;
}

Act Graph::ssm(const Act& u, int B, int L, int d, const std::string& name,
               ops::FftConvWorkspace<float>& workspace) {
    const auto& s = shape(name + ".A_re");
    const int H = static_cast<int>(s[0]), N = static_cast<int>(s[1]);
    Act K = alloc(std::int64_t(H) * L, "ssm kernel");
    double* kscratch =
        scratch<double>(static_cast<std::int64_t>(ops::s4d_kernel_scratch_size(H, N)), "ssm");
    Act y = alloc(u.n, "ssm");
    if (planning_) return y;
    const float* A_re = param(name + ".A_re");
    const float* A_im = param(name + ".A_im");
    const float* C = param(name + ".C");
    const float* D = param(name + ".D");
    const float* log_step = param(name + ".log_step");
    ops::s4d_kernel_forward(K.v, A_re, A_im, C, log_step, H, N, L, pool_);
    if (training_) {
        float* dA_re = grad(name + ".A_re");
        float* dA_im = grad(name + ".A_im");
        float* dC = grad(name + ".C");
        float* dlog = grad(name + ".log_step");
        tape_->record("s4d_kernel", [=, &pool = pool_] {
            ops::s4d_kernel_backward(dA_re, dA_im, dC, dlog, K.g, A_re, A_im, C, log_step, H, N, L,
                                     kscratch, pool);
        });
    }
    ops::fft_conv_forward(y.v, u.v, K.v, D, B, L, d, H, workspace, pool_);
    if (training_) {
        float* dD = grad(name + ".D");
        auto* ws = &workspace;
        tape_->record("fft_conv", [=, &pool = pool_] {
            ops::fft_conv_backward(u.g, K.g, dD, y.g, u.v, K.v, D, B, L, d, H, *ws, pool);
        });
    }
    return y;
}

Act Graph::attention(const Act& q, const Act& k, const Act& v, const std::int32_t* lengths, int B,
                     int L, int d, int heads) {
    Act y = alloc(q.n, "attention");
    float* probs = scratch<float>(std::int64_t(B) * heads * L * L, "attention probs");
    float* sc = training_ ? scratch<float>(ops::attention_backward_scratch_size(L, pool_),
                                           "attention scratch")
                          : nullptr;
    if (planning_) return y;
    ops::attention_forward(y.v, probs, q.v, k.v, v.v, lengths, B, L, d, heads, pool_);
    if (training_)
        tape_->record("attention", [=, &pool = pool_] {
            ops::attention_backward(q.g, k.g, v.g, sc, y.g, probs, q.v, k.v, v.v, lengths, B, L, d,
                                    heads, pool);
        });
    return y;
}

Act Graph::spatial_mix(const Act& x, int B, int L, int C, const std::string& name, bool causal) {
    const int n = static_cast<int>(shape(name + ".bias")[0]);
    if (L > n)
        throw Error("Graph::spatial_mix(" + name + "): sequence length " + std::to_string(L) +
                    " exceeds the matrix size " + std::to_string(n));
    Act y = alloc(x.n, "spatial_mix");
    if (planning_) return y;
    const float* w = param(name + ".weight");
    const float* b = param(name + ".bias");
    ops::spatial_mix_forward(y.v, x.v, w, b, B, L, C, n, causal, pool_);
    if (training_) {
        float* dw = grad(name + ".weight");
        float* db = grad(name + ".bias");
        tape_->record("spatial_mix", [=, &pool = pool_] {
            ops::spatial_mix_backward(x.g, dw, db, y.g, x.v, w, B, L, C, n, causal, pool);
        });
    }
    return y;
}

Act Graph::columns(const Act& x, std::int64_t rows, int cols, int begin, int count) {
    Act y = alloc(rows * count, "columns");
    if (planning_) return y;
    ops::column_slice_forward(y.v, x.v, rows, cols, begin, count, pool_);
    if (training_)
        tape_->record("column_slice", [=, &pool = pool_] {
            ops::column_slice_backward(x.g, y.g, rows, cols, begin, count, pool);
        });
    return y;
}

Act Graph::mean_pool(const Act& x, const std::int32_t* lengths, int B, int L, int d) {
    Act y = alloc(std::int64_t(B) * d, "mean_pool");
    if (planning_) return y;
    ops::mean_pool_forward(y.v, x.v, lengths, B, L, d, pool_);
    if (training_)
        tape_->record("mean_pool", [=, &pool = pool_] {
            ops::mean_pool_backward(x.g, y.g, lengths, B, L, d, pool);
        });
    return y;
}

Act Graph::first_token(const Act& x, int B, int L, int d) {
    Act y = alloc(std::int64_t(B) * d, "first_token");
    if (planning_) return y;
    // A strided copy of B rows of d: too small to be worth an op of its own in engine/ops.
    for (int b = 0; b < B; ++b)
        std::copy_n(x.v + std::int64_t(b) * L * d, d, y.v + std::int64_t(b) * d);
    if (training_)
        tape_->record("first_token", [=] {
            for (int b = 0; b < B; ++b)
                for (int j = 0; j < d; ++j)
                    x.g[std::int64_t(b) * L * d + j] += y.g[std::int64_t(b) * d + j];
        });
    return y;
}

double Graph::cross_entropy(const Act& logits, const std::int32_t* targets, std::int64_t rows,
                            int V) {
    float* lse = scratch<float>(rows, "cross_entropy lse");
    if (planning_) return 0.0;
    const double loss = ops::cross_entropy_forward(lse, logits.v, targets, rows, V, pool_);
    if (training_)
        tape_->record("cross_entropy", [=, &pool = pool_] {
            ops::cross_entropy_backward(logits.g, logits.v, lse, targets, rows, V, 1.0f, pool);
        });
    return loss;
}

Act Graph::sigmoid(const Act& x) {
    Act y = alloc(x.n, "sigmoid");
    if (planning_) return y;
    ops::sigmoid_forward(y.v, x.v, x.n, pool_);
    if (training_)
        tape_->record("sigmoid",
                      [=, &pool = pool_] { ops::sigmoid_backward(x.g, y.g, y.v, x.n, pool); });
    return y;
}

Act Graph::linear_scan(const Act& f, const Act& x, int B, int L, int N, int n_forward,
                       const std::int32_t* keep_forward, const std::int32_t* keep_reverse) {
    Act h = alloc(x.n, "linear_scan");
    if (planning_) return h;
    using ops::ScanDirection;
    ops::linear_scan_forward(h.v, f.v, x.v, keep_forward, B, L, N, 0, n_forward,
                             ScanDirection::forward, pool_);
    ops::linear_scan_forward(h.v, f.v, x.v, keep_reverse, B, L, N, n_forward, N,
                             ScanDirection::reverse, pool_);
    if (training_)
        tape_->record("linear_scan", [=, &pool = pool_] {
            ops::linear_scan_backward(f.g, x.g, h.g, h.v, f.v, keep_forward, B, L, N, 0, n_forward,
                                      ScanDirection::forward, pool);
            ops::linear_scan_backward(f.g, x.g, h.g, h.v, f.v, keep_reverse, B, L, N, n_forward, N,
                                      ScanDirection::reverse, pool);
        });
    return h;
}

Act Graph::linear_no_bias(const Act& x, std::int64_t rows, const std::string& weight_name) {
    const auto& ws = shape(weight_name);
    const int out = static_cast<int>(ws[0]), in = static_cast<int>(ws[1]);
    if (x.n != rows * in)
        throw Error("Graph::linear_no_bias(" + weight_name + "): input has " + std::to_string(x.n) +
                    " elements, expected " + std::to_string(rows) + "×" + std::to_string(in));
    Act y = alloc(rows * out, "linear");
    if (planning_) return y;
    const float* w = param(weight_name);
    ops::dense_forward(y.v, x.v, w, nullptr, rows, in, out, pool_);
    if (training_) {
        float* dw = grad(weight_name);
        tape_->record("dense", [=, &pool = pool_] {
            ops::dense_backward(x.g, dw, nullptr, y.g, x.v, w, rows, in, out, pool);
        });
    }
    return y;
}

Act Graph::neighbour(const Act& x, const std::int32_t* lengths, int B, int L, int d, int offset) {
    Act y = alloc(x.n, "neighbour_shift");
    if (planning_) return y;
    ops::neighbour_shift_forward(y.v, x.v, lengths, B, L, d, offset, pool_);
    if (training_)
        tape_->record("neighbour_shift", [=, &pool = pool_] {
            ops::neighbour_shift_backward(x.g, y.g, lengths, B, L, d, offset, pool);
        });
    return y;
}

std::vector<Act> Graph::gate_softmax(const std::vector<Act>& gates) {
    const int K = static_cast<int>(gates.size());
    const std::int64_t n = gates.front().n;
    std::vector<Act> out;
    for (int k = 0; k < K; ++k)
        out.push_back(alloc(n, "gate_softmax"));
    if (planning_) return out;
    std::vector<float*> y, dy, dx;
    std::vector<const float*> x;
    for (int k = 0; k < K; ++k) {
        y.push_back(out[k].v);
        x.push_back(gates[k].v);
        dy.push_back(out[k].g);
        dx.push_back(gates[k].g);
    }
    ops::gate_softmax_forward(y.data(), x.data(), K, n, pool_);
    if (training_)
        tape_->record("gate_softmax", [=, &pool = pool_] {
            std::vector<const float*> cy(y.begin(), y.end()), cdy(dy.begin(), dy.end());
            ops::gate_softmax_backward(dx.data(), cdy.data(), cy.data(), K, n, pool);
        });
    return out;
}

std::pair<Act, Act> Graph::sequence_softmax(const Act& x, const Act& x_own,
                                            const std::int32_t* lengths, int B, int L, int d) {
    Act w = alloc(x.n, "sequence_softmax");
    Act w_own = alloc(x_own.n, "sequence_softmax");
    if (planning_) return {w, w_own};
    ops::sequence_softmax_forward(w.v, w_own.v, x.v, x_own.v, lengths, B, L, d, pool_);
    if (training_)
        tape_->record("sequence_softmax", [=, &pool = pool_] {
            ops::sequence_softmax_backward(x.g, x_own.g, w.g, w_own.g, w.v, w_own.v, lengths, B, L,
                                           d, pool);
        });
    return {w, w_own};
}

Act Graph::weighted_sequence_sum(const Act& w, const Act& x, const std::int32_t* lengths, int B,
                                 int L, int d) {
    Act y = alloc(std::int64_t(B) * d, "weighted_sequence_sum");
    if (planning_) return y;
    ops::weighted_sequence_sum_forward(y.v, w.v, x.v, lengths, B, L, d, pool_);
    if (training_)
        tape_->record("weighted_sequence_sum", [=, &pool = pool_] {
            ops::weighted_sequence_sum_backward(w.g, x.g, y.g, w.v, x.v, lengths, B, L, d, pool);
        });
    return y;
}

Act Graph::broadcast_sequence(const Act& x, int B, int L, int d) {
    Act y = alloc(std::int64_t(B) * L * d, "sequence_broadcast");
    if (planning_) return y;
    ops::sequence_broadcast_forward(y.v, x.v, B, L, d, pool_);
    if (training_)
        tape_->record("sequence_broadcast", [=, &pool = pool_] {
            ops::sequence_broadcast_backward(x.g, y.g, B, L, d, pool);
        });
    return y;
}

Act Graph::concat_columns(const std::vector<Act>& pieces, const std::vector<int>& cols,
                          std::int64_t rows) {
    const int K = static_cast<int>(pieces.size());
    int width = 0;
    for (int k = 0; k < K; ++k) {
        if (pieces[k].n != rows * cols[k])
            throw Error("Graph::concat_columns: piece " + std::to_string(k) + " has " +
                        std::to_string(pieces[k].n) + " elements, expected " +
                        std::to_string(rows) + "×" + std::to_string(cols[k]));
        width += cols[k];
    }
    Act y = alloc(rows * width, "column_concat");
    if (planning_) return y;
    std::vector<const float*> x;
    std::vector<float*> dx;
    for (const Act& p : pieces) {
        x.push_back(p.v);
        dx.push_back(p.g);
    }
    ops::column_concat_forward(y.v, x.data(), cols.data(), K, rows, pool_);
    if (training_)
        tape_->record("column_concat", [=, &pool = pool_] {
            ops::column_concat_backward(dx.data(), y.g, cols.data(), K, rows, pool);
        });
    return y;
}

}  // namespace routescope::models
