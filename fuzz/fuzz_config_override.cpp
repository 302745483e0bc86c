// RunConfig::with_override: `--set KEY=VALUE` (docs/config.md). Input: up to 4 assignments, one a
// line, applied in turn to the default configuration and to a small BiGS one; every configuration
// that comes out must survive its own round trip through JSON.
#include <cstdio>
#include <cstdlib>

#include "engine/core/config.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const RunConfig small = RunConfig::parse(
        R"({"model": {"arch": "bigs", "vocab_size": 64, "d_model": 16, "n_layers": 2,
                      "max_len": 16, "ssm": {"n_modes": 8}}})");
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    for (const RunConfig* start : {static_cast<const RunConfig*>(nullptr), &small}) {
        RunConfig config = start ? *start : RunConfig{};
        std::string_view lines = rest;
        for (int i = 0; i < 4 && !lines.empty(); ++i) {
            const auto parts = fuzz::split_once(lines, '\n');
            const std::string_view line = parts.first;
            lines = parts.second;
            fuzz::run_reader("RunConfig::with_override", [&] {
                config = config.with_override(std::string(line));
                const std::string once = config.to_json_text();
                if (RunConfig::parse(once).to_json_text() != once) {
                    std::fprintf(stderr, "fuzz: round trip after --set %.*s differs\n",
                                 static_cast<int>(line.size()), line.data());
                    std::abort();
                }
            });
        }
    }
    return 0;
}
