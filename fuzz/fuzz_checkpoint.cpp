// Checkpoint reading (engine/io/checkpoint + checkpoint_validator, CHECKPOINT_FORMAT.md):
// validate_checkpoint, read_checkpoint, and the tokenizer a checkpoint carries (load_tokenizer of
// /tokenizer). Input: an HDF5 file image, mutated through the HDF5 API by hdf5_mutator.cpp.
#include <cstdio>
#include <cstdlib>

#include "engine/data/tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/validation.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::init_hdf5();
    const std::string& path = fuzz::write_temp(data, size, ".ckpt.h5");
    fuzz::run_reader("validate_checkpoint", [&] {
        const ValidationReport report = validate_checkpoint(path);
        if (std::getenv("RS_FUZZ_VERBOSE"))  // what a seed or a crash input holds
            for (const auto& v : report.violations)
                std::fprintf(stderr, "%s\n", v.text().c_str());
    });
    fuzz::run_reader("read_checkpoint", [&] {
        const Checkpoint c = read_checkpoint(path);
        if (c.params.size() < c.layout.size()) std::abort();
        auto t = data::load_tokenizer(c.tokenizer.kind, c.tokenizer.model);
        (void)t->decode(t->encode("the gated model routes tokens"));
    });
    return 0;
}
