#pragma once
// SSM kernels (ANALYSES.md §1; the BiGS paper's Figures 3 and 4): per layer the relative-position
// kernel over r = −R..R, its min-max scaled magnitude, the full-length kernels, their frequency
// response, the discretised poles, the effective length; the change between two checkpoints; and
// gMLP's spatial matrices from a dump's /mixing.
#include <nlohmann/json.hpp>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct KernelOptions {
    int radius = 10;            ///< R (up to L − 1)
    std::int64_t length = 512;  ///< L of kernels computed from checkpoint parameters
    /// The channel group whose kernels are analysed, 0..H−1 of a model with H = model.ssm.n_kernels
    /// kernels per SSM (group g acts on channels [g·d/H, (g+1)·d/H)); from a dump, groups > 0
    /// need its /kernels/<l>/<direction>_groups (dumps of older versions hold group 0 only).
    std::int64_t group = 0;
};

/// One direction's S4D parameters (MODELS.md, "The SSM of BiGS"): one group h of its H.
struct S4dParameters {
    std::vector<double> a_re, a_im, c_re, c_im;  ///< [N]
    double d = 0, log_step = 0;
    std::int64_t groups = 1;  ///< H in the checkpoint (only group 0 is analysed)
};

/// K[l] = Re(Σ_n C_n (exp(ΔA_n) − 1)/A_n · exp(l·ΔA_n)), A_n = min(A_re, −1e−4) + i·A_im,
/// Δ = exp(log_step), l = 0..L−1 (MODELS.md), evaluated in double with exp(l·ΔA_n) taken directly.
std::vector<double> s4d_kernel(const S4dParameters& p, std::int64_t length);
/// exp(Δ·A_n): |λ| → 1 means long memory.
std::vector<std::complex<double>> s4d_poles(const S4dParameters& p);

/// value(r) for r = −R..R: K_f[−r] for r < 0, K_b[r] for r > 0, mean of K_f[0] + D_f and
/// K_b[0] + D_b at r = 0. R is clamped to the kernels' length − 1. A causal layer (`backward`
/// empty: forward SSMs only): 0 for r > 0 and K_f[0] + D_f at r = 0.
std::vector<double> relative_kernel(const std::vector<double>& forward,
                                    const std::vector<double>& backward, double d_forward,
                                    double d_backward, int radius);
/// |v| scaled to [0, 1] by its own min and max (all 0 when max = min).
std::vector<double> min_max_scaled(const std::vector<double>& values);
/// |rfft(K)| (FFTW, length ⌊n/2⌋ + 1).
std::vector<double> frequency_response(const std::vector<double>& kernel);
/// Smallest m with Σ_{|r|≤m} |v(r)| ≥ 90% of Σ|v| over the full relative kernel (centre index c).
std::int64_t effective_length(const std::vector<double>& full_relative);

struct LayerKernel {
    int layer = 0;
    std::vector<double> forward, backward;  ///< backward empty: a causal layer
    double d_forward = 0, d_backward = 0;
    std::vector<double> relative, scaled;  ///< r = −R..R
    std::vector<double> response_forward, response_backward;
    std::vector<std::complex<double>> poles_forward, poles_backward;  ///< checkpoint only
    std::int64_t effective_length = 0;
};

struct MixingMatrix {
    int layer = 0;
    RowMatrixF w;
};

struct KernelsResult {
    Provenance provenance;
    std::string source;  ///< "dump" or "checkpoint"
    int radius = 0;
    std::int64_t group = 0;   ///< the channel group analysed
    std::int64_t groups = 1;  ///< H, the kernels per SSM the input holds (1 when unknown)
    std::vector<LayerKernel> layers;
    std::vector<MixingMatrix> mixing;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// `layers` empty: all. A dump without /kernels (nor /mixing) is a ConfigError.
KernelsResult kernels_from_dump(const DumpReader& dump, const std::vector<int>& layers,
                                const KernelOptions& options);
KernelsResult kernels_from_checkpoint(const std::string& path, const std::vector<int>& layers,
                                      const KernelOptions& options);

struct KernelChange {
    int layer = 0;
    std::vector<double> before, after, difference;  ///< relative kernels, r = −R..R
    double score = 0;  ///< ‖K_after − K_before‖₂ / ‖K_before‖₂, full length
};

struct KernelChangeResult {
    Provenance provenance;
    int radius = 0;
    std::vector<KernelChange> layers;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// Two checkpoints of the same architecture; throws ConfigError when their SSM layers differ.
KernelChangeResult kernel_change(const std::string& before, const std::string& after,
                                 const std::vector<int>& layers, const KernelOptions& options);

}  // namespace routescope::analysis
