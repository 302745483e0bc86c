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
#include <optional>
#include <string>
#include <string_view>

namespace routescope {

/// Why the precompiled charsmap of a serialized SentencePiece ModelProto cannot be handed to
/// libsentencepiece, or nullopt when every charsmap it holds (normalizer_spec and
/// denormalizer_spec, every occurrence) is safe: every unit the search can reach for any input lies
/// inside the array, no path through the trie has more than 32 matches (nor a cycle), and every
/// match's value is an offset inside the strings where a NUL follows. Also nullopt for bytes that
/// are not a protobuf message (the library refuses them itself).
std::optional<std::string> sentencepiece_charsmap_problem(std::string_view serialized_model);

/// The same check of one charsmap blob.
std::optional<std::string> charsmap_problem(std::string_view blob);

}  // namespace routescope
