#include "fuzz/common.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <typeinfo>

#include "engine/core/error.hpp"

namespace routescope::fuzz {

const std::string& write_temp(const std::uint8_t* data, std::size_t size,
                              const std::string& suffix) {
    static std::map<std::string, std::string> paths;
    auto& path = paths[suffix];
    if (path.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : (tmp ? tmp : "/tmp");
        path = dir + "/routescope-fuzz-" + std::to_string(::getpid()) + suffix;
        std::atexit([] {
            for (const auto& [s, p] : paths)
                std::remove(p.c_str());
        });
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
        std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
        std::abort();
    }
    return path;
}

void run_reader(const char* what, const std::function<void()>& reader) {
    try {
        reader();
    } catch (const Error&) {
        // The contract: a malformed input is a routescope::Error.
    } catch (const H5::Exception& e) {
        std::fprintf(stderr, "fuzz: %s let an H5::Exception escape: %s: %s\n", what,
                     e.getFuncName().c_str(), e.getDetailMsg().c_str());
        std::abort();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: %s let %s escape: %s\n", what, typeid(e).name(), e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "fuzz: %s let an unknown exception escape\n", what);
        std::abort();
    }
}

void init_hdf5() {
    static const bool done = [] {
        H5::Exception::dontPrint();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return true;
    }();
    (void)done;
}

std::pair<std::string_view, std::string_view> split_once(std::string_view s, char sep) {
    const auto at = s.find(sep);
    if (at == std::string_view::npos) return {s, {}};
    return {s.substr(0, at), s.substr(at + 1)};
}

}  // namespace routescope::fuzz
