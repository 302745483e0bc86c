// Importer reader (engine/io/importers): read_pytorch_zip. Input: the weights file (PyTorch zip).
// Every tensor read must hold product(shape) values; read_tensor_file("auto") runs on it as well.
#include "fuzz/tensor_reader.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::run_tensor_reader(data, size, ".bin", "read_pytorch_zip", [](const std::string& path) {
        return importers::read_pytorch_zip(path);
    });
    return 0;
}
