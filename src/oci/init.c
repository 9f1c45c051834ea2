/* init.c — see init.h.  The order below is the checklist; a step that
 * fails tells the parent which one and why, and the init exits. */
#include "init.h"
#include "fault.h"
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <linux/magic.h>
#include <termios.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apparmor.h"
#include "harden.h"
#include "tmpcopy.h"
#include "sockmsg.h"
#include "ptypair.h"
#include "mounttree.h"

const char *const oci_default_devices[OCI_NDEVICES] = {"null", "zero", "full", "random", "urandom", "tty"};

#define NEWROOT "/tmp" /* a mount point inside the init's private mount namespace only */

static int sock_fd = -1;

static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void fail(const char *fmt, ...)
{
    char msg[1024];
    msg[0] = OCI_MSG_FAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + 1, sizeof msg - 1, fmt, ap);
    va_end(ap);
    if (send(sock_fd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
        (void)!write(2, msg + 1, strlen(msg + 1));
    _exit(1);
}

static int recv_msg(char *tag, int *fd)
{
    return mxc_sockmsg_recv_tag(sock_fd, tag, fd) < 0 ? -1 : 0;
}

/* A message with a text payload (the hooks' state): tag, then the text; malloc'd, or NULL. */
static char *recv_text(char tag)
{
    return mxc_sockmsg_recv_text(sock_fd, tag, ((size_t)1 << 16) - 1);
}

static int openat2_in(int root_fd, const char *path, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd;
    /* EAGAIN: a rename or mount anywhere on the host raced a ".." walk and the kernel could not
     * prove it stayed inside; it is safe to ask again */
    for (int tries = 0; (fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof how)) < 0 && errno == EAGAIN &&
                        tries < 10000;
         tries++)
        ;
    return fd < 0 ? -errno : fd;
}

/* Whether path, inside the rootfs, is or goes through a symbolic link (RESOLVE_NO_SYMLINKS). */
static bool through_a_link(int root_fd, const char *path)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS};
    int fd;
    for (int tries = 0; (fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof how)) < 0 && errno == EAGAIN &&
                        tries < 10000;
         tries++)
        ;
    bool link = fd < 0 && errno == ELOOP;
    if (fd >= 0)
        close(fd);
    return link;
}

/* A path of the process's (its cwd, its executable), from its root, never through a magic link:
 * /proc/self/fd/N (a descriptor the runtime held: CVE-2024-21626) and /proc/self/exe (the
 * runtime's own binary: CVE-2019-5736) lead out of the container.  A descriptor, or -errno. */
static int open_no_magic(const char *path, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = RESOLVE_NO_MAGICLINKS};
    int fd;
    for (int tries = 0; (fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how)) < 0 && errno == EAGAIN &&
                        tries < 10000;
         tries++)
        ;
    return fd < 0 ? -errno : fd;
}

int oci_resolve_target(int root_fd, const char *path, bool create, bool dir)
{
    return oci_make_target_as(root_fd, path, create, dir, (uid_t)-1, (gid_t)-1);
}

int oci_make_target_as(int root_fd, const char *path, bool create, bool dir, uid_t uid, gid_t gid)
{
    int fd = openat2_in(root_fd, path, O_PATH);
    if (fd >= 0 || fd != -ENOENT || !create)
        return fd;
    char prefix[PATH_MAX] = "", copy[PATH_MAX];
    if (snprintf(copy, sizeof copy, "%s", path) >= (int)sizeof copy)
        return -ENAMETOOLONG;
    int cur = openat2_in(root_fd, "/", O_PATH | O_DIRECTORY);
    char *save, *comp = strtok_r(copy, "/", &save);
    while (cur >= 0 && comp) {
        char *next = strtok_r(NULL, "/", &save);
        size_t len = strlen(prefix);
        snprintf(prefix + len, sizeof prefix - len, "/%s", comp);
        int nfd = openat2_in(root_fd, prefix, O_PATH);
        if (nfd == -ENOENT) {
            /* one name below a descriptor already inside the rootfs: it cannot
             * leave it; a dangling symlink there makes this fail (EEXIST) */
            int rc, f = -1;
            if (next || dir) {
                rc = mkdirat(cur, comp, 0755) < 0 ? -errno : 0;
                if (rc == 0 && uid != (uid_t)-1 &&
                    (f = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                    rc = -errno;
            } else {
                f = openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                rc = f < 0 ? -errno : 0;
            }
            /* made by host root for the container: its root's, as the init would have made it; chown'd
             * by descriptor (the file just made; the directory only while it is an empty one of root's) */
            struct stat fst;
            if (rc == 0 && uid != (uid_t)-1 &&
                (fstat(f, &fst) < 0 || fst.st_uid != 0 || (S_ISDIR(fst.st_mode) && fst.st_nlink != 2) ||
                 fchown(f, uid, gid) < 0))
                rc = -EPERM;
            if (f >= 0)
                close(f);
            nfd = rc < 0 && rc != -EEXIST ? rc : openat2_in(root_fd, prefix, O_PATH);
        }
        close(cur);
        cur = nfd;
        comp = next;
    }
    return cur;
}

/* A fresh filesystem of the config's mount (fsopen/fsconfig/fsmount). */
static int make_fs(const oci_mount *m, size_t idx)
{
    int fs = fsopen(m->type, FSOPEN_CLOEXEC);
    if (fs < 0)
        fail("mounts[%zu] (%s at %s): fsopen: %s", idx, m->type, m->dest, strerror(errno));
    /* the source names the mount in /proc/mounts, as mount(2)'s would (tools match "tmpfs /mnt") */
    if (m->source && m->source[0] && fsconfig(fs, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
        fail("mounts[%zu] (%s at %s): source: %s", idx, m->type, m->dest, strerror(errno));
    for (size_t i = 0; i < m->nfsopt; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s", m->fsopt[i]);
        char *eq = strchr(key, '=');
        int rc = eq ? (*eq = '\0', fsconfig(fs, FSCONFIG_SET_STRING, key, eq + 1, 0))
                    : fsconfig(fs, FSCONFIG_SET_FLAG, key, NULL, 0);
        if (rc < 0)
            fail("mounts[%zu] (%s at %s): option '%s': %s", idx, m->type, m->dest, m->fsopt[i], strerror(errno));
    }
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        fail("mounts[%zu] (%s at %s): cannot create it: %s", idx, m->type, m->dest, strerror(errno));
    /* tmpcopyup: read-only only once filled (tmpcopy.h) */
    int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)(m->tmpcopyup ? m->attr_set & ~(uint64_t)MOUNT_ATTR_RDONLY
                                                                   : m->attr_set));
    if (mnt < 0)
        fail("mounts[%zu] (%s at %s): fsmount: %s", idx, m->type, m->dest, strerror(errno));
    close(fs);
    return mnt;
}

/* tmpcopyup: what the rootfs has at the destination, into the tmpfs, then its flags. */
static void copy_up(int target, int tree, const oci_mount *m, size_t idx)
{
    char why[PATH_MAX + 128] = "";
    if (oci_tmpcopyup(target, tree, why, sizeof why) < 0)
        fail("mounts[%zu] (tmpfs at %s): tmpcopyup: %s", idx, m->dest, why);
    int rc = m->attr_set & MOUNT_ATTR_RDONLY ? mxc_tree_setattr(tree, &(mxc_tree_attr){.set = MOUNT_ATTR_RDONLY}) : 0;
    if (rc < 0)
        fail("mounts[%zu] (tmpfs at %s): read-only: %s", idx, m->dest, strerror(-rc));
}

static void attach(int tree, int target, const char *what)
{
    if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        fail("%s: move_mount: %s", what, strerror(errno));
    close(tree);
}

/* A masked path: an empty read-only tmpfs over a directory, the
 * container's /dev/null over anything else; absent: nothing to mask. */
static void mask(int root_fd, const char *path)
{
    int t = oci_resolve_target(root_fd, path, false, false);
    if (t == -ENOENT)
        return;
    if (t < 0)
        fail("maskedPaths %s: %s", path, strerror(-t));
    struct stat st;
    fstat(t, &st);
    int tree;
    if (S_ISDIR(st.st_mode)) {
        int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "size", "0", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
            fail("maskedPaths %s: tmpfs: %s", path, strerror(errno));
        tree = fsmount(fs, FSMOUNT_CLOEXEC,
                       MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        close(fs);
    } else {
        int null = oci_resolve_target(root_fd, "/dev/null", false, false);
        struct stat nst;
        if (null >= 0 && (fstat(null, &nst) < 0 || !S_ISCHR(nst.st_mode) || nst.st_rdev != makedev(1, 3)))
            fail("maskedPaths %s: /dev/null is not the null device", path);
        tree = null < 0 ? null : open_tree(null, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (null >= 0)
            close(null);
    }
    if (tree < 0)
        fail("maskedPaths %s: %s", path, strerror(errno));
    attach(tree, t, path);
    close(t);
}

static void make_readonly(int root_fd, const char *path)
{
    int t = oci_resolve_target(root_fd, path, false, false);
    if (t == -ENOENT)
        return;
    if (t < 0)
        fail("readonlyPaths %s: %s", path, strerror(-t));
    mxc_tree_attr ro = {.set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                        .recursive = true};
    int tree = mxc_tree_clone(t, "", &ro);
    if (tree < 0)
        fail("readonlyPaths %s: %s", path, strerror(-tree));
    attach(tree, t, path);
    close(t);
}

/* The executable of args[0]: a path as given, else the first hit in the
 * config's PATH (runc's lookup and its wording). */
static const char *lookup(const oci_config *c, char *buf, size_t bufsz)
{
    const char *prog = c->args[0];
    if (strchr(prog, '/')) {
        if (access(prog, X_OK) < 0)
            fail("exec: \"%s\": stat %s: %s", prog, prog, strerror(errno));
        return prog;
    }
    const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    for (size_t i = 0; i < c->nenv; i++)
        if (!strncmp(c->env[i], "PATH=", 5))
            path = c->env[i] + 5;
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path);
    char *save, *d = strtok_r(dirs, ":", &save);
    for (; d; d = strtok_r(NULL, ":", &save)) {
        snprintf(buf, bufsz, "%s/%s", *d ? d : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return buf;
    }
    fail("exec: \"%s\": executable file not found in $PATH", prog);
}

/* What no process of the container ever holds (config.c: CAP_SETFCAP), gone
 * from this one's every set as soon as it is the container's root: a
 * createContainer hook exec'd from here, and whatever runs before the
 * process's own sets, cannot write a file capability onto the rootfs. */
static void withhold_caps(void)
{
    uint64_t drop = oci_caps_withheld();
    for (int cap = 0; cap <= 63; cap++)
        if ((drop & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            fail("withholding capability %d: %s", cap, strerror(errno));
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &hdr, d) < 0)
        fail("capget: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
        uint32_t keep = ~(uint32_t)(drop >> (32 * i));
        d[i].effective &= keep, d[i].permitted &= keep, d[i].inheritable &= keep;
    }
    if (syscall(SYS_capset, &hdr, d) < 0)
        fail("withholding capabilities: capset: %s", strerror(errno));
}

static void set_caps(const oci_config *c)
{
    uint64_t bounding = c->cap_bounding & oci_caps_held(); /* config.c kept only these; again here */
    for (int cap = 0; cap <= 63; cap++)
        if (!(bounding & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break; /* past the kernel's last capability */
            fail("process.capabilities.bounding: %s", strerror(errno));
        }
}

static void set_user(const oci_config *c)
{
    if (setgroups(c->ngids, c->gids) < 0)
        fail("process.user.additionalGids: setgroups: %s", strerror(errno));
    if (setresgid(c->gid, c->gid, c->gid) < 0)
        fail("process.user.gid %u: %s", c->gid, strerror(errno));
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresuid(c->uid, c->uid, c->uid) < 0)
        fail("process.user.uid %u: %s", c->uid, strerror(errno));
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    uint64_t held = oci_caps_held(), eff = c->cap_effective & held, prm = c->cap_permitted & held,
             inh = c->cap_inheritable & held;
    struct __user_cap_data_struct data[2] = {
        {(uint32_t)eff, (uint32_t)prm, (uint32_t)inh},
        {(uint32_t)(eff >> 32), (uint32_t)(prm >> 32), (uint32_t)(inh >> 32)},
    };
    if (syscall(SYS_capset, &hdr, data) < 0)
        fail("process.capabilities: capset: %s", strerror(errno));
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        fail("process.capabilities.ambient: %s", strerror(errno));
    for (int cap = 0; cap <= 63; cap++)
        if ((c->cap_ambient & held & (1ull << cap)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
            fail("process.capabilities.ambient: capability %d: %s", cap, strerror(errno));
}

/* On the host's network namespace the container shares the host's
 * abstract unix sockets (CVE-2020-15257: containerd-shim's API was one):
 * Landlock's scope (ABI 6) keeps it to its own, and its signals too.
 * create refused a host network on an older kernel. */
static void scope_to_self(void)
{
    struct { uint64_t fs, net, scoped; } attr = {0, 0, (1ULL << 0) | (1ULL << 1)}; /* ABSTRACT_UNIX_SOCKET, SIGNAL */
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0 || syscall(SYS_landlock_restrict_self, rs, 0) < 0)
        fail("the host network: Landlock scope: %s", strerror(errno));
    close(rs);
}

/* Without process.terminal: a session of its own with no controlling terminal (runc's), so that the
 * terminal mxc-oci was started from is not the workload's: /dev/tty gives ENXIO, the operator's
 * keystrokes and settings stay out of its reach. */
static void own_session(void)
{
    if (setsid() < 0)
        fail("a session of its own (setsid): %s", strerror(errno));
}

/* process.terminal: a pty of the container's own devpts (opened beneath its root with no symlink,
 * checked to be devpts), the master sent to the console socket (runc's way: the pty's name as the
 * payload, the master by SCM_RIGHTS), the slave the controlling terminal and fds 0-2, owned by the
 * process's uid. */
static void setup_terminal(const oci_config *c, int console)
{
    mxc_pty pty;
    mxc_pty_step step;
    int rc = mxc_pty_open(AT_FDCWD, "dev/pts/ptmx", c->console_height, c->console_width, &pty, &step);
    if (rc < 0 && (step == MXC_PTY_OPEN || step == MXC_PTY_NOT_DEVPTS))
        fail("process.terminal needs a devpts mount at /dev/pts: %s",
             step == MXC_PTY_OPEN ? strerror(-rc) : "not devpts");
    if (rc < 0)
        fail("%s: %s", step == MXC_PTY_UNLOCK ? "process.terminal: unlockpt"
                       : step == MXC_PTY_SIZE ? "process.consoleSize"
                                              : "process.terminal: the pty's peer",
             strerror(-rc));
    int master = pty.master, slave = pty.slave;
    unsigned n = pty.index;
    if (fchown(slave, c->uid, (gid_t)-1) < 0)
        fail("process.terminal: chown of the pty to %u: %s", c->uid, strerror(errno));
    char name[32];
    snprintf(name, sizeof name, "/dev/pts/%u", n);
    if (mxc_sockmsg_send(console, name, strlen(name), &master, 1) < 0)
        fail("--console-socket: sending the pty: %s", strerror(errno));
    close(master);
    close(console);
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
        fail("process.terminal: the controlling terminal: %s", strerror(errno));
    for (int fd = 0; fd < 3; fd++)
        if (dup2(slave, fd) < 0)
            fail("process.terminal: %s", strerror(errno));
    close(slave);
}

/* process.cwd, opened without magic links (a leaked descriptor as cwd, CVE-2024-21626) and entered
 * by fchdir; with may_wait, a cwd this identity may not enter answers false (tried again as the
 * process's user) instead of failing. */
static bool enter_cwd(const oci_config *c, bool may_wait)
{
    int cwd = open_no_magic(c->cwd, O_PATH | O_DIRECTORY);
    if (cwd == -ELOOP)
        fail("process.cwd %s: a magic link (a descriptor, a process's link in /proc) out of the container, or a "
             "symlink loop: refused", c->cwd);
    int err = cwd < 0 ? -cwd : fchdir(cwd) < 0 ? errno : 0;
    if (cwd >= 0)
        close(cwd);
    if (err && may_wait && (err == EACCES || err == EPERM))
        return false;
    if (err)
        fail("chdir to cwd (\"%s\") set in config.json failed: %s", c->cwd, strerror(err));
    return true;
}

/* process.apparmorProfile: the exec attribute opened by open_apparmor, written "exec PROFILE" (the
 * kernel confines the process from its execve on), closed; aa_fd -1: no profile. */
static void apply_apparmor(const oci_config *c, int aa_fd)
{
    if (aa_fd < 0)
        return;
    int rc = oci_apparmor_exec_write(aa_fd, c->apparmor_profile);
    if (rc < 0)
        fail("process.apparmorProfile \"%s\": writing the AppArmor exec attribute: %s", c->apparmor_profile,
             strerror(-rc));
    close(aa_fd);
}

/* The calling process's AppArmor exec attribute, beneath proc_fd (the host's /proc, opened before
 * anything of the container's was entered), when the config names a profile; else -1. */
static int open_apparmor(const oci_config *c, int proc_fd)
{
    if (!c->apparmor_profile)
        return -1;
    int fd = proc_fd < 0 ? proc_fd : oci_apparmor_attr_open(proc_fd);
    if (fd < 0)
        fail("process.apparmorProfile \"%s\": opening the AppArmor exec attribute in the host's /proc: %s",
             c->apparmor_profile, strerror(-fd));
    return fd;
}

/* The process's own: the AppArmor profile for its execve (aa_fd; runc's order: before the
 * credentials), rlimits, umask, the bounding set while CAP_SETPCAP is held, groups/gid/uid and the
 * capability sets, cwd, the executable, no_new_privs always (stricter than a config's false), the
 * Landlock scope on the host's network.  Returns the executable's path. */
static const char *become_process(const oci_config *c, char *exe_buf, size_t exe_sz, bool host_net, int aa_fd)
{
    apply_apparmor(c, aa_fd);
    for (size_t i = 0; i < c->nrlimits; i++) {
        struct rlimit rl = {(rlim_t)c->rlimits[i].soft, (rlim_t)c->rlimits[i].hard};
        if (setrlimit(c->rlimits[i].resource, &rl) < 0) {
            int err = errno;
            struct rlimit host = {0, 0};
            getrlimit(c->rlimits[i].resource, &host);
            char hard[32];
            if (host.rlim_max == RLIM_INFINITY)
                snprintf(hard, sizeof hard, "unlimited");
            else
                snprintf(hard, sizeof hard, "%llu", (unsigned long long)host.rlim_max);
            fail("process.rlimits: setrlimit %s (soft %llu, hard %llu): %s (the host's hard limit, %s, is the "
                 "ceiling: lower it, e.g. podman --ulimit)", oci_rlimit_name(c->rlimits[i].resource),
                 (unsigned long long)c->rlimits[i].soft, (unsigned long long)c->rlimits[i].hard, strerror(err), hard);
        }
    }
    if (c->has_umask)
        umask(c->umask);
    set_caps(c);
    /* cwd before the user too, as runc does: a cwd the user cannot reach but the container's
     * root can is entered with the root's rights (inside the container's root: nothing of the host's) */
    bool in_cwd = enter_cwd(c, true);
    set_user(c);
    if (!in_cwd)
        enter_cwd(c, false);
    const char *exe = lookup(c, exe_buf, exe_sz);
    int xfd = open_no_magic(exe, O_PATH);
    if (xfd == -ELOOP)
        fail("exec: \"%s\": a magic link (the runtime's own binary, /proc/self/exe, or another process's) out of "
             "the container, or a symlink loop: refused", exe);
    if (xfd >= 0)
        close(xfd);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        fail("no_new_privs: %s", strerror(errno));
    if (host_net)
        scope_to_self();
    return exe;
}

/* Only fds 0-2, the preserved ones (close-on-exec cleared) and keep[] (close-on-exec) stay open. */
static void close_others(const int *keep, size_t nkeep, int preserve)
{
    int *all = calloc(nkeep + (size_t)preserve + 1, sizeof *all);
    if (!all)
        fail("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < nkeep; i++)
        all[n++] = keep[i];
    for (int fd = 3; fd < 3 + preserve; fd++) {
        all[n++] = fd;
        if (fcntl(fd, F_SETFD, 0) < 0)
            fail("--preserve-fds: fd %d: %s", fd, strerror(errno));
    }
    mxc_close_all_but(all, n);
    free(all);
}

_Noreturn void oci_exec_main(const oci_config *c, const oci_seccomp *sc, int sock, int console, int preserve,
                             bool host_net, int proc_fd)
{
    sock_fd = sock;
    int aa_fd = open_apparmor(c, proc_fd);
    if (proc_fd >= 0)
        close(proc_fd);
    /* root of the container's user namespace first (what it makes, a pty, is then its own) */
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
        fail("becoming root of the container's user namespace: %s", strerror(errno));
    withhold_caps();
    if (c->terminal)
        setup_terminal(c, console);
    else
        own_session();
    char exe_buf[PATH_MAX];
    const char *exe = become_process(c, exe_buf, sizeof exe_buf, host_net, aa_fd);
    /* not dumpable until the exec (creds changes may have reset it): the container's processes
     * cannot ptrace us nor open our /proc files (/proc/PID/exe is mxc-oci: CVE-2019-5736) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (mxc_fault("OCI_EXEC_STOP")) /* tests/oci: held here, inside the container, before the exec */
        raise(SIGSTOP);
    int keep[] = {sock_fd};
    close_others(keep, 1, preserve);
    mxc_reset_signals();
    int rc = mxc_seccomp_apply(false);
    if (rc < 0 || (rc = oci_seccomp_load(sc)) < 0)
        fail("seccomp: %s", strerror(-rc));
    execve(exe, (char *const *)c->args, (char *const *)c->env);
    fail("exec: \"%s\": %s", exe, strerror(errno));
}

_Noreturn void oci_init_main(const oci_init_args *a)
{
    const oci_config *c = a->c;
    sock_fd = a->sock;
    char tag;
    int fd;
    if (recv_msg(&tag, &fd) < 0 || tag != OCI_MSG_MAPS)
        _exit(1); /* the parent is gone */
    /* a cgroup namespace of its own, unshared now that the parent put it in its cgroup: that cgroup is its root */
    if ((c->ns_flags & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0)
        fail("unsharing the cgroup namespace: %s", strerror(errno));
    /* 1. root inside (the range's first id outside) */
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
        fail("becoming root of the user namespace: %s", strerror(errno));
    withhold_caps();
    /* the AppArmor exec attribute now, through the host's /proc: never a /proc the container made */
    int aa_fd = -1;
    if (c->apparmor_profile) {
        int proc_fd = oci_apparmor_proc();
        aa_fd = open_apparmor(c, proc_fd);
        if (proc_fd >= 0)
            close(proc_fd);
    }
    /* 2. the trees the parent made */
    int rootfs = -1, *binds = calloc(c->nmounts + 1, sizeof *binds), devs[OCI_NDEVICES], xdevs[16];
    size_t nx = 0;
    if (!binds)
        fail("out of memory");
    size_t nb = 0, nd = 0;
    for (size_t i = 0; i < c->nmounts; i++)
        binds[i] = -1;
    for (;;) {
        if (recv_msg(&tag, &fd) < 0)
            _exit(1);
        if (tag == OCI_MSG_GO)
            break;
        if (tag != OCI_MSG_TREE || fd < 0)
            fail("protocol error");
        if (rootfs < 0)
            rootfs = fd;
        else {
            while (nb < c->nmounts && c->mounts[nb].kind != OCI_MNT_BIND && !c->mounts[nb].by_parent)
                nb++;
            if (nb < c->nmounts)
                binds[nb++] = fd;
            else if (nd < OCI_NDEVICES)
                devs[nd++] = fd;
            else if (nx < c->nxdev)
                xdevs[nx++] = fd;
            else
                fail("protocol error");
        }
    }
    if (rootfs < 0 || nd != OCI_NDEVICES || nx != c->nxdev)
        fail("protocol error");
    /* 3. the root: a private mount namespace, the idmapped rootfs at NEWROOT */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        fail("making the mount namespace private: %s", strerror(errno));
    int at = open(NEWROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (at < 0)
        fail("opening %s: %s", NEWROOT, strerror(errno));
    attach(rootfs, at, "root.path");
    close(at);
    int root_fd = open(NEWROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root_fd < 0)
        fail("opening the rootfs: %s", strerror(errno));
    /* /proc/self/fd of the host's proc (the fifo is reopened through it after pivot_root, with or without a
     * /proc of the container's) */
    int selffd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (selffd < 0)
        fail("opening /proc/self/fd: %s", strerror(errno));
    /* 4. the mounts, in order, each on a descriptor resolved inside the rootfs */
    bool have_proc = false;
    /* a read-only tmpfs (a "ro" /dev) is made read-write and turned read-only after step 6: the mounts
     * and devices beneath it need their targets made first (runc does the same) */
    int *ro_later = malloc((c->nmounts + 1) * sizeof *ro_later);
    size_t nro_later = 0;
    if (!ro_later)
        fail("out of memory");
    for (size_t i = 0; i < c->nmounts; i++) {
        const oci_mount *m = &c->mounts[i];
        oci_mount rw_first;
        if (m->kind == OCI_MNT_FS && !strcmp(m->type, "tmpfs") && (m->attr_set & MOUNT_ATTR_RDONLY)) {
            rw_first = *m;
            rw_first.attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY;
            m = &rw_first;
            ro_later[nro_later++] = (int)i;
        }
        if (m->kind == OCI_MNT_FS && (!strcmp(m->type, "cgroup") || !strcmp(m->type, "cgroup2"))) {
            char why[400];
            if (oci_cgroup_mount(root_fd, m->dest, c->ns_flags & CLONE_NEWCGROUP, oci_resolve_target, why,
                                 sizeof why) < 0) /* the container's own view, read-only */
                fail("mounts[%zu] (%s at %s): %s", i, m->type, m->dest, why);
            continue;
        }
        bool dir = true;
        if (m->kind == OCI_MNT_BIND) {
            struct stat st;
            dir = fstat(binds[i], &st) == 0 && S_ISDIR(st.st_mode);
        }
        if (m->kind == OCI_MNT_FS && (!strcmp(m->type, "proc") || !strcmp(m->type, "sysfs")) &&
            through_a_link(root_fd, m->dest))
            fail("mounts[%zu]: %s must be mounted on ordinary directory (runc's wording): it is a symbolic link in "
                 "the rootfs, or goes through one, refused for %s (its masks and read-only paths are applied by "
                 "path: CVE-2019-19921)", i, m->dest, m->type);
        int t = oci_resolve_target(root_fd, m->dest, true, dir);
        if (t < 0)
            fail("mounts[%zu]: destination %s: %s", i, m->dest, strerror(-t));
        char what[PATH_MAX + 64];
        snprintf(what, sizeof what, "mounts[%zu] (%s)", i, m->dest);
        int tree = m->kind == OCI_MNT_BIND || m->by_parent ? binds[i] : make_fs(m, i);
        if (m->tmpcopyup)
            copy_up(t, tree, m, i);
        attach(tree, t, what);
        close(t);
        have_proc |= m->kind == OCI_MNT_FS && !strcmp(m->type, "proc"); /* only at /proc (config.c) */
    }
    free(binds);
    /* 5. the default devices (the host's nodes: a user namespace cannot mknod) and /dev's links */
    int devdir = oci_resolve_target(root_fd, "/dev", true, true);
    if (devdir < 0)
        fail("/dev: %s", strerror(-devdir));
    for (size_t i = 0; i < OCI_NDEVICES; i++) {
        char path[64];
        snprintf(path, sizeof path, "/dev/%s", oci_default_devices[i]);
        /* the node's own name, never followed (CVE-2025-31133: an image's /dev/null linked into /proc) */
        struct stat lst;
        if (fstatat(devdir, oci_default_devices[i], &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
            fail("%s in the rootfs is a symbolic link: refused (the default devices are mounted on the node itself)",
                 path);
        int t = oci_resolve_target(devdir, oci_default_devices[i], true, false);
        if (t < 0)
            fail("%s: %s", path, strerror(-t));
        attach(devs[i], t, path);
        close(t);
    }
    close(devdir);
    /* 5a. linux.devices beyond the defaults: the host's nodes, checked by the parent (devices.h), on the
     * node's own name in the rootfs, never followed */
    for (size_t i = 0; i < c->nxdev; i++) {
        const char *p = c->xdev[i].path, *slash = strrchr(p, '/');
        char dir[256];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - p), p);
        int d = oci_resolve_target(root_fd, dir, true, true);
        if (d < 0)
            fail("linux.devices %s: %s", p, strerror(-d));
        struct stat lst;
        if (fstatat(d, slash + 1, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
            fail("linux.devices %s in the rootfs is a symbolic link: refused (a device is mounted on the node "
                 "itself)", p);
        int t = oci_resolve_target(d, slash + 1, true, false);
        if (t < 0)
            fail("linux.devices %s: %s", p, strerror(-t));
        attach(xdevs[i], t, p);
        close(t);
        close(d);
    }
    int dev = oci_resolve_target(root_fd, "/dev", false, true);
    const char *links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
                              {"/proc/self/fd/2", "stderr"}, {"pts/ptmx", "ptmx"}};
    for (size_t i = 0; dev >= 0 && i < 5; i++)
        if (symlinkat(links[i][0], dev, links[i][1]) < 0 && errno != EEXIST)
            fail("/dev/%s: %s", links[i][1], strerror(errno));
    if (dev >= 0)
        close(dev);
    /* 5b. sysctls (namespaced only, checked by config.c), through the container's own /proc before it is
     * made read-only */
    for (size_t i = 0; i < c->nsysctl; i++) {
        char path[256];
        if (!(c->ns_flags & oci_sysctl_ns(c->sysctl[i][0])))
            continue; /* a pod's namespace, joined by path: mxc-oci wrote it there (lifecycle.c) */
        snprintf(path, sizeof path, "/proc/sys/%s", c->sysctl[i][0]);
        for (char *q = path + 10; *q; q++)
            if (*q == '.')
                *q = '/';
        int f = have_proc ? openat2_in(root_fd, path, O_WRONLY | O_TRUNC) : -ENOENT;
        if (f < 0)
            fail("linux.sysctl %s: %s", c->sysctl[i][0], have_proc ? strerror(-f) : "needs proc mounted at /proc");
        size_t len = strlen(c->sysctl[i][1]);
        if (write(f, c->sysctl[i][1], len) != (ssize_t)len)
            fail("linux.sysctl %s = %s: %s", c->sysctl[i][0], c->sysctl[i][1], strerror(errno));
        close(f);
    }
    /* 6. masked and read-only paths: the engine's /proc rules, then the config's */
    if (have_proc) {
        const char *ro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"};
        const char *masked[] = {"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list",
                                "/proc/sched_debug", "/proc/kallsyms", "/proc/kmsg", "/proc/acpi", "/proc/scsi",
                                "/proc/slabinfo", "/proc/vmallocinfo", "/proc/pagetypeinfo"};
        for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++)
            mask(root_fd, masked[i]);
        for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++)
            make_readonly(root_fd, ro[i]);
    }
    for (size_t i = 0; i < c->nmasked; i++)
        mask(root_fd, c->masked[i]);
    for (size_t i = 0; i < c->nreadonly; i++)
        make_readonly(root_fd, c->readonly[i]);
    for (size_t k = 0; k < nro_later; k++) {
        const oci_mount *m = &c->mounts[ro_later[k]];
        int t = oci_resolve_target(root_fd, m->dest, false, true);
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
        if (t < 0 || mount_setattr(t, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
            fail("mounts[%d] (%s): read-only: %s", ro_later[k], m->dest, t < 0 ? strerror(-t) : strerror(errno));
        close(t);
    }
    free(ro_later);
    /* 6b. hooks (hooks.h): the parent runs prestart and createRuntime now, then the init runs
     * createContainer in the container's namespaces, after the mounts and before pivot_root, as
     * the container's root, its cwd the rootfs, exec'ing the binaries the parent checked */
    const oci_hooks *hk = a->hooks;
    if (hk && (hk->n[OCI_HOOK_PRESTART] || hk->n[OCI_HOOK_CREATE_RUNTIME] || hk->n[OCI_HOOK_CREATE_CONTAINER])) {
        if (mxc_sockmsg_send_tag(sock_fd, OCI_MSG_HOOKS_ASK, -1) < 0)
            _exit(1);
        char *state = recv_text(OCI_MSG_HOOKS_STATE);
        if (!state)
            _exit(1); /* the parent is gone, or a hook of its failed */
        mxc_error he = {0};
        if (fchdir(root_fd) < 0)
            fail("the rootfs: %s", strerror(errno));
        if (oci_hooks_run(hk, OCI_HOOK_CREATE_CONTAINER, state, &he) < 0)
            fail("%s", he.message);
        free(state);
    }
    /* 7. the root read-only when asked (after its mount targets were made), then pivot_root */
    if (c->root_readonly) {
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
        if (mount_setattr(root_fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
            fail("root.readonly: %s", strerror(errno));
    }
    if (fchdir(root_fd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        fail("pivot_root into the rootfs: %s", strerror(errno));
    if (c->rootfs_propagation && mount(NULL, "/", NULL, c->rootfs_propagation, NULL) < 0)
        fail("linux.rootfsPropagation: %s", strerror(errno));
    close(root_fd);
    /* 8. the loopback of a network namespace of its own, up (as runc and crun do); names */
    if (c->ns_flags & CLONE_NEWNET) {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = {0};
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
            (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0))
            fail("bringing up the loopback: %s", strerror(errno));
        close(s);
    }
    if (c->hostname && *c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0)
        fail("hostname: %s", strerror(errno));
    if (c->domainname && *c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0)
        fail("domainname: %s", strerror(errno));
    if (c->terminal)
        setup_terminal(c, a->console);
    else
        own_session();
    /* 9. the process's own: limits, credentials, cwd, no_new_privs, the scope */
    char exe_buf[PATH_MAX];
    const char *exe = become_process(c, exe_buf, sizeof exe_buf, a->host_net, aa_fd);
    /* 10. only the descriptors the workload is given, the engine's seccomp baseline last */
    int keep[] = {sock_fd, a->fifo, selffd};
    close_others(keep, 3, a->preserve);
    mxc_reset_signals();
    int rc = mxc_seccomp_apply(false);
    if (rc < 0)
        fail("seccomp: %s", strerror(-rc));
    /* 11. ready; the parent saves the state, then the fifo holds us until start */
    char *start_state = NULL;
    if (mxc_sockmsg_send_tag(sock_fd, OCI_MSG_READY, -1) < 0 ||
        (hk && hk->n[OCI_HOOK_START_CONTAINER] && !(start_state = recv_text(OCI_MSG_START_STATE))) || recv_msg(&tag, &fd) < 0 ||
        tag != OCI_MSG_SAVED)
        _exit(1);
    close(sock_fd);
    char num[16];
    snprintf(num, sizeof num, "%d", a->fifo);
    int w = openat(selffd, num, O_WRONLY | O_CLOEXEC);
    if (w < 0)
        _exit(1);
    /* the config's profile, stacked on the baseline, before a startContainer hook: the hook is the
     * image's code and runs under the container's whole filter (as runc runs it) */
    bool hooked = start_state != NULL;
    if (hooked && (rc = oci_seccomp_load(a->seccomp)) < 0) {
        dprintf(2, "mxc-oci: linux.seccomp: %s\n", strerror(-rc));
        (void)!write(w, "H", 1);
        _exit(1);
    }
    /* start is reading: startContainer, as this process (its credentials and filters), the path
     * resolved in the container; a failure is 'H' to start instead of '0', and no exec */
    if (start_state) {
        mxc_error he = {0};
        if (oci_hooks_run(hk, OCI_HOOK_START_CONTAINER, start_state, &he) < 0) {
            /* runc's words; to start after the 'H' in one write (atomic below PIPE_BUF), and on stderr */
            char msg[1024];
            int len = snprintf(msg, sizeof msg, "Herror running hook: %s", he.message);
            dprintf(2, "mxc-oci: %s\n", msg + 1);
            (void)!write(w, msg, len < (int)sizeof msg ? (size_t)len : sizeof msg - 1);
            _exit(1);
        }
        free(start_state);
    }
    if (write(w, "0", 1) != 1)
        _exit(1);
    close(selffd);
    /* the config's profile last, stacked on the baseline: only execve is left to pass it */
    if (!hooked && (rc = oci_seccomp_load(a->seccomp)) < 0) {
        dprintf(2, "mxc-oci: linux.seccomp: %s\n", strerror(-rc));
        _exit(1);
    }
    execve(exe, (char *const *)c->args, (char *const *)c->env);
    dprintf(2, "mxc-oci: exec %s: %s\n", exe, strerror(errno));
    _exit(127);
}
