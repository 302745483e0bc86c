#pragma once
// Every analysis of ANALYSES.md through the result cache (result_cache.hpp): the key is the
// fingerprints of the inputs, the analysis and every field of its options. What the workbench's
// views call; the CLI, which runs one analysis per process, calls the analyses directly.
#include <memory>
#include <string>
#include <vector>

#include "analysis/anisotropy.hpp"
#include "analysis/gates.hpp"
#include "analysis/kernels.hpp"
#include "analysis/length_accuracy.hpp"
#include "analysis/pca.hpp"
#include "analysis/result_cache.hpp"
#include "analysis/transitions.hpp"

namespace routescope::analysis {

std::shared_ptr<const AnisotropyResult> cached_anisotropy(
    const DumpReader& dump, const AnisotropyOptions& options,
    ResultCache& cache = ResultCache::shared());

std::shared_ptr<const PcaResult> cached_pca_redundancy(const DumpReader& dump,
                                                       const PcaOptions& options,
                                                       ResultCache& cache = ResultCache::shared());

std::shared_ptr<const GatesResult> cached_gate_statistics(
    const DumpReader& dump, const std::vector<int>& layers, const GatesOptions& options,
    ResultCache& cache = ResultCache::shared());

std::shared_ptr<const TransitionsResult> cached_layer_transitions(
    const DumpReader& dump, const TransitionsOptions& options,
    ResultCache& cache = ResultCache::shared());

std::shared_ptr<const LengthAccuracyResult> cached_length_accuracy(
    const DumpReader& a, const DumpReader* b, const LengthAccuracyOptions& options,
    ResultCache& cache = ResultCache::shared());

std::shared_ptr<const KernelsResult> cached_kernels_from_dump(
    const DumpReader& dump, const std::vector<int>& layers, const KernelOptions& options,
    ResultCache& cache = ResultCache::shared());

/// Checkpoints are fingerprinted like dumps (fingerprint_file) on every call.
std::shared_ptr<const KernelsResult> cached_kernels_from_checkpoint(
    const std::string& path, const std::vector<int>& layers, const KernelOptions& options,
    ResultCache& cache = ResultCache::shared());

std::shared_ptr<const KernelChangeResult> cached_kernel_change(
    const std::string& before, const std::string& after, const std::vector<int>& layers,
    const KernelOptions& options, ResultCache& cache = ResultCache::shared());

}  // namespace routescope::analysis
