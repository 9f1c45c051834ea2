/* fdio.c — see fdio.h. */
#include "fdio.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool mxc_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        p += n, len -= (size_t)n;
    }
    return true;
}

int mxc_text_memfd(const char *name, const char *text)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (!mxc_write_all(fd, text, strlen(text)) || lseek(fd, 0, SEEK_SET) != 0) {
        int err = errno ? errno : EIO;
        close(fd);
        return -err;
    }
    return fd;
}
