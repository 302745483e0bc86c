// Dump validation (engine/io/dump_validator, DUMP_FORMAT.md): validate_file with the value scan
// and validate_dump without it. Input: an HDF5 file image, mutated through the HDF5 API by
// hdf5_mutator.cpp (seeds: tests/fuzz/make_seeds.cpp). The validators never throw on a malformed
// file, so any exception at all is a finding here.
#include <cstdio>
#include <cstdlib>

#include "engine/io/validation.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::init_hdf5();
    const std::string& path = fuzz::write_temp(data, size, ".dump.h5");
    fuzz::run_reader("validate_file", [&] {
        const ValidationReport report = validate_file(path);
        if (std::getenv("RS_FUZZ_VERBOSE"))  // what a seed or a crash input holds
            for (const auto& v : report.violations)
                std::fprintf(stderr, "%s\n", v.text().c_str());
        (void)validate_dump(path, {.scan_values = false, .max_violations = 5});
    });
    return 0;
}
