// routescope-cli bench train | forward | ops | conv | gemm | dump — benchmarks, never timed tests
// (their figures go to docs/benchmarks.md with the command that produced them).
//
//   bench train --config X [--set k=v ...] [--baseline torch] [--threads N] [--steps S] [--warmup
//   W]
//       Full MLM training steps of the configured model on one random batch of
//       train.batch_size × data.seq_len, run by the training loop `train` runs (zeroing, forward,
//       backward, clip, AdamW, its log records; engine/train/fixed_batch_objective.hpp); with
//       --baseline torch the same configuration runs through tests/reference/bench_train.py with
//       the same thread count, batch and steps, and the ratio is printed, with the BLAS library
//       torch loaded. Then the engine's per-op profile (the tape's timers,
//       engine/ops/op_table.hpp's OpProfile).
//   bench forward --arch bigs,bert,birdie,slstm,gmlp --lengths 128,...,8192 [--d-model 256
//   --layers 4 --max-seconds S]
//       Inference time per sequence against L for any architectures (max_len = L, so gMLP's W is
//       L × L; S-LSTM runs n_layers steps); per architecture time(L_max)/time(512), the log-log
//       scaling exponent over L >= 512, and the crossover length from which it is faster than
//       attention (bert when run, else the second architecture).
//   bench ops [--backend cpu|cuda] [--op NAME] [--threads N] [--seconds S]
//       Every op of the op table at benchmark sizes, forward and backward: µs, GFLOP/s, GB/s
//       (bench_ops.hpp).
//   bench conv [--lengths 1024,4096,16384 --channels 512 --baseline torch]
//       The SSM's causal FFT convolution, one kernel per channel: the engine's FFTW op against the
//       CUDA backend's cuFFT path (on resident data, and with the transfers) when a device is
//       present, and with --baseline torch the same convolution by torch.fft on the CPU (same
//       threads) and on the GPU; the largest GPU-vs-CPU difference is printed with every row.
//   bench gemm [--sizes 512,1024,2048] [--threads N]
//       GFLOP/s of the engine GEMM and % of the measured FMA peak (backend/cpu/gemm_bench.hpp).
//   bench dump [--examples 20000 --length 128 --d-model 256 --layers 4 --dtype f32 --gates]
//       Streams an activation dump of a random-init BiGS model over random tokens
//       (engine/io/activation_dump.hpp) and reports peak RSS (getrusage ru_maxrss) and write
//       throughput (MB/s of file, examples/s, forward included); the file is deleted unless --keep.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/bench_ops.hpp"
#include "app/cli/child_process.hpp"
#include "app/cli/command.hpp"
#include "app/cli/device_option.hpp"
#include "engine/backend/cpu/blas.hpp"
#include "engine/backend/cpu/gemm_bench.hpp"
#include "engine/core/json_text.hpp"
#ifdef ROUTESCOPE_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.hpp"
#endif
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/io/activation_dump.hpp"
#include "engine/models/model.hpp"
#include "engine/ops/fft_conv.hpp"
#include "engine/ops/op_table.hpp"
#include "engine/train/fixed_batch_objective.hpp"
#include "engine/train/training_loop.hpp"

namespace routescope::cli {
namespace {

// Which GEMM kernels run, after a benchmark's header (its options checked first: a refusal writes
// nothing on stdout): OPENBLAS_CORETYPE can halve every CPU figure (docs/benchmarks.md).
void print_gemm_kernels() {
    std::printf("CPU GEMM: %s\n", cpu::blas_description().c_str());
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

int resolve_threads(int threads) {
    return threads > 0 ? threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The memory this process may still take, as far as the system says: /proc/meminfo's
// MemAvailable, lowered by a cgroup limit (v2 memory.max, v1 memory.limit_in_bytes) and by
// RLIMIT_AS (ulimit -v) less the address space in use. Infinity when none of them can be read.
double available_memory_bytes() {
    double avail = std::numeric_limits<double>::infinity();
    {
        std::ifstream in("/proc/meminfo");
        std::string key, rest;
        double kib = 0;
        while (in >> key >> kib) {
            std::getline(in, rest);
            if (key == "MemAvailable:") {
                avail = std::min(avail, kib * 1024);
                break;
            }
        }
    }
    for (const char* path :
         {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(path);
        std::string text;
        if (!(in >> text) || text == "max") continue;
        char* end = nullptr;
        const double limit = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && limit > 0) avail = std::min(avail, limit);
    }
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        std::ifstream in("/proc/self/status");
        std::string key, rest;
        double used_kib = 0;
        while (in >> key) {
            if (key == "VmSize:") {
                in >> used_kib;
                break;
            }
            std::getline(in, rest);
        }
        avail = std::min(avail, std::max(0.0, static_cast<double>(as.rlim_cur) - used_kib * 1024));
    }
    return avail;
}

// ConfigError (exit 2) before any work when `bytes` (what `what` would allocate) exceeds the
// memory available: the kernel's OOM killer would end the run unannounced (exit 137), or a
// std::bad_alloc would end it after the work before.
void refuse_unless_memory_fits(const std::string& options, const std::string& what, double bytes) {
    const double avail = available_memory_bytes();
    if (bytes > avail)
        throw ConfigError(options + ": " + what + " would need about " + bytes_text(bytes) +
                          "; about " + bytes_text(avail) +
                          " of memory is available (MemAvailable, cgroup and ulimit -v limits)");
}

// --seconds of gemm and ops: a finite time of 10 ms to an hour. A negative or NaN time gave a
// negative peak with exit 0, inf never returned, and 1e-9 s timed the FMA peak over nothing (a
// GEMM "at 20087% of peak").
constexpr double kMinBenchSeconds = 0.01;
constexpr double kMaxBenchSeconds = 3600;
const CLI::Validator kBenchSeconds(
    [](std::string& text) -> std::string {
        try {
            std::size_t used = 0;
            const double v = std::stod(text, &used);
            if (used == text.size() && std::isfinite(v) && v >= kMinBenchSeconds &&
                v <= kMaxBenchSeconds)
                return {};
        } catch (const std::exception&) {
        }
        return "must be a number of seconds from 0.01 to 3600, got " + text;
    },
    ">= 0.01 and <= 3600");

// A path option that must name something (an empty one reached std::filesystem as "cannot make
// absolute path", an internal error).
const CLI::Validator kNonEmptyPath(
    [](std::string& text) -> std::string {
        return text.empty() ? std::string("must name a path, got an empty one") : std::string();
    },
    "PATH");

// The text of the file at `path` ("" when it cannot be opened).
std::string file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `program` with `args` (no shell, no quoting) through the child-process helper, returns
// its standard output and sets `status` to its exit status (−1 when it could not start);
// `errors` receives its standard error.
std::string capture(const std::string& program, const std::vector<std::string>& args, int& status,
                    std::string* errors = nullptr) {
    const fs::path dir = fs::temp_directory_path();
    const std::string stem = "routescope-bench-" + std::to_string(getpid());
    const std::string out_path = (dir / (stem + ".out")).string();
    const std::string err_path = (dir / (stem + ".err")).string();
    try {
        status = run_child(program, args, out_path, err_path);
    } catch (const Error& e) {
        status = -1;
        if (errors) *errors = e.what();
    }
    auto slurp = [](const std::string& path) {
        std::ifstream in(path);
        std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::error_code ec;
        fs::remove(path, ec);
        return text;
    };
    const std::string out = slurp(out_path);
    const std::string err = slurp(err_path);
    if (errors && status != -1) *errors = err;
    return out;
}

// --python: a path must name an executable file (a name is looked up in PATH when run). Said
// before any work, as a usage error: it was exit 3 after the engine's side had been timed.
void check_python(const std::string& python) {
    if (python.find('/') == std::string::npos) return;
    std::error_code ec;
    if (!fs::is_regular_file(python, ec) || ::access(python.c_str(), X_OK) != 0)
        throw ConfigError("--python " + python + ": no such executable file");
}

// --torch-compile: torch.compile exists from PyTorch 2.0 on; an older torch ended the run with a
// Python traceback after the engine's side had been timed.
void check_torch_compile(const std::string& python) {
    int status = 0;
    const std::string version = capture(python,
                                        {"-c",
                                         "import sys, torch; print(torch.__version__); "
                                         "sys.exit(0 if hasattr(torch, 'compile') else 3)"},
                                        status);
    if (status == 3)
        throw ConfigError("--torch-compile: torch.compile needs PyTorch 2.0 or newer; " + python +
                          " has torch " + version.substr(0, version.find('\n')));
}

// tests/reference/<name>: next to the working directory, or above the executable (a build
// directory inside the source tree).
std::string find_torch_script(const std::string& name = "bench_train.py") {
    const fs::path rel = fs::path("tests/reference") / name;
    std::vector<fs::path> roots = {fs::current_path()};
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        for (fs::path p = exe.parent_path(); p.has_relative_path(); p = p.parent_path())
            roots.push_back(p);
    for (const auto& r : roots)
        if (fs::exists(r / rel)) return (r / rel).string();
    return {};
}

// ---------------------------------------------------------------------------------------------
// bench similarity: tests/reference/analysis/bench_similarity.py, which writes the dumps, runs
// this executable's `analyze similarity` under /usr/bin/time and numpy on the same sample.

struct SimilarityBenchArgs {
    std::int64_t sentences = 3000, length = 128, d_model = 768, layers = 13, m = 100000;
    int threads = 2;
    std::string work = "bench-similarity";
    std::string python = "/usr/bin/python3";
    std::string script;
    bool skip_numpy = false;
};

// The figures bench_similarity.py prints, for the JSON summary: "routescope: 0.1 s wall, peak
// RSS 245 MB", "numpy (...): 0.0 s computing, 0.0 s reading", "largest relative difference of
// linear CKA: 1.77e-16". Those it did not print (--skip-numpy) are left out.
void add_similarity_figures(const std::string& out, nlohmann::ordered_json& summary) {
    const std::string number = R"(([-+0-9.eE]+|nan|inf))";
    const auto figure = [&](const std::string& pattern, std::initializer_list<const char*> keys) {
        std::smatch m;
        if (!std::regex_search(out, m, std::regex(pattern))) return;
        std::size_t group = 1;
        for (const char* key : keys) {
            try {
                summary[key] = std::stod(m[group].str());
            } catch (const std::exception&) {
            }
            ++group;
        }
    };
    figure("routescope: " + number + " s wall, peak RSS " + number + " MB",
           {"routescope_seconds", "routescope_peak_rss_mb"});
    figure("numpy [^\n]*: " + number + " s computing, " + number + " s reading",
           {"numpy_compute_seconds", "numpy_read_seconds"});
    figure("largest relative difference of linear CKA: " + number, {"max_relative_difference"});
}

int run_bench_similarity(const SimilarityBenchArgs& a) {
    const std::string script =
        a.script.empty() ? find_torch_script("analysis/bench_similarity.py") : a.script;
    if (script.empty())
        throw ConfigError("tests/reference/analysis/bench_similarity.py not found; give --script");
    std::error_code found;
    if (!fs::is_regular_file(script, found))
        throw ConfigError(script + ": no such file (--script)");
    check_python(a.python);
    // --work is a folder: a file there is a usage error, a folder that cannot be made a failure
    // to write (exit 3), each naming the path (std::filesystem's exceptions were "internal").
    std::error_code ec;
    if (fs::exists(a.work, ec) && !fs::is_directory(a.work, ec))
        throw ConfigError("--work " + a.work + ": exists and is not a folder");
    fs::create_directories(a.work, ec);
    if (ec) throw IoError(a.work + ": cannot create the folder (--work): " + ec.message());
    std::vector<std::string> args = {script,
                                     "--cli",
                                     self_executable(),
                                     "--work",
                                     a.work,
                                     "--sentences",
                                     std::to_string(a.sentences),
                                     "--length",
                                     std::to_string(a.length),
                                     "--d",
                                     std::to_string(a.d_model),
                                     "--layers",
                                     std::to_string(a.layers),
                                     "--m",
                                     std::to_string(a.m),
                                     "--threads",
                                     std::to_string(a.threads)};
    if (a.skip_numpy) args.push_back("--skip-numpy");
    print_gemm_kernels();  // the CLI's and (same library, same environment) numpy's
    std::fflush(stdout);
    const std::string out = (fs::path(a.work) / "bench.out").string();
    const std::string err = (fs::path(a.work) / "bench.err").string();
    const int status = run_child(a.python, args, out, err);
    // Copied as text, and only when there is some: inserting an empty file's rdbuf() set cout's
    // failbit, which main reported as a standard output that could not be written (exit 3).
    const std::string printed = file_text(out);
    const std::string errors = file_text(err);
    if (!printed.empty()) std::cout << printed << std::flush;
    if (!errors.empty()) std::cerr << errors << std::flush;
    if (status != 0)
        throw RuntimeFailure("bench similarity: " + a.python + " " + script + " exited " +
                             std::to_string(status));
    nlohmann::ordered_json summary;
    summary["sentences"] = a.sentences;
    summary["length"] = a.length;
    summary["d_model"] = a.d_model;
    summary["layers"] = a.layers;
    summary["m"] = a.m;
    summary["threads"] = a.threads;
    add_similarity_figures(printed, summary);
    summary["similarity_json"] = (fs::path(a.work) / "similarity.json").string();
    const std::string load = load_average();
    summary["load_after"] = load;
    // The script prints the load average after only when numpy ran.
    if (printed.find("load average after") == std::string::npos)
        std::printf("load average after: %s\n", load.c_str());
    std::fflush(stdout);
    std::cout << summary.dump() << std::endl;
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// bench train

struct TrainBenchArgs {
    std::string device = "cpu";
    std::string config;
    std::vector<std::string> sets;
    std::string baseline = "none";
    int threads = 2;
    int steps = 10;
    int warmup = 2;
    int profile_steps = 3;
    std::string python = "/usr/bin/python3";
    std::string torch_script;
    bool torch_compile = false;
    std::string precision;  ///< train.precision for both sides (empty: the config's)
};

// A random MLM batch like bench_train.py's: ids uniform over the non-special ids, 15% targets.
struct RandomBatch {
    std::vector<std::int32_t> tokens, labels, lengths;
    models::Batch view;
    RandomBatch(int B, int L, int V, double mask_prob, std::uint64_t seed)
        : tokens(std::size_t(B) * L), labels(std::size_t(B) * L), lengths(std::size_t(B), L) {
        data::RandomStream rng(seed, 0, 0);
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            tokens[i] = static_cast<std::int32_t>(
                rng.between(data::kFirstRegularId, std::max(data::kFirstRegularId, V - 1)));
            labels[i] = rng.chance(mask_prob) ? tokens[i] : data::kIgnoreLabel;
        }
        for (int b = 0; b < B; ++b)
            labels[std::size_t(b) * L] = tokens[std::size_t(b) * L];  // a target in every row
        view.tokens = tokens.data();
        view.labels = labels.data();
        view.lengths = lengths.data();
    }
};

struct EngineTiming {
    double tokens_per_s = 0, step_ms = 0, final_loss = 0;
};

// The training loop's own steps (engine/train/training_loop.hpp, as `train` runs them, log
// records included) on one random batch, repeated: the wall time from the end of the warm-up
// steps to the end of the last, read from the loop's step records. The loop's log and final
// checkpoint go to a temporary directory, removed afterwards.
EngineTiming time_training_loop(models::Model& model, const RunConfig& config,
                                const RandomBatch& batch, int warmup, int steps) {
    RunConfig c = config;
    c.train.steps = warmup + steps;
    c.train.eval_every = 0;
    c.train.checkpoint_every = 0;
    const fs::path dir =
        fs::temp_directory_path() / ("routescope-bench-train-" + std::to_string(getpid()));
    fs::create_directories(dir);
    EngineTiming t;
    Clock::time_point t0 = Clock::now(), t1 = t0;
    train::LoopOptions o;
    o.out_dir = dir.string();
    o.on_record = [&](const nlohmann::ordered_json& r) {
        const std::string type = r.value("type", "");
        if (type == "start" && warmup == 0) t0 = Clock::now();
        if (type != "step") return;
        const auto step = r["step"].get<std::int64_t>();
        if (step == warmup) t0 = Clock::now();
        if (step == warmup + steps) {
            t1 = Clock::now();
            t.final_loss = r["loss"].get<double>();
        }
    };
    const data::ByteTokenizer tokenizer;
    try {
        train::TrainingLoop loop(c, model, tokenizer, model.batch_size(), o);
        train::FixedBatchObjective objective(batch.view, model.batch_size(),
                                             std::int64_t(model.batch_size()) * model.length());
        loop.run(objective);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(dir, ec);
        throw;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    const double secs = std::chrono::duration<double>(t1 - t0).count();
    const double tokens = double(model.batch_size()) * model.length() * steps;
    t.tokens_per_s = tokens / secs;
    t.step_ms = 1e3 * secs / steps;
    return t;
}

int run_bench_train(const TrainBenchArgs& a) {
    const Device device = checked_device(a.device);
    if (a.torch_compile && a.baseline != "torch")
        throw ConfigError("--torch-compile applies to the PyTorch baseline: give --baseline torch");
    // The baseline's script before the engine's steps: a missing one ended the run only after
    // the engine had been timed.
    std::string script;
    if (a.baseline == "torch") {
        script = a.torch_script.empty() ? find_torch_script() : a.torch_script;
        if (script.empty())
            throw ConfigError("tests/reference/bench_train.py not found; give --torch-script");
        std::error_code ec;
        if (!fs::is_regular_file(script, ec))
            throw ConfigError(script + ": no such file (--torch-script, the PyTorch baseline)");
        check_python(a.python);
        if (a.torch_compile) check_torch_compile(a.python);
    }
    RunConfig config = RunConfig::load(a.config);
    if (!a.sets.empty()) config = config.with_overrides(a.sets);  // checked once all are set
    if (!a.precision.empty()) config = config.with_override("train.precision=" + a.precision);
    const int threads = resolve_threads(a.threads);
    config.train.threads = threads;
    // The vocabulary `train` would give the model (it adopts the tokenizer's size).
    if (config.tokenizer.kind == "bytes")
        config.model.vocab_size = 261;  // ByteTokenizer::kVocabSize
    else if (config.tokenizer.kind == "sentencepiece" && !config.tokenizer.model)
        config.model.vocab_size = config.tokenizer.vocab_size;
    const int B = config.train.batch_size, L = config.data.seq_len, V = config.model.vocab_size;
    std::printf(
        "bench train: %s, d=%d, %d layers, V=%d, B=%d, L=%d, %d threads, %d steps after %d "
        "warm-up\nload average before: %s\n",
        config.model.arch.c_str(), config.model.d_model, config.model.n_layers, V, B, L, threads,
        a.steps, a.warmup, load_average().c_str());
    print_gemm_kernels();
    std::fflush(stdout);

    models::Model model(config, B, L, threads, device);
    model.backend().set_precision(parse_precision(config.train.precision));
    model.init(static_cast<std::uint64_t>(config.train.seed));
    const RandomBatch batch(B, L, V, config.train.mask_prob,
                            static_cast<std::uint64_t>(config.train.seed));
    const EngineTiming engine = time_training_loop(model, config, batch, a.warmup, a.steps);
    std::printf("engine: %10.1f tokens/s  (%.1f ms per step, %zu parameters, final loss %.4f)\n",
                engine.tokens_per_s, engine.step_ms, model.params().size(), engine.final_loss);
    std::fflush(stdout);

    nlohmann::ordered_json summary;
    summary["arch"] = config.model.arch;
    summary["threads"] = threads;
    summary["batch"] = B;
    summary["seq_len"] = L;
    summary["steps"] = a.steps;
    summary["engine_tokens_per_s"] = engine.tokens_per_s;
    summary["engine_step_ms"] = engine.step_ms;

    if (a.baseline == "torch") {
        const std::string cfg_path =
            (fs::temp_directory_path() / ("routescope-bench-" + std::to_string(getpid()) + ".json"))
                .string();
        std::ofstream(cfg_path) << config.to_json_text();
        int status = 0;
        std::string errors;
        std::vector<std::string> torch_args = {script,
                                               "--config",
                                               cfg_path,
                                               "--threads",
                                               std::to_string(threads),
                                               "--steps",
                                               std::to_string(a.steps),
                                               "--warmup",
                                               std::to_string(a.warmup),
                                               "--device",
                                               device == Device::cuda ? "cuda" : "cpu"};
        if (a.torch_compile) torch_args.push_back("--compile");
        torch_args.push_back("--precision");
        torch_args.push_back(config.train.precision);
        const std::string out = capture(a.python, torch_args, status, &errors);
        fs::remove(cfg_path);
        const auto last = out.find_last_of('{');
        if (status != 0 || last == std::string::npos)
            throw Error("the PyTorch baseline failed (exit " + std::to_string(status) +
                        "): " + out + errors);
        const auto torch = parse_json_text(out.substr(last), "the PyTorch baseline's output");
        // Which BLAS the matmuls really run on: the library mapped after one matmul.
        int blas_status = 0;
        std::string blas =
            capture(a.python,
                    {"-c",
                     "import torch; torch.ones(64,64)@torch.ones(64,64); "
                     "print(' '.join(sorted({l.split()[-1] for l in open('/proc/self/maps') "
                     "if 'blas' in l.lower() and '.so' in l})))"},
                    blas_status);
        if (blas_status != 0) blas.clear();
        const double tps = torch["tokens_per_s"].get<double>();
        std::printf("torch:  %10.1f tokens/s  (%.1f ms per step, %d threads, final loss %.4f)\n",
                    tps, torch["step_ms"].get<double>(), torch["threads"].get<int>(),
                    torch["final_loss"].get<double>());
        std::printf("torch BLAS: %s\n", blas.empty() ? "(none found)\n" : blas.c_str());
        std::printf("ratio engine / torch: %.2f\n", engine.tokens_per_s / tps);
        summary["torch_tokens_per_s"] = tps;
        summary["torch_step_ms"] = torch["step_ms"];
        summary["torch_blas"] = blas.substr(0, blas.find_last_not_of('\n') + 1);
        summary["ratio"] = engine.tokens_per_s / tps;
    }

    if (a.profile_steps > 0) {
        ops::OpProfile profile;
        model.set_profile(&profile);
        const double wall = 1e-3 * a.profile_steps *
                            time_training_loop(model, config, batch, 0, a.profile_steps).step_ms;
        model.set_profile(nullptr);
        std::printf(
            "\nengine per-op profile, %d steps (%.0f ms per step; ops %.0f%% of it, the rest "
            "is the optimizer, clipping and the loop's logging):\n%s",
            a.profile_steps, 1e3 * wall / a.profile_steps, 100.0 * profile.total_seconds() / wall,
            profile.report().c_str());
    }
    std::printf("load average after: %s\n", load_average().c_str());
    std::cout << summary.dump() << std::endl;
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// bench forward

struct ForwardBenchArgs {
    std::string device = "cpu";
    std::vector<std::string> archs = {"bigs", "bert"};
    std::vector<int> lengths = {128, 256, 512, 1024, 2048, 4096, 8192};
    int d_model = 256;
    int layers = 4;
    int vocab = 1000;
    int threads = 2;
    int repeats = 3;
    double max_seconds = 0;  ///< > 0: an architecture slower than this at L skips longer lengths
};

// A forward benchmark's model of `arch` at length L (ConfigError naming the option for a bad one).
RunConfig forward_config(const std::string& arch, int L, const ForwardBenchArgs& a) {
    return RunConfig::from_json(nlohmann::json{{"model",
                                                {{"arch", arch},
                                                 {"d_model", a.d_model},
                                                 {"n_layers", a.layers},
                                                 {"vocab_size", a.vocab},
                                                 {"max_len", L}}}});
}

// Median wall time of one inference forward of a single sequence of length L.
double time_forward(const std::string& arch, int L, const ForwardBenchArgs& a, int threads) {
    models::Model model(forward_config(arch, L, a), 1, L, threads, checked_device(a.device),
                        models::ModelUse::inference);
    model.init(1);
    const RandomBatch batch(1, L, a.vocab, 0.15, 1);
    std::vector<double> times;
    for (int r = 0; r < a.repeats + 1; ++r) {
        const auto t0 = Clock::now();
        model.forward(batch.view, /*training=*/false);
        if (r > 0) times.push_back(seconds_since(t0));  // the first run warms caches and plans
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// Least-squares slope of log time against log L over the points run with L >= from (all points
// run when fewer than two qualify): the scaling exponent, 1 for linear and 2 for quadratic.
struct ScalingFit {
    double exponent = 0;
    int from = 0, to = 0;  ///< the lengths the fit spans
};

ScalingFit scaling_exponent(const std::vector<int>& lengths, const std::vector<double>& ms,
                            int from) {
    std::vector<std::size_t> pts;
    for (int pass = 0; pass < 2 && pts.size() < 2; ++pass) {
        pts.clear();
        for (std::size_t i = 0; i < ms.size(); ++i)
            if (ms[i] > 0 && (pass == 1 || lengths[i] >= from)) pts.push_back(i);
    }
    ScalingFit fit;
    if (pts.size() < 2) return fit;
    double mx = 0, my = 0;
    for (std::size_t i : pts) {
        mx += std::log(double(lengths[i]));
        my += std::log(ms[i]);
    }
    mx /= double(pts.size());
    my /= double(pts.size());
    double sxy = 0, sxx = 0;
    for (std::size_t i : pts) {
        const double x = std::log(double(lengths[i])) - mx, y = std::log(ms[i]) - my;
        sxy += x * y;
        sxx += x * x;
    }
    fit.exponent = sxx > 0 ? sxy / sxx : 0;
    fit.from = lengths[pts.front()];
    fit.to = lengths[pts.back()];
    return fit;
}

int run_bench_forward(const ForwardBenchArgs& a) {
    (void)checked_device(a.device);  // before any work: cuda is exit 2 with the reason
    // Every architecture and size before the first timing: an unknown --arch, --d-model 0 or a
    // length the model cannot take stopped the run in the middle of its table.
    if (!(a.max_seconds >= 0) || !std::isfinite(a.max_seconds))
        throw ConfigError("--max-seconds: " + number_text(a.max_seconds) +
                          " is not a number of seconds ≥ 0 (0: never skip)");
    if (a.archs.empty() || a.lengths.empty())
        throw ConfigError(a.archs.empty() ? "--arch: give at least one architecture"
                                          : "--lengths: give at least one length");
    for (std::size_t k = 0; k < a.archs.size(); ++k) {
        if (std::find(a.archs.begin(), a.archs.begin() + static_cast<std::ptrdiff_t>(k),
                      a.archs[k]) != a.archs.begin() + static_cast<std::ptrdiff_t>(k))
            throw ConfigError("--arch: " + a.archs[k] +
                              " is named twice (each architecture is one column)");
        for (int L : a.lengths) {
            if (L < 2) throw ConfigError("--lengths: " + std::to_string(L) + " is below 2");
            try {
                forward_config(a.archs[k], L, a).check();
            } catch (const ConfigError& e) {
                throw ConfigError("--arch " + a.archs[k] + " --d-model " +
                                  std::to_string(a.d_model) + " --layers " +
                                  std::to_string(a.layers) + " --vocab " + std::to_string(a.vocab) +
                                  " at L = " + std::to_string(L) + ": " + e.what());
            }
        }
    }
    const int threads = resolve_threads(a.threads);
    std::printf(
        "bench forward: d=%d, %d layers, V=%d, one sequence, %d threads, median of %d\n"
        "load average before: %s\n",
        a.d_model, a.layers, a.vocab, threads, a.repeats, load_average().c_str());
    print_gemm_kernels();
    std::printf("%8s", "L");
    for (const auto& arch : a.archs)
        std::printf(" %12s", (arch + " ms").c_str());
    std::printf("\n");
    // t[k][i] < 0: not run (the architecture passed --max-seconds at a shorter length).
    std::vector<std::vector<double>> t(a.archs.size());
    std::vector<bool> stopped(a.archs.size(), false);
    for (int L : a.lengths) {
        std::printf("%8d", L);
        for (std::size_t k = 0; k < a.archs.size(); ++k) {
            if (stopped[k]) {
                t[k].push_back(-1);
                std::printf(" %12s", "-");
                continue;
            }
            t[k].push_back(1e3 * time_forward(a.archs[k], L, a, threads));
            std::printf(" %12.2f", t[k].back());
            std::fflush(stdout);
            if (a.max_seconds > 0 && t[k].back() > 1e3 * a.max_seconds) stopped[k] = true;
        }
        std::printf("\n");
    }
    nlohmann::ordered_json summary;
    summary["lengths"] = a.lengths;
    for (std::size_t k = 0; k < a.archs.size(); ++k) {
        nlohmann::ordered_json col = nlohmann::ordered_json::array();
        for (double v : t[k])
            col.push_back(v < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v));
        summary[a.archs[k] + "_ms"] = col;
    }
    const auto at = [&](std::size_t k, int L) -> double {
        const auto it = std::find(a.lengths.begin(), a.lengths.end(), L);
        return it == a.lengths.end() ? -1 : t[k][std::size_t(it - a.lengths.begin())];
    };
    for (std::size_t k = 0; k < a.archs.size(); ++k) {
        int longest = -1;
        for (std::size_t i = 0; i < a.lengths.size(); ++i)
            if (t[k][i] > 0) longest = std::max(longest, a.lengths[i]);
        if (at(k, 512) > 0 && longest > 512) {
            const double ratio = at(k, longest) / at(k, 512);
            std::printf("%s: time(%d)/time(512) = %.1f (linear: %.0f)\n", a.archs[k].c_str(),
                        longest, ratio, longest / 512.0);
            summary[a.archs[k] + "_scaling"] = ratio;
        }
        const ScalingFit fit = scaling_exponent(a.lengths, t[k], 512);
        if (fit.to > fit.from) {
            std::printf("%s: scaling exponent (log-log slope over L = %d..%d) = %.2f\n",
                        a.archs[k].c_str(), fit.from, fit.to, fit.exponent);
            summary[a.archs[k] + "_exponent"] = fit.exponent;
        }
    }
    // Crossover against attention: "bert" when it was run, else the second architecture.
    std::size_t ref = 1;
    for (std::size_t k = 0; k < a.archs.size(); ++k)
        if (a.archs[k] == "bert") ref = k;
    for (std::size_t k = 0; k < a.archs.size() && a.archs.size() >= 2; ++k) {
        if (k == ref) continue;
        // The shortest length from which it is faster at every longer length both ran (the
        // first faster length said "from L on" of lengths where it was slower again).
        std::vector<std::size_t> order(a.lengths.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](std::size_t x, std::size_t y) { return a.lengths[x] < a.lengths[y]; });
        int crossover = -1;
        for (std::size_t o = order.size(); o-- > 0;) {
            const std::size_t i = order[o];
            if (!(t[k][i] > 0 && t[ref][i] > 0)) continue;
            if (t[k][i] >= t[ref][i]) break;
            crossover = a.lengths[i];
        }
        if (crossover > 0)
            std::printf("crossover: %s is faster than %s from L = %d on (of the lengths run)\n",
                        a.archs[k].c_str(), a.archs[ref].c_str(), crossover);
        else
            std::printf("crossover: %s is not faster than %s at any length run\n",
                        a.archs[k].c_str(), a.archs[ref].c_str());
        summary[a.archs[k] + "_crossover"] = crossover;
        if (a.archs.size() == 2) summary["crossover"] = crossover;
    }
    std::printf("load average after: %s\n", load_average().c_str());
    std::cout << summary.dump() << std::endl;
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// bench conv

struct ConvBenchArgs {
    std::vector<int> lengths{1024, 4096, 16384};
    int channels = 512;
    int threads = 2;
    int repeats = 10;
    std::string baseline = "none";
    std::string python = "/usr/bin/python3";
    std::string torch_script;
};

#ifdef ROUTESCOPE_HAVE_CUDA
// Largest |a - b| over the largest |b|: the two sides' agreement, printed with every row.
double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
    }
    return scale > 0 ? diff / scale : diff;
}
#endif

// About what the conv bench allocates at length L (the loop below, one length at a time): six
// float vectors of C·L (u, k, u_t, y_cpu_t, y_cpu, y_gpu) and D, and FftConvWorkspace's kernel
// spectra (2·C·(L+1) floats), backward partial sums (2·C·(L+1) doubles) and per-thread blocks of
// up to 32 channels over the 2L transform.
double conv_bench_bytes(int C, int L, int threads) {
    const double c = C, l = L, block = std::min(C, 32);
    return 4 * (6 * c * l + c) + 4 * 2 * c * (l + 1) + 8 * 2 * c * (l + 1) + 4 * c +
           4 * threads * block * (6 * (l + 1) + 48);
}

int run_bench_conv(const ConvBenchArgs& a) {
    const int threads = resolve_threads(a.threads);
    const int C = a.channels;
    // Before any work: --channels 10^8 was killed by the OOM killer (exit 137) mid-run.
    for (int L : a.lengths)
        refuse_unless_memory_fits(
            "--channels " + std::to_string(C) + " with --lengths " + std::to_string(L),
            "the convolution's buffers (inputs, kernels, outputs and the FFT workspace)",
            conv_bench_bytes(C, L, threads));
    std::printf(
        "bench conv: causal FFT convolution of %d channels (one kernel each), %d threads, "
        "%d repeats (median)\nload average before: %s\n",
        C, threads, a.repeats, load_average().c_str());
    print_gemm_kernels();
#ifdef ROUTESCOPE_HAVE_CUDA
    const auto device = cuda::query_devices();
    const bool gpu = device.count > 0;
    std::printf("CUDA: %s\n", gpu ? device.name.c_str() : device.reason.c_str());
#else
    const bool gpu = false;
    std::printf("CUDA: not compiled in\n");
#endif
    nlohmann::json torch;
    if (a.baseline == "torch") {
        const std::string script =
            a.torch_script.empty() ? find_torch_script("bench_conv.py") : a.torch_script;
        if (script.empty())
            throw ConfigError("tests/reference/bench_conv.py not found; give --torch-script");
        std::error_code ec;
        if (!fs::is_regular_file(script, ec))
            throw ConfigError(script + ": no such file (--torch-script, the PyTorch baseline)");
        check_python(a.python);
        std::string lengths;
        for (int L : a.lengths)
            lengths += (lengths.empty() ? "" : ",") + std::to_string(L);
        int status = 0;
        std::string errors;
        const std::string out =
            capture(a.python,
                    {script, "--lengths", lengths, "--channels", std::to_string(C), "--threads",
                     std::to_string(threads), "--repeats", std::to_string(a.repeats)},
                    status, &errors);
        const auto last = out.find_last_of('{');
        const auto first = out.find('{');
        if (status != 0 || first == std::string::npos || last == std::string::npos)
            throw Error("the PyTorch baseline failed (exit " + std::to_string(status) +
                        "): " + out + errors);
        torch = parse_json_text(out.substr(first), "the PyTorch baseline's output");
        std::printf("torch %s, CUDA %s\n", torch["torch"].get<std::string>().c_str(),
                    torch["cuda"].get<std::string>().c_str());
    }

    nlohmann::ordered_json summary;
    summary["channels"] = C;
    summary["threads"] = threads;
    summary["rows"] = nlohmann::json::array();
    std::printf("%7s %11s %11s %11s %11s %11s %11s %10s\n", "L", "cpu ms", "torch cpu", "gpu comp",
                "gpu total", "torch gpu", "cpu/gpu", "max |dy|");
    for (int L : a.lengths) {
        const std::size_t n = static_cast<std::size_t>(C) * L;
        std::vector<float> u(n), k(n), u_t(n), y_cpu_t(n), y_cpu(n), y_gpu(n);
        data::RandomStream rng(11, 0, static_cast<std::uint32_t>(L));
        for (std::size_t i = 0; i < n; ++i) {
            u[i] = static_cast<float>(rng.uniform() * 2 - 1);
            k[i] = static_cast<float>((rng.uniform() * 2 - 1) * 0.05);
        }
        // The engine's op takes [B, L, d] channels-last: u[c][t] → u_t[t][c].
        for (int c = 0; c < C; ++c)
            for (int t = 0; t < L; ++t)
                u_t[static_cast<std::size_t>(t) * C + c] = u[static_cast<std::size_t>(c) * L + t];
        const std::vector<float> D(static_cast<std::size_t>(C), 0.0f);
        ThreadPool pool(threads);
        ops::FftConvWorkspace<float> ws(1, L, C, C, threads);
        std::vector<double> cpu_ms;
        for (int r = 0; r < a.repeats + 1; ++r) {  // the first run warms caches and pages
            const auto t0 = Clock::now();
            ops::fft_conv_forward(y_cpu_t.data(), u_t.data(), k.data(), D.data(), 1, L, C, C, ws,
                                  pool);
            if (r > 0) cpu_ms.push_back(1000 * seconds_since(t0));
        }
        std::sort(cpu_ms.begin(), cpu_ms.end());
        for (int c = 0; c < C; ++c)
            for (int t = 0; t < L; ++t)
                y_cpu[static_cast<std::size_t>(c) * L + t] =
                    y_cpu_t[static_cast<std::size_t>(t) * C + c];

        nlohmann::ordered_json row;
        row["L"] = L;
        row["cpu_ms"] = cpu_ms[cpu_ms.size() / 2];
        double gpu_compute = 0, gpu_total = 0, diff = 0;
#ifdef ROUTESCOPE_HAVE_CUDA
        if (gpu) {
            cuda::fft_causal_conv_timed(u.data(), k.data(), y_gpu.data(), L, C, 1);  // warm-up
            const auto t =
                cuda::fft_causal_conv_timed(u.data(), k.data(), y_gpu.data(), L, C, a.repeats);
            gpu_compute = t.compute_ms;
            gpu_total = t.upload_ms + t.compute_ms + t.download_ms;
            diff = max_relative_difference(y_gpu, y_cpu);
            row["gpu_plan_ms"] = t.plan_ms;
            row["gpu_upload_ms"] = t.upload_ms;
            row["gpu_compute_ms"] = t.compute_ms;
            row["gpu_download_ms"] = t.download_ms;
            row["gpu_vs_cpu_max_rel_diff"] = diff;
        }
#endif
        double torch_cpu = 0, torch_gpu = 0;
        if (!torch.is_null())
            for (const auto& tr : torch["rows"])
                if (tr["L"].get<int>() == L) {
                    torch_cpu = tr["cpu_ms"].get<double>();
                    if (tr.contains("cuda_ms")) torch_gpu = tr["cuda_ms"].get<double>();
                    row["torch_cpu_ms"] = torch_cpu;
                    if (torch_gpu > 0) row["torch_cuda_ms"] = torch_gpu;
                }
        auto cell = [](double v) {
            char b[32];
            std::snprintf(b, sizeof b, v > 0 ? "%.3f" : "-", v);
            return std::string(b);
        };
        std::printf("%7d %11s %11s %11s %11s %11s %11s %10s\n", L,
                    cell(row["cpu_ms"].get<double>()).c_str(), cell(torch_cpu).c_str(),
                    cell(gpu_compute).c_str(), cell(gpu_total).c_str(), cell(torch_gpu).c_str(),
                    gpu ? cell(row["cpu_ms"].get<double>() / gpu_compute).c_str() : "-",
                    gpu ? cell(diff).c_str() : "-");
        summary["rows"].push_back(row);
    }
    std::printf(
        "cpu ms: the engine's FFTW op (ops::fft_conv_forward); gpu comp: cuFFT on resident "
        "data; gpu total: with the upload and download; torch: the same convolution by "
        "torch.fft in tests/reference/bench_conv.py; cpu/gpu = cpu ms / gpu comp\n");
    std::printf("load average after: %s\n", load_average().c_str());
    std::cout << summary.dump() << std::endl;
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// bench gemm

int run_bench_gemm(const std::vector<int>& sizes, int threads_arg, double seconds) {
    const int threads = resolve_threads(threads_arg);
    for (int n : sizes)  // A, W and C of n × n floats, before the peak is measured
        refuse_unless_memory_fits("--sizes " + std::to_string(n), "the GEMM's three matrices",
                                  12.0 * n * n);
    std::printf("bench gemm: %d threads, load average before: %s\n", threads,
                load_average().c_str());
    print_gemm_kernels();
    const double peak = cpu::measure_fma_peak_gflops(threads, seconds);
    std::printf("measured FMA peak (%s): %.1f GFLOP/s\n", cpu::fma_peak_isa(), peak);
    std::printf("%8s %10s %10s\n", "m=n=k", "GFLOP/s", "% peak");
    nlohmann::ordered_json summary;
    summary["threads"] = threads;
    summary["peak_gflops"] = peak;
    for (int n : sizes) {
        const auto r = cpu::bench_gemm(n, n, n, threads, seconds);
        std::printf("%8d %10.1f %9.1f%%\n", n, r.gflops, 100.0 * r.gflops / peak);
        summary["gflops_" + std::to_string(n)] = r.gflops;
    }
    std::printf("load average after: %s\n", load_average().c_str());
    std::cout << summary.dump() << std::endl;
    return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// bench dump

struct DumpBenchArgs {
    std::int64_t examples = 20000;
    int length = 128;
    int d_model = 256;
    int layers = 4;
    int batch = 16;
    int threads = 0;
    std::string dtype = "f32";
    bool gates = false;
    bool keep = false;
    std::string out = "bench.dump.h5";
    std::string device = "cpu";
};

double peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: ru_maxrss in KiB
}

int run_bench_dump(const DumpBenchArgs& a) {
    const int threads = resolve_threads(a.threads);
    RunConfig config;
    config.model.arch = "bigs";
    config.model.vocab_size = 261;  // the byte tokenizer's (5 specials + 256 bytes)
    config.model.d_model = a.d_model;
    config.model.n_layers = a.layers;
    config.model.max_len = a.length;
    config.data.seq_len = a.length;
    // The model's size estimate of `bench forward` and `train` (config.cpp, "the model would need
    // about ..."), before the parameters are drawn: --layers 10^8 grew until the OOM killer came.
    try {
        config.check();
    } catch (const ConfigError& e) {
        throw ConfigError("--d-model " + std::to_string(a.d_model) + " --layers " +
                          std::to_string(a.layers) + " --length " + std::to_string(a.length) +
                          ": " + e.what());
    }
    std::error_code ec;
    if (fs::is_directory(a.out, ec))
        throw ConfigError("--out " + a.out + ": is a folder; give the dump file's name");
    // Its own file: written, then deleted without --keep. One that was there (a real dump, a
    // notes file) was replaced and then deleted.
    if (fs::exists(fs::symlink_status(a.out, ec)))
        throw ConfigError("--out " + a.out +
                          ": exists; bench dump writes a file of its own (and deletes it unless "
                          "--keep): give a new name");
    // Drawn straight into a host vector (Model::init's values, no training model built).
    std::vector<float> params = models::Model::initial_parameters(config.model, 1);
    DumpSource source;
    source.count = a.examples;
    source.length = a.length;
    source.example = [&](std::int64_t i) {
        // Full-length random byte sequences framed [CLS] … [SEP], from (seed 7, i) alone.
        data::RandomStream rng(7, 0, static_cast<std::uint32_t>(i));
        DumpExample e;
        e.tokens.resize(static_cast<std::size_t>(a.length));
        e.tokens.front() = data::kClsId;
        for (int t = 1; t + 1 < a.length; ++t)
            e.tokens[static_cast<std::size_t>(t)] =
                data::kFirstRegularId + static_cast<std::int32_t>(rng.below(256));
        e.tokens.back() = data::kSepId;
        return e;
    };
    ActivationDumpOptions o;
    o.float16 = a.dtype == "f16";
    o.gates = a.gates;
    o.batch = a.batch;
    o.threads = threads;
    o.device = checked_device(a.device);
    o.name = "bench dump (random init)";
    o.producer = "routescope-cli bench dump";
    std::printf(
        "bench dump: S=%lld, L=%d, d=%d, layers 0..%d, %s, gates %s, batch %d, %d threads\n"
        "load average before: %s\nRSS before the dump: %.1f MiB\n",
        static_cast<long long>(a.examples), a.length, a.d_model, a.layers, a.dtype.c_str(),
        a.gates ? "on" : "off", a.batch, threads, load_average().c_str(), peak_rss_mib());
    print_gemm_kernels();
    const auto t0 = Clock::now();
    double last_print = -1e9;
    o.progress = [&](std::int64_t done, std::int64_t total) {
        // Every 5 s (and at the end): a run cut short still shows its rate.
        const double now = seconds_since(t0);
        if (now - last_print >= 5.0 || done == total) {
            last_print = now;
            std::printf("  %lld/%lld examples, %.1f s, %.2f examples/s, peak RSS %.1f MiB\n",
                        static_cast<long long>(done), static_cast<long long>(total), now,
                        now > 0 ? static_cast<double>(done) / now : 0.0, peak_rss_mib());
        }
        std::fflush(stdout);
    };
    const ActivationDumpSummary s =
        write_activation_dump(config, std::move(params), source, a.out, o);
    const double mb = static_cast<double>(s.file_bytes) / 1e6;
    nlohmann::ordered_json r;
    r["examples"] = s.examples;
    r["file_mb"] = mb;
    r["seconds"] = s.seconds;
    r["mb_per_s"] = mb / s.seconds;
    r["examples_per_s"] = static_cast<double>(s.examples) / s.seconds;
    r["peak_rss_mib"] = peak_rss_mib();
    r["parameters_mib"] = static_cast<double>(s.parameter_bytes) / (1 << 20);
    r["arena_mib"] = static_cast<double>(s.arena_bytes) / (1 << 20);
    r["write_queue_peak_mib"] = static_cast<double>(s.queue_peak_bytes) / (1 << 20);
    r["load_after"] = load_average();
    std::cout << r.dump() << std::endl;
    if (!a.keep && !fs::remove(a.out, ec) && ec)
        throw IoError(a.out + ": cannot remove the dump (--keep to keep it): " + ec.message());
    return kExitOk;
}

CommandRunner setup_bench(CLI::App& app) {
    auto* cmd = app.add_subcommand("bench",
                                   "Benchmarks: train, forward, ops, conv, gemm, dump, similarity");
    cmd->require_subcommand(1);

    auto ta = std::make_shared<TrainBenchArgs>();
    auto* train = cmd->add_subcommand("train", "Training throughput, optionally against PyTorch");
    train->add_option("--config", ta->config, "Run configuration")->required();
    add_device_option(train, ta->device);
    train->add_option("--set", ta->sets, "Override a configuration value");
    train->add_option("--baseline", ta->baseline, "none | torch")
        ->check(CLI::IsMember({"none", "torch"}));
    train->add_option("--threads", ta->threads, "Threads on both sides (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    train->add_option("--steps", ta->steps, "Timed steps")->check(kPositive);
    train->add_option("--warmup", ta->warmup, "Untimed steps first")->check(kNonNegative);
    train->add_option("--profile-steps", ta->profile_steps, "Steps of the per-op profile (0: none)")
        ->check(kNonNegative);
    train->add_option("--python", ta->python, "Python with torch");
    train->add_option("--torch-script", ta->torch_script, "tests/reference/bench_train.py");
    train->add_option("--precision", ta->precision, "fp32 | tf32 (both sides) | bf16-mixed")
        ->check(CLI::IsMember({"fp32", "tf32", "bf16-mixed"}));
    train->add_flag("--torch-compile", ta->torch_compile,
                    "The baseline's forward and loss through torch.compile");

    auto fa = std::make_shared<ForwardBenchArgs>();
    auto* forward = cmd->add_subcommand("forward", "Inference time per sequence against length");
    add_device_option(forward, fa->device);
    forward->add_option("--arch", fa->archs, "Architectures (the first is compared to the second)")
        ->delimiter(',');
    forward->add_option("--lengths", fa->lengths, "Sequence lengths")->delimiter(',');
    forward->add_option("--d-model", fa->d_model, "Width");
    forward->add_option("--layers", fa->layers, "Layers");
    forward->add_option("--vocab", fa->vocab, "Vocabulary size");
    forward->add_option("--threads", fa->threads, "Threads (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    forward->add_option("--repeats", fa->repeats, "Timed runs per point (median)")
        ->check(kPositive);
    forward->add_option(
        "--max-seconds", fa->max_seconds,
        "Skip an architecture's longer lengths once a point took longer (0: never)");

    auto sizes = std::make_shared<std::vector<int>>(std::vector<int>{512, 1024, 2048});
    auto gemm_threads = std::make_shared<int>(2);
    auto gemm_seconds = std::make_shared<double>(0.5);
    auto* gemm = cmd->add_subcommand("gemm", "Engine GEMM against the measured FMA peak");
    gemm->add_option("--sizes", *sizes, "m = n = k sizes")->delimiter(',')->check(kPositive);
    gemm->add_option("--threads", *gemm_threads, "Threads (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    gemm->add_option("--seconds", *gemm_seconds, "Seconds per measurement")->check(kBenchSeconds);

    auto ca = std::make_shared<ConvBenchArgs>();
    auto* conv = cmd->add_subcommand(
        "conv", "The SSM's causal FFT convolution: FFTW op against cuFFT (and torch.fft)");
    conv->add_option("--lengths", ca->lengths, "Sequence lengths")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 22));
    conv->add_option("--channels", ca->channels, "Channels, one kernel each")->check(kPositive);
    conv->add_option("--threads", ca->threads, "CPU threads on both sides (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    conv->add_option("--repeats", ca->repeats, "Timed runs per point (median)")->check(kPositive);
    conv->add_option("--baseline", ca->baseline, "none | torch")
        ->check(CLI::IsMember({"none", "torch"}));
    conv->add_option("--python", ca->python, "Python with torch");
    conv->add_option("--torch-script", ca->torch_script, "tests/reference/bench_conv.py");

    auto oa = std::make_shared<OpsBenchArgs>();
    auto* ops_cmd = cmd->add_subcommand("ops", "Every op of the op table, forward and backward");
    ops_cmd->add_option("--backend", oa->backend, "cpu | cuda");
    ops_cmd->add_option("--op", oa->op, "One op by name (default: all)");
    ops_cmd->add_option("--threads", oa->threads, "Threads (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    ops_cmd->add_option("--seconds", oa->seconds, "Seconds per measurement")->check(kBenchSeconds);

    auto da = std::make_shared<DumpBenchArgs>();
    auto* dump = cmd->add_subcommand("dump", "Activation dump: peak memory and write throughput");
    dump->add_option("--examples", da->examples, "Examples S")->check(kPositive);
    dump->add_option("--length", da->length, "Length L")->check(CLI::Range(2, 65536));
    dump->add_option("--d-model", da->d_model, "Width d")->check(kPositive);
    dump->add_option("--layers", da->layers, "Blocks (the dump holds layers 0..n)")
        ->check(kPositive);
    dump->add_option("--batch", da->batch, "Examples per forward")->check(kPositive);
    dump->add_option("--threads", da->threads, "Threads (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    dump->add_option("--dtype", da->dtype, "f32 | f16")->check(CLI::IsMember({"f32", "f16"}));
    dump->add_flag("--gates", da->gates, "Also write the gates u_f, u_b, v");
    dump->add_option("--out", da->out, "Dump file (deleted afterwards unless --keep)")
        ->check(kNonEmptyPath);
    dump->add_flag("--keep", da->keep, "Keep the dump file");
    add_device_option(dump, da->device);

    auto sa = std::make_shared<SimilarityBenchArgs>();
    auto* similarity = cmd->add_subcommand(
        "similarity",
        "Linear CKA of every layer pair of two dumps, beside numpy on the same sample");
    similarity->add_option("--sentences", sa->sentences, "Examples per dump")->check(kPositive);
    similarity->add_option("--length", sa->length, "Tokens per example")->check(kPositive);
    similarity->add_option("--d-model", sa->d_model, "Width d")->check(kPositive);
    similarity->add_option("--layers", sa->layers, "Layers per dump")->check(kPositive);
    similarity->add_option("--m", sa->m, "Token vectors sampled")->check(kPositive);
    similarity->add_option("--threads", sa->threads, "Threads (OMP_NUM_THREADS)")
        ->check(CLI::Range(0, kMaxThreads));
    similarity->add_option("--work", sa->work, "Folder for the dumps (kept and reused)")
        ->check(kNonEmptyPath);
    similarity->add_option("--python", sa->python, "Python with numpy and h5py");
    similarity->add_option("--script", sa->script, "tests/reference/analysis/bench_similarity.py");
    similarity->add_flag("--skip-numpy", sa->skip_numpy, "Time Routescope only");

    return [=]() {
        // Errors are thrown to main's handler (exit_codes.hpp). A benchmark reads no input file:
        // an I/O error (writing its results, running its reference) is a failure at run time.
        inputs_read();
        if (ops_cmd->parsed()) return run_bench_ops(*oa);
        if (dump->parsed()) return run_bench_dump(*da);
        if (train->parsed()) return run_bench_train(*ta);
        if (forward->parsed()) return run_bench_forward(*fa);
        if (conv->parsed()) return run_bench_conv(*ca);
        if (similarity->parsed()) return run_bench_similarity(*sa);
        return run_bench_gemm(*sizes, *gemm_threads, *gemm_seconds);
    };
}

const CommandRegistration registration{"bench", setup_bench};

}  // namespace
}  // namespace routescope::cli
