#pragma once
// libsentencepiece (0.1.97) trusts a model's precompiled normalisation map: a corrupted one makes
// its Normalizer read outside the map (a heap-use-after-free read found by fuzz_sentencepiece,
// docs/reliability.md finding 3). Routescope checks the map before handing a model to the library.
//
// The map (NormalizerSpec.precompiled_charsmap, normalizer.cc) is <uint32 trie size, little
// endian><darts-clone double array of that many bytes><normalised strings, each NUL-terminated>.
// The library walks the double array from the root over every byte of the input
// (commonPrefixSearch), keeps at most 32 matches in a stack array but loops over all of them, and
// reads the replacement as a C string at the matched value's offset into the strings.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace routescope {

/// The longest piece accepted. libsentencepiece builds its trie of pieces recursively, a level per
/// byte: a well-formed model with a 200,000-byte piece overflowed the stack (SIGSEGV, also in
/// Python's sentencepiece). The trainer makes pieces of at most 16 characters by default
/// (max_sentencepiece_length, at most 512); 4096 bytes leaves room for any user-defined symbol.
inline constexpr std::size_t kMaxPieceBytes = 4096;

/// Why the pieces or the precompiled charsmap of a serialized SentencePiece ModelProto cannot be
/// handed to libsentencepiece (a piece longer than kMaxPieceBytes; a charsmap:
/// below), or nullopt when no piece is too long and every charsmap it holds (normalizer_spec and
/// denormalizer_spec, every occurrence) is safe: every unit the search can reach for any input lies
/// inside the array, no path through the trie has more than 32 matches (nor a cycle), and every
/// match's value is an offset inside the strings where a NUL follows. Also nullopt for bytes that
/// are not a protobuf message (the library refuses them itself).
std::optional<std::string> sentencepiece_charsmap_problem(std::string_view serialized_model);

/// The same check of one charsmap blob.
std::optional<std::string> charsmap_problem(std::string_view blob);

}  // namespace routescope
