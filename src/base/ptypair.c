/* ptypair.c — see ptypair.h. */
#include "ptypair.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static int fail(mxc_pty *pty, mxc_pty_step step, mxc_pty_step *failed, int err)
{
    if (pty->master >= 0)
        close(pty->master);
    if (pty->slave >= 0)
        close(pty->slave);
    pty->master = pty->slave = -1;
    *failed = step;
    return -err;
}

int mxc_pty_open(int dirfd, const char *path, unsigned short rows, unsigned short cols, mxc_pty *pty,
                 mxc_pty_step *failed)
{
    *pty = (mxc_pty){.master = -1, .slave = -1};
    struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    pty->master = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (pty->master < 0)
        return fail(pty, MXC_PTY_OPEN, failed, errno);
    struct statfs sfs;
    if (fstatfs(pty->master, &sfs) < 0)
        return fail(pty, MXC_PTY_OPEN, failed, errno);
    if (sfs.f_type != DEVPTS_SUPER_MAGIC)
        return fail(pty, MXC_PTY_NOT_DEVPTS, failed, ENOTTY);
    int unlock = 0;
    if (ioctl(pty->master, TIOCSPTLCK, &unlock) < 0)
        return fail(pty, MXC_PTY_UNLOCK, failed, errno);
    if (rows || cols) {
        struct winsize ws = {.ws_row = rows, .ws_col = cols};
        if (ioctl(pty->master, TIOCSWINSZ, &ws) < 0)
            return fail(pty, MXC_PTY_SIZE, failed, errno);
    }
    pty->slave = ioctl(pty->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (pty->slave < 0 || ioctl(pty->master, TIOCGPTN, &pty->index) < 0)
        return fail(pty, MXC_PTY_PEER, failed, errno);
    return 0;
}
