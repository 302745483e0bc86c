#pragma once
// What every result carries so that a figure can be traced back: the analysis, its inputs with
// their hashes, its parameters and the Routescope version (ARCHITECTURE.md, "provenance JSON").
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace routescope::analysis {

class DumpReader;

struct InputFile {
    std::string role;  ///< "dump", "dump_b", "checkpoint_before", ...
    std::string path;
    std::string hash;
    std::string hash_kind;  ///< see fingerprint_file
};

struct Provenance {
    std::string analysis;
    std::vector<InputFile> inputs;
    nlohmann::json parameters = nlohmann::json::object();
    nlohmann::json to_json() const;
};

InputFile dump_input(const DumpReader& dump, const std::string& role = "dump");
/// Hashes a file that is not a dump (a checkpoint).
InputFile file_input(const std::string& path, const std::string& role);

}  // namespace routescope::analysis
