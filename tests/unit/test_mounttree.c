/* test_mounttree.c — detached tree copies (src/base/mounttree.h), as root in
 * a mount namespace of the test's own: a copy is flagged before anyone
 * sees it (read-only refuses a write, the original stays writable), a
 * non-recursive copy leaves the mounts beneath out, and a bad path is
 * -errno with nothing left open. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "mounttree.h"

static void in_namespace(const char *dir)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    if (mount("t", dir, "tmpfs", 0, NULL) < 0 || mkdir(sub, 0755) < 0 || mount("u", sub, "tmpfs", 0, NULL) < 0) {
        CHECK_MSG(0, "%s", "mounting the test's tmpfs");
        return;
    }
    mxc_tree_attr ro = {.set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, .propagation = MS_PRIVATE, .recursive = true};
    int tree = mxc_tree_clone(AT_FDCWD, dir, &ro);
    CHECK(tree >= 0);
    struct statvfs sv;
    CHECK(fstatvfs(tree, &sv) == 0 && (sv.f_flag & ST_RDONLY) && (sv.f_flag & ST_NOSUID));
    errno = 0;
    CHECK(openat(tree, "x", O_CREAT | O_WRONLY | O_CLOEXEC, 0600) < 0 && errno == EROFS);
    int sub_in_tree = openat(tree, "sub", O_PATH | O_DIRECTORY | O_CLOEXEC);
    CHECK(sub_in_tree >= 0 && fstatvfs(sub_in_tree, &sv) == 0 && (sv.f_flag & ST_RDONLY)); /* recursive */
    close(sub_in_tree);
    close(tree);
    int w = openat(AT_FDCWD, sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
    CHECK(w >= 0 && fstatvfs(w, &sv) == 0 && !(sv.f_flag & ST_RDONLY)); /* the original is as it was */
    close(w);
    /* not recursive: the copy's sub is the plain directory, not the tmpfs on it */
    tree = mxc_tree_open(AT_FDCWD, dir, false, false);
    CHECK(tree >= 0);
    struct stat a, b;
    CHECK(fstatat(tree, "sub", &a, 0) == 0 && stat(sub, &b) == 0 && a.st_dev != b.st_dev);
    CHECK_INT_EQ(mxc_tree_setattr(tree, &(mxc_tree_attr){.set = MOUNT_ATTR_NODEV}), 0);
    close(tree);
    CHECK_INT_EQ(mxc_tree_clone(AT_FDCWD, "/nonexistent/mxc", &ro), -ENOENT);
}

int main(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_mounttree: not root, skipped\n");
        return 0;
    }
    char dir[] = "/tmp/test_mounttree.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            _exit(77);
        in_namespace(dir);
        _exit(check_failed ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    rmdir(dir);
    CHECK_MSG(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77), "status %d", status);
    return CHECK_DONE();
}
