// `routescope-cli inspect FILE` (app/cli/inspect_command.cpp) as a fuzz target: the structural
// check and the summary in one forked child (inspect_file_contained), then what the command does
// with the result in this process (the report's first violation, the summary text). Input: a dump
// or checkpoint image (HDF5-aware mutator; RS_FUZZ_HDF5_RAW=1 adds byte mutations). A crash of
// the child is a verdict (counted); a crash, sanitizer report or escaping exception here is a
// finding. The input alternates between a .dump.h5 and a .ckpt.h5 name by its first byte's parity
// (the kind the file name suggests changes the verdict's wording only).
#include <iostream>
#include <sstream>

#include "engine/io/contained_validation.hpp"
#include "fuzz/common.hpp"
#include "fuzz/entry_verdicts.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::init_hdf5();
    const bool checkpoint = size > 0 && (data[0] & 1);
    const std::string& path = fuzz::write_temp(data, size, checkpoint ? ".ckpt.h5" : ".dump.h5");
    fuzz::run_reader("inspect", [&] {
        ValidateOptions structure_only;
        structure_only.scan_values = false;
        const ContainedInspection inspection =
            inspect_file_contained(path, structure_only, nullptr, fuzz::child_timeout());
        fuzz::verdicts("inspect").count(inspection.report);
        std::ostringstream out;
        const ValidationReport& report = inspection.report;
        if (!report.readable) {
            out << path << ": cannot inspect: " << report.violations.at(0).found << "\n";
            return;
        }
        for (const auto& v : report.violations)
            out << "  " << v.text() << "\n";
        if (!inspection.summary)
            out << "cannot summarise: " << inspection.summary_error << "\n";
        else
            out << *inspection.summary;
    });
    return 0;
}
