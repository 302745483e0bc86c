#include "engine/data/byte_tokenizer.hpp"

#include <cstdio>

#include "engine/core/error.hpp"

namespace routescope::data {

namespace {
void check_id(std::int32_t id) {
    if (id < 0 || id >= ByteTokenizer::kVocabSize) {
        throw Error("byte tokenizer: id " + std::to_string(id) + " is outside [0, " +
                    std::to_string(ByteTokenizer::kVocabSize) + ")");
    }
}
}  // namespace

std::vector<std::int32_t> ByteTokenizer::encode(std::string_view text) const {
    std::vector<std::int32_t> ids;
    ids.reserve(text.size());
    for (const char c : text)
        ids.push_back(kByteOffset + static_cast<unsigned char>(c));
    return ids;
}

std::string ByteTokenizer::decode(std::span<const std::int32_t> ids) const {
    std::string text;
    text.reserve(ids.size());
    for (const std::int32_t id : ids) {
        check_id(id);
        if (id == kPadId) continue;
        if (id < kByteOffset) {
            text += kSpecialPieces[static_cast<std::size_t>(id)];
        } else {
            text.push_back(static_cast<char>(id - kByteOffset));
        }
    }
    return text;
}

std::string ByteTokenizer::piece(std::int32_t id) const {
    check_id(id);
    if (id < kByteOffset) return std::string(kSpecialPieces[static_cast<std::size_t>(id)]);
    const int byte = id - kByteOffset;
    if (byte > 0x20 && byte < 0x7F) return std::string(1, static_cast<char>(byte));
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", byte);
    return buf;
}

}  // namespace routescope::data
