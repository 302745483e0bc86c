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

}  // namespace routescope::data
