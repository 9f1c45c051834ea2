/* fsview.c — see fsview.h.
 *
 * The caller's half resolves policy paths on the host and opens the sources;
 * the holder's half builds the view.  Both walk paths one component at a
 * time from a directory descriptor: no path string ever goes through a
 * directory that a sandbox can write (CVE-2021-30465 and friends), and
 * nothing is created outside the view's own tmpfs mounts. */
#include "fsview.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "hostpath.h"
#include "mounttree.h"
#include "registry.h"
#include "setidscan.h"
#include "setupops.h"
#include "userns.h"

#define NEWROOT "/tmp" /* a mountpoint inside our private mount namespace only */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int dup_fd(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* ------------------------------------------------------------------------
 * The caller's half: resolution on the host, sources. */

typedef struct {
    const char *own[MXC_REGISTRY_MAX_WRITABLE]; /* host paths this sandbox can write */
    size_t nown;
    mxc_hostpath_rules rules;
    mxc_fsview_sources *s;
} resolver;

/* The symlinks a grant's path went through, to recreate in the view. */
static void record_link(void *ctx, const char *at, const char *target)
{
    mxc_fsview_sources *s = ctx;
    if (s->nlinks < MXC_MAX_VIEW_LINKS) {
        s->links[s->nlinks].at = strdup(at);
        s->links[s->nlinks].target = strdup(target);
        s->nlinks++;
    }
}

static int resolve(resolver *rv, const char *path, bool follow_final, bool record, char *out, size_t outsz, int *fd,
                   int *dir, mxc_error *why)
{
    rv->rules.own = rv->own;
    rv->rules.nown = rv->nown;
    rv->rules.on_link = record ? record_link : NULL;
    rv->rules.ctx = rv->s;
    return mxc_hostpath_resolve(&rv->rules, path, follow_final, out, outsz, fd, dir, why);
}

/* A user namespace whose id maps translate the grant's owner (on disk) to
 * the sandbox's uid: the idmapping of its mount.  Made by a child that
 * only waits; kept per owner for the rest of the setup. */
typedef struct {
    uid_t uid[8];
    gid_t gid[8];
    int fd[8];
    size_t n;
} idmap_cache;

static int idmap_userns(idmap_cache *c, uid_t owner, gid_t group, uid_t to, gid_t tog)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->uid[i] == owner && c->gid[i] == group)
            return c->fd[i];
    if (c->n == sizeof c->fd / sizeof c->fd[0])
        return -ENOSPC;
    const mxc_idmap_range um = {owner, to, 1}, gm = {group, tog, 1};
    int fd = mxc_userns_open(&um, 1, &gm, 1);
    if (fd < 0)
        return fd;
    c->uid[c->n] = owner, c->gid[c->n] = group, c->fd[c->n++] = fd;
    return fd;
}

/* A detached copy of the mount tree at fd, flagged (read-only, nosuid,
 * nodev and, with userns >= 0, idmapped) before it is ever visible; the
 * holder attaches it in its own namespace (a bind cannot cross them).
 * Private: a copy of a shared mount (every mount of a systemd host) is
 * born a peer of the host's, and a mount the holder then makes in it —
 * a nested grant, a mask — would propagate to the host. */
static int clone_tree(int fd, bool readonly, int userns)
{
    mxc_tree_attr a = {.set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (readonly ? MOUNT_ATTR_RDONLY : 0),
                       .propagation = MS_PRIVATE, .idmap = userns >= 0, .userns_fd = userns, .recursive = true};
    return mxc_tree_clone(fd, "", &a);
}

/* As root: the grant's tree, idmapped from its owner to the sandbox's uid,
 * so that the sandbox writes (and reads) as the owner would and what it
 * creates belongs to the owner (setuid/setgid bits are refused by the
 * seccomp filter).  A read-only grant on a filesystem without idmapped
 * mounts is bound as it is (the sandbox reads with its own uid); a
 * read-write one is refused. */
static int grant_tree(const mxc_plan *p, idmap_cache *cache, int fd, const mxc_grant *g, mxc_error *e)
{
    bool ro = g->mode == MXC_GRANT_RO;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.fstat", errno, NULL, "cannot inspect %.200s", g->path);
    int userns = -1;
    if (st.st_uid != p->uid || st.st_gid != p->gid) {
        userns = idmap_userns(cache, st.st_uid, st.st_gid, p->uid, p->gid);
        if (userns < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.idmap", -userns, NULL,
                              "cannot make the id mapping for %.200s", g->path);
    }
    int tree = clone_tree(fd, ro, userns);
    if (tree == -EINVAL && userns >= 0 && ro)
        tree = clone_tree(fd, ro, -1);
    if (tree == -EINVAL && userns >= 0) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                "the filesystem holding %.200s does not support idmapped mounts, which a read-write grant needs "
                "(the sandbox's uid writes as the grant's owner)", g->path);
        mxc_err_set_remediation(e, "grant a directory on ext4, xfs, btrfs or tmpfs, or grant it read-only");
        return -1;
    }
    if (tree < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.open_tree", -tree, NULL, "cannot clone %.200s", g->path);
    return tree;
}

typedef struct {
    mxc_grant g;
    int fd;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    return mxc_grant_depth_cmp(&((const entry *)a)->g, &((const entry *)b)->g);
}

static bool below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || (n == 1 && dir[0] == '/' && path[1]));
}

static int add_entry(entry *v, size_t *n, const char *path, mxc_grant_mode mode, int fd, bool present, bool is_dir,
                     bool on_link, mxc_error *e)
{
    if (*n >= MXC_MAX_GRANTS) {
        if (fd >= 0)
            close(fd);
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "too many filesystem entries once resolved (limit %d)",
                       MXC_MAX_GRANTS);
    }
    v[(*n)++] = (entry){.g = {.path = strdup(path), .mode = mode, .present = present, .is_dir = is_dir,
                              .on_link = on_link},
                        .fd = fd};
    return 0;
}

static int fail_closed(const char *path, mxc_grant_mode mode, mxc_error *e)
{
    mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.mask", ENOENT, NULL,
               "the %s path %.200s does not exist on the host, and a read-write grant of this sandbox lies above it: "
               "the sandbox could create it, and no mask can hold a name that does not exist",
               mode == MXC_GRANT_DENIED ? "denied" : "read-only", path);
    mxc_err_set_remediation(e, "create the path on the host (e.g. an empty file or directory), or drop it from the policy");
    return -1;
}

static int missing_grant(const char *path, mxc_grant_mode mode, mxc_error *e)
{
    mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.grant", ENOENT, NULL,
               "the %s grant %.200s does not exist on the host: nothing is granted in its place, and the sandbox "
               "does not start", mode == MXC_GRANT_RW ? "read-write" : "read-only", path);
    mxc_err_set_remediation(e, "create the path on the host first, or drop it from the policy");
    return -1;
}

/* One policy entry: resolved, opened, and added (twice for a denied
 * symlink: the link and its target). */
static int resolve_entry(const mxc_plan *p, resolver *rv, idmap_cache *cache, const mxc_grant *g, entry *v,
                         size_t *n, mxc_error *e)
{
    char out[4200];
    mxc_error why = {0};
    int fd, dir;
    bool denied = g->mode == MXC_GRANT_DENIED;
    int rc = resolve(rv, g->path, !denied, !denied, out, sizeof out, &fd, &dir, &why);
    if (rc == -ENOENT) {
        /* a denied path that is absent is skipped as upstream does, unless this sandbox could create it;
         * a read-only or read-write grant that is absent is refused, as upstream's bwrap refuses it
         * (docs/wire-contract.md D6), before anything runs */
        bool creatable = g->mode != MXC_GRANT_RW && mxc_registry_inside_writable(dir, rv->own, rv->nown, false);
        close(dir);
        if (creatable)
            return fail_closed(g->path, g->mode, e);
        if (!denied)
            return missing_grant(g->path, g->mode, e);
        return add_entry(v, n, out, g->mode, -1, false, false, false, e);
    }
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.resolve", -rc,
                          -rc == ELOOP ? "grant the symlink's target path itself, outside anything a sandbox can write"
                                       : NULL,
                          "%s", why.message[0] ? why.message : "cannot resolve a filesystem path");
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd), close(dir);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.fstat", err, NULL, "cannot inspect %.200s", out);
    }
    if (denied && S_ISLNK(st.st_mode)) {
        /* upstream masks the target; we mask it and the link (masking more
         * than the sandbox could have asked for hides nothing of the host's) */
        close(dir);
        if (add_entry(v, n, out, MXC_GRANT_DENIED, fd, true, false, true, e) < 0)
            return -1;
        char target_path[4200];
        snprintf(target_path, sizeof target_path, "%s", out);
        int tfd, tdir;
        /* the target as the caller sees it, through every link on the way — also one in this sandbox's own
         * writable grant (issue 27, finding 10: a link there was not followed, and its target stayed
         * readable).  Following a link a sandbox may have planted is safe here, unlike for a grant: it can
         * only add a mask to the sandbox's own view (the link's mask stands whatever the target is), and the
         * holder re-resolves the canonical path beneath the new root with no symlinks */
        mxc_hostpath_rules any = {0};
        rc = mxc_hostpath_resolve(&any, target_path, true, out, sizeof out, &tfd, &tdir, &why);
        if (rc == -ENOENT) {
            bool creatable = mxc_registry_inside_writable(tdir, rv->own, rv->nown, false);
            close(tdir);
            return creatable ? fail_closed(out, MXC_GRANT_DENIED, e) : 0;
        }
        if (rc < 0)
            return 0; /* unreachable (a loop, /proc): nothing there to read; the link's mask stands */
        close(tdir);
        if (fstat(tfd, &st) < 0) {
            close(tfd);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.fstat", errno, NULL, "cannot inspect %.200s", out);
        }
        return add_entry(v, n, out, MXC_GRANT_DENIED, tfd, true, S_ISDIR(st.st_mode), false, e);
    }
    close(dir);
    if (!denied && rv->s->cloned) {
        mxc_grant rg = {.path = out, .mode = g->mode};
        int tree = grant_tree(p, cache, fd, &rg, e);
        close(fd);
        if (tree < 0)
            return -1;
        fd = tree;
    }
    return add_entry(v, n, out, g->mode, fd, true, S_ISDIR(st.st_mode), false, e);
}

int mxc_fsview_open_sources(mxc_plan *p, mxc_fsview_sources *s, mxc_error *e)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < MXC_MAX_GRANTS; i++)
        s->grant_fd[i] = -1;
    s->workspace_fd = s->etc_fd = -1;
    s->cloned = geteuid() == 0;
    resolver rv = {.rules = {.claims = true}, .s = s};
    for (size_t i = 0; i < p->ngrants && rv.nown < MXC_REGISTRY_MAX_WRITABLE - 1; i++)
        if (p->grants[i].mode == MXC_GRANT_RW)
            rv.own[rv.nown++] = p->grants[i].path;
    if (p->workspace)
        rv.own[rv.nown++] = p->workspace;
    entry *v = calloc(MXC_MAX_GRANTS, sizeof *v);
    if (!v)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    size_t n = 0;
    idmap_cache cache = {.n = 0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->ngrants; i++)
        rc = resolve_entry(p, &rv, &cache, &p->grants[i], v, &n, e);
    for (size_t i = 0; i < cache.n; i++)
        close(cache.fd[i]);
    if (rc == 0 && p->workspace) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = (int)syscall(SYS_openat2, AT_FDCWD, p->workspace, &how, sizeof how);
        s->workspace_fd = fd;
        if (fd >= 0 && s->cloned) {
            s->workspace_fd = clone_tree(fd, false, -1);
            close(fd);
        }
        if (s->workspace_fd < 0)
            rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.workspace", fd < 0 ? errno : -s->workspace_fd, NULL,
                            "cannot open the workspace");
        if (s->workspace_fd < 0)
            s->workspace_fd = -1;
    }
    if (rc == 0) {
        /* merge paths that resolved alike (most restrictive wins), most specific last */
        qsort(v, n, sizeof *v, entry_cmp);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (m && strcmp(v[m - 1].g.path, v[i].g.path) == 0) {
                entry *keep = &v[m - 1], *drop = &v[i];
                if (drop->g.mode > keep->g.mode || (drop->g.on_link && !keep->g.on_link)) {
                    entry t = *keep;
                    *keep = *drop;
                    *drop = t;
                }
                free(drop->g.path);
                close_fd(&drop->fd);
                continue;
            }
            v[m++] = v[i];
        }
        n = m;
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n && v[i].g.mode == MXC_GRANT_DENIED && v[i].g.is_dir; j++)
                v[i].g.covers |= below(v[j].g.path, v[i].g.path);
        for (size_t i = 0; i < p->ngrants; i++)
            free(p->grants[i].path);
        for (size_t i = 0; i < n; i++) {
            p->grants[i] = v[i].g;
            s->grant_fd[i] = v[i].fd;
        }
        p->ngrants = n;
    } else {
        for (size_t i = 0; i < n; i++) {
            free(v[i].g.path);
            close_fd(&v[i].fd);
        }
        mxc_fsview_close_sources(s);
    }
    free(v);
    return rc;
}

void mxc_fsview_close_sources(mxc_fsview_sources *s)
{
    for (size_t i = 0; i < MXC_MAX_GRANTS; i++)
        close_fd(&s->grant_fd[i]);
    close_fd(&s->workspace_fd);
    close_fd(&s->etc_fd);
    for (size_t i = 0; i < s->nlinks; i++) {
        free(s->links[i].at);
        free(s->links[i].target);
    }
    s->nlinks = 0;
}

/* Rootless: replaces the parent's O_PATH fd by a clone made here, of the
 * same inode re-resolved without symlinks (a swap in between is refused). */
static int localize(const char *path, int *fd, bool readonly)
{
    struct stat before, now;
    if (fstat(*fd, &before) < 0)
        return -errno;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int here = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (here < 0)
        return -errno;
    if (fstat(here, &now) < 0 || now.st_dev != before.st_dev || now.st_ino != before.st_ino) {
        close(here);
        return -ESTALE;
    }
    int tree = clone_tree(here, readonly, -1);
    close(here);
    if (tree < 0)
        return tree;
    close(*fd);
    *fd = tree;
    return 0;
}

static int localize_sources(const mxc_plan *p, mxc_fsview_sources *s)
{
    for (size_t i = 0; i < p->ngrants; i++) {
        if (s->grant_fd[i] < 0 || p->grants[i].mode == MXC_GRANT_DENIED)
            continue;
        int rc = localize(p->grants[i].path, &s->grant_fd[i], p->grants[i].mode == MXC_GRANT_RO);
        if (rc < 0)
            return rc;
    }
    if (s->workspace_fd >= 0)
        return localize(p->workspace, &s->workspace_fd, false);
    return 0;
}

/* ------------------------------------------------------------------------
 * The holder's half: the view, from descriptors only. */

#define VIEW_MAX_MOUNTS (MXC_MAX_GRANTS + 32)

typedef struct {
    int root;                  /* the new root */
    bool by_flags;             /* verify: a mount is writable when it is not read-only */
    uint64_t ours[MXC_MAX_GRANTS + 16]; /* our tmpfs mounts: mount targets may be made in them */
    size_t nours;
    uint64_t rw[VIEW_MAX_MOUNTS]; /* mounts the workload will be able to write */
    size_t nrw;
    int later_ro[MXC_MAX_GRANTS + 16]; /* our tmpfs mounts made read-only at the end */
    size_t nlater;
    int mask_src;              /* detached tmpfs: "f" (an empty mode-000 file), "d" (a mode-000 directory) */
} view;

static uint64_t mnt_id(int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0)
        return 0;
    return sx.stx_mnt_id;
}

static bool in_set(const uint64_t *set, size_t n, uint64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == id)
            return true;
    return false;
}

static void add_id(uint64_t *set, size_t *n, size_t cap, uint64_t id)
{
    if (*n < cap && id)
        set[(*n)++] = id;
}

static bool writable_mount(const view *v, int fd)
{
    if (v->by_flags) {
        struct statvfs sv;
        return fstatvfs(fd, &sv) == 0 && !(sv.f_flag & ST_RDONLY);
    }
    return in_set(v->rw, v->nrw, mnt_id(fd));
}

/* One component, never through a symlink, never above dir. */
static int step(int dir, const char *name)
{
    struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, dir, name, &how, sizeof how);
}

enum { MAKE_NONE = 0, MAKE_DIR, MAKE_FILE };

/* Next component of *p into comp; false at the end. */
static bool next_comp(const char **p, char comp[256], bool *final)
{
    while (**p == '/')
        (*p)++;
    size_t len = strcspn(*p, "/");
    if (!len || len > 255)
        return false;
    memcpy(comp, *p, len);
    comp[len] = '\0';
    *p += len;
    while (**p == '/')
        (*p)++;
    *final = !**p;
    return true;
}

/* Opens path in the view, component by component from the new root.
 * Missing components are made (directories; the last per make) only in
 * our own tmpfs mounts; a missing one elsewhere (inside a bound grant) is
 * -ENOENT: the host changed under us, and we fail closed.  A symlink is
 * -ELOOP, except a final one when allow_link. */
static int walk(const view *v, const char *path, int make, bool allow_link)
{
    /* The common case in one call: the whole path, never through a
     * symlink (a trailing one too, unless allowed), never above the root. */
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | (allow_link ? O_NOFOLLOW : 0),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    const char *rel = path + strspn(path, "/");
    int whole = (int)syscall(SYS_openat2, v->root, *rel ? rel : ".", &how, sizeof how);
    if (whole >= 0 || errno != ENOENT || !make)
        return whole >= 0 ? whole : -errno;
    /* something is missing: component by component, making what may be made */
    int cur = dup_fd(v->root);
    if (cur < 0)
        return -errno;
    const char *p = path;
    char comp[256];
    bool final = true;
    while (next_comp(&p, comp, &final)) {
        int fd = step(cur, comp);
        if (fd < 0 && errno == ENOENT && make && in_set(v->ours, v->nours, mnt_id(cur))) {
            int r = !final || make == MAKE_DIR ? mkdirat(cur, comp, 0755) : mknodat(cur, comp, S_IFREG | 0644, 0);
            if (r < 0 && errno != EEXIST) {
                int err = errno;
                close(cur);
                return -err;
            }
            fd = step(cur, comp);
        }
        if (fd < 0) {
            int err = errno;
            close(cur);
            return -err;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || (S_ISLNK(st.st_mode) && !(final && allow_link)) ||
            (!final && !S_ISDIR(st.st_mode))) {
            int err = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
            close(fd), close(cur);
            return -err;
        }
        close(cur);
        cur = fd;
    }
    return cur;
}

/* A mount of the same directory onto itself: a mount point cannot be
 * renamed or removed from inside, so a mask below it stays where the
 * policy put it. */
static int self_bind(view *v, int fd)
{
    int tree = mxc_tree_open(fd, "", true, false);
    if (tree < 0)
        return tree;
    int rc = move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? -errno : 0;
    if (rc == 0) {
        uint64_t id = mnt_id(tree);
        add_id(v->rw, &v->nrw, VIEW_MAX_MOUNTS, id);
        if (in_set(v->ours, v->nours, mnt_id(fd))) /* still our tmpfs: targets may be made in it */
            add_id(v->ours, &v->nours, sizeof v->ours / sizeof v->ours[0], id);
    }
    close(tree);
    return rc;
}

/* Pins every directory on the way to path that lies in a mount the
 * workload can write and is not a mount point already (each pin makes the
 * next walk see a mount root there). */
static int pin_dirs(view *v, const char *path)
{
    for (int round = 0; round < 256; round++) {
        int cur = dup_fd(v->root);
        if (cur < 0)
            return -errno;
        uint64_t mnt = mnt_id(cur);
        const char *p = path;
        char comp[256];
        bool final = false;
        int pin = -1;
        while (pin < 0 && next_comp(&p, comp, &final) && !final) {
            int fd = step(cur, comp);
            if (fd < 0)
                break; /* the attach that follows will say what is wrong */
            uint64_t m = mnt_id(fd);
            if (m == mnt && writable_mount(v, fd))
                pin = fd;
            else
                mnt = m;
            close(cur);
            cur = pin >= 0 ? -1 : fd;
        }
        close_fd(&cur);
        if (pin < 0)
            return 0;
        int rc = self_bind(v, pin);
        close(pin);
        if (rc < 0)
            return rc;
    }
    return -ELOOP;
}

static int attach(int tree, int target)
{
    return mxc_view_attach(tree, target);
}

/* A new tmpfs of ours, detached; ro_later: writable until the end of the
 * setup (mount targets are made in it), then read-only. */
static int new_tmpfs(view *v, const char *mode, const char *size, unsigned attrs, bool ro_later)
{
    const char *const opts[] = {"mode", mode, "size", size, NULL};
    int m = mxc_fresh_fs("tmpfs", opts, attrs);
    if (m < 0)
        return m;
    add_id(v->ours, &v->nours, sizeof v->ours / sizeof v->ours[0], mnt_id(m));
    if (ro_later && v->nlater < sizeof v->later_ro / sizeof v->later_ro[0])
        v->later_ro[v->nlater++] = dup_fd(m);
    return m;
}

static int set_readonly(int fd, bool recursive)
{
    return mxc_tree_setattr(fd, &(mxc_tree_attr){.set = MOUNT_ATTR_RDONLY, .recursive = recursive});
}

/* The mask sources: one empty mode-000 file and one mode-000 directory,
 * cloned (read-only) onto every denied path. */
static int make_mask_src(view *v)
{
    int m = new_tmpfs(v, "0755", "4k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false);
    if (m < 0)
        return m;
    int f = openat(m, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
    if (f < 0 || mkdirat(m, "d", 0) < 0) {
        int err = errno;
        if (f >= 0)
            close(f);
        close(m);
        return -err;
    }
    close(f);
    int rc = set_readonly(m, false); /* every clone of it is read-only from birth */
    if (rc < 0) {
        close(m);
        return rc;
    }
    v->mask_src = m;
    return 0;
}

/* The mask of the object st describes: a directory's an empty mode-000
 * read-only directory (or, when covers, a tmpfs of its own in which the
 * targets of the entries below it are made, read-only at the end, mode 0111
 * so that they stay reachable), anything else's an empty mode-000
 * read-only file: it stays a non-directory.  A detached tree, or -errno. */
static int mask_tree(view *v, const struct stat *st, bool covers)
{
    if (S_ISDIR(st->st_mode) && covers)
        return new_tmpfs(v, "0111", "64k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true);
    int tree = open_tree(v->mask_src, S_ISDIR(st->st_mode) ? "d" : "f", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    return tree < 0 ? -errno : tree;
}

/* Masks the object at target (re-verification: never a covering one). */
static int mask_at(view *v, int target)
{
    struct stat st;
    if (fstat(target, &st) < 0)
        return -errno;
    int tree = mask_tree(v, &st, false);
    if (tree < 0)
        return tree;
    int rc = attach(tree, target);
    close(tree);
    return rc;
}

/* The view as the setup operations' executor sees it (setupops.h): targets
 * walked from the new root, made only in our own tmpfs, never through a
 * symlink (a final one is the target of a mask of a link); masks of ours. */
static int view_resolve(void *ctx, const mxc_setup_op *op, const char *path, bool create, bool dir)
{
    return walk(ctx, path, !create ? MAKE_NONE : dir ? MAKE_DIR : MAKE_FILE, (op->flags & MXC_OPF_LINK) != 0);
}

static int view_mask_tree(void *ctx, const mxc_setup_op *op, const struct stat *st)
{
    return mask_tree(ctx, st, (op->flags & MXC_OPF_HOLDS) != 0);
}

/* ops applied by the one executor on our view.  0, or -errno (the failed operation's). */
static int run_ops(view *v, const mxc_setup_op *ops, size_t n)
{
    mxc_setup_env env = {.root = v->root, .resolve = view_resolve, .mask_tree = view_mask_tree, .ctx = v};
    mxc_error e = {0};
    if (mxc_setup_run(&env, ops, n, &e) == 0)
        return 0;
    int err = e.native ? e.native : EIO;
    mxc_error_clear(&e);
    return -err;
}

/* The detached tree (consumed) attached at path in the view, made there (in our tmpfs) as a
 * directory or a file after the tree. */
static int attach_at(view *v, int tree, const char *path)
{
    mxc_setup_op op = mxc_setup_op_at(MXC_OP_ATTACH, path, 0);
    op.src = tree;
    return run_ops(v, &op, 1);
}

/* A detached, read-only, private copy of the mount tree at a host path
 * (clone_tree) — the host's own files, not anything a sandbox writes. */
static int host_tree(const char *path)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int tree = clone_tree(fd, true, -1);
    close(fd);
    return tree;
}

/* A host path of the holder's (copied) mount namespace, read-only, onto
 * inside: system directories and /etc entries. */
static int bind_host(view *v, const char *source, const char *inside)
{
    int tree = host_tree(source);
    return tree < 0 ? tree : attach_at(v, tree, inside);
}

static int system_dirs(view *v)
{
    const char *dirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        struct stat st;
        if (lstat(dirs[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode)) { /* merged /usr: recreate the link */
            char target[256];
            ssize_t n = readlink(dirs[i], target, sizeof target - 1);
            if (n < 0)
                return -errno;
            target[n] = '\0';
            if (symlinkat(target, v->root, dirs[i] + 1) < 0)
                return -errno;
            continue;
        }
        int rc = bind_host(v, dirs[i], dirs[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int write_at(int dir, const char *name, const char *text)
{
    int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    /* the mode whatever the caller's umask (0600 files of host root's are
     * nobody's to read inside) */
    ssize_t n = fchmod(fd, 0644) < 0 ? -1 : write(fd, text, len);
    int err = errno;
    close(fd);
    return n == (ssize_t)len ? 0 : -(n < 0 ? err : EIO);
}

/* Small configuration files are copied into the (later read-only) root
 * tmpfs rather than bound: a copy is a few system calls, a bind a mount
 * to create and, at exit, to tear down — /etc alone was half the view's
 * mounts.  The copy is the file as it was when the sandbox started. */
#define ETC_COPY_MAX (256 * 1024)

static int copy_in(int etc, const char *path, const struct stat *st)
{
    int in = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (in < 0)
        return errno == EACCES ? -EAGAIN : -errno; /* unreadable here: bind it instead */
    int out = openat(etc, strrchr(path, '/') + 1, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
                     st->st_mode & 0644);
    int rc = out < 0 ? -errno : 0;
    if (rc == 0 && fchmod(out, st->st_mode & 0644) < 0) /* whatever the umask, as write_at */
        rc = -errno;
    if (rc == 0)
        rc = mxc_copy_size(in, out, st->st_size);
    close(in);
    if (out >= 0)
        close(out);
    return rc;
}

/* /etc: only what programs need to run; no shadow, no host identities.
 * The agent is MXC_INNER_UID, named after the sandbox, its home the
 * workspace (or the default cwd of a one-shot).  Filled into the
 * directory etc; what is not a small regular file goes through bind (a
 * read-only recursive bind of the host's entry onto etc/NAME). */
typedef int (*etc_bind_fn)(void *ctx, int etc, const char *path);

static int fill_etc(int etc, const mxc_plan *p, etc_bind_fn bind, void *ctx)
{
    static const char *const keep[] = {
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
        "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates", "/etc/hosts", "/etc/resolv.conf",
        "/etc/mime.types", "/etc/bash.bashrc", "/etc/profile", "/etc/inputrc", "/etc/protocols", "/etc/services",
        "/etc/python3", "/etc/python3.11", "/etc/debian_version", "/etc/os-release", "/etc/terminfo", "/etc/magic",
        "/etc/locale.alias", "/etc/gai.conf"};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof keep / sizeof keep[0]; i++) {
        struct stat st;
        /* the host's resolvers only on the host network: model 1 asks the
         * userspace stack's forwarder (below), models 2 and 3 get none */
        if (!strcmp(keep[i], "/etc/resolv.conf") && p->net.model != MXC_NETM_HOST)
            continue;
        if (stat(keep[i], &st) < 0)
            continue;
        rc = S_ISREG(st.st_mode) && st.st_size <= ETC_COPY_MAX ? copy_in(etc, keep[i], &st) : -EAGAIN;
        if (rc == -EAGAIN)
            rc = bind(ctx, etc, keep[i]);
    }
    char passwd[600], group[256], hostname[80];
    const char *name = p->agent_name[0] ? p->agent_name : "agent";
    snprintf(passwd, sizeof passwd, "%s:x:%d:%d:mxc agent:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
             name, MXC_INNER_UID, MXC_INNER_GID, mxc_plan_default_cwd(p));
    snprintf(group, sizeof group, "%s:x:%d:\nnogroup:x:65534:\n", name, MXC_INNER_GID);
    snprintf(hostname, sizeof hostname, "%s\n", p->hostname);
    if (rc == 0)
        rc = write_at(etc, "passwd", passwd);
    if (rc == 0)
        rc = write_at(etc, "group", group);
    if (rc == 0)
        rc = write_at(etc, "hostname", hostname);
    /* model 1: the forwarder of the stack; whether a query gets out is the
     * rules' business like any other packet (egress.default allow, or an
     * allow covering MXC_NET_DNS port 53).  Without one (the host's
     * resolver is host loopback, src/net/resolver.h) the file says why */
    if (rc == 0 && p->net.model == MXC_NETM_DIRECT) {
        char why[sizeof p->net.dns_why + 16];
        snprintf(why, sizeof why, "# mxc: %s\n", p->net.dns_why);
        rc = write_at(etc, "resolv.conf", p->net.dns[0] ? "nameserver " MXC_NET_DNS "\n" : why);
    }
    return rc;
}

static int bind_in_view(void *ctx, int etc, const char *path)
{
    (void)etc;
    return bind_host(ctx, path, path);
}

/* The holder's own /etc, in the root tmpfs (when the caller made none). */
static int curated_etc(view *v, const mxc_plan *p)
{
    int etc = walk(v, "/etc", MAKE_DIR, false);
    if (etc < 0)
        return etc;
    int rc = fill_etc(etc, p, bind_in_view, v);
    close(etc);
    return rc;
}

/* The caller's: a read-only recursive bind of the host's entry onto a
 * mount target made for it in the detached tmpfs etc. */
static int bind_detached(void *ctx, int etc, const char *path)
{
    (void)ctx;
    int tree = host_tree(path);
    if (tree < 0)
        return tree;
    struct stat st;
    int rc = fstat(tree, &st) < 0 ? -errno : 0;
    const char *name = strrchr(path, '/') + 1;
    if (rc == 0 && S_ISDIR(st.st_mode) && mkdirat(etc, name, 0755) < 0)
        rc = -errno;
    if (rc == 0 && !S_ISDIR(st.st_mode)) {
        int f = openat(etc, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (f < 0)
            rc = -errno;
        else
            close(f);
    }
    if (rc == 0 && move_mount(tree, "", etc, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        rc = -errno;
    close(tree);
    return rc;
}

static bool under_etc(const char *path)
{
    return path && !strncmp(path, "/etc", 4) && (path[4] == '/' || path[4] == '\0');
}

int mxc_fsview_prepare_etc(const mxc_plan *p, const mxc_fsview_sources *s)
{
    /* root only (a tmpfs of the host's user namespace); and no grant, mask
     * or recreated link may lie in /etc: the holder could make no mount
     * target in a tmpfs it does not own */
    if (!s->cloned)
        return -1;
    for (size_t i = 0; i < p->ngrants; i++)
        if (under_etc(p->grants[i].path))
            return -1;
    for (size_t i = 0; i < s->nlinks; i++)
        if (under_etc(s->links[i].at))
            return -1;
    if (under_etc(p->workspace))
        return -1;
    const char *opts[] = {"mode", "0755", "size", "4m", NULL};
    int m = mxc_fresh_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (m < 0)
        return -1;
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if (fill_etc(m, p, bind_detached, NULL) < 0 || mount_setattr(m, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof ro) < 0) {
        close(m);
        return -1;
    }
    return m;
}

/* A tmpfs's size: dflt, or — where only RLIMIT_AS bounds memory (no
 * memory cgroup) — at most 1/share of the memory limit, since tmpfs pages
 * count against no rlimit. */
static void tmpfs_size(const mxc_plan *p, unsigned long long dflt, unsigned share, char *out, size_t outsz)
{
    unsigned long long size = dflt;
    if (p->as_rlimit && p->memory_max / share < size)
        size = p->memory_max / share;
    snprintf(out, outsz, "%llu", size < 4096 ? 4096 : size);
}

/* The host's harmless device nodes (setupops.h), read-only binds on nodes of their own names in
 * /dev (setup operations). */
static int dev_nodes(view *v)
{
    int trees[MXC_DEV_NNODES];
    size_t failed;
    int rc = mxc_dev_node_trees(trees, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, &failed);
    if (rc < 0)
        return rc;
    mxc_setup_op ops[MXC_DEV_NNODES];
    return run_ops(v, ops, mxc_setup_dev_nodes(ops, trees));
}

/* /dev: a tmpfs of its own, read-only once made, holding read-only binds
 * of the host's harmless device nodes (a read-only mount still passes I/O
 * to a device, but refuses chmod, chown, utimensat: the host's nodes keep
 * their mode and times), a private devpts, /dev/shm. */
static int minimal_dev(view *v, const mxc_plan *p)
{
    int dev = new_tmpfs(v, "0755", "64k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, true);
    int rc = dev < 0 ? dev : attach_at(v, dev, "/dev");
    if (rc == 0)
        rc = dev_nodes(v);
    static const char *const pts_opts[] = {"newinstance", "ptmxmode=0666", "mode=0620"};
    char shm_size[48] = "size=";
    tmpfs_size(p, 64ull << 20, 8, shm_size + 5, sizeof shm_size - 5);
    const char *const shm_opts[] = {"mode=1777", shm_size};
    mxc_setup_op ops[2 + MXC_DEV_NLINKS];
    ops[0] = mxc_setup_op_at(MXC_OP_FRESHFS, "/dev/pts", 0);
    ops[0].fstype = "devpts", ops[0].fsopt = pts_opts, ops[0].nfsopt = 3;
    ops[0].attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
    ops[1] = mxc_setup_op_at(MXC_OP_FRESHFS, "/dev/shm", 0);
    ops[1].fstype = "tmpfs", ops[1].fsopt = shm_opts, ops[1].nfsopt = 2;
    ops[1].attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (rc == 0)
        rc = run_ops(v, ops, 2 + mxc_setup_dev_links(ops + 2));
    int shm = rc == 0 ? walk(v, "/dev/shm", MAKE_NONE, false) : -1; /* the workload's to write */
    if (rc == 0 && shm < 0)
        rc = shm;
    if (shm >= 0) {
        add_id(v->rw, &v->nrw, VIEW_MAX_MOUNTS, mnt_id(shm));
        close(shm);
    }
    return rc;
}

/* Fresh proc for our PID namespace, hidepid=invisible: a process sees
 * only those it may ptrace, and each exec is its own Landlock domain, so
 * an exec sees neither mxc's processes nor another exec's (their argv,
 * environ, memory).  The /proc rules of setupops.h: kernel-wide knobs
 * read-only; kernel memory, key, timer and allocator listings masked. */
static int fresh_proc(view *v)
{
    static const char *const opts[] = {"hidepid=invisible"};
    mxc_setup_op ops[1 + MXC_PROC_NRULES];
    ops[0] = mxc_setup_op_at(MXC_OP_FRESHFS, "/proc", 0);
    ops[0].fstype = "proc", ops[0].fsopt = opts, ops[0].nfsopt = 1;
    ops[0].attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    size_t n = 1 + mxc_setup_proc_rules(ops + 1, "/proc mask", "/proc read-only");
    return run_ops(v, ops, n);
}

/* Entries come most specific last, and each pins the directories on its
 * way before it is attached: so whatever lies below a directory when it is
 * pinned was attached after it, on the pin — a pin never copies (and so
 * never leaves behind) a mount of ours. */
static int attach_entry(view *v, const mxc_grant *g, int fd)
{
    int rc;
    if (g->mode != MXC_GRANT_DENIED) { /* the way there first (in our tmpfs only), so that it is pinned */
        char parent[4200];
        snprintf(parent, sizeof parent, "%s", g->path);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            int d = walk(v, parent, MAKE_DIR, false);
            if (d < 0)
                return d;
            close(d);
        }
    }
    if ((rc = pin_dirs(v, g->path)) < 0)
        return rc;
    if (g->mode == MXC_GRANT_DENIED) { /* not in the view at all (absent): nothing to hide */
        mxc_setup_op op = mxc_setup_op_at(MXC_OP_MASK, g->path, MXC_OPF_OPTIONAL | (g->on_link ? MXC_OPF_LINK : 0) |
                                                                    (g->covers ? MXC_OPF_HOLDS : 0));
        return run_ops(v, &op, 1);
    }
    int tree = dup_fd(fd); /* the sources keep theirs */
    rc = tree < 0 ? -errno : attach_at(v, tree, g->path);
    if (rc == 0 && g->mode == MXC_GRANT_RW)
        add_id(v->rw, &v->nrw, VIEW_MAX_MOUNTS, mnt_id(fd));
    return rc;
}

/* The symlinks the caller's paths went through, where they would be
 * missing: in our own tmpfs.  Elsewhere (a bound directory) they are the
 * host's own and already there. */
static void recreate_links(view *v, const mxc_fsview_sources *s)
{
    for (size_t i = 0; i < s->nlinks; i++) {
        char parent[4200];
        snprintf(parent, sizeof parent, "%s", s->links[i].at);
        char *slash = strrchr(parent, '/');
        if (!slash)
            continue;
        *slash = '\0';
        int d = walk(v, parent[0] ? parent : "/", MAKE_DIR, false);
        if (d < 0)
            continue;
        /* best effort: an entry already there (EEXIST: another path went through the same link) is the
         * same link, and a grant reached through a link that could not be made is still reachable by its
         * canonical path */
        if (in_set(v->ours, v->nours, mnt_id(d))) {
            int made = symlinkat(s->links[i].target, d, slash + 1);
            (void)made;
        }
        close(d);
    }
}

/* Every set-id or file-capability file in what the workload can write (the
 * workspace, the read-write grants and the writable mounts below them)
 * bound onto itself read-only before the workload exists: a write through a
 * shared mapping keeps both (setidscan.h). */
static int pin_privileged(view *v, const mxc_plan *p, const mxc_fsview_sources *s)
{
    mxc_setid_scan scan = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i <= p->ngrants; i++) {
        const char *path = i == p->ngrants ? (s->workspace_fd >= 0 ? p->workspace : NULL) : p->grants[i].path;
        if (!path || (i < p->ngrants && (p->grants[i].mode != MXC_GRANT_RW || !p->grants[i].present)))
            continue;
        int t = walk(v, path, MAKE_NONE, false);
        rc = t < 0 ? t : mxc_setid_pin(t, &scan);
        if (t >= 0)
            close(t);
    }
    mxc_setid_scan_free(&scan);
    return rc;
}

static void view_close(view *v)
{
    close_fd(&v->root);
    close_fd(&v->mask_src);
    for (size_t i = 0; i < v->nlater; i++)
        close_fd(&v->later_ro[i]);
    v->nlater = 0;
}

int mxc_fsview_build(const mxc_plan *p, mxc_fsview_sources *s, const char **stage)
{
    int rc;
    view *v = calloc(1, sizeof *v);
    if (!v)
        return -ENOMEM;
    v->root = v->mask_src = -1;
    *stage = "fsview.make_private";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) { /* nothing propagates back to the host */
        rc = -errno;
        goto out;
    }
    *stage = "fsview.sources";
    if (!s->cloned && (rc = localize_sources(p, s)) < 0)
        goto out;
    *stage = "fsview.root_tmpfs";
    /* The mask source is attached under the root, at the same place in
     * the old tree, so that the old root's one unmount takes it too: a
     * detached tree dissolves when its last fd closes, and that unmount
     * waits for an RCU grace period of its own (0.1-4 ms here, once per
     * start and one-shot). */
    if ((rc = make_mask_src(v)) < 0)
        goto out;
    if (move_mount(v->mask_src, "", AT_FDCWD, NEWROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
        rc = -errno;
        goto out;
    }
    int root = new_tmpfs(v, "0755", "16m", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
    if ((rc = root) < 0)
        goto out;
    rc = move_mount(root, "", AT_FDCWD, NEWROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0 ? -errno : 0;
    v->root = root;
    if (rc < 0)
        goto out;
    *stage = "fsview.system_dirs";
    if ((rc = system_dirs(v)) < 0)
        goto out;
    *stage = "fsview.etc";
    if (s->etc_fd >= 0) { /* made by the caller, read-only already */
        rc = attach_at(v, s->etc_fd, "/etc");
        s->etc_fd = -1;
    } else {
        rc = curated_etc(v, p);
    }
    if (rc < 0)
        goto out;
    *stage = "fsview.dev";
    if ((rc = minimal_dev(v, p)) < 0)
        goto out;
    *stage = "fsview.tmp";
    char tmp_size[32];
    tmpfs_size(p, 256ull << 20, 4, tmp_size, sizeof tmp_size);
    int tmp = new_tmpfs(v, "1777", tmp_size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
    if ((rc = tmp) < 0)
        goto out;
    add_id(v->rw, &v->nrw, VIEW_MAX_MOUNTS, mnt_id(tmp));
    if ((rc = attach_at(v, tmp, "/tmp")) < 0)
        goto out;
    *stage = "fsview.workspace";
    if (s->workspace_fd >= 0) {
        int ws = dup_fd(s->workspace_fd); /* the sources keep theirs */
        if ((rc = ws < 0 ? -errno : attach_at(v, ws, p->workspace)) < 0)
            goto out;
        add_id(v->rw, &v->nrw, VIEW_MAX_MOUNTS, mnt_id(s->workspace_fd));
    }
    *stage = "fsview.grants";
    for (size_t i = 0; i < p->ngrants; i++) {
        if (!p->grants[i].present)
            continue; /* absent on the host */
        if ((rc = attach_entry(v, &p->grants[i], s->grant_fd[i])) < 0)
            goto out;
    }
    recreate_links(v, s);
    *stage = "fsview.setid";
    if ((rc = pin_privileged(v, p, s)) < 0)
        goto out;
    *stage = "fsview.proc";
    if ((rc = fresh_proc(v)) < 0)
        goto out;
    *stage = "fsview.readonly";
    for (size_t i = 0; i < v->nlater; i++)
        if ((rc = set_readonly(v->later_ro[i], false)) < 0)
            goto out;
    if ((rc = set_readonly(v->root, false)) < 0)
        goto out;
    *stage = "fsview.pivot_root";
    rc = mxc_view_enter(v->root);
    /* Shared from here on: the mount namespace an exec makes for its own
     * terminal is a slave of this one, so a mask the holder puts back
     * before a later exec reaches it too. */
    *stage = "fsview.make_shared";
    if (rc == 0 && mount(NULL, "/", NULL, MS_REC | MS_SHARED, NULL) < 0)
        rc = -errno;
out:
    view_close(v);
    free(v);
    return rc;
}

/* ------------------------------------------------------------------------
 * Re-verification inside a live session. */

static bool is_mount_root(int fd)
{
    struct statx sx;
    return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
           (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static bool is_readonly(int fd)
{
    struct statvfs sv;
    return fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* Whether the deepest existing directory on the way to path lies in a
 * mount the workload can write (so a missing name could be made there). */
static bool creatable(const view *v, const char *path)
{
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", path);
    for (char *slash; (slash = strrchr(parent, '/')) != NULL;) {
        *slash = '\0';
        int d = walk(v, parent[0] ? parent : "/", MAKE_NONE, false);
        if (d >= 0) {
            bool w = writable_mount(v, d);
            close(d);
            return w;
        }
        if (!parent[0])
            break;
    }
    return false;
}

/* What cannot be restored: e says it (its errno too), -err for the caller's report. */
static int refuse(mxc_error *e, int err, const char *fmt, const char *path)
{
    mxc_err(e, MXC_E_BACKEND_ERROR, fmt, path);
    e->native = err;
    return -err;
}

int mxc_fsview_verify(const mxc_plan *p, mxc_error *e)
{
    view v = {.root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), .by_flags = true, .mask_src = -1};
    if (v.root < 0)
        return refuse(e, errno, "cannot open %s", "/");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->ngrants; i++) {
        const mxc_grant *g = &p->grants[i];
        if (g->mode == MXC_GRANT_RW)
            continue;
        if ((rc = pin_dirs(&v, g->path)) < 0) {
            rc = refuse(e, -rc, "cannot pin the directories above %.300s", g->path);
            break;
        }
        int t = walk(&v, g->path, MAKE_NONE, g->on_link);
        if (t == -ENOENT) {
            if (g->present && creatable(&v, g->path))
                rc = refuse(e, ENOENT,
                            "%.300s, which the policy masks or makes read-only, was removed or moved away on the host "
                            "while the session runs, and the sandbox could now create it; stop and start the sandbox "
                            "once the host has put it back", g->path);
            continue;
        }
        if (t < 0) {
            rc = refuse(e, -t, "%.300s, which the policy masks or makes read-only, cannot be reached "
                        "without a symlink any more (changed on the host?); stop and start the sandbox", g->path);
            break;
        }
        if (is_mount_root(t) && (g->mode == MXC_GRANT_DENIED || is_readonly(t))) {
            close(t);
            continue; /* intact */
        }
        /* The mount is gone (its dentry was replaced or removed on the
         * host) or was never there (created on the host since): put it
         * back on what the name is now. */
        if (g->mode == MXC_GRANT_DENIED) {
            if (g->covers) {
                rc = refuse(e, ESTALE, "the denied directory %.300s was replaced on the host while the "
                            "session runs, and grants lie below it; stop and start the sandbox", g->path);
            } else {
                if (v.mask_src < 0 && (rc = make_mask_src(&v)) < 0)
                    rc = refuse(e, -rc, "cannot make a mask for %.300s", g->path);
                if (rc == 0 && (rc = mask_at(&v, t)) < 0)
                    rc = refuse(e, -rc, "cannot mask %.300s again", g->path);
            }
        } else {
            if ((rc = mxc_view_readonly_at(t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
                rc = refuse(e, -rc, "cannot make %.300s read-only again", g->path);
        }
        close(t);
    }
    view_close(&v);
    return rc;
}
