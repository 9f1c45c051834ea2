/* selfclone.c — see selfclone.h. */
#include "selfclone.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

static bool is_clone(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    if (fd >= 0)
        close(fd);
    return seals >= 0 && (seals & SEALS) == SEALS;
}

int oci_selfclone(char **argv, mxc_error *e)
{
    if (is_clone()) {
        prctl(PR_SET_NAME, "mxc-oci", 0, 0, 0); /* exec'd by descriptor, it was named by the fd's number */
        return 0;
    }
    int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int mfd = memfd_create("mxc-oci", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat st;
    int err = src < 0 || mfd < 0 || fstat(src, &st) < 0 ? errno : 0;
    for (off_t left = err ? 0 : st.st_size; left > 0;) {
        ssize_t n = sendfile(mfd, src, NULL, (size_t)left);
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        left -= n;
    }
    if (!err && fcntl(mfd, F_ADD_SEALS, SEALS) < 0)
        err = errno;
    if (src >= 0)
        close(src);
    if (!err) {
        syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
        err = errno;
    }
    if (mfd >= 0)
        close(mfd);
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.selfclone", err, NULL,
                      "cannot run from a sealed copy of mxc-oci (a process it starts in a container must never "
                      "have the host's binary as /proc/self/exe): %s", strerror(err));
}
