#include "engine/data/wordpiece_tokenizer.hpp"

#include <cstdio>

#include <algorithm>
#include <array>

#include "engine/core/error.hpp"
#include "engine/data/file_text.hpp"
#include "engine/data/unicode_tables.hpp"
#include "engine/data/utf8.hpp"

namespace routescope::data {

namespace {
constexpr std::size_t kMaxWordChars = 100;  // BERT's max_input_chars_per_word

const CharRange* find_range(char32_t cp) {
    const CharRange* end = kCharRanges + kCharRangeCount;
    const CharRange* it = std::upper_bound(
        kCharRanges, end, cp, [](char32_t c, const CharRange& r) { return c < r.first; });
    if (it == kCharRanges) return nullptr;
    --it;
    return cp <= it->last ? it : nullptr;
}

bool has_class(char32_t cp, CharClass cls) {
    const CharRange* r = find_range(cp);
    return r && r->cls == cls;
}

bool is_whitespace(char32_t cp) {
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || has_class(cp, CharClass::kSpace);
}

bool is_control(char32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return false;
    return has_class(cp, CharClass::kControl);
}

bool is_punctuation(char32_t cp) {
    // BERT treats every non-alphanumeric ASCII character as punctuation ("$", "^", "`", ...).
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
        (cp >= 123 && cp <= 126)) {
        return true;
    }
    return has_class(cp, CharClass::kPunctuation);
}

bool is_cjk(char32_t cp) {
    // The CJK Unified Ideographs blocks of BERT's _is_chinese_char.
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// lower() → NFD → drop Mn for one code point, appended to `out`.
void fold_uncased(char32_t cp, std::u32string& out) {
    if (cp >= 0xAC00 && cp <= 0xD7A3) {
        // Hangul syllable: canonical decomposition into conjoining jamo (Unicode §3.12).
        const char32_t s = cp - 0xAC00;
        out.push_back(0x1100 + s / (21 * 28));
        out.push_back(0x1161 + (s % (21 * 28)) / 28);
        if (s % 28 != 0) out.push_back(0x11A7 + s % 28);
        return;
    }
    if (has_class(cp, CharClass::kMark)) return;
    const CaseFold* end = kUncasedFolds + kUncasedFoldCount;
    const CaseFold* it = std::lower_bound(kUncasedFolds, end, cp,
                                          [](const CaseFold& f, char32_t c) { return f.cp < c; });
    if (it != end && it->cp == cp) {
        for (const char32_t c : it->to)
            if (c != 0) out.push_back(c);
        return;
    }
    out.push_back(cp);
}

std::string to_utf8(const std::u32string& s) {
    std::string out;
    for (const char32_t c : s)
        append_utf8(out, c);
    return out;
}
}  // namespace

namespace {
// Like the corpus reader (text_corpus.cpp): the first invalid byte, with `name`:line.
void check_vocab_utf8(std::string_view text, const std::string& name) {
    // UTF-16 / UTF-32 (Windows' "Unicode" text): said with the iconv command, as for corpora.
    if (const std::string wide = wide_unicode_text(text.substr(0, 64), name); !wide.empty())
        throw FormatError(name + ": " + wide);
    std::size_t start = 0;
    for (std::int64_t line = 1; start < text.size(); ++line) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view piece = text.substr(start, end - start);
        if (const auto bad = first_invalid_utf8(piece)) {
            // A SentencePiece model is a binary protobuf whose first field (its pieces) starts
            // with the byte 0x0A: the usual mix-up of the two kinds, said as such.
            if (text.starts_with('\n') && text.size() > 2 && text[1] != '\n')
                throw FormatError(name +
                                  ": a binary file (a SentencePiece .model, by its first bytes), "
                                  "not a WordPiece vocab.txt (one UTF-8 piece per line): for a "
                                  "SentencePiece model set tokenizer.kind=sentencepiece, or name "
                                  "the file *.model where the kind follows the name");
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(piece[*bad]));
            throw FormatError(name + ":" + std::to_string(line) + ": invalid UTF-8 byte " + byte +
                              " at byte " + std::to_string(*bad + 1) + " of the line");
        }
        start = end + 1;
    }
}
}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::string_view vocab_txt, Casing casing)
    : vocab_txt_(vocab_txt), casing_(casing) {
    // An editor's "UTF-8 with BOM": the mark is no part of the first piece (it made "[PAD]" an
    // unknown "\ufeff[PAD]"); import drops it too, with a note.
    if (vocab_txt_.starts_with("\xEF\xBB\xBF")) vocab_txt_.erase(0, 3);
    check_vocab_utf8(vocab_txt_, "wordpiece vocab.txt");
    // A NUL inside a piece: the dump's /vocab (C strings) would cut it ("x\0y" became a second
    // "x"), as a SentencePiece piece with NUL is refused for the same reason.
    if (const std::size_t nul = vocab_txt_.find('\0'); nul != std::string::npos)
        throw FormatError(
            "wordpiece vocab.txt line " +
            std::to_string(1 + std::count(vocab_txt_.begin(),
                                          vocab_txt_.begin() + static_cast<std::ptrdiff_t>(nul),
                                          '\n')) +
            ": a piece holds a NUL byte, which no vocabulary written as text (a "
            "dump's /vocab) can keep");
    // Lines ended by CR alone (classic Mac OS): transformers' load_vocab reads the file in text
    // mode, whose universal newlines end a line at a lone CR too; read as one line, no [UNK] was
    // found. A lone CR becomes a line end (CRLF files are kept as they are).
    for (std::size_t i = 0; i < vocab_txt_.size(); ++i)
        if (vocab_txt_[i] == '\r' && (i + 1 == vocab_txt_.size() || vocab_txt_[i + 1] != '\n'))
            vocab_txt_[i] = '\n';
    std::size_t start = 0;
    while (start < vocab_txt_.size()) {
        std::size_t end = vocab_txt_.find('\n', start);
        if (end == std::string::npos) end = vocab_txt_.size();
        std::string piece = vocab_txt_.substr(start, end - start);
        if (!piece.empty() && piece.back() == '\r') piece.pop_back();
        ids_[piece] = static_cast<std::int32_t>(pieces_.size());
        pieces_.push_back(std::move(piece));
        start = end + 1;
    }
    const auto find = [&](const char* p) -> std::int32_t {
        const auto it = ids_.find(p);
        return it == ids_.end() ? -1 : it->second;
    };
    specials_.pad = find("[PAD]");
    specials_.unk = find("[UNK]");
    specials_.cls = find("[CLS]");
    specials_.sep = find("[SEP]");
    specials_.mask = find("[MASK]");
    if (specials_.unk < 0) {
        throw FormatError("wordpiece vocab.txt: no [UNK] piece among " +
                          std::to_string(pieces_.size()) + " lines");
    }
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_file(const std::string& path,
                                                                  Casing casing) {
    const std::string text = read_file_text(path, "WordPiece vocab.txt");
    check_vocab_utf8(text, path);
    try {
        return std::make_unique<WordPieceTokenizer>(text, casing);
    } catch (const FormatError& e) {
        throw FormatError(path + ": " + e.what());
    }
}

std::vector<std::string> WordPieceTokenizer::basic_tokens(std::string_view text) const {
    std::u32string cleaned;
    for (const char32_t cp : decode_utf8(text)) {
        if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
        // U+2028 and U+2029 (Zl, Zp) survive BERT's _clean_text but its whitespace_tokenize
        // (Python's str.split) splits words at them, as the fast tokenizer's normaliser does.
        if (is_whitespace(cp) || cp == 0x2028 || cp == 0x2029) {
            cleaned.push_back(' ');
        } else if (is_cjk(cp)) {
            cleaned += U' ';
            cleaned.push_back(cp);
            cleaned += U' ';
        } else {
            cleaned.push_back(cp);
        }
    }
    std::vector<std::string> words;
    std::u32string word;
    const auto flush = [&] {
        if (!word.empty()) words.push_back(to_utf8(word));
        word.clear();
    };
    std::size_t i = 0;
    while (i < cleaned.size()) {
        // One whitespace-separated token: fold it (uncased), then split punctuation off.
        std::size_t j = i;
        while (j < cleaned.size() && cleaned[j] != ' ')
            ++j;
        std::u32string folded;
        if (casing_ == Casing::cased)
            folded.assign(cleaned.begin() + static_cast<std::ptrdiff_t>(i),
                          cleaned.begin() + static_cast<std::ptrdiff_t>(j));
        else
            for (std::size_t k = i; k < j; ++k)
                fold_uncased(cleaned[k], folded);
        for (const char32_t cp : folded) {
            if (is_punctuation(cp)) {
                flush();
                word.push_back(cp);
                flush();
            } else {
                word.push_back(cp);
            }
        }
        flush();
        i = j + 1;
    }
    return words;
}

void WordPieceTokenizer::wordpiece(const std::string& word, std::vector<std::int32_t>& ids) const {
    // Code-point boundaries of the word, so a piece never splits a character.
    std::vector<std::size_t> cuts;
    for (std::size_t b = 0; b < word.size(); ++b)
        if ((static_cast<unsigned char>(word[b]) & 0xC0) != 0x80) cuts.push_back(b);
    cuts.push_back(word.size());
    const std::size_t n_chars = cuts.size() - 1;
    if (n_chars > kMaxWordChars) {
        ids.push_back(specials_.unk);
        return;
    }
    std::vector<std::int32_t> pieces;
    std::size_t start = 0;
    while (start < n_chars) {
        std::size_t end = n_chars;
        std::int32_t found = -1;
        while (end > start) {
            std::string candidate = word.substr(cuts[start], cuts[end] - cuts[start]);
            if (start > 0) candidate.insert(0, "##");
            const auto it = ids_.find(candidate);
            if (it != ids_.end()) {
                found = it->second;
                break;
            }
            --end;
        }
        if (found < 0) {
            ids.push_back(specials_.unk);
            return;
        }
        pieces.push_back(found);
        start = end;
    }
    ids.insert(ids.end(), pieces.begin(), pieces.end());
}

std::vector<std::int32_t> WordPieceTokenizer::encode(std::string_view text) const {
    std::vector<std::int32_t> ids;
    // Literal specials in the text stay whole; the text between them is tokenized normally. Each
    // special's next occurrence is found once and searched again only after the text has passed
    // it: searching every special from every special found rescanned the rest of the text for the
    // absent ones each time (a 1.2 MB document of "[MASK]"s took 75 s).
    std::array<std::size_t, kSpecialPieces.size()> next{};
    std::array<std::int32_t, kSpecialPieces.size()> special_id{};
    for (std::size_t k = 0; k < kSpecialPieces.size(); ++k) {
        const auto it = ids_.find(std::string(kSpecialPieces[k]));
        special_id[k] = it == ids_.end() ? -1 : it->second;
        next[k] = special_id[k] < 0 ? std::string_view::npos : text.find(kSpecialPieces[k]);
    }
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t best = std::string_view::npos;
        std::int32_t best_id = -1;
        std::size_t best_len = 0;
        for (std::size_t k = 0; k < kSpecialPieces.size(); ++k) {
            if (special_id[k] < 0) continue;
            if (next[k] != std::string_view::npos && next[k] < pos)
                next[k] = text.find(kSpecialPieces[k], pos);
            const std::size_t at = next[k];
            if (at < best) {
                best = at;
                best_id = special_id[k];
                best_len = kSpecialPieces[k].size();
            }
        }
        const std::string_view segment =
            text.substr(pos, best == std::string_view::npos ? std::string_view::npos : best - pos);
        for (const std::string& word : basic_tokens(segment))
            wordpiece(word, ids);
        if (best == std::string_view::npos) break;
        ids.push_back(best_id);
        pos = best + best_len;
    }
    return ids;
}

std::string WordPieceTokenizer::decode(std::span<const std::int32_t> ids) const {
    std::string text;
    for (const std::int32_t id : ids) {
        if (id < 0 || id >= vocab_size()) {
            throw Error("wordpiece: id " + std::to_string(id) + " is outside [0, " +
                        std::to_string(vocab_size()) + ")");
        }
        if (id == specials_.pad) continue;
        const std::string& p = pieces_[static_cast<std::size_t>(id)];
        if (p.rfind("##", 0) == 0 && !text.empty()) {
            text += p.substr(2);
        } else {
            if (!text.empty()) text.push_back(' ');
            text += p;
        }
    }
    return text;
}

std::string WordPieceTokenizer::piece(std::int32_t id) const {
    if (id < 0 || id >= vocab_size()) {
        throw Error("wordpiece: id " + std::to_string(id) + " is outside [0, " +
                    std::to_string(vocab_size()) + ")");
    }
    return pieces_[static_cast<std::size_t>(id)];
}

bool WordPieceTokenizer::is_special(std::int32_t id) const {
    if (id < 0 || id >= vocab_size()) return false;
    const std::string& p = pieces_[static_cast<std::size_t>(id)];
    return p.size() >= 3 && p.front() == '[' && p.back() == ']';
}

std::vector<std::uint8_t> WordPieceTokenizer::serialize() const {
    return {vocab_txt_.begin(), vocab_txt_.end()};
}

}  // namespace routescope::data
