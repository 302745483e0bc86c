#include "analysis/provenance.hpp"

#include "analysis/dump_reader.hpp"
#include "analysis/file_fingerprint.hpp"
#include "routescope/version.hpp"

namespace routescope::analysis {

nlohmann::json Provenance::to_json() const {
    nlohmann::json inputs_json = nlohmann::json::array();
    for (const auto& in : inputs)
        inputs_json.push_back(
            {{"role", in.role}, {"path", in.path}, {"hash", in.hash}, {"hash_kind", in.hash_kind}});
    return {{"analysis", analysis},
            {"routescope_version", kVersion},
            {"inputs", inputs_json},
            {"parameters", parameters}};
}

InputFile dump_input(const DumpReader& dump, const std::string& role) {
    return {role, dump.path(), dump.fingerprint().hash, dump.fingerprint().kind};
}

InputFile file_input(const std::string& path, const std::string& role) {
    const FileFingerprint fp = fingerprint_file(path);
    return {role, path, fp.hash, fp.kind};
}

}  // namespace routescope::analysis
