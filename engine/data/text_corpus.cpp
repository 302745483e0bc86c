#include "engine/data/text_corpus.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"
#include "engine/data/utf8.hpp"

namespace routescope::data {

namespace fs = std::filesystem;

namespace {
// Whitespace only, Unicode's White_Space property: ASCII's, and U+0085, U+00A0 (no-break space),
// U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000 (the ideographic space of
// Japanese text), which Python's str.isspace() calls whitespace too (a line of U+3000 did not end
// a document with data.doc_sep = blank; session 32's probe). Invalid UTF-8 is not blank.
bool is_blank(const std::string& line) {
    const auto* p = reinterpret_cast<const unsigned char*>(line.data());
    const auto* end = p + line.size();
    while (p < end) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
            ++p;
        } else if (end - p >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0)) {
            p += 2;
        } else if (end - p >= 3 && p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80) {  // U+1680
            p += 3;
        } else if (end - p >= 3 && p[0] == 0xE2 && p[1] == 0x80 &&
                   (p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF) &&
                   p[2] >= 0x80) {  // U+2000..U+200A, U+2028, U+2029, U+202F
            p += 3;
        } else if (end - p >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F) {  // U+205F
            p += 3;
        } else if (end - p >= 3 && p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) {  // U+3000
            p += 3;
        } else {
            return false;
        }
    }
    return true;
}

// Why a NUL is refused in a document: text holds none (it is a binary file's), and a document's
// text is written as a C string where it is kept (a dump's /data/text), which would end there.
constexpr const char* kNulInText =
    ": text holds none, and a document's text is written as a C string (a dump's /data/text), "
    "which would end there";

// A corpus file's name as a message quotes it: a name found by listing a folder is the file
// system's bytes, and a newline in it forged a line of stderr ("b\nrouteScope-cli: FORGED
// LINE.txt"; the CLI keeps a message's own newlines), so its control characters and invalid
// UTF-8 are written as \xNN (printable_text without keep_lines).
std::string shown(const std::string& name) {
    return printable_text(name);
}

// require_regular_file with the name shown as above (its message names the file as given).
void require_corpus_file(const std::string& file) {
    try {
        require_regular_file(file, "corpus");
    } catch (const FormatError& e) {
        throw FormatError(printable_text(e.what()));
    }
}

// Line `n` of `file` (a line as next_line gives it) refused when it is not text: invalid UTF-8, or
// a NUL. Every read checks its lines, not only the constructor's first pass: a corpus changed
// after that pass (a file rewritten during a run) was otherwise trained on without the check.
// One linear scan of bytes just read.
void check_line(const std::string& line, const std::string& file, std::int64_t n) {
    if (const auto bad = first_invalid_utf8(line)) {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(line[*bad]));
        throw FormatError(shown(file) + ":" + std::to_string(n) + ": invalid UTF-8 byte " + byte +
                          " at byte " + std::to_string(*bad + 1) + " of the line" + kOtherEncoding);
    }
    if (const std::size_t nul = line.find('\0'); nul != std::string::npos)
        throw FormatError(shown(file) + ":" + std::to_string(n) + ": a NUL byte at byte " +
                          std::to_string(nul + 1) + " of the line" + kNulInText +
                          "; remove it, e.g. `tr -d '\\000' < " + shown(file) + " > cleaned.txt`");
}

bool hidden(const fs::path& p) {
    const std::string name = p.filename().string();
    return !name.empty() && name[0] == '.';
}

// A file's format: by name (*.jsonl, *.json), else by its first non-blank line (a BOM skipped):
// a JSON object with a "text" string is JSON Lines, a WikiExtractor `<doc id=…>` tag opens a
// doc-tagged file. Prose does not begin with either.
CorpusFileFormat file_format(const std::string& file) {
    if (file.ends_with(".jsonl") || file.ends_with(".json")) return CorpusFileFormat::json_lines;
    std::ifstream in(file, std::ios::binary);
    std::string line;
    for (int n = 0; n < 1000 && std::getline(in, line); ++n) {
        if (n == 0 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (is_blank(line)) continue;
        const std::size_t at = line.find_first_not_of(" \t");
        if (line.compare(at, 5, "<doc ") == 0 && line.back() == '>')
            return CorpusFileFormat::doc_tagged;
        if (line[at] == '{') {
            const nlohmann::json j =
                nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
            if (j.is_object() && j.contains("text") && j["text"].is_string())
                return CorpusFileFormat::json_lines;
        }
        return CorpusFileFormat::text;
    }
    return CorpusFileFormat::text;
}

bool is_doc_open(const std::string& line) {
    const std::size_t at = line.find_first_not_of(" \t");
    return at != std::string::npos && line.compare(at, 4, "<doc") == 0 &&
           (line.size() == at + 4 || line[at + 4] == ' ' || line[at + 4] == '>') &&
           line.back() == '>';
}

bool is_doc_close(const std::string& line) {
    const std::size_t at = line.find_first_not_of(" \t");
    const std::size_t end = line.find_last_not_of(" \t");
    return at != std::string::npos && line.compare(at, end - at + 1, "</doc>") == 0;
}

// Whether the 512 bytes at `h` are a tar header (POSIX ustar or GNU tar, the archive `tar cf`
// writes): the magic "ustar" at byte 257 and the header's checksum (bytes 148..155, octal: the sum
// of the header's bytes with those 8 counted as spaces), so that text with "ustar" there is text.
bool tar_header(const unsigned char* h) {
    if (std::string_view(reinterpret_cast<const char*>(h) + 257, 5) != "ustar") return false;
    long sum = 0, signed_sum = 0;  // some old tars summed signed chars
    for (int i = 0; i < 512; ++i) {
        sum += i >= 148 && i < 156 ? ' ' : h[i];
        signed_sum += i >= 148 && i < 156 ? ' ' : static_cast<signed char>(h[i]);
    }
    long written = 0;
    int i = 148;
    while (i < 156 && h[i] == ' ')
        ++i;
    if (i == 156 || h[i] < '0' || h[i] > '7') return false;
    for (; i < 156 && h[i] >= '0' && h[i] <= '7'; ++i)
        written = written * 8 + (h[i] - '0');
    return written == sum || written == signed_sum;
}

// What compressed, archived or columnar data a file holds, from its first bytes `b` (n of them,
// up to 512) read from `in`; empty when none.
std::string binary_kind(std::ifstream& in, const unsigned char* b, std::streamsize n) {
    const auto starts = [&](std::initializer_list<int> magic) {
        if (n < static_cast<std::streamsize>(magic.size())) return false;
        std::size_t i = 0;
        for (const int m : magic)
            if (b[i++] != m) return false;
        return true;
    };
    if (starts({0x1f, 0x8b})) return "gzip-compressed (gunzip it first)";
    if (starts({0x28, 0xb5, 0x2f, 0xfd})) return "zstd-compressed (unzstd it first)";
    if (starts({0xfd, '7', 'z', 'X', 'Z', 0})) return "xz-compressed (unxz it first)";
    if (starts({'P', 'K', 3, 4})) return "a zip archive (unzip it first)";
    // HDF5's signature (a Routescope dump or checkpoint left in a corpus folder): said as such,
    // not as "invalid UTF-8 byte 0x89".
    if (starts({0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}))
        return "an HDF5 file (a dump or checkpoint, not text: move it out of the corpus)";
    // An uncompressed tar (`tar cf`, or a .tar.gz / .tar.xz once decompressed): its headers and
    // NUL padding would be read as documents.
    if (n >= 512 && tar_header(b))
        return "a tar archive (extract it first with tar xf, and read the directory of its files)";
    // bzip2: "BZh", the block size digit, then the block magic (a line of text may begin "BZh").
    if (starts({'B', 'Z', 'h'}) && n >= 10 && b[3] >= '1' && b[3] <= '9' && b[4] == 0x31 &&
        b[5] == 0x41 && b[6] == 0x59 && b[7] == 0x26 && b[8] == 0x53 && b[9] == 0x59)
        return "bzip2-compressed (bunzip2 it first)";
    // Arrow: the IPC file format (Feather 2) opens with "ARROW1" and two padding NULs; the stream
    // format Hugging Face datasets' save_to_disk and cache files use opens with the continuation
    // marker 0xFFFFFFFF (not UTF-8: 0xFF never is).
    if (starts({'A', 'R', 'R', 'O', 'W', '1', 0, 0}) || starts({0xff, 0xff, 0xff, 0xff}))
        return "an Arrow file (Hugging Face datasets' save_to_disk or cache; export it with "
               "dataset.to_json(\"corpus.jsonl\"))";
    // Parquet: "PAR1" at both ends.
    if (starts({'P', 'A', 'R', '1'})) {
        char tail[4] = {};
        in.clear();
        in.seekg(-4, std::ios::end);
        if (in.read(tail, 4) && std::string(tail, 4) == "PAR1")
            return "a Parquet file (export it as JSON Lines or text)";
    }
    return "";
}

// Why a file is not a text corpus, from its first bytes: UTF-16/UTF-32 text, or compressed or
// columnar data, which would otherwise fail as "invalid UTF-8" at line 1 (a gzip header may not
// even hold an invalid byte before its first newline). Empty when it may be text.
std::string not_text(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    // Compressed or columnar data first, by its magic (a small gzip stream can look like UTF-16
    // to the test below).
    unsigned char b[512] = {};  // a tar's first header
    in.read(reinterpret_cast<char*>(b), sizeof b);
    const auto n = in.gcount();
    if (const std::string kind = binary_kind(in, b, n); !kind.empty())
        return kind + ", not a text corpus (UTF-8 text, or JSON Lines with a \"text\" field)";
    in.clear();
    in.seekg(0);
    // Windows' "Unicode" text: UTF-16 or UTF-32 with a byte-order mark, or UTF-16 without one
    // (judged from the first 4 KiB).
    char head[4096];
    in.read(head, sizeof head);
    const std::string_view text(head, static_cast<std::size_t>(in.gcount()));
    if (std::string wide = wide_unicode_text(text, shown(file)); !wide.empty()) return wide;
    // Lines ended by CR alone (classic Mac OS): a file without any LF and with a CR before its
    // last byte would read as one line, one document with its CRs as characters. The file is read
    // up to its first LF, not only its first 4 KiB: paragraphs of 5 kB split by CR alone, or a
    // single CR, were one document (session 32's probe). A file with LFs is left as it is (a CR
    // inside a line of LF text is a character of it), and so is one CR ending the file.
    std::size_t crs = 0;
    bool ends_in_cr = false;
    for (std::string_view chunk = text; !chunk.empty();) {
        if (chunk.find('\n') != std::string_view::npos) return {};
        crs += static_cast<std::size_t>(std::count(chunk.begin(), chunk.end(), '\r'));
        ends_in_cr = chunk.back() == '\r';
        in.read(head, sizeof head);
        chunk = std::string_view(
            head, static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
    }
    if (crs > (ends_in_cr ? 1u : 0u))
        return "text whose lines end in CR alone (classic Mac OS), which would read as one "
               "line: convert them, e.g. `tr '\\r' '\\n' < " +
               shown(file) + " > converted.txt`";
    return {};
}

// The files under directory `dir` into `files`, its subdirectories walked in turn. Symbolic links
// are followed, to directories as to files (a linked folder of documents, `ln -s /data/wiki
// corpus/wiki`, was left out without a word while a linked file was read); `walking` holds the
// real paths of the directories being walked, from the corpus down to `dir`, so a link back to
// one of them (a loop, which would never end) is refused naming it. A directory that cannot be
// listed (a folder the user may not read was skipped: the run trained on the rest, exit 0) or an
// entry whose type cannot be read is an IoError naming it and the system's reason; a link to
// nothing is skipped, as are names starting with '.' and what is neither file nor directory.
// A directory reached by a second route (`corpus/current -> v3` beside `corpus/v3`) is walked
// once, by the route first in sorted order (`walked`: the real paths walked so far), so its
// documents are not read twice; list_files does the same for files.
void walk_directory(const fs::path& dir, std::vector<fs::path>& walking, std::set<fs::path>& walked,
                    std::vector<std::string>& files) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    std::vector<fs::path> subdirectories;
    // The error is checked before the end: increment() leaves the iterator at the end when it
    // fails, so a loop that compared first ended as if the listing were complete.
    for (const fs::directory_iterator end;; it.increment(ec)) {
        if (ec)
            throw IoError(shown(dir.string()) + ": cannot list directory (" + ec.message() + ")");
        if (it == end) break;
        const fs::path& entry = it->path();
        if (hidden(entry)) continue;
        // A file system's root holds fsck's lost+found (root's alone, mode 0700): never
        // documents, and a corpus at a disk's root would otherwise be refused as unlistable.
        if (entry.filename() == "lost+found") continue;
        const fs::file_status st = fs::status(entry, ec);  // a link's target
        if (st.type() == fs::file_type::not_found) {
            ec.clear();
            continue;
        }
        if (ec)
            throw IoError(shown(entry.string()) + ": cannot read the corpus entry (" +
                          ec.message() + ")");
        if (fs::is_regular_file(st)) files.push_back(entry.string());
        if (fs::is_directory(st)) subdirectories.push_back(entry);
    }
    std::sort(subdirectories.begin(), subdirectories.end());
    for (const fs::path& sub : subdirectories) {
        const fs::path real = fs::canonical(sub, ec);
        if (ec)
            throw IoError(shown(sub.string()) + ": cannot list directory (" + ec.message() + ")");
        if (std::find(walking.begin(), walking.end(), real) != walking.end())
            throw IoError(shown(sub.string()) + ": a symbolic link to " + shown(real.string()) +
                          ", a directory that holds it: the corpus would be read without end "
                          "(remove the link, or give data.train a folder without it)");
        if (!walked.insert(real).second) continue;  // read already, by another route
        walking.push_back(real);
        walk_directory(sub, walking, walked, files);
        walking.pop_back();
    }
}

std::vector<std::string> list_files(const std::string& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw IoError(shown(path) + ": corpus path does not exist");
    if (fs::is_regular_file(st)) return {path};
    if (!fs::is_directory(st))
        throw IoError(shown(path) + ": corpus path is not a file or directory");
    std::vector<std::string> files;
    std::vector<fs::path> walking{fs::canonical(path, ec)};
    if (ec) throw IoError(shown(path) + ": cannot list directory (" + ec.message() + ")");
    std::set<fs::path> walked{walking.front()};
    walk_directory(path, walking, walked, files);
    std::sort(files.begin(), files.end());
    // A document reached by two routes (two links to one file) is read once, by the first name.
    std::set<fs::path> seen;
    std::vector<std::string> once;
    for (const std::string& f : files) {
        const fs::path real = fs::canonical(f, ec);
        if (ec || seen.insert(real).second) once.push_back(f);
        ec.clear();
    }
    return once;
}
}  // namespace

DocSeparator parse_doc_separator(const std::string& name) {
    if (name == "line") return DocSeparator::Line;
    if (name == "blank") return DocSeparator::Blank;
    throw ConfigError("data.doc_sep: '" + name + "' is not one of line, blank");
}

TextCorpus::TextCorpus(std::string path, DocSeparator separator)
    : path_(std::move(path)), separator_(separator), files_(list_files(path_)) {
    // One validating pass: fail before training rather than hours into it.
    for (const auto& file : files_) {
        require_corpus_file(file);
        if (const std::string reason = not_text(file); !reason.empty())
            throw FormatError(shown(file) + ": " + reason);
        formats_.push_back(file_format(file));
    }
    // next_line refuses invalid UTF-8 and NULs (file and line) before any format's error.
    std::string line, doc;
    reset();
    while (next_line(line)) {
    }
    reset();
    while (next(doc))
        ++size_;
    reset();
    if (size_ == 0) {
        throw FormatError(shown(path_) + ": empty corpus (no document in " +
                          std::to_string(files_.size()) + " file" +
                          (files_.size() == 1 ? "" : "s") + ")");
    }
}

bool TextCorpus::open_next_file() {
    in_.close();
    in_.clear();
    if (file_ >= files_.size()) return false;
    const std::string& name = files_[file_++];
    require_corpus_file(name);
    in_.open(name, std::ios::binary);
    if (!in_) throw IoError(shown(name) + ": cannot open corpus file");
    line_ = 0;
    file_ended_ = false;
    in_doc_ = false;
    return true;
}

bool TextCorpus::next_line(std::string& line) {
    for (;;) {
        if (file_ == 0 || file_ended_) {
            if (!open_next_file()) return false;
        }
        if (std::getline(in_, line)) {
            ++line_;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
            check_line(line, files_[file_ - 1], line_);
            return true;
        }
        if (in_.bad()) throw IoError(shown(files_[file_ - 1]) + ": read error");
        file_ended_ = true;
        // An empty "line" marks the file boundary to next(); blank mode ends a document there.
        line.clear();
        return true;
    }
}

bool TextCorpus::next(std::string& doc) {
    doc.clear();
    std::string line;
    bool have = false;
    for (;;) {
        if (!next_line(line)) {
            if (!have) return false;
            ++position_;
            return true;
        }
        const CorpusFileFormat format = formats_[file_ - 1];
        if (format == CorpusFileFormat::doc_tagged) {
            // WikiExtractor: <doc id=… url=… title=…> the article's lines </doc>.
            const std::string where = shown(files_[file_ - 1]) + ":" + std::to_string(line_);
            if (file_ended_) {
                if (in_doc_)
                    throw FormatError(shown(files_[file_ - 1]) + ":" + std::to_string(doc_line_) +
                                      ": <doc> not closed by </doc> before the end of the file");
                continue;
            }
            if (is_doc_open(line)) {
                if (in_doc_)
                    throw FormatError(where + ": <doc> inside the <doc> opened at line " +
                                      std::to_string(doc_line_) + " (no </doc> between)");
                in_doc_ = true;
                doc_line_ = line_;
                doc.clear();
                have = false;
                continue;
            }
            if (is_doc_close(line)) {
                if (!in_doc_) throw FormatError(where + ": </doc> without a <doc> before it");
                in_doc_ = false;
                if (!have) continue;  // an empty article
                ++position_;
                return true;
            }
            if (is_blank(line)) continue;
            if (!in_doc_)
                throw FormatError(where +
                                  ": text outside <doc> … </doc> (the file begins with a "
                                  "WikiExtractor <doc> tag, so every document must be inside one)");
            if (have) doc.push_back('\n');
            doc += line;
            have = true;
            continue;
        }
        if (file_ended_ || is_blank(line)) {  // a document ends at a blank line or a file's end
            if (!have) continue;
            ++position_;
            return true;
        }
        if (format == CorpusFileFormat::json_lines) {
            // One record per line, the document its "text" (C4, The Pile, RedPajama and Hugging
            // Face datasets' to_json all write this); its other fields are ignored.
            const std::string where = shown(files_[file_ - 1]) + ":" + std::to_string(line_);
            if (line_ == 1 && line.find_first_not_of(" \t[") == std::string::npos)
                throw FormatError(where +
                                  ": one JSON array spread over many lines, not one record per "
                                  "line (a JSON Lines corpus holds one {\"text\": ...} per line)");
            const nlohmann::json record = parse_json_text(line, where);
            if (!record.is_object() || !record.contains("text") || !record["text"].is_string())
                throw FormatError(where + ": " +
                                  (record.is_array()     ? std::string("a JSON array, not one "
                                                                           "record per line")
                                   : !record.is_object() ? std::string("not a JSON object")
                                   : !record.contains("text")
                                       ? std::string("no \"text\" field")
                                       : std::string("\"text\" is not a string")) +
                                  " (a JSON Lines corpus holds one {\"text\": ...} per line)");
            doc = record["text"].get<std::string>();
            if (const std::size_t nul = doc.find('\0'); nul != std::string::npos)
                throw FormatError(where + ": \"text\" holds a NUL character (\\u0000) at byte " +
                                  std::to_string(nul + 1) + " of the text" + kNulInText);
            if (is_blank(doc)) continue;
            ++position_;
            return true;
        }
        if (separator_ == DocSeparator::Line) {
            doc = std::move(line);
            ++position_;
            return true;
        }
        if (have) doc.push_back('\n');
        doc += line;
        have = true;
    }
}

void TextCorpus::reset() {
    in_.close();
    in_.clear();
    file_ = 0;
    line_ = 0;
    file_ended_ = false;
    in_doc_ = false;
    position_ = 0;
}

void TextCorpus::seek(std::int64_t position) {
    if (position < 0 || (size_ > 0 && position > size_)) {
        throw Error(shown(path_) + ": cannot resume at document " + std::to_string(position) +
                    ": the corpus has " + std::to_string(size_));
    }
    reset();
    std::string doc;
    while (position_ < position)
        next(doc);
}

std::vector<std::string> TextCorpus::read_all() {
    reset();
    std::vector<std::string> docs;
    docs.reserve(static_cast<std::size_t>(size_));
    std::string doc;
    while (next(doc))
        docs.push_back(doc);
    return docs;
}

}  // namespace routescope::data
