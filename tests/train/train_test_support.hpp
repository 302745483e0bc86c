#pragma once
// Shared by the train tests: writing configurations and corpora, running routescope-cli, reading
// the losses of a log.jsonl.
#include <QProcess>
#include <QString>
#include <QStringList>
#include <cstdlib>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace train_test {

struct CliResult {
    int exit_code = -1;
    QString out, err;
};

/// Runs routescope-cli, or the binary ROUTESCOPE_TEST_CLI names (a test checked against an older
/// build without replacing build/bin).
inline CliResult run_cli(const QStringList& args, int timeout_ms = 120000) {
    const char* other = std::getenv("ROUTESCOPE_TEST_CLI");
    QProcess p;
    p.start(other && *other ? QString::fromUtf8(other) : QStringLiteral(ROUTESCOPE_CLI), args);
    CliResult r;
    if (!p.waitForStarted() || !p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("routescope-cli did not finish");
        return r;
    }
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

/// One JSON value per line (log.jsonl, preds.jsonl).
inline std::vector<nlohmann::json> read_lines(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        out.push_back(nlohmann::json::parse(line));
    return out;
}

inline nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

inline void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

/// A tiny BiGS run: d = 32, 2 layers, N = 16 modes, L = 32, B = 4 (seconds per hundred steps).
inline nlohmann::json tiny_bigs(const std::string& corpus) {
    return {{"model",
             {{"arch", "bigs"},
              {"d_model", 32},
              {"n_layers", 2},
              {"max_len", 64},
              {"ssm", {{"n_modes", 16}}}}},
            {"tokenizer", {{"kind", "bytes"}}},
            {"data", {{"train", corpus}, {"seq_len", 32}}},
            {"train",
             {{"batch_size", 4},
              {"steps", 40},
              {"lr", 2e-3},
              {"warmup_steps", 5},
              {"eval_every", 10},
              {"eval_batches", 2},
              {"checkpoint_every", 10}}}};
}

/// Losses of the "step" records of a log.jsonl, in step order (step k at index k − 1).
inline std::vector<double> step_losses(const std::string& log_path) {
    std::vector<double> losses;
    std::ifstream in(log_path);
    std::string line;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        if (j.value("type", "") != "step") continue;
        const auto step = j["step"].get<std::size_t>();
        if (losses.size() < step) losses.resize(step, -1.0);
        losses[step - 1] = j["loss"].get<double>();
    }
    return losses;
}

/// Documents of random words from a small word list: the letters inside a word are predictable
/// from their neighbours, the words themselves are not. `seed` for std::mt19937.
inline std::string word_corpus(int documents, unsigned seed) {
    static const char* const words[] = {"alpha", "bravo", "charlie", "delta",  "echo", "foxtrot",
                                        "golf",  "hotel", "india",   "juliet", "kilo", "lima"};
    std::mt19937 rng(seed);
    std::string text;
    for (int d = 0; d < documents; ++d) {
        const unsigned n = 6 + rng() % 6;
        for (unsigned w = 0; w < n; ++w) {
            if (w) text += ' ';
            text += words[rng() % 12];
        }
        text += '\n';
    }
    return text;
}

}  // namespace train_test
