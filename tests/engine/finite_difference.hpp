#pragma once
// Central finite differences in double precision, the oracle of every op's backward
// (ARCHITECTURE.md: "every op: finite-difference gradient check on tiny shapes").
//
// An op's forward is wrapped as a scalar loss ℓ = Σ r ⊙ out with a fixed random r; the op's
// backward, called with dout = r, must then produce ∂ℓ/∂input. Each input element is perturbed by
// ±h and (ℓ(x+h) − ℓ(x−h)) / 2h compared with the analytic value.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace routescope::test {

/// h = 1e-5: truncation error ~h²·ℓ''' ≈ 1e-10 and rounding ~ε·|ℓ|/h ≈ 1e-10 for the O(1)–O(10)
/// losses of these tiny shapes, both far below the tolerance.
inline constexpr double kFdStep = 1e-5;
/// The stated tolerance: |analytic − numeric| ≤ 1e-6 · max(|numeric|, 1e-2), i.e. relative 1e-6,
/// absolute 1e-8 for gradients near zero.
inline constexpr double kFdTolerance = 1e-6;
/// Gradient buffers are pre-filled with this before a backward, and it is subtracted after: the
/// check thereby also proves that every backward ACCUMULATES (+=) rather than overwrites.
inline constexpr double kPrefill = 0.25;

inline std::vector<double> random_vector(std::size_t n, std::mt19937& gen, double scale = 1.0) {
    std::normal_distribution<double> dist(0.0, scale);
    std::vector<double> v(n);
    for (auto& x : v)
        x = dist(gen);
    return v;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}

/// Worst scaled error over the elements of x; `analytic` is the gradient buffer after the
/// backward (still holding the prefill). `where` receives the worst element's description.
inline double fd_max_error(std::vector<double>& x, const std::vector<double>& analytic,
                           const std::function<double()>& loss, std::string* where = nullptr) {
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double saved = x[i];
        x[i] = saved + kFdStep;
        const double up = loss();
        x[i] = saved - kFdStep;
        const double down = loss();
        x[i] = saved;
        const double numeric = (up - down) / (2 * kFdStep);
        const double a = analytic[i] - kPrefill;
        const double err = std::fabs(a - numeric) / std::max(std::fabs(numeric), 1e-2);
        if (err > worst) {
            worst = err;
            if (where) {
                *where = "element " + std::to_string(i) + ": analytic " + std::to_string(a) +
                         " numeric " + std::to_string(numeric);
            }
        }
    }
    return worst;
}

inline std::vector<double> prefilled(std::size_t n) {
    return std::vector<double>(n, kPrefill);
}

}  // namespace routescope::test
