// RunConfig::parse (docs/config.md): the run configuration a user writes. Input: JSON text.
// Besides "never crash", checks the documented round trip: from_json(to_json()) gives the same
// configuration (to_json_text of both is equal).
#include <cstdio>
#include <cstdlib>

#include "engine/core/config.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::run_reader("RunConfig::parse", [&] {
        const RunConfig config = RunConfig::parse(text);
        const std::string once = config.to_json_text();
        const std::string twice = RunConfig::parse(once).to_json_text();
        if (once != twice) {
            std::fprintf(stderr, "fuzz: RunConfig round trip differs:\n%s\n%s\n", once.c_str(),
                         twice.c_str());
            std::abort();
        }
    });
    return 0;
}
