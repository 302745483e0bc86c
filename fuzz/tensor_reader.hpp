#pragma once
// The importer targets' one body (fuzz_import_msgpack, _safetensors, _pytorch): the input is
// written as a weights file, read by the format's reader and by read_tensor_file("auto"); every
// tensor read must hold product(shape) values.
#include <cstdlib>
#include <string>

#include "engine/io/importers/tensor_file.hpp"
#include "fuzz/common.hpp"

namespace routescope::fuzz {

inline void check_tensors(const importers::TensorFile& file) {
    for (const auto& t : file.tensors) {
        std::size_t n = 1;
        for (auto d : t.shape)
            n *= static_cast<std::size_t>(d);
        if (n != t.data.size()) std::abort();
    }
}

template <class Read>
void run_tensor_reader(const std::uint8_t* data, std::size_t size, const char* suffix,
                       const char* what, Read read) {
    const std::string& path = write_temp(data, size, suffix);
    run_reader(what, [&] { check_tensors(read(path)); });
    run_reader("read_tensor_file(auto)", [&] { check_tensors(importers::read_tensor_file(path)); });
}

}  // namespace routescope::fuzz
