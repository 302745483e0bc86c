#include "engine/data/sentencepiece_charsmap.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/data/utf8.hpp"

namespace routescope {
namespace {

constexpr std::size_t kMaxTrieResults = 32;  // Normalizer::kMaxTrieResultsSize

// darts-clone's unit layout (darts.h, DoubleArrayUnit).
bool has_leaf(std::uint32_t u) {
    return ((u >> 8) & 1) == 1;
}
std::uint32_t value(std::uint32_t u) {
    return u & ((1U << 31) - 1);
}
std::uint32_t label(std::uint32_t u) {
    return u & ((1U << 31) | 0xFF);
}
std::uint32_t offset(std::uint32_t u) {
    return (u >> 10) << ((u & (1U << 9)) >> 6);
}

// Protobuf wire format: just enough to find the length-delimited fields of a message.
struct Reader {
    std::string_view in;
    std::size_t at = 0;
    bool varint(std::uint64_t* v) {
        *v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at >= in.size()) return false;
            const auto b = static_cast<unsigned char>(in[at++]);
            *v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    }
    // Calls f(field, bytes) for every length-delimited field; false on a malformed message.
    template <class F>
    bool fields(F&& f) {
        while (at < in.size()) {
            std::uint64_t key = 0, v = 0;
            if (!varint(&key)) return false;
            switch (key & 7) {
                case 0:
                    if (!varint(&v)) return false;
                    break;
                case 1:
                    if (in.size() - at < 8) return false;
                    at += 8;
                    break;
                case 5:
                    if (in.size() - at < 4) return false;
                    at += 4;
                    break;
                case 2:
                    if (!varint(&v) || v > in.size() - at) return false;
                    f(key >> 3, in.substr(at, static_cast<std::size_t>(v)));
                    at += static_cast<std::size_t>(v);
                    break;
                default:  // groups (3, 4) are not used by sentencepiece_model.proto
                    return false;
            }
        }
        return true;
    }
};

}  // namespace

std::optional<std::string> charsmap_problem(std::string_view blob) {
    if (blob.size() <= 4)
        return "the precompiled charsmap is " + std::to_string(blob.size()) +
               " bytes, too short for its header";
    std::uint32_t trie_bytes = 0;
    std::memcpy(&trie_bytes, blob.data(), 4);  // little endian (x86-64, as the library reads it)
    // The library checks trie_bytes < size before it removes the 4-byte header, so a trie that
    // runs 1-3 bytes past the blob passes its check and is read out of bounds: refuse it here.
    if (std::size_t{trie_bytes} > blob.size() - 4)
        return "the precompiled charsmap declares a trie of " + std::to_string(trie_bytes) +
               " bytes in a blob of " + std::to_string(blob.size());
    const std::size_t n = trie_bytes / 4;
    if (n == 0) return "the precompiled charsmap has an empty trie";
    std::vector<std::uint32_t> units(n);
    std::memcpy(units.data(), blob.data() + 4, n * 4);
    const std::string_view strings = blob.substr(4 + std::size_t{trie_bytes});

    // The units that match the byte leading to them from a node b are b's children: unit p with
    // label l (a byte) is reached from b = p ^ l. Listed once (CSR), so that the walk below costs
    // O(units), not 256 lookups per node.
    std::vector<std::uint32_t> first(n + 1, 0), child_units;
    for (std::size_t p = 0; p < n; ++p)
        if (label(units[p]) <= 0xFF && (p ^ label(units[p])) < n)
            ++first[(p ^ label(units[p])) + 1];
    for (std::size_t b = 0; b < n; ++b)
        first[b + 1] += first[b];
    child_units.resize(first[n]);
    {
        std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
        for (std::size_t p = 0; p < n; ++p)
            if (label(units[p]) <= 0xFF && (p ^ label(units[p])) < n)
                child_units[fill[p ^ label(units[p])]++] = static_cast<std::uint32_t>(p);
    }

    // Every node the search can reach, depth first (the array may share subtrees, as darts-clone
    // builds it from a DAWG): a node's state is 0 unseen, 1 on the current path, 2 done; `most`
    // is the most matches on a path from it. A cycle would make the matches unbounded. From node
    // b the search reads unit b ^ c for any input byte c: all of b's 256-unit block.
    std::vector<std::uint8_t> state(n, 0);
    std::vector<std::uint32_t> most(n, 0);
    struct Frame {
        std::size_t node;
        std::uint32_t next;  // index into child_units
        std::uint32_t best;
    };
    const auto block_problem = [&](std::size_t b) -> std::optional<std::string> {
        if ((b | 0xFF) < n) return std::nullopt;
        return "the precompiled charsmap's trie reaches unit " + std::to_string(b | 0xFF) + " of " +
               std::to_string(n);
    };
    const std::size_t root = offset(units[0]);
    if (root >= n) return "the precompiled charsmap's root points outside its trie";
    if (auto problem = block_problem(root)) return problem;
    std::vector<Frame> stack{{root, first[root], 0}};
    state[root] = 1;
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next == first[f.node + 1]) {
            state[f.node] = 2;
            most[f.node] = f.best;
            const std::uint32_t done = f.best;
            stack.pop_back();
            if (!stack.empty()) {  // the parent reached this node through its last child unit
                Frame& parent = stack.back();
                const std::size_t p = child_units[parent.next - 1];
                const std::uint32_t via = done + (has_leaf(units[p]) ? 1 : 0);
                if (via > parent.best) parent.best = via;
            }
            continue;
        }
        const std::size_t p = child_units[f.next++];
        const std::size_t child = p ^ offset(units[p]);
        if (child >= n)
            return "the precompiled charsmap's trie points to unit " + std::to_string(child) +
                   " of " + std::to_string(n);
        if (has_leaf(units[p])) {
            const std::uint32_t at = value(units[child]);
            if (at >= strings.size() || strings.find('\0', at) == std::string_view::npos)
                return "the precompiled charsmap maps to offset " + std::to_string(at) +
                       ", outside its " + std::to_string(strings.size()) +
                       " bytes of NUL-terminated strings";
        }
        if (state[child] == 1) return "the precompiled charsmap's trie has a cycle";
        if (state[child] == 2) {
            const std::uint32_t via = most[child] + (has_leaf(units[p]) ? 1 : 0);
            if (via > f.best) f.best = via;
        } else {
            if (auto problem = block_problem(child)) return problem;
            state[child] = 1;
            stack.push_back({child, first[child], 0});  // (invalidates f)
        }
    }
    if (most[root] > kMaxTrieResults)
        return "the precompiled charsmap's trie has a path of more than " +
               std::to_string(kMaxTrieResults) + " matches";
    return std::nullopt;
}

std::optional<std::string> sentencepiece_charsmap_problem(std::string_view serialized_model) {
    std::optional<std::string> problem;
    Reader model{serialized_model};
    // ModelProto: 3 normalizer_spec, 5 denormalizer_spec; NormalizerSpec: 2 precompiled_charsmap.
    // Repeated occurrences merge (the last charsmap wins): every one is checked.
    std::size_t piece = 0;
    const bool ok = model.fields([&](std::uint64_t field, std::string_view spec) {
        if (problem) return;
        if (field == 1) {  // ModelProto.pieces: SentencePiece 1 piece (the piece's bytes)
            Reader r{spec};
            r.fields([&](std::uint64_t f, std::string_view bytes) {
                if (!problem && f == 1 && bytes.size() > kMaxPieceBytes)
                    problem = "piece " + std::to_string(piece) + " is " +
                              std::to_string(bytes.size()) + " bytes long; at most " +
                              std::to_string(kMaxPieceBytes) + " are accepted";
                // SentencePiece's pieces are UTF-8 text (its trainer writes nothing else): a
                // piece with other bytes went into a dump's /vocab that validate refuses, and one
                // with a NUL was cut there to a duplicate of another piece.
                if (!problem && f == 1) {
                    if (const auto bad = data::first_invalid_utf8(bytes))
                        problem = "piece " + std::to_string(piece) + " is not UTF-8 (byte " +
                                  data::printable_utf8(bytes.substr(*bad, 1)) + " at offset " +
                                  std::to_string(*bad) + ")";
                    else if (bytes.find('\0') != std::string_view::npos)
                        problem = "piece " + std::to_string(piece) + " holds a NUL byte";
                }
            });
            ++piece;
            return;
        }
        if (field != 3 && field != 5) return;
        Reader r{spec};
        const bool spec_ok = r.fields([&](std::uint64_t f, std::string_view bytes) {
            if (!problem && f == 2 && !bytes.empty()) problem = charsmap_problem(bytes);
        });
        if (!spec_ok && !problem)
            problem = std::string(field == 3 ? "normalizer_spec" : "denormalizer_spec") +
                      " is not a well-formed message";
    });
    // Bytes that are not a protobuf message at all (!ok): the library refuses them itself.
    (void)ok;
    return problem;
}

}  // namespace routescope
