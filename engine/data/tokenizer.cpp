#include "engine/data/tokenizer.hpp"

#include "engine/core/error.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/sentencepiece_tokenizer.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"

namespace routescope::data {

std::vector<std::string> Tokenizer::vocabulary() const {
    std::vector<std::string> pieces;
    pieces.reserve(static_cast<std::size_t>(vocab_size()));
    for (std::int32_t id = 0; id < vocab_size(); ++id)
        pieces.push_back(piece(id));
    return pieces;
}

std::unique_ptr<Tokenizer> load_tokenizer(std::string_view kind,
                                          std::span<const std::uint8_t> model) {
    const std::string_view bytes(reinterpret_cast<const char*>(model.data()), model.size());
    if (kind == "bytes") {
        if (!model.empty()) {
            throw FormatError("/tokenizer/model: the byte tokenizer has no model, but " +
                              std::to_string(model.size()) + " bytes are stored");
        }
        return std::make_unique<ByteTokenizer>();
    }
    if (kind == "sentencepiece") return std::make_unique<SentencePieceTokenizer>(bytes);
    if (kind == "wordpiece") return std::make_unique<WordPieceTokenizer>(bytes);
    if (kind == "wordpiece_cased")
        return std::make_unique<WordPieceTokenizer>(bytes, Casing::cased);
    throw ConfigError("tokenizer.kind: '" + std::string(kind) +
                      "' is not one of bytes, sentencepiece, wordpiece, wordpiece_cased");
}

std::unique_ptr<Tokenizer> load_tokenizer_file(std::string_view kind, const std::string& path) {
    if (kind == "bytes") return std::make_unique<ByteTokenizer>();
    if (kind == "sentencepiece") return SentencePieceTokenizer::from_file(path);
    if (kind == "wordpiece") return WordPieceTokenizer::from_file(path);
    if (kind == "wordpiece_cased") return WordPieceTokenizer::from_file(path, Casing::cased);
    throw ConfigError("tokenizer.kind: '" + std::string(kind) +
                      "' is not one of bytes, sentencepiece, wordpiece, wordpiece_cased");
}

}  // namespace routescope::data
