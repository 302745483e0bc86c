#pragma once
// A plain-text corpus (TASKS.md): one file or a directory of files (searched recursively, sorted
// by path, names starting with '.' skipped; symbolic links followed, to folders as to files, a link
// back to a folder that holds it refused; a folder that cannot be listed is an IoError naming it,
// never skipped), one document per line or documents separated by
// blank lines. The constructor scans everything once, so invalid UTF-8 (FormatError "FILE:LINE:
// invalid UTF-8 ...") and an empty corpus (FormatError naming the path) stop a run before it
// starts, and size() is known. Reading then streams one document at a time, every line checked
// again (a file changed after the first scan is refused the same way, never read unchecked);
// position() counts the documents read and seek() returns to one, which is what a checkpoint's
// data_position resumes. Messages show a file's name with its control characters and invalid
// UTF-8 as \xNN (printable_text): a name read from a folder cannot forge a line of stderr.
//
// Documents: in "line" mode every line that is not blank; in "blank" mode the lines between blank
// lines, joined with '\n'. A trailing '\r' is dropped and a UTF-8 byte-order mark at the start of
// a file is skipped. A file boundary always ends a document. A file named *.jsonl or *.json, or
// whose first non-blank line is a JSON object with a "text" string (WikiExtractor --json writes
// wiki_00, without an extension), is JSON Lines whatever the mode: each non-blank line a JSON
// object whose "text" string is one document (blank texts skipped); anything else is a
// FormatError naming file and line. A file whose first non-blank line is a `<doc ...>` tag is
// WikiExtractor's own output: whatever the mode, a document is the text between `<doc ...>` and
// `</doc>` (its non-blank lines joined with '\n', the tags dropped); text outside a document or a
// document left open at the end of its file is a FormatError naming file and line. A compressed
// file (gzip, zstd, bzip2, xz, zip), a tar archive, a Parquet file or an Arrow file (Hugging Face
// datasets' save_to_disk) is refused by name, with what to do; a NUL in a document (a byte, or
// "\u0000" in a JSON Lines text) is a FormatError naming file and line.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace routescope::data {

enum class DocSeparator { Line, Blank };

/// How one file of a corpus holds its documents (TextCorpus, from its name and first line).
enum class CorpusFileFormat { text, json_lines, doc_tagged };

/// "line" | "blank" (config key data.doc_sep); ConfigError naming the key otherwise.
DocSeparator parse_doc_separator(const std::string& name);

class TextCorpus {
public:
    /// IoError when `path` does not exist, a file cannot be read, a folder in it cannot be listed
    /// or a link loops back to a folder that holds it; FormatError for invalid UTF-8
    /// or a NUL (file and line) or a corpus with no document (the path).
    TextCorpus(std::string path, DocSeparator separator = DocSeparator::Line);

    /// The next document into `doc`; false at the end of the corpus. FormatError (file and line)
    /// for invalid UTF-8 or a NUL, as the constructor's.
    bool next(std::string& doc);
    /// Documents read since the start (0 after reset()).
    std::int64_t position() const { return position_; }
    /// Continue after the first `position` documents. Error when the corpus has fewer.
    void seek(std::int64_t position);
    void reset();

    std::int64_t size() const { return size_; }
    const std::string& path() const { return path_; }
    const std::vector<std::string>& files() const { return files_; }
    /// files()[i]'s format.
    const std::vector<CorpusFileFormat>& formats() const { return formats_; }
    /// Every document from the start (leaves the stream at the end).
    std::vector<std::string> read_all();

private:
    bool next_line(std::string& line);  // across files; false at the very end
    bool open_next_file();

    std::string path_;
    DocSeparator separator_;
    std::vector<std::string> files_;
    std::vector<CorpusFileFormat> formats_;
    std::int64_t size_ = 0;

    std::size_t file_ = 0;  // index of the open file + 1 (0: none opened yet)
    std::ifstream in_;
    std::int64_t line_ = 0;  // 1-based number of the last line read in the open file
    bool file_ended_ = false;
    bool in_doc_ = false;        // inside <doc> … </doc> of a doc-tagged file
    std::int64_t doc_line_ = 0;  // the line of the <doc> tag in_doc_ opened
    std::int64_t position_ = 0;
};

}  // namespace routescope::data
