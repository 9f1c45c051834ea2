/* lifecycle.c — see lifecycle.h. */
#include "lifecycle.h"
#include "fault.h"
#include "apparmor.h"
#include "cgroup.h"
#include "devices.h"
#include "front.h"

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
#include "cleanup.h"
#include "config.h"
#include "fdio.h"
#include "hooks.h"
#include "init.h"
#include "mounttree.h"
#include "mountmap.h"
#include "ocijson.h"
#include "overlay.h"
#include "applied.h"
#include "mxcnet.h"
#include "notify.h"
#include "procs.h"
#include "relay.h"
#include "stdiorelay.h"
#include "rootfs.h"
#include "rootless.h"
#include "setupops.h"
#include "sockmsg.h"
#include "store.h"
#include "userns.h"

static int pidfd_of(const oci_state *s)
{
    int fd = mxc_pidfd_of(s->pid, s->start);
    return fd < 0 ? -1 : fd;
}

static int send_msg(int sock, char tag, int fd)
{
    return mxc_sockmsg_send_tag(sock, tag, fd);
}

/* A detached sysfs of the network namespace mxc-oci is in (a pod's, joined by path: the init's user
 * namespace does not own it, so the init could not mount it), read-only with the mount's flags. */
static int sysfs_tree(const oci_mount *m)
{
    return mxc_fresh_fs(m->type, NULL, (unsigned)m->attr_set); /* sysfs, or a joined IPC namespace's mqueue */
}

/* The container's /dev/shm (config.c shm_by_parent): a detached tmpfs of the host's user namespace with
 * the mount's options and flags, its root owned by the container's root (its ids on the host).  Host
 * root's ids are mapped in it (runc's seccomp agent makes directories there through /proc/PID/root);
 * the container's root owns it but cannot remount or resize it (CAP_SYS_ADMIN of the host's user
 * namespace), nor chown into ids outside its map.  The tree, or -errno. */
static int shm_tree(const oci_config *c, const oci_mount *m)
{
    unsigned uid, gid;
    if (!oci_map_id(c->uidmap, c->nuidmap, 0, &uid) || !oci_map_id(c->gidmap, c->ngidmap, 0, &gid))
        return -EOVERFLOW; /* the container's root has no host ids */
    char kv[32][256], ids[2][16];
    const char *opts[2 * 32 + 8];
    size_t n = 0;
    if (m->source && m->source[0])
        opts[n++] = "source", opts[n++] = m->source;
    for (size_t i = 0; i < m->nfsopt && i < 32; i++) {
        snprintf(kv[i], sizeof kv[i], "%s", m->fsopt[i]);
        char *eq = strchr(kv[i], '=');
        if (eq)
            *eq++ = '\0';
        opts[n++] = kv[i], opts[n++] = eq;
    }
    snprintf(ids[0], sizeof ids[0], "%u", uid);
    snprintf(ids[1], sizeof ids[1], "%u", gid);
    opts[n++] = "uid", opts[n++] = ids[0], opts[n++] = "gid", opts[n++] = ids[1];
    opts[n] = NULL;
    return mxc_fresh_fs("tmpfs", opts, (unsigned)m->attr_set);
}

/* A detached copy of the tree at fd, its flags set before anyone sees it. */
static int tree_of(int fd, const char *path, bool recursive, uint64_t set, uint64_t clr, int userns)
{
    mxc_tree_attr a = {.set = set, .clr = clr, .propagation = MS_PRIVATE, .idmap = userns >= 0, .userns_fd = userns,
                       .recursive = recursive};
    return mxc_tree_clone(fd, path, &a);
}

/* oci_cgroup_create's recorder: the cgroup's directories written into the
 * container's range claim before they exist, for the sweeper (idrange.h). */
static int record_in_claim(const char *const *dirs, size_t n, void *claim)
{
    return mxc_idrange_set_cgroups(claim, dirs, n);
}

static int write_pid_file(const char *path, pid_t pid, mxc_error *e)
{
    char tmp[PATH_MAX + 16], text[32];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int len = snprintf(text, sizeof text, "%d", (int)pid);
    int rc = mxc_replace_at_unsynced(AT_FDCWD, path, tmp, text, (size_t)len, 0644); /* a live pid: fdio.h */
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.pidfile", -rc, NULL, "cannot write the pid file %s", path);
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
    return mxc_sockmsg_send_text(sock, tag, text);
}

/* A create's state, carried through its steps (oci_create): what each step made, for the next
 * steps and for create_rollback, which undoes what was made when a later step fails. */
typedef struct {
    int rootfd;
    const char *id, *bundle, *pid_file, *console_path;
    int preserve;
    int cgroup;          /* the backend its cgroup is given (cgroup.h): none, or the host's */
    bool rootless;       /* run by a non-root caller (rootless.h), judged once before the clone */
    oci_config c;
    int bundle_fd, dir_fd, rootfs_fd, fifo_fd, sock, init_sock, userns, console;
    int *src;            /* per mount: a bind's source (O_PATH) or -1 */
    char **writable;     /* the binds' host paths the container can write (the range claim's) */
    char **canon;        /* rootless: per mount, a bind's source resolved (the init re-resolves it) */
    int xdev_src[16];    /* rootless: per linux.devices entry, the host's node checked (O_PATH), or -1 */
    size_t nwritable;
    char claim[MXC_IDRANGE_NAME_MAX];
    bool made_dir;
    char dir_path[PATH_MAX];
    pid_t child;
    bool made_cg;
    oci_cgroup cg;       /* the container's cgroup (cgroup.c) */
    oci_seccomp sc;
    oci_mxcnet net;      /* io.mxc.network (mxcnet.h) */
    oci_hooks hk;
    char *hstate;        /* the hooks' state: set once the hooks began */
    int own_ns[4];       /* the runtime's namespaces, to return to after the clone */
    size_t nown;
    bool host_net;
    int pod_userns, pod_pidns; /* a pod's user and PID namespaces joined by path (opened once), or -1 */
    int join_fd[6];      /* per c.join[]: the namespace opened once (check_ns_paths), the one setns enters */
    size_t njoin_fd;
    const char *implied; /* the path of the namespace whose owner is the pod's user namespace joined (implied_pod) */
    unsigned huid, hgid; /* the process's ids on the host */
    char ping_range[32]; /* net.ipv4.ping_group_range as the container's own gids (own_ping_range) */
    oci_state st;
    oci_stdio *io;       /* without process.terminal: what the init gets for mxc-oci's stdio that are terminals */
    oci_stdio own_io;    /* io when the caller relays none (a detached process) */
    bool attached;       /* the caller relays io (run, not detached) */
} create_ctx;

static void ctx_close(create_ctx *x)
{
    int *fds[] = {&x->bundle_fd, &x->dir_fd, &x->rootfs_fd, &x->fifo_fd,     &x->sock,
                  &x->init_sock, &x->userns, &x->console,   &x->pod_userns, &x->pod_pidns};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    for (size_t i = 0; i < x->njoin_fd; i++)
        close(x->join_fd[i]);
    x->njoin_fd = 0;
    for (size_t i = 0; x->src && i < x->c.nmounts; i++)
        if (x->src[i] >= 0)
            close(x->src[i]);
    free(x->src);
    x->src = NULL;
}

/* A failed create undone: the init killed, its cgroup, directory and range claim gone. */
static void create_fail(create_ctx *x)
{
    if (x->child > 0) {
        kill(x->child, SIGKILL);
        waitpid(x->child, NULL, 0);
    }
    ctx_close(x);
    if (x->made_cg)
        oci_cgroup_remove(&x->cg, true);
    if (x->made_dir)
        oci_store_remove(x->rootfd, x->id);
    if (x->claim[0])
        mxc_idrange_release(x->claim);
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

/* Every namespace joined by path checked before anything is made (open_ns_path), and kept: the
 * descriptor compared (pod proof) is the one setns enters, the path never opened again. */
static int check_ns_paths(create_ctx *x, mxc_error *e)
{
    for (size_t i = 0; i < x->c.njoin; i++) {
        int fd = open_ns_path(&x->c, i, e);
        if (fd < 0)
            return -1;
        x->join_fd[x->njoin_fd++] = fd;
    }
    return 0;
}

static bool on_host_network(const oci_config *c)
{
    return in_runtime_ns(c, CLONE_NEWNET, "net");
}

/* One sysctl (key dotted) written through the host's /proc: /proc/sys/net and the IPC keys answer for
 * the namespace of the process that opens them (mxc-oci's, now a pod's).  0, or an errno. */
static int write_proc_sys(const char *key, const char *val)
{
    char path[256];
    snprintf(path, sizeof path, "/proc/sys/%s", key);
    for (char *q = path + 10; *q; q++)
        if (*q == '.')
            *q = '/';
    int f = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    size_t len = strlen(val);
    int err = f < 0 ? errno : write(f, val, len) != (ssize_t)len ? errno : 0;
    if (f >= 0)
        close(f);
    return err;
}

/* A linux.sysctl of a namespace joined by path (a pod's): written by mxc-oci, in that namespace
 * now (the init's user namespace does not own it), through the host's /proc. */
static int write_joined_sysctls(const oci_config *c, mxc_error *e)
{
    for (size_t i = 0; i < c->nsysctl; i++) {
        if (c->ns_flags & oci_sysctl_ns(c->sysctl[i][0]))
            continue; /* the init writes its own namespace's (init.c) */
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
        int err = write_proc_sys(c->sysctl[i][0], val);
        if (err)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.sysctl", err, NULL, "linux.sysctl %s = %s in the pod's "
                              "namespace: %s", c->sysctl[i][0], c->sysctl[i][1], strerror(err));
    }
    return 0;
}

/* A pod's network namespace (joined by path, not the host's): its own net.ipv4.ip_unprivileged_port_start
 * set to 0 when the container may hold CAP_NET_BIND_SERVICE.  Its root's capability counts only in a
 * network namespace its user namespace owns, and a pod's belongs to another (the host's, for the CRI's),
 * so nginx on :80 could not bind; containerd's enable_unprivileged_ports writes the same.  Every process
 * of the pod's namespace may then bind low ports (a pod is one trust unit: docs/oci.md).  Written by
 * mxc-oci, now in that namespace (enter_joined), never in the host's (host_net); a value the config's
 * linux.sysctl names is the config's. */
static int pod_low_ports(const create_ctx *x, mxc_error *e)
{
    const oci_config *c = &x->c;
    const char *key = "net.ipv4.ip_unprivileged_port_start";
    bool joined = false;
    for (size_t i = 0; i < c->njoin; i++)
        joined |= c->join[i].flag == CLONE_NEWNET;
    uint64_t caps = c->cap_bounding | c->cap_effective | c->cap_permitted | c->cap_inheritable | c->cap_ambient;
    if (!joined || x->host_net || (c->ns_flags & CLONE_NEWNET) || !(caps & (1ull << CAP_NET_BIND_SERVICE)))
        return 0;
    for (size_t i = 0; i < c->nsysctl; i++)
        if (!strcmp(c->sysctl[i][0], key))
            return 0;
    int err = write_proc_sys(key, "0");
    if (err)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.sysctl", err, NULL, "%s = 0 in the pod's network namespace "
                          "(CAP_NET_BIND_SERVICE of the container): %s", key, strerror(err));
    return 0;
}

/* net.ipv4.ping_group_range "0 2147483647" (every gid: containerd's enable_unprivileged_icmp) read
 * as the container's own gids, the one interval its gid map gives it (in its ids: the init writes
 * them in its own namespace, write_joined_sysctls maps them to the host's in a pod's); refused when
 * its map is not one interval (a range across extents would name gids not its own).  buf (sz
 * bytes, the create's) holds the value. */
static int own_ping_range(oci_config *c, char *buf, size_t sz, mxc_error *e)
{
    for (size_t i = 0; i < c->nsysctl; i++) {
        unsigned lo, hi;
        int used = 0;
        const char *v = c->sysctl[i][1];
        if (strcmp(c->sysctl[i][0], "net.ipv4.ping_group_range") || sscanf(v, "%u %u %n", &lo, &hi, &used) != 2 ||
            v[used] || lo != 0 || hi != 2147483647u)
            continue;
        unsigned clo = UINT_MAX, chi = 0, hlo = UINT_MAX, hhi = 0;
        unsigned long long total = 0;
        for (size_t k = 0; k < c->ngidmap; k++) {
            const oci_idmap *m = &c->gidmap[k];
            clo = m->cid < clo ? m->cid : clo, hlo = m->hid < hlo ? m->hid : hlo;
            chi = m->cid + m->n - 1 > chi ? m->cid + m->n - 1 : chi;
            hhi = m->hid + m->n - 1 > hhi ? m->hid + m->n - 1 : hhi;
            total += m->n;
        }
        bool linear = c->ngidmap && total == (unsigned long long)chi - clo + 1 && hhi - hlo == chi - clo;
        for (size_t k = 0; k < c->ngidmap; k++) /* each extent at the same offset: one interval both sides */
            linear &= c->gidmap[k].hid - hlo == c->gidmap[k].cid - clo;
        if (!linear)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.sysctl net.ipv4.ping_group_range %s (every "
                           "gid, read as the container's own): its gid map is not one interval", v);
        snprintf(buf, sz, "%u %u", clo, chi);
        c->sysctl[i][1] = buf;
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

/* create step: the bundle opened and its config.json read */
static int load_config(create_ctx *x, mxc_error *e)
{
    x->bundle_fd = open(x->bundle ? x->bundle : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (x->bundle_fd < 0)
        return mxc_err_os(e, MXC_E_MALFORMED_REQUEST, "oci.bundle", errno, NULL, "cannot open the bundle %s",
                          x->bundle ? x->bundle : ".");
    return oci_config_load(x->bundle_fd, x->cgroup, &x->c, e);
}

/* create step: what the config asks checked before anything is made (the process, the hooks'
 * right to run, --preserve-fds, the console, the seccomp filter compiled) */
static int check_config(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    if (oci_apparmor_usable(c->apparmor_profile, "process.apparmorProfile", e) < 0 ||
        oci_hooks_parse(c->doc, &x->hk, e) < 0)
        return -1;
    if (oci_hooks_host_side(&x->hk) && !c->root_written)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: hooks: refused: this config.json (or its bundle "
                       "directory) is not %s alone, and a hook runs with the runtime's privileges; only a config "
                       "that only %s could write may name hooks", x->rootless ? "yours" : "root's",
                       x->rootless ? "you" : "root");
    if (!c->has_process)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: process must be set to create a container");
    if (x->rootless && oci_rootless_check(c, e) < 0)
        return -1; /* what needs host root, or this stage lacks, refused by name (rootless.h) */
    if (oci_check_preserved(x->preserve, e) < 0)
        return -1;
    if ((x->console = console_connect(x->console_path, c->terminal, e)) < 0 && e->code)
        return -1;
    if (!c->terminal && oci_stdio_open(x->io, x->attached, e) < 0) /* never the operator's terminal */
        return -1;
    return oci_seccomp_compile_cached(x->rootfd, c->seccomp, &x->sc, e);
}

/* create step: the namespaces the container would share with the host (joined by path, or none
 * of its own) refused where what it would reach is the host's; the paths joined checked */
static int check_namespaces(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    bool host_net = x->host_net = on_host_network(c);
    for (size_t i = 0; i < c->nsysctl; i++) {
        int flag = oci_sysctl_ns(c->sysctl[i][0]);
        if (!(c->ns_flags & flag) && in_runtime_ns(c, flag, flag == CLONE_NEWNET ? "net" : "ipc"))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.sysctl %s: the namespace joined by path "
                           "is the host's (a host sysctl): refused", c->sysctl[i][0]);
    }
    if (host_net && ((c->cap_bounding | c->cap_effective | c->cap_permitted | c->cap_inheritable | c->cap_ambient) &
                     (1ull << CAP_NET_RAW)))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: process.capabilities: CAP_NET_RAW is refused on the "
                       "host's network namespace (joined by path)");
    for (size_t i = 0; i < c->nmounts; i++) /* a pod's mqueue, never the host's message queues */
        if (c->mounts[i].by_parent && !strcmp(c->mounts[i].type, "mqueue") &&
            in_runtime_ns(c, CLONE_NEWIPC, "ipc"))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].type 'mqueue' needs an IPC "
                           "namespace other than the host's (the host's message queues are refused)", i);
    if (in_runtime_ns(c, CLONE_NEWIPC, "ipc"))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces: the IPC namespace is the host's: "
                       "refused (its shared memory, semaphores and message queues are the host's); give the "
                       "container an ipc namespace, or join a pod's by path");
    for (size_t i = 0; host_net && i < c->nmounts; i++)
        if (c->mounts[i].by_parent && !strcmp(c->mounts[i].type, "sysfs"))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].type 'sysfs' needs a network "
                           "namespace other than the host's (the host's sysfs is refused)", i);
    if (host_net && mxc_landlock_abi() < MXC_LANDLOCK_ABI_SCOPE)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "config.json: linux.namespaces has no network namespace: the "
                       "host's network shares the host's abstract unix sockets, which only Landlock ABI %d scopes "
                       "(this kernel: %d); give the container a network namespace", MXC_LANDLOCK_ABI_SCOPE,
                       mxc_landlock_abi());
    if (check_ns_paths(x, e) < 0)
        return -1;
    return oci_mxcnet_check(x->rootfd, c, host_net, &x->net, e);
}

/* create step 1: the directory (its path names the range claim's owner) */
static int make_dir(create_ctx *x, mxc_error *e)
{
    x->dir_fd = oci_store_make(x->rootfd, x->id, e);
    if (x->dir_fd < 0)
        return -1;
    x->made_dir = true;
    mxc_fd_path(x->dir_fd, x->dir_path, sizeof x->dir_path);
    if (oci_mxcnet_prepare(&x->net, x->dir_fd, x->dir_path, x->id, &x->c, e) < 0)
        return -1;
    return oci_applied_record(&x->net, x->rootfd, x->id, &x->c, e); /* into the state's annotations */
}

/* Whether the object at fd is an entry directly in dirfd (by device and inode). */
static bool entry_of(int fd, int dirfd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    struct stat a, b;
    if (n <= 0 || fstat(fd, &a) < 0)
        return false;
    path[n] = '\0';
    const char *base = strrchr(path, '/');
    return base && base[1] && fstatat(dirfd, base + 1, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* MXC_OCI_REFUSED_BIND_SOURCES=PATH:PATH... in mxc-oci's environment: places of its caller (an
 * OpenShell driver's state and socket) that no bind source may be, cover or lie inside, judged on
 * the source as resolved (its descriptor, through /proc/self/fd), so a link swapped in after the
 * caller's own check by path is caught; an entry of this container's own bundle (its token) is
 * its caller's giving, and the proxy's CA mxc-oci's own. */
static int caller_refused(const create_ctx *x, size_t i, bool ro, mxc_error *e)
{
    const char *list = getenv("MXC_OCI_REFUSED_BIND_SOURCES");
    if (!list || !*list || entry_of(x->src[i], x->bundle_fd) || x->c.mounts[i].source == x->net.ca_src)
        return 0; /* ca_src: the proxy's CA, the one bind mxc-oci adds itself (mxcnet.h) */
    char copy[PATH_MAX * 2], src[64], *save = NULL;
    mxc_hostpath_owned own[8];
    size_t n = 0;
    if (snprintf(copy, sizeof copy, "%s", list) >= (int)sizeof copy)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_OCI_REFUSED_BIND_SOURCES is too long");
    for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        if (t[0] != '/' || n == sizeof own / sizeof own[0])
            return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_OCI_REFUSED_BIND_SOURCES: at most %zu absolute paths",
                           sizeof own / sizeof own[0]);
        own[n++] = (mxc_hostpath_owned){t, "a place of mxc-oci's caller (MXC_OCI_REFUSED_BIND_SOURCES)", true};
    }
    snprintf(src, sizeof src, "/proc/self/fd/%d", x->src[i]);
    mxc_error g = {0};
    if (mxc_hostpath_check_grant_against(src, ro ? "read-only" : "read-write", own, n, NULL, &g) == 0)
        return 0;
    mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].source %s as resolved: %s", i,
            x->c.mounts[i].source, g.message);
    mxc_error_clear(&g);
    return -1;
}

/* MXC_OCI_BIND_ROOTS=PATH:PATH... in mxc-oci's environment, when set: the only places a bind
 * source may be, as resolved (by descriptor): one of them or below one (a file: that file
 * alone), bar this container's bundle entries and the proxy's CA.  An OpenShell driver names its
 * --grant-root directories and its supervisor, so a grant made a link after the driver's check
 * by path reaches nothing outside them (review of this session's changes). */
static int outside_roots(const create_ctx *x, size_t i, int parent, mxc_error *e)
{
    const char *list = getenv("MXC_OCI_BIND_ROOTS");
    if (!list || entry_of(x->src[i], x->bundle_fd) || x->c.mounts[i].source == x->net.ca_src)
        return 0;
    char copy[PATH_MAX * 2], *save = NULL;
    if (snprintf(copy, sizeof copy, "%s", list) >= (int)sizeof copy)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_OCI_BIND_ROOTS is too long");
    for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
        if (t[0] == '/' && mxc_hostpath_within(x->src[i], parent, t))
            return 0;
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].source %s as resolved lies outside every "
                   "place MXC_OCI_BIND_ROOTS names: refused", i, x->c.mounts[i].source);
}

/* create step 2, one bind's source resolved on the host as the engine resolves a grant: a symlink
 * followed only where no live sandbox can write it, mxc's own state refused, and its caller's
 * (caller_refused); recorded if writable */
static int resolve_bind(create_ctx *x, size_t i, mxc_error *e)
{
    const oci_mount *m = &x->c.mounts[i];
    char want[PATH_MAX + 2], canon[PATH_MAX];
    mxc_error why = {0};
    char bpath[PATH_MAX];
    mxc_fd_path(x->bundle_fd, bpath, sizeof bpath);
    if (snprintf(want, sizeof want, "%s%s%s", m->source[0] == '/' ? "" : bpath, m->source[0] == '/' ? "" : "/",
                 m->source) >= (int)sizeof want)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: mounts[%zu].source is too long", i);
    mxc_hostpath_rules rules = {.claims = true};
    _cleanup_fd_ int dirfd = -1; /* where the source was found: outside_roots */
    int r = mxc_hostpath_resolve(&rules, want, true, canon, sizeof canon, &x->src[i], &dirfd, &why);
    struct stat sst;
    if (r < 0 || fstat(x->src[i], &sst) < 0) {
        if (r == 0) {
            close(x->src[i]);
            x->src[i] = -1;
        }
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "mounts[%zu].source %s: %s", i, m->source,
                       why.message[0] ? why.message : strerror(r < 0 ? -r : errno));
    }
    if (S_ISBLK(sst.st_mode))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu].source %s is a block device: a raw "
                       "host device is refused", i, m->source);
    bool ro = m->attr_set & MOUNT_ATTR_RDONLY;
    if (mxc_hostpath_check_grant(canon, ro ? "read-only" : "read-write", e) < 0 || caller_refused(x, i, ro, e) < 0 ||
        outside_roots(x, i, dirfd, e) < 0)
        return -1;
    if (!ro && !(x->writable[x->nwritable++] = strdup(canon)))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    if (x->rootless && !(x->canon[i] = strdup(canon)))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    return 0;
}

/* create step 2: the bind sources (resolve_bind) */
static int resolve_binds(create_ctx *x, mxc_error *e)
{
    size_t n = x->c.nmounts;
    x->src = calloc(n + 1, sizeof *x->src);
    x->writable = calloc(n + 1, sizeof *x->writable);
    x->canon = calloc(n + 1, sizeof *x->canon);
    if (!x->src || !x->writable || !x->canon)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    for (size_t i = 0; i < n; i++)
        x->src[i] = -1;
    for (size_t i = 0; i < n; i++)
        if (x->c.mounts[i].kind == OCI_MNT_BIND && resolve_bind(x, i, e) < 0)
            return -1;
    for (size_t i = 0; x->rootless && i < x->c.nxdev; i++) /* the init binds them again by path (devices.h) */
        if ((x->xdev_src[i] = oci_device_src(&x->c, i, e)) < 0)
            return -1;
    return 0;
}

/* Whether the namespace at fd (nsfs) is pid's namespace `name`, by inode and device. */
static bool ns_is(int fd, pid_t pid, const char *name)
{
    char path[64];
    struct stat a, b;
    snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, name);
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* A live container of this store (a pod sibling): its range claim, state directory and init. */
typedef struct {
    char claim[MXC_IDRANGE_NAME_MAX];
    char dir[PATH_MAX];
    pid_t pid;
    bool pidns;          /* its PID namespace is the one asked too */
} pod_sibling;

/* Whether container id is a pod sibling: its init alive (a pidfd by pid and start time) with a range
 * claim, in the user namespace at userns (and, for sib->pidns, the PID namespace at pidns), the pidfd
 * still alive after the comparison (the pid not reused in between). */
static bool sibling_of(int rootfd, const char *id, int userns, int pidns, pod_sibling *sib)
{
    int dirfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    oci_state s = {0};
    mxc_error e = {0};
    bool ok = false;
    if (dirfd >= 0 && oci_state_read(dirfd, id, &s, &e) == 0) {
        int pfd = s.claim[0] ? pidfd_of(&s) : -1;
        bool user = pfd >= 0 && ns_is(userns, s.pid, "user"), pid = user && pidns >= 0 && ns_is(pidns, s.pid, "pid");
        struct pollfd p = {pfd, POLLIN, 0};
        if (user && poll(&p, 1, 0) == 0) { /* not exited since */
            ok = true;
            snprintf(sib->claim, sizeof sib->claim, "%s", s.claim);
            mxc_fd_path(dirfd, sib->dir, sizeof sib->dir);
            sib->pid = s.pid;
            sib->pidns = pid;
        }
        if (pfd >= 0)
            close(pfd);
        oci_state_free(&s);
    }
    mxc_error_clear(&e);
    if (dirfd >= 0)
        close(dirfd);
    return ok;
}

/* Whether the user namespace at fd is a child of the runtime's own (as every container's mxc-oci
 * makes is): never the host's itself, nor one a container's process made beneath its own. */
static bool child_of_runtime(int fd)
{
    int parent = ioctl(fd, NS_GET_PARENT);
    struct stat a, b;
    bool child = parent >= 0 && fstat(parent, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 &&
                 a.st_ino == b.st_ino && a.st_dev == b.st_dev;
    if (parent >= 0)
        close(parent);
    return child;
}

/* The pod sibling whose user namespace (and PID namespace, when joined) x joins: a live container of
 * this store with a range claim; the namespaces compared by the descriptors create opened once (and
 * setns uses), never by a path again. */
static int find_sibling(create_ctx *x, pod_sibling *sib, mxc_error *e)
{
    json_t *ids = child_of_runtime(x->pod_userns) ? oci_store_ids(x->rootfd) : json_array();
    size_t i;
    json_t *v;
    bool user = false;
    json_array_foreach(ids, i, v) {
        pod_sibling s;
        if (strcmp(json_string_value(v), x->id) != 0 &&
            sibling_of(x->rootfd, json_string_value(v), x->pod_userns, x->pod_pidns, &s) &&
            (!user || s.pidns)) {
            *sib = s;
            user = true;
        }
    }
    json_decref(ids);
    const char *upath = NULL, *ppath = NULL;
    for (size_t j = 0; j < x->c.njoin; j++)
        if (x->c.join[j].flag == CLONE_NEWUSER)
            upath = x->c.join[j].path;
        else if (x->c.join[j].flag == CLONE_NEWPID)
            ppath = x->c.join[j].path;
    if (!user && upath)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces user path %s: not the user "
                       "namespace of a live container mxc-oci made with an id range of its own (a pod's): refused "
                       "(it could be the host's or another range's)", upath);
    if (!user && !ppath)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces path %s: the user namespace "
                       "owning it is no longer a live pod container's: refused", x->implied ? x->implied : "");
    if (!user)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces pid path %s: not the PID "
                       "namespace of a live container mxc-oci made (a pod's): refused (it could be the host's or "
                       "another pod's)", ppath);
    if (x->pod_pidns >= 0 && !sib->pidns)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces pid path %s: not the PID "
                       "namespace of a live container of the pod whose user namespace is joined: refused (it could "
                       "be the host's or another pod's)", ppath);
    return 0;
}

/* The user namespace owning the namespace at fd (NS_GET_USERNS on that descriptor) when it is a live
 * pod container's of this store (sibling_of: a range claim, its init's pidfd alive after the
 * comparison, a child of the runtime's own user namespace): its descriptor, or -1. */
static int sibling_owner(create_ctx *x, int fd)
{
    int u = ioctl(fd, NS_GET_USERNS);
    bool found = false;
    if (u >= 0 && child_of_runtime(u)) {
        json_t *ids = oci_store_ids(x->rootfd);
        size_t i;
        json_t *v;
        pod_sibling s;
        json_array_foreach(ids, i, v) {
            if (!found && strcmp(json_string_value(v), x->id) != 0)
                found = sibling_of(x->rootfd, json_string_value(v), u, -1, &s);
        }
        json_decref(ids);
    }
    if (!found && u >= 0) {
        close(u);
        u = -1;
    }
    return u;
}

static bool same_ns(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* create step 3, a pod member with no user namespace listed: a network, IPC or UTS namespace joined
 * by path (containerd's CRI passes the sandbox's /proc/PID/ns/ipc and uts) whose owner is a pod
 * sibling's user namespace makes the container a member of that pod's identity (pod_claim proves
 * it again).  Namespaces owned by the host's user namespace (CNI's network namespaces, one a host
 * process made) imply nothing: the container gets a range of its own, as before. */
static void implied_pod(create_ctx *x)
{
    oci_config *c = &x->c;
    for (size_t i = 0; !c->user_ns && !c->join_user && i < c->njoin; i++) {
        int f = c->join[i].flag;
        if ((f == CLONE_NEWNET || f == CLONE_NEWIPC || f == CLONE_NEWUTS) &&
            (x->pod_userns = sibling_owner(x, x->join_fd[i])) >= 0) {
            c->join_user = true;
            x->implied = c->join[i].path;
        }
    }
}

/* A pod's IPC namespace (owned by a pod container's user namespace) is entered only from that user
 * namespace: its shared memory, semaphores and message queues never cross identities (a container
 * listing a user namespace of its own, or another pod's, is refused naming the path). */
static int ipc_of_its_pod(create_ctx *x, mxc_error *e)
{
    const oci_config *c = &x->c;
    for (size_t i = 0; i < c->njoin; i++) {
        if (c->join[i].flag != CLONE_NEWIPC)
            continue;
        int u = sibling_owner(x, x->join_fd[i]);
        bool other = u >= 0 && (x->pod_userns < 0 || !same_ns(u, x->pod_userns));
        if (u >= 0)
            close(u);
        if (other)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces ipc path %s: a pod's IPC "
                           "namespace, joined only within the pod's identity (no user namespace listed, or the "
                           "pod's joined by path): refused with %s", c->join[i].path,
                           c->user_ns ? "a user namespace of the container's own" : "another pod's user namespace");
    }
    return 0;
}

/* create step 3, a pod member: the pod's user (and PID) namespaces opened once, proved a live
 * sibling's (find_sibling), its range shared (a claim of the member's own on it, idrange.h) and its
 * maps taken from that claim (a config's own maps must be those) */
static int pod_claim(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    for (size_t i = 0; i < c->njoin; i++) {
        int *fd = c->join[i].flag == CLONE_NEWUSER ? &x->pod_userns
                  : c->join[i].flag == CLONE_NEWPID ? &x->pod_pidns : NULL;
        if (fd && (*fd = fcntl(x->join_fd[i], F_DUPFD_CLOEXEC, 0)) < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL, "%s", c->join[i].path);
    }
    /* no user namespace listed: the one owning the pod's PID namespace (on that same descriptor) */
    if (x->pod_userns < 0 && (x->pod_userns = ioctl(x->pod_pidns, NS_GET_USERNS)) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL, "the user namespace owning the pod's "
                          "PID namespace");
    pod_sibling sib;
    unsigned base;
    if (find_sibling(x, &sib, e) < 0 ||
        mxc_idrange_join(sib.claim, sib.dir, sib.pid, x->dir_path, (const char *const *)x->writable, x->nwritable,
                         &base, x->claim, e) < 0)
        return -1;
    oci_idmap pod = {0, base, MXC_IDRANGE_SIZE};
    for (int g = 0; c->join_maps_given && g < 2; g++) {
        const oci_idmap *m = g ? c->gidmap : c->uidmap;
        if ((g ? c->ngidmap : c->nuidmap) != 1 || m->cid != 0 || m->hid != base || m->n != MXC_IDRANGE_SIZE)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.%s: not the pod's range (its user "
                           "namespace, joined by path, maps 0 onto host %u+65536): refused",
                           g ? "gidMappings" : "uidMappings", base);
    }
    c->uidmap[0] = c->gidmap[0] = pod;
    c->nuidmap = c->ngidmap = 1;
    return 0;
}

/* A config's own maps of a Kubernetes pod's shape (one range of 65536 ids, 65536-aligned, for uids
 * and gids alike: the kubelet's for `hostUsers: false`) are claimed as mxc's ranges are: another
 * container given the same maps is refused, and the pod's members can join its user namespace by
 * path (pod_claim).  Other maps stay unclaimed, checked only (own_maps_meet_mxc). */
static int claim_own_range(create_ctx *x, mxc_error *e)
{
    const oci_config *c = &x->c;
    const oci_idmap *u = c->uidmap, *g = c->gidmap;
    if (c->nuidmap != 1 || c->ngidmap != 1 || u->cid != 0 || g->cid != 0 || u->hid != g->hid ||
        u->n != MXC_IDRANGE_SIZE || g->n != MXC_IDRANGE_SIZE || u->hid % MXC_IDRANGE_SIZE)
        return 0;
    mxc_error sub = {0};
    if (mxc_idrange_claim_at(u->hid, x->dir_path, (const char *const *)x->writable, x->nwritable, x->claim, &sub) == 0)
        return 0;
    mxc_err(e, sub.code, "config.json: linux.uidMappings[0]: %.600s", sub.message);
    mxc_error_clear(&sub);
    return -1;
}

/* create step 3: the user namespace's maps: the config's, or a claimed range; the process's ids
 * mapped in them */
static int claim_ids(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    if (!x->rootless) /* rootless: no namespace joined by path (refused before) */
        implied_pod(x);
    if (x->rootless) { /* the caller's own ids: no claim (rootless.h) */
        if (oci_rootless_maps(c, e) < 0)
            return -1;
    } else if (c->join_user) {
        if (pod_claim(x, e) < 0)
            return -1;
    } else if (!c->user_ns) {
        unsigned base;
        if (mxc_idrange_claim(x->dir_path, (const char *const *)x->writable, x->nwritable, &base, x->claim, e) < 0)
            return -1;
        c->uidmap[0] = c->gidmap[0] = (oci_idmap){0, base, MXC_IDRANGE_SIZE};
        c->nuidmap = c->ngidmap = 1;
    } else if (own_maps_meet_mxc(c, e) < 0 || claim_own_range(x, e) < 0)
        return -1;
    if (ipc_of_its_pod(x, e) < 0)
        return -1;
    if (oci_mountmap_check(c, e) < 0)
        return -1; /* idmapped binds: only ids the container owns (mountmap.h) */
    unsigned hg;
    if (!oci_map_id(c->uidmap, c->nuidmap, c->uid, &x->huid) || !oci_map_id(c->gidmap, c->ngidmap, c->gid, &x->hgid))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: process.user %u:%u is not mapped in the "
                       "container's user namespace", c->uid, c->gid);
    for (size_t i = 0; i < c->ngids; i++)
        if (!oci_map_id(c->gidmap, c->ngidmap, c->gids[i], &hg))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: process.user.additionalGids[%zu] %u is not "
                           "mapped in the container's user namespace", i, c->gids[i]);
    return own_ping_range(c, x->ping_range, sizeof x->ping_range, e);
}

/* create step 4: the rootfs, opened before the clone; the host-resolved hooks' binaries, checked
 * now (before anything runs): the init inherits createContainer's descriptors and execs those,
 * never the path again */
static int prepare_rootfs(create_ctx *x, mxc_error *e)
{
    x->rootfs_fd = oci_rootfs_open(x->bundle_fd, x->bundle, x->c.root_path, e); /* a container's own only */
    if (x->rootfs_fd < 0)
        return -1;
    if (x->c.user_ns)
        make_own_targets(&x->c, x->rootfs_fd, x->src);
    struct stat deny[2];
    if (fstat(x->bundle_fd, &deny[0]) < 0 || fstat(x->rootfs_fd, &deny[1]) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.hooks", errno, NULL, "the bundle");
    for (int p = 0; p < OCI_HOOK_NPHASES; p++)
        if (p != OCI_HOOK_START_CONTAINER && oci_hooks_open(&x->hk, (oci_hook_phase)p, deny, 2, e) < 0)
            return -1;
    return 0;
}

/* create step 5: the exec fifo, the init's to open (as the process's own uid) */
static int make_fifo(create_ctx *x, mxc_error *e)
{
    /* rootless, a process not the caller's own id cannot be given the fifo: others may write it (it
     * is reached only through the caller's 0700 state directory, or the init's descriptor) */
    bool own = !x->rootless || (x->huid == getuid() && x->hgid == getgid());
    if (mkfifoat(x->dir_fd, OCI_FIFO, 0600) < 0 ||
        (own ? fchownat(x->dir_fd, OCI_FIFO, x->huid, x->hgid, AT_SYMLINK_NOFOLLOW)
             : fchmodat(x->dir_fd, OCI_FIFO, 0622, 0)) < 0 ||
        (x->fifo_fd = openat(x->dir_fd, OCI_FIFO, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.fifo", errno, NULL, "cannot make the exec fifo");
    return 0;
}

/* create step 5b: the cgroup, made and limited before the init exists (cgroup.c) */
static int make_cgroup(create_ctx *x, mxc_error *e)
{
    if (x->cgroup == MXC_CGROUP_NONE) /* --cgroup-manager disabled */
        return 0;
    if (oci_cgroup_create(x->dir_fd, x->id, x->c.cgroups_path, x->c.resources, x->claim[0] ? record_in_claim : NULL,
                          x->claim, &x->cg, e) < 0)
        return -1;
    x->made_cg = true;
    const char *fault = mxc_fault("OCI_AFTER_CGROUP"); /* tests/oci: create fails once its cgroup exists */
    if (fault && !strcmp(fault, "crash"))
        _exit(1); /* as if killed: nothing undone */
    if (fault)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "fault injected after the cgroup was made");
    return 0;
}

/* The namespaces joined by path that mxc-oci never enters itself (it could not return from a user
 * namespace; a PID namespace is its children's): a pod's, entered by pod_clone's helper. */
static bool by_helper(int flag)
{
    return flag == CLONE_NEWUSER || flag == CLONE_NEWPID;
}

/* create step 6a: namespaces joined by path (a pod's network, IPC, UTS): entered here, as host root,
 * so that the init is born in them (its own user namespace could not enter one it does not own);
 * the runtime's own kept, to return to after the clone (run's start and delete, and the hooks, run
 * in the runtime's namespaces).  A pod's sysctls written, and its sysfs made, while in them. */
static int enter_joined(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    char path0[64];
    for (size_t i = 0; i < c->njoin; i++) {
        if (by_helper(c->join[i].flag))
            continue;
        const char *nsname = c->join[i].flag == CLONE_NEWNET ? "net" : c->join[i].flag == CLONE_NEWIPC ? "ipc"
                             : c->join[i].flag == CLONE_NEWUTS ? "uts" : "cgroup";
        snprintf(path0, sizeof path0, "/proc/self/ns/%s", nsname);
        if ((x->own_ns[x->nown] = open(path0, O_RDONLY | O_CLOEXEC)) < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL, "%s", path0);
        x->nown++;
    }
    for (size_t i = 0; i < c->njoin; i++) {
        if (by_helper(c->join[i].flag))
            continue;
        if (setns(x->join_fd[i], c->join[i].flag) < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL, "joining the %s namespace %s",
                              c->join[i].type, c->join[i].path);
    }
    if (write_joined_sysctls(c, e) < 0 || pod_low_ports(x, e) < 0)
        return -1;
    /* a pod's sysfs shows the network namespace of its maker: made now, while mxc-oci is in the pod's
     * (it returns to its own right after the clone); /dev/shm's tmpfs too (shm_tree) */
    for (size_t i = 0; i < c->nmounts; i++) {
        const oci_mount *m = &c->mounts[i];
        bool shm = m->by_parent && !strcmp(m->type, "tmpfs");
        if (m->by_parent && (x->src[i] = shm ? shm_tree(c, m) : sysfs_tree(m)) < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mount", -x->src[i], NULL, "mounts[%zu]: %s %s", i,
                       shm ? "the container's" : "the pod's", m->type);
            x->src[i] = -1;
            return -1;
        }
    }
    return 0;
}

/* The init cloned inside a pod's user (and PID) namespace: a helper, not dumpable (the pod's processes
 * share that user namespace), enters them (mxc-oci itself could never leave a user namespace), clones
 * the init as mxc-oci's own child (CLONE_PARENT) into the container's other new namespaces, sends its
 * pid and exits.  In the init: 0; in mxc-oci: the init's pid, or -1 with errno. */
static pid_t pod_clone(create_ctx *x, int flags, int cgfd)
{
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) < 0)
        return -1;
    pid_t h = fork();
    if (h == 0) {
        close(pp[0]);
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        pid_t c = -1;
        if (setns(x->pod_userns, CLONE_NEWUSER) == 0 && (x->pod_pidns < 0 || setns(x->pod_pidns, CLONE_NEWPID) == 0))
            c = mxc_cgroup_clone((unsigned long long)flags | CLONE_PARENT, cgfd);
        if (c == 0) {
            close(pp[1]);
            return 0;
        }
        int m[2] = {(int)c, errno};
        (void)!write(pp[1], m, sizeof m);
        _exit(0);
    }
    close(pp[1]);
    int m[2] = {-1, h < 0 ? errno : EIO};
    ssize_t n = -1;
    while (h > 0 && (n = read(pp[0], m, sizeof m)) < 0 && errno == EINTR)
        ;
    close(pp[0]);
    if (h > 0)
        waitpid(h, NULL, 0);
    if (n != (ssize_t)sizeof m || m[0] <= 0) {
        errno = n == (ssize_t)sizeof m ? m[1] : m[1] ? m[1] : EIO;
        return -1;
    }
    return (pid_t)m[0];
}

/* create step 6: the init, cloned into its namespaces (and, on v2, born in its cgroup), then the
 * runtime back in its own namespaces */
static int spawn_init(create_ctx *x, mxc_error *e)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.socketpair", errno, NULL, "socketpair");
    x->sock = sv[0];
    x->init_sock = sv[1];
    /* the init is born with the rootfs as its cwd: its mount namespace's copy of that directory, the
     * descriptor it attaches the rootfs's tree onto (at root.path, as the hooks see it); the
     * runtime's own cwd back right after */
    if (mxc_fault("OCI_BEFORE_CLONE")) /* tests/oci: held here, root.path opened, while a test swaps it */
        raise(SIGSTOP);
    int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (here < 0 || fchdir(x->rootfs_fd) < 0) {
        int err = errno;
        if (here >= 0)
            close(here);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootfs", err, NULL, "root.path: entering it");
    }
    if (enter_joined(x, e) < 0) {
        (void)!fchdir(here);
        close(here);
        return -1;
    }
    /* a new cgroup namespace is the init's to unshare once it is in its cgroup (init.c), so that its root is
     * the container's cgroup; on v2 the init is born in it (clone3 CLONE_INTO_CGROUP) */
    int flags = (x->c.ns_flags & ~CLONE_NEWCGROUP) | CLONE_NEWUSER;
    int cgfd = x->made_cg ? oci_cgroup_dir_fd(&x->cg) : -1;
    fflush(NULL);
    x->child = x->c.join_user ? pod_clone(x, flags & ~CLONE_NEWUSER, cgfd)
                              : mxc_cgroup_clone((unsigned long long)flags, cgfd);
    int clone_err = errno;
    if (cgfd >= 0)
        close(cgfd);
    if (x->child == 0) {
        oci_stdio_take(x->io);
        oci_mxcnet_wipe_secrets(&x->net); /* a provider's secret: mxc-oci's, for the proxy alone */
        close(sv[0]);
        close(here);
        oci_init_args a = {.c = &x->c, .sock = sv[1], .fifo = x->fifo_fd, .console = x->console, .seccomp = &x->sc,
                           .preserve = x->preserve, .host_net = x->host_net, .hooks = &x->hk,
                           .own_trees = x->rootless, .bind_src = x->src, .bind_paths = x->canon,
                           .xdev_src = x->xdev_src};
        oci_init_main(&a);
    }
    close(sv[1]);
    x->init_sock = -1;
    oci_stdio_given(x->io);
    int back = fchdir(here) < 0 ? errno : 0;
    close(here);
    if (back)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootfs", back, NULL, "returning to the runtime's cwd");
    for (size_t i = 0; i < x->nown; i++)
        if (setns(x->own_ns[i], 0) < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.setns", errno, NULL,
                              "returning to the runtime's namespaces");
    if (x->child < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.clone", clone_err, NULL, "cannot clone the container's init");
        x->child = 0;
        return -1;
    }
    return 0;
}

/* create step 7: the init in its cgroup alone, its user namespace's maps written ('M'), and its
 * network attached while it waits (io.mxc.network: rules and stack, or its own mxc-proxy) */
static int map_ids(create_ctx *x, mxc_error *e)
{
    if (x->made_cg && (oci_cgroup_enter(&x->cg, x->child, e) < 0 || oci_cgroup_sole(&x->cg, x->child, e) < 0))
        return -1;
    char path[64];
    if (x->rootless && oci_rootless_write_maps(x->child, &x->c, e) < 0)
        return -1;
    int r = x->c.join_user || x->rootless ? 0 : oci_write_idmap(x->child, "uid_map", x->c.uidmap, x->c.nuidmap);
    if (r == 0 && !x->c.join_user && !x->rootless) /* a pod's user namespace joined: its maps are written (the pod's range) */
        r = oci_write_idmap(x->child, "gid_map", x->c.gidmap, x->c.ngidmap);
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)x->child);
    if (r == 0 && (x->userns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        r = -errno;
    if (r < 0 || send_msg(x->sock, OCI_MSG_MAPS, -1) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.idmap", -r, NULL, "cannot write the user namespace's maps");
    return oci_mxcnet_attach(&x->net, x->child, e);
}

/* create step 8a: the rootfs's tree, idmapped onto the range (when the range is ours) and never a
 * device: the tree, or -1 with e set */
static int rootfs_tree(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    int t = -1;
    if (!c->user_ns && oci_overlay_rootfs(x->rootfs_fd, c->root_path, x->id, x->userns, c->uidmap[0].hid,
                                          c->gidmap[0].hid, &t, e) < 0)
        return -1; /* an overlay cannot be idmapped: re-made from idmapped layers (overlay.h) */
    if (t < 0)
        t = tree_of(x->rootfs_fd, "", true, MOUNT_ATTR_NODEV, 0, c->user_ns ? -1 : x->userns);
    if (t < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootfs", -t, NULL,
                          t == -EINVAL ? "root.path %s: its filesystem cannot be mounted idmapped (mxc maps the "
                                         "image onto the container's id range)"
                                       : "root.path %s",
                          c->root_path);
    return t;
}

/* create step 8: the trees passed to the init ('T' each, then 'G'): the rootfs, each bind with its
 * flags, the default devices, linux.devices beyond them; then process.oomScoreAdj */
static int pass_trees(create_ctx *x, mxc_error *e)
{
    oci_config *c = &x->c;
    char path[64];
    int t = -1, r = 0;
    if (x->rootless) /* no tree can be made in the host's mount namespace: the init makes its own */
        goto go;
    if ((t = rootfs_tree(x, e)) < 0)
        return -1;
    r = send_msg(x->sock, OCI_MSG_TREE, t);
    close(t);
    for (size_t i = 0; r == 0 && i < c->nmounts; i++) {
        if (c->mounts[i].kind != OCI_MNT_BIND && !c->mounts[i].by_parent)
            continue;
        if (c->mounts[i].idmap && (t = oci_mountmap_tree(x->src[i], c, i, e)) < 0)
            return -1;
        if (c->mounts[i].by_parent) {
            t = x->src[i]; /* made in the pod's network namespace (above) */
            x->src[i] = -1;
        } else if (!c->mounts[i].idmap)
            t = tree_of(x->src[i], "", c->mounts[i].recursive, c->mounts[i].attr_set, c->mounts[i].attr_clr, -1);
        if (t < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mount", -t, NULL, "mounts[%zu].source %s", i,
                              c->mounts[i].source);
        r = send_msg(x->sock, OCI_MSG_TREE, t);
        close(t);
    }
    int devs[MXC_DEV_NNODES]; /* the default devices (setupops.h) */
    size_t bad = 0, ndevs = r == 0 ? MXC_DEV_NNODES : 0;
    if (ndevs && (t = mxc_dev_node_trees(devs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, MS_PRIVATE, &bad)) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.device", -t, NULL, "/dev/%s", mxc_dev_nodes[bad]);
    for (size_t i = 0; i < ndevs; i++) {
        r = r == 0 ? send_msg(x->sock, OCI_MSG_TREE, devs[i]) : r;
        close(devs[i]);
    }
    for (size_t i = 0; r == 0 && i < c->nxdev; i++) { /* linux.devices beyond the defaults (devices.h) */
        if ((t = oci_device_tree(c, i, e)) < 0)
            return -1;
        r = send_msg(x->sock, OCI_MSG_TREE, t);
        close(t);
    }
go:
    if (r < 0 || send_msg(x->sock, OCI_MSG_GO, -1) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited while it was being set up");
    if (!c->has_oom_score_adj)
        return 0;
    char v[16];
    snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)x->child);
    snprintf(v, sizeof v, "%d", c->oom_score_adj);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && write(fd, v, strlen(v)) > 0;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.oom", errno, NULL, "process.oomScoreAdj");
}

/* create step 9: the state as the hooks see it (status "creating" until create returns); the init's
 * answer; with hooks first 'H': its mounts are made, pivot_root not yet.  prestart and
 * createRuntime run here (host root, the runtime's namespaces), then the init runs createContainer
 * in the container's (their failure: the create fails, the init is killed); then 'K', ready */
static int run_hooks_wait_ready(create_ctx *x, mxc_error *e)
{
    oci_state *st = &x->st;
    snprintf(st->id, sizeof st->id, "%s", x->id);
    st->pid = x->child;
    mxc_fd_path(x->bundle_fd, st->bundle, sizeof st->bundle);
    mxc_fd_path(x->rootfs_fd, st->rootfs, sizeof st->rootfs);
    snprintf(st->oci_version, sizeof st->oci_version, "%s", x->c.oci_version);
    st->annotations = x->c.annotations;
    char msg[1];
    ssize_t n = mxc_error_recv(x->sock, OCI_MSG_FAIL, msg, sizeof msg, e);
    if (n == 1 && msg[0] == OCI_MSG_HOOKS_ASK) {
        if (!(x->hstate = hook_state(st, "creating")))
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        if (oci_hooks_run(&x->hk, OCI_HOOK_PRESTART, x->hstate, e) < 0 ||
            oci_hooks_run(&x->hk, OCI_HOOK_CREATE_RUNTIME, x->hstate, e) < 0)
            return -1;
        if (send_text(x->sock, OCI_MSG_HOOKS_STATE, x->hstate) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited (or the state is too large for a "
                           "hook)");
        n = mxc_error_recv(x->sock, OCI_MSG_FAIL, msg, sizeof msg, e);
    }
    if (n < 0) /* the init's report ('E' + its mxc_error), or a malformed one */
        return -1;
    if (n != 1 || msg[0] != OCI_MSG_READY)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited");
    return 0;
}

/* A listener the container's process sent ('N' + the descriptor) handed to the seccomp agent with
 * the container's state in this status, pid the process whose filter it is (notify.h). */
static int hand_listener(json_t *seccomp, const oci_state *st, const char *status, pid_t pid, int listener,
                         mxc_error *e)
{
    json_t *state = oci_state_json(st, OCI_CREATED);
    if (state)
        json_object_set_new(state, "status", json_string(status));
    int rc = state ? oci_notify_send(seccomp, listener, pid, state, e)
                   : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    json_decref(state);
    close(listener);
    return rc;
}

/* create step 10a: with a profile that notifies, the init loaded it and sent its listener after
 * 'K': to the agent, with the state "creating" (runc's) */
static int pass_listener(create_ctx *x, mxc_error *e)
{
    if (!oci_seccomp_notifies(&x->sc))
        return 0;
    char msg[1];
    int fd;
    ssize_t n = mxc_error_recv_fd(x->sock, OCI_MSG_FAIL, msg, sizeof msg, &fd, e);
    if (n < 0)
        return -1;
    if (n != 1 || msg[0] != OCI_MSG_LISTENER || fd < 0) {
        if (fd >= 0)
            close(fd);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited (no seccomp listener)");
    }
    return hand_listener(x->c.seccomp, &x->st, "creating", x->child, fd, e);
}

/* create step 10: the state, then the init may wait on the fifo ('S') */
static int record_state(create_ctx *x, mxc_error *e)
{
    oci_state *st = &x->st;
    st->start = mxc_proc_start_time(x->child);
    oci_now(st->created, sizeof st->created);
    snprintf(st->claim, sizeof st->claim, "%s", x->claim);
    if (oci_state_write(x->dir_fd, st, e) < 0 || save_config(x->dir_fd, x->c.doc, e) < 0)
        return -1;
    if (x->claim[0] && mxc_idrange_set_owner(x->claim, x->child) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot record the container's init in its id range claim");
    if (x->pid_file && write_pid_file(x->pid_file, x->child, e) < 0)
        return -1;
    if (x->hk.n[OCI_HOOK_START_CONTAINER]) { /* startContainer's state, for the init to hand on at start */
        free(x->hstate);
        if (!(x->hstate = hook_state(st, "created")) || send_text(x->sock, OCI_MSG_START_STATE, x->hstate) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited (or the state is too large for a "
                           "hook)");
    }
    if (send_msg(x->sock, OCI_MSG_SAVED, -1) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init exited");
    return 0;
}

/* A failed create rolled back (create_fail); once the hooks began (the runtime spec: a failed
 * create goes on to the end of the lifecycle), poststop runs on what is gone, its failure a warning */
static void create_rollback(create_ctx *x)
{
    create_fail(x);
    char *stopped = x->hstate && x->hk.n[OCI_HOOK_POSTSTOP] ? hook_state(&x->st, "stopped") : NULL;
    mxc_error pe = {0};
    if (stopped && oci_hooks_run(&x->hk, OCI_HOOK_POSTSTOP, stopped, &pe) < 0)
        fprintf(stderr, "mxc-oci: warning: %s\n", pe.message);
    mxc_error_clear(&pe);
    free(stopped);
}

/* What every create holds, released whether it succeeded or not. */
static void create_release(create_ctx *x)
{
    for (size_t i = 0; i < x->nwritable; i++)
        free(x->writable[i]);
    free(x->writable);
    for (size_t i = 0; x->canon && i < x->c.nmounts; i++)
        free(x->canon[i]);
    free(x->canon);
    for (size_t i = 0; i < sizeof x->xdev_src / sizeof x->xdev_src[0]; i++)
        if (x->xdev_src[i] >= 0)
            close(x->xdev_src[i]);
    oci_seccomp_free(&x->sc);
    oci_mxcnet_free(&x->net);
    for (size_t i = 0; i < x->nown; i++)
        close(x->own_ns[i]);
    ctx_close(x);
    oci_hooks_free(&x->hk);
    free(x->hstate);
    oci_config_free(&x->c);
    oci_stdio_close(&x->own_io);
}

/* The create's steps, in order: each makes what the next needs, and a failure rolls back what
 * the steps before it made (create_rollback). */
static int (*const create_steps[])(create_ctx *, mxc_error *) = {
    load_config, check_config, check_namespaces, make_dir, resolve_binds, claim_ids, prepare_rootfs,
    make_fifo,   make_cgroup,  spawn_init,       map_ids,  pass_trees,    run_hooks_wait_ready, pass_listener,
    record_state,
};

int oci_create(int rootfd, const char *id, const char *bundle, const char *pid_file, const char *console,
               int preserve, int cgroup, bool keep, pid_t *child, oci_stdio *io, mxc_error *e)
{
    if (!oci_valid_id(id))
        return mxc_err(e, MXC_E_MALFORMED_ID, "invalid id format: %s", id ? id : "");
    bool rootless = oci_rootless();
    if (rootless)
        cgroup = MXC_CGROUP_NONE; /* no delegated cgroup here: none, its limits refused (rootless.h) */
    create_ctx x = {.rootless = rootless, .rootfd = rootfd, .id = id, .bundle = bundle, .pid_file = pid_file, .console_path = console,
                    .preserve = preserve, .cgroup = cgroup, .bundle_fd = -1, .dir_fd = -1, .rootfs_fd = -1, .fifo_fd = -1, .sock = -1,
                    .init_sock = -1, .userns = -1, .console = -1, .own_ns = {-1, -1, -1, -1}, .pod_userns = -1,
                    .pod_pidns = -1, .own_io = OCI_STDIO_NONE, .attached = io != NULL};
    x.io = io ? io : &x.own_io;
    for (size_t i = 0; i < sizeof x.xdev_src / sizeof x.xdev_src[0]; i++)
        x.xdev_src[i] = -1;
    int rc = 0;
    for (size_t s = 0; rc == 0 && s < sizeof create_steps / sizeof create_steps[0]; s++)
        rc = create_steps[s](&x, e);
    if (rc < 0) {
        create_rollback(&x);
    } else {
        if (child)
            *child = x.child;
        if (!keep)
            x.child = 0; /* reparented when we exit; its parent (a shim, init) reaps it */
    }
    create_release(&x);
    return rc < 0 ? -1 : 0;
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
        *dirfd = -1;
        return -1;
    }
    return 0;
}

/* A container load()ed for one command: its directory and state, released when it goes out of scope. */
typedef struct {
    int dirfd;
    oci_state s;
} loaded;

static void loaded_release(loaded *l)
{
    if (l->dirfd >= 0) {
        close(l->dirfd);
        oci_state_free(&l->s);
    }
}
#define _cleanup_loaded_ __attribute__((cleanup(loaded_release)))

/* start's wait: the init's byte on the exec fifo, or its death first (pfd) */
static int await_start(int fifo, int pfd, mxc_error *e)
{
    for (;;) {
        struct pollfd p[2] = {{fifo, POLLIN, 0}, {pfd, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.start", errno, NULL, "poll");
        }
        if (p[0].revents & (POLLIN | POLLHUP)) {
            char b;
            ssize_t n = read(fifo, &b, 1);
            if (n == 1 && b != '0') { /* the init's word that a startContainer hook failed; it exits */
                /* the reason follows in the same write: the container's text, printable only */
                char why[1024];
                ssize_t w = read(fifo, why, sizeof why - 1);
                why[w > 0 ? w : 0] = '\0';
                for (char *q = why; *q; q++)
                    if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
                        *q = ' ';
                return mxc_err(e, MXC_E_BACKEND_ERROR, "a startContainer hook failed: %s; the container is stopped",
                               *why ? why : "(no reason given)");
            }
            if (n == 1)
                return 0;
            if (n < 0 && errno == EAGAIN)
                continue;
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's init closed the exec fifo without starting");
        }
        if (p[1].revents)
            return mxc_err(e, MXC_E_ALREADY_STOPPED, "the container's init exited before start");
    }
}

int oci_start(int rootfd, const char *id, mxc_error *e)
{
    _cleanup_loaded_ loaded l = {.dirfd = -1};
    if (load(rootfd, id, &l.dirfd, &l.s, e) < 0)
        return -1;
    oci_status status = oci_state_status(l.dirfd, &l.s);
    if (status == OCI_STOPPED)
        return mxc_err(e, MXC_E_ALREADY_STOPPED, "cannot start a container that has stopped");
    if (status == OCI_RUNNING)
        return mxc_err(e, MXC_E_ALREADY_STARTED, "cannot start an already running container");
    _cleanup_fd_ int pfd = pidfd_of(&l.s);
    _cleanup_fd_ int fifo = openat(l.dirfd, OCI_FIFO, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (pfd < 0 || fifo < 0)
        return mxc_err(e, MXC_E_ALREADY_STOPPED, pfd < 0 ? "cannot start a container that has stopped"
                                                         : "cannot start an already running container");
    if (await_start(fifo, pfd, e) < 0)
        return -1;
    unlinkat(l.dirfd, OCI_FIFO, 0);
    hooks_warn(l.dirfd, &l.s, OCI_HOOK_POSTSTART, "running");
    return 0;
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

/* Whether pid is PID 1 of its own PID namespace (a pod member that joined its pod's is not). */
static bool pid_ns_init(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    bool init = false;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "NSpid:", 6)) {
            char *last = strrchr(line, '\t');
            init = last && atoi(last + 1) == 1;
        }
    if (f)
        fclose(f);
    return init;
}

/* kill --all beyond the cgroup: every process of the container's PID namespace but its init
 * (each by pidfd, its namespace checked again once the pidfd names it) */
static void signal_pid_namespace(pid_t init, int sig)
{
    ino_t ns = pidns_of(init);
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (ns && d && (de = readdir(d))) {
        pid_t p = (pid_t)atoi(de->d_name);
        if (p <= 0 || p == init || pidns_of(p) != ns)
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

int oci_kill(int rootfd, const char *id, int sig, bool all, mxc_error *e)
{
    _cleanup_loaded_ loaded l = {.dirfd = -1};
    if (load(rootfd, id, &l.dirfd, &l.s, e) < 0)
        return -1;
    _cleanup_fd_ int pfd = oci_state_status(l.dirfd, &l.s) == OCI_STOPPED ? -1 : pidfd_of(&l.s);
    if (pfd < 0 && all)
        return 0; /* --all signals every process there is: none (runc answers the same) */
    if (pfd < 0)
        return mxc_err(e, MXC_E_ALREADY_STOPPED, "container not running");
    oci_cgroup cg;
    if (all && oci_cgroup_load(l.dirfd, &cg))
        oci_cgroup_signal(&cg, sig); /* every process in the container's cgroup (a frozen one thawed for SIGKILL) */
    /* (SIGKILL to its init takes them all); a pod's PID namespace joined is the pod's, not the member's:
     * its cgroup's processes only */
    if (all && sig != SIGKILL && pid_ns_init(l.s.pid))
        signal_pid_namespace(l.s.pid, sig);
    if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0)
        return mxc_err_os(e, errno == ESRCH ? MXC_E_ALREADY_STOPPED : MXC_E_BACKEND_ERROR, "oci.kill", errno, NULL,
                          errno == ESRCH ? "container not running" : "kill");
    return 0;
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
            mxc_fd_path(fd, dir, sizeof dir);
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
                mxc_fd_path(cfd, dir, sizeof dir);
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

/* The signals that would end mxc-oci forwarded to child instead (run's and exec's, as runc's). */
static void forward_signals(pid_t child)
{
    run_child = child;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &(struct sigaction){.sa_handler = forward, .sa_flags = SA_RESTART}, NULL);
}

/* Stdio relayed (stdiorelay.h) until child exits, then closed: nothing of the container reaches
 * the terminal any more. */
static void relay_stdio(oci_stdio *io, pid_t child)
{
    int pidfd = oci_stdio_relays(io) ? (int)syscall(SYS_pidfd_open, child, 0) : -1;
    if (pidfd >= 0) {
        oci_stdio_relay(io, pidfd);
        close(pidfd);
    }
    oci_stdio_close(io);
}

int oci_run(int rootfd, const char *id, const char *bundle, const char *pid_file, const char *console, int preserve,
            int cgroup, bool detach, bool keep, int *status, mxc_error *e)
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
    /* without a terminal: pipes in place of the caller's stdio that are terminals, relayed (stdiorelay.h) */
    oci_stdio io = OCI_STDIO_NONE;
    if (oci_create(rootfd, id, bundle, pid_file, console, preserve, cgroup, !detach, &child, detach ? NULL : &io,
                   e) < 0) {
        oci_relay_close(&relay);
        oci_stdio_close(&io);
        return -1;
    }
    if (relay.listen_fd >= 0 && oci_relay_receive(&relay, e) < 0) {
        mxc_error dummy = {0};
        oci_delete(rootfd, id, true, &dummy);
        waitpid(child, NULL, 0);
        oci_relay_close(&relay);
        oci_stdio_close(&io);
        return -1;
    }
    if (!detach)
        forward_signals(child);
    if (oci_start(rootfd, id, e) < 0) {
        mxc_error dummy = {0};
        oci_delete(rootfd, id, true, &dummy);
        if (!detach)
            waitpid(child, NULL, 0);
        oci_relay_close(&relay);
        oci_stdio_close(&io);
        return -1;
    }
    if (detach)
        return 0;
    relay_stdio(&io, child);
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

/* the store's containers, in the order of their ids, as runc lists them (oci_store_ids) */
json_t *oci_list(int rootfd)
{
    json_t *out = json_array(), *ids = oci_store_ids(rootfd), *id;
    size_t k;
    json_array_foreach(ids, k, id) {
        mxc_error e = {0};
        json_t *j = oci_query(rootfd, json_string_value(id), &e);
        if (j)
            json_array_append_new(out, j);
        mxc_error_clear(&e);
    }
    json_decref(ids);
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
        "{s:s, s:s, s:s, s:[sssss]}, {s:s, s:s, s:s, s:[sss]}, {s:s, s:s, s:s, s:[ssss]}, "
        "{s:s, s:s, s:s, s:[sssss]}], "
        "s:{s:{s:[{s:b, s:s}]}, s:[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}], s:[ssssssssss], s:[sssss]}}",
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
        "destination", "/sys/fs/cgroup", "type", "cgroup", "source", "cgroup", "options", "nosuid", "noexec", "nodev",
        "relatime", "ro",
        "linux", "resources", "devices", "allow", 0, "access", "rwm", "namespaces", "type", "pid", "type", "network", "type", "ipc", "type", "uts", "type", "mount",
        "maskedPaths", "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi", "readonlyPaths",
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger");
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
    mxc_idmap_range r[OCI_MAX_IDMAPS];
    size_t n = mxc_userns_read_map(pid, !strcmp(file, "gid_map"), r, OCI_MAX_IDMAPS);
    for (size_t i = 0; i < n; i++)
        m[i] = (oci_idmap){r[i].inside, r[i].outside, r[i].count};
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

/* exec's --user UID[:GID] and --additional-gids set in process p's user: 0, or -1 with e set */
static int exec_user(json_t *p, const oci_exec_opts *o, mxc_error *e)
{
    json_t *user = json_object_get(p, "user");
    if (!json_is_object(user))
        json_object_set_new(p, "user", user = json_object());
    if (o->user) {
        unsigned uid, gid;
        int n = sscanf(o->user, "%u:%u", &uid, &gid);
        if (n < 1 || strspn(o->user, "0123456789:") != strlen(o->user))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--user %s: give UID[:GID] (names are not looked up)",
                           o->user);
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
    return 0;
}

static bool names_cap(json_t *set, const char *cap)
{
    size_t i;
    json_t *v;
    json_array_foreach(set, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), cap))
            return true;
    return false;
}

/* exec's --cap: added to process p's bounding, effective and permitted sets, and to its ambient set
 * where the process has it inheritable (runc's rule since 1.2: --cap adds no inheritable capability,
 * and an ambient one needs it) */
static void exec_caps(json_t *p, const oci_exec_opts *o)
{
    json_t *caps = json_object_get(p, "capabilities");
    if (!json_is_object(caps))
        json_object_set_new(p, "capabilities", caps = json_object());
    json_t *inh = json_object_get(caps, "inheritable");
    const char *sets[] = {"bounding", "effective", "permitted", "ambient"};
    for (size_t k = 0; k < 4; k++) {
        json_t *set = json_object_get(caps, sets[k]);
        if (!json_is_array(set))
            json_object_set_new(caps, sets[k], set = json_array());
        for (size_t i = 0; i < o->ncaps; i++)
            if (k < 3 || (json_is_array(inh) && names_cap(inh, o->caps[i])))
                json_array_append_new(set, json_string(o->caps[i]));
    }
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
    if (exec_user(p, o, e) < 0) {
        json_decref(p);
        return NULL;
    }
    if (o->ncaps)
        exec_caps(p, o);
    if (o->no_new_privs)
        json_object_set_new(p, "noNewPrivileges", json_true());
    return p;
}

/* An exec's state, carried through its steps (oci_exec); exec_release undoes what is left. */
typedef struct {
    int rootfd, dirfd;
    const oci_exec_opts *o;
    oci_state s;
    int pfd, sv[2], console, proc_fd;
    oci_relay relay;
    oci_stdio io;        /* without a terminal: what the process gets for mxc-oci's stdio that are terminals */
    oci_seccomp sc;
    oci_config pc;       /* the process, parsed as create parses the config's */
    json_t *proc;
    oci_cgroup cg;
    bool has_cg, host_net;
    int flags;           /* the container's namespaces to join (those not the runtime's) */
    pid_t a, b;          /* the process that joins, and the one it forks (the exec'd) */
} exec_ctx;

/* exec step: a created or running container, not paused (unless --ignore-paused), its namespaces read */
static int exec_check_container(exec_ctx *x, mxc_error *e)
{
    if (oci_state_status(x->dirfd, &x->s) == OCI_STOPPED || (x->pfd = pidfd_of(&x->s)) < 0)
        return mxc_err(e, MXC_E_ALREADY_STOPPED, "cannot exec in a stopped container");
    x->has_cg = oci_cgroup_load(x->dirfd, &x->cg);
    if (x->has_cg && !x->o->ignore_paused && oci_cgroup_frozen(&x->cg)) /* runc's wording */
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot exec in a paused container (use --ignore-paused to override)");
    x->flags = foreign_namespaces(x->s.pid, &x->host_net);
    if (x->flags < 0 || !(x->flags & CLONE_NEWUSER) || !(x->flags & CLONE_NEWPID))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot read the container's namespaces");
    return 0;
}

/* exec step: the process to run, parsed and checked as create's; the container's seccomp profile;
 * its ids mapped in the container's user namespace */
static int exec_prepare_process(exec_ctx *x, mxc_error *e)
{
    const oci_exec_opts *o = x->o;
    if (!(x->proc = exec_process(x->dirfd, &x->s, o, e)) || exec_apparmor(x->dirfd, x->proc, o, e) < 0 ||
        oci_mxcnet_exec_env(x->dirfd, x->proc, e) < 0 ||
        oci_process_parse(x->proc, x->host_net ? 0 : CLONE_NEWNET, &x->pc, e) < 0 ||
        oci_apparmor_usable(x->pc.apparmor_profile, "process.apparmorProfile", e) < 0)
        return -1;
    /* the host's /proc for the AppArmor exec attribute, before the container's namespaces are joined */
    if (x->pc.apparmor_profile && (x->proc_fd = oci_apparmor_proc("oci.exec", e)) < 0)
        return -1;
    /* the container's own seccomp profile binds its exec'd processes too */
    json_t *doc = saved_config(x->dirfd);
    int r = oci_seccomp_compile_cached(x->rootfd, json_object_get(json_object_get(doc, "linux"), "seccomp"), &x->sc,
                                       e);
    json_decref(doc);
    if (r < 0)
        return -1;
    oci_idmap um[OCI_MAX_IDMAPS], gm[OCI_MAX_IDMAPS];
    size_t nu = read_map(x->s.pid, "uid_map", um), ng = read_map(x->s.pid, "gid_map", gm);
    unsigned h;
    bool mapped = oci_map_id(um, nu, x->pc.uid, &h) && oci_map_id(gm, ng, x->pc.gid, &h);
    for (size_t i = 0; mapped && i < x->pc.ngids; i++)
        mapped = oci_map_id(gm, ng, x->pc.gids[i], &h);
    if (!mapped)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "process.user %u:%u (or an additional gid) is not mapped in the "
                       "container's user namespace", x->pc.uid, x->pc.gid);
    return 0;
}

/* exec step: the process's terminal (a relayed pty, or --console-socket), --preserve-fds, and
 * without a terminal what it gets for mxc-oci's stdio that are terminals (stdiorelay.h) */
static int exec_open_console(exec_ctx *x, mxc_error *e)
{
    const oci_exec_opts *o = x->o;
    /* a terminal, not detached, no --console-socket: mxc-oci relays the pty (relay.h) */
    if (x->pc.terminal && !o->console && !o->detach && oci_relay_open(&x->relay, e) < 0)
        return -1;
    const char *path = x->relay.listen_fd >= 0 ? x->relay.path : o->console;
    if ((x->console = console_connect(path, x->pc.terminal, e)) < 0 && e->code)
        return -1;
    if (oci_check_preserved(o->preserve, e) < 0)
        return -1;
    return x->pc.terminal ? 0 : oci_stdio_open(&x->io, !o->detach, e); /* never the operator's terminal */
}

/* The joining child's messages to exec: the pid of the process it forked ('P' + a pid_t), or why
 * not ('E' + the mxc_error, as oci_exec_main's own failure). */
enum { EXEC_MSG_PID = 'P' };

static _Noreturn void exec_join_fail(int sock, const mxc_error *e)
{
    (void)mxc_error_send(sock, OCI_MSG_FAIL, e);
    _exit(1);
}

/* exec's joining child: not dumpable, in the container's cgroup, then its namespaces; forks the
 * process (oci_exec_main) and says its pid or why not.  Never returns. */
static void exec_join(exec_ctx *x)
{
    int sock = x->sv[1];
    close(x->sv[0]);
    oci_stdio_take(&x->io);
    /* not dumpable before anything of the container can see us (CVE-2019-5736: /proc/PID/exe) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    mxc_error ce = {0};
    if (x->has_cg && oci_cgroup_enter(&x->cg, 0, &ce) < 0) /* its cgroup before its cgroup namespace */
        exec_join_fail(sock, &ce);
    if (setns(x->pfd, x->flags) < 0) {
        mxc_err_os(&ce, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "joining the container's namespaces");
        exec_join_fail(sock, &ce);
    }
    pid_t c = fork();
    if (c == 0)
        oci_exec_main(&x->pc, &x->sc, sock, x->console, x->o->preserve, x->host_net, x->proc_fd);
    if (c < 0) {
        mxc_err_os(&ce, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "fork");
        exec_join_fail(sock, &ce);
    }
    char msg[1 + sizeof c] = {EXEC_MSG_PID};
    memcpy(msg + 1, &c, sizeof c);
    (void)mxc_sockmsg_send(sock, msg, sizeof msg, NULL, 0);
    _exit(0);
}

/* The exec'd process's next message (as mxc_error_recv); a listener it sent first handed to the agent
 * with the container's state ("running", runc's), pid the exec'd process. */
static ssize_t exec_listener(exec_ctx *x, char *msg, size_t len, mxc_error *e)
{
    int fd;
    ssize_t n = mxc_error_recv_fd(x->sv[0], OCI_MSG_FAIL, msg, len, &fd, e);
    if (n != 1 || msg[0] != OCI_MSG_LISTENER || !oci_seccomp_notifies(&x->sc)) {
        if (fd >= 0)
            close(fd);
        return n;
    }
    if (fd < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "exec: protocol error (no seccomp listener)");
    json_t *doc = saved_config(x->dirfd);
    int rc = hand_listener(json_object_get(json_object_get(doc, "linux"), "seccomp"), &x->s, "running", x->b, fd, e);
    json_decref(doc);
    if (rc < 0)
        return -1;
    if (mxc_sockmsg_send_tag(x->sv[0], OCI_MSG_LISTENER_OK, -1) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "exec: the process is gone");
    return mxc_error_recv(x->sv[0], OCI_MSG_FAIL, msg, len, e);
}

/* exec step: the joining child forked (exec_join); its answer, then the exec'd process's
 * (EOF: the exec happened, the socket being close-on-exec) */
static int exec_spawn(exec_ctx *x, mxc_error *e)
{
    /* the exec'd process is re-parented to us when its first parent (the one that joins) exits */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, x->sv) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "socketpair");
    fflush(NULL);
    x->a = fork();
    if (x->a == 0)
        exec_join(x);
    close(x->sv[1]);
    x->sv[1] = -1;
    oci_stdio_given(&x->io);
    if (x->a < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.exec", errno, NULL, "fork");
    char msg[1 + sizeof(pid_t)];
    ssize_t n = mxc_error_recv(x->sv[0], OCI_MSG_FAIL, msg, sizeof msg, e);
    waitpid(x->a, NULL, 0);
    x->a = -1;
    if (n < 0) /* the joining child's report, or a malformed one */
        return -1;
    if (n != (ssize_t)sizeof msg || msg[0] != EXEC_MSG_PID)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "exec: the joining process died");
    pid_t b;
    memcpy(&b, msg + 1, sizeof b);
    if (b <= 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "exec: protocol error");
    x->b = b;
    /* EOF: the exec happened (the socket is close-on-exec); else the process's report, or first its
     * seccomp listener for the agent ('N': the container's profile notifies; runc sends it again) */
    n = exec_listener(x, msg, sizeof msg, e);
    if (n != 0) {
        if (n > 0)
            mxc_err(e, MXC_E_BACKEND_ERROR, "exec: protocol error");
        /* it never execs now (it reported, or waits for the listener's 'n'); killed, since a stopped
         * process (the container's root can stop it) would hold this wait forever */
        kill(x->b, SIGKILL);
        waitpid(x->b, NULL, 0);
        x->b = -1;
        return -1;
    }
    if (x->relay.listen_fd >= 0 && oci_relay_receive(&x->relay, e) < 0)
        return -1;
    return x->o->pid_file ? write_pid_file(x->o->pid_file, x->b, e) : 0;
}

/* exec's last step, which cannot fail: the pty relayed until the process ends, and unless
 * detached, the process waited for (signals forwarded) and its status */
static void exec_wait(exec_ctx *x, int *status)
{
    if (x->relay.master >= 0) {
        int bfd = (int)syscall(SYS_pidfd_open, x->b, 0);
        if (bfd >= 0) {
            oci_relay_copy(&x->relay, bfd);
            close(bfd);
        }
        oci_relay_close(&x->relay);
    }
    if (!x->o->detach) {
        forward_signals(x->b);
        relay_stdio(&x->io, x->b);
        int ws;
        while (waitpid(x->b, &ws, 0) < 0 && errno == EINTR)
            ;
        *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    }
    x->b = -1;
}

/* What an exec holds, released (a process left half-made killed). */
static void exec_release(exec_ctx *x)
{
    if (x->a > 0)
        waitpid(x->a, NULL, 0);
    if (x->b > 0) {
        kill(x->b, SIGKILL);
        waitpid(x->b, NULL, 0);
    }
    int fds[] = {x->sv[0], x->sv[1], x->pfd, x->console, x->proc_fd, x->dirfd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    oci_relay_close(&x->relay);
    oci_stdio_close(&x->io);
    oci_seccomp_free(&x->sc);
    json_decref(x->proc);
    oci_config_free(&x->pc);
    oci_state_free(&x->s);
}

static int (*const exec_steps[])(exec_ctx *, mxc_error *) = {
    exec_check_container, exec_prepare_process, exec_open_console, exec_spawn,
};

int oci_exec(int rootfd, const char *id, const oci_exec_opts *o, int *status, mxc_error *e)
{
    exec_ctx x = {.rootfd = rootfd, .dirfd = -1, .o = o, .pfd = -1, .sv = {-1, -1}, .console = -1, .proc_fd = -1,
                  .relay = {.listen_fd = -1, .master = -1}, .io = OCI_STDIO_NONE, .a = -1, .b = -1};
    *status = 0;
    if (load(rootfd, id, &x.dirfd, &x.s, e) < 0)
        return -1;
    int rc = 0;
    for (size_t s = 0; rc == 0 && s < sizeof exec_steps / sizeof exec_steps[0]; s++)
        rc = exec_steps[s](&x, e);
    if (rc == 0)
        exec_wait(&x, status);
    exec_release(&x);
    return rc < 0 ? -1 : 0;
}

json_t *oci_ps(int rootfd, const char *id, mxc_error *e)
{
    _cleanup_loaded_ loaded l = {.dirfd = -1};
    if (load(rootfd, id, &l.dirfd, &l.s, e) < 0)
        return NULL;
    pid_t init = l.s.pid;
    ino_t ns = oci_state_status(l.dirfd, &l.s) == OCI_STOPPED ? 0 : pidns_of(init);
    json_t *out = json_array();
    if (!ns) /* stopped: its PID namespace went with its init, nothing is left (runc answers the same) */
        return out;
    /* every process of the container's cgroup (or, without one, of its PID namespace), by host pid, the init
     * first */
    json_array_append_new(out, json_integer(init));
    oci_cgroup cg;
    json_t *in_cg = oci_cgroup_load(l.dirfd, &cg) ? oci_cgroup_pids(&cg) : NULL;
    if (in_cg) {
        size_t k;
        json_t *p;
        json_array_foreach(in_cg, k, p)
            if (json_integer_value(p) != init)
                json_array_append(out, p);
        json_decref(in_cg);
        return out;
    }
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        pid_t p = (pid_t)atoi(de->d_name);
        if (p > 0 && p != init && pidns_of(p) == ns)
            json_array_append_new(out, json_integer(p));
    }
    if (d)
        closedir(d);
    return out;
}
