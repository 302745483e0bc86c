#include "analysis/cached_analyses.hpp"

namespace routescope::analysis {

// Each key lists every field of the options struct: a field left out would let two different
// requests share one result.

std::shared_ptr<const AnisotropyResult> cached_anisotropy(const DumpReader& dump,
                                                          const AnisotropyOptions& o,
                                                          ResultCache& cache) {
    const nlohmann::json p = {{"layer", o.layer},
                              {"sentence_vectors", o.sentence_vectors},
                              {"m", o.m},
                              {"seed", o.seed},
                              {"bins", o.bins},
                              {"centred", o.centred},
                              {"spectrum", o.spectrum}};
    return cache.get_or_compute<AnisotropyResult>(
        ResultCache::key("anisotropy", {dump.fingerprint().hash}, p),
        [&] { return anisotropy(dump, o); });
}

std::shared_ptr<const PcaResult> cached_pca_redundancy(const DumpReader& dump, const PcaOptions& o,
                                                       ResultCache& cache) {
    const nlohmann::json p = {{"layer", o.layer},
                              {"thresholds", o.thresholds},
                              {"energy", o.energy},
                              {"max_sentences", o.max_sentences},
                              {"seed", o.seed},
                              {"bucket_width", o.bucket_width},
                              {"curve_points", o.curve_points},
                              {"global_m", o.global_m}};
    return cache.get_or_compute<PcaResult>(ResultCache::key("pca", {dump.fingerprint().hash}, p),
                                           [&] { return pca_redundancy(dump, o); });
}

std::shared_ptr<const GatesResult> cached_gate_statistics(const DumpReader& dump,
                                                          const std::vector<int>& layers,
                                                          const GatesOptions& o,
                                                          ResultCache& cache) {
    const nlohmann::json p = {
        {"layers", layers}, {"bins", o.bins}, {"max_sentences", o.max_sentences}, {"seed", o.seed}};
    return cache.get_or_compute<GatesResult>(
        ResultCache::key("gates", {dump.fingerprint().hash}, p),
        [&] { return gate_statistics(dump, layers, o); });
}

std::shared_ptr<const TransitionsResult> cached_layer_transitions(const DumpReader& dump,
                                                                  const TransitionsOptions& o,
                                                                  ResultCache& cache) {
    const nlohmann::json p = {{"max_sentences", o.max_sentences}, {"seed", o.seed}};
    return cache.get_or_compute<TransitionsResult>(
        ResultCache::key("transitions", {dump.fingerprint().hash}, p),
        [&] { return layer_transitions(dump, o); });
}

std::shared_ptr<const LengthAccuracyResult> cached_length_accuracy(const DumpReader& a,
                                                                   const DumpReader* b,
                                                                   const LengthAccuracyOptions& o,
                                                                   ResultCache& cache) {
    const nlohmann::json p = {{"variable", o.variable},
                              {"binning", o.binning},
                              {"bins", o.bins},
                              {"edges", o.edges},
                              {"width", o.width}};
    std::vector<std::string> inputs = {a.fingerprint().hash};
    if (b) inputs.push_back(b->fingerprint().hash);
    return cache.get_or_compute<LengthAccuracyResult>(
        ResultCache::key("length-accuracy", inputs, p), [&] { return length_accuracy(a, b, o); });
}

namespace {
nlohmann::json kernel_key(const std::vector<int>& layers, const KernelOptions& o) {
    return {{"layers", layers}, {"radius", o.radius}, {"length", o.length}, {"group", o.group}};
}
}  // namespace

std::shared_ptr<const KernelsResult> cached_kernels_from_dump(const DumpReader& dump,
                                                              const std::vector<int>& layers,
                                                              const KernelOptions& o,
                                                              ResultCache& cache) {
    return cache.get_or_compute<KernelsResult>(
        ResultCache::key("kernels-dump", {dump.fingerprint().hash}, kernel_key(layers, o)),
        [&] { return kernels_from_dump(dump, layers, o); });
}

std::shared_ptr<const KernelsResult> cached_kernels_from_checkpoint(const std::string& path,
                                                                    const std::vector<int>& layers,
                                                                    const KernelOptions& o,
                                                                    ResultCache& cache) {
    return cache.get_or_compute<KernelsResult>(
        ResultCache::key("kernels-checkpoint", {fingerprint_file(path).hash},
                         kernel_key(layers, o)),
        [&] { return kernels_from_checkpoint(path, layers, o); });
}

std::shared_ptr<const KernelChangeResult> cached_kernel_change(const std::string& before,
                                                               const std::string& after,
                                                               const std::vector<int>& layers,
                                                               const KernelOptions& o,
                                                               ResultCache& cache) {
    return cache.get_or_compute<KernelChangeResult>(
        ResultCache::key("kernel-change",
                         {fingerprint_file(before).hash, fingerprint_file(after).hash},
                         kernel_key(layers, o)),
        [&] { return kernel_change(before, after, layers, o); });
}

}  // namespace routescope::analysis
