#pragma once
// Initial values of the S4D parameters of one BiGS SSM (MODELS.md, "The SSM of BiGS").
//
//   A_re [H, N] = −0.5
//   A_im [H, N] = HiPPO-LegS (default), "lin": π·n, "inv": (N/π)(N/(2n+1) − 1),  n = 0..N−1
//   C    [H, N, 2] (real, imag): each part ~ normal(0, √0.5)
//   D    [H] = 1
//   log_step [H] ~ uniform[log dt_min, log dt_max]
//
// HiPPO-LegS: LegS_nk = √(2n+1)√(2k+1) (n > k), n+1 (n = k), 0 (n < k); S = −LegS + P Pᵀ with
// P_n = √(n + 0.5). S = −0.5·I + S_skew, and A_im = the eigenvalues of the Hermitian matrix
// −i·S_skew in ascending order. All N modes are kept (no conjugate-pair halving).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace routescope::ops {

enum class AImInit { hippo, lin, inv };

/// "hippo" | "lin" | "inv" (config key model.ssm.a_im_init); anything else is a ConfigError.
AImInit parse_a_im_init(const std::string& name);
std::string to_string(AImInit init);

/// The N imaginary parts of A for one kernel, in double (the HiPPO ones ascending).
std::vector<double> a_im_init(AImInit init, int n_modes);

/// The random sources of ssm_init. Both are called in a fixed order (see ssm_init) so that a
/// caller's RNG alone decides the draws; the engine passes its own generator here.
struct SsmInitSources {
    std::function<double()> standard_normal;  ///< N(0, 1)
    std::function<double()> uniform01;        ///< U[0, 1)
};

/// Hyperparameters of the initialisation (config keys model.ssm.*).
struct SsmInitConfig {
    int n_modes = 64;   ///< N
    int n_kernels = 1;  ///< H
    AImInit a_im = AImInit::hippo;
    double dt_min = 0.01;
    double dt_max = 1.0;
};

/// Fills the five parameter arrays of one SSM. Draws, in this order: for h, for n: C re then
/// C im (standard_normal · √0.5); then for h: log_step (log dt_min + u·(log dt_max − log dt_min)).
template <typename T>
void ssm_init(T* A_re, T* A_im, T* C, T* D, T* log_step, const SsmInitConfig& config,
              const SsmInitSources& sources);

/// The same with a std::mt19937_64 seeded by `seed` behind portable normal/uniform transforms
/// (53-bit uniform, Box–Muller), so the draws do not depend on the standard library.
template <typename T>
void ssm_init(T* A_re, T* A_im, T* C, T* D, T* log_step, const SsmInitConfig& config,
              std::uint64_t seed);

}  // namespace routescope::ops
