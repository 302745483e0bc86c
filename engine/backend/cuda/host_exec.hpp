#pragma once
// The host executor (exec.hpp): runs a CUDA-backend op on host memory with the GPU's semantics, so
// the test suite checks the backend's indexing, transposes and layouts on any machine
// (tests/engine/test_cuda_emulation.cpp). Bodies run in a loop over their indices; GEMMs follow
// cublas<t>gemmStridedBatched's definition (column-major; C is not read when beta = 0); FFTs are
// the DFT computed in long double (its factors tabulated once per size), unnormalised, with cuFFT's
// layouts (n/2 + 1 complex per row; a C2R ignores the imaginary parts of bins 0 and n/2); with
// set_gemm_inputs(tf32 | bf16) a float GEMM rounds its inputs as the tensor cores' conversion does
// and sums in fp32. To catch what would only go wrong on a GPU: scratch is filled with NaN bytes at
// the start of every op, irfft overwrites its input with NaN afterwards (cuFFT's C2R may destroy
// its input), and the indices of a launch can be visited backwards or scattered (set_order): on the
// GPU they run concurrently, so a body whose result depends on the order — it reads what another
// index of the same launch writes — races there, and gives other bits here (test_cuda_emulation
// compares the orders).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "engine/backend/cuda/exec.hpp"

namespace routescope::cuda {

class HostExec {
public:
    /// Starts an op: scratch from the beginning, poisoned.
    void begin_op() {
        top_ = 0;
        if (!arena_.empty()) std::memset(arena_.data(), 0xFF, arena_.size());
    }

    /// The order in which each() and reduce_rows() visit a launch's indices (rows): 0, 1, …;
    /// n − 1, …, 0; or scattered, k ↦ k·p mod n for a prime p (a permutation of [0, n) that
    /// does not follow the memory order). A correct op gives the same bits in every order.
    enum class Order : std::uint8_t { forward, reverse, scattered };
    void set_order(Order o) { order_ = o; }

    template <class Body>
    void each(std::int64_t n, const Body& body) {
        for (std::int64_t k = 0; k < n; ++k)
            body(index(k, n));
    }
    template <class Body>
    void reduce_rows(std::int64_t rows, std::int64_t width, const Body& body) {
        for (std::int64_t k = 0; k < rows; ++k) {
            const std::int64_t r = index(k, rows);
            body.finish(r, reduce_row_in_warp_order(body, r, width));
        }
    }

    /// How float GEMMs multiply from now on (GemmInputs; fp32 at construction).
    void set_gemm_inputs(GemmInputs g) { gemm_bits_ = mantissa_bits(g); }

    template <class T>
    void gemm(const Gemm<T>& g) {
        if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0) throw std::invalid_argument("gemm: size");
        if (g.lda < std::max(1, g.ta == Trans::n ? g.m : g.k) ||
            g.ldb < std::max(1, g.tb == Trans::n ? g.k : g.n) || g.ldc < std::max(1, g.m))
            throw std::invalid_argument("gemm: leading dimension smaller than cuBLAS allows");
        for (int b = 0; b < g.batch; ++b) {
            const T* A = g.A + b * g.stride_a;
            const T* B = g.B + b * g.stride_b;
            T* C = g.C + b * g.stride_c;
            for (int j = 0; j < g.n; ++j)
                for (int i = 0; i < g.m; ++i) {
                    T sum = 0;
                    for (int p = 0; p < g.k; ++p) {
                        const T a = g.ta == Trans::n ? A[i + static_cast<std::int64_t>(p) * g.lda]
                                                     : A[p + static_cast<std::int64_t>(i) * g.lda];
                        const T bb = g.tb == Trans::n ? B[p + static_cast<std::int64_t>(j) * g.ldb]
                                                      : B[j + static_cast<std::int64_t>(p) * g.ldb];
                        if constexpr (std::is_same_v<T, float>)
                            sum += round_mantissa(a, gemm_bits_) * round_mantissa(bb, gemm_bits_);
                        else
                            sum += a * bb;
                    }
                    T& c = C[i + static_cast<std::int64_t>(j) * g.ldc];
                    c = g.beta == T(0) ? g.alpha * sum : g.alpha * sum + g.beta * c;
                }
        }
    }

    template <class T>
    void rfft(const T* in, Complex<T>* out, int n, int batch) {
        const int bins = n / 2 + 1;
        const Twiddles& t = twiddles(n);
        for (int b = 0; b < batch; ++b)
            for (int k = 0; k < bins; ++k) {
                long double re = 0, im = 0;
                for (int j = 0; j < n; ++j) {
                    const auto m = static_cast<std::size_t>((static_cast<std::int64_t>(j) * k) % n);
                    re += in[static_cast<std::int64_t>(b) * n + j] * t.forward_cos[m];
                    im += in[static_cast<std::int64_t>(b) * n + j] * t.forward_sin[m];
                }
                out[static_cast<std::int64_t>(b) * bins + k] = {static_cast<T>(re),
                                                                static_cast<T>(im)};
            }
    }

    template <class T>
    void irfft(Complex<T>* in, T* out, int n, int batch) {
        const int bins = n / 2 + 1;
        const Twiddles& t = twiddles(n);
        for (int b = 0; b < batch; ++b) {
            const Complex<T>* X = in + static_cast<std::int64_t>(b) * bins;
            for (int j = 0; j < n; ++j) {
                long double sum = X[0].re;
                for (int k = 1; k < bins; ++k) {
                    const auto m = static_cast<std::size_t>((static_cast<std::int64_t>(j) * k) % n);
                    const long double c = t.inverse_cos[m], s = t.inverse_sin[m];
                    const long double term = X[k].re * c - X[k].im * s;
                    sum += (2 * k == n) ? static_cast<long double>(X[k].re) * c : 2 * term;
                }
                out[static_cast<std::int64_t>(b) * n + j] = static_cast<T>(sum);
            }
        }
        const T nan = std::numeric_limits<T>::quiet_NaN();
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(batch) * bins; ++i)
            in[i] = {nan, nan};
    }

    /// Scratch within what reserve() set aside: more than the plan measured is a bug in the op
    /// (on the GPU it would overrun the workspace prepare() made).
    template <class U>
    U* scratch(std::int64_t count) {
        const std::size_t at = scratch_bump(top_, static_cast<std::size_t>(count) * sizeof(U));
        if (top_ > arena_.size())
            throw std::logic_error("HostExec: an op asked for more scratch than its plan measured");
        return reinterpret_cast<U*>(arena_.data() + at);
    }

    /// Sets aside the scratch an op's plan (PlanExec) measured.
    void reserve(std::size_t bytes) {
        if (arena_.size() < bytes) arena_.resize(bytes);
    }

private:
    /// cos and sin of ∓2π·m/n for m in [0, n), in long double: the DFTs' factors, computed once
    /// per size (the trigonometric calls were most of an emulated training step's time). The
    /// expressions are those the sums used to evaluate per term, so the values are the same bits.
    struct Twiddles {
        int n = 0;
        std::vector<long double> forward_cos, forward_sin, inverse_cos, inverse_sin;
    };
    const Twiddles& twiddles(int n) {
        for (const Twiddles& t : twiddles_)
            if (t.n == n) return t;
        Twiddles t;
        t.n = n;
        const auto size = static_cast<std::size_t>(n);
        t.forward_cos.resize(size);
        t.forward_sin.resize(size);
        t.inverse_cos.resize(size);
        t.inverse_sin.resize(size);
        for (int m = 0; m < n; ++m) {
            const long double f =
                -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(m) / n;
            const long double i =
                2.0L * std::numbers::pi_v<long double> * static_cast<long double>(m) / n;
            t.forward_cos[static_cast<std::size_t>(m)] = std::cos(f);
            t.forward_sin[static_cast<std::size_t>(m)] = std::sin(f);
            t.inverse_cos[static_cast<std::size_t>(m)] = std::cos(i);
            t.inverse_sin[static_cast<std::size_t>(m)] = std::sin(i);
        }
        twiddles_.push_back(std::move(t));
        return twiddles_.back();
    }

    /// The k-th index visited of a launch of n (see Order).
    std::int64_t index(std::int64_t k, std::int64_t n) const {
        constexpr std::int64_t kPrime = 1000003;  // coprime with every n it does not divide
        switch (order_) {
            case Order::forward:
                return k;
            case Order::reverse:
                return n - 1 - k;
            case Order::scattered:
                // k·p < 2⁶³ for every n below 9·10¹²; a larger launch (or a multiple of p) is
                // visited backwards.
                if (n % kPrime == 0 || n > std::numeric_limits<std::int64_t>::max() / kPrime)
                    return n - 1 - k;
                return k * kPrime % n;
        }
        return k;
    }
    Order order_ = Order::forward;
    std::vector<std::byte> arena_;
    std::size_t top_ = 0;
    int gemm_bits_ = 23;             ///< mantissa_bits of the float GEMMs' inputs
    std::deque<Twiddles> twiddles_;  ///< one per DFT size seen (a deque keeps references valid)
};

}  // namespace routescope::cuda
