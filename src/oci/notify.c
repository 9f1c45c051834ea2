/* notify.c — see notify.h. */
#include "notify.h"
#include "cleanup.h"
#include "fdio.h"
#include "sockmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
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

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; asm-generic's number (older headers lack it) */
#endif

/* The pid a pidfd names, in our PID namespace (its fdinfo's "Pid:" line): > 0, or 0 when the process
 * has exited (the kernel says -1) or the line cannot be read. */
static pid_t pidfd_pid(int pfd)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/self/fdinfo/%d", pfd);
    if (mxc_read_small_at(AT_FDCWD, p, buf, sizeof buf) <= 0)
        return 0;
    const char *l = strstr(buf, "\nPid:\t");
    long v = l ? strtol(l + 6, NULL, 10) : 0;
    return v > 0 ? (pid_t)v : 0;
}

/* The user namespace of the process that listens at the connected socket s (it called listen(2)),
 * read while that very process lives: by its pidfd (SO_PEERPIDFD), its /proc entry opened by the
 * pid the pidfd names, the pidfd not exited after that open.  SO_PEERCRED's pid alone is a number:
 * once the listening process exits (the workload listens, hands the socket to a child, exits) any
 * process given that pid again — a host one, of our user namespace — would vouch for it.  0, or -1
 * with errno (ESRCH: the listening process has exited). */
static int peer_userns(int s, struct stat *st)
{
    int pfd _cleanup_fd_ = -1;
    socklen_t len = sizeof pfd;
    if (getsockopt(s, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) < 0) {
        pfd = -1;
        return -1;
    }
    pid_t pid = pidfd_pid(pfd);
    struct pollfd p = {pfd, POLLIN, 0};
    if (pid <= 0 || userns_of(pid, st) < 0 || poll(&p, 1, 0) != 0) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}

/* connect(2) on a non-blocking unix socket: a listener whose backlog is full answers EAGAIN at
 * once (no EINPROGRESS for unix sockets); tried again for up to AGENT_WAIT_MS, so a socket planted
 * at the path that never accepts cannot hold create or exec. */
#define AGENT_WAIT_MS 5000
static int connect_bounded(int s, const struct sockaddr_un *sa)
{
    for (int waited = 0;; waited += 10) {
        if (connect(s, (const struct sockaddr *)sa, sizeof *sa) == 0)
            return 0;
        if (errno != EAGAIN || waited >= AGENT_WAIT_MS)
            return -1;
        usleep(10000);
    }
}

/* The agent at path, connected (a stream socket, close-on-exec): its descriptor, or -1 with *e. */
static int agent_connect(const char *path, mxc_error *e)
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
    struct timeval tv = {.tv_sec = AGENT_WAIT_MS / 1000};
    if (pfd < 0 || !S_ISSOCK(st.st_mode) || (s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
        connect_bounded(s, &sa) < 0 || fcntl(s, F_SETFL, 0) < 0 ||
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.seccomp", errno, NULL,
                          "failed to connect with seccomp agent specified in the seccomp profile: %s", path);
    /* the listening process (its credentials as it listened) is the operator's: in mxc-oci's own
     * user namespace, never a container's (this one's, or another's that can write where the path
     * leads: the listener answers this container's system calls and can add descriptors to it) */
    struct stat peer, ours;
    if (peer_userns(s, &peer) < 0 || userns_of(getpid(), &ours) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the seccomp agent at %s: cannot tell whose it is (%s)", path,
                       errno == ENOPROTOOPT ? "this kernel has no SO_PEERPIDFD, Linux 6.5"
                       : errno == ESRCH     ? "the process that listens there has exited"
                                            : strerror(errno));
    if (peer.st_dev != ours.st_dev || peer.st_ino != ours.st_ino)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "the seccomp agent at %s is served from another user namespace "
                       "than the runtime's (a container's?) (linux.seccomp.listenerPath): refused", path);
    return mxc_take_fd(&s);
}

int oci_notify_send(json_t *seccomp, int listener, pid_t pid, json_t *state, mxc_error *e)
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
    int s _cleanup_fd_ = agent_connect(path, e);
    if (s < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = mxc_sockmsg_send(s, text, len, &listener, 1);
    if (n != (ssize_t)len)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.seccomp", n < 0 ? errno : EIO, NULL,
                          "cannot send the seccomp listener to the agent at %s", path);
    return 0;
}
