// Sharded checkpoints (engine/io/importers/sharded.cpp): read_sharded and read_tensor_file on an
// index. Input: the index's JSON text, written as model.safetensors.index.json into a folder that
// holds two valid safetensors shards (model-00001-of-00002.safetensors: "a" [2] F32,
// model-00002-of-00002.safetensors: "b" [3] F16) made once per process. Every tensor read must
// hold product(shape) values; shard names reaching outside the folder must be refused (an
// Error), which the folder's layout makes observable: nothing else in it is a weights file.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "fuzz/common.hpp"
#include "fuzz/tensor_reader.hpp"

using namespace routescope;

namespace {

std::string safetensors(const std::string& name, const std::string& dtype, int n, int width) {
    const std::string header = "{\"" + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": [" +
                               std::to_string(n) + "], \"data_offsets\": [0, " +
                               std::to_string(n * width) + "]}}";
    std::string out(8, '\0');
    const std::uint64_t size = header.size();
    std::memcpy(out.data(), &size, 8);
    return out + header + std::string(static_cast<std::size_t>(n * width), '\0');
}

const std::string& folder() {
    static const std::string dir = [] {
        const std::string d = "/tmp/routescope-fuzz-sharded-" + std::to_string(::getpid());
        ::mkdir(d.c_str(), 0700);
        std::ofstream(d + "/model-00001-of-00002.safetensors", std::ios::binary)
            << safetensors("a", "F32", 2, 4);
        std::ofstream(d + "/model-00002-of-00002.safetensors", std::ios::binary)
            << safetensors("b", "F16", 3, 2);
        std::atexit([] {
            const std::string base = "/tmp/routescope-fuzz-sharded-" + std::to_string(::getpid());
            for (const char* f :
                 {"/model-00001-of-00002.safetensors", "/model-00002-of-00002.safetensors",
                  "/model.safetensors.index.json"})
                std::remove((base + f).c_str());
            ::rmdir(base.c_str());
        });
        return d;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string index = folder() + "/model.safetensors.index.json";
    {
        std::ofstream out(index, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    fuzz::run_reader("read_sharded", [&] {
        const auto file = importers::read_sharded(index, "auto");
        fuzz::check_tensors(file);
        // Every shard read is a file of the folder itself ("folder/../x" has the folder as a
        // prefix, so the path's parent is compared, and its name must be a plain one).
        for (const auto& shard : file.shards) {
            const std::filesystem::path p(shard);
            const std::string name = p.filename().string();
            if (p.parent_path() != folder() || name == "." || name == "..") std::abort();
        }
    });
    fuzz::run_reader("read_tensor_file(index)",
                     [&] { fuzz::check_tensors(importers::read_tensor_file(index)); });
    return 0;
}
