/* test_userns.c — id maps as the kernel's text (src/base/userns.h): ranges
 * formatted one a line and parsed back (the kernel's padded /proc form too),
 * a malformed line ends the map, too many ranges or too small a buffer are
 * refused; as root, a user namespace made with maps reads them back. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "userns.h"

static void format_and_parse(void)
{
    mxc_idmap_range r[3] = {{0, 100000, 65536}, {65536, 1000, 1}, {4294967295u, 4294967295u, 1}}, back[4];
    char text[256];
    int len = mxc_idmap_format(r, 3, text, sizeof text);
    CHECK_STR_EQ(text, "0 100000 65536\n65536 1000 1\n4294967295 4294967295 1\n");
    CHECK_INT_EQ(len, (int)strlen(text));
    CHECK_INT_EQ(mxc_idmap_parse(text, back, 4), 3);
    CHECK(!memcmp(back, r, sizeof r));
    CHECK_INT_EQ(mxc_idmap_parse(text, back, 2), 2);
    /* the kernel's own form */
    CHECK_INT_EQ(mxc_idmap_parse("         0     100000      65536\n", back, 4), 1);
    CHECK_INT_EQ(back[0].outside, 100000);
    CHECK_INT_EQ(back[0].count, 65536);
    /* a malformed line ends it */
    CHECK_INT_EQ(mxc_idmap_parse("0 1 2\n3 4\n5 6 7\n", back, 4), 1);
    CHECK_INT_EQ(mxc_idmap_parse("0 1 2 3\n", back, 4), 0);
    CHECK_INT_EQ(mxc_idmap_parse("-1 1 2\n", back, 4), 0);
    CHECK_INT_EQ(mxc_idmap_parse("4294967296 1 2\n", back, 4), 0);
    CHECK_INT_EQ(mxc_idmap_parse("", back, 4), 0);
    CHECK_INT_EQ(mxc_idmap_parse("1 2 3", back, 4), 1);
    /* refusals */
    CHECK_INT_EQ(mxc_idmap_format(r, 3, text, 20), -ENOSPC);
    mxc_idmap_range *many = calloc(MXC_IDMAP_MAX + 1, sizeof *many);
    CHECK_INT_EQ(mxc_idmap_format(many, MXC_IDMAP_MAX + 1, text, sizeof text), -EINVAL);
    free(many);
    CHECK_INT_EQ(mxc_idmap_format(r, 0, text, sizeof text), 0);
    CHECK_STR_EQ(text, "");
}

static void userns_as_root(void)
{
    if (geteuid() != 0)
        return;
    mxc_idmap_range u = {0, 100000, 1000}, g = {0, 200000, 10};
    int fd = mxc_userns_open(&u, 1, &g, 1);
    if (fd == -EPERM || fd == -ENOSPC) /* user namespaces refused here (a sysctl, a container) */
        return;
    CHECK(fd >= 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(setns(fd, CLONE_NEWUSER) == 0 ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* read back through a process in it */
    int p[2], q[2];
    CHECK(pipe(p) == 0 && pipe(q) == 0);
    pid = fork();
    if (pid == 0) {
        char b;
        close(p[1]);
        if (setns(fd, CLONE_NEWUSER) < 0)
            _exit(1);
        (void)!write(q[1], "j", 1); /* joined */
        (void)!read(p[0], &b, 1);
        _exit(0);
    }
    close(p[0]);
    close(q[1]);
    char joined = 0;
    CHECK(read(q[0], &joined, 1) == 1 && joined == 'j');
    close(q[0]);
    mxc_idmap_range back[4];
    CHECK_INT_EQ(mxc_userns_read_map(pid, false, back, 4), 1);
    CHECK_INT_EQ(back[0].outside, 100000);
    CHECK_INT_EQ(back[0].count, 1000);
    CHECK_INT_EQ(mxc_userns_read_map(pid, true, back, 4), 1);
    CHECK_INT_EQ(back[0].outside, 200000);
    close(p[1]);
    waitpid(pid, NULL, 0);
    close(fd);
}

int main(void)
{
    format_and_parse();
    userns_as_root();
    return CHECK_DONE();
}
