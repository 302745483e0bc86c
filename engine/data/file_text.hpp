#pragma once
// The whole content of a small file (a tokenizer model, a vocab.txt) as bytes in a string.
#include <string>

namespace routescope::data {

/// IoError naming `path` and `what` ("SentencePiece model") when it cannot be opened or read.
std::string read_file_text(const std::string& path, const std::string& what);

}  // namespace routescope::data
