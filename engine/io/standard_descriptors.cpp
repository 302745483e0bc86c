#include "engine/io/standard_descriptors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace routescope {

void occupy_closed_standard_descriptors() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        const int opened = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (opened < 0) continue;  // no /dev/null: nothing better to do than before
        if (opened != fd) {        // open() takes the lowest free number (fd: those below are open)
            ::dup2(opened, fd);
            ::close(opened);
        }
    }
}

}  // namespace routescope
