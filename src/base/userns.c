/* userns.c — see userns.h. */
#include "userns.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* "4294967295 4294967295 4294967295\n" */
#define LINE_MAX_LEN 33

int mxc_idmap_format(const mxc_idmap_range *r, size_t n, char *buf, size_t size)
{
    if (n > MXC_IDMAP_MAX)
        return -EINVAL;
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(buf + len, size - len, "%u %u %u\n", r[i].inside, r[i].outside, r[i].count);
        if (k < 0 || (size_t)k >= size - len)
            return -ENOSPC;
        len += (size_t)k;
    }
    return (int)len;
}

size_t mxc_idmap_parse(const char *text, mxc_idmap_range *r, size_t max)
{
    size_t n = 0;
    const char *p = text;
    while (n < max && *p) {
        unsigned long long v[3];
        for (int i = 0; i < 3; i++) {
            while (*p == ' ' || *p == '\t')
                p++;
            char *end;
            errno = 0;
            v[i] = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : (end = (char *)p, 0);
            if (end == p || errno || v[i] > 0xffffffffULL)
                return n;
            p = end;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p && *p != '\n')
            return n;
        r[n++] = (mxc_idmap_range){(unsigned)v[0], (unsigned)v[1], (unsigned)v[2]};
        if (*p)
            p++;
    }
    return n;
}

/* text to /proc/pid/file in one write */
static int write_proc(pid_t pid, const char *file, const char *text, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, len);
    int err = n < 0 ? errno : EIO;
    close(fd);
    return n == (ssize_t)len ? 0 : -err;
}

int mxc_userns_write_map(pid_t pid, bool gid, const mxc_idmap_range *r, size_t n)
{
    char text[MXC_IDMAP_MAX * LINE_MAX_LEN + 1];
    int len = mxc_idmap_format(r, n, text, sizeof text);
    if (len < 0)
        return len;
    return write_proc(pid, gid ? "gid_map" : "uid_map", text, (size_t)len);
}

int mxc_userns_deny_setgroups(pid_t pid)
{
    return write_proc(pid, "setgroups", "deny", 4);
}

size_t mxc_userns_read_map(pid_t pid, bool gid, mxc_idmap_range *r, size_t max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, gid ? "gid_map" : "uid_map");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t len;
    char *text = mxc_read_all(fd, MXC_IDMAP_MAX * 36, &len);
    close(fd);
    size_t n = text ? mxc_idmap_parse(text, r, max) : 0;
    free(text);
    return n;
}

int mxc_userns_open(const mxc_idmap_range *u, size_t nu, const mxc_idmap_range *g, size_t ng)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
    if (pid == 0) {
        char b;
        close(p[1]);
        (void)!read(p[0], &b, 1); /* until the parent is done with our maps */
        _exit(0);
    }
    close(p[0]);
    if (pid < 0) {
        int err = errno;
        close(p[1]);
        return -err;
    }
    int rc = mxc_userns_write_map(pid, false, u, nu);
    if (rc == 0)
        rc = mxc_userns_write_map(pid, true, g, ng);
    int fd = -1;
    if (rc == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            rc = -errno;
    }
    close(p[1]); /* the child exits */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return rc < 0 ? rc : fd;
}
