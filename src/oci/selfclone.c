/* selfclone.c — see selfclone.h. */
#include "selfclone.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "helpers.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

#define SELF_ENV "MXC_OCI_SELF_EXE" /* the copied file's path, from the copier to the copy */
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
#ifdef RUNNING_ON_VALGRIND
    if (RUNNING_ON_VALGRIND) /* scripts/valgrind-oci.sh: valgrind cannot exec a memfd; never a production path */
        return 0;
#endif
    if (is_clone()) {
        prctl(PR_SET_NAME, "mxc-oci", 0, 0, 0); /* exec'd by descriptor, it was named by the fd's number */
        mxc_helper_set_self(getenv(SELF_ENV));  /* mxc-proxy and the rest beside the file copied */
        unsetenv(SELF_ENV);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = '\0';
    if (setenv(SELF_ENV, self, 1) < 0) /* always ours: a value the caller gave is replaced */
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.selfclone", errno, NULL, "setenv");
    int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int mfd = memfd_create("mxc-oci", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat st;
    int err = src < 0 || mfd < 0 || fstat(src, &st) < 0 ? errno : 0;
    if (!err)
        err = -mxc_copy_size(src, mfd, st.st_size);
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
                      "have the host's binary as /proc/self/exe)");
}
