/* stdiorelay.c — see stdiorelay.h: the operator's terminal kept from a process without process.terminal. */
#include "stdiorelay.h"
#include "fdio.h"
#include "front.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* fd moved above 2 (fds 0-2 closed when mxc-oci started would hand these out), close-on-exec */
static int above_stdio(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return d;
}

static int one_fd(oci_stdio *s, int i, bool attached, mxc_error *e)
{
    if (!attached) {
        if ((s->give[i] = above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY))) < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.stdio", errno, NULL, "/dev/null for a terminal's fd %d", i);
        return 0;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.stdio", errno, NULL, "a pipe for a terminal's fd %d", i);
    p[0] = above_stdio(p[0]);
    p[1] = above_stdio(p[1]);
    s->give[i] = i == 0 ? p[0] : p[1];
    s->near[i] = i == 0 ? p[1] : p[0];
    if (s->give[i] < 0 || s->near[i] < 0 || fcntl(s->near[i], F_SETFL, O_NONBLOCK) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.stdio", errno, NULL, "a pipe for a terminal's fd %d", i);
    return 0;
}

int oci_stdio_open(oci_stdio *s, bool attached, mxc_error *e)
{
    bool lost = false;
    for (int i = 0; i < 3; i++) {
        if (!isatty(i))
            continue;
        if (one_fd(s, i, attached, e) < 0)
            return -1;
        lost |= !attached && i > 0;
    }
    if (lost)
        fprintf(stderr, "mxc-oci: warning: a detached process never gets the terminal: its stdout/stderr that were "
                        "this terminal are /dev/null (redirect them, or use process.terminal with --console-socket)\n");
    return 0;
}

void oci_stdio_take(const oci_stdio *s)
{
    for (int i = 0; i < 3; i++)
        if (s->give[i] >= 0)
            (void)dup2(s->give[i], i);
}

void oci_stdio_given(oci_stdio *s)
{
    for (int i = 0; i < 3; i++)
        if (s->give[i] >= 0) {
            close(s->give[i]);
            s->give[i] = -1;
        }
}

bool oci_stdio_relays(const oci_stdio *s)
{
    return s->near[0] >= 0 || s->near[1] >= 0 || s->near[2] >= 0;
}

static void close_near(oci_stdio *s, int i)
{
    if (s->near[i] >= 0)
        close(s->near[i]);
    s->near[i] = -1;
}

/* The terminal's input is ours to read: it is not mxc-oci's controlling terminal, or mxc-oci's
 * process group is its foreground one (a background job reading it would be stopped: SIGTTIN) */
static bool input_ours(void)
{
    pid_t fg = tcgetpgrp(STDIN_FILENO);
    return fg < 0 || fg == getpgrp();
}

/* One read of output pipe i (at most *budget bytes, when given), filtered onto mxc-oci's fd i:
 * false at EOF or an error (the pipe closed), or when nothing is there now */
static bool copy_out(oci_stdio *s, int i, mxc_termfilter *f, size_t *budget)
{
    unsigned char raw[16384], out[sizeof raw + MXC_TERMFILTER_SEQ_MAX];
    size_t want = budget && *budget < sizeof raw ? *budget : sizeof raw;
    ssize_t n = want ? read(s->near[i], raw, want) : 0;
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (n <= 0) {
        close_near(s, i);
        return false;
    }
    if (budget)
        *budget -= (size_t)n;
    /* a terminal left O_NONBLOCK is waited for, never cut mid-sequence; the terminal gone: keep draining */
    (void)mxc_write_all_wait(i, out, mxc_termfilter_run(f, raw, (size_t)n, out));
    return true;
}

typedef struct {
    unsigned char buf[4096];
    size_t len, off;
} pending;

/* The terminal's input into the process's stdin: read when none is pending, written when its pipe
 * has room; EOF (or a process that closed its stdin) closes mxc-oci's end */
static void copy_in(oci_stdio *s, pending *p, short in_ev, short pipe_ev)
{
    if (in_ev) {
        ssize_t n = read(STDIN_FILENO, p->buf, sizeof p->buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (n <= 0) {
            close_near(s, 0);
            return;
        }
        p->len = (size_t)n, p->off = 0;
    }
    if (p->len && (pipe_ev || in_ev)) {
        ssize_t n = write(s->near[0], p->buf + p->off, p->len - p->off);
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
            close_near(s, 0);
            p->len = 0;
            return;
        }
        if (n > 0 && (p->off += (size_t)n) == p->len)
            p->len = p->off = 0;
    }
}

void oci_stdio_relay(oci_stdio *s, int pidfd)
{
    struct sigaction old;
    sigaction(SIGPIPE, &(struct sigaction){.sa_handler = SIG_IGN}, &old);
    mxc_termfilter f[3];
    mxc_termfilter_init(&f[1]);
    mxc_termfilter_init(&f[2]);
    pending p = {.len = 0};
    for (;;) {
        struct pollfd pf[4] = {{.fd = pidfd, .events = POLLIN}, {.fd = s->near[1], .events = POLLIN},
                               {.fd = s->near[2], .events = POLLIN}, {.fd = -1}};
        bool ours = s->near[0] >= 0 && !p.len && input_ours();
        if (s->near[0] >= 0)
            pf[3] = p.len ? (struct pollfd){.fd = s->near[0], .events = POLLOUT}
                          : (struct pollfd){.fd = ours ? STDIN_FILENO : -1, .events = POLLIN};
        /* in the background: whether it came to the foreground, looked at again now and then */
        int wait = s->near[0] >= 0 && !p.len && !ours ? 250 : -1;
        if (poll(pf, 4, wait) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        for (int i = 1; i < 3; i++)
            if (pf[i].revents)
                copy_out(s, i, &f[i], NULL);
        if (pf[3].revents)
            copy_in(s, &p, pf[3].fd == STDIN_FILENO ? pf[3].revents : 0, pf[3].fd == s->near[0] ? pf[3].revents : 0);
    }
    /* the process ended: what its pipes hold now (no more: what it left running may keep writing) */
    for (int i = 1; i < 3; i++) {
        int held = 0;
        if (s->near[i] >= 0 && ioctl(s->near[i], FIONREAD, &held) < 0)
            held = 0;
        size_t budget = held > 0 ? (size_t)held : 0;
        while (s->near[i] >= 0 && budget && copy_out(s, i, &f[i], &budget))
            ;
    }
    oci_stdio_close(s);
    sigaction(SIGPIPE, &old, NULL);
}

void oci_stdio_close(oci_stdio *s)
{
    oci_stdio_given(s);
    for (int i = 0; i < 3; i++)
        close_near(s, i);
}
