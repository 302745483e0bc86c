// Benchmark program (not a test; docs/benchmarks.md "## Analysis"): times anisotropy and PCA
// redundancy on a dump on disk and reports peak RSS.
//   bench_analysis anisotropy DUMP LAYER M [--no-spectrum]
//   bench_analysis pca DUMP LAYER SENTENCES
// Prints one JSON line: seconds (open, analysis), peak RSS in MB, and the sample written out so
// the numpy baseline (tests/reference/analysis/bench_reference.py) uses the same indices.
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "analysis/anisotropy.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/pca.hpp"

using namespace routescope::analysis;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
double peak_rss_mb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: bench_analysis anisotropy|pca DUMP LAYER M|SENTENCES [--no-spectrum] "
                     "[--sample-out F]\n";
        return 2;
    }
    const std::string kind = argv[1], path = argv[2];
    const int layer = std::stoi(argv[3]);
    const std::int64_t count = std::stoll(argv[4]);
    bool spectrum = true;
    std::string sample_out;
    for (int i = 5; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--no-spectrum")) spectrum = false;
        if (!std::strcmp(argv[i], "--sample-out") && i + 1 < argc) sample_out = argv[++i];
    }
    try {
        auto t0 = std::chrono::steady_clock::now();
        DumpReader dump(path);
        const double open_s = seconds_since(t0);
        nlohmann::json out = {{"kind", kind}, {"open_s", open_s}};
        t0 = std::chrono::steady_clock::now();
        if (kind == "anisotropy") {
            AnisotropyOptions o;
            o.layer = layer;
            o.m = count;
            o.spectrum = spectrum;
            const auto r = anisotropy(dump, o);
            out["analysis_s"] = seconds_since(t0);
            out["m"] = r.m_used;
            out["mean_cos"] = r.stats.mean;
            if (!sample_out.empty()) std::ofstream(sample_out) << r.to_json().dump();
        } else {
            PcaOptions o;
            o.layer = layer;
            o.max_sentences = count;
            o.global_m = 0;
            const auto r = pca_redundancy(dump, o);
            out["analysis_s"] = seconds_since(t0);
            out["sentences"] = r.rows.size();
            out["mean_k90"] = r.overall.mean_k[0];
            if (!sample_out.empty()) std::ofstream(sample_out) << r.to_json().dump();
        }
        out["peak_rss_mb"] = peak_rss_mb();
        std::cout << out.dump() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "bench_analysis: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
