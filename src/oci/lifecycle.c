/* lifecycle.c — see lifecycle.h. */
#include "lifecycle.h"
#include "fault.h"
#include "apparmor.h"
#include "cgroup.h"
#include "devices.h"
#include "../lib/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <linux/nsfs.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfcache.h"
#include "config.h"
#include "fdio.h"
#include "harden.h"
#include "hooks.h"
#include "hostpath.h"
#include "idrange.h"
#include "init.h"
#include "mountmap.h"
#include "ocijson.h"
#include "overlay.h"
#include "mxcnet.h"
#include "procs.h"
#include "registry.h"
#include "relay.h"
#include "rootfs.h"
#include "store.h"

static int pidfd_of(const oci_state *s)
{
    int fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
    if (fd < 0)
        return -1;
    /* the pidfd names one process for good: checked after it is open */
    if (!mxc_pid_alive(s->pid, s->start)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_msg(int sock, char tag, int fd)
{
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {&tag, 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = ctl;
        mh.msg_controllen = sizeof ctl;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    }
    return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* A detached sysfs of the network namespace mxc-oci is in (a pod's, joined by path: the init's user
 * namespace does not own it, so the init could not mount it), read-only with the mount's flags. */
static int sysfs_tree(const oci_mount *m)
{
    int fs = fsopen(m->type, FSOPEN_CLOEXEC); /* sysfs, or mqueue of a joined IPC namespace: the maker's */
    if (fs < 0)
        return -errno;
    int mnt = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ? -1 : fsmount(fs, FSMOUNT_CLOEXEC,
                                                                                    (unsigned)m->attr_set);
    int err = errno;
    close(fs);
    return mnt < 0 ? -err : mnt;
}

/* A detached copy of the tree at fd, its flags set before anyone sees it. */
static int tree_of(int fd, const char *path, bool recursive, uint64_t set, uint64_t clr, int userns)
{
    int tree = open_tree(fd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (path[0] ? 0 : AT_EMPTY_PATH) |
                                       (recursive ? AT_RECURSIVE : 0));
    if (tree < 0)
        return -errno;
    struct mount_attr attr = {.attr_set = set, .attr_clr = clr, .propagation = MS_PRIVATE};
    if (userns >= 0) {
        attr.attr_set |= MOUNT_ATTR_IDMAP;
        attr.userns_fd = (uint64_t)userns;
    }
    if (mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) < 0) {
        int err = errno;
        close(tree);
        return -err;
    }
    return tree;
}

/* oci_cgroup_create's recorder: the cgroup's directories written into the
 * container's range claim before they exist, for the sweeper (idrange.h). */
static int record_in_claim(const char *const *dirs, size_t n, void *claim)
{
    return mxc_idrange_set_cgroups(claim, dirs, n);
}

static void fd_path(int fd, char *out, size_t outsz)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, outsz - 1);
    out[n > 0 ? n : 0] = '\0';
}

static int write_pid_file(const char *path, pid_t pid, mxc_error *e)
{
    char tmp[PATH_MAX + 16], text[32];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    int len = snprintf(text, sizeof text, "%d", (int)pid);
    bool ok = fd >= 0 && write(fd, text, (size_t)len) == len;
    if (fd >= 0)
        close(fd);
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.pidfile", errno, NULL, "cannot write the pid file %s", path);
    }
    return 0;
}

/* The state JSON a hook reads on its stdin: the spec's, with status (a hook's phase may be
 * "creating", which the store never derives).  malloc'd, or NULL. */
static char *hook_state(const oci_state *s, const char *status)
{
    json_t *j = oci_state_json(s, OCI_CREATED);
    if (!j)
        return NULL;
    json_object_set_new(j, "status", json_string(status));
    if (!strcmp(status, "stopped"))
        json_object_del(j, "pid");
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return t;
}

/* The directories a hook's binary may not be beneath: the bundle and the rootfs (by path as
 * recorded; what cannot be stat'ed is left out). */
static size_t hook_deny(const oci_state *s, struct stat deny[2])
{
    size_t n = 0;
    if (s->bundle[0] && stat(s->bundle, &deny[n]) == 0)
        n++;
    if (s->rootfs[0] && stat(s->rootfs, &deny[n]) == 0)
        n++;
    return n;
}

/* poststart and poststop: their failure is a warning, the lifecycle goes on (runtime spec). */
static void hooks_warn(int dirfd, const oci_state *s, oci_hook_phase p, const char *status)
{
    int fd = openat(dirfd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_t *doc = fd >= 0 ? oci_json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    oci_hooks h = {0};
    mxc_error e = {0};
    struct stat deny[2];
    char *state = NULL;
    if (doc && oci_hooks_parse(doc, &h, &e) == 0 && h.n[p]) {
        if (oci_hooks_open(&h, p, deny, hook_deny(s, deny), &e) < 0 || !(state = hook_state(s, status)) ||
            oci_hooks_run(&h, p, state, &e) < 0)
            fprintf(stderr, "mxc-oci: warning: %s\n", e.code ? e.message : "out of memory");
    }
    free(state);
    oci_hooks_free(&h);
    mxc_error_clear(&e);
    json_decref(doc);
}

/* A message of the init protocol with a payload (the hooks' state): tag, then text. */
static int send_text(int sock, char tag, const char *text)
{
    size_t n = strlen(text);
    char *m = malloc(n + 1);
    if (!m)
        return -ENOMEM;
    m[0] = tag;
    memcpy(m + 1, text, n);
    ssize_t r = send(sock, m, n + 1, MSG_NOSIGNAL);
    free(m);
    return r == (ssize_t)(n + 1) ? 0 : -EMSGSIZE;
}

typedef struct {
    int bundle_fd, dir_fd, rootfs_fd, fifo_fd, sock, userns, console;
    int *src;            /* per mount: a bind's source (O_PATH) or -1 */
    char claim[MXC_IDRANGE_NAME_MAX];
    bool made_dir;
    pid_t child;
    bool made_cg;
    oci_cgroup cg;       /* the container's cgroup (cgroup.c) */
} create_ctx;

static void ctx_close(create_ctx *x)
{
    int *fds[] = {&x->bundle_fd, &x->dir_fd, &x->rootfs_fd, &x->fifo_fd, &x->sock, &x->userns, &x->console};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

static int create_fail(create_ctx *x, int rootfd, const char *id, const oci_config *c)
{
    if (x->child > 0) {
        kill(x->child, SIGKILL);
        waitpid(x->child, NULL, 0);
    }
    for (size_t i = 0; x->src && i < c->nmounts; i++)
        if (x->src[i] >= 0)
            close(x->src[i]);
    free(x->src);
    ctx_close(x);
    if (x->made_cg)
        oci_cgroup_remove(&x->cg, true);
    if (x->made_dir)
        oci_store_remove(rootfd, id);
    if (x->claim[0])
        mxc_idrange_release(x->claim);
    return -1;
}

/* A copy of the config the container was made from, for exec (0600, by descriptor). */
static int save_config(int dirfd, json_t *doc, mxc_error *e)
{
    int fd = openat(dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || mxc_json_dumpfd(doc, fd, JSON_COMPACT) < 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.state", err, NULL, "cannot save the container's config");
    }
    close(fd);
    return 0;
}

/* With a config's own user namespace the rootfs is not idmapped: an image that is host root's on disk
 * is not its root's, and the init (its root) could not make a missing mount target there ("Permission
 * denied").  Host root makes them now, beneath the rootfs (RESOLVE_IN_ROOT, as the init resolves them),
 * owned by the container's root as the init would have: those on the rootfs itself, not those below
 * an earlier mount's destination (made in that mount by the init).  What fails is the init's to say. */
static void make_own_targets(const oci_config *c, int rootfs_fd, const int *src)
{
    unsigned uid, gid;
    if (!oci_map_id(c->uidmap, c->nuidmap, 0, &uid) || !oci_map_id(c->gidmap, c->ngidmap, 0, &gid))
        return;
    for (size_t i = 0; i < c->nmounts; i++) {
        const char *d = c->mounts[i].dest;
        bool covered = false;
        for (size_t j = 0; j < i && !covered; j++) {
            const char *p = c->mounts[j].dest;
            size_t n = strlen(p);
            while (n > 0 && p[n - 1] == '/')
                n--;
            covered = n == 0 || (!strncmp(d, p, n) && (d[n] == '/' || d[n] == '\0'));
        }
        struct stat st;
        bool dir = c->mounts[i].kind != OCI_MNT_BIND || (src[i] >= 0 && fstat(src[i], &st) == 0 &&
                                                          S_ISDIR(st.st_mode));
        int t = covered ? -1 : mxc_make_in_root_as(rootfs_fd, d, true, dir, uid, gid);
        if (t >= 0)
            close(t);
    }
}

/* A config's own maps must stay out of the ids mxc hands out (the single
 * uids, the ranges): sharing them would share files and signals with
 * another sandbox.  And out of every id someone else on the host has — a
 * local account, a group, a subordinate range, another container's claim
 * (idrange.h, the rule mxc's own slots follow): the container's root would
 * own that account's files (its home, a group's /etc/shadow). */
static int own_maps_meet_mxc(const oci_config *c, mxc_error *e)
{
    unsigned ubase, ucount, rbase, slots;
    mxc_registry_range(&ubase, &ucount);
    mxc_idrange_region(&rbase, &slots);
    for (size_t k = 0; k < c->nuidmap + c->ngidmap; k++) {
        const oci_idmap *m = k < c->nuidmap ? &c->uidmap[k] : &c->gidmap[k - c->nuidmap];
        const char *field = k < c->nuidmap ? "uidMappings" : "gidMappings";
        size_t idx = k < c->nuidmap ? k : k - c->nuidmap;
        unsigned long long lo = m->hid, hi = (unsigned long long)m->hid + m->n;
        if ((lo < (unsigned long long)ubase + ucount && ubase < hi) ||
            (lo < (unsigned long long)rbase + (unsigned long long)slots * MXC_IDRANGE_SIZE && rbase < hi))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.%s[%zu] maps onto host ids mxc hands "
                           "to other sandboxes (%u+%u, %u+%u*65536): refused", field, idx, ubase, ucount, rbase,
                           slots);
        char what[200];
        int use = m->n ? mxc_idrange_host_use(lo, m->n, k >= c->nuidmap, NULL, what, sizeof what) : 0;
        if (use < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.idmap", -use, NULL, "config.json: linux.%s[%zu]: cannot "
                              "tell whether host ids %llu..%llu are another's (/etc/passwd, /etc/group, "
                              "/etc/subuid, /etc/subgid, the range claims)", field, idx, lo, hi - 1);
        if (use > 0)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.%s[%zu]: host ids %llu..%llu include %s: "
                           "a config's own maps must lie in ids no one else on the host has (no local account, "
                           "group, subordinate range or other container's claim): refused", field, idx, lo, hi - 1,
                           what);
    }
    return 0;
}

/* A connection to the console socket (runc's --console-socket: a unix
 * stream socket the caller listens on), or -1 with *e set; terminal must
 * be asked for when and only when a socket is given. */
static int console_connect(const char *path, bool terminal, mxc_error *e)
{
    if (!path && terminal)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                       "cannot allocate tty if mxc-oci will detach without setting console socket");
    if (path && !terminal)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "cannot use console socket if mxc-oci will not detach or allocate "
                       "tty");
    if (!path)
        return -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--console-socket %s: path too long", path);
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.console", errno, NULL, "--console-socket %s", path);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Whether the container would be in mxc-oci's own (the host's) namespace of this type: no
 * namespace of its own, and none joined by path, or the one joined is mxc-oci's (a pod's, joined
 * by path, is not). */
static bool in_runtime_ns(const oci_config *c, int flag, const char *name)
{
    if (c->ns_flags & flag)
        return false;
    char self_path[64];
    snprintf(self_path, sizeof self_path, "/proc/self/ns/%s", name);
    struct stat self, joined;
    for (size_t i = 0; i < c->njoin; i++)
        if (c->join[i].flag == flag)
            return stat(self_path, &self) < 0 || stat(c->join[i].path, &joined) < 0 ||
                   (self.st_ino == joined.st_ino && self.st_dev == joined.st_dev);
    return true;
}

/* linux.namespaces[].path i, opened without blocking (a FIFO there held create forever): by O_PATH
 * first, an nsfs file of the type named or refused, then re-opened through its descriptor for setns.
 * The descriptor, or -1 with *e set. */
static int open_ns_path(const oci_config *c, size_t i, mxc_error *e)
{
    int p = open(c->join[i].path, O_PATH | O_CLOEXEC);
    struct statfs sf;
    const char *why = p < 0 ? strerror(errno) : fstatfs(p, &sf) < 0 ? strerror(errno)
                      : sf.f_type != NSFS_MAGIC ? "not a namespace file (nsfs)" : NULL;
    int fd = -1;
    if (!why) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", p);
        fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        why = fd < 0 ? strerror(errno) : ioctl(fd, NS_GET_NSTYPE) != c->join[i].flag ? "not a namespace of that type"
                                                                                     : NULL;
    }
    if (p >= 0)
        close(p);
    if (why) {
        if (fd >= 0)
            close(fd);
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.namespaces %s path %s: %s", c->join[i].type,
                       c->join[i].path, why);
    }
    return fd;
}

/* Every namespace joined by path checked before anything is made (open_ns_path). */
static int check_ns_paths(const oci_config *c, mxc_error *e)
{
    for (size_t i = 0; i < c->njoin; i++) {
        int fd = open_ns_path(c, i, e);
        if (fd < 0)
            return -1;
        close(fd);
    }
    return 0;
}

static bool on_host_network(const oci_config *c)
{
    return in_runtime_ns(c, CLONE_NEWNET, "net");
}

/* A linux.sysctl of a namespace joined by path (a pod's): written by mxc-oci, in that namespace
 * now (the init's user namespace does not own it), through the host's /proc (/proc/sys/net and
 * the IPC keys answer for the namespace of the process that opens them). */
static int write_joined_sysctls(const oci_config *c, mxc_error *e)
{
    for (size_t i = 0; i < c->nsysctl; i++) {
        if (c->ns_flags & oci_sysctl_ns(c->sysctl[i][0]))
            continue; /* the init writes its own namespace's (init.c) */
        char path[256];
        snprintf(path, sizeof path, "/proc/sys/%s", c->sysctl[i][0]);
        for (char *q = path + 10; *q; q++)
            if (*q == '.')
                *q = '/';
        /* ids in a sysctl are read in the writer's user namespace (the host's here): the container's
         * ping group range is written as the host ids its gid map gives them */
        const char *val = c->sysctl[i][1];
        char mapped[64];
        unsigned lo, hi, hlo, hhi;
        int used = 0;
        if (!strcmp(c->sysctl[i][0], "net.ipv4.ping_group_range") && sscanf(val, "%u %u%n", &lo, &hi, &used) == 2 &&
            !val[used] && lo <= hi) {
            if (!oci_map_id(c->gidmap, c->ngidmap, lo, &hlo) || !oci_map_id(c->gidmap, c->ngidmap, hi, &hhi) ||
                hhi - hlo != hi - lo)
                return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.sysctl net.ipv4.ping_group_range %s: "
                               "not one range of the container's own gids", val);
            snprintf(mapped, sizeof mapped, "%u %u", hlo, hhi);
            val = mapped;
        }
        int f = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
        size_t len = strlen(val);
        int err = f < 0 ? errno : write(f, val, len) != (ssize_t)len ? errno : 0;
        if (f >= 0)
            close(f);
        if (err)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.sysctl", err, NULL, "linux.sysctl %s = %s in the pod's "
                              "namespace: %s", c->sysctl[i][0], c->sysctl[i][1], strerror(err));
    }
    return 0;
}

/* --preserve-fds: fds 3..3+n-1 open, and none a directory or an O_PATH descriptor (a host
 * directory's descriptor in the container is a way out of its rootfs: openat(fd, "..")). */
int oci_check_preserved(int n, mxc_error *e)
{
    if (n < 0 || n > 1000)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--preserve-fds %d: between 0 and 1000", n);
    for (int fd = 3; fd < 3 + n; fd++) {
        struct stat st;
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fstat(fd, &st) < 0)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--preserve-fds %d: fd %d is not open", n, fd);
        if (S_ISDIR(st.st_mode) || (fl & O_PATH))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "--preserve-fds: fd %d is a %s: refused (a host "
                           "descriptor of that kind is a way out of the container's root)", fd,
                           S_ISDIR(st.st_mode) ? "directory" : "path descriptor");
    }
    return 0;
}

int oci_create(int rootfd, const char *id, const char *bundle, const char *pid_file, const char *console,
               int preserve, bool keep, pid_t *child, mxc_error *e)
{
    if (!oci_valid_id(id))
        return mxc_err(e, MXC_E_MALFORMED_ID, "invalid id format: %s", id ? id : "");
    create_ctx x = {.bundle_fd = -1, .dir_fd = -1, .rootfs_fd = -1, .fifo_fd = -1, .sock = -1, .userns = -1,
                    .console = -1};
    oci_config c;
    x.bundle_fd = open(bundle ? bundle : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (x.bundle_fd < 0) {
        mxc_err_os(e, MXC_E_MALFORMED_REQUEST, "oci.bundle", errno, NULL, "cannot open the bundle %s",
                   bundle ? bundle : ".");
        memset(&c, 0, sizeof c);
        return create_fail(&x, rootfd, id, &c);
    }
    if (oci_config_load(x.bundle_fd, &c, e) < 0) {
        create_fail(&x, rootfd, id, &c);
        oci_config_free(&c);
        return -1;
    }
    int rc = -1;
    oci_state st = {0};
    char **writable = NULL;
    size_t nwritable = 0;
    oci_seccomp sc = {0};
    oci_mxcnet net = {0}; /* io.mxc.network (mxcnet.h) */
    oci_hooks hk = {0};
    char *hstate = NULL;
    int own_ns[4] = {-1, -1, -1, -1};
    size_t nown = 0;
    char path0[64];
    if (oci_apparmor_usable(c.apparmor_profile, "process.apparmorProfile", e) < 0 ||
        oci_hooks_parse(c.doc, &hk, e) < 0)
        goto out;
    if (oci_hooks_host_side(&hk) && !c.root_written) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: hooks: refused: this config.json (or its bundle "
                "directory) is not root's alone, and a hook runs with the runtime's privileges; only a config "
                "that only root could write may name hooks");
        goto out;
    }
    if (!c.has_process) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: process must be set to create a container");
        goto out;
    }
    if (oci_check_preserved(preserve, e) < 0)
        goto out;
    if ((x.console = console_connect(console, c.terminal, e)) < 0 && e->code)
        goto out;
    if (oci_seccomp_compile_cached(rootfd, c.seccomp, &sc, e) < 0)
        goto out;
    bool host_net = on_host_network(&c);
    for (size_t i = 0; i < c.nsysctl; i++) {
        int flag = oci_sysctl_ns(c.sysctl[i][0]);
        if (!(c.ns_flags & flag) && in_runtime_ns(&c, flag, flag == CLONE_NEWNET ? "net" : "ipc")) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.sysctl %s: the namespace joined by path is the "
                    "host's (a host sysctl): refused", c.sysctl[i][0]);
            goto out;
        }
    }
    if (host_net && ((c.cap_bounding | c.cap_effective | c.cap_permitted | c.cap_inheritable | c.cap_ambient) &
                     (1ull << CAP_NET_RAW))) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: process.capabilities: CAP_NET_RAW is refused on the "
                "host's network namespace (joined by path)");
        goto out;
    }
    for (size_t i = 0; i < c.nmounts; i++) /* a pod's mqueue, never the host's message queues */
        if (c.mounts[i].by_parent && !strcmp(c.mounts[i].type, "mqueue") &&
            in_runtime_ns(&c, CLONE_NEWIPC, "ipc")) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].type 'mqueue' needs an IPC namespace "
                    "other than the host's (the host's message queues are refused)", i);
            goto out;
        }
    if (in_runtime_ns(&c, CLONE_NEWIPC, "ipc")) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces: the IPC namespace is the host's: refused "
                "(its shared memory, semaphores and message queues are the host's); give the container an ipc "
                "namespace, or join a pod's by path");
        goto out;
    }
    for (size_t i = 0; host_net && i < c.nmounts; i++)
        if (c.mounts[i].by_parent && !strcmp(c.mounts[i].type, "sysfs")) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].type 'sysfs' needs a network namespace "
                    "other than the host's (the host's sysfs is refused)", i);
            goto out;
        }
    if (host_net && mxc_landlock_abi() < MXC_LANDLOCK_ABI_SCOPE) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "config.json: linux.namespaces has no network namespace: the host's "
                "network shares the host's abstract unix sockets, which only Landlock ABI %d scopes (this kernel: "
                "%d); give the container a network namespace", MXC_LANDLOCK_ABI_SCOPE, mxc_landlock_abi());
        goto out;
    }
    if (check_ns_paths(&c, e) < 0)
        goto out;
    if (oci_mxcnet_check(rootfd, &c, host_net, &net, e) < 0)
        goto out;
    /* 1. the directory (its path names the range claim's owner) */
    x.dir_fd = oci_store_make(rootfd, id, e);
    if (x.dir_fd < 0)
        goto out;
    x.made_dir = true;
    char dir_path[PATH_MAX];
    fd_path(x.dir_fd, dir_path, sizeof dir_path);
    if (oci_mxcnet_prepare(&net, x.dir_fd, dir_path, id, &c, e) < 0)
        goto out;
    /* 2. the bind sources, resolved on the host as the engine resolves a grant: a symlink followed only
     * where no live sandbox can write it, mxc's own state refused; what the container can write recorded */
    x.src = calloc(c.nmounts + 1, sizeof *x.src);
    writable = calloc(c.nmounts + 1, sizeof *writable);
    if (!x.src || !writable) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < c.nmounts; i++)
        x.src[i] = -1;
    for (size_t i = 0; i < c.nmounts; i++) {
        if (c.mounts[i].kind != OCI_MNT_BIND)
            continue;
        const oci_mount *m = &c.mounts[i];
        char want[PATH_MAX + 2], canon[PATH_MAX], why[512] = "";
        char bpath[PATH_MAX];
        fd_path(x.bundle_fd, bpath, sizeof bpath);
        if (snprintf(want, sizeof want, "%s%s%s", m->source[0] == '/' ? "" : bpath, m->source[0] == '/' ? "" : "/",
                     m->source) >= (int)sizeof want) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: mounts[%zu].source is too long", i);
            goto out;
        }
        mxc_hostpath_rules rules = {.claims = true};
        int dirfd = -1;
        int r = mxc_hostpath_resolve(&rules, want, true, canon, sizeof canon, &x.src[i], &dirfd, why, sizeof why);
        if (dirfd >= 0)
            close(dirfd);
        struct stat sst;
        if (r < 0 || fstat(x.src[i], &sst) < 0) {
            if (r == 0) {
                close(x.src[i]);
                x.src[i] = -1;
            }
            mxc_err(e, MXC_E_POLICY_VALIDATION, "mounts[%zu].source %s: %s", i, m->source,
                    why[0] ? why : strerror(r < 0 ? -r : errno));
            goto out;
        }
        if (S_ISBLK(sst.st_mode)) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].source %s is a block device: a raw host "
                    "device is refused", i, m->source);
            goto out;
        }
        bool ro = m->attr_set & MOUNT_ATTR_RDONLY;
        if (mxc_hostpath_check_grant(canon, ro ? "read-only" : "read-write", e) < 0)
            goto out;
        if (!ro && !(writable[nwritable++] = strdup(canon))) {
            mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
            goto out;
        }
    }
    /* 3. the user namespace's maps: the config's, or a claimed range */
    if (!c.user_ns) {
        unsigned base;
        if (mxc_idrange_claim(dir_path, (const char *const *)writable, nwritable, &base, x.claim, e) < 0)
            goto out;
        c.uidmap[0] = c.gidmap[0] = (oci_idmap){0, base, MXC_IDRANGE_SIZE};
        c.nuidmap = c.ngidmap = 1;
    }
    else if (own_maps_meet_mxc(&c, e) < 0)
        goto out;
    if (oci_mountmap_check(&c, e) < 0)
        goto out; /* idmapped binds: only ids the container owns (mountmap.h) */
    unsigned huid, hgid, hg;
    if (!oci_map_id(c.uidmap, c.nuidmap, c.uid, &huid) || !oci_map_id(c.gidmap, c.ngidmap, c.gid, &hgid)) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: process.user %u:%u is not mapped in the container's user "
                "namespace", c.uid, c.gid);
        goto out;
    }
    for (size_t i = 0; i < c.ngids; i++)
        if (!oci_map_id(c.gidmap, c.ngidmap, c.gids[i], &hg)) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: process.user.additionalGids[%zu] %u is not mapped in "
                    "the container's user namespace", i, c.gids[i]);
            goto out;
        }
    /* 4. the rootfs, opened before the clone */
    x.rootfs_fd = oci_rootfs_open(x.bundle_fd, bundle, c.root_path, e); /* a container's own only (rootfs.h) */
    if (x.rootfs_fd < 0)
        goto out;
    if (c.user_ns)
        make_own_targets(&c, x.rootfs_fd, x.src);
    /* 4b. the host-resolved hooks' binaries, checked now (before anything runs); the init inherits
     * createContainer's descriptors and execs those, never the path again */
    {
        struct stat deny[2];
        if (fstat(x.bundle_fd, &deny[0]) < 0 || fstat(x.rootfs_fd, &deny[1]) < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.hooks", errno, NULL, "the bundle");
            goto out;
        }
        for (int p = 0; p < OCI_HOOK_NPHASES; p++)
            if (p != OCI_HOOK_START_CONTAINER && oci_hooks_open(&hk, (oci_hook_phase)p, deny, 2, e) < 0)
                goto out;
    }
    /* 5. the exec fifo, the init's to open (as the process's own uid) */
    if (mkfifoat(x.dir_fd, OCI_FIFO, 0600) < 0 || fchownat(x.dir_fd, OCI_FIFO, huid, hgid, AT_SYMLINK_NOFOLLOW) < 0 ||
        (x.fifo_fd = openat(x.dir_fd, OCI_FIFO, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.fifo", errno, NULL, "cannot make the exec fifo");
        goto out;
    }
    /* 5b. the cgroup, made and limited before the init exists (cgroup.c) */
    if (!oci_cgroup_disabled) {
        if (oci_cgroup_create(x.dir_fd, id, c.cgroups_path, c.resources, x.claim[0] ? record_in_claim : NULL, x.claim,
                              &x.cg, e) < 0)
            goto out;
        x.made_cg = true;
        const char *fault = mxc_fault("OCI_AFTER_CGROUP"); /* tests/oci: create fails once its cgroup exists */
        if (fault && !strcmp(fault, "crash"))
            _exit(1); /* as if killed: nothing undone */
        if (fault) {
            mxc_err(e, MXC_E_BACKEND_ERROR, "fault injected after the cgroup was made");
            goto out;
        }
    }
    /* 6. the init */
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.socketpair", errno, NULL, "socketpair");
        goto out;
    }
    /* namespaces joined by path (a pod's network, IPC, UTS): entered here, as host root, so that the
     * init is born in them (its own user namespace could not enter one it does not own); the
     * runtime's own kept, to return to after the clone (run's start and delete, and the hooks,
     * run in the runtime's namespaces) */
    for (size_t i = 0; i < c.njoin; i++) {
        const char *nsname = c.join[i].flag == CLONE_NEWNET ? "net" : c.join[i].flag == CLONE_NEWIPC ? "ipc"
                             : c.join[i].flag == CLONE_NEWUTS ? "uts" : "cgroup";
        snprintf(path0, sizeof path0, "/proc/self/ns/%s", nsname);
        if ((own_ns[nown] = open(path0, O_RDONLY | O_CLOEXEC)) < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL, "%s", path0);
            close(sv[0]);
            close(sv[1]);
            goto out;
        }
        nown++;
    }
    for (size_t i = 0; i < c.njoin; i++) {
        int nfd = open_ns_path(&c, i, e);
        if (nfd < 0) {
            close(sv[0]);
            close(sv[1]);
            goto out;
        }
        int r = setns(nfd, c.join[i].flag);
        int err = errno;
        close(nfd);
        if (r < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", err, NULL, "joining the %s namespace %s", c.join[i].type,
                       c.join[i].path);
            close(sv[0]);
            close(sv[1]);
            goto out;
        }
    }
    if (write_joined_sysctls(&c, e) < 0) {
        close(sv[0]);
        close(sv[1]);
        goto out;
    }
    /* a pod's sysfs shows the network namespace of its maker: made now, while mxc-oci is in the pod's
     * (it returns to its own right after the clone) */
    for (size_t i = 0; i < c.nmounts; i++)
        if (c.mounts[i].by_parent && (x.src[i] = sysfs_tree(&c.mounts[i])) < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mount", -x.src[i], NULL, "mounts[%zu]: the pod's %s", i,
                       c.mounts[i].type);
            x.src[i] = -1;
            close(sv[0]);
            close(sv[1]);
            goto out;
        }
    /* a new cgroup namespace is the init's to unshare once it is in its cgroup (init.c), so that its root is
     * the container's cgroup; on v2 the init is born in it (clone3 CLONE_INTO_CGROUP) */
    int flags = (c.ns_flags & ~CLONE_NEWCGROUP) | CLONE_NEWUSER;
    int cgfd = x.made_cg ? oci_cgroup_dir_fd(&x.cg) : -1;
    fflush(NULL);
    x.child = mxc_cgroup_clone((unsigned long long)flags, cgfd);
    if (cgfd >= 0)
        close(cgfd);
    if (x.child == 0) {
        close(sv[0]);
        oci_init_args a = {.c = &c, .sock = sv[1], .fifo = x.fifo_fd, .console = x.console, .seccomp = &sc,
                           .preserve = preserve, .host_net = host_net, .hooks = &hk};
        oci_init_main(&a);
    }
    close(sv[1]);
    x.sock = sv[0];
    for (size_t i = 0; i < nown; i++)
        if (setns(own_ns[i], 0) < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL, "returning to the runtime's namespaces");
            goto out;
        }
    if (x.child < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.clone", errno, NULL, "cannot clone the container's init");
        x.child = 0;
        goto out;
    }
    if (x.made_cg && (oci_cgroup_enter(&x.cg, x.child, e) < 0 || oci_cgroup_sole(&x.cg, x.child, e) < 0))
        goto out;
    char path[64];
    int r = oci_write_idmap(x.child, "uid_map", c.uidmap, c.nuidmap);
    if (r == 0)
        r = oci_write_idmap(x.child, "gid_map", c.gidmap, c.ngidmap);
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)x.child);
    if (r == 0 && (x.userns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        r = -errno;
    if (r < 0 || send_msg(x.sock, 'M', -1) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.idmap", -r, NULL, "cannot write the user namespace's maps");
        goto out;
    }
    /* io.mxc.network: rules and stack, or the container's own mxc-proxy, while the init waits */
    if (oci_mxcnet_attach(&net, x.child, e) < 0)
        goto out;
    /* 6. the trees: the rootfs idmapped onto the range (when the range is ours) and never a device;
     * each bind with its flags; the default devices */
    int t = -1;
    if (!c.user_ns && oci_overlay_rootfs(x.rootfs_fd, c.root_path, id, x.userns, c.uidmap[0].hid, c.gidmap[0].hid,
                                         &t, e) < 0)
        goto out; /* an overlay cannot be idmapped: re-made from idmapped layers (overlay.h) */
    if (t < 0)
        t = tree_of(x.rootfs_fd, "", true, MOUNT_ATTR_NODEV, 0, c.user_ns ? -1 : x.userns);
    if (t < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootfs", -t, NULL,
                   t == -EINVAL ? "root.path %s: its filesystem cannot be mounted idmapped (mxc maps the image onto "
                                  "the container's id range)"
                                : "root.path %s",
                   c.root_path);
        goto out;
    }
    r = send_msg(x.sock, 'T', t);
    close(t);
    for (size_t i = 0; r == 0 && i < c.nmounts; i++) {
        if (c.mounts[i].kind != OCI_MNT_BIND && !c.mounts[i].by_parent)
            continue;
        if (c.mounts[i].idmap && (t = oci_mountmap_tree(x.src[i], &c, i, e)) < 0)
            goto out;
        if (c.mounts[i].by_parent) {
            t = x.src[i]; /* made in the pod's network namespace (above) */
            x.src[i] = -1;
        } else if (!c.mounts[i].idmap)
            t = tree_of(x.src[i], "", c.mounts[i].recursive, c.mounts[i].attr_set, c.mounts[i].attr_clr, -1);
        if (t < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mount", -t, NULL, "mounts[%zu].source %s", i,
                       c.mounts[i].source);
            goto out;
        }
        r = send_msg(x.sock, 'T', t);
        close(t);
    }
    for (size_t i = 0; r == 0 && i < OCI_NDEVICES; i++) {
        snprintf(path, sizeof path, "/dev/%s", oci_default_devices[i]);
        t = tree_of(AT_FDCWD, path, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, -1);
        if (t < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.device", -t, NULL, "%s", path);
            goto out;
        }
        r = send_msg(x.sock, 'T', t);
        close(t);
    }
    for (size_t i = 0; r == 0 && i < c.nxdev; i++) { /* linux.devices beyond the defaults (devices.h) */
        if ((t = oci_device_tree(&c, i, e)) < 0)
            goto out;
        r = send_msg(x.sock, 'T', t);
        close(t);
    }
    if (r < 0 || send_msg(x.sock, 'G', -1) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited while it was being set up");
        goto out;
    }
    if (c.has_oom_score_adj) {
        char v[16];
        snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)x.child);
        snprintf(v, sizeof v, "%d", c.oom_score_adj);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        bool ok = fd >= 0 && write(fd, v, strlen(v)) > 0;
        if (fd >= 0)
            close(fd);
        if (!ok) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.oom", errno, NULL, "process.oomScoreAdj");
            goto out;
        }
    }
    /* 6b. the state as the hooks see it (status "creating" until create returns) */
    snprintf(st.id, sizeof st.id, "%s", id);
    st.pid = x.child;
    fd_path(x.bundle_fd, st.bundle, sizeof st.bundle);
    fd_path(x.rootfs_fd, st.rootfs, sizeof st.rootfs);
    snprintf(st.oci_version, sizeof st.oci_version, "%s", c.oci_version);
    st.annotations = c.annotations;
    /* 7. the init's answer; with hooks first 'H': its mounts are made, pivot_root not yet.  prestart
     * and createRuntime run here (host root, the runtime's namespaces), then the init runs
     * createContainer in the container's (their failure: the create fails, the init is killed) */
    char msg[1100];
    ssize_t n = recv(x.sock, msg, sizeof msg - 1, 0);
    if (n == 1 && msg[0] == 'H') {
        if (!(hstate = hook_state(&st, "creating"))) {
            mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
            goto out;
        }
        if (oci_hooks_run(&hk, OCI_HOOK_PRESTART, hstate, e) < 0 ||
            oci_hooks_run(&hk, OCI_HOOK_CREATE_RUNTIME, hstate, e) < 0)
            goto out;
        if (send_text(x.sock, 'h', hstate) < 0) {
            mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited (or the state is too large for a hook)");
            goto out;
        }
        n = recv(x.sock, msg, sizeof msg - 1, 0);
    }
    if (n <= 0 || msg[0] != 'K') {
        msg[n > 0 ? n : 0] = '\0';
        mxc_err(e, MXC_E_BACKEND_ERROR, "%s", n > 1 && msg[0] == 'E' ? msg + 1 : "the container's init exited");
        goto out;
    }
    /* 8. the state, then the init may wait on the fifo */
    st.start = mxc_proc_start_time(x.child);
    oci_now(st.created, sizeof st.created);
    snprintf(st.claim, sizeof st.claim, "%s", x.claim);
    if (oci_state_write(x.dir_fd, &st, e) < 0 || save_config(x.dir_fd, c.doc, e) < 0)
        goto out;
    if (x.claim[0] && mxc_idrange_set_owner(x.claim, x.child) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "cannot record the container's init in its id range claim");
        goto out;
    }
    if (pid_file && write_pid_file(pid_file, x.child, e) < 0)
        goto out;
    if (hk.n[OCI_HOOK_START_CONTAINER]) { /* startContainer's state, for the init to hand on at start */
        free(hstate);
        if (!(hstate = hook_state(&st, "created")) || send_text(x.sock, 'P', hstate) < 0) {
            mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited (or the state is too large for a hook)");
            goto out;
        }
    }
    if (send_msg(x.sock, 'S', -1) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited");
        goto out;
    }
    if (child)
        *child = x.child;
    if (!keep)
        x.child = 0; /* reparented when we exit; its parent (a shim, init) reaps it */
    rc = 0;
out:
    for (size_t i = 0; i < nwritable; i++)
        free(writable[i]);
    free(writable);
    oci_seccomp_free(&sc);
    oci_mxcnet_free(&net);
    for (size_t i = 0; i < nown; i++)
        close(own_ns[i]);
    if (rc < 0) {
        create_fail(&x, rootfd, id, &c);
        /* once the hooks began (the runtime spec: a failed create goes on to the end of the
         * lifecycle), poststop runs on what is gone, its failure a warning */
        char *stopped = hstate && hk.n[OCI_HOOK_POSTSTOP] ? hook_state(&st, "stopped") : NULL;
        mxc_error pe = {0};
        if (stopped && oci_hooks_run(&hk, OCI_HOOK_POSTSTOP, stopped, &pe) < 0)
            fprintf(stderr, "mxc-oci: warning: %s\n", pe.message);
        mxc_error_clear(&pe);
        free(stopped);
    } else {
        for (size_t i = 0; x.src && i < c.nmounts; i++)
            if (x.src[i] >= 0)
                close(x.src[i]);
        free(x.src);
        ctx_close(&x);
    }
    oci_hooks_free(&hk);
    free(hstate);
    oci_config_free(&c);
    return rc;
}

static int load(int rootfd, const char *id, int *dirfd, oci_state *s, mxc_error *e)
{
    if (!oci_valid_id(id))
        return mxc_err(e, MXC_E_MALFORMED_ID, "invalid id format: %s", id ? id : "");
    *dirfd = oci_store_open(rootfd, id, e);
    if (*dirfd < 0)
        return -1;
    if (oci_state_read(*dirfd, id, s, e) < 0) {
        close(*dirfd);
        return -1;
    }
    return 0;
}

int oci_start(int rootfd, const char *id, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    if (load(rootfd, id, &dirfd, &s, e) < 0)
        return -1;
    int rc = -1, fifo = -1, pfd = -1;
    oci_status status = oci_state_status(dirfd, &s);
    if (status == OCI_STOPPED) {
        mxc_err(e, MXC_E_ALREADY_STOPPED, "cannot start a container that has stopped");
        goto out;
    }
    if (status == OCI_RUNNING) {
        mxc_err(e, MXC_E_ALREADY_STARTED, "cannot start an already running container");
        goto out;
    }
    pfd = pidfd_of(&s);
    fifo = openat(dirfd, OCI_FIFO, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (pfd < 0 || fifo < 0) {
        mxc_err(e, MXC_E_ALREADY_STOPPED, pfd < 0 ? "cannot start a container that has stopped"
                                                  : "cannot start an already running container");
        goto out;
    }
    /* the init's byte, or its death first */
    for (;;) {
        struct pollfd p[2] = {{fifo, POLLIN, 0}, {pfd, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.start", errno, NULL, "poll");
            goto out;
        }
        if (p[0].revents & (POLLIN | POLLHUP)) {
            char b;
            ssize_t n = read(fifo, &b, 1);
            if (n == 1 && b != '0') { /* the init's word that a startContainer hook failed; it exits */
                /* the why follows in the same write: the container's text, printable only */
                char why[1024];
                ssize_t w = read(fifo, why, sizeof why - 1);
                why[w > 0 ? w : 0] = '\0';
                for (char *q = why; *q; q++)
                    if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
                        *q = ' ';
                mxc_err(e, MXC_E_BACKEND_ERROR, "a startContainer hook failed: %s; the container is stopped",
                        *why ? why : "(no reason given)");
                goto out;
            }
            if (n == 1)
                break;
            if (n < 0 && errno == EAGAIN)
                continue;
            mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init closed the exec fifo without starting");
            goto out;
        }
        if (p[1].revents) {
            mxc_err(e, MXC_E_ALREADY_STOPPED, "the container's init exited before start");
            goto out;
        }
    }
    unlinkat(dirfd, OCI_FIFO, 0);
    hooks_warn(dirfd, &s, OCI_HOOK_POSTSTART, "running");
    rc = 0;
out:
    if (fifo >= 0)
        close(fifo);
    if (pfd >= 0)
        close(pfd);
    close(dirfd);
    oci_state_free(&s);
    return rc;
}

json_t *oci_query(int rootfd, const char *id, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    if (load(rootfd, id, &dirfd, &s, e) < 0)
        return NULL;
    oci_status st = oci_state_status(dirfd, &s);
    json_t *j = oci_state_json(&s, st);
    oci_cgroup cg;
    if (st != OCI_STOPPED && oci_cgroup_load(dirfd, &cg) && oci_cgroup_frozen(&cg)) /* the spec's "paused" */
        json_object_set_new(j, "status", json_string("paused"));
    close(dirfd);
    oci_state_free(&s);
    return j;
}

static ino_t pidns_of(pid_t pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)pid);
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

int oci_kill(int rootfd, const char *id, int sig, bool all, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    if (load(rootfd, id, &dirfd, &s, e) < 0)
        return -1;
    int rc = -1;
    int pfd = oci_state_status(dirfd, &s) == OCI_STOPPED ? -1 : pidfd_of(&s);
    if (pfd < 0 && all) {
        rc = 0; /* --all signals every process there is: none (runc answers the same) */
        goto out;
    }
    if (pfd < 0) {
        mxc_err(e, MXC_E_ALREADY_STOPPED, "container not running");
        goto out;
    }
    oci_cgroup cg;
    if (all && oci_cgroup_load(dirfd, &cg))
        oci_cgroup_signal(&cg, sig); /* every process in the container's cgroup (a frozen one thawed for SIGKILL) */
    if (all && sig != SIGKILL) {
        /* every process of the container's PID namespace (SIGKILL to its init takes them all) */
        ino_t ns = pidns_of(s.pid);
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (ns && d && (de = readdir(d))) {
            pid_t p = (pid_t)atoi(de->d_name);
            if (p <= 0 || p == s.pid || pidns_of(p) != ns)
                continue;
            int f = (int)syscall(SYS_pidfd_open, p, 0);
            if (f >= 0 && pidns_of(p) == ns)
                syscall(SYS_pidfd_send_signal, f, sig, NULL, 0);
            if (f >= 0)
                close(f);
        }
        if (d)
            closedir(d);
    }
    if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0) {
        mxc_err_os(e, errno == ESRCH ? MXC_E_ALREADY_STOPPED : MXC_E_BACKEND_ERROR, "oci.kill", errno, NULL,
                   errno == ESRCH ? "container not running" : "kill");
        goto out;
    }
    rc = 0;
out:
    if (pfd >= 0)
        close(pfd);
    close(dirfd);
    oci_state_free(&s);
    return rc;
}

static void finish(int rootfd, const char *id, const oci_state *s)
{
    int cfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    oci_cgroup cg;
    if (cfd >= 0 && oci_cgroup_load(cfd, &cg))
        oci_cgroup_remove(&cg, false); /* what is left in it killed, its leaf removed */
    if (cfd >= 0)
        close(cfd);
    if (s->claim[0]) {
        char dir[PATH_MAX];
        int fd = openat(rootfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            fd_path(fd, dir, sizeof dir);
            close(fd);
            mxc_idrange_release_owned(s->claim, dir, s->pid);
            /* a create killed after its state was written but before the claim named its init:
             * the claim still names the dead create */
            mxc_idrange_release_dead(dir);
        }
    }
    oci_store_remove(rootfd, id);
}

int oci_delete(int rootfd, const char *id, bool force, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    if (load(rootfd, id, &dirfd, &s, e) < 0) {
        /* a directory without its state (a create killed half way): --force removes it */
        if (force && oci_valid_id(id) && e->code != MXC_E_MALFORMED_ID) {
            mxc_error_clear(e);
            int cfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            oci_cgroup hcg;
            if (cfd >= 0 && oci_cgroup_load(cfd, &hcg)) /* its cgroup, if it got that far */
                oci_cgroup_remove(&hcg, false);
            if (cfd >= 0) { /* its range, if it got that far: the claim names the dead create */
                char dir[PATH_MAX];
                fd_path(cfd, dir, sizeof dir);
                mxc_idrange_release_dead(dir);
                close(cfd);
            }
            oci_store_remove(rootfd, id);
            return 0;
        }
        return -1;
    }
    oci_status status = oci_state_status(dirfd, &s);
    oci_cgroup cg;
    bool has_cg = oci_cgroup_load(dirfd, &cg);
    if (status != OCI_STOPPED) {
        /* runc's rule: a created container (its process never ran) is deleted without --force */
        if (!force && status != OCI_CREATED) {
            mxc_err(e, MXC_E_ALREADY_STARTED, "cannot delete container %s that is not stopped: %s", id,
                    oci_status_name(status));
            close(dirfd);
            oci_state_free(&s);
            return -1;
        }
        int pfd = pidfd_of(&s);
        if (pfd >= 0) {
            syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
            if (has_cg)
                oci_cgroup_signal(&cg, SIGKILL); /* a paused container is thawed to die */
            /* readable once the init is gone, and with it (PID namespace) every process of the container */
            struct pollfd p = {pfd, POLLIN, 0};
            while (poll(&p, 1, -1) < 0 && errno == EINTR)
                ;
            close(pfd);
        }
    }
    hooks_warn(dirfd, &s, OCI_HOOK_POSTSTOP, "stopped");
    close(dirfd);
    finish(rootfd, id, &s);
    oci_state_free(&s);
    return 0;
}

static volatile pid_t run_child;

static void forward(int sig)
{
    if (run_child > 0)
        kill(run_child, sig);
}

int oci_run(int rootfd, const char *id, const char *bundle, const char *pid_file, const char *console, int preserve,
            bool detach, bool keep, int *status, mxc_error *e)
{
    pid_t child;
    *status = 0;
    /* a terminal and no --console-socket: mxc-oci holds the master and relays it (relay.h) */
    oci_relay relay = {.listen_fd = -1, .master = -1};
    if (!detach && !console && oci_relay_wanted(bundle)) {
        if (oci_relay_open(&relay, e) < 0) {
            oci_relay_close(&relay);
            return -1;
        }
        console = relay.path;
    }
    if (oci_create(rootfd, id, bundle, pid_file, console, preserve, !detach, &child, e) < 0) {
        oci_relay_close(&relay);
        return -1;
    }
    if (relay.listen_fd >= 0 && oci_relay_receive(&relay, e) < 0) {
        mxc_error dummy = {0};
        oci_delete(rootfd, id, true, &dummy);
        waitpid(child, NULL, 0);
        oci_relay_close(&relay);
        return -1;
    }
    if (!detach) {
        run_child = child;
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            sigaction(sigs[i], &(struct sigaction){.sa_handler = forward, .sa_flags = SA_RESTART}, NULL);
    }
    if (oci_start(rootfd, id, e) < 0) {
        mxc_error dummy = {0};
        oci_delete(rootfd, id, true, &dummy);
        if (!detach)
            waitpid(child, NULL, 0);
        oci_relay_close(&relay);
        return -1;
    }
    if (detach)
        return 0;
    if (relay.master >= 0) {
        int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
        if (pidfd >= 0) {
            oci_relay_copy(&relay, pidfd);
            close(pidfd);
        }
        oci_relay_close(&relay);
    }
    int ws;
    while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
        ;
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    if (keep)
        return 0;
    mxc_error dummy = {0};
    oci_delete(rootfd, id, true, &dummy);
    return 0;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "id")),
                  json_string_value(json_object_get(*(json_t *const *)b, "id")));
}

/* in the order of their ids, as runc lists them (a directory's order is the filesystem's) */
static void sort_by_id(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v = n ? malloc(n * sizeof *v) : NULL;
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, by_id);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

json_t *oci_list(int rootfd)
{
    json_t *out = json_array();
    int fd = dup(rootfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!oci_valid_id(de->d_name))
            continue;
        mxc_error e = {0};
        json_t *j = oci_query(rootfd, de->d_name, &e);
        if (j)
            json_array_append_new(out, j);
        mxc_error_clear(&e);
    }
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    sort_by_id(out);
    return out;
}

int oci_signal(const char *s)
{
    static const struct { const char *name; int sig; } sigs[] = {
        {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"ILL", SIGILL}, {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},
        {"IOT", SIGIOT}, {"BUS", SIGBUS}, {"FPE", SIGFPE}, {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},
        {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT},
        {"CHLD", SIGCHLD}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
        {"TTOU", SIGTTOU}, {"URG", SIGURG}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM},
        {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO}, {"POLL", SIGPOLL}, {"PWR", SIGPWR}, {"SYS", SIGSYS},
    };
    if (!s || !*s)
        return -1;
    char *end;
    long n = strtol(s, &end, 10);
    if (!*end)
        return n >= 0 && n < NSIG ? (int)n : -1; /* 0: whether it is there (kill(2)'s) */
    const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (!strcasecmp(name, sigs[i].name))
            return sigs[i].sig;
    return -1;
}

json_t *oci_features(void)
{
    /* what a container may hold (config.c's table); what a config may name and none holds, said */
    json_t *caps = oci_caps_names(true), *withheld = oci_caps_names(false);
    char said[256] = "";
    size_t i;
    json_t *n;
    json_array_foreach(withheld, i, n) {
        size_t len = strlen(said);
        snprintf(said + len, sizeof said - len, "%s%s", i ? ", " : "", json_string_value(n));
    }
    json_decref(withheld);
    size_t len = strlen(said);
    snprintf(said + len, sizeof said - len, ": accepted in config.json, never held (no file capability can be made)");
    return json_pack("{s:s, s:s, s:[], s:[ssssssssssssss], s:{s:[sssssss], s:o, s:{s:b, s:b, s:b}, s:{s:b}, "
                     "s:{s:b}, s:{s:b}, s:{s:b}, s:{s:{s:b}}}, s:{s:s, s:s, s:s}}",
                     "ociVersionMin", "1.0.0", "ociVersionMax", OCI_SPEC_VERSION, "hooks", "mountOptions", "ro", "rw",
                     "nosuid", "suid", "nodev", "dev", "noexec", "exec", "bind", "rbind", "private", "rprivate",
                     "noatime", "strictatime", "linux", "namespaces", "pid", "network", "mount", "ipc", "uts",
                     "user", "cgroup", "capabilities", caps, "cgroup", "v1", 1, "v2", 1, "systemd", 0, "seccomp",
                     "enabled", 0, "apparmor", "enabled", 1, "selinux", "enabled", 0, "intelRdt", "enabled", 0,
                     "mountExtensions", "idmap", "enabled", 0, "annotations", "io.github.mxc.runtime", "mxc-oci",
                     "io.github.mxc.guarantee", "no container process is host root",
                     "io.github.mxc.capabilities.withheld", said);
}

json_t *oci_spec(void)
{
    return json_pack(
        "{s:s, s:{s:b, s:{s:i, s:i}, s:[s], s:[s, s], s:s, s:{s:[sss], s:[sss], s:[sss]}, s:[{s:s, s:i, s:i}], "
        "s:b}, s:{s:s, s:b}, s:s, s:["
        "{s:s, s:s, s:s}, {s:s, s:s, s:s, s:[ssss]}, {s:s, s:s, s:s, s:[ssssss]}, "
        "{s:s, s:s, s:s, s:[sssss]}, {s:s, s:s, s:s, s:[sss]}, {s:s, s:s, s:s, s:[ssss]}], "
        "s:{s:{s:[{s:b, s:s}]}, s:[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}], s:[sssssssss], s:[ssssss]}}",
        "ociVersion", OCI_SPEC_VERSION, "process", "terminal", 1, "user", "uid", 0, "gid", 0, "args", "sh", "env",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", "cwd", "/",
        "capabilities", "bounding", "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "effective",
        "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "permitted", "CAP_AUDIT_WRITE", "CAP_KILL",
        "CAP_NET_BIND_SERVICE", "rlimits", "type", "RLIMIT_NOFILE", "hard", 1024, "soft", 1024, "noNewPrivileges", 1,
        "root", "path", "rootfs", "readonly", 1, "hostname", "mxc", "mounts",
        "destination", "/proc", "type", "proc", "source", "proc",
        "destination", "/dev", "type", "tmpfs", "source", "tmpfs", "options", "nosuid", "strictatime", "mode=755",
        "size=65536k",
        "destination", "/dev/pts", "type", "devpts", "source", "devpts", "options", "nosuid", "noexec", "newinstance",
        "ptmxmode=0666", "mode=0620", "gid=5",
        "destination", "/dev/shm", "type", "tmpfs", "source", "shm", "options", "nosuid", "noexec", "nodev",
        "mode=1777", "size=65536k",
        "destination", "/dev/mqueue", "type", "mqueue", "source", "mqueue", "options", "nosuid", "noexec", "nodev",
        "destination", "/sys", "type", "sysfs", "source", "sysfs", "options", "nosuid", "noexec", "nodev", "ro",
        "linux", "resources", "devices", "allow", 0, "access", "rwm", "namespaces", "type", "pid", "type", "network", "type", "ipc", "type", "uts", "type", "mount",
        "maskedPaths", "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "readonlyPaths", "/proc/bus",
        "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/proc/scsi");
}

/* The namespaces of pid that are not the caller's own (setns joins only those: the host's
 * would need capabilities over the host's user namespace, which the joined one lacks). */
static int foreign_namespaces(pid_t pid, bool *host_net)
{
    static const struct { const char *name; int flag; } ns[] = {
        {"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS}, {"pid", CLONE_NEWPID}, {"uts", CLONE_NEWUTS},
        {"ipc", CLONE_NEWIPC}, {"net", CLONE_NEWNET}, {"cgroup", CLONE_NEWCGROUP},
    };
    int flags = 0;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        char a[64], b[64];
        struct stat sa, sb;
        snprintf(a, sizeof a, "/proc/self/ns/%s", ns[i].name);
        snprintf(b, sizeof b, "/proc/%d/ns/%s", (int)pid, ns[i].name);
        if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
            return -1;
        if (sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev)
            flags |= ns[i].flag;
    }
    *host_net = !(flags & CLONE_NEWNET);
    return flags;
}

static size_t read_map(pid_t pid, const char *file, oci_idmap *m)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    FILE *f = fopen(path, "re");
    size_t n = 0;
    while (f && n < OCI_MAX_IDMAPS && fscanf(f, "%u %u %u", &m[n].cid, &m[n].hid, &m[n].n) == 3)
        n++;
    if (f)
        fclose(f);
    return n;
}

/* The container's config as create read it: the copy in its state directory (the bundle on the
 * host may have changed since; exec's process and seccomp profile come from what the container
 * was made with).  NULL when unreadable. */
static json_t *saved_config(int dirfd)
{
    int fd = openat(dirfd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_t *doc = fd >= 0 ? oci_json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    return doc;
}

/* runc's rule for exec's AppArmor profile: --apparmor, else the process's own, else the container's. */
static int exec_apparmor(int dirfd, json_t *proc, const oci_exec_opts *o, mxc_error *e)
{
    const char *own = json_string_value(json_object_get(proc, "apparmorProfile"));
    int rc = 0;
    if (o->apparmor && *o->apparmor)
        rc = json_object_set_new(proc, "apparmorProfile", json_string(o->apparmor));
    else if (!own || !*own) {
        json_t *doc = saved_config(dirfd);
        json_t *ctr = json_object_get(json_object_get(doc, "process"), "apparmorProfile");
        rc = json_is_string(ctr) ? json_object_set(proc, "apparmorProfile", ctr) : 0;
        json_decref(doc);
    }
    return rc < 0 ? mxc_err(e, MXC_E_BACKEND_ERROR, "process.apparmorProfile: out of memory") : 0;
}

/* The process to exec: --process FILE, or the container's own process with exec's flags. */
static json_t *exec_process(int dirfd, const oci_state *s, const oci_exec_opts *o, mxc_error *e)
{
    json_error_t je;
    if (o->process_file) {
        int fd = open(o->process_file, O_RDONLY | O_CLOEXEC);
        json_t *p = fd >= 0 ? oci_json_loadfd(fd, JSON_REJECT_DUPLICATES, &je) : NULL;
        if (fd >= 0)
            close(fd);
        if (!p)
            mxc_err(e, MXC_E_MALFORMED_REQUEST, "--process %s: %s", o->process_file,
                    fd < 0 ? strerror(errno) : je.text);
        return p;
    }
    if (o->nargs == 0) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "exec: no command: give ARGS or --process FILE");
        return NULL;
    }
    json_t *doc = saved_config(dirfd);
    json_t *p = json_deep_copy(json_object_get(doc, "process"));
    json_decref(doc);
    if (!json_is_object(p)) {
        json_decref(p);
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "exec: the container's config.json in %s has no process", s->bundle);
        return NULL;
    }
    json_t *args = json_array();
    for (size_t i = 0; i < o->nargs; i++)
        json_array_append_new(args, json_string(o->args[i]));
    json_object_set_new(p, "args", args);
    json_object_set_new(p, "terminal", json_boolean(o->tty));
    if (o->cwd)
        json_object_set_new(p, "cwd", json_string(o->cwd));
    json_t *env = json_object_get(p, "env");
    if (!json_is_array(env))
        json_object_set_new(p, "env", env = json_array());
    for (size_t i = 0; i < o->nenv; i++)
        json_array_append_new(env, json_string(o->env[i]));
    json_t *user = json_object_get(p, "user");
    if (!json_is_object(user))
        json_object_set_new(p, "user", user = json_object());
    if (o->user) {
        unsigned uid, gid;
        int n = sscanf(o->user, "%u:%u", &uid, &gid);
        if (n < 1 || strspn(o->user, "0123456789:") != strlen(o->user)) {
            json_decref(p);
            mxc_err(e, MXC_E_MALFORMED_REQUEST, "--user %s: give UID[:GID] (names are not looked up)", o->user);
            return NULL;
        }
        json_object_set_new(user, "uid", json_integer(uid));
        if (n == 2)
            json_object_set_new(user, "gid", json_integer(gid));
    }
    if (o->ngids) {
        json_t *g = json_object_get(user, "additionalGids");
        if (!json_is_array(g))
            json_object_set_new(user, "additionalGids", g = json_array());
        for (size_t i = 0; i < o->ngids; i++)
            json_array_append_new(g, json_integer(strtoll(o->gids[i], NULL, 10)));
    }
    if (o->ncaps) {
        json_t *caps = json_object_get(p, "capabilities");
        if (!json_is_object(caps))
            json_object_set_new(p, "capabilities", caps = json_object());
        const char *sets[] = {"bounding", "effective", "permitted"};
        for (size_t k = 0; k < 3; k++) {
            json_t *set = json_object_get(caps, sets[k]);
            if (!json_is_array(set))
                json_object_set_new(caps, sets[k], set = json_array());
            for (size_t i = 0; i < o->ncaps; i++)
                json_array_append_new(set, json_string(o->caps[i]));
        }
    }
    if (o->no_new_privs)
        json_object_set_new(p, "noNewPrivileges", json_true());
    return p;
}

int oci_exec(int rootfd, const char *id, const oci_exec_opts *o, int *status, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    *status = 0;
    if (load(rootfd, id, &dirfd, &s, e) < 0)
        return -1;
    int rc = -1, pfd = -1, sv[2] = {-1, -1}, console = -1, proc_fd = -1;
    oci_relay relay = {.listen_fd = -1, .master = -1};
    oci_seccomp sc = {0};
    oci_config pc;
    memset(&pc, 0, sizeof pc);
    json_t *proc = NULL;
    pid_t a = -1, b = -1;
    if (oci_state_status(dirfd, &s) == OCI_STOPPED || (pfd = pidfd_of(&s)) < 0) {
        mxc_err(e, MXC_E_ALREADY_STOPPED, "cannot exec in a stopped container");
        goto out;
    }
    oci_cgroup cg;
    bool has_cg = oci_cgroup_load(dirfd, &cg);
    if (has_cg && !o->ignore_paused && oci_cgroup_frozen(&cg)) { /* runc's wording */
        mxc_err(e, MXC_E_BACKEND_ERROR, "cannot exec in a paused container (use --ignore-paused to override)");
        goto out;
    }
    bool host_net;
    int flags = foreign_namespaces(s.pid, &host_net);
    if (flags < 0 || !(flags & CLONE_NEWUSER) || !(flags & CLONE_NEWPID)) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "cannot read the container's namespaces");
        goto out;
    }
    if (!(proc = exec_process(dirfd, &s, o, e)) || exec_apparmor(dirfd, proc, o, e) < 0 ||
        oci_mxcnet_exec_env(dirfd, proc, e) < 0 || oci_process_parse(proc, host_net ? 0 : CLONE_NEWNET, &pc, e) < 0 ||
        oci_apparmor_usable(pc.apparmor_profile, "process.apparmorProfile", e) < 0)
        goto out;
    /* the host's /proc for the AppArmor exec attribute, before the container's namespaces are joined */
    if (pc.apparmor_profile && (proc_fd = oci_apparmor_proc()) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.exec", -proc_fd, NULL, "process.apparmorProfile: the host's /proc");
        goto out;
    }
    /* the container's own seccomp profile binds its exec'd processes too */
    {
        json_t *doc = saved_config(dirfd);
        int r = oci_seccomp_compile_cached(rootfd, json_object_get(json_object_get(doc, "linux"), "seccomp"), &sc, e);
        json_decref(doc);
        if (r < 0)
            goto out;
    }
    oci_idmap um[OCI_MAX_IDMAPS], gm[OCI_MAX_IDMAPS];
    size_t nu = read_map(s.pid, "uid_map", um), ng = read_map(s.pid, "gid_map", gm);
    unsigned h;
    bool mapped = oci_map_id(um, nu, pc.uid, &h) && oci_map_id(gm, ng, pc.gid, &h);
    for (size_t i = 0; mapped && i < pc.ngids; i++)
        mapped = oci_map_id(gm, ng, pc.gids[i], &h);
    if (!mapped) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "process.user %u:%u (or an additional gid) is not mapped in the "
                "container's user namespace", pc.uid, pc.gid);
        goto out;
    }
    /* a terminal, not detached, no --console-socket: mxc-oci relays the pty (relay.h) */
    if (pc.terminal && !o->console && !o->detach && oci_relay_open(&relay, e) < 0)
        goto out;
    if ((console = console_connect(relay.listen_fd >= 0 ? relay.path : o->console, pc.terminal, e)) < 0 && e->code)
        goto out;
    if (oci_check_preserved(o->preserve, e) < 0)
        goto out;
    /* the exec'd process is re-parented to us when its first parent (the one that joins) exits */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "socketpair");
        goto out;
    }
    fflush(NULL);
    a = fork();
    if (a == 0) {
        close(sv[0]);
        /* not dumpable before anything of the container can see us (CVE-2019-5736: /proc/PID/exe) */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        char msg[256];
        mxc_error ce = {0};
        if (has_cg && oci_cgroup_enter(&cg, 0, &ce) < 0) { /* its cgroup before its cgroup namespace */
            snprintf(msg, sizeof msg, "E%.250s", ce.message);
            send(sv[1], msg, strlen(msg), MSG_NOSIGNAL);
            _exit(1);
        }
        if (setns(pfd, flags) < 0) {
            snprintf(msg, sizeof msg, "Ejoining the container's namespaces: %s", strerror(errno));
            send(sv[1], msg, strlen(msg), MSG_NOSIGNAL);
            _exit(1);
        }
        pid_t c = fork();
        if (c == 0)
            oci_exec_main(&pc, &sc, sv[1], console, o->preserve, host_net, proc_fd);
        if (c < 0)
            snprintf(msg, sizeof msg, "Efork: %s", strerror(errno));
        else
            snprintf(msg, sizeof msg, "P%d", (int)c);
        send(sv[1], msg, strlen(msg), MSG_NOSIGNAL);
        _exit(c < 0);
    }
    close(sv[1]);
    sv[1] = -1;
    if (a < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "fork");
        goto out;
    }
    char msg[1100];
    ssize_t n = recv(sv[0], msg, sizeof msg - 1, 0);
    msg[n > 0 ? n : 0] = '\0';
    waitpid(a, NULL, 0);
    a = -1;
    if (n <= 1 || msg[0] != 'P') {
        mxc_err(e, MXC_E_BACKEND_ERROR, "%s", n > 1 && msg[0] == 'E' ? msg + 1 : "exec: the joining process died");
        goto out;
    }
    b = (pid_t)atoi(msg + 1);
    n = recv(sv[0], msg, sizeof msg - 1, 0); /* EOF: the exec happened (the socket is close-on-exec) */
    msg[n > 0 ? n : 0] = '\0';
    if (n > 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "%s", msg[0] == 'E' ? msg + 1 : "exec: protocol error");
        waitpid(b, NULL, 0);
        b = -1;
        goto out;
    }
    if (relay.listen_fd >= 0 && oci_relay_receive(&relay, e) < 0)
        goto out;
    if (o->pid_file && write_pid_file(o->pid_file, b, e) < 0)
        goto out;
    rc = 0;
    if (relay.master >= 0) {
        int bfd = (int)syscall(SYS_pidfd_open, b, 0);
        if (bfd >= 0) {
            oci_relay_copy(&relay, bfd);
            close(bfd);
        }
        oci_relay_close(&relay);
    }
    if (!o->detach) {
        run_child = b;
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            sigaction(sigs[i], &(struct sigaction){.sa_handler = forward, .sa_flags = SA_RESTART}, NULL);
        int ws;
        while (waitpid(b, &ws, 0) < 0 && errno == EINTR)
            ;
        *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    }
    b = -1;
out:
    if (a > 0)
        waitpid(a, NULL, 0);
    if (b > 0) {
        kill(b, SIGKILL);
        waitpid(b, NULL, 0);
    }
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close(sv[i]);
    if (pfd >= 0)
        close(pfd);
    if (console >= 0)
        close(console);
    if (proc_fd >= 0)
        close(proc_fd);
    oci_relay_close(&relay);
    oci_seccomp_free(&sc);
    json_decref(proc);
    oci_config_free(&pc);
    close(dirfd);
    oci_state_free(&s);
    return rc;
}

json_t *oci_ps(int rootfd, const char *id, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    if (load(rootfd, id, &dirfd, &s, e) < 0)
        return NULL;
    json_t *out = NULL;
    ino_t ns = oci_state_status(dirfd, &s) == OCI_STOPPED ? 0 : pidns_of(s.pid);
    if (!ns) { /* stopped: its PID namespace went with its init, nothing is left (runc answers the same) */
        out = json_array();
        goto done;
    }
    /* every process of the container's cgroup (or, without one, of its PID namespace), by host pid, the init
     * first */
    oci_cgroup cg;
    json_t *in_cg = oci_cgroup_load(dirfd, &cg) ? oci_cgroup_pids(&cg) : NULL;
    if (in_cg) {
        out = json_array();
        json_array_append_new(out, json_integer(s.pid));
        size_t k;
        json_t *p;
        json_array_foreach(in_cg, k, p)
            if (json_integer_value(p) != s.pid)
                json_array_append(out, p);
        json_decref(in_cg);
        goto done;
    }
    out = json_array();
    json_array_append_new(out, json_integer(s.pid));
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        pid_t p = (pid_t)atoi(de->d_name);
        if (p > 0 && p != s.pid && pidns_of(p) == ns)
            json_array_append_new(out, json_integer(p));
    }
    if (d)
        closedir(d);
done:
    close(dirfd);
    oci_state_free(&s);
    return out;
}
