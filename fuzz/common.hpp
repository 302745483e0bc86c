#pragma once
// Shared by the fuzz targets (docs/reliability.md).
//
// The contract every reader states is "a malformed input is an IoError / FormatError /
// ConfigError, never a crash", so a target calls the reader inside run_reader(): a
// routescope::Error is the expected outcome and is swallowed; any other exception escaping the
// reader (std::bad_alloc, std::out_of_range, nlohmann::json's, H5::Exception) breaks that contract
// and aborts with the exception's type and message, which libFuzzer records as a crash. ASan and
// UBSan reports, and assert() failures (the fuzz tree is a Debug build at -O1), are crashes as
// well.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace routescope::fuzz {

/// Writes `data` to this process's scratch file with that suffix (/dev/shm when present) and
/// returns its path; the same path is reused by every call with the same suffix.
const std::string& write_temp(const std::uint8_t* data, std::size_t size,
                              const std::string& suffix);

/// Runs `reader`; swallows routescope::Error, aborts on anything else (see above).
void run_reader(const char* what, const std::function<void()>& reader);

/// HDF5 quiet (no error stacks printed), once.
void init_hdf5();

/// Splits the input at the first occurrence of `sep`: {before, after}; after is empty without one.
std::pair<std::string_view, std::string_view> split_once(std::string_view s, char sep);

}  // namespace routescope::fuzz
