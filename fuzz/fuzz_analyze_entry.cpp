// `routescope-cli analyze gates --dump FILE` (app/cli/analyze_command.cpp) as a fuzz target:
// analyze's input check (app/cli/input_check.cpp: structure-only, in a forked child, violations
// left to the readers: refuse_invalid = false), then, when it lets the file through, its reader in
// THIS process (analysis::DumpReader) and one cheap analysis (gate statistics of every layer).
// The in-process part is where a product crash would be: libhdf5 reading what the child's check
// did not. Input: a dump image (HDF5-aware mutator; RS_FUZZ_HDF5_RAW=1 adds byte mutations).
#include <iostream>
#include <sstream>

#include "analysis/dump_reader.hpp"
#include "analysis/gates.hpp"
#include "app/cli/input_check.hpp"
#include "engine/io/contained_validation.hpp"
#include "fuzz/common.hpp"
#include "fuzz/entry_verdicts.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::init_hdf5();
    const std::string& path = fuzz::write_temp(data, size, ".dump.h5");
    auto& v = fuzz::verdicts("analyze");
    fuzz::run_reader("analyze", [&] {
        cli::InputCheck check;
        check.refuse_invalid = false;  // analyze's leniency
        // check_input writes its verdict to std::cerr: captured, for the count.
        std::ostringstream said;
        std::streambuf* old = std::cerr.rdbuf(said.rdbuf());
        int rc = 0;
        try {
            rc = cli::check_input(path, check);
        } catch (...) {
            std::cerr.rdbuf(old);
            throw;
        }
        std::cerr.rdbuf(old);
        ValidationReport r;  // the verdict, as far as the count needs it
        r.readable = rc != 2;
        r.crashed = said.str().find("the HDF5 library") != std::string::npos;
        if (rc != 0 || r.crashed) r.violations.push_back({"/", "", said.str()});
        v.count(r);
        if (rc != 0) return;  // refused: never opened here
        ++v.opened;
        const analysis::DumpReader dump(path);  // analyze's reader, in this process
        analysis::GatesOptions o;
        o.bins = 10;
        (void)analysis::gate_statistics(dump, {}, o);
    });
    return 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (!std::getenv("ROUTESCOPE_CHECK_TIMEOUT_S")) setenv("ROUTESCOPE_CHECK_TIMEOUT_S", "5", 1);
    return 0;
}
