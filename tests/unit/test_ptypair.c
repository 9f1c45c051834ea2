/* test_ptypair.c — a pty pair by descriptor (src/base/ptypair.h): the pair
 * of a devpts instance's ptmx, sized, its slave the master's peer; a
 * ptmx that is not devpts's, or reached through a symlink, is refused at
 * the step that names it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "check.h"
#include "ptypair.h"

int main(void)
{
    mxc_pty pty;
    mxc_pty_step step = 0;
    int pts = open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (pts >= 0 && access("/dev/pts/ptmx", F_OK) == 0) {
        int rc = mxc_pty_open(pts, "ptmx", 24, 80, &pty, &step);
        CHECK_INT_EQ(rc, 0);
        if (rc == 0) {
            struct winsize ws;
            CHECK(ioctl(pty.slave, TIOCGWINSZ, &ws) == 0 && ws.ws_row == 24 && ws.ws_col == 80);
            CHECK(isatty(pty.slave));
            CHECK(fcntl(pty.master, F_GETFD) & FD_CLOEXEC);
            char name[64];
            snprintf(name, sizeof name, "/dev/pts/%u", pty.index);
            struct stat a, b;
            CHECK(fstat(pty.slave, &a) == 0 && stat(name, &b) == 0 && a.st_rdev == b.st_rdev);
            CHECK(write(pty.master, "x\n", 2) == 2);
            close(pty.master), close(pty.slave);
        }
        /* beneath: no way out of the directory */
        CHECK(mxc_pty_open(pts, "../pts/ptmx", 0, 0, &pty, &step) < 0);
        CHECK_INT_EQ(step, MXC_PTY_OPEN);
        CHECK_INT_EQ(pty.master, -1);
    }
    if (pts >= 0)
        close(pts);
    char dir[] = "/tmp/test_ptypair.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int f = openat(d, "ptmx", O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
    CHECK(f >= 0);
    close(f);
    CHECK_INT_EQ(mxc_pty_open(d, "ptmx", 0, 0, &pty, &step), -ENOTTY);
    CHECK_INT_EQ(step, MXC_PTY_NOT_DEVPTS);
    CHECK(symlinkat("/dev/pts/ptmx", d, "link") == 0);
    CHECK_INT_EQ(mxc_pty_open(d, "link", 0, 0, &pty, &step), -ELOOP);
    CHECK_INT_EQ(step, MXC_PTY_OPEN);
    unlinkat(d, "link", 0), unlinkat(d, "ptmx", 0), close(d), rmdir(dir);
    return CHECK_DONE();
}
