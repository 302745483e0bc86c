#pragma once
// CUDA backend ops of the sequence models' recurrences (exec.hpp says how an op is written):
// s4d_kernel, fft_conv and linear_scan. The math is the CPU's (engine/ops/s4d_kernel.hpp,
// fft_conv.hpp, linear_scan.hpp); what follows is how each is split into indices.
//
// s4d_kernel — K[h, l] = Re Σ_n C_n · (exp(ΔA_n) − 1)/A_n · exp(l·ΔA_n), A_n = min(A_re, −1e−4)
// + i·A_im, Δ = exp(log_step[h]), all in double whatever T (docs/decisions.md, "S4D kernel math
// in double"). Forward: one index per mode (h, n) forms ΔA and C·B = C·(exp(ΔA) − 1)/A into
// scratch; one index per output (h, l) then sums the modes n = 0 … N−1 in order, exp(l·ΔA)
// evaluated directly as the CPU does. Backward (the CPU's formulas, S0 = Σ_l dK·exp(lΔA),
// S1 = Σ_l dK·l·exp(lΔA)): one index per mode sums l = 0 … L−1 in order and writes dC, dA_re (not
// where A_re is clipped), dA_im and its share of dlog_step into the saved f64 scratch [H, N]; one
// index per h sums those shares n = 0 … N−1 in order into dlog_step.
//
// fft_conv — y = irfft(rfft(pad(u, 2L))·rfft(pad(K_g, 2L))/2L)[0:L] + D_g·u per channel c of
// u [B, L, d], g = c / (d/H). Forward: K padded into rows of n = 2L and transformed (H rows);
// u transposed from channels-last into rows r = b·d + c of n reals, zero-padded, transformed
// (B·d rows); one index per bin multiplies by the kernel spectrum scaled by 1/n (the CPU's kf);
// the inverse transform; one index per element of y adds the skip D_g·u. Backward, with
// U = rfft(pad(u)), DY = rfft(pad(dy)): du += irfft(DY·conj(kf))[0:L] + D_g·dy (the correlation
// with K); for dK and dD one index per (g, bin k) sums conj(U)·DY over b, then the channels of g,
// in double (the CPU sums the same terms, grouped by its channel blocks); dK[g] += irfft of that
// sum (rounded to T, as the CPU's)[0:L]/n, and dD[g] += its lag 0, (P_0 + P_L + 2·Σ_{0<k<L}
// Re P_k)/n in double, one index per g summing the bins in order.
//
// linear_scan — h_t = keep_t·f_t·h_prev + x_t over [B, L, N], channels [0, n_forward) left to
// right and [n_forward, N) right to left, each with its own optional keep mask [B, L] (null: the
// carry always passes). One index per (b, channel) runs the CPU's sequential recurrence in the same
// order; the backward runs it in the opposite order: g_t = dh_t + passed, dx_t += g_t,
// df_t += g_t·h_prev where the carry passed, passed = f_t·g_t (0 where it was cut).
//
// Operands (op_defs.cpp): s4d_kernel A_re = 0, A_im = 1, C = 2, log_step = 3, K = 4, saved f64
// scratch = 5; fft_conv u = 0, K = 1, D = 2, y = 3; linear_scan f = 0, x = 1, keep_forward = 2,
// keep_reverse = 3 (optional int32), h = 4. Backwards accumulate (+=) into the input gradients
// that are not null.
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/backend/cuda/exec.hpp"
#include "engine/core/error.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool ssm_implements(ops::OpId op) {
    return op == ops::OpId::s4d_kernel || op == ops::OpId::fft_conv || op == ops::OpId::linear_scan;
}

// ---------------------------------------------------------------- complex doubles (S4D)
namespace ssm {

using Cd = Complex<double>;

ROUTESCOPE_HD inline Cd add(Cd a, Cd b) {
    return {a.re + b.re, a.im + b.im};
}
ROUTESCOPE_HD inline Cd sub(Cd a, Cd b) {
    return {a.re - b.re, a.im - b.im};
}
ROUTESCOPE_HD inline Cd mul(Cd a, Cd b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
ROUTESCOPE_HD inline Cd scale(double s, Cd a) {
    return {s * a.re, s * a.im};
}
ROUTESCOPE_HD inline Cd div(Cd a, Cd b) {
    const double den = b.re * b.re + b.im * b.im;
    return {(a.re * b.re + a.im * b.im) / den, (a.im * b.re - a.re * b.im) / den};
}
ROUTESCOPE_HD inline Cd exp(Cd a) {
    const double m = std::exp(a.re);
    return {m * std::cos(a.im), m * std::sin(a.im)};
}

/// One mode's A (clipped), Δ·A, e = exp(ΔA) and B = (e − 1)/A, as the CPU's mode_of.
struct Mode {
    Cd A, dtA, e, B;
    bool clipped;
};

template <class T>
ROUTESCOPE_HD Mode mode_of(T a_re, T a_im, double step) {
    Mode m;
    // The clip constant taken in T, as the CPU does (kS4dAReMax = −1e−4).
    const double re_max = static_cast<double>(static_cast<T>(-1e-4));
    m.clipped = !(static_cast<double>(a_re) <= re_max);
    m.A = {m.clipped ? re_max : static_cast<double>(a_re), static_cast<double>(a_im)};
    m.dtA = scale(step, m.A);
    m.e = exp(m.dtA);
    m.B = div(sub(m.e, {1.0, 0.0}), m.A);
    return m;
}

}  // namespace ssm

// ---------------------------------------------------------------- s4d_kernel bodies
/// Per mode i = h·N + n: dtA[i] = Δ·A, CB[i] = C·B.
template <class T>
struct S4dModes {
    Complex<double>* dtA;
    Complex<double>* CB;
    const T* A_re;
    const T* A_im;
    const T* C;
    const T* log_step;
    std::int64_t N;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const double step = std::exp(static_cast<double>(log_step[i / N]));
        const ssm::Mode m = ssm::mode_of(A_re[i], A_im[i], step);
        dtA[i] = m.dtA;
        CB[i] = ssm::mul({static_cast<double>(C[2 * i]), static_cast<double>(C[2 * i + 1])}, m.B);
    }
};

/// K[h, l] = Σ_n exp(l·Re ΔA)·Re(CB·exp(i·l·Im ΔA)), modes in order, in double.
template <class T>
struct S4dForward {
    T* K;
    const Complex<double>* dtA;
    const Complex<double>* CB;
    std::int64_t N, L;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t h = i / L;
        const auto l = static_cast<double>(i % L);
        double acc = 0;
        for (std::int64_t n = 0; n < N; ++n) {
            const Complex<double> a = dtA[h * N + n], cb = CB[h * N + n];
            const double mag = std::exp(l * a.re);
            const double ph = l * a.im;
            acc += mag * (cb.re * std::cos(ph) - cb.im * std::sin(ph));
        }
        K[i] = static_cast<T>(acc);
    }
};

/// Per mode i = h·N + n, from dK [H, L]:
///   dC += B·S0 (re, −im), dA += C·((Δ e A − (e − 1))/A²·S0 + B Δ S1) (re unless clipped, −im),
///   share[i] = Δ·Re(C·(e S0 + (e − 1) S1)), the mode's term of dlog_step.
template <class T>
struct S4dBackwardMode {
    T* dA_re;
    T* dA_im;
    T* dC;
    double* share;
    const T* dK;
    const T* A_re;
    const T* A_im;
    const T* C;
    const T* log_step;
    std::int64_t N, L;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        using namespace ssm;
        const std::int64_t h = i / N;
        const double step = std::exp(static_cast<double>(log_step[h]));
        const Mode m = mode_of(A_re[i], A_im[i], step);
        const T* g = dK + h * L;
        double s0r = 0, s0i = 0, s1r = 0, s1i = 0;
        for (std::int64_t l = 0; l < L; ++l) {
            const auto ld = static_cast<double>(l);
            const double mag = std::exp(ld * m.dtA.re);
            const double ph = ld * m.dtA.im;
            const double w = static_cast<double>(g[l]) * mag;
            const double zr = w * std::cos(ph), zi = w * std::sin(ph);
            s0r += zr;
            s0i += zi;
            s1r += ld * zr;
            s1i += ld * zi;
        }
        const Cd S0{s0r, s0i}, S1{s1r, s1i};
        const Cd Cn{static_cast<double>(C[2 * i]), static_cast<double>(C[2 * i + 1])};
        const Cd em1 = sub(m.e, {1.0, 0.0});
        if (dC) {
            const Cd gC = mul(m.B, S0);
            dC[2 * i] += static_cast<T>(gC.re);
            dC[2 * i + 1] += static_cast<T>(-gC.im);
        }
        if (dA_re || dA_im) {
            const Cd gA =
                mul(Cn, add(mul(div(sub(mul(scale(step, m.e), m.A), em1), mul(m.A, m.A)), S0),
                            mul(scale(step, m.B), S1)));
            if (dA_re && !m.clipped) dA_re[i] += static_cast<T>(gA.re);
            if (dA_im) dA_im[i] += static_cast<T>(-gA.im);
        }
        if (share) share[i] = step * mul(Cn, add(mul(m.e, S0), mul(em1, S1))).re;
    }
};

/// dlog_step[h] += Σ_n share[h, n], modes in order.
template <class T>
struct S4dStepGrad {
    T* dlog_step;
    const double* share;
    std::int64_t N;
    ROUTESCOPE_HD void operator()(std::int64_t h) const {
        double s = 0;
        for (std::int64_t n = 0; n < N; ++n)
            s += share[h * N + n];
        dlog_step[h] += static_cast<T>(s);
    }
};

// ---------------------------------------------------------------- fft_conv bodies
/// Rows of n reals from channels-last src [B, L, d]: real[r, t] = src[b, t, c] (r = b·d + c) for
/// t < L, 0 for L ≤ t < n. With d = 1 and B = H this pads the kernels K [H, L].
template <class T>
struct FftConvPad {
    T* real;
    const T* src;
    std::int64_t L, d, n;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / n, t = i % n;
        real[i] = t < L ? src[((r / d) * L + t) * d + r % d] : T(0);
    }
};

/// X[r, k] ← X[r, k]·kf[g, k] (or ·conj(kf)), kf = K's spectrum·(1/n) in T as the CPU's, channel
/// c = r % d using kernel g = c / gs.
template <class T>
struct FftConvMultiply {
    Complex<T>* X;
    const Complex<T>* Kf;
    std::int64_t nf, d, gs;
    T scale;
    bool conj;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / nf, k = i % nf;
        const Complex<T> kk = Kf[((r % d) / gs) * nf + k];
        const T kr = kk.re * scale, ki = (conj ? -kk.im : kk.im) * scale;
        const T xr = X[i].re, xi = X[i].im;
        X[i] = {xr * kr - xi * ki, xr * ki + xi * kr};
    }
};

/// i runs over out [B, L, d]: out (+)= real[b·d + c, t] + D[g]·skip (real: the inverse transform's
/// rows of n).
template <class T>
struct FftConvUnpad {
    T* out;
    const T* real;
    const T* skip;
    const T* D;
    std::int64_t L, d, n, gs;
    bool accumulate;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % d, r = i / d, t = r % L, b = r / L;
        const T v = real[(b * d + c) * n + t] + D[c / gs] * skip[i];
        if (accumulate)
            out[i] += v;
        else
            out[i] = v;
    }
};

/// i = (g, j, k): chunk j of group g's B·gs rows (b outer, channels of g inner, in order) sums
/// conj(U[b·d + c, k])·DY[b·d + c, k] in double into part[(g·chunks + j)·nf + k].
template <class T>
struct FftConvCorrelationPartial {
    Complex<double>* part;
    const Complex<T>* U;
    const Complex<T>* DY;
    std::int64_t B, d, gs, nf, chunks, per_chunk;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t k = i % nf, gj = i / nf, j = gj % chunks, g = gj / chunks;
        const std::int64_t m = B * gs;
        const std::int64_t end = (j + 1) * per_chunk < m ? (j + 1) * per_chunk : m;
        double re = 0, im = 0;
        for (std::int64_t q = j * per_chunk; q < end; ++q) {
            const std::int64_t b = q / gs, ch = g * gs + q % gs;
            const std::int64_t at = (b * d + ch) * nf + k;
            const double xr = U[at].re, xi = U[at].im, yr = DY[at].re, yi = DY[at].im;
            re += xr * yr + xi * yi;
            im += xr * yi - xi * yr;
        }
        part[i] = {re, im};
    }
};

/// P[g, k] = Σ_j part[g, j, k] in double, chunks in order; S[g, k] = P rounded to T, the spectrum
/// dK's inverse transform takes.
template <class T>
struct FftConvCorrelation {
    Complex<double>* P;
    Complex<T>* S;
    const Complex<double>* part;
    std::int64_t nf, chunks;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t g = i / nf, k = i % nf;
        double re = 0, im = 0;
        for (std::int64_t j = 0; j < chunks; ++j) {
            const Complex<double> v = part[(g * chunks + j) * nf + k];
            re += v.re;
            im += v.im;
        }
        P[i] = {re, im};
        S[i] = {static_cast<T>(re), static_cast<T>(im)};
    }
};

/// dK[g, l] += real[g, l]·scale (real: the inverse transform of S, rows of n).
template <class T>
struct FftConvKernelGrad {
    T* dK;
    const T* real;
    std::int64_t L, n;
    T scale;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        dK[i] += real[(i / L) * n + i % L] * scale;
    }
};

/// dD[g] += Σ_t u·dy over g's channels, the correlation at lag 0: (P_0 + P_L + 2·Σ Re P_k)/n,
/// bins in order, in double.
template <class T>
struct FftConvSkipGrad {
    T* dD;
    const Complex<double>* P;
    std::int64_t L, nf;
    ROUTESCOPE_HD void operator()(std::int64_t g) const {
        double lag0 = 0;
        for (std::int64_t k = 0; k < nf; ++k) {
            const double s = P[g * nf + k].re;
            lag0 += (k == 0 || k == L) ? s : 2 * s;
        }
        dD[g] += static_cast<T>(lag0 / static_cast<double>(2 * L));
    }
};

// ---------------------------------------------------------------- linear_scan bodies
/// The scan's geometry: channel c scans forward when c < nf (mask keep_f), in reverse otherwise
/// (mask keep_r); step s of a scan is at position t(s), and the carry enters t(s) when s > 0 and
/// the mask (if any) is nonzero there.
struct ScanShape {
    const std::int32_t* keep_f;
    const std::int32_t* keep_r;
    std::int64_t L, N, nf;
    ROUTESCOPE_HD std::int64_t position(std::int64_t s, bool forward) const {
        return forward ? s : L - 1 - s;
    }
    ROUTESCOPE_HD bool passes(std::int64_t b, std::int64_t s, std::int64_t t, bool forward) const {
        const std::int32_t* keep = forward ? keep_f : keep_r;
        return s > 0 && (!keep || keep[b * L + t] != 0);
    }
};

/// One (b, c): h_t = f_t·h_prev + x_t where the carry passes, x_t where it is cut.
template <class T>
struct LinearScanForward {
    T* h;
    const T* f;
    const T* x;
    ScanShape s;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / s.N, c = i % s.N;
        const bool forward = c < s.nf;
        T carry = 0;
        for (std::int64_t step = 0; step < s.L; ++step) {
            const std::int64_t t = s.position(step, forward);
            const std::int64_t at = (b * s.L + t) * s.N + c;
            carry = s.passes(b, step, t, forward) ? f[at] * carry + x[at] : x[at];
            h[at] = carry;
        }
    }
};

/// One (b, c), scan steps from last to first: g = dh + passed; dx += g; where the carry passed,
/// df += g·h_prev and passed = f·g, else passed = 0.
template <class T>
struct LinearScanBackward {
    T* df;
    T* dx;
    const T* dh;
    const T* h;
    const T* f;
    ScanShape s;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / s.N, c = i % s.N;
        const bool forward = c < s.nf;
        T passed = 0;
        for (std::int64_t step = s.L - 1; step >= 0; --step) {
            const std::int64_t t = s.position(step, forward);
            const std::int64_t at = (b * s.L + t) * s.N + c;
            const T g = dh[at] + passed;
            if (dx) dx[at] += g;
            if (s.passes(b, step, t, forward)) {
                const std::int64_t prev = (b * s.L + s.position(step - 1, forward)) * s.N + c;
                if (df) df[at] += g * h[prev];
                passed = f[at] * g;
            } else {
                passed = T(0);
            }
        }
    }
};

// ---------------------------------------------------------------- chunked linear_scan
// One index per (b, c) walking all L steps leaves the GPU idle when B·N is small and L long (a
// Birdie layer at batch 1 and L = 8192 did not finish a forward in 2 s on an H200). With L longer
// than kScanChunk the scan runs in chunks of kScanChunk steps instead, for any shape (the order of
// every sum is fixed by the shape, so runs stay bit-identical):
//   1. one index per (b, chunk, c): the chunk's scan from a zero carry, written in place, and the
//      factor A its incoming carry gets by the chunk's end (the product of f where the carry
//      passes, 0 once it is cut) and the chunk's end value E;
//   2. one index per (b, c): carry_in[k] over the chunks in order (carry = A_k·carry + E_k);
//   3. one index per (b, chunk, c): h += (product of the passing f from the chunk's start to the
//      step)·carry_in, walking the chunk again.
// The backward's g = dh + f·g_next is the same recurrence over the steps in reverse (the factor of
// step s is f at s + 1 where the carry into s + 1 passes), solved the same way into scratch; then
// one index per element adds dx += g and df += g·h_prev where the carry passed.
inline constexpr std::int64_t kScanChunk = 32;

/// The step order of one recurrence: `reverse_steps` walks the scan's steps from last to first
/// (the backward's g), and `factor(b, c, s)` is what the value carried into step s is multiplied
/// by (0 where the carry is cut).
template <class T>
struct ScanRecurrence {
    const T* f;
    ScanShape s;
    bool reverse_steps;
    /// The scan step of the k-th element of this recurrence's order.
    ROUTESCOPE_HD std::int64_t step(std::int64_t k) const {
        return reverse_steps ? s.L - 1 - k : k;
    }
    ROUTESCOPE_HD std::int64_t at(std::int64_t b, std::int64_t c, std::int64_t st,
                                  bool forward) const {
        return (b * s.L + s.position(st, forward)) * s.N + c;
    }
    /// The factor on the carry entering order element k (k > 0).
    ROUTESCOPE_HD T factor(std::int64_t b, std::int64_t c, std::int64_t k) const {
        const bool forward = c < s.nf;
        // The forward scan: the carry enters step k through f at k where it passes. The reverse
        // order (the backward): g of step st receives f·g from step st + 1, where the carry passed
        // into st + 1.
        const std::int64_t st = reverse_steps ? step(k - 1) : step(k);
        const std::int64_t t = s.position(st, forward);
        return s.passes(b, st, t, forward) ? f[at(b, c, st, forward)] : T(0);
    }
};

/// Phase 1: i = (b, chunk, c), c fastest so that a warp's lanes read neighbouring channels of one
/// step (coalesced); y (in place over `v`, the recurrence's inputs) from a zero carry; A and E of
/// the chunk into aux[2·i], aux[2·i + 1] (aux is [B, chunks, N, 2]).
template <class T>
struct ScanChunkLocal {
    T* v;
    T* aux;
    ScanRecurrence<T> r;
    std::int64_t chunks;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % r.s.N, bk = i / r.s.N;
        const std::int64_t k0 = (bk % chunks) * kScanChunk, b = bk / chunks;
        const bool forward = c < r.s.nf;
        const std::int64_t k1 = k0 + kScanChunk < r.s.L ? k0 + kScanChunk : r.s.L;
        T carry = 0, a = 1;
        for (std::int64_t k = k0; k < k1; ++k) {
            const T g = k > 0 ? r.factor(b, c, k) : T(0);
            T& y = v[r.at(b, c, r.step(k), forward)];
            carry = k == k0 ? y : g * carry + y;
            if (k > k0) a *= g;
            y = carry;
        }
        aux[2 * i] = k0 > 0 ? a * r.factor(b, c, k0) : T(0);
        aux[2 * i + 1] = carry;
    }
};

/// Phase 2: i = (b, c): carry_in of every chunk, in order, into chunk k's A slot (no longer
/// needed), aux[2·((b·chunks + k)·N + c)].
template <class T>
struct ScanChunkCarries {
    T* aux;
    std::int64_t chunks;
    std::int64_t N;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / N, c = i % N;
        T carry = 0;
        for (std::int64_t k = 0; k < chunks; ++k) {
            T* e = aux + 2 * ((b * chunks + k) * N + c);
            const T a = e[0], end = e[1];
            e[0] = carry;
            carry = a * carry + end;
        }
    }
};

/// Phase 3: i = (b, chunk, c) as in phase 1: y += (product of the factors from the chunk's
/// start)·carry_in.
template <class T>
struct ScanChunkFix {
    T* v;
    const T* aux;
    ScanRecurrence<T> r;
    std::int64_t chunks;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % r.s.N, bk = i / r.s.N;
        const std::int64_t k0 = (bk % chunks) * kScanChunk, b = bk / chunks;
        if (k0 == 0) return;
        const bool forward = c < r.s.nf;
        const std::int64_t k1 = k0 + kScanChunk < r.s.L ? k0 + kScanChunk : r.s.L;
        const T carry_in = aux[2 * i];
        T p = 1;
        for (std::int64_t k = k0; k < k1; ++k) {
            p *= r.factor(b, c, k);
            v[r.at(b, c, r.step(k), forward)] += p * carry_in;
        }
    }
};

/// out[i] = in[i] (the recurrence's inputs copied where it is solved in place).
template <class T>
struct CopyValues {
    T* out;
    const T* in;
    ROUTESCOPE_HD void operator()(std::int64_t i) const { out[i] = in[i]; }
};

/// The backward's last step, per element: dx += g; df += g·h_prev where the carry passed.
template <class T>
struct ScanGradApply {
    T* df;
    T* dx;
    const T* g;
    const T* h;
    ScanShape s;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % s.N, bt = i / s.N, t = bt % s.L, b = bt / s.L;
        const bool forward = c < s.nf;
        const std::int64_t st = forward ? t : s.L - 1 - t;
        if (dx) dx[i] += g[i];
        if (df && s.passes(b, st, t, forward))
            df[i] += g[i] * h[(b * s.L + s.position(st - 1, forward)) * s.N + c];
    }
};

inline std::int64_t scan_chunks(std::int64_t L) {
    return (L + kScanChunk - 1) / kScanChunk;
}

/// Solves the recurrence in place over v [B, L, N] in chunks (phases 1–3 above); aux holds
/// 2·B·N·scan_chunks(L) values.
template <class T, class X>
void chunked_scan(X& x, T* v, T* aux, const ScanRecurrence<T>& r, std::int64_t B) {
    const std::int64_t chunks = scan_chunks(r.s.L);
    x.each(B * r.s.N * chunks, ScanChunkLocal<T>{v, aux, r, chunks});
    x.each(B * r.s.N, ScanChunkCarries<T>{aux, chunks, r.s.N});
    x.each(B * r.s.N * chunks, ScanChunkFix<T>{v, aux, r, chunks});
}

// ---------------------------------------------------------------- ops
/// Arguments: H, N, L.
template <class T, class X>
void s4d_kernel_forward(X& x, const ops::OpCall& c) {
    const std::int64_t H = c.i[0], N = c.i[1], L = c.i[2];
    auto* dtA = x.template scratch<Complex<double>>(H * N);
    auto* CB = x.template scratch<Complex<double>>(H * N);
    x.each(H * N,
           S4dModes<T>{dtA, CB, c.value<T>(0), c.value<T>(1), c.value<T>(2), c.value<T>(3), N});
    x.each(H * L, S4dForward<T>{c.value<T>(4), dtA, CB, N, L});
}

template <class T, class X>
void s4d_kernel_backward(X& x, const ops::OpCall& c) {
    const std::int64_t H = c.i[0], N = c.i[1], L = c.i[2];
    T* dA_re = c.gradient<T>(0);
    T* dA_im = c.gradient<T>(1);
    T* dC = c.gradient<T>(2);
    T* dlog_step = c.gradient<T>(3);
    const T* dK = c.gradient<T>(4);
    if (!dK || (!dA_re && !dA_im && !dC && !dlog_step)) return;
    double* share = dlog_step ? c.value<double>(5) : nullptr;
    x.each(H * N, S4dBackwardMode<T>{dA_re, dA_im, dC, share, dK, c.value<T>(0), c.value<T>(1),
                                     c.value<T>(2), c.value<T>(3), N, L});
    if (dlog_step) x.each(H, S4dStepGrad<T>{dlog_step, share, N});
}

/// fft_conv's sizes: n = 2L reals and nf = L + 1 bins per row, rows = B·d, gs = d/H channels per
/// kernel.
struct FftConvShape {
    std::int64_t B, L, d, H, n, nf, rows, gs;
};
inline FftConvShape fft_conv_shape(const ops::OpCall& c) {
    const std::int64_t B = c.i[0], L = c.i[1], d = c.i[2], H = c.i[3];
    if (B <= 0 || L <= 0 || d <= 0 || H <= 0 || d % H != 0 || 2 * L > INT32_MAX ||
        B * d > INT32_MAX)
        throw Error("fft_conv: bad shape B = " + std::to_string(B) + ", L = " + std::to_string(L) +
                    ", d = " + std::to_string(d) + ", H = " + std::to_string(H) +
                    " (H must divide d)");
    // cuFFT's plans (cufftPlanMany) index a batch's elements in int: B·d rows of 2L reals, and
    // its spectra, past 2^31 elements are CUFFT_INVALID_SIZE (and 17 GB a buffer at d 1024, L 512,
    // B 4096), so such a call is refused here, naming what to lower.
    if ((B * d) * (2 * L + 2) > INT32_MAX)
        throw Error("fft_conv on the CUDA device: " + std::to_string(B) + " sequences × " +
                    std::to_string(d) + " channels × " + std::to_string(2 * L) +
                    "-point FFTs exceed cuFFT's 2^31 elements per plan; use a smaller batch");
    return {B, L, d, H, 2 * L, L + 1, B * d, d / H};
}

/// Arguments: B, L, d, H.
template <class T, class X>
void fft_conv_forward(X& x, const ops::OpCall& c) {
    const FftConvShape s = fft_conv_shape(c);
    const int n = static_cast<int>(s.n);
    T* kreal = x.template scratch<T>(s.H * s.n);
    auto* kspec = x.template scratch<Complex<T>>(s.H * s.nf);
    T* real = x.template scratch<T>(s.rows * s.n);
    auto* spec = x.template scratch<Complex<T>>(s.rows * s.nf);
    const T* u = c.value<T>(0);

    x.each(s.H * s.n, FftConvPad<T>{kreal, c.value<T>(1), s.L, 1, s.n});
    x.rfft(kreal, kspec, n, static_cast<int>(s.H));
    x.each(s.rows * s.n, FftConvPad<T>{real, u, s.L, s.d, s.n});
    x.rfft(real, spec, n, static_cast<int>(s.rows));
    x.each(s.rows * s.nf, FftConvMultiply<T>{spec, kspec, s.nf, s.d, s.gs, T(1) / T(n), false});
    x.irfft(spec, real, n, static_cast<int>(s.rows));
    x.each(s.B * s.L * s.d,
           FftConvUnpad<T>{c.value<T>(3), real, u, c.value<T>(2), s.L, s.d, s.n, s.gs, false});
}

template <class T, class X>
void fft_conv_backward(X& x, const ops::OpCall& c) {
    const FftConvShape s = fft_conv_shape(c);
    const int n = static_cast<int>(s.n);
    const int rows = static_cast<int>(s.rows), H = static_cast<int>(s.H);
    // Every piece requested on every call, whichever gradients are wanted (the plan's sizes).
    T* kreal = x.template scratch<T>(s.H * s.n);
    auto* kspec = x.template scratch<Complex<T>>(s.H * s.nf);
    T* real = x.template scratch<T>(s.rows * s.n);
    auto* uspec = x.template scratch<Complex<T>>(s.rows * s.nf);
    auto* yspec = x.template scratch<Complex<T>>(s.rows * s.nf);
    auto* P = x.template scratch<Complex<double>>(s.H * s.nf);
    auto* S = x.template scratch<Complex<T>>(s.H * s.nf);

    T* du = c.gradient<T>(0);
    T* dK = c.gradient<T>(1);
    T* dD = c.gradient<T>(2);
    const T* dy = c.gradient<T>(3);
    const bool params = dK || dD;
    if (!dy || (!du && !params)) return;
    const T* u = c.value<T>(0);
    const T* D = c.value<T>(2);

    // DY = rfft(pad(dy)), and U = rfft(pad(u)) when dK or dD is wanted (real is reused).
    x.each(s.rows * s.n, FftConvPad<T>{real, dy, s.L, s.d, s.n});
    x.rfft(real, yspec, n, rows);
    if (params) {
        x.each(s.rows * s.n, FftConvPad<T>{real, u, s.L, s.d, s.n});
        x.rfft(real, uspec, n, rows);
        // B·gs rows per group: with one kernel for all channels (H = 1, the default) that is
        // B·d rows and only nf indices, so the rows are summed in fixed chunks first.
        const std::int64_t chunks = column_chunks(s.B * s.gs, s.H * s.nf);
        auto* part = x.template scratch<Complex<double>>(s.H * chunks * s.nf);
        x.each(s.H * chunks * s.nf,
               FftConvCorrelationPartial<T>{part, uspec, yspec, s.B, s.d, s.gs, s.nf, chunks,
                                            chunk_rows(s.B * s.gs, chunks)});
        x.each(s.H * s.nf, FftConvCorrelation<T>{P, S, part, s.nf, chunks});
    }
    if (du) {
        x.each(s.H * s.n, FftConvPad<T>{kreal, c.value<T>(1), s.L, 1, s.n});
        x.rfft(kreal, kspec, n, H);
        x.each(s.rows * s.nf, FftConvMultiply<T>{yspec, kspec, s.nf, s.d, s.gs, T(1) / T(n), true});
        x.irfft(yspec, real, n, rows);
        x.each(s.B * s.L * s.d, FftConvUnpad<T>{du, real, dy, D, s.L, s.d, s.n, s.gs, true});
    }
    if (dD) x.each(s.H, FftConvSkipGrad<T>{dD, P, s.L, s.nf});
    if (dK) {
        x.irfft(S, kreal, n, H);
        x.each(s.H * s.L, FftConvKernelGrad<T>{dK, kreal, s.L, s.n, T(1) / T(n)});
    }
}

/// Arguments: B, L, N, n_forward.
inline ScanShape scan_shape(const ops::OpCall& c) {
    if (c.i[3] < 0 || c.i[3] > c.i[2])
        throw Error("linear_scan: n_forward = " + std::to_string(c.i[3]) + " outside [0, " +
                    std::to_string(c.i[2]) + "]");
    return {c.value<std::int32_t>(2), c.value<std::int32_t>(3), c.i[1], c.i[2], c.i[3]};
}

template <class T, class X>
void linear_scan_forward(X& x, const ops::OpCall& c) {
    const ScanShape s = scan_shape(c);
    if (s.L <= kScanChunk) {
        x.each(c.i[0] * c.i[2],
               LinearScanForward<T>{c.value<T>(4), c.value<T>(0), c.value<T>(1), s});
        return;
    }
    T* h = c.value<T>(4);
    T* aux = x.template scratch<T>(2 * c.i[0] * s.N * scan_chunks(s.L));
    x.each(c.i[0] * s.L * s.N, CopyValues<T>{h, c.value<T>(1)});
    chunked_scan<T>(x, h, aux, ScanRecurrence<T>{c.value<T>(0), s, false}, c.i[0]);
}

template <class T, class X>
void linear_scan_backward(X& x, const ops::OpCall& c) {
    T* df = c.gradient<T>(0);
    T* dx = c.gradient<T>(1);
    const T* dh = c.gradient<T>(4);
    const ScanShape s = scan_shape(c);
    // Requested on every call (the plan's sizes): g and the chunks' aux.
    T* g = s.L > kScanChunk ? x.template scratch<T>(c.i[0] * s.L * s.N) : nullptr;
    T* aux =
        s.L > kScanChunk ? x.template scratch<T>(2 * c.i[0] * s.N * scan_chunks(s.L)) : nullptr;
    if (!dh || (!df && !dx)) return;
    if (s.L <= kScanChunk) {
        x.each(c.i[0] * c.i[2], LinearScanBackward<T>{df, dx, dh, c.value<T>(4), c.value<T>(0), s});
        return;
    }
    x.each(c.i[0] * s.L * s.N, CopyValues<T>{g, dh});
    chunked_scan<T>(x, g, aux, ScanRecurrence<T>{c.value<T>(0), s, true}, c.i[0]);
    x.each(c.i[0] * s.L * s.N, ScanGradApply<T>{df, dx, g, c.value<T>(4), s});
}

}  // namespace routescope::cuda::kernels
