/* relay.c — see relay.h: `run`/`exec -t` of a terminal process without a console socket. */
#include "relay.h"
#include "ocijson.h"
#include "sockmsg.h"
#include "fdio.h"
#include "front.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

bool oci_relay_wanted(const char *bundle)
{
    /* as create opens it (never through a symlink), and only a regular file */
    int d = open(bundle ? bundle : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = d < 0 ? -1 : openat(d, "config.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (d >= 0)
        close(d);
    struct stat st;
    json_t *c = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                    ? oci_json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    bool t = c && json_is_true(json_object_get(json_object_get(c, "process"), "terminal"));
    json_decref(c);
    return t;
}

int oci_relay_open(oci_relay *r, mxc_error *e)
{
    *r = (oci_relay){.listen_fd = -1, .master = -1};
    snprintf(r->dir, sizeof r->dir, "/tmp/mxc-oci-tty-XXXXXX");
    if (!mkdtemp(r->dir)) {
        r->dir[0] = 0;
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.console", errno, NULL, "cannot make the terminal's socket");
    }
    snprintf(r->path, sizeof r->path, "%s/sock", r->dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, r->path, strlen(r->path));
    r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->listen_fd < 0 || bind(r->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(r->listen_fd, 1) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.console", errno, NULL, "cannot listen for the terminal");
    return 0;
}

int oci_relay_receive(oci_relay *r, mxc_error *e)
{
    int c = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.console", errno, NULL, "no terminal from the container");
    char name[256];
    mxc_sockmsg_in in;
    ssize_t n = mxc_sockmsg_recv(c, name, sizeof name, 0, &in, 1);
    close(c);
    if (n >= 0 && in.nfds == 1 && !in.dropped)
        r->master = in.fds[0];
    else if (n >= 0)
        mxc_sockmsg_in_close(&in);
    struct stat st;
    if (r->master < 0 || (n >= 0 && in.truncated) || fstat(r->master, &st) < 0 || !S_ISCHR(st.st_mode) ||
        !isatty(r->master)) {
        if (r->master >= 0)
            close(r->master);
        r->master = -1;
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container sent no terminal");
    }
    /* sized like the caller's terminal unless config.json gave consoleSize (the init applied it) */
    struct winsize ws, cur;
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ioctl(r->master, TIOCGWINSZ, &cur) == 0 && !cur.ws_row &&
        !cur.ws_col)
        ioctl(r->master, TIOCSWINSZ, &ws);
    return 0;
}

void oci_relay_copy(oci_relay *r, int pidfd)
{
    mxc_exec_relay_terminal(r->master, pidfd, STDIN_FILENO, STDOUT_FILENO); /* the engine's relay (front.h) */
}

void oci_relay_close(oci_relay *r)
{
    if (r->master >= 0)
        close(r->master);
    if (r->listen_fd >= 0)
        close(r->listen_fd);
    if (r->path[0])
        unlink(r->path);
    if (r->dir[0])
        rmdir(r->dir);
    r->master = r->listen_fd = -1;
    r->path[0] = r->dir[0] = 0;
}
