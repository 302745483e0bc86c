// Importer reader (engine/io/importers): read_flax_msgpack. Input: the weights file. Every tensor read must
// hold product(shape) values; detect_tensor_format + read_tensor_file("auto") run on it as well.
#include <cstdlib>

#include "engine/io/importers/tensor_file.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

static void check(const importers::TensorFile& file) {
    for (const auto& t : file.tensors) {
        std::size_t n = 1;
        for (auto d : t.shape) n *= static_cast<std::size_t>(d);
        if (n != t.data.size()) std::abort();
    }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string& path = fuzz::write_temp(data, size, ".msgpack");
    fuzz::run_reader("read_flax_msgpack", [&] { check(importers::read_flax_msgpack(path)); });
    fuzz::run_reader("read_tensor_file(auto)", [&] { check(importers::read_tensor_file(path)); });
    return 0;
}
