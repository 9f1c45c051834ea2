/* logcap.c — see logcap.h. */
#include "logcap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the log's file system is full or gone: what is lost is lost */
        p += w, n -= (size_t)w;
    }
}

/* The keeper: stdin the pipe, stdout the log, 3 the done pipe; never returns. */
static _Noreturn void keep(void)
{
    static char buf[65536];
    struct stat st;
    long long size = fstat(1, &st) == 0 ? (long long)st.st_size : 0;
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0);
        if (size + n > OSD_LOG_MAX) {
            char m[160];
            int ml = snprintf(m, sizeof m,
                              "[mxc-openshell-driver: this log reached its cap of %lld bytes: truncated here]\n",
                              OSD_LOG_MAX);
            if (ftruncate(1, 0) == 0)
                size = 0;
            write_all(1, m, (size_t)ml);
            size += ml;
        }
        const char *p = buf;
        if (size + n > OSD_LOG_MAX) { /* more than the whole cap at once: its end */
            p += n - (OSD_LOG_MAX - size);
            n = (ssize_t)(OSD_LOG_MAX - size);
        }
        write_all(1, p, (size_t)n);
        size += n;
    }
}

/* In the grandchild: the three descriptors moved to 0, 1 (and 2: nothing of the driver's, its
 * stderr included, is held past the driver), 3; everything else closed, the driver's signal
 * dispositions undone. */
static _Noreturn void become_keeper(int in, int lfd, int done)
{
    int a = fcntl(in, F_DUPFD, 10), b = fcntl(lfd, F_DUPFD, 10), c = fcntl(done, F_DUPFD, 10);
    if (a < 0 || b < 0 || c < 0 || dup2(a, 0) < 0 || dup2(b, 1) < 0 || dup2(b, 2) < 0 || dup2(c, 3) < 0)
        _exit(1);
    close_range(4, ~0U, 0);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_IGN); /* a terminal's ^C to the driver is not the sandbox's end */
    signal(SIGHUP, SIG_IGN);
    setsid();
    prctl(PR_SET_NAME, "mxc-osd-log");
    keep();
}

int osd_log_keeper(int lfd, int *wr, int *done, mxc_error *e)
{
    int p[2], d[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "pipe2", errno, NULL, "cannot make the log's pipe");
    if (pipe2(d, O_CLOEXEC) < 0) {
        close(p[0]), close(p[1]);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "pipe2", errno, NULL, "cannot make the log's pipe");
    }
    pid_t mid = fork();
    if (mid == 0) {
        close(p[1]), close(d[0]);
        if (fork() == 0)
            become_keeper(p[0], lfd, d[1]);
        _exit(0);
    }
    close(p[0]), close(d[1]);
    if (mid < 0) {
        int err = errno;
        close(p[1]), close(d[0]);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fork", err, NULL, "cannot start the log's keeper");
    }
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        ;
    *wr = p[1];
    *done = d[0];
    return 0;
}

bool osd_log_keeper_ended(int done, int ms)
{
    struct pollfd pf = {.fd = done, .events = POLLIN};
    for (;;) {
        int r = poll(&pf, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        char c;
        return read(done, &c, 1) == 0;
    }
}
