// Importer reader (engine/io/importers): read_flax_msgpack. Input: the weights file (Flax msgpack).
// Every tensor read must hold product(shape) values; read_tensor_file("auto") runs on it as well.
#include "fuzz/tensor_reader.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::run_tensor_reader(
        data, size, ".msgpack", "read_flax_msgpack",
        [](const std::string& path) { return importers::read_flax_msgpack(path); });
    return 0;
}
