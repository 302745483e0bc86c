#include "app/cli/experiment_stage.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <vector>

#include "app/cli/atomic_text_file.hpp"
#include "app/cli/child_process.hpp"
#include "app/cli/command.hpp"
#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/train/stop_signal.hpp"

namespace routescope::cli {

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string& experiment_device() {
    static std::string device = "cpu";
    return device;
}

}  // namespace

void set_experiment_device(const std::string& device) {
    experiment_device() = device;
}

const std::string& experiment_device_name() {
    return experiment_device();
}

void run_experiment_stage(const std::string& program, const std::string& stage,
                          const std::string& label, const std::filesystem::path& dir,
                          const std::vector<std::string>& given) {
    const std::string out = (dir / (stage + ".stdout")).string();
    const std::string err = (dir / (stage + ".stderr")).string();
    std::vector<std::string> args = given;
    if (!args.empty() && (args[0] == "train" || args[0] == "eval" || args[0] == "dump")) {
        args.push_back("--device");
        args.push_back(experiment_device());
    }
    const int rc = run_child(program, args, out, err);
    if (rc == kExitOk) return;
    // A stop this process forwarded ends the stage whatever the child could make of it: a
    // SIGTERM in the child's first ~100 ms (before its handlers exist) ends it with 143, which
    // is this interruption, not a failure of the stage.
    // A child that said nothing (stopped before it wrote, killed by a signal) is said to have
    // said nothing: an empty text after "; " read as a message cut off.
    const std::string said = read_text(err);
    const bool silent = said.find_first_not_of(" \t\r\n") == std::string::npos;
    if (rc == kExitInterrupted || train::StopSignal::requested())
        throw Interrupted("interrupted during " + stage + " of " + label +
                          (silent ? " (before it wrote any message)" : "; " + said));
    throw RuntimeFailure(stage + " of " + label + " failed (exit " + std::to_string(rc) +
                         (rc > 128 && rc != kExitInterrupted
                              ? ", ended by signal " + std::to_string(rc - 128)
                              : "") +
                         ")" +
                         (silent ? "; it wrote no message (" + err + " is empty)"
                                 : "; its messages (" + err + "):\n" + said));
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
        out.push_back(parse_ordered_json_text(line, path + ":" + std::to_string(n)));
    }
    return out;
}

nlohmann::ordered_json read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot read");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_ordered_json_text(text.str(), path);
}

void prepare_output_directory(const std::string& dir) {
    std::error_code ec;
    // What is in the way, in the file system's terms ("File exists" said nothing of a dangling
    // link or a file of that name).
    namespace fs = std::filesystem;
    if (fs::is_symlink(fs::symlink_status(dir, ec)) && !fs::exists(dir, ec))
        throw RuntimeFailure(dir +
                             ": cannot create the output directory: it is a symbolic link to " +
                             fs::read_symlink(dir, ec).string() + ", which does not exist");
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw RuntimeFailure(dir +
                             ": cannot create the output directory: a file of that name is "
                             "there");
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        throw RuntimeFailure(dir + ": cannot create the output directory" +
                             (ec ? " (" + ec.message() + ")" : ""));
    // One experiment at a time in a directory: a second one (the same command run twice, or a
    // resume while the first still runs) would clear and rewrite the runs the first is writing.
    // The lock is held until this process ends (the descriptor is never closed; the kernel
    // releases it even after SIGKILL) and is not inherited by the stages it starts.
    const std::string lock = (std::filesystem::path(dir) / ".routescope-experiment.lock").string();
    static std::set<std::string> held;  // this process's own locks (flock would refuse a second)
    const std::string key = std::filesystem::weakly_canonical(lock, ec).string();
    if (held.count(key)) return;
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        throw RuntimeFailure(lock + ": cannot create the experiment's lock file (" +
                             std::string(std::strerror(errno)) + ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        throw ConfigError(dir + ": another experiment is running into this directory (it holds " +
                          lock + "); wait for it to end, or choose another --out");
    }
    held.insert(key);
    try {
        const std::string probe = (std::filesystem::path(dir) / ".experiment-probe").string();
        write_text_atomically(probe, "\n");
        std::filesystem::remove(probe, ec);
    } catch (const Error& e) {
        throw RuntimeFailure(dir + ": the output directory is not writable (" +
                             std::string(e.what()) + ")");
    }
}

// The folders DIR/<model> a single run of each experiment trains into: the architectures of
// experiment_command.cpp's model specs, phone_book_experiment.cpp's run_specs() names and
// representation_experiment.cpp's two architectures.
std::vector<const char*> experiment_model_folders(const std::string& name) {
    if (name == "phone-book")
        return {"next_token", "birdie_prefix", "birdie_causal", "transformer_next_token"};
    if (name == "slstm-vs-bert") return {"slstm", "bert"};
    return {"bigs", "stack_ssm", "gated_att", "bert"};
}

void check_previous_results(const std::string& dir, const std::string& name, bool grid) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path results = fs::path(dir) / "results.json";
    const char* kind = grid ? "a grid of seeds" : "a single run";
    bool made_here = false;  // DIR's results.json is this experiment's
    if (fs::exists(results, ec)) {
        nlohmann::ordered_json held;
        std::string why;
        try {
            held = read_json_file(results.string());
        } catch (const Error& e) {
            why = e.what();
        }
        if (why.empty() &&
            (!held.is_object() || !held.contains("experiment") || !held["experiment"].is_string()))
            why = "it names no experiment";
        if (!why.empty())
            throw ConfigError(results.string() + ": not an experiment's results (" + why + "); " +
                              kind + " of " + name +
                              " would replace it: move it away or choose another --out");
        const std::string other = held["experiment"].get<std::string>();
        made_here = other == name;
        if (other != name)
            throw ConfigError(results.string() + ": this --out holds experiment " + other +
                              ", not " + name + ": choose another --out");
        const bool held_grid = held.contains("seeds") && held["seeds"].is_array();
        if (held_grid != grid)
            throw ConfigError(results.string() + ": this --out holds " +
                              (held_grid ? "a grid of seeds (DIR/seed-S)"
                                         : "a single run (its models' folders)") +
                              " of " + name + "; " + kind + " would replace its table" +
                              (held_grid ? "" : " and leave the runs it describes behind") +
                              (held_grid ? ": run it with --seeds as the grid was run"
                                         : ": run it without --seeds") +
                              ", or choose another --out");
    }
    if (grid) return;
    // A single run trains each model into DIR/<model> with --overwrite: a run in one of those
    // folders that no experiment made (DIR holds no experiment's lock file and no results of this
    // experiment) is the user's, and was replaced. Other folders are not the experiment's.
    if (!made_here && !fs::exists(fs::path(dir) / ".routescope-experiment.lock", ec))
        for (const char* folder : experiment_model_folders(name))
            if (std::error_code e; fs::exists(fs::path(dir) / folder / "model.ckpt.h5", e))
                throw ConfigError((fs::path(dir) / folder).string() +
                                  " holds a training run that no experiment made here (" + dir +
                                  " has no .routescope-experiment.lock); a single run of " + name +
                                  " trains its model " + folder +
                                  " there and would replace it: move it away or choose another "
                                  "--out");
    // A grid interrupted before its table: its seed folders, each made by an experiment.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string entry = it->path().filename().string();
        if (entry.rfind("seed-", 0) == 0 && entry.size() > 5 &&
            entry.find_first_not_of("0123456789", 5) == std::string::npos &&
            fs::exists(it->path() / ".routescope-experiment.lock", ec))
            throw ConfigError(dir + ": this --out holds the seed folders of a grid (" +
                              it->path().string() +
                              "); a single run would mix its table with them: run the grid's "
                              "command again (with its --seeds), or choose another --out");
    }
}

void discard_previous_results(const std::string& dir) {
    std::error_code ec;
    for (const char* name : {"results.json", "results.md"})
        std::filesystem::remove(std::filesystem::path(dir) / name, ec);
}

void rethrow_as_runtime_failure(const std::string& prefix) {
    try {
        throw;
    } catch (const Interrupted&) {
        throw;
    } catch (const RuntimeFailure&) {
        throw;
    } catch (const ConfigError&) {
        throw;
    } catch (const Error& e) {
        throw RuntimeFailure(prefix + e.what());
    }
}

std::string fixed(const nlohmann::ordered_json& v, int digits) {
    if (!v.is_number()) return "–";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>());
    return buf;
}

}  // namespace routescope::cli
