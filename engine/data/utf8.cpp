#include "engine/data/utf8.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace routescope::data {

namespace {
// Length of the valid sequence starting at text[i], 0 when it is invalid (RFC 3629, table 3-7 of
// the Unicode standard: the second byte's range depends on the first byte).
std::size_t valid_sequence_length(std::string_view text, std::size_t i) {
    const auto b0 = static_cast<std::uint8_t>(text[i]);
    if (b0 < 0x80) return 1;
    std::size_t n = 0;
    std::uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        n = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 3;
        if (b0 == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
        if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 4;
        if (b0 == 0xF0) lo = 0x90;  // no overlong 4-byte forms
        if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (i + n > text.size()) return 0;
    const auto b1 = static_cast<std::uint8_t>(text[i + 1]);
    if (b1 < lo || b1 > hi) return 0;
    for (std::size_t k = 2; k < n; ++k) {
        const auto b = static_cast<std::uint8_t>(text[i + k]);
        if (b < 0x80 || b > 0xBF) return 0;
    }
    return n;
}
}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = valid_sequence_length(text, i);
        if (n == 0) return i;
        i += n;
    }
    return std::nullopt;
}

std::vector<char32_t> decode_utf8(std::string_view text) {
    std::vector<char32_t> out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = valid_sequence_length(text, i);
        if (n == 0) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        const auto b0 = static_cast<std::uint8_t>(text[i]);
        char32_t cp = n == 1 ? b0 : n == 2 ? (b0 & 0x1Fu) : n == 3 ? (b0 & 0x0Fu) : (b0 & 0x07u);
        for (std::size_t k = 1; k < n; ++k)
            cp = (cp << 6) | (static_cast<std::uint8_t>(text[i + k]) & 0x3Fu);
        out.push_back(cp);
        i += n;
    }
    return out;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

std::string wide_unicode_text(std::string_view b, const std::string& file) {
    const auto starts = [&](std::string_view mark) { return b.substr(0, mark.size()) == mark; };
    using namespace std::string_view_literals;
    const char* kind = starts("\xFF\xFE\0\0"sv)   ? "UTF-32 (little-endian)"
                       : starts("\0\0\xFE\xFF"sv) ? "UTF-32 (big-endian)"
                       : starts("\xFF\xFE"sv)     ? "UTF-16 (little-endian)"
                       : starts("\xFE\xFF"sv)     ? "UTF-16 (big-endian)"
                                                  : nullptr;
    std::string from = kind ? std::string(kind).substr(0, 6) : std::string();
    if (!kind && b.size() >= 8) {
        // Without a mark (Python's encoding="utf-16-le" writes none): UTF-16 text of mostly
        // Latin letters has a NUL in (nearly) every other byte, all on one side; UTF-8 text has
        // none, and a binary file (gzip) NULs on both sides or in few places.
        const std::size_t n = b.size() & ~std::size_t{1};
        std::size_t even = 0, odd = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (b[i] == '\0') ++(i % 2 ? odd : even);
        if (odd * 4 >= n / 2 * 3 && even == 0) {
            kind = "UTF-16 (little-endian, no byte-order mark)";
            from = "UTF-16LE";
        } else if (even * 4 >= n / 2 * 3 && odd == 0) {
            kind = "UTF-16 (big-endian, no byte-order mark)";
            from = "UTF-16BE";
        }
    }
    if (!kind) return {};
    // The converted file keeps the extension that says its format ("sst.tsv" → "sst.utf8.tsv"):
    // "sst.tsv.utf8" is read by none of the readers.
    const std::filesystem::path p(file);
    const std::string converted =
        p.has_extension() && p.stem() != ""
            ? (p.parent_path() / (p.stem().string() + ".utf8" + p.extension().string())).string()
            : file + ".utf8";
    return std::string(kind) + " text, not UTF-8: convert it, e.g. `iconv -f " + from +
           " -t UTF-8 " + file + " > " + converted + "`";
}

std::string printable_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const auto bad = first_invalid_utf8(text);
        if (!bad) {
            out.append(text);
            break;
        }
        out.append(text.substr(0, *bad));
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\x%02X", static_cast<unsigned char>(text[*bad]));
        out += escaped;
        text.remove_prefix(*bad + 1);
    }
    return out;
}

std::string printable_text(std::string_view text, bool keep_lines) {
    const std::string valid = printable_utf8(text);
    std::string out;
    out.reserve(valid.size());
    const auto escape = [&out](unsigned char c) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
        out += escaped;
    };
    for (std::size_t i = 0; i < valid.size(); ++i) {
        const auto c = static_cast<unsigned char>(valid[i]);
        if (keep_lines && (c == '\n' || c == '\t')) {
            out += valid[i];
        } else if (c < 0x20 || c == 0x7F) {
            escape(c);
        } else if (c == 0xC2 && i + 1 < valid.size() &&
                   static_cast<unsigned char>(valid[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(valid[i + 1]) <= 0x9F) {
            escape(c);  // a C1 control (U+009B is a terminal's CSI)
            escape(static_cast<unsigned char>(valid[++i]));
        } else {
            out += valid[i];
        }
    }
    return out;
}

std::string valid_utf8(std::string_view text) {
    if (!first_invalid_utf8(text)) return std::string(text);
    std::string out;
    out.reserve(text.size() + 8);
    for (char32_t cp : decode_utf8(text))
        append_utf8(out, cp);
    return out;
}

std::string abbreviated(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return printable_utf8(text);
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut;  // not inside a character of several bytes
    return printable_utf8(text.substr(0, cut)) + "… (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace routescope::data
