// routescope-cli tokenizer train --corpus X --vocab-size N --out m.model [--model-type unigram|bpe]
//                                [--doc-sep line|blank] [--threads N]
// Trains a SentencePiece model with the library's trainer (engine/data/sentencepiece_tokenizer.hpp:
// Routescope's special layout [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4) and writes the .model file,
// which Python's sentencepiece loads as it is. Exit 0, 2 for bad arguments or an unreadable corpus,
// 3 when the file cannot be written.
#include <charconv>
#include <fstream>
#include <iostream>

#include "app/cli/atomic_text_file.hpp"
#include "app/cli/command.hpp"
#include "app/cli/output_guard.hpp"
#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/data/sentencepiece_tokenizer.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/data/text_corpus.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::cli {
namespace {

struct TokenizerTrainArgs {
    std::string corpus;
    std::string out;
    int vocab_size = 8000;
    std::string model_type = "unigram";
    std::string doc_sep = "line";
    int threads = 1;
};

int run_tokenizer_train(const TokenizerTrainArgs& a) {
    // Errors are thrown to main's handler (exit_codes.hpp): an unreadable corpus is exit 2, a
    // failed write exit 3.
    // Not a directory (it trained for minutes, then could not rename the model onto it), a
    // device or a FIFO: said before the training.
    refuse_overwriting_inputs({"--out", a.out}, {{"--corpus", a.corpus}});
    (void)atomic_write_target(a.out);
    data::TextCorpus corpus(a.corpus, data::parse_doc_separator(a.doc_sep));
    inputs_read();
    data::SentencePieceTraining options;
    options.vocab_size = a.vocab_size;
    options.model_type = a.model_type;
    options.threads = std::max(1, a.threads);
    const std::unique_ptr<data::SentencePieceTokenizer> tokenizer =
        data::train_sentencepiece(corpus, options);
    const auto bytes = tokenizer->serialize();
    // Through a temporary of its own (".<name>.tmp-<pid>", atomic_text_file.hpp), renamed when
    // complete: a fixed "<out>.tmp" made two runs into one --out collide, and a failure to
    // remove it was reported as an internal error.
    write_text_atomically(a.out, std::string(bytes.begin(), bytes.end()));
    std::cout << a.out << ": " << tokenizer->vocab_size() << " pieces (" << a.model_type << ")\n";
    return kExitOk;
}

CommandRunner setup_tokenizer(CLI::App& app) {
    auto* cmd = app.add_subcommand("tokenizer", "Tokenizer tools");
    cmd->require_subcommand(1);
    auto* train = cmd->add_subcommand("train", "Train a SentencePiece model on a corpus");
    auto a = std::make_shared<TokenizerTrainArgs>();
    train->add_option("--corpus", a->corpus, "Text file or directory")->required();
    // At least one piece beside the 5 specials (train_sentencepiece refuses fewer, naming
    // tokenizer.vocab_size, a key this command does not have); libsentencepiece ends the process
    // on sizes near 2^31 instead of returning an error.
    constexpr int kMinPieces = static_cast<int>(data::kSpecialPieces.size()) + 1;
    train->add_option("--vocab-size", a->vocab_size, "Pieces, specials included")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                int v = 0;
                const char* end = text.data() + text.size();
                const auto r = std::from_chars(text.data(), end, v);
                if (r.ec == std::errc() && r.ptr == end && v >= kMinPieces &&
                    v <= data::kMaxSentencePieces)
                    return {};
                return "a number of pieces from " + std::to_string(kMinPieces) +
                       " (the 5 specials [PAD] [UNK] [CLS] [SEP] [MASK] and at least one piece) "
                       "to " +
                       std::to_string(data::kMaxSentencePieces) + " (2^24), got " + text;
            },
            std::to_string(kMinPieces) + " … 2^24"));
    train->add_option("--out", a->out, "The .model file to write")->required();
    train->add_option("--model-type", a->model_type, "unigram | bpe")
        ->check(CLI::IsMember({"unigram", "bpe"}));
    train->add_option("--doc-sep", a->doc_sep, "line | blank")
        ->check(CLI::IsMember({"line", "blank"}));
    train->add_option("--threads", a->threads, "Trainer threads")
        ->check(CLI::Range(0, 128));  // libsentencepiece's own limit (num_threads <= 128)
    return [a]() { return run_tokenizer_train(*a); };
}

const CommandRegistration registration{"tokenizer", setup_tokenizer};

}  // namespace
}  // namespace routescope::cli
