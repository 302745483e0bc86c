// The workbench's loader (app/gui/file_loader.cpp load_file) and what it lets an analysis do, as
// a fuzz target, engine side (load_file itself is Qt: QString, QFileInfo, the views' fault hooks;
// this target calls the same engine functions in the same order with the same options): the
// structure pass (check + summary in one forked child: inspect_file_contained, the FileInfo
// handed back serialised, held across the fork by analysis::hdf5_mutex()), then for a readable
// file the value scan (validate_file_contained with scan_values, its limit grown by 1 s per 20 MB),
// then, when the final verdict says readable, what an analysis view does in THIS process
// (MainWindow::input_check lets it through): analysis::DumpReader and the first row of each
// layer. A crash of a child is a verdict (counted); a crash here is a finding.
#include "analysis/dump_reader.hpp"
#include "analysis/hdf5_lock.hpp"
#include "engine/io/contained_validation.hpp"
#include "fuzz/common.hpp"
#include "fuzz/entry_verdicts.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::init_hdf5();
    const std::string& path = fuzz::write_temp(data, size, ".dump.h5");
    auto& v = fuzz::verdicts("loader");
    fuzz::run_reader("loader", [&] {
        ValidateOptions structure;
        structure.scan_values = false;
        ContainedInspection first =
            inspect_file_contained(path, structure, &analysis::hdf5_mutex(), fuzz::child_timeout());
        if (first.report.readable && !first.info) first.report.readable = false;  // as load_file
        if (first.report.crashed) first.report.readable = false;
        if (!first.report.readable) {
            v.count(first.report);
            return;  // the error dialog; never opened here
        }
        (void)summary_text(*first.info);  // the summary view formats what the child read
        ValidateOptions scan;
        scan.scan_values = true;
        ValidationReport full =
            validate_file_contained(path, scan, &analysis::hdf5_mutex(),
                                    fuzz::child_timeout() + static_cast<double>(size) / 20e6);
        if (full.crashed) full.readable = false;
        v.count(full);
        if (!full.readable) return;  // input_check refuses it
        ++v.opened;
        const analysis::DumpReader dump(path);  // an analysis view's reader, in this process
        for (int l : dump.layers())
            if (dump.layer(l).rows > 0) (void)dump.hidden_row(l, 0);
        if (dump.examples() > 0) (void)dump.tokens(0);
    });
    return 0;
}
