// Classification data (engine/data/classification_set): GLUE TSV, CSV and JSON Lines. Input: first
// byte picks the format (bit 0: .tsv / .jsonl; bit 2 set: .csv) and require_labels (bit 1); the
// rest is the file.
// A set read with labels is also numbered with its own label set (assign_label_ids).
#include "engine/data/classification_set.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool tsv = (data[0] & 1) != 0;
    const bool require_labels = (data[0] & 2) != 0;
    const char* ext = (data[0] & 4) != 0 ? ".csv" : tsv ? ".tsv" : ".jsonl";
    const std::string& path = fuzz::write_temp(data + 1, size - 1, ext);
    fuzz::run_reader("read_classification", [&] {
        data::ClassificationSet set = data::read_classification(path, require_labels);
        if (require_labels) data::assign_label_ids(set, data::label_set(set.examples));
    });
    return 0;
}
