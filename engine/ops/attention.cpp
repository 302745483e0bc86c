#include "engine/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/backend/cpu/eigen_map.hpp"
#include "engine/core/error.hpp"

namespace routescope::ops {

using cpu::matrix;

namespace {
void check_shapes(const std::int32_t* lengths, int B, int L, int d, int n_heads,
                  const char* where) {
    if (n_heads <= 0 || d % n_heads != 0) {
        throw Error(std::string(where) + ": width " + std::to_string(d) +
                    " is not divisible by n_heads = " + std::to_string(n_heads));
    }
    if (!lengths) return;
    for (int b = 0; b < B; ++b) {
        if (lengths[b] < 0 || lengths[b] > L) {
            throw Error(std::string(where) + ": length " + std::to_string(lengths[b]) +
                        " of sequence " + std::to_string(b) + " is outside [0, " +
                        std::to_string(L) + "]");
        }
    }
}
}  // namespace

template <class T>
void attention_forward(T* out, T* probs, const T* q, const T* k, const T* v,
                       const std::int32_t* lengths, int B, int L, int d, int n_heads, bool causal,
                       ThreadPool& pool) {
    check_shapes(lengths, B, L, d, n_heads, "attention_forward");
    const int dh = d / n_heads;
    const T scale = T(1) / std::sqrt(T(dh));
    pool.parallel_for(static_cast<std::int64_t>(B) * n_heads, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t bh = s; bh < e; ++bh) {
            const std::int64_t b = bh / n_heads, h = bh % n_heads;
            const int nk = lengths ? lengths[b] : L;  // keys that exist
            const std::int64_t base = b * L * d + h * dh;
            auto P = matrix(probs + bh * L * L, L, L);
            auto O = matrix(out + base, L, dh, d);
            P.setZero();
            if (nk == 0) {
                O.setZero();
                continue;
            }
            const auto Q = matrix(q + base, L, dh, d);
            const auto K = matrix(k + base, nk, dh, d);
            const auto V = matrix(v + base, nk, dh, d);
            auto S = P.leftCols(nk);
            S.noalias() = Q * K.transpose();  // then scaled in place: no temporary
            S *= scale;
            for (int i = 0; i < L; ++i) {
                // Keys j < n: the valid ones, and only j ≤ i when causal (n ≥ 1: key 0 stays).
                const int n = causal ? std::min(nk, i + 1) : nk;
                auto row = S.row(i).head(n);
                const T m = row.maxCoeff();
                row = (row.array() - m).exp();
                row /= row.sum();
                S.row(i).tail(nk - n).setZero();
            }
            O.noalias() = S * V;
        }
    });
}

std::int64_t attention_backward_scratch_size(int L, const ThreadPool& pool) {
    return static_cast<std::int64_t>(pool.size()) * L * L;
}

template <class T>
void attention_backward(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* probs, const T* q,
                        const T* k, const T* v, const std::int32_t* lengths, int B, int L, int d,
                        int n_heads, bool causal, ThreadPool& pool) {
    check_shapes(lengths, B, L, d, n_heads, "attention_backward");
    const int dh = d / n_heads;
    const T scale = T(1) / std::sqrt(T(dh));
    pool.parallel_for(
        static_cast<std::int64_t>(B) * n_heads, [&](std::int64_t s, std::int64_t e, int t) {
            for (std::int64_t bh = s; bh < e; ++bh) {
                const std::int64_t b = bh / n_heads, h = bh % n_heads;
                const int nk = lengths ? lengths[b] : L;
                if (nk == 0) continue;
                const std::int64_t base = b * L * d + h * dh;
                const auto P = matrix(probs + bh * L * L, L, nk, L);
                const auto dO = matrix(dout + base, L, dh, d);
                const auto Q = matrix(q + base, L, dh, d);
                const auto K = matrix(k + base, nk, dh, d);
                const auto V = matrix(v + base, nk, dh, d);
                auto dQ = matrix(dq + base, L, dh, d);
                auto dK = matrix(dk + base, nk, dh, d);
                auto dV = matrix(dv + base, nk, dh, d);
                auto dS = matrix(scratch + static_cast<std::int64_t>(t) * L * L, L, nk);

                dV.noalias() += P.transpose() * dO;
                dS.noalias() = dO * V.transpose();  // dP
                // softmax backward per row over the forward's keys: dS = P ⊙ (dP − Σ_j P_j dP_j),
                // 0 for the masked keys (P = 0 there)
                for (int i = 0; i < L; ++i) {
                    const int n = causal ? std::min(nk, i + 1) : nk;
                    const auto p = P.row(i).head(n);
                    auto ds = dS.row(i).head(n);
                    const T dot = p.dot(ds);
                    ds = (p.array() * (ds.array() - dot)).matrix();
                    dS.row(i).tail(nk - n).setZero();
                }
                dS *= scale;
                dQ.noalias() += dS * K;
                dK.noalias() += dS.transpose() * Q;
            }
        });
}

OpCost attention_cost(int B, int L, int d, int n_heads, int bytes_per_element) {
    const double scores = static_cast<double>(B) * n_heads * L * L;
    const double act = static_cast<double>(B) * L * d;
    return {4.0 * static_cast<double>(B) * L * L * d + 5.0 * scores,
            bytes_per_element * (4.0 * act + scores)};
}

template void attention_forward<float>(float*, float*, const float*, const float*, const float*,
                                       const std::int32_t*, int, int, int, int, bool, ThreadPool&);
template void attention_forward<double>(double*, double*, const double*, const double*,
                                        const double*, const std::int32_t*, int, int, int, int,
                                        bool, ThreadPool&);
template void attention_backward<float>(float*, float*, float*, float*, const float*, const float*,
                                        const float*, const float*, const float*,
                                        const std::int32_t*, int, int, int, int, bool, ThreadPool&);
template void attention_backward<double>(double*, double*, double*, double*, const double*,
                                         const double*, const double*, const double*, const double*,
                                         const std::int32_t*, int, int, int, int, bool,
                                         ThreadPool&);

}  // namespace routescope::ops
