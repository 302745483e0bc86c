#include "engine/ops/hippo.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <numbers>
#include <random>

#include "engine/core/error.hpp"

namespace routescope::ops {

AImInit parse_a_im_init(const std::string& name) {
    if (name == "hippo") return AImInit::hippo;
    if (name == "lin") return AImInit::lin;
    if (name == "inv") return AImInit::inv;
    throw ConfigError("model.ssm.a_im_init: unknown value \"" + name +
                      "\" (expected hippo, lin or inv)");
}

std::string to_string(AImInit init) {
    switch (init) {
        case AImInit::hippo:
            return "hippo";
        case AImInit::lin:
            return "lin";
        case AImInit::inv:
            return "inv";
    }
    return "?";
}

namespace {

// The eigenvalues of −i·S_skew, where S_skew is the skew part of the normal-plus-low-rank form of
// HiPPO-LegS (MODELS.md). Double precision: the largest magnitude for N = 64 is ≈ 1303.
std::vector<double> hippo_legs_a_im(int N) {
    Eigen::MatrixXd S(N, N);
    for (int n = 0; n < N; ++n) {
        for (int k = 0; k < N; ++k) {
            double legs = 0;
            if (n > k) legs = std::sqrt(2.0 * n + 1) * std::sqrt(2.0 * k + 1);
            if (n == k) legs = n + 1.0;
            const double pp = std::sqrt(n + 0.5) * std::sqrt(k + 0.5);
            S(n, k) = -legs + pp;
        }
    }
    // S = −0.5·I + S_skew.
    const Eigen::MatrixXd S_skew = S + 0.5 * Eigen::MatrixXd::Identity(N, N);
    const Eigen::MatrixXcd M = std::complex<double>(0, -1) * S_skew.cast<std::complex<double>>();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> solver(M, Eigen::EigenvaluesOnly);
    if (solver.info() != Eigen::Success)
        throw Error("HiPPO-LegS init: the eigen-solver did not converge for N = " +
                    std::to_string(N));
    const Eigen::VectorXd values = solver.eigenvalues();  // ascending (Eigen's documented order)
    return std::vector<double>(values.data(), values.data() + N);
}

}  // namespace

std::vector<double> a_im_init(AImInit init, int n_modes) {
    if (n_modes <= 0)
        throw ConfigError("model.ssm.n_modes: must be positive, got " + std::to_string(n_modes));
    const int N = n_modes;
    std::vector<double> a(static_cast<std::size_t>(N));
    switch (init) {
        case AImInit::hippo:
            return hippo_legs_a_im(N);
        case AImInit::lin:
            for (int n = 0; n < N; ++n)
                a[n] = std::numbers::pi * n;
            break;
        case AImInit::inv:
            for (int n = 0; n < N; ++n)
                a[n] = N / std::numbers::pi * (N / (2.0 * n + 1) - 1);
            break;
    }
    return a;
}

template <typename T>
void ssm_init(T* A_re, T* A_im, T* C, T* D, T* log_step, const SsmInitConfig& config,
              const SsmInitSources& sources) {
    const int H = config.n_kernels, N = config.n_modes;
    if (H <= 0)
        throw ConfigError("model.ssm.n_kernels: must be positive, got " + std::to_string(H));
    if (!(config.dt_min > 0) || !(config.dt_max >= config.dt_min))
        throw ConfigError("model.ssm.dt_min/dt_max: need 0 < dt_min <= dt_max, got " +
                          std::to_string(config.dt_min) + ", " + std::to_string(config.dt_max));
    const std::vector<double> a_im = a_im_init(config.a_im, N);
    const double c_std = std::sqrt(0.5);
    for (int h = 0; h < H; ++h) {
        for (int n = 0; n < N; ++n) {
            const std::size_t i = static_cast<std::size_t>(h) * N + n;
            A_re[i] = T(-0.5);
            A_im[i] = static_cast<T>(a_im[n]);
            C[2 * i] = static_cast<T>(c_std * sources.standard_normal());
            C[2 * i + 1] = static_cast<T>(c_std * sources.standard_normal());
        }
    }
    const double lo = std::log(config.dt_min), hi = std::log(config.dt_max);
    for (int h = 0; h < H; ++h) {
        D[h] = T(1);
        log_step[h] = static_cast<T>(lo + sources.uniform01() * (hi - lo));
    }
}

template <typename T>
void ssm_init(T* A_re, T* A_im, T* C, T* D, T* log_step, const SsmInitConfig& config,
              std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    // 53 random bits → [0, 1) exactly representable in double.
    auto uniform = [&gen] { return static_cast<double>(gen() >> 11) * 0x1.0p-53; };
    SsmInitSources sources;
    sources.uniform01 = uniform;
    sources.standard_normal = [&uniform] {
        const double u1 = 1.0 - uniform();  // (0, 1]: the log stays finite
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    };
    ssm_init(A_re, A_im, C, D, log_step, config, sources);
}

template void ssm_init<float>(float*, float*, float*, float*, float*, const SsmInitConfig&,
                              const SsmInitSources&);
template void ssm_init<double>(double*, double*, double*, double*, double*, const SsmInitConfig&,
                               const SsmInitSources&);
template void ssm_init<float>(float*, float*, float*, float*, float*, const SsmInitConfig&,
                              std::uint64_t);
template void ssm_init<double>(double*, double*, double*, double*, double*, const SsmInitConfig&,
                               std::uint64_t);

}  // namespace routescope::ops
