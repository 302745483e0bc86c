// Importer reader (engine/io/importers): read_safetensors. Input: the weights file (safetensors).
// Every tensor read must hold product(shape) values; read_tensor_file("auto") runs on it as well.
#include "fuzz/tensor_reader.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::run_tensor_reader(
        data, size, ".safetensors", "read_safetensors",
        [](const std::string& path) { return importers::read_safetensors(path); });
    return 0;
}
