// routescope-cli analyze KIND: runs one analysis of ANALYSES.md on dumps or checkpoints and writes
// its result (with provenance) as JSON, and optionally as CSV.
//   routescope-cli analyze anisotropy --dump run.dump.h5 --layer all --out aniso.json --csv
//   aniso.csv routescope-cli analyze flops --arch bigs --layers 23 --d-model 1024 --lengths
//   128,512,1024,4096 --out f.json
// Exit codes (command.hpp): 0 done, 1 the input file breaks its format, 2 usage error / unreadable
// input / an option the input cannot satisfy (a layer not in the dump), 3 runtime failure.
#include <sys/stat.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "analysis/anisotropy.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/flops.hpp"
#include "analysis/gates.hpp"
#include "analysis/hdf5_lock.hpp"
#include "analysis/implicit_attention.hpp"
#include "analysis/induction_heads.hpp"
#include "analysis/kernels.hpp"
#include "analysis/length_accuracy.hpp"
#include "analysis/pca.hpp"
#include "analysis/similarity.hpp"
#include "analysis/transitions.hpp"
#include "app/cli/atomic_text_file.hpp"
#include "app/cli/command.hpp"
#include "app/cli/input_check.hpp"
#include "app/cli/output_guard.hpp"
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::cli {
namespace {

using namespace routescope::analysis;

struct AnalyzeArgs {
    std::string kind;
    std::vector<std::string> dumps, checkpoints;
    std::vector<std::string> predictions;  ///< length-accuracy: eval --out's JSON lines
    InputCheck check;  ///< --check / --no-check: the contained check of every input
    std::string layer = "all";
    std::string out, csv;
    // anisotropy / pca sampling
    std::int64_t m = 5000;
    std::uint64_t seed = 0;
    int bins = 0;  // 0: the analysis's default (anisotropy 100, length-accuracy 5)
    bool centred = false, sentence = false, no_spectrum = false;
    // pca
    std::vector<double> thresholds;
    bool energy = false;
    std::int64_t max_sentences = 0, bucket_width = 50, global_m = 5000;
    bool uncentred = false;    ///< pca: the uncentred SVD (the S-LSTM paper's)
    std::int64_t passage = 0;  ///< pca: passages of this many tokens (0: sentences)
    int pca_bootstrap = 0;     ///< pca: bootstrap resamples of the overall mean k
    // length-accuracy
    std::string variable = "length", binning = "quantile";
    std::vector<double> edges;
    double width = 0;
    /// Given on the command line (a value alone cannot say: --width 0 was taken for "not given").
    bool width_given = false, edges_given = false, bins_given = false, binning_given = false;
    // flops
    std::string arch = "bigs";
    std::int64_t layers = 23, d_model = 1024, intermediate = 0, state = 0;
    std::vector<std::int64_t> lengths;
    // kernels
    int radius = 10;
    std::int64_t group = 0;  ///< kernels, kernel-change: the channel group
    std::int64_t length = 512;
    // similarity
    std::string vectors = "token", layer_a, layer_b;
    bool mode_given = false, head_given = false;  ///< --mode / --head on the command line
    std::vector<std::string> measures;
    SimilarityOptions similarity;
    int length_bins = 0;  ///< similarity: --length-bins k (0: none)
    std::string scatter;  ///< similarity: --scatter LA,LB (the first canonical pair of one cell)
    bool scatter_given = false;
    // implicit-attention
    std::int64_t example = 0;
    std::string mode = "sum", normalise = "raw";
    int head = -1;
    // induction-heads
    std::string marker = "trigger";
};

/// The longest kernel `kernels` and `kernel-change` compute from a checkpoint's parameters (2^20,
/// data.task_params.max_len's limit): --length 2147483647 grew until the OOM killer ended the
/// run, and a length past 2^31 did not fit the FFT's int.
constexpr std::int64_t kMaxKernelLength = std::int64_t{1} << 20;
/// What one layer's kernels from a checkpoint take per position at the peak: the two kernels,
/// their responses, the full relative kernel of the effective length, the JSON values and their
/// text (measured: 230 MB for one layer at 2^20).
constexpr double kKernelBytesPerPosition = 224;

/// The SSM layers of a checkpoint (/params/layers.<i>.ssm_forward.A_re), as the kernels analysis
/// counts them; 0 when they cannot be read (the analysis then says why).
std::int64_t checkpoint_ssm_layers(const std::string& path) {
    try {
        Hdf5Lock lock;
        h5::quiet_errors();
        H5::H5File file = h5::open_read(path);
        std::int64_t n = 0;
        while (h5::is_dataset(file, "params/layers." + std::to_string(n) + ".ssm_forward.A_re"))
            ++n;
        file.close();
        return n;
    } catch (const std::exception&) {
        return 0;
    } catch (const H5::Exception&) {
        return 0;
    }
}

const std::vector<std::string> kKinds = {
    "kernels",    "kernel-change",      "gates",           "anisotropy",
    "pca",        "transitions",        "length-accuracy", "flops",
    "similarity", "implicit-attention", "induction-heads"};

/// A layer index given to `option` (--layer, --layer-a, --layer-b, --scatter): the message names
/// the option the user gave (--scatter a,b and --layer-a x were said to be "--layer"'s).
int parse_layer(const std::string& option, const std::string& text, bool all_allowed = true) {
    try {
        std::size_t used = 0;
        const int layer = std::stoi(text, &used);
        if (used == text.size() && layer >= 0) return layer;
    } catch (const std::exception&) {
    }
    throw ConfigError(option + " must be " + (all_allowed ? "'all' or " : "") +
                      "a layer index, got '" + text + "'");
}

/// --scatter LA,LB: the two layer indices.
std::pair<int, int> parse_scatter(const std::string& text) {
    const auto comma = text.find(',');
    if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
        throw ConfigError("--scatter: give two layers, LA,LB (got '" + text + "')");
    return {parse_layer("--scatter", text.substr(0, comma), false),
            parse_layer("--scatter", text.substr(comma + 1), false)};
}

/// The layers named by `option` ("all" or one index), checked against the dump.
std::vector<int> selected_layers(const DumpReader& dump, const std::string& text,
                                 bool from_one = false, const std::string& option = "--layer") {
    if (text == "all") {
        std::vector<int> out;
        for (int l : dump.layers())
            if (!from_one || l >= 1) out.push_back(l);
        if (out.empty()) throw ConfigError(dump.path() + ": the dump has no layers to analyse");
        return out;
    }
    const int layer = parse_layer(option, text);
    dump.layer(layer);  // throws naming the layers present
    return {layer};
}

const DumpReader& need_dump(const std::vector<std::unique_ptr<DumpReader>>& dumps,
                            const std::string& kind, std::size_t count = 1) {
    if (dumps.size() < count)
        throw ConfigError("analyze " + kind + " needs " +
                          (count == 1 ? "--dump FILE" : "two --dump FILE options"));
    return *dumps.front();
}

struct Output {
    nlohmann::json results = nlohmann::json::array();
    CsvTable table;
    void add(const nlohmann::json& json, const CsvTable& t) {
        results.push_back(json);
        if (table.columns.empty()) table.columns = t.columns;
        table.rows.insert(table.rows.end(), t.rows.begin(), t.rows.end());
    }
};

Output run_analysis(const AnalyzeArgs& a) {
    std::vector<std::unique_ptr<DumpReader>> dumps;
    for (const auto& path : a.dumps)
        dumps.push_back(std::make_unique<DumpReader>(path));
    Output out;
    if (a.kind == "anisotropy") {
        const DumpReader& dump = need_dump(dumps, a.kind);
        for (int layer : selected_layers(dump, a.layer)) {
            AnisotropyOptions o;
            o.layer = layer;
            o.m = a.m;
            o.seed = a.seed;
            if (a.bins) o.bins = a.bins;
            o.centred = a.centred;
            o.sentence_vectors = a.sentence;
            o.spectrum = !a.no_spectrum;
            const auto r = anisotropy(dump, o);
            out.add(r.to_json(), r.table());
        }
    } else if (a.kind == "pca") {
        const DumpReader& dump = need_dump(dumps, a.kind);
        for (int layer : selected_layers(dump, a.layer)) {
            PcaOptions o;
            o.layer = layer;
            if (!a.thresholds.empty()) o.thresholds = a.thresholds;
            o.energy = a.energy;
            o.max_sentences = a.max_sentences;
            o.seed = a.seed;
            o.bucket_width = a.bucket_width;
            o.global_m = a.global_m;
            o.centred = !a.uncentred;
            o.passage = a.passage;
            o.bootstrap = a.pca_bootstrap;
            const auto r = pca_redundancy(dump, o);
            out.add(r.to_json(), r.table());
        }
    } else if (a.kind == "length-accuracy") {
        LengthAccuracyOptions o;
        o.variable = a.variable;
        // Each binning option given says which rule; two rules, or a value the rule cannot use,
        // are refused rather than one of them silently ignored (--width 0 read as "not given",
        // and --binning quantile --width 3 as width bins).
        if (a.width_given && !(std::isfinite(a.width) && a.width > 0))
            throw ConfigError("length-accuracy: --width must be a positive number (got " +
                              number_text(a.width) + ")");
        if (a.edges_given && a.width_given)
            throw ConfigError(
                "length-accuracy: --edges and --width are two binning rules: give one of them");
        const std::string implied = a.edges_given ? "edges" : a.width_given ? "width" : "quantile";
        if (a.binning_given && implied != "quantile" && a.binning != implied)
            throw ConfigError("length-accuracy: --binning " + a.binning + " contradicts --" +
                              implied + " (which bins by " + implied + "): give one rule");
        o.binning = a.binning_given ? a.binning : implied;
        if (a.bins_given && o.binning != "quantile")
            throw ConfigError(
                "length-accuracy: --bins counts quantile bins and the binning is " + o.binning +
                " (" +
                (o.binning == "edges" ? "--edges gives the bins" : "--width gives the bins") +
                "): give one of them");
        if (a.bins) o.bins = a.bins;
        o.edges = a.edges;
        o.width = a.width;
        if (!a.predictions.empty()) {
            // An evaluation's predictions (docs/formats/predictions.md), as the workbench's
            // Accuracy by length view reads them.
            const PredictionFile pa = PredictionFile::read(a.predictions[0]);
            std::optional<PredictionFile> pb;
            if (a.predictions.size() > 1) pb = PredictionFile::read(a.predictions[1]);
            const auto r = length_accuracy(pa, pb ? &*pb : nullptr, o);
            out.add(r.to_json(), r.table());
        } else {
            const DumpReader& dump = need_dump(dumps, a.kind);
            const auto r = length_accuracy(dump, dumps.size() > 1 ? dumps[1].get() : nullptr, o);
            out.add(r.to_json(), r.table());
        }
    } else if (a.kind == "flops") {
        // A checkpoint or dump gives the configuration of its own model; else the options do.
        const std::string source = !a.checkpoints.empty() ? a.checkpoints.front()
                                   : !a.dumps.empty()     ? a.dumps.front()
                                                          : std::string();
        FlopConfig c;
        if (!source.empty()) {
            c = flop_config_of_file(source);
        } else {
            c.arch = a.arch;
            c.layers = a.layers;
            c.d_model = a.d_model;
            c.intermediate = a.intermediate;
            c.state = a.state;
        }
        auto r = flop_model(
            c, a.lengths.empty() ? std::vector<std::int64_t>{128, 512, 1024, 4096} : a.lengths);
        if (!source.empty())
            r.provenance.inputs.push_back(
                file_input(source, a.checkpoints.empty() ? "dump" : "checkpoint"));
        out.add(r.to_json(), r.table());
    } else if (a.kind == "transitions") {
        const DumpReader& dump = need_dump(dumps, a.kind);
        TransitionsOptions o;
        o.max_sentences = a.max_sentences;
        o.seed = a.seed;
        const auto r = layer_transitions(dump, o);
        out.add(r.to_json(), r.table());
    } else if (a.kind == "gates") {
        const DumpReader& dump = need_dump(dumps, a.kind);
        GatesOptions o;
        if (a.bins) o.bins = a.bins;
        o.max_sentences = a.max_sentences;
        o.seed = a.seed;
        const auto layers = a.layer == "all" ? std::vector<int>{} : selected_layers(dump, a.layer);
        const auto r = gate_statistics(dump, layers, o);
        out.add(r.to_json(), r.table());
    } else if (a.kind == "kernels") {
        KernelOptions o;
        o.radius = a.radius;
        o.group = a.group;
        o.length = a.length;
        const std::vector<int> layers = a.layer == "all"
                                            ? std::vector<int>{}
                                            : std::vector<int>{parse_layer("--layer", a.layer)};
        if (!a.checkpoints.empty()) {
            for (const auto& c : a.checkpoints) {
                const auto r = kernels_from_checkpoint(c, layers, o);
                out.add(r.to_json(), r.table());
            }
        } else {
            const auto r = kernels_from_dump(need_dump(dumps, a.kind), layers, o);
            out.add(r.to_json(), r.table());
        }
    } else if (a.kind == "similarity") {
        if (dumps.size() != 2)
            throw ConfigError(
                "analyze similarity needs two --dump FILE options (model A, model B)");
        SimilarityOptions o = a.similarity;
        o.seed = a.seed;
        if (a.vectors != "token" && a.vectors != "sentence")
            throw ConfigError("--vectors must be 'token' or 'sentence', got '" + a.vectors + "'");
        o.sentence_vectors = a.vectors == "sentence";
        o.measures = a.measures;
        // --layer sets both sides; --layer-a / --layer-b one side each.
        auto side = [&](const std::string& own, const char* option, const DumpReader& dump) {
            const std::string text = !own.empty() ? own : a.layer;
            return text == "all"
                       ? std::vector<int>{}
                       : selected_layers(dump, text, false, own.empty() ? "--layer" : option);
        };
        o.layers_a = side(a.layer_a, "--layer-a", *dumps[0]);
        o.layers_b = side(a.layer_b, "--layer-b", *dumps[1]);
        // --length-bins k: the result over every example, then one per bin of input length.
        o.length_columns = a.length_bins > 0;
        const auto r = representation_similarity(*dumps[0], *dumps[1], o);
        for (const auto& note : r.notes)
            std::cerr << "routescope-cli analyze similarity: " << note << "\n";
        nlohmann::json j = r.to_json();
        if (a.scatter_given) {
            const auto [la, lb] = parse_scatter(a.scatter);  // checked before any work
            j["scatter"] = canonical_scatter(*dumps[0], *dumps[1], r, la, lb).to_json(r);
        }
        out.add(j, r.table());
        if (a.length_bins > 0)
            for (const auto& [lo, hi] : length_bins(*dumps[0], a.length_bins)) {
                SimilarityOptions ob = o;
                ob.min_length = lo;
                ob.max_length = hi;
                // A bin of too few vectors (ties keep equal lengths in one bin, so bins can be
                // small) is skipped with its reason; the overall result and the other bins stand.
                // Every other error of the options was the overall run's already.
                std::optional<SimilarityResult> rb;
                try {
                    rb = representation_similarity(*dumps[0], *dumps[1], ob);
                } catch (const ConfigError& e) {
                    std::cerr << "routescope-cli analyze similarity (lengths " << lo << "-" << hi
                              << "): skipped: " << data::printable_utf8(e.what()) << "\n";
                    out.results.push_back({{"analysis", "similarity"},
                                           {"length_range", {lo, hi}},
                                           {"skipped", e.what()}});
                    continue;
                }
                for (const auto& note : rb->notes)
                    std::cerr << "routescope-cli analyze similarity (lengths " << lo << "-" << hi
                              << "): " << note << "\n";
                out.add(rb->to_json(), rb->table());
            }
    } else if (a.kind == "implicit-attention") {
        const DumpReader& dump = need_dump(dumps, a.kind);
        if (a.layer == "all")
            throw ConfigError("analyze implicit-attention needs --layer L (one SSM layer)");
        ImplicitAttentionOptions o;
        o.layer = parse_layer("--layer", a.layer);
        o.example = a.example;
        o.mode = a.mode;
        o.normalise = a.normalise;
        o.head = a.head;
        // An option given for what the layer does not hold is refused, not ignored; its default
        // written out (docs/analyses.md's example has [--mode sum] [--head -1]) asks for nothing
        // the layer lacks.
        const bool attention = dump.attention_heads(o.layer) > 0;
        if (attention && a.mode_given && a.mode != "sum")
            throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                              " holds attention probabilities: --mode applies to the mixing of an "
                              "SSM, Birdie or gMLP layer; --head chooses a head");
        if (!attention && a.head_given && a.head != -1)
            throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                              " holds no attention heads: --head applies to a dump written with "
                              "--attention (bert, gated_att)");
        const auto r = implicit_attention(dump, o);
        out.add(r.to_json(), r.table());
    } else if (a.kind == "induction-heads") {
        const auto r = induction_heads(need_dump(dumps, a.kind), a.marker);
        out.add(r.to_json(), r.table());
    } else if (a.kind == "kernel-change") {
        if (a.checkpoints.size() != 2)
            throw ConfigError(
                "analyze kernel-change needs two --checkpoint FILE options (before, after)");
        KernelOptions o;
        o.radius = a.radius;
        o.group = a.group;
        o.length = a.length;
        const std::vector<int> layers = a.layer == "all"
                                            ? std::vector<int>{}
                                            : std::vector<int>{parse_layer("--layer", a.layer)};
        const auto r = kernel_change(a.checkpoints[0], a.checkpoints[1], layers, o);
        out.add(r.to_json(), r.table());
    } else {
        throw ConfigError("analyze: kind '" + a.kind + "' is not implemented in this build");
    }
    return out;
}

CommandRunner setup_analyze(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "analyze", "Compute one analysis (the kinds: docs/cli.md); write JSON (and CSV)");
    auto a = std::make_shared<AnalyzeArgs>();
    cmd->add_option("kind", a->kind, "What to compute")->required()->check(CLI::IsMember(kKinds));
    cmd->add_option("--dump", a->dumps,
                    "Activation dump (*.dump.h5); a second one compares two models");
    cmd->add_option("--checkpoint", a->checkpoints,
                    "Checkpoint (*.ckpt.h5); two for kernel-change");
    cmd->add_option("--predictions", a->predictions,
                    "length-accuracy: per-example predictions (*.jsonl, `eval --out`) instead of "
                    "--dump; a second one compares two models");
    add_check_flags(cmd, a->check, "every --dump and --checkpoint");
    CLI::Option* layer_option =
        cmd->add_option("--layer", a->layer, "Layer index, or 'all' (default)");
    cmd->add_option("--out", a->out, "Result JSON (with provenance)")->required();
    CLI::Option* csv_option =
        cmd->add_option("--csv", a->csv, "Also write the result table as CSV");
    cmd->add_option("--m", a->m, "anisotropy: sentences sampled (default 5000; all when fewer)");
    cmd->add_option("--seed", a->seed, "Seed of every random sample (default 0)")->check(kSeed);
    CLI::Option* bins_option =
        cmd->add_option("--bins", a->bins,
                        "Histogram bins (anisotropy 100, gates 50) or quantile bins (5)")
            ->check(CLI::Range(std::int64_t{1}, kMaxBins));
    cmd->add_flag("--centred", a->centred, "anisotropy: subtract the sample mean first");
    cmd->add_flag("--sentence", a->sentence,
                  "anisotropy: sentence vectors instead of token vectors");
    cmd->add_flag("--no-spectrum", a->no_spectrum,
                  "anisotropy: skip PC1 variance and isotropy score");
    cmd->add_option("--thresholds", a->thresholds, "pca: fractions p (default .90,.92,.94,.96,.98)")
        ->delimiter(',');
    cmd->add_flag("--energy", a->energy, "pca: σ instead of σ²");
    cmd->add_option("--max-sentences", a->max_sentences,
                    "pca, transitions, gates: sample this many sentences (default all)")
        ->check(kNonNegative);
    cmd->add_option("--bucket-width", a->bucket_width,
                    "pca: width of the length buckets (default 50)");
    cmd->add_option("--global-m", a->global_m,
                    "pca: tokens of the global variant (default 5000, 0 off)")
        ->check(kNonNegative);
    cmd->add_flag("--uncentred", a->uncentred,
                  "pca: the spectrum of the tokens as they are, mean included (the S-LSTM paper's "
                  "uncentred SVD)");
    cmd->add_option("--passage", a->passage,
                    "pca: per passage of this many tokens (consecutive, from each sentence's "
                    "start; a shorter rest dropped) instead of per sentence");
    cmd->add_option("--pca-bootstrap", a->pca_bootstrap,
                    "pca: resamples of a 95% bootstrap interval of the overall mean k (0 none)");
    cmd->add_option("--variable", a->variable,
                    "length-accuracy: 'length' or a /data/attributes name");
    CLI::Option* binning_option = cmd->add_option(
        "--binning", a->binning, "length-accuracy: quantile (default), edges or width");
    CLI::Option* edges_option =
        cmd->add_option("--edges", a->edges, "length-accuracy: fixed bin edges")->delimiter(',');
    CLI::Option* width_option =
        cmd->add_option("--width", a->width, "length-accuracy: fixed bin width (positive)");
    // The model of the FLOP count when no --checkpoint or --dump gives one.
    const std::vector<CLI::Option*> flop_model_options = {
        cmd->add_option("--arch", a->arch,
                        "flops: bigs, stack_ssm, gated_att, bert, birdie, slstm, gmlp (or the "
                        "model of --checkpoint / --dump)"),
        cmd->add_option("--layers", a->layers, "flops: number of blocks (default 23)"),
        cmd->add_option("--d-model", a->d_model, "flops: width d (default 1024)"),
        cmd->add_option("--intermediate", a->intermediate,
                        "flops: intermediate width I (default per arch)")
            ->check(kNonNegative),
        cmd->add_option("--state", a->state,
                        "flops: SSM modes N (default 64) / Birdie state size (default: the "
                        "intermediate width, 3d)")
            ->check(kNonNegative)};
    cmd->add_option("--lengths", a->lengths, "flops: sequence lengths (default 128,512,1024,4096)")
        ->delimiter(',');
    cmd->add_option("--radius", a->radius, "kernels: relative positions −R..R (default 10)");
    cmd->add_option(
        "--group", a->group,
        "kernels, kernel-change: the channel group 0..H−1 of a model with H kernels per "
        "SSM (model.ssm.n_kernels; default 0)");
    cmd->add_option("--length", a->length,
                    "kernels from a checkpoint: kernel length L (default 512, at most 1048576)")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                std::int64_t v = 0;
                const char* end = text.data() + text.size();
                const auto r = std::from_chars(text.data(), end, v);
                return r.ec == std::errc() && r.ptr == end && v >= 1 && v <= kMaxKernelLength
                           ? std::string()
                           : "a kernel length from 1 to " + std::to_string(kMaxKernelLength) +
                                 " (2^20: each layer's kernels take about " +
                                 std::to_string(static_cast<int>(kKernelBytesPerPosition)) +
                                 " bytes per position), got " + text;
            },
            "1 … 2^20"));
    cmd->add_option("--vectors", a->vectors,
                    "similarity: 'token' (default: every real token, sampled) or 'sentence'");
    cmd->add_option("--max-vectors", a->similarity.max_vectors,
                    "similarity: vectors sampled uniformly (default 100000; all when fewer)");
    CLI::Option* layer_a_option =
        cmd->add_option("--layer-a", a->layer_a, "similarity: layer of the first dump, or 'all'");
    CLI::Option* layer_b_option =
        cmd->add_option("--layer-b", a->layer_b, "similarity: layer of the second dump, or 'all'");
    cmd->add_option("--measures", a->measures,
                    "similarity: linear_cka, linear_cka_unbiased, rbf_cka, svcca, pwcca, "
                    "procrustes (default all)")
        ->delimiter(',');
    // Negative counts refused as the command line is read, before the input check and the dumps.
    cmd->add_option("--gram-m", a->similarity.gram_m,
                    "similarity: examples in the Gram sample (RBF CKA, null, bootstrap; 1000)")
        ->check(kNonNegative);
    cmd->add_option("--permutations", a->similarity.permutations,
                    "similarity: permutations of the null (default 100, 0 none)")
        ->check(kNonNegative);
    cmd->add_option("--bootstrap", a->similarity.bootstrap,
                    "similarity: bootstrap resamples of the interval (default 100, 0 none)")
        ->check(kNonNegative);
    cmd->add_option("--length-bins", a->length_bins,
                    "similarity: also each of k bins of input length (quantiles of dump A's "
                    "example lengths), one result per bin after the overall one")
        ->check(CLI::Range(0, 64));
    CLI::Option* scatter_option = cmd->add_option(
        "--scatter", a->scatter,
        "similarity: LA,LB: also the first canonical pair of layer LA of A and LB of "
        "B, point by point (up to 5000 vectors of the sample)");
    cmd->add_option("--svcca-variance", a->similarity.svcca_variance,
                    "similarity: share of the variance SVCCA keeps (default 0.99)");
    cmd->add_option("--example", a->example,
                    "implicit-attention: the example (row of /data; default 0)");
    CLI::Option* mode_option = cmd->add_option(
        "--mode", a->mode, "implicit-attention: forward, backward, sum (default) or gated");
    cmd->add_option("--normalise", a->normalise,
                    "implicit-attention: raw (default), minmax or rownorm per row");
    CLI::Option* head_option =
        cmd->add_option("--head", a->head,
                        "implicit-attention of a dump with attention probabilities (bert, dump "
                        "--attention): the head, or -1 (default) for the mean of the heads");
    cmd->add_option("--marker", a->marker,
                    "induction-heads: the /vocab piece before the copied symbol and at the query "
                    "(default trigger)");
    return [a, flop_model_options, layer_option, mode_option, head_option, bins_option,
            binning_option, edges_option, width_option, csv_option, scatter_option, layer_a_option,
            layer_b_option]() {
        a->mode_given = mode_option->count() > 0;
        a->head_given = head_option->count() > 0;
        a->bins_given = bins_option->count() > 0;
        a->binning_given = binning_option->count() > 0;
        a->edges_given = edges_option->count() > 0;
        a->width_given = width_option->count() > 0;
        a->scatter_given = scatter_option->count() > 0;
        // Errors are thrown to main's handler (exit_codes.hpp): a malformed input is exit 2, like
        // every command's (1 is validate's and inspect's verdict only, and the input check's
        // below). Every input in a child process first (issue 25): a crash of libhdf5 is a verdict.
        // A crash is refused; format violations are left to the analyses' readers (they work on
        // partial files, a checkpoint of parameters only, and refuse what they cannot use).
        // An explicit --check asks for validate's verdict (its help says so): then an invalid
        // file is refused, as every other command refuses it.
        a->check.refuse_invalid = a->check.values;
        // As many files as the kind reads: a further --dump or --checkpoint would be ignored.
        const auto at_most = [&](const char* option, std::size_t given, std::size_t most) {
            if (given > most)
                throw ConfigError(
                    "analyze " + a->kind + " takes " +
                    (most == 0   ? std::string("no ") + option
                     : most == 1 ? std::string("one ") + option
                                 : "at most " + std::to_string(most) + " " + option + " options") +
                    " (" + std::to_string(given) + " given)");
        };
        const std::string& k = a->kind;
        at_most("--dump", a->dumps.size(),
                k == "similarity" || k == "length-accuracy" ? 2
                : k == "kernel-change"                      ? 0
                                                            : 1);
        at_most("--predictions", a->predictions.size(), k == "length-accuracy" ? 2 : 0);
        for (const auto& d : a->dumps)
            if (d.size() > 6 && d.ends_with(".jsonl"))
                throw ConfigError("--dump " + d +
                                  " is an evaluation's predictions (JSON lines), not a dump: "
                                  "give it as --predictions " +
                                  d + " (analyze length-accuracy reads them)");
        if (!a->predictions.empty() && !a->dumps.empty())
            throw ConfigError("analyze length-accuracy reads --dump or --predictions, not both");
        at_most("--checkpoint", a->checkpoints.size(),
                k == "kernels"         ? a->checkpoints.size()
                : k == "kernel-change" ? 2
                : k == "flops"         ? 1
                                       : 0);
        // A kind that reads no single layer refuses --layer rather than ignore it (transitions
        // exited 0 with every layer's changes for a --layer that was not even in the dump).
        if (layer_option->count() > 0 && a->layer != "all" &&
            (k == "transitions" || k == "length-accuracy" || k == "flops" ||
             k == "induction-heads"))
            throw ConfigError(
                "analyze " + k + " does not take --layer " + a->layer +
                (k == "transitions"
                     ? ": it reports the change between every pair of consecutive layers the "
                       "dump stores (the JSON's and CSV's rows name them)"
                     : ": it does not read per-layer values"));
        if ((k == "flops" || k == "kernels") && !a->dumps.empty() && !a->checkpoints.empty())
            throw ConfigError("analyze " + k + " reads --checkpoint or --dump, not both");
        if (k == "flops" && (!a->dumps.empty() || !a->checkpoints.empty()))
            for (const CLI::Option* o : flop_model_options)
                if (o->count() > 0)
                    throw ConfigError("analyze flops: " + o->get_name() +
                                      " describes a model without --checkpoint or --dump; the "
                                      "file gives its own model");
        // Every option's text before any work (docs/cli.md): a malformed layer or --scatter was
        // found only when the analysis reached it, --scatter's after the whole similarity.
        // (--layer-a "" was taken for "not given", falling back to --layer.)
        for (const auto& [option, text] :
             {std::pair<const CLI::Option*, const std::string*>{layer_option, &a->layer},
              {layer_a_option, &a->layer_a},
              {layer_b_option, &a->layer_b}})
            if (option->count() > 0 && *text != "all") (void)parse_layer(option->get_name(), *text);
        if (a->scatter_given) (void)parse_scatter(a->scatter);
        if (!a->csv.empty() && same_output_file(a->csv, a->out))
            throw ConfigError("analyze: --out " + a->out + " and --csv " + a->csv +
                              " name the same file (a link counts), and each needs its own");
        std::vector<std::pair<std::string, std::string>> inputs;
        for (const auto& d : a->dumps)
            inputs.emplace_back("--dump", d);
        for (const auto& c : a->checkpoints)
            inputs.emplace_back("--checkpoint", c);
        for (const auto& p : a->predictions)
            inputs.emplace_back("--predictions", p);
        refuse_overwriting_inputs({"--out", a->out}, inputs);
        refuse_overwriting_inputs({"--csv", a->csv}, inputs);
        // An input replaced or truncated while it is read (a dump being rewritten) reads as
        // zeros, and transitions then exited 0 with a layer of zeros under the old file's
        // provenance: each input's identity, size and time are compared after the analysis.
        struct Seen {
            std::string path;
            struct stat st;
        };
        std::vector<Seen> seen;
        for (const auto* list : {&a->dumps, &a->checkpoints, &a->predictions})
            for (const auto& p : *list) {
                Seen s{p, {}};
                if (::stat(p.c_str(), &s.st) == 0) seen.push_back(s);
            }
        if (const int verdict = check_inputs(a->dumps, a->check)) return verdict;
        if (const int verdict = check_inputs(a->checkpoints, a->check)) return verdict;
        const auto refuse_if_changed = [&] {
            for (const auto& s : seen) {
                struct stat now {};
                if (::stat(s.path.c_str(), &now) != 0 || now.st_ino != s.st.st_ino ||
                    now.st_size != s.st.st_size || now.st_mtim.tv_sec != s.st.st_mtim.tv_sec ||
                    now.st_mtim.tv_nsec != s.st.st_mtim.tv_nsec)
                    throw IoError(s.path +
                                  ": changed while the analysis read it (replaced, truncated or "
                                  "written to); nothing was written: run it again on the "
                                  "finished file");
            }
        };
        // Kernels from checkpoints against this machine's memory before they are computed (as the
        // model's size is): --length's cap still lets 23 layers of 2^20 positions ask for 5 GB.
        if ((k == "kernels" || k == "kernel-change") && !a->checkpoints.empty()) {
            // kernels keeps every layer of every checkpoint; kernel-change holds one layer of
            // each of its two at a time.
            std::int64_t layers = 2;
            if (k == "kernels") {
                layers = 0;
                for (const auto& c : a->checkpoints)
                    layers += a->layer != "all" ? 1 : checkpoint_ssm_layers(c);
            }
            const double bytes = kKernelBytesPerPosition * static_cast<double>(a->length) *
                                 static_cast<double>(layers);
            // Against what the process may use (ulimit -v, a cgroup), not the machine alone:
            // under a 4 GB limit 2^20 positions of 32 layers ran 19 s into a bad_alloc.
            if (const MemoryLimit limit = memory_limit(); limit.bytes > 0 && bytes > limit.bytes)
                throw ConfigError("--length " + std::to_string(a->length) + ": the kernels of " +
                                  std::to_string(layers) + " layer(s) would need about " +
                                  bytes_text(bytes) + ", more than " + limit.text() +
                                  ": give a shorter --length or one --layer");
        }
        Output out;
        try {
            out = run_analysis(*a);
        } catch (...) {
            // The failure of a read whose file was replaced under it (HDF5: "H5Dopen2 failed")
            // is said of that file.
            refuse_if_changed();
            throw;
        }
        refuse_if_changed();
        inputs_read();
        // The JSON and the CSV together: a CSV that cannot be written leaves no JSON either.
        // A string of the dump that is not UTF-8 (a /vocab piece: validate --quick does not read
        // them) is written with U+FFFD for each bad byte, as the workbench shows it.
        std::vector<std::pair<std::string, std::string>> files{
            {a->out, nlohmann::json{{"kind", a->kind}, {"results", out.results}}.dump(
                         1, ' ', false, nlohmann::json::error_handler_t::replace) +
                         "\n"}};
        if (!a->csv.empty()) files.emplace_back(a->csv, out.table.to_csv());
        write_texts_atomically(files);
        return kExitOk;
    };
}

const CommandRegistration registration{"analyze", setup_analyze};

}  // namespace
}  // namespace routescope::cli
