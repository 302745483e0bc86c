#include "engine/data/wordpiece_tokenizer.hpp"

#include <cstdio>

#include <algorithm>
#include <array>
#include <iterator>
#include <span>
#include <string_view>

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

// Python's str.lower() maps U+03A3 Σ to ς (U+03C2), not σ, in the Final_Sigma context of Unicode's
// SpecialCasing (what CPython's handle_capital_sigma tests): preceded by a cased letter, case-
// ignorable characters skipped, and not followed by one. BERT lowers each whitespace token, so that
// token is the context ("ΟΔΟΣ" → "οδος", "ΑΣ." → "ας.", "ΑΣΑ" → "ασα"). Case_Ignorable is Mn
// (CharClass::kMark) or one of kCaseIgnorable; Cased, tested only on characters that are not
// case-ignorable, is kCasedNotIgnorable. Both lists leave out C* (BERT's _clean_text drops them
// before lower()) and come from Python's own lower(), Unicode 14.0.0 as unicode_tables.cpp:
//   final = lambda s: s.lower()[-1] == "ς"
//   kCaseIgnorable: category != "Mn" and final("A" + c + "Σ") and not final(c + "Σ")
//   kCasedNotIgnorable: final(c + "Σ")
struct CodeRange {
    char32_t first;
    char32_t last;
};
// clang-format off
constexpr CodeRange kCaseIgnorable[] = {
    {0x27, 0x27}, {0x2E, 0x2E}, {0x3A, 0x3A}, {0x5E, 0x5E}, {0x60, 0x60}, {0xA8, 0xA8},
    {0xAF, 0xAF}, {0xB4, 0xB4}, {0xB7, 0xB8}, {0x2B0, 0x2FF}, {0x374, 0x375}, {0x37A, 0x37A},
    {0x384, 0x385}, {0x387, 0x387}, {0x488, 0x489}, {0x559, 0x559}, {0x55F, 0x55F}, {0x5F4, 0x5F4},
    {0x640, 0x640}, {0x6E5, 0x6E6}, {0x7F4, 0x7F5}, {0x7FA, 0x7FA}, {0x81A, 0x81A}, {0x824, 0x824},
    {0x828, 0x828}, {0x888, 0x888}, {0x8C9, 0x8C9}, {0x971, 0x971}, {0xE46, 0xE46}, {0xEC6, 0xEC6},
    {0x10FC, 0x10FC}, {0x17D7, 0x17D7}, {0x1843, 0x1843}, {0x1AA7, 0x1AA7}, {0x1ABE, 0x1ABE},
    {0x1C78, 0x1C7D}, {0x1D2C, 0x1D6A}, {0x1D78, 0x1D78}, {0x1D9B, 0x1DBF}, {0x1FBD, 0x1FBD},
    {0x1FBF, 0x1FC1}, {0x1FCD, 0x1FCF}, {0x1FDD, 0x1FDF}, {0x1FED, 0x1FEF}, {0x1FFD, 0x1FFE},
    {0x2018, 0x2019}, {0x2024, 0x2024}, {0x2027, 0x2027}, {0x2071, 0x2071}, {0x207F, 0x207F},
    {0x2090, 0x209C}, {0x20DD, 0x20E0}, {0x20E2, 0x20E4}, {0x2C7C, 0x2C7D}, {0x2D6F, 0x2D6F},
    {0x2E2F, 0x2E2F}, {0x3005, 0x3005}, {0x3031, 0x3035}, {0x303B, 0x303B}, {0x309B, 0x309E},
    {0x30FC, 0x30FE}, {0xA015, 0xA015}, {0xA4F8, 0xA4FD}, {0xA60C, 0xA60C}, {0xA670, 0xA672},
    {0xA67F, 0xA67F}, {0xA69C, 0xA69D}, {0xA700, 0xA721}, {0xA770, 0xA770}, {0xA788, 0xA78A},
    {0xA7F2, 0xA7F4}, {0xA7F8, 0xA7F9}, {0xA9CF, 0xA9CF}, {0xA9E6, 0xA9E6}, {0xAA70, 0xAA70},
    {0xAADD, 0xAADD}, {0xAAF3, 0xAAF4}, {0xAB5B, 0xAB5F}, {0xAB69, 0xAB6B}, {0xFBB2, 0xFBC2},
    {0xFE13, 0xFE13}, {0xFE52, 0xFE52}, {0xFE55, 0xFE55}, {0xFF07, 0xFF07}, {0xFF0E, 0xFF0E},
    {0xFF1A, 0xFF1A}, {0xFF3E, 0xFF3E}, {0xFF40, 0xFF40}, {0xFF70, 0xFF70}, {0xFF9E, 0xFF9F},
    {0xFFE3, 0xFFE3}, {0x10780, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA},
    {0x16B40, 0x16B43}, {0x16F93, 0x16F9F}, {0x16FE0, 0x16FE1}, {0x16FE3, 0x16FE3},
    {0x1AFF0, 0x1AFF3}, {0x1AFF5, 0x1AFFB}, {0x1AFFD, 0x1AFFE}, {0x1E137, 0x1E13D},
    {0x1E94B, 0x1E94B}, {0x1F3FB, 0x1F3FF},
};
constexpr CodeRange kCasedNotIgnorable[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xAA, 0xAA}, {0xB5, 0xB5}, {0xBA, 0xBA}, {0xC0, 0xD6},
    {0xD8, 0xF6}, {0xF8, 0x1BA}, {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373},
    {0x376, 0x377}, {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556}, {0x560, 0x588},
    {0x10A0, 0x10C5}, {0x10C7, 0x10C7}, {0x10CD, 0x10CD}, {0x10D0, 0x10FA}, {0x10FD, 0x10FF},
    {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C80, 0x1C88}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
    {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
    {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2160, 0x217F}, {0x2183, 0x2184}, {0x24B6, 0x24E9}, {0x2C00, 0x2C7B},
    {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0x2D00, 0x2D25}, {0x2D27, 0x2D27},
    {0x2D2D, 0x2D2D}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
    {0xA78B, 0xA78E}, {0xA790, 0xA7CA}, {0xA7D0, 0xA7D1}, {0xA7D3, 0xA7D3}, {0xA7D5, 0xA7D9},
    {0xA7F5, 0xA7F6}, {0xA7FA, 0xA7FA}, {0xAB30, 0xAB5A}, {0xAB60, 0xAB68}, {0xAB70, 0xABBF},
    {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10570, 0x1057A}, {0x1057C, 0x1058A},
    {0x1058C, 0x10592}, {0x10594, 0x10595}, {0x10597, 0x105A1}, {0x105A3, 0x105B1},
    {0x105B3, 0x105B9}, {0x105BB, 0x105BC}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2},
    {0x118A0, 0x118DF}, {0x16E40, 0x16E7F}, {0x1D400, 0x1D454}, {0x1D456, 0x1D49C},
    {0x1D49E, 0x1D49F}, {0x1D4A2, 0x1D4A2}, {0x1D4A5, 0x1D4A6}, {0x1D4A9, 0x1D4AC},
    {0x1D4AE, 0x1D4B9}, {0x1D4BB, 0x1D4BB}, {0x1D4BD, 0x1D4C3}, {0x1D4C5, 0x1D505},
    {0x1D507, 0x1D50A}, {0x1D50D, 0x1D514}, {0x1D516, 0x1D51C}, {0x1D51E, 0x1D539},
    {0x1D53B, 0x1D53E}, {0x1D540, 0x1D544}, {0x1D546, 0x1D546}, {0x1D54A, 0x1D550},
    {0x1D552, 0x1D6A5}, {0x1D6A8, 0x1D6C0}, {0x1D6C2, 0x1D6DA}, {0x1D6DC, 0x1D6FA},
    {0x1D6FC, 0x1D714}, {0x1D716, 0x1D734}, {0x1D736, 0x1D74E}, {0x1D750, 0x1D76E},
    {0x1D770, 0x1D788}, {0x1D78A, 0x1D7A8}, {0x1D7AA, 0x1D7C2}, {0x1D7C4, 0x1D7CB},
    {0x1DF00, 0x1DF09}, {0x1DF0B, 0x1DF1E}, {0x1E900, 0x1E943}, {0x1F130, 0x1F149},
    {0x1F150, 0x1F169}, {0x1F170, 0x1F189},
};
// clang-format on

bool in_ranges(std::span<const CodeRange> ranges, char32_t cp) {
    const auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                                     [](char32_t c, const CodeRange& r) { return c < r.first; });
    return it != ranges.begin() && cp <= std::prev(it)->last;
}

bool case_ignorable(char32_t cp) {
    return has_class(cp, CharClass::kMark) || in_ranges(kCaseIgnorable, cp);
}

// Whether the Σ at word[k] is word-final as str.lower() decides (above).
bool final_sigma(std::u32string_view word, std::size_t k) {
    std::size_t j = k;
    while (j > 0 && case_ignorable(word[j - 1]))
        --j;
    if (j == 0 || !in_ranges(kCasedNotIgnorable, word[j - 1])) return false;
    j = k + 1;
    while (j < word.size() && case_ignorable(word[j]))
        ++j;
    return j == word.size() || !in_ranges(kCasedNotIgnorable, word[j]);
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

bool sentencepiece_model_bytes(std::string_view text) {
    return text.starts_with('\n') && text.size() > 2 && text[1] != '\n' &&
           first_invalid_utf8(text).has_value();
}

namespace {
// Like the corpus reader (text_corpus.cpp): the first invalid byte, with `name`:line. `file`:
// whether `name` is a file's path (the iconv command then names it); the text alone (a
// checkpoint's, or a vocab.txt its reader names around this message) gets no command with a
// placeholder for a path.
void check_vocab_utf8(std::string_view text, const std::string& name, bool file = true) {
    // UTF-16 / UTF-32 (Windows' "Unicode" text): said with the iconv command, as for corpora.
    if (const std::string wide = wide_unicode_text(text.substr(0, 64), file ? name : "vocab.txt");
        !wide.empty()) {
        if (file) throw FormatError(name + ": " + wide);
        // "UTF-16 (little-endian) text, not UTF-8", without the example command.
        throw FormatError(name + ": " + wide.substr(0, wide.find(": convert it")) +
                          ": convert the file it came from to UTF-8 (e.g. with iconv)");
    }
    std::size_t start = 0;
    for (std::int64_t line = 1; start < text.size(); ++line) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view piece = text.substr(start, end - start);
        if (const auto bad = first_invalid_utf8(piece)) {
            if (sentencepiece_model_bytes(text))
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
    check_vocab_utf8(vocab_txt_, "wordpiece vocab.txt", /*file=*/false);
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
        if (casing_ == Casing::cased) {
            folded.assign(cleaned.begin() + static_cast<std::ptrdiff_t>(i),
                          cleaned.begin() + static_cast<std::ptrdiff_t>(j));
        } else {
            const std::u32string_view token(cleaned.data() + i, j - i);
            for (std::size_t k = 0; k < token.size(); ++k) {
                if (token[k] == U'\u03A3' && final_sigma(token, k))
                    folded.push_back(U'\u03C2');  // ς: nothing to decompose or strip
                else
                    fold_uncased(token[k], folded);
            }
        }
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
