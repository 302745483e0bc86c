// routescope-cli sample-dump --out FILE: writes a small SYNTHETIC dump (no model behind it) so the
// workbench can be tried before any model is trained. Every value is generated from a seed: hidden
// states that drift towards a common direction layer by layer (growing anisotropy), gates that
// oscillate along the sequence, exponentially decaying SSM-like kernels, and predictions whose
// accuracy falls with length. The model name says "synthetic" so nobody mistakes it for a result.
#include <cmath>
#include <iostream>
#include <optional>
#include <random>

#include "app/cli/command.hpp"
#include "app/cli/output_guard.hpp"
#include "engine/io/dump_writer.hpp"

namespace routescope::cli {
namespace {

int write_sample_dump(const std::string& out, int examples, int length, int d, int layers,
                      unsigned seed, std::optional<unsigned> state_seed) {
    std::mt19937_64 rng(seed);
    // --state-seed: the examples (tokens, lengths, labels) come from `seed`, the hidden states and
    // gates from their own generator, so that two dumps hold the same examples with different
    // values (a compare-mode pair); without it every value comes from `seed` as before.
    std::mt19937_64 state_rng(state_seed.value_or(0));
    std::mt19937_64& values = state_seed ? state_rng : rng;
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<double> uniform;

    const std::vector<std::string> words = {
        "the",       "model", "routes", "tokens",  "along",    "a",         "sequence", "without",
        "attention", "gates", "open",   "and",     "close",    "while",     "kernels",  "decay",
        "over",      "long",  "gaps",   "between", "matching", "sentences", "in",       "every",
        "layer",     "state", "space",  "memory",  "forgets",  "slowly"};
    DumpSpec spec;
    spec.arch = "bigs";
    spec.name = "synthetic-sample (not a trained model)";
    spec.producer = "routescope-cli sample-dump";
    spec.n_layers = layers;
    spec.d_model = d;
    spec.examples = examples;
    spec.length = length;
    for (int l = 0; l <= layers; ++l)
        spec.layers.push_back(l);
    spec.sentence = true;
    spec.gates = {"u_f", "u_b"};
    spec.gate_channels = d;
    spec.labels = spec.predictions = spec.text = true;
    spec.attributes = {"gap"};
    spec.vocab = {"[PAD]", "[UNK]", "[CLS]", "[MASK]"};
    spec.vocab.insert(spec.vocab.end(), words.begin(), words.end());
    spec.config_json = R"({"synthetic": true})";

    DumpWriter writer(out, spec);
    std::vector<float> common(d);
    for (auto& v : common)
        v = normal(rng);
    std::vector<float> h(static_cast<std::size_t>(length) * d), sentence(d), gate(h.size());
    for (int s = 0; s < examples; ++s) {
        ExampleRecord r;
        r.length = 4 + static_cast<int>(uniform(rng) * (length - 4));
        r.tokens.assign(length, 0);
        for (int t = 0; t < r.length; ++t) {
            const int id = 4 + static_cast<int>(uniform(rng) * words.size());
            r.tokens[t] = id;
            r.text += (t ? " " : "") + spec.vocab[id];
        }
        r.label = uniform(rng) < 0.5 ? 1 : 0;
        const double p_correct = 0.95 - 0.4 * r.length / length;
        r.prediction = uniform(rng) < p_correct ? r.label : 1 - r.label;
        r.attributes = {std::floor(uniform(rng) * r.length)};
        writer.write_example(s, r);

        for (auto& v : h)
            v = normal(values);
        for (int l = 0; l <= layers; ++l) {
            // Each layer keeps most of the previous state and drifts towards `common`.
            const float drift = 0.4f * l;
            if (l > 0)
                for (std::size_t i = 0; i < h.size(); ++i)
                    h[i] = 0.8f * h[i] + 0.5f * normal(values) + 0.15f * drift * common[i % d];
            std::fill(sentence.begin(), sentence.end(), 0.0f);
            for (int t = 0; t < r.length; ++t)
                for (int c = 0; c < d; ++c)
                    sentence[c] += h[t * d + c] / r.length;
            writer.write_hidden(l, s, h.data());
            writer.write_sentence(l, s, sentence.data());
            if (l == 0) continue;
            for (const char* g : {"u_f", "u_b"}) {
                const double phase = g[2] == 'f' ? 0.0 : 1.5;
                for (int t = 0; t < length; ++t)
                    for (int c = 0; c < d; ++c) {
                        const double x = 2.0 * std::sin(0.3 * t / (1 + c % 5) + phase + 0.5 * l) +
                                         0.3 * normal(values);
                        gate[t * d + c] = static_cast<float>(1.0 / (1.0 + std::exp(-x)));
                    }
                writer.write_gate(l, g, s, gate.data());
            }
        }
    }
    for (int l = 1; l <= layers; ++l) {
        std::vector<float> kf(length), kb(length);
        const double tau =
            2.0 + 6.0 * l;  // deeper layers remember longer, as in the BiGS paper's Figure 3
        for (int k = 0; k < length; ++k) {
            kf[k] = static_cast<float>(std::exp(-k / tau) * std::cos(0.4 * k / l));
            kb[k] = static_cast<float>(0.7 * std::exp(-k / (0.7 * tau)) * std::cos(0.3 * k / l));
        }
        writer.write_kernel(l, kf, kb, 1.0, 0.9);
    }
    writer.finish();
    std::cout << "wrote synthetic sample dump " << out << " (S=" << examples << ", L=" << length
              << ", d=" << d << ", layers 0.." << layers << ")\n";
    return kExitOk;
}

CommandRunner setup_sample_dump(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "sample-dump", "Write a small synthetic dump (no model) for trying the workbench");
    struct Options {
        std::string out;
        int examples = 240, length = 48, d = 32, layers = 4;
        unsigned seed = 1;
        std::optional<unsigned> state_seed;
    };
    auto o = std::make_shared<Options>();
    cmd->add_option("--out", o->out, "Output file (*.dump.h5)")->required();
    cmd->add_option("--examples", o->examples, "Number of examples S")
        ->check(CLI::Range(1, 1000000));
    cmd->add_option("--length", o->length, "Padded length L")->check(CLI::Range(8, 65536));
    cmd->add_option("--d-model", o->d, "Width d")->check(CLI::Range(1, 8192));
    cmd->add_option("--layers", o->layers, "Number of blocks")->check(CLI::Range(1, 128));
    cmd->add_option("--seed", o->seed, "Random seed");
    cmd->add_option("--state-seed", o->state_seed,
                    "Seed of the hidden states and gates only: dumps with the same --seed and "
                    "any --state-seed hold the same examples (a compare-mode pair); one without "
                    "--state-seed draws both from --seed");
    return [o]() {
        refuse_unnamable_output("--out", o->out);
        refuse_directory_output("--out", o->out);
        inputs_read();  // it reads nothing: an I/O error writing the dump is exit 3
                        // (exit_codes.hpp)
        return write_sample_dump(o->out, o->examples, o->length, o->d, o->layers, o->seed,
                                 o->state_seed);
    };
}

const CommandRegistration registration{"sample-dump", setup_sample_dump};

}  // namespace
}  // namespace routescope::cli
