/* main.c — mxc-openshell-driver: OpenShell's compute driver "mxc" on a unix socket.
 * Owns: the command line (--socket PATH --state-dir DIR [--supervisor PATH]
 * [--socket-group GROUP] [--config FILE]: mxc-gateway's [openshell.drivers.mxc] host
 * configuration, whose policy keys decide what driver_config may ask), the socket made by descriptor (its directory the caller's own and
 * writable by nobody else, a stale socket of ours replaced, anything else refused; bound
 * 0600, or 0660 with the group), the supervisor checked (a regular executable file nobody
 * else may write), the state directory (store.h), and serving until SIGTERM/SIGINT
 * (grpcsrv.h over calls.h), or the socket systemd passes (socket activation: the unit
 * mxc-openshell-driver.socket).  --gateway-endpoint URL: gateway.h (refused at start when
 * malformed).  --layer-size SIZE|none: each sandbox's writable layer's cap (layer.h; 10Gi by
 * default; creates refused when loop devices are unavailable, unless "none").
 * docs/openshell.md: the trust boundary and the gateway's config. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stddef.h>
#include <sys/un.h>
#include <unistd.h>

#include "calls.h"
#include "cleanup.h"
#include "front.h"
#include "gateway.h"
#include "grpcsrv.h"
#include "layer.h"

#define NAME_MAX_LEN 64 /* the socket's file name: /proc/self/fd/N/ + it fits sun_path */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    stop_flag = 1;
}

#define MAX_GRANT_ROOTS 16

typedef struct {
    const char *socket, *state_dir, *supervisor, *group, *config, *mxc_oci, *podman, *endpoint, *layer_size;
    const char *grant_root[MAX_GRANT_ROOTS]; /* --grant-root, as given */
    size_t ngrant_roots;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: mxc-openshell-driver --socket PATH --state-dir DIR [--supervisor PATH] [--socket-group GROUP]\n"
               "                            [--config FILE] [--mxc-oci PATH] [--podman PATH] [--gateway-endpoint URL]\n"
               "                            [--grant-root DIR]... [--layer-size SIZE|none]\n"
               "Serves OpenShell's compute-driver contract (openshell.compute.v1.ComputeDriver) as the driver\n"
               "\"mxc\" on the unix socket PATH (mode 0600, or 0660 for GROUP).  docs/openshell.md.\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longs[] = {{"socket", required_argument, NULL, 's'},
                                          {"state-dir", required_argument, NULL, 'd'},
                                          {"supervisor", required_argument, NULL, 'p'},
                                          {"socket-group", required_argument, NULL, 'g'},
                                          {"config", required_argument, NULL, 'c'},
                                          {"mxc-oci", required_argument, NULL, 'o'},
                                          {"podman", required_argument, NULL, 'P'},
                                          {"gateway-endpoint", required_argument, NULL, 'e'},
                                          {"grant-root", required_argument, NULL, 'r'},
                                          {"layer-size", required_argument, NULL, 'L'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 's': o->socket = optarg; break;
        case 'd': o->state_dir = optarg; break;
        case 'p': o->supervisor = optarg; break;
        case 'g': o->group = optarg; break;
        case 'c': o->config = optarg; break;
        case 'o': o->mxc_oci = optarg; break;
        case 'P': o->podman = optarg; break;
        case 'e': o->endpoint = optarg; break;
        case 'L': o->layer_size = optarg; break;
        case 'r':
            if (o->ngrant_roots == MAX_GRANT_ROOTS)
                return -1;
            o->grant_root[o->ngrant_roots++] = optarg;
            break;
        case 'h': usage(stdout); exit(0);
        default: return -1;
        }
    }
    if (optind != argc || !o->socket || !o->state_dir)
        return -1;
    return 0;
}

static int group_id(const char *name, gid_t *gid, mxc_error *e)
{
    char *end;
    unsigned long n = strtoul(name, &end, 10);
    if (name[0] && !*end && n < (gid_t)-1) {
        *gid = (gid_t)n;
        return 0;
    }
    struct group gr, *res = NULL;
    char buf[4096];
    if (getgrnam_r(name, &gr, buf, sizeof buf, &res) != 0 || !res)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--socket-group %s: no such group", name);
    *gid = gr.gr_gid;
    return 0;
}

/* A program the driver runs or puts in sandboxes (--supervisor: it runs inside every
 * sandbox; --mxc-oci, --podman: run as the driver's user): an absolute path to a regular
 * executable file, owned by root or by us, that no group or other may write. */
static int check_program(const char *flag, const char *path, mxc_error *e)
{
    if (path[0] != '/')
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--%s %s is not an absolute path", flag, path);
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "supervisor.open", errno, NULL,
                          "--%s %s cannot be opened (a link is refused)", flag, path);
    if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "--%s %s is not an executable regular file", flag, path);
    if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                       "--%s %s may be changed by another user (owner %u, mode %04o)", flag, path,
                       (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    return 0;
}

/* A socket already at name: ours and dead is replaced; anything else is refused. */
static int clear_stale(int dirfd, const char *name, const char *via, const char *path, mxc_error *e)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "socket.stat", errno, NULL, "cannot look at %s", path);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", via);
    _cleanup_fd_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live = S_ISSOCK(st.st_mode) && probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0;
    if (!S_ISSOCK(st.st_mode) || live || st.st_uid != geteuid())
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "%s exists and is %s", path,
                       live ? "served by another driver" : "not a stale socket of ours");
    if (unlinkat(dirfd, name, 0) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "socket.unlink", errno, NULL, "cannot remove the stale %s", path);
    return 0;
}

/* Binds path's socket through its directory's descriptor: 0600, or 0660 with group gid. */
static int make_socket(const char *path, const char *group, int *dirfd_out, const char **name_out, mxc_error *e)
{
    const char *slash = strrchr(path, '/');
    if (path[0] != '/' || !slash[1] || strlen(slash + 1) > NAME_MAX_LEN)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                       "--socket %s: an absolute path whose file name has 1-%d characters", path, NAME_MAX_LEN);
    gid_t gid = 0;
    if (group && group_id(group, &gid, e) < 0)
        return -1;
    char parent[4096];
    snprintf(parent, sizeof parent, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    int dirfd = mxc_open_own_dir(parent, 022);
    if (dirfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "socket.dir", errno,
                          "put the socket in a directory of this user's that nobody else may write",
                          "the socket's directory %s is not this user's own or another user may write it", parent);
    *dirfd_out = dirfd;
    *name_out = slash + 1;
    char via[108];
    snprintf(via, sizeof via, "/proc/self/fd/%d/%s", dirfd, slash + 1);
    if (clear_stale(dirfd, slash + 1, via, path, e) < 0)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", via);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    mode_t old = umask(0177);
    int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc == 0 && group)
        rc = fchownat(dirfd, slash + 1, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) == 0 ? fchmodat(dirfd, slash + 1, 0660, 0) : -1;
    if (rc < 0 || listen(fd, 64) < 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "socket.listen", err, NULL, "cannot listen on %s", path);
    }
    return fd;
}

/* systemd's socket activation (LISTEN_PID this process, LISTEN_FDS 1: fd 3), as the unit
 * mxc-openshell-driver.socket makes it: taken when it is a listening unix stream socket bound
 * at --socket whose file is root's or ours and not world-writable (no one else may connect:
 * SocketMode=0600, or 0660 with SocketGroup=).  fd 3, -2 when
 * not activated, -1 with *e.  LISTEN_* are cleared, and fd 3 made CLOEXEC: no child inherits
 * them. */
static int inherited_socket(const char *path, mxc_error *e)
{
    const char *for_pid = getenv("LISTEN_PID"), *count = getenv("LISTEN_FDS");
    if (!for_pid || !count || atol(for_pid) != (long)getpid())
        return -2; /* none, or an ancestor's */
    bool one = !strcmp(count, "1");
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (!one)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "socket activation passed %s descriptors: the driver takes one "
                                                     "(ListenStream=%s)", count, path);
    struct sockaddr_un bound = {0};
    socklen_t blen = sizeof bound;
    int listening = 0, type = 0;
    struct stat st;
    bool ok = getsockname(3, (struct sockaddr *)&bound, &blen) == 0 && bound.sun_family == AF_UNIX &&
              blen > offsetof(struct sockaddr_un, sun_path) && !strncmp(bound.sun_path, path, sizeof bound.sun_path) &&
              getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &listening, &(socklen_t){sizeof listening}) == 0 && listening &&
              getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &(socklen_t){sizeof type}) == 0 && type == SOCK_STREAM;
    if (!ok)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                       "socket activation: fd 3 is not a listening unix stream socket bound at --socket %s", path);
    if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || (st.st_mode & 0002) || (st.st_uid && st.st_uid != geteuid()))
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                       "socket activation: anyone may connect to %s, or it is not root's or ours (SocketMode=0600 "
                       "or 0660 with SocketGroup=)", path);
    if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0 || fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "socket.fcntl", errno, NULL, "socket activation: fd 3");
    return 3;
}

/* --mxc-oci's default: mxc-oci beside this program. */
static const char *beside_me(char *buf, size_t sz)
{
    ssize_t n = readlink("/proc/self/exe", buf, sz - 16);
    if (n <= 0)
        return "/usr/bin/mxc-oci";
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    snprintf(slash + 1, sz - (size_t)(slash + 1 - buf), "mxc-oci");
    return buf;
}

/* --grant-root DIR: an absolute path to a directory, kept in its canonical form (what a grant
 * resolves to is compared with it). */
static int grant_roots(const options *o, char (*canon)[PATH_MAX], const char **roots, mxc_error *e)
{
    for (size_t i = 0; i < o->ngrant_roots; i++) {
        struct stat st;
        if (o->grant_root[i][0] != '/')
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--grant-root %s is not an absolute path", o->grant_root[i]);
        if (!realpath(o->grant_root[i], canon[i]) || stat(canon[i], &st) < 0 || !S_ISDIR(st.st_mode))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--grant-root %s is not a directory", o->grant_root[i]);
        roots[i] = canon[i];
    }
    return 0;
}

static int run(const options *o, mxc_error *e)
{
    static char canon[MAX_GRANT_ROOTS][PATH_MAX];
    static const char *roots[MAX_GRANT_ROOTS];
    osd_seen seen = {0};
    osd_driver d = {.store = {-1, -1}, .rt = {.runfd = -1, .workfd = -1}, .seen = &seen};
    char me[4096];
    d.rt.mxc_oci = o->mxc_oci ? o->mxc_oci : beside_me(me, sizeof me);
    d.rt.podman = o->podman ? o->podman : "/usr/bin/podman";
    d.rt.supervisor = o->supervisor;
    d.rt.endpoint = o->endpoint;
    static osd_gateway gw;
    if (o->endpoint && (osd_gateway_parse(o->endpoint, &gw, e) < 0 || osd_gateway_allow(&gw, e) < 0))
        return -1;
    d.rt.gateway = o->endpoint ? &gw : NULL;
    d.rt.socket = o->socket;
    d.rt.cfg = &d.cfg;
    if (grant_roots(o, canon, roots, e) < 0)
        return -1;
    d.rt.grant_roots = roots;
    static char no_layer[512];
    d.rt.layer_size = OSD_LAYER_DEFAULT;
    if (o->layer_size && osd_layer_size_parse(o->layer_size, &d.rt.layer_size, e) < 0)
        return -1;
    if (d.rt.layer_size && (d.rt.layer_refused = osd_layer_unavailable(no_layer, sizeof no_layer)))
        fprintf(stderr, "mxc-openshell-driver: %s\n", d.rt.layer_refused); /* never uncapped unasked */
    d.rt.ngrant_roots = o->ngrant_roots;
    if ((o->supervisor && check_program("supervisor", o->supervisor, e) < 0) ||
        check_program("mxc-oci", d.rt.mxc_oci, e) < 0 || check_program("podman", d.rt.podman, e) < 0)
        return -1;
    if (o->config && mxc_gw_config_load(o->config, &d.cfg, e) < 0)
        return -1;
    d.cfg.backend = MXC_GW_BACKEND_SESSION; /* a driver's sandboxes are sessions (stop/start keep them) */
    d.have_supervisor = o->supervisor != NULL;
    if (osd_store_open(&d.store, o->state_dir, e) < 0 || osd_rt_open(&d.rt, &d.store, o->state_dir, e) < 0) {
        osd_rt_close(&d.rt);
        osd_store_close(&d.store);
        mxc_gw_config_free(&d.cfg);
        return -1;
    }
    osd_sbx_sweep(&d.rt, &d.store); /* a crash mid-create leaves nothing half-made */
    osd_watch_refresh(&d);          /* what Watch would say now: later changes are its events */
    int dirfd = -1;
    const char *name = NULL;
    int lfd = inherited_socket(o->socket, e);
    bool ours = lfd == -2; /* not activated: the driver makes its socket, and removes it at exit */
    if (ours)
        lfd = make_socket(o->socket, o->group, &dirfd, &name, e);
    int rc = lfd < 0 ? -1 : osd_serve(lfd, osd_routes, osd_nroutes, &d, osd_watch_tick, &stop_flag, e);
    if (lfd >= 0 && ours)
        unlinkat(dirfd, name, 0); /* an activated socket is systemd's (RemoveOnStop=) */
    if (lfd >= 0)
        close(lfd);
    if (dirfd >= 0)
        close(dirfd);
    osd_rt_close(&d.rt);
    osd_store_close(&d.store);
    osd_seen_free(&seen);
    mxc_gw_config_free(&d.cfg);
    return rc;
}

int main(int argc, char **argv)
{
    options o = {0};
    if (parse_args(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    mxc_error e = {0};
    if (run(&o, &e) < 0) {
        fprintf(stderr, "mxc-openshell-driver: %s\n", e.message);
        mxc_error_clear(&e);
        return 1;
    }
    return 0;
}
