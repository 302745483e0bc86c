#include "app/cli/experiment_stage.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include "app/cli/atomic_text_file.hpp"
#include "app/cli/child_process.hpp"
#include "app/cli/command.hpp"
#include "engine/core/error.hpp"

namespace routescope::cli {

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

int run_experiment_stage(const std::string& program, const std::string& stage,
                         const std::string& label, const std::filesystem::path& dir,
                         const std::vector<std::string>& args) {
    const std::string out = (dir / (stage + ".stdout")).string();
    const std::string err = (dir / (stage + ".stderr")).string();
    const int rc = run_child(program, args, out, err);
    if (rc == kExitOk) return kExitOk;
    if (rc == kExitInterrupted) {
        std::cerr << "routescope-cli experiment: interrupted during " << stage << " of " << label
                  << "; " << read_text(err);
        return kExitInterrupted;
    }
    std::cerr << "routescope-cli experiment: error: " << stage << " of " << label
              << " failed (exit " << rc << "); its messages (" << err << "):\n"
              << read_text(err);
    return kExitFailure;
}

std::vector<nlohmann::ordered_json> read_json_lines(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot read");
    std::vector<nlohmann::ordered_json> out;
    std::string line;
    std::int64_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.empty()) continue;
        try {
            out.push_back(nlohmann::ordered_json::parse(line));
        } catch (const nlohmann::json::exception&) {
            throw FormatError(path + ":" + std::to_string(n) + ": not a JSON line");
        }
    }
    return out;
}

nlohmann::ordered_json read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot read");
    try {
        return nlohmann::ordered_json::parse(in);
    } catch (const nlohmann::json::exception&) {
        throw FormatError(path + ": not valid JSON");
    }
}

int prepare_output_directory(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        return experiment_failure(kExitFailure, dir + ": cannot create the output directory" +
                                                    (ec ? " (" + ec.message() + ")" : ""));
    try {
        const std::string probe = (std::filesystem::path(dir) / ".experiment-probe").string();
        write_text_atomically(probe, "\n");
        std::filesystem::remove(probe, ec);
    } catch (const Error& e) {
        return experiment_failure(kExitFailure, dir + ": the output directory is not writable (" +
                                                    std::string(e.what()) + ")");
    }
    return 0;
}

int experiment_failure(int code, const std::string& what) {
    std::cerr << "routescope-cli experiment: error: " << what << "\n";
    return code;
}

}  // namespace routescope::cli
