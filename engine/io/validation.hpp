#pragma once
// Checking a file against DUMP_FORMAT.md or CHECKPOINT_FORMAT.md (version 1). The validators never
// throw on a malformed file: every problem becomes a Violation naming the HDF5 path, what the
// format expects there and what the file holds.
#include <string>
#include <vector>

namespace routescope {

struct Violation {
    std::string path;      ///< HDF5 path ("/data/lengths"), or "/" for the file as a whole
    std::string expected;  ///< what the format asks for
    std::string found;     ///< what the file holds
    std::string text() const { return path + ": expected " + expected + ", found " + found; }
};

enum class FileKind { Unknown, Dump, Checkpoint };

struct ValidationReport {
    std::string file;
    FileKind kind = FileKind::Unknown;
    bool readable = true;  ///< false: not an HDF5 file we can open at all (CLI exit code 2)
    std::vector<Violation> violations;
    /// true: the check ran in a child process (validate_file_contained) that died by a signal
    /// (libhdf5 crashed on the file's metadata); the one violation says what was being read. Such
    /// a file must not be opened in this process.
    bool crashed = false;
    /// With `crashed`: the child did not crash but was stopped at its time limit (a library that
    /// never returned, or a machine too busy for the limit); what is said differs, not the verdict.
    bool timed_out = false;
    bool ok() const { return readable && violations.empty(); }
    /// 0 valid, 1 invalid, 2 unreadable — the `routescope-cli validate` contract.
    int exit_code() const { return !readable ? 2 : (violations.empty() ? 0 : 1); }
};

struct ValidateOptions {
    /// Scan float datasets for NaN/Inf and integer datasets for out-of-range values. Off gives a
    /// structural check that touches metadata only (fast on multi-GB dumps).
    bool scan_values = true;
    /// Stop collecting after this many violations (a broken dump can have millions).
    std::size_t max_violations = 200;
};

/// Newest format_version this build reads, for both formats.
inline constexpr int kDumpFormatVersion = 1;
inline constexpr int kCheckpointFormatVersion = 1;

/// Opens `path`, reads the root `format` attribute and checks the file against the matching format.
ValidationReport validate_file(const std::string& path, const ValidateOptions& options = {});

/// The two checks, for a file already known to be of that kind.
ValidationReport validate_dump(const std::string& path, const ValidateOptions& options = {});
/// validate_checkpoint is validate_checkpoint_structure (the format's rules, what the file alone
/// says) and then, when that passes, read_checkpoint (the model of /config, the tokenizer, the
/// train state): one validation path, so validate accepts exactly what the loaders accept.
ValidationReport validate_checkpoint(const std::string& path, const ValidateOptions& options = {});
ValidationReport validate_checkpoint_structure(const std::string& path,
                                               const ValidateOptions& options = {});

const char* file_kind_name(FileKind kind);

}  // namespace routescope
