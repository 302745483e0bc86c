#include "engine/io/h5_reserve.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace routescope::h5 {

int probe_create(const std::string& path, std::uint64_t bytes) noexcept {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    int error = 0;
    if (::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) != 0) {
        error = errno;
        if (error == EOPNOTSUPP || error == ENOSYS) error = 0;  // cannot tell: HDF5 will say
    }
    if (error == 0 && ::ftruncate(fd, 0) != 0) error = errno;
    ::close(fd);
    if (error != 0) ::unlink(path.c_str());
    return error;
}

int reserve_file_space(hid_t file, std::uint64_t bytes) noexcept {
    void* handle = nullptr;
    if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle) {
        H5Eclear2(H5E_DEFAULT);
        return 0;  // not the sec2 driver: no descriptor to reserve on
    }
    const int fd = *static_cast<int*>(handle);
    if (::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0) return 0;
    const int error = errno;
    return error == EOPNOTSUPP || error == ENOSYS ? 0 : error;
}

namespace {
// Points the file's descriptor at `sink` (closed here); false when the file has no descriptor.
bool divert(hid_t file, int sink) noexcept {
    void* handle = nullptr;
    const bool ok = sink >= 0 && H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle;
    if (ok) ::dup2(sink, *static_cast<int*>(handle));
    if (sink >= 0) ::close(sink);
    H5Eclear2(H5E_DEFAULT);
    return ok;
}
}  // namespace

void divert_file_to_null(hid_t file) noexcept {
    (void)divert(file, ::open("/dev/null", O_WRONLY));
}

void divert_file_to_memory(hid_t file) noexcept {
    if (!divert(file, ::memfd_create("routescope-abandoned-hdf5", MFD_CLOEXEC)))
        divert_file_to_null(file);
}

void give_back_reserve(const std::string& path) noexcept {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    haddr_t eoa = 0;
    const bool known = f >= 0 && H5Fget_eoa(f, &eoa) >= 0 && eoa > 0;
    if (f >= 0) H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    if (!known) return;
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) > eoa && !ec) {
        if (::truncate(path.c_str(), static_cast<off_t>(eoa)) != 0) {
            // Tidying only: the file is valid as it is, a little larger.
        }
    }
}

std::string reserve_failure(const std::string& path, std::uint64_t bytes, int error,
                            const std::string& what) {
    auto dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    const auto space = std::filesystem::space(dir, ec);
    return path + ": cannot reserve the " + std::to_string(bytes >> 20) + " MiB " + what +
           " needs: " + std::strerror(error) +
           (ec ? std::string()
               : " (" + std::to_string(space.available >> 20) + " MiB free on its file system)");
}

}  // namespace routescope::h5
