#pragma once
// The whole content of a small file (a tokenizer model, a vocab.txt) as bytes in a string.
#include <string>

namespace routescope::data {

/// IoError naming `path` and `what` ("SentencePiece model") when it cannot be opened or read;
/// FormatError when it is not a regular file (require_regular_file).
std::string read_file_text(const std::string& path, const std::string& what);

/// FormatError naming `path` and `what` when `path` exists and is not a regular file: a directory,
/// or a named pipe or device, which would block the reader for good. A missing file is left to
/// the caller's own "cannot open".
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace routescope::data
