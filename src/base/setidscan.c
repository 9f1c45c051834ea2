/* setidscan.c — see setidscan.h. */
#include "setidscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fdio.h"
#include "mounttree.h"
#include "setupops.h"

#ifndef SYS_getxattrat
#define SYS_getxattrat 464 /* Linux 6.13; the same number on every architecture's common table */
#endif

struct getxattr_args { /* struct xattr_args (linux/xattr.h, 6.13) */
    uint64_t value;
    uint32_t size;
    uint32_t flags;
};

#define CAPS_XATTR "security.capability"

static bool privileged_mode(unsigned mode)
{
    return (mode & S_ISUID) || ((mode & S_ISGID) && (mode & S_IXGRP));
}

/* Whether name beneath dir ("": dir itself, maybe an O_PATH descriptor) has security.capability: 1,
 * 0, or -errno.  getxattrat where the kernel has it, else through our own descriptor's /proc entry
 * (never a path of the tree). */
static int has_fcap(int dir, const char *name)
{
    static bool no_at;
    if (!no_at && *name) {
        struct getxattr_args a = {0};
        long r = syscall(SYS_getxattrat, dir, name, AT_SYMLINK_NOFOLLOW, CAPS_XATTR, &a, sizeof a);
        if (r >= 0)
            return 1;
        if (errno == ENODATA || errno == EOPNOTSUPP)
            return 0;
        if (errno != ENOSYS && errno != EPERM) /* EPERM: a seccomp filter of the host's that does not know it */
            return -errno;
        no_at = true;
    }
    char path[64 + 256];
    snprintf(path, sizeof path, "/proc/self/fd/%d%s%s", dir, *name ? "/" : "", name);
    ssize_t r = *name ? lgetxattr(path, CAPS_XATTR, NULL, 0) : getxattr(path, CAPS_XATTR, NULL, 0);
    if (r >= 0)
        return 1;
    return errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
}

/* what a read-only bind of the walk adds besides read-only */
static unsigned long long bind_attrs(const mxc_setid_scan *s)
{
    return s->keep_setid ? MOUNT_ATTR_NODEV : MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
}

/* name beneath dir ("": dir itself), found privileged, bound onto itself read-only if it is still a
 * regular file (swapped since for another one, that one is bound: read-only is never less safe).
 * 0, or -errno. */
static int bind_ro(mxc_setid_scan *s, int dir, const char *name)
{
    int fd = *name ? openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC) : fcntl(dir, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno; /* gone since it was listed: nothing to protect */
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0 && S_ISREG(st.st_mode)) {
        rc = mxc_view_readonly_at(fd, bind_attrs(s));
        if (rc == 0)
            s->bound++;
    }
    close(fd);
    return rc < 0 ? rc : 0;
}

static uint64_t mount_of(int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return 0;
    return sx.stx_mnt_id;
}

static bool seen(const mxc_setid_scan *s, uint64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->ids[i] == id)
            return true;
    return false;
}

/* arr (n elements of size, capacity *cap) with room for one more (the capacity doubled when full):
 * the array, or NULL when memory ran out (arr kept). */
static void *room(void *arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return arr;
    size_t c = *cap ? 2 * *cap : 16;
    void *a = realloc(arr, c * size);
    if (a)
        *cap = c;
    return a;
}

/* A mount to walk: not walked yet (then recorded); *writable whether a file of it can be opened
 * for write (a read-only one is walked too: a writable mount may lie below it).  1, 0 (walked
 * already), or -errno. */
static int enter_mount(mxc_setid_scan *s, int fd, uint64_t id, bool *writable)
{
    struct statvfs sv;
    if (fstatvfs(fd, &sv) < 0)
        return -errno;
    if (seen(s, id))
        return 0;
    *writable = !(sv.f_flag & ST_RDONLY);
    uint64_t *ids = room(s->ids, &s->cap, s->n, sizeof *ids);
    if (!ids)
        return -ENOMEM;
    s->ids = ids;
    s->ids[s->n++] = id;
    return 1;
}

/* name appended to the path of the directory being walked (relative to the start): 0, or
 * -ENAMETOOLONG (the walk goes on below; a privileged file found there refuses the start). */
static int push(mxc_setid_scan *s, const char *name)
{
    size_t n = strlen(name);
    if (s->len + 1 + n >= sizeof s->rel)
        return -ENAMETOOLONG;
    if (s->len)
        s->rel[s->len++] = '/';
    memcpy(s->rel + s->len, name, n + 1);
    s->len += n;
    return 0;
}

/* A privileged file's path (relative to the start) for the binds after the walk: 0, or -ENOMEM. */
static int add_found(mxc_setid_scan *s, const char *rel)
{
    char **found = room(s->found, &s->capfound, s->nfound, sizeof *found);
    if (!found)
        return -ENOMEM;
    s->found = found;
    if (!(s->found[s->nfound] = strdup(rel)))
        return -ENOMEM;
    s->nfound++;
    return 0;
}

/* The privileged file name in the directory being walked, recorded. */
static int record(mxc_setid_scan *s, const char *name)
{
    size_t len = s->len;
    int rc = s->overflow ? -ENAMETOOLONG : push(s, name);
    if (rc == 0)
        rc = add_found(s, s->rel);
    s->len = len;
    s->rel[len] = '\0';
    return rc;
}

static int scan_dir(mxc_setid_scan *s, int dir, uint64_t mnt, bool writable, unsigned depth, mxc_setid_key key);
static void share_out(mxc_setid_scan *s);

static int key_cmp(const void *a, const void *b)
{
    const mxc_setid_key *x = a, *y = b;
    return x->mnt != y->mnt ? (x->mnt < y->mnt ? -1 : 1) : x->ino != y->ino ? (x->ino < y->ino ? -1 : 1) : 0;
}

/* Whether this walker checks the files of the directory key names: its share, and (a worker) not
 * one the walk that forked it had finished. */
static bool mine(const mxc_setid_scan *s, mxc_setid_key key)
{
    if (s->w <= 1)
        return true;
    if ((unsigned)(((key.ino ^ (key.mnt << 40)) * 0x9E3779B97F4A7C15ull) >> 33) % s->w != s->k)
        return false;
    return !s->k || !bsearch(&key, s->done, s->ndone, sizeof key, key_cmp);
}

/* The walk that may share out later: dir key's files are all checked. */
static int finished(mxc_setid_scan *s, mxc_setid_key key)
{
    if (s->w != 1 || s->start < 0)
        return 0;
    mxc_setid_key *done = room(s->done, &s->capdone, s->ndone, sizeof *done);
    if (!done)
        return -ENOMEM;
    s->done = done;
    s->done[s->ndone++] = key;
    return 0;
}

/* One entry of dir (in a mount writable or not): a directory walked (within the mount, or a mount
 * below not walked yet), a regular file of a writable mount checked and bound.  0, or -errno. */
static int scan_entry(mxc_setid_scan *s, int dir, uint64_t mnt, bool writable, unsigned depth, mxc_setid_key key,
                      const char *name, uint64_t ino, unsigned char type)
{
    if (type == DT_UNKNOWN) {
        struct statx sx;
        if (statx(dir, name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx) < 0)
            return errno == ENOENT ? 0 : -errno;
        type = S_ISDIR(sx.stx_mode) ? DT_DIR : S_ISREG(sx.stx_mode) ? DT_REG : DT_LNK;
    }
    if (type == DT_REG && !writable)
        return 0; /* read-only: nobody writes it through this mount */
    if (type == DT_REG) {
        if (++s->files == MXC_SETID_SHARE_AFTER && s->w == 1 && s->start >= 0)
            share_out(s);
        if (!mine(s, key))
            return 0;
        struct statx sx;
        if (statx(dir, name, AT_SYMLINK_NOFOLLOW, STATX_MODE, &sx) < 0)
            return errno == ENOENT ? 0 : -errno;
        int cap = privileged_mode(sx.stx_mode) ? 1 : has_fcap(dir, name);
        if (cap == -ENOENT)
            return 0;
        return cap < 0 ? cap : cap ? record(s, name) : 0;
    }
    if (type != DT_DIR)
        return 0; /* a symlink is never followed; a device, fifo or socket carries no privilege */
    int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        /* gone, or no directory any more (a symlink now: never followed) — no privileged file's
         * directory can be moved by a view that pinned it; EACCES: see setidscan.h */
        return errno == ENOENT || errno == EACCES || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
    uint64_t m = mount_of(sub);
    bool w = writable;
    int rc = m == mnt ? 1 : enter_mount(s, sub, m, &w);
    size_t len = s->len;
    if (rc == 1 && depth + 1 >= MXC_SETID_MAX_DEPTH) {
        /* deeper than the walk goes (a workload's mkdir -p makes such a chain): the rest bound
         * read-only whole, by descriptor, by the walk that forked (it walks every directory),
         * never a refused start */
        rc = s->k ? 0 : mxc_view_readonly_at(sub, bind_attrs(s));
        close(sub);
        return rc < 0 ? rc : 0;
    }
    bool over = false;
    if (rc == 1 && push(s, name) < 0)
        over = true, s->overflow++; /* walked on; a privileged file there is refused (record) */
    if (rc == 1)
        rc = scan_dir(s, sub, m, w, depth + 1, (mxc_setid_key){mnt, ino});
    s->overflow -= over;
    s->len = len;
    s->rel[len] = '\0';
    close(sub);
    return rc < 0 ? rc : 0;
}

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int scan_dir(mxc_setid_scan *s, int dir, uint64_t mnt, bool writable, unsigned depth, mxc_setid_key key)
{
    s->dirs++;
    enum { BUF = 16384 };
    char *buf = malloc(BUF);
    if (!buf)
        return -ENOMEM;
    int rc = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, dir, buf, BUF);
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        for (long off = 0; off < n && rc == 0;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            const char *nm = d->d_name;
            if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
                continue;
            rc = scan_entry(s, dir, mnt, writable, depth, key, nm, d->d_ino, d->d_type);
        }
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = finished(s, key);
    free(buf);
    return rc;
}

/* The CPUs this process may run on, at most MXC_SETID_MAX_WORKERS. */
static unsigned cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : n > MXC_SETID_MAX_WORKERS ? MXC_SETID_MAX_WORKERS : (unsigned)n;
}

/* Worker k of w: the whole walk again from the start, checking only its share of the directories;
 * what it found written to out, each path with its '\0'.  Exits 0, or with the errno. */
static _Noreturn void work(mxc_setid_scan *s, unsigned k, unsigned w, int out)
{
    int start = s->start;
    s->start = -1; /* no sharing again */
    s->w = w, s->k = k, s->n = s->n0, s->nfound = 0, s->len = 0, s->overflow = 0;
    qsort(s->done, s->ndone, sizeof *s->done, key_cmp); /* the forking walk's finished directories */
    s->rel[0] = '\0';
    int dir = openat(start, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dir < 0 ? -errno : 0;
    uint64_t m = rc == 0 ? mount_of(dir) : 0;
    bool writable = true;
    if (rc == 0 && (rc = enter_mount(s, dir, m, &writable)) == 1)
        rc = scan_dir(s, dir, m, writable, 0, (mxc_setid_key){0, 0});
    for (size_t i = 0; rc >= 0 && i < s->nfound; i++)
        if (!mxc_write_all(out, s->found[i], strlen(s->found[i]) + 1))
            rc = -EIO;
    _exit(rc >= 0 ? 0 : -rc < 256 ? -rc : EIO);
}

/* Past MXC_SETID_SHARE_AFTER files: workers forked for shares 1..w-1, this walk keeps share 0 from
 * here on (what it checked before is checked again by a worker: harmless).  A worker that cannot
 * be made (a pids limit) leaves this walk checking everything, as before. */
static void share_out(mxc_setid_scan *s)
{
    unsigned w = cpus(), made = 0;
    for (unsigned k = 1; k < w; k++) {
        int out = memfd_create("mxc-setid", MFD_CLOEXEC);
        pid_t pid = out < 0 ? -1 : (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
        if (pid == 0)
            work(s, k, w, out);
        if (pid < 0) {
            if (out >= 0)
                close(out);
            break;
        }
        s->pid[made] = pid, s->out[made++] = out;
    }
    s->nworkers = made;
    if (made && made == w - 1)
        s->w = w, s->k = 0;
}

/* Every worker waited for (killed first when the walk failed) and what it found added.  rc, or the
 * first failure. */
static int collect(mxc_setid_scan *s, int rc)
{
    for (size_t i = 0; i < s->nworkers; i++) {
        if (rc < 0)
            kill(s->pid[i], SIGKILL);
        int st = 0;
        while (waitpid(s->pid[i], &st, 0) < 0 && errno == EINTR)
            ;
        if (rc >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
            rc = WIFEXITED(st) ? -WEXITSTATUS(st) : -EIO;
        size_t len = 0;
        char *all = rc >= 0 && lseek(s->out[i], 0, SEEK_SET) == 0 ? mxc_read_whole(s->out[i], SIZE_MAX, &len) : NULL;
        if (rc >= 0 && !all)
            rc = -EIO;
        for (size_t off = 0; rc >= 0 && off < len; off += strlen(all + off) + 1)
            rc = add_found(s, all + off);
        free(all);
        close(s->out[i]);
    }
    s->nworkers = 0;
    s->w = 1, s->k = 0;
    return rc;
}

/* One component beneath dir, never through a symlink, never above it. */
static int beneath(int dir, const char *name)
{
    return mxc_openat2(dir, name, O_PATH | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static bool mount_root(int fd)
{
    struct statx sx;
    return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
           (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* The directory name beneath dir, made a mount point (a copy of itself and of the mounts below it,
 * bound on it) unless it is one: it cannot be renamed any more from a view holding it.  The
 * directory (the mount's root now), or -errno. */
static int pinned(int dir, const char *name)
{
    int fd = beneath(dir, name);
    if (fd < 0 || mount_root(fd))
        return fd;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
    int tree = rc == 0 ? mxc_tree_open(fd, "", true, true) : rc;
    if (tree >= 0) {
        rc = mxc_view_attach(tree, fd);
        close(tree);
    } else {
        rc = tree;
    }
    close(fd);
    return rc < 0 ? rc : beneath(dir, name);
}

/* The file at rel beneath start bound read-only, every directory on its way pinned first (top
 * down): no view that walked it can move the file, its name or a directory above it.  0, or -errno
 * (-ENOENT: the tree changed since the walk — the host's doing, as no workload can move a
 * privileged file — and the start is refused). */
static int protect(mxc_setid_scan *s, int start, char *rel)
{
    int cur = fcntl(start, F_DUPFD_CLOEXEC, 3);
    int rc = cur < 0 ? -errno : 0;
    char *name = rel;
    for (char *slash; rc == 0 && (slash = strchr(name, '/')) != NULL; name = slash + 1) {
        *slash = '\0';
        int next = pinned(cur, name);
        *slash = '/';
        close(cur);
        cur = next;
        rc = next < 0 ? next : 0;
    }
    if (rc == 0)
        rc = bind_ro(s, cur, name);
    if (cur >= 0)
        close(cur);
    return rc;
}

int mxc_setid_pin(int fd, mxc_setid_scan *s)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (S_ISREG(st.st_mode)) {
        int cap = privileged_mode(st.st_mode) ? 1 : has_fcap(fd, "");
        return cap < 0 ? cap : cap ? bind_ro(s, fd, "") : 0;
    }
    if (!S_ISDIR(st.st_mode))
        return 0;
    int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return errno == EACCES ? 0 : -errno;
    uint64_t m = mount_of(dir);
    s->len = 0;
    s->rel[0] = '\0';
    s->nfound = 0;
    s->start = dir, s->w = 1, s->k = 0, s->n0 = s->n, s->nworkers = 0, s->ndone = 0;
    bool writable = true;
    int rc = enter_mount(s, dir, m, &writable);
    if (rc == 1)
        rc = scan_dir(s, dir, m, writable, 0, (mxc_setid_key){0, 0});
    rc = collect(s, rc);
    s->start = -1;
    for (size_t i = 0; i < s->nfound; i++) {
        if (rc >= 0)
            rc = protect(s, dir, s->found[i]);
        free(s->found[i]);
    }
    s->nfound = 0;
    close(dir);
    return rc < 0 ? rc : 0;
}

void mxc_setid_scan_free(mxc_setid_scan *s)
{
    for (size_t i = 0; i < s->nfound; i++)
        free(s->found[i]);
    free(s->found);
    free(s->ids);
    free(s->done);
    s->done = NULL;
    s->ndone = s->capdone = 0;
    s->found = NULL;
    s->ids = NULL;
    s->n = s->cap = s->nfound = s->capfound = 0;
}
