#pragma once
// UTF-8 validation and code-point decoding (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF). The corpus reader reports the first invalid byte with file and line; the
// WordPiece tokenizer works on code points.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace routescope::data {

/// Byte offset of the first byte that does not start a valid UTF-8 sequence; nullopt when valid.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

/// Code points of `text`; each invalid byte becomes U+FFFD.
std::vector<char32_t> decode_utf8(std::string_view text);

/// Appends the UTF-8 encoding of `cp` (must be a valid scalar value).
void append_utf8(std::string& out, char32_t cp);

/// Appended to an "invalid UTF-8" error of a text file: what the byte most often means.
inline constexpr const char* kOtherEncoding =
    " (a file saved in another encoding, such as Latin-1 or Windows-1252, converts with `iconv "
    "-f WINDOWS-1252 -t UTF-8 FILE > NEW`)";

/// When the first bytes of `file` are a UTF-16 or UTF-32 byte-order mark (Windows' "Unicode"
/// text, Excel's "Unicode Text" export), or UTF-16 without one (a NUL in every other byte), what
/// to tell the user: "UTF-16 (little-endian) text, not UTF-8: convert it, e.g. `iconv -f UTF-16
/// -t UTF-8 sst.tsv > sst.utf8.tsv`"; empty otherwise.
std::string wide_unicode_text(std::string_view first_bytes, const std::string& file);

/// `text` with every byte that is not part of valid UTF-8 written as "\xNN": a message that names
/// a hostile file's dataset or key is then valid UTF-8 (a reader decoding stderr failed on it).
std::string printable_utf8(std::string_view text);

/// `text` as it may be printed on a terminal or a log: printable_utf8, and each control character
/// (C0: NUL, BEL, ESC, newline, tab…; DEL; the C1 controls U+0080–U+009F, U+009B being a
/// terminal's CSI) written as "\xNN" — a value read from a file (a model name with ESC ] 0; … BEL,
/// or a newline that forges a line of a report) printed as it is. With keep_lines, newlines and
/// tabs stay: a message of several lines of our own.
std::string printable_text(std::string_view text, bool keep_lines = false);

/// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD, as the workbench
/// shows it: an output file (JSON, CSV) that quotes a hostile dump's strings stays valid UTF-8.
std::string valid_utf8(std::string_view text);

/// A value quoted in a message: printable_utf8 of its first `max_bytes` bytes, and when it is
/// longer, "… (N bytes)" after them (a project's 4 MB setting was echoed whole, 4 MB of stderr).
std::string abbreviated(std::string_view text, std::size_t max_bytes = 80);

}  // namespace routescope::data
