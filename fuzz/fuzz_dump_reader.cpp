// The analysis library's dump reader (analysis/dump_reader): opening (structure check + metadata)
// and every accessor the analyses call, on the first and last rows of every layer. Input: an HDF5
// file image, mutated through the HDF5 API by hdf5_mutator.cpp.
#include "analysis/dump_reader.hpp"
#include "fuzz/common.hpp"

using namespace routescope;
using analysis::DumpReader;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::init_hdf5();
    const std::string& path = fuzz::write_temp(data, size, ".dump.h5");
    fuzz::run_reader("DumpReader", [&] {
        DumpReader r(path);
        (void)r.attribute_names();
        for (const auto& a : r.attribute_names())
            (void)r.attribute(a);
        if (r.has_text()) (void)r.text();
        (void)r.vocab();
        if (r.has_labels()) (void)r.labels();
        if (r.has_predictions()) (void)r.predictions();
        for (std::int64_t s : {std::int64_t{0}, r.examples() - 1}) {
            if (s < 0) continue;
            (void)r.tokens(s);
            (void)r.reset_mask(s);
            (void)r.prefix_end(s);
        }
        for (int l : r.layers()) {
            const auto& info = r.layer(l);
            (void)r.example_of_row(l);
            (void)r.row_lengths(l);
            (void)r.gate_reverse_from(l);
            for (std::int64_t row : {std::int64_t{0}, info.rows - 1}) {
                if (row < 0) continue;
                (void)r.hidden_row(l, row);
                (void)r.hidden_tokens(l, {{row, 0}});
                if (info.has_sentence) (void)r.sentence_rows(l, {row});
                for (const auto& g : info.gates) {
                    (void)r.gate_shape(l, g);
                    (void)r.gate_row(l, g, row);
                }
            }
        }
        for (int l : r.kernel_layers()) {
            (void)r.kernel(l, true), (void)r.kernel(l, false);
            (void)r.kernel_skip(l, true), (void)r.kernel_skip(l, false);
            (void)r.kernel_groups(l, true), (void)r.kernel_groups(l, false);
            (void)r.kernel_group_skips(l, true), (void)r.kernel_group_skips(l, false);
        }
        for (int l : r.mixing_layers())
            (void)r.mixing(l);
    });
    return 0;
}
