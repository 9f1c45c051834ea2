/* fsview.c — see fsview.h. */
#include "fsview.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NEWROOT "/tmp" /* a mountpoint inside our private mount namespace only */

static int open_beneath_root(const char *path, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

/* A detached copy of the mount tree at fd, made in the caller's mount
 * namespace: the holder attaches it in its own with move_mount (a plain
 * bind cannot cross mount namespaces).  Flags are set on the copy before
 * it is ever visible. */
static int clone_tree(int fd, bool readonly)
{
    int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (tree < 0)
        return -1;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (readonly ? MOUNT_ATTR_RDONLY : 0)};
    if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
        int err = errno;
        close(tree);
        errno = err;
        return -1;
    }
    return tree;
}

int mxc_fsview_open_sources(const mxc_plan *p, mxc_fsview_sources *s, mxc_error *e)
{
    for (size_t i = 0; i < MXC_MAX_GRANTS; i++)
        s->grant_fd[i] = -1;
    s->workspace_fd = -1;
    s->cloned = geteuid() == 0;
    for (size_t i = 0; i < p->ngrants; i++) {
        int fd = open_beneath_root(p->grants[i].path, O_PATH);
        if (fd < 0 && errno == ELOOP) {
            mxc_fsview_close_sources(s);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.openat2", ELOOP,
                              "grant the symlink's target path itself",
                              "filesystem path %.200s goes through a symlink; grants are resolved without "
                              "following symlinks", p->grants[i].path);
        }
        if (fd < 0 && errno != ENOENT && errno != ENOTDIR) {
            int err = errno;
            mxc_fsview_close_sources(s);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.openat2", err, NULL, "cannot open %.200s",
                              p->grants[i].path);
        }
        if (fd >= 0 && s->cloned && p->grants[i].mode != MXC_GRANT_DENIED) {
            int tree = clone_tree(fd, p->grants[i].mode == MXC_GRANT_RO);
            int err = errno;
            close(fd);
            if (tree < 0) {
                mxc_fsview_close_sources(s);
                return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.open_tree", err, NULL, "cannot clone %.200s",
                                  p->grants[i].path);
            }
            fd = tree;
        }
        s->grant_fd[i] = fd; /* -1 for a missing host path: skipped, as upstream warns */
    }
    if (p->workspace) {
        int fd = open_beneath_root(p->workspace, O_PATH | O_DIRECTORY);
        s->workspace_fd = fd < 0 || !s->cloned ? fd : clone_tree(fd, false);
        if (fd >= 0 && s->cloned)
            close(fd);
        if (s->workspace_fd < 0) {
            int err = errno;
            mxc_fsview_close_sources(s);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fsview.openat2", err, NULL, "cannot open the workspace");
        }
    }
    return 0;
}

void mxc_fsview_close_sources(mxc_fsview_sources *s)
{
    for (size_t i = 0; i < MXC_MAX_GRANTS; i++)
        if (s->grant_fd[i] >= 0) {
            close(s->grant_fd[i]);
            s->grant_fd[i] = -1;
        }
    if (s->workspace_fd >= 0)
        close(s->workspace_fd);
    s->workspace_fd = -1;
}

/* Rootless: replaces the parent's O_PATH fd by a clone made here, of the
 * same inode re-resolved without symlinks (a swap in between is refused). */
static int localize(const char *path, int *fd, bool readonly)
{
    struct stat before, now;
    if (fstat(*fd, &before) < 0)
        return -errno;
    int here = open_beneath_root(path, O_PATH);
    if (here < 0)
        return -errno;
    if (fstat(here, &now) < 0 || now.st_dev != before.st_dev || now.st_ino != before.st_ino) {
        close(here);
        return -ESTALE;
    }
    int tree = clone_tree(here, readonly);
    int err = errno;
    close(here);
    if (tree < 0)
        return -err;
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

/* mkdir -p below NEWROOT; only ever creates in our own tmpfs. */
static int mkdirs(const char *inside, mode_t mode)
{
    char path[4200];
    int n = snprintf(path, sizeof path, NEWROOT "%s", inside);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    for (char *c = path + strlen(NEWROOT) + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return -errno;
        *c = '/';
    }
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static int touch(const char *inside)
{
    char path[4200];
    snprintf(path, sizeof path, NEWROOT "%s", inside);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return errno == EEXIST ? 0 : -errno;
    close(fd);
    return 0;
}

/* Creates the mount target for a source of the given type. */
static int make_target(const char *inside, bool dir)
{
    char full[4200];
    struct stat st;
    snprintf(full, sizeof full, NEWROOT "%s", inside);
    if (lstat(full, &st) == 0)
        return 0; /* exists (in our tmpfs or a bound grant); never recreated */
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", inside);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        int rc = mkdirs(parent, 0755);
        if (rc < 0)
            return rc;
    }
    return dir ? mkdirs(inside, 0755) : touch(inside);
}

/* Opens the target inside NEWROOT without following symlinks, so a link
 * planted in a granted directory cannot redirect the mount (CVE-2021-30465). */
/* The new root, opened once the root tmpfs is mounted (this code runs
 * only in the single-threaded holder). */
static int newroot_fd = -1;

static int open_target(const char *inside)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                                                  RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, newroot_fd, inside[0] == '/' ? inside + 1 : inside, &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

static unsigned long locked_flags(const char *path)
{
    struct statvfs sv;
    if (statvfs(path, &sv) < 0)
        return 0;
    unsigned long f = 0;
    if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
    return f;
}

static int remount(const char *fdpath, bool readonly)
{
    unsigned long f = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | locked_flags(fdpath);
    if (readonly)
        f |= MS_RDONLY;
    return mount(NULL, fdpath, NULL, f, NULL) < 0 ? -errno : 0;
}

/* Binds source (a path or /proc/self/fd/N) onto inside, through a
 * symlink-free fd of the target. */
/* Creates (if needed) and opens, symlink-free, the mount target for a
 * source of the given type. Returns an O_PATH fd or -errno. */
static int target_for(const char *inside, bool is_dir)
{
    int rc = make_target(inside, is_dir);
    return rc < 0 ? rc : open_target(inside);
}

static int attach_tree(int tree, const char *inside);

/* Binds a path of the holder's (host-copied) mount namespace onto inside:
 * a detached clone, flagged before it is visible (recursively, so no
 * submount of a read-only bind stays writable), attached through a
 * symlink-free fd of the target. */
static int bind_at(const char *source, const char *inside, bool readonly, bool recursive)
{
    unsigned rec = recursive ? AT_RECURSIVE : 0;
    int tree = open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
    if (tree < 0)
        return -errno;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (readonly ? MOUNT_ATTR_RDONLY : 0)};
    int rc = mount_setattr(tree, "", AT_EMPTY_PATH | rec, &attr, sizeof attr) < 0 ? -errno : 0;
    if (rc == 0)
        rc = attach_tree(tree, inside);
    close(tree);
    return rc;
}

/* Attaches a detached tree (see clone_tree) at inside. */
static int attach_tree(int tree, const char *inside)
{
    struct stat st;
    if (fstat(tree, &st) < 0)
        return -errno;
    int t = target_for(inside, S_ISDIR(st.st_mode));
    if (t < 0)
        return t;
    int rc = move_mount(tree, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? -errno : 0;
    close(t);
    return rc;
}

/* Masks: a denied directory becomes an empty read-only tmpfs, a denied
 * file /dev/null — it stays a non-directory. */
static int mask(const char *inside, bool is_dir)
{
    int rc = make_target(inside, is_dir);
    if (rc < 0)
        return rc;
    int t = open_target(inside);
    if (t < 0)
        return t;
    char tpath[64];
    snprintf(tpath, sizeof tpath, "/proc/self/fd/%d", t);
    if (is_dir)
        rc = mount("tmpfs", tpath, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000");
    else
        rc = mount("/dev/null", tpath, NULL, MS_BIND, NULL);
    rc = rc < 0 ? -errno : 0;
    if (rc == 0 && !is_dir) {
        close(t);
        t = open_target(inside);
        if (t < 0)
            return t;
        snprintf(tpath, sizeof tpath, "/proc/self/fd/%d", t);
        rc = remount(tpath, true);
    }
    close(t);
    return rc;
}

static int system_dirs(void)
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
            char at[64];
            snprintf(at, sizeof at, NEWROOT "%s", dirs[i]);
            if (symlink(target, at) < 0)
                return -errno;
            continue;
        }
        int rc = bind_at(dirs[i], dirs[i], true, true);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int write_file(const char *inside, const char *text, mode_t mode)
{
    char path[256];
    snprintf(path, sizeof path, NEWROOT "%s", inside);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int err = errno;
    close(fd);
    return n == (ssize_t)len ? 0 : -(n < 0 ? err : EIO);
}

/* Small configuration files are copied into the (later read-only) root
 * tmpfs rather than bound: a copy is a few system calls, a bind a mount
 * to create and, at exit, to tear down — /etc alone was half the view's
 * mounts.  The copy is the file as it was when the sandbox started. */
#define ETC_COPY_MAX (256 * 1024)

static int copy_in(const char *path, const struct stat *st)
{
    int in = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (in < 0)
        return errno == EACCES ? -EAGAIN : -errno; /* unreadable here: bind it instead */
    char at[256];
    snprintf(at, sizeof at, NEWROOT "%s", path);
    int out = open(at, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, st->st_mode & 0644);
    int rc = out < 0 ? -errno : 0;
    for (off_t left = st->st_size; rc == 0 && left > 0;) {
        ssize_t n = sendfile(out, in, NULL, (size_t)left);
        if (n <= 0)
            rc = n < 0 ? -errno : -EIO;
        else
            left -= n;
    }
    close(in);
    if (out >= 0)
        close(out);
    return rc;
}

/* /etc: only what programs need to run; no shadow, no host identities. */
static int curated_etc(const mxc_plan *p)
{
    int rc = mkdirs("/etc", 0755);
    if (rc < 0)
        return rc;
    const char *keep[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                          "/etc/localtime", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates",
                          "/etc/hosts", "/etc/resolv.conf", "/etc/mime.types", "/etc/bash.bashrc",
                          "/etc/profile", "/etc/inputrc", "/etc/protocols", "/etc/services", "/etc/python3",
                          "/etc/python3.11", "/etc/debian_version", "/etc/os-release", "/etc/terminfo",
                          "/etc/magic", "/etc/locale.alias", "/etc/gai.conf"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        struct stat st;
        if (stat(keep[i], &st) < 0)
            continue;
        rc = S_ISREG(st.st_mode) && st.st_size <= ETC_COPY_MAX ? copy_in(keep[i], &st) : -EAGAIN;
        if (rc == -EAGAIN)
            rc = bind_at(keep[i], keep[i], true, true);
        if (rc < 0)
            return rc;
    }
    char passwd[512], group[256];
    const char *home = p->workspace ? p->workspace : "/tmp";
    const char *name = p->agent_name[0] ? p->agent_name : "sandbox";
    snprintf(passwd, sizeof passwd, "%s:x:0:0:mxc agent:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
             name, home);
    snprintf(group, sizeof group, "%s:x:0:\nnogroup:x:65534:\n", name);
    if ((rc = write_file("/etc/passwd", passwd, 0644)) < 0)
        return rc;
    if ((rc = write_file("/etc/group", group, 0644)) < 0)
        return rc;
    char hostname[80];
    snprintf(hostname, sizeof hostname, "%s\n", p->hostname);
    return write_file("/etc/hostname", hostname, 0644);
}

static int minimal_dev(void)
{
    int rc = mkdirs("/dev", 0755);
    if (rc < 0)
        return rc;
    if (mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k") < 0)
        return -errno;
    const char *nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        if ((rc = touch(nodes[i])) < 0)
            return rc;
        char at[64];
        snprintf(at, sizeof at, NEWROOT "%s", nodes[i]);
        if (mount(nodes[i], at, NULL, MS_BIND, NULL) < 0)
            return -errno;
    }
    if ((rc = mkdirs("/dev/pts", 0755)) < 0 || (rc = mkdirs("/dev/shm", 01777)) < 0)
        return rc;
    if (mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
        return -errno;
    if (mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m") < 0)
        return -errno;
    const struct { const char *target, *at; } links[] = {
        {"pts/ptmx", "/dev/ptmx"}, {"/proc/self/fd", "/dev/fd"}, {"/proc/self/fd/0", "/dev/stdin"},
        {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"}};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        char at[64];
        snprintf(at, sizeof at, NEWROOT "%s", links[i].at);
        if (symlink(links[i].target, at) < 0)
            return -errno;
    }
    return 0;
}

/* Fresh proc for our PID namespace; kernel-wide knobs read-only, kernel
 * memory and key/timer listings masked. */
static int fresh_proc(void)
{
    int rc = mkdirs("/proc", 0555);
    if (rc < 0)
        return rc;
    if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return -errno;
    const char *ro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"};
    for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++) {
        char at[64];
        snprintf(at, sizeof at, NEWROOT "%s", ro[i]);
        if (access(at, F_OK) < 0)
            continue;
        if (mount(at, at, NULL, MS_BIND | MS_REC, NULL) < 0 || remount(at, true) < 0)
            return -errno;
    }
    const char *masked[] = {"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list",
                            "/proc/sched_debug", "/proc/kallsyms", "/proc/kmsg", "/proc/acpi", "/proc/scsi"};
    for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++) {
        char at[64];
        snprintf(at, sizeof at, NEWROOT "%s", masked[i]);
        struct stat st;
        if (stat(at, &st) < 0)
            continue;
        if ((rc = mask(masked[i], S_ISDIR(st.st_mode))) < 0)
            return rc;
    }
    return 0;
}

static int grants(const mxc_plan *p, const mxc_fsview_sources *s)
{
    for (size_t i = 0; i < p->ngrants; i++) {
        const mxc_grant *g = &p->grants[i];
        int fd = s->grant_fd[i];
        if (fd < 0)
            continue; /* host path absent */
        int rc;
        if (g->mode == MXC_GRANT_DENIED) {
            struct stat st;
            if (fstat(fd, &st) < 0)
                return -errno;
            rc = mask(g->path, S_ISDIR(st.st_mode));
        } else {
            rc = attach_tree(fd, g->path);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int enter_root(void)
{
    if (chdir(NEWROOT) < 0)
        return -errno;
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        return -errno;
    if (umount2(".", MNT_DETACH) < 0) /* the old root, stacked under the new one */
        return -errno;
    if (chdir("/") < 0)
        return -errno;
    return 0;
}

int mxc_fsview_build(const mxc_plan *p, mxc_fsview_sources *s, const char **stage)
{
    int rc;
    *stage = "fsview.make_private";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) /* nothing propagates back to the host */
        return -errno;
    *stage = "fsview.sources";
    if (!s->cloned && (rc = localize_sources(p, s)) < 0)
        return rc;
    *stage = "fsview.root_tmpfs";
    if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=16m") < 0)
        return -errno;
    if ((newroot_fd = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -errno;
    *stage = "fsview.system_dirs";
    if ((rc = system_dirs()) < 0)
        return rc;
    *stage = "fsview.etc";
    if ((rc = curated_etc(p)) < 0)
        return rc;
    *stage = "fsview.dev";
    if ((rc = minimal_dev()) < 0)
        return rc;
    *stage = "fsview.tmp";
    if ((rc = mkdirs("/tmp", 01777)) < 0)
        return rc;
    if (mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=256m") < 0)
        return -errno;
    *stage = "fsview.workspace";
    if (s->workspace_fd >= 0 && (rc = attach_tree(s->workspace_fd, p->workspace)) < 0)
        return rc;
    *stage = "fsview.grants";
    if ((rc = grants(p, s)) < 0)
        return rc;
    *stage = "fsview.proc";
    if ((rc = fresh_proc()) < 0)
        return rc;
    *stage = "fsview.root_readonly";
    if (mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        return -errno;
    *stage = "fsview.pivot_root";
    close(newroot_fd);
    newroot_fd = -1;
    return enter_root();
}
