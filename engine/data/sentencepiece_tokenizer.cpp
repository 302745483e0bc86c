#include "engine/data/sentencepiece_tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <exception>
#include <sstream>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/data/file_text.hpp"
#include "engine/data/sentencepiece_charsmap.hpp"
#include "engine/data/text_corpus.hpp"

namespace routescope::data {

namespace {
// Feeds the corpus's documents to the trainer without a temporary file.
// The trainer skips, without a word, every sentence longer than max_sentence_length bytes (4192 by
// default): a corpus of one document per line lost every long document, and one of long lines
// alone failed with "[!sentences_.empty()]". Documents are given to it in pieces of at most that
// length, cut at whitespace (with split_by_whitespace, the default, no piece spans whitespace, so
// the cuts change no statistic) or, in a run without whitespace, between UTF-8 characters.
constexpr std::size_t kMaxSentenceBytes = 4192;

class CorpusSentences final : public sentencepiece::SentenceIterator {
public:
    CorpusSentences(TextCorpus& corpus, std::int64_t limit) : corpus_(corpus), limit_(limit) {
        Next();
    }
    bool done() const override { return done_; }
    void Next() override {
        if (at_ >= document_.size()) {
            if (limit_ > 0 && taken_ >= limit_) {
                done_ = true;
                return;
            }
            // The corpus checks every line it reads (a file changed since its first scan is a
            // FormatError naming file and line); the error is kept and rethrown once the library
            // has returned (rethrow_error(), after Train), not thrown through its training code.
            try {
                done_ = !corpus_.next(document_);
            } catch (...) {
                error_ = std::current_exception();
                done_ = true;
                return;
            }
            ++taken_;
            at_ = 0;
            if (done_) return;
        }
        std::size_t end = document_.size();
        if (end - at_ > kMaxSentenceBytes) {
            end = at_ + kMaxSentenceBytes;
            const std::size_t space = document_.find_last_of(" \t\r\n", end);
            if (space != std::string::npos && space > at_) {
                end = space;
            } else {
                while (end > at_ + 1 && (static_cast<unsigned char>(document_[end]) & 0xC0) == 0x80)
                    --end;  // not inside a UTF-8 sequence
            }
        }
        value_.assign(document_, at_, end - at_);
        at_ = end;
    }
    const std::string& value() const override { return value_; }
    sentencepiece::util::Status status() const override {
        if (!error_) return {};
        return sentencepiece::util::Status(sentencepiece::util::StatusCode::kDataLoss,
                                           "the corpus could not be read");
    }
    /// Throws the corpus's error, if reading it failed.
    void rethrow_error() const {
        if (error_) std::rethrow_exception(error_);
    }

private:
    TextCorpus& corpus_;
    std::int64_t limit_;
    std::int64_t taken_ = 0;
    std::string document_;  // the corpus document being given out in pieces
    std::size_t at_ = 0;    // where its next piece starts
    std::string value_;
    bool done_ = false;
    std::exception_ptr error_;  // what the corpus threw
};
}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(std::string_view serialized_model)
    : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
    // libsentencepiece reads outside a corrupted normalisation map (docs/reliability.md,
    // finding 3): check it first.
    if (const auto problem = sentencepiece_charsmap_problem(serialized_model))
        throw FormatError("sentencepiece: not a usable SentencePiece model (" + *problem + ")");
    // The library also throws from inside (darts-clone's trie builder refuses a zero-length piece
    // with a Darts::Details::Exception; found by fuzz_sentencepiece): that is a malformed model
    // too.
    sentencepiece::util::Status status;
    try {
        status = sp_->LoadFromSerializedProto(
            absl::string_view(serialized_model.data(), serialized_model.size()));
    } catch (const std::exception& e) {
        throw FormatError(std::string("sentencepiece: not a usable SentencePiece model (the "
                                      "library refused it: ") +
                          e.what() + ")");
    }
    if (!status.ok()) {
        throw FormatError("sentencepiece: not a SentencePiece model (" + status.ToString() + ")");
    }
    // A piece that is absent maps to unk_id, so check the round trip.
    const auto find = [&](const char* piece) -> std::int32_t {
        const int id = sp_->PieceToId(piece);
        return (id >= 0 && sp_->IdToPiece(id) == piece) ? id : -1;
    };
    specials_.unk = sp_->unk_id();
    specials_.bos = sp_->bos_id();
    specials_.eos = sp_->eos_id();
    specials_.pad = find("[PAD]") >= 0 ? find("[PAD]") : sp_->pad_id();
    specials_.cls = find("[CLS]") >= 0 ? find("[CLS]") : specials_.bos;
    specials_.sep = find("[SEP]") >= 0 ? find("[SEP]") : specials_.eos;
    specials_.mask = find("[MASK]");
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_file(const std::string& path) {
    const std::string bytes = read_file_text(path, "SentencePiece model");
    try {
        return std::make_unique<SentencePieceTokenizer>(bytes);
    } catch (const FormatError& e) {
        throw FormatError(path + ": " + e.what());
    }
}

std::vector<std::int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
    std::vector<int> ids;
    const auto status = sp_->Encode(absl::string_view(text.data(), text.size()), &ids);
    if (!status.ok()) throw Error("sentencepiece: encode failed (" + status.ToString() + ")");
    return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(std::span<const std::int32_t> ids) const {
    std::vector<int> v;
    v.reserve(ids.size());
    for (const std::int32_t id : ids) {
        if (id < 0 || id >= vocab_size()) {
            throw Error("sentencepiece: id " + std::to_string(id) + " is outside [0, " +
                        std::to_string(vocab_size()) + ")");
        }
        if (id != specials_.pad) v.push_back(id);
    }
    std::string text;
    const auto status = sp_->Decode(v, &text);
    if (!status.ok()) throw Error("sentencepiece: decode failed (" + status.ToString() + ")");
    return text;
}

std::string SentencePieceTokenizer::piece(std::int32_t id) const {
    if (id < 0 || id >= vocab_size()) {
        throw Error("sentencepiece: id " + std::to_string(id) + " is outside [0, " +
                    std::to_string(vocab_size()) + ")");
    }
    return sp_->IdToPiece(id);
}

std::int32_t SentencePieceTokenizer::vocab_size() const {
    return sp_->GetPieceSize();
}

bool SentencePieceTokenizer::is_special(std::int32_t id) const {
    if (id < 0 || id >= vocab_size()) return false;
    return sp_->IsControl(id) || sp_->IsUnknown(id) || sp_->IsUnused(id) || id == specials_.cls ||
           id == specials_.sep || id == specials_.mask || id == specials_.pad;
}

std::vector<std::uint8_t> SentencePieceTokenizer::serialize() const {
    const std::string bytes = sp_->serialized_model_proto();
    return {bytes.begin(), bytes.end()};
}

std::unique_ptr<SentencePieceTokenizer> train_sentencepiece(TextCorpus& corpus,
                                                            const SentencePieceTraining& options) {
    // libsentencepiece ends the process (LOG(FATAL), exit 255) from about 1.95·10^9 pieces instead
    // of returning an error; 2^24 is far above any vocabulary it can learn from a corpus.
    if (options.vocab_size > kMaxSentencePieces)
        throw ConfigError("tokenizer.vocab_size: " + std::to_string(options.vocab_size) +
                          " pieces; SentencePiece training takes at most " +
                          std::to_string(kMaxSentencePieces));
    if (options.model_type != "unigram" && options.model_type != "bpe") {
        throw ConfigError("tokenizer.model_type: '" + options.model_type +
                          "' is not one of unigram, bpe");
    }
    if (options.vocab_size <= static_cast<std::int32_t>(kSpecialPieces.size())) {
        throw ConfigError("tokenizer.vocab_size: " + std::to_string(options.vocab_size) +
                          " leaves no room beside the 5 specials");
    }
    std::ostringstream coverage;
    coverage << options.character_coverage;
    // The Routescope layout (special_tokens.hpp): [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4.
    const std::unordered_map<std::string, std::string> args = {
        {"model_type", options.model_type},
        {"vocab_size", std::to_string(options.vocab_size)},
        {"character_coverage", coverage.str()},
        {"pad_id", "0"},
        {"pad_piece", "[PAD]"},
        {"unk_id", "1"},
        {"unk_piece", "[UNK]"},
        {"bos_id", "-1"},
        {"eos_id", "-1"},
        {"user_defined_symbols", "[CLS],[SEP],[MASK]"},
        {"num_threads", std::to_string(options.threads < 1 ? 1 : options.threads)},
        {"max_sentence_length", std::to_string(kMaxSentenceBytes)},
        {"minloglevel", "2"},  // the trainer's progress lines are noise on our console
    };
    corpus.reset();
    CorpusSentences sentences(corpus, options.max_sentences);
    std::string model;
    const auto status = sentencepiece::SentencePieceTrainer::Train(args, &sentences, &model);
    sentences.rethrow_error();
    if (!status.ok()) {
        std::string why = status.ToString();
        // The library's advice names its own option, which Routescope's commands do not have.
        if (const auto at = why.find(" or decrease character_coverage with --character_coverage "
                                     "option");
            at != std::string::npos)
            why.replace(at, std::string::npos,
                        " (--vocab-size, or tokenizer.vocab_size in a run configuration: every "
                        "character of the corpus needs a piece)");
        throw ConfigError("sentencepiece training on " + corpus.path() + " failed: " + why);
    }
    return std::make_unique<SentencePieceTokenizer>(model);
}

}  // namespace routescope::data
