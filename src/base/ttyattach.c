/* ttyattach.c — see ttyattach.h. */
#include "ttyattach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define NFATAL 5
static const int FATAL[NFATAL] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE};

static struct {
    int fd;
    struct termios saved;
    bool raw;
    int winch[2];
    bool replaced[NFATAL];
    struct sigaction old[NFATAL], old_winch;
} att = {.fd = -1, .winch = {-1, -1}};

static void restore_term(void)
{
    if (att.raw)
        tcsetattr(att.fd, TCSANOW, &att.saved);
    att.raw = false;
}

static void on_fatal(int sig)
{
    restore_term();
    for (int i = 0; i < NFATAL; i++)
        if (FATAL[i] == sig)
            sigaction(sig, &att.old[i], NULL);
    raise(sig);
}

static void on_winch(int sig)
{
    (void)sig;
    int saved = errno;
    (void)!write(att.winch[1], "w", 1);
    errno = saved;
}

int mxc_ttyattach_begin(int fd, mxc_tty_restore restore)
{
    att.fd = fd;
    if (pipe2(att.winch, O_CLOEXEC | O_NONBLOCK) == 0) {
        struct sigaction sa = {.sa_handler = on_winch, .sa_flags = SA_RESTART};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGWINCH, &sa, &att.old_winch);
    } else {
        att.winch[0] = att.winch[1] = -1;
    }
    if (tcgetattr(fd, &att.saved) == 0) {
        struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND};
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < NFATAL; i++) {
            att.replaced[i] = false;
            if (sigaction(FATAL[i], NULL, &att.old[i]) < 0 || att.old[i].sa_handler == SIG_IGN) /* kept ignored */
                continue;
            if (restore == MXC_TTY_RESTORE_IF_DEFAULT && att.old[i].sa_handler != SIG_DFL)
                continue; /* the caller's handler: the signal does not end it */
            att.replaced[i] = sigaction(FATAL[i], &sa, NULL) == 0;
        }
        struct termios raw = att.saved;
        cfmakeraw(&raw);
        att.raw = tcsetattr(fd, TCSANOW, &raw) == 0;
    }
    return att.winch[0];
}

void mxc_ttyattach_resize(int pty)
{
    char b[64];
    while (att.winch[0] >= 0 && read(att.winch[0], b, sizeof b) > 0)
        ;
    struct winsize ws;
    if (att.fd >= 0 && ioctl(att.fd, TIOCGWINSZ, &ws) == 0)
        ioctl(pty, TIOCSWINSZ, &ws);
}

void mxc_ttyattach_end(void)
{
    restore_term();
    for (int i = 0; i < NFATAL; i++)
        if (att.replaced[i])
            sigaction(FATAL[i], &att.old[i], NULL);
    for (int i = 0; i < NFATAL; i++)
        att.replaced[i] = false;
    if (att.winch[0] >= 0) {
        sigaction(SIGWINCH, &att.old_winch, NULL);
        close(att.winch[0]), close(att.winch[1]);
        att.winch[0] = att.winch[1] = -1;
    }
    att.fd = -1;
}
