/* notify.c — see notify.h. */
#include "notify.h"
#include "cleanup.h"
#include "sockmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The user namespace of pid (dev and inode), read by descriptor: 0 or -1. */
static int userns_of(pid_t pid, struct stat *st)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/ns/user", (int)pid);
    int fd _cleanup_fd_ = open(p, O_RDONLY | O_CLOEXEC);
    return fd >= 0 && fstat(fd, st) == 0 ? 0 : -1;
}

/* The agent at path, connected (a stream socket, close-on-exec): its descriptor, or -1 with *e. */
static int agent_connect(const char *path, pid_t init, mxc_error *e)
{
    /* the socket itself, its last component not followed (a link put there is refused), then
     * connected through its descriptor: what was checked is what is connected */
    int pfd _cleanup_fd_ = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st = {0};
    if (pfd >= 0 && fstat(pfd, &st) == 0 && !S_ISSOCK(st.st_mode))
        errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTSOCK;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d", pfd);
    int s _cleanup_fd_ = -1;
    if (pfd < 0 || !S_ISSOCK(st.st_mode) || (s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        connect(s, (struct sockaddr *)&sa, sizeof sa) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.seccomp", errno, NULL,
                          "failed to connect with seccomp agent specified in the seccomp profile: %s", path);
    /* the listening process (its credentials as it listened) is no member of the container */
    struct ucred cr;
    socklen_t len = sizeof cr;
    struct stat peer, ours;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0 || userns_of(cr.pid, &peer) < 0 ||
        userns_of(init, &ours) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the seccomp agent at %s: cannot tell whose it is", path);
    if (peer.st_dev == ours.st_dev && peer.st_ino == ours.st_ino)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "the seccomp agent at %s is served from inside the container "
                       "(linux.seccomp.listenerPath): refused", path);
    return mxc_take_fd(&s);
}

int oci_notify_send(json_t *seccomp, int listener, pid_t pid, json_t *state, pid_t init, mxc_error *e)
{
    const char *path = json_string_value(json_object_get(seccomp, "listenerPath"));
    const char *meta = json_string_value(json_object_get(seccomp, "listenerMetadata"));
    if (!path || !*path) /* profile.c refuses a notify action without one */
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.seccomp: SCMP_ACT_NOTIFY needs "
                       "linux.seccomp.listenerPath");
    json_t *cps = json_pack("{s:O?, s:[s], s:I, s:O}", "ociVersion", json_object_get(state, "ociVersion"), "fds",
                            "seccompFd", "pid", (json_int_t)pid, "state", state);
    if (cps && meta && *meta)
        json_object_set_new(cps, "metadata", json_string(meta));
    char *text _cleanup_free_ = cps ? json_dumps(cps, JSON_COMPACT) : NULL;
    json_decref(cps);
    if (!text)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    int s _cleanup_fd_ = agent_connect(path, init, e);
    if (s < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = mxc_sockmsg_send(s, text, len, &listener, 1);
    if (n != (ssize_t)len)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.seccomp", n < 0 ? errno : EIO, NULL,
                          "cannot send the seccomp listener to the agent at %s", path);
    return 0;
}
