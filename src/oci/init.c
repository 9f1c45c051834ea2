/* init.c — see init.h.  oci_init_main runs the steps below in order (the
 * table init_steps is the checklist); a step that fails leaves an
 * mxc_error in the init's state, which the init reports to the parent
 * ('E' + the error itself: sockmsg.h's mxc_error_send) before it exits. */
#include "init.h"
#include "fault.h"
#include "loopback.h"
#include "notify.h" /* OCI_MSG_LISTENER */
#include "rootops.h"

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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <linux/magic.h>
#include <termios.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apparmor.h"
#include "cleanup.h"
#include "front.h"
#include "mounttree.h"
#include "ptypair.h"
#include "setidscan.h"
#include "setupops.h"
#include "sockmsg.h"
#include "tmpcopy.h"

static int sock_fd = -1;

/* The failure to the parent ('E' + the mxc_error, sockmsg.h's report; its message on stderr when
 * the parent is gone), then exit. */
static _Noreturn void report(const mxc_error *e)
{
    if (mxc_error_send(sock_fd, OCI_MSG_FAIL, e) < 0)
        (void)!write(2, e->message, strlen(e->message));
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

/* A path of the process's (its cwd, its executable), from its root, never through a magic link:
 * /proc/self/fd/N (a descriptor the runtime held: CVE-2024-21626) and /proc/self/exe (the
 * runtime's own binary: CVE-2019-5736) lead out of the container.  A descriptor, or -errno. */
static int open_no_magic(const char *path, int flags)
{
    return mxc_openat2(AT_FDCWD, path, flags, RESOLVE_NO_MAGICLINKS);
}

/* The executable of args[0] into *exe: a path as given, else the first hit in the config's PATH
 * (runc's lookup and its wording; buf holds the path found). */
static int lookup(const oci_config *c, char *buf, size_t bufsz, const char **exe, mxc_error *e)
{
    const char *prog = c->args[0];
    if (strchr(prog, '/')) {
        if (access(prog, X_OK) < 0)
            return oci_init_err_os(e, errno, "exec: \"%s\": stat %s", prog, prog);
        *exe = prog;
        return 0;
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
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) {
            *exe = buf;
            return 0;
        }
    }
    return oci_init_err(e, "exec: \"%s\": executable file not found in $PATH", prog);
}

/* What no process of the container ever holds (config.c: CAP_SETFCAP), gone
 * from this one's every set as soon as it is the container's root: a
 * createContainer hook exec'd from here, and whatever runs before the
 * process's own sets, cannot write a file capability onto the rootfs. */
static int withhold_caps(mxc_error *e)
{
    uint64_t drop = oci_caps_withheld();
    for (int cap = 0; cap <= 63; cap++)
        if ((drop & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return oci_init_err_os(e, errno, "withholding capability %d", cap);
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &hdr, d) < 0)
        return oci_init_err_os(e, errno, "capget");
    for (int i = 0; i < 2; i++) {
        uint32_t keep = ~(uint32_t)(drop >> (32 * i));
        d[i].effective &= keep, d[i].permitted &= keep, d[i].inheritable &= keep;
    }
    if (syscall(SYS_capset, &hdr, d) < 0)
        return oci_init_err_os(e, errno, "withholding capabilities: capset");
    return 0;
}

static int set_caps(const oci_config *c, mxc_error *e)
{
    uint64_t bounding = c->cap_bounding & oci_caps_held(); /* config.c kept only these; again here */
    for (int cap = 0; cap <= 63; cap++)
        if (!(bounding & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break; /* past the kernel's last capability */
            return oci_init_err_os(e, errno, "process.capabilities.bounding");
        }
    return 0;
}

/* With no_new_privs left off (process.noNewPrivileges false or absent), loading a seccomp filter or
 * a Landlock ruleset needs CAP_SYS_ADMIN in the loader's user namespace: the init (or exec's
 * process) keeps it, past the process's own sets, until its execve, which loses it (not in the
 * process's inheritable or ambient sets, nor in a bounding set the config did not give it:
 * docs/oci.md "noNewPrivileges false").  The caps the credentials keep beyond the config's. */
static uint64_t loader_caps(const oci_config *c)
{
    return c->new_privs ? 1ull << CAP_SYS_ADMIN : 0;
}

static int set_user(const oci_config *c, mxc_error *e)
{
    if (setgroups(c->ngids, c->gids) < 0)
        return oci_init_err_os(e, errno, "process.user.additionalGids: setgroups");
    if (setresgid(c->gid, c->gid, c->gid) < 0)
        return oci_init_err_os(e, errno, "process.user.gid %u", c->gid);
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresuid(c->uid, c->uid, c->uid) < 0)
        return oci_init_err_os(e, errno, "process.user.uid %u", c->uid);
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    uint64_t held = oci_caps_held(), eff = (c->cap_effective & held) | loader_caps(c),
             prm = (c->cap_permitted & held) | loader_caps(c), inh = c->cap_inheritable & held;
    struct __user_cap_data_struct data[2] = {
        {(uint32_t)eff, (uint32_t)prm, (uint32_t)inh},
        {(uint32_t)(eff >> 32), (uint32_t)(prm >> 32), (uint32_t)(inh >> 32)},
    };
    if (syscall(SYS_capset, &hdr, data) < 0)
        return oci_init_err_os(e, errno, "process.capabilities: capset");
    /* ambient last: the kernel raises one only while it is permitted and inheritable (config.c dropped,
     * with a warning, those that are not; again here) */
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        return oci_init_err_os(e, errno, "process.capabilities.ambient");
    uint64_t amb = c->cap_ambient & prm & inh;
    for (int cap = 0; cap <= 63; cap++)
        if ((amb & (1ull << cap)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
            return oci_init_err_os(e, errno, "process.capabilities.ambient: capability %d", cap);
    return 0;
}

/* On the host's network namespace the container shares the host's
 * abstract unix sockets (CVE-2020-15257: containerd-shim's API was one):
 * Landlock's scope (ABI 6) keeps it to its own, and its signals too.
 * create refused a host network on an older kernel. */
static int scope_to_self(mxc_error *e)
{
    struct { uint64_t fs, net, scoped; } attr = {0, 0, (1ULL << 0) | (1ULL << 1)}; /* ABSTRACT_UNIX_SOCKET, SIGNAL */
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0 || syscall(SYS_landlock_restrict_self, rs, 0) < 0)
        return oci_init_err_os(e, errno, "the host network: Landlock scope");
    close(rs);
    return 0;
}

/* Without process.terminal: a session of its own with no controlling terminal (runc's), so that the
 * terminal mxc-oci was started from is not the workload's: /dev/tty gives ENXIO, the operator's
 * keystrokes and settings stay out of its reach. */
static int own_session(mxc_error *e)
{
    if (setsid() < 0)
        return oci_init_err_os(e, errno, "a session of its own (setsid)");
    return 0;
}

/* process.terminal: a pty of the container's own devpts (opened beneath its root with no symlink,
 * checked to be devpts), the master sent to the console socket (runc's way: the pty's name as the
 * payload, the master by SCM_RIGHTS), the slave the controlling terminal and fds 0-2, owned by the
 * process's uid. */
static int setup_terminal(const oci_config *c, int console, mxc_error *e)
{
    mxc_pty pty;
    mxc_pty_step step;
    int rc = mxc_pty_open(AT_FDCWD, "dev/pts/ptmx", c->console_height, c->console_width, &pty, &step);
    if (rc < 0 && (step == MXC_PTY_OPEN || step == MXC_PTY_NOT_DEVPTS))
        return oci_init_err(e, "process.terminal needs a devpts mount at /dev/pts: %s",
                            step == MXC_PTY_OPEN ? strerror(-rc) : "not devpts");
    if (rc < 0)
        return oci_init_err_os(e, -rc, "%s", step == MXC_PTY_UNLOCK ? "process.terminal: unlockpt"
                                             : step == MXC_PTY_SIZE ? "process.consoleSize"
                                                                    : "process.terminal: the pty's peer");
    int master = pty.master, slave = pty.slave;
    unsigned n = pty.index;
    if (fchown(slave, c->uid, (gid_t)-1) < 0)
        return oci_init_err_os(e, errno, "process.terminal: chown of the pty to %u", c->uid);
    char name[32];
    snprintf(name, sizeof name, "/dev/pts/%u", n);
    if (mxc_sockmsg_send(console, name, strlen(name), &master, 1) < 0)
        return oci_init_err_os(e, errno, "--console-socket: sending the pty");
    close(master);
    close(console);
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
        return oci_init_err_os(e, errno, "process.terminal: the controlling terminal");
    for (int fd = 0; fd < 3; fd++)
        if (dup2(slave, fd) < 0)
            return oci_init_err_os(e, errno, "process.terminal");
    close(slave);
    return 0;
}

/* process.cwd, opened without magic links (a leaked descriptor as cwd, CVE-2024-21626) and entered
 * by fchdir; with may_wait, a cwd this identity may not enter leaves *entered false (tried again as
 * the process's user) instead of failing. */
static int enter_cwd(const oci_config *c, bool may_wait, bool *entered, mxc_error *e)
{
    int cwd = open_no_magic(c->cwd, O_PATH | O_DIRECTORY);
    if (cwd == -ELOOP)
        return oci_init_err(e, "process.cwd %s: a magic link (a descriptor, a process's link in /proc) out of the "
                               "container, or a symlink loop: refused", c->cwd);
    int err = cwd < 0 ? -cwd : fchdir(cwd) < 0 ? errno : 0;
    if (cwd >= 0)
        close(cwd);
    *entered = !err;
    if (err && may_wait && (err == EACCES || err == EPERM))
        return 0;
    if (err)
        return oci_init_err_os(e, err, "chdir to cwd (\"%s\") set in config.json failed", c->cwd);
    return 0;
}

/* process.apparmorProfile: the exec attribute opened by open_apparmor, written "exec PROFILE" (the
 * kernel confines the process from its execve on), closed; aa_fd -1: no profile. */
static int apply_apparmor(const oci_config *c, int aa_fd, mxc_error *e)
{
    if (aa_fd < 0)
        return 0;
    if (oci_apparmor_exec_write(aa_fd, c->apparmor_profile, e) < 0)
        return -1;
    close(aa_fd);
    return 0;
}

/* The calling process's AppArmor exec attribute, beneath proc_fd (the host's /proc, opened before
 * anything of the container's was entered), into *aa_fd when the config names a profile; else -1. */
static int open_apparmor(const oci_config *c, int proc_fd, int *aa_fd, mxc_error *e)
{
    *aa_fd = -1;
    if (!c->apparmor_profile)
        return 0;
    int fd = oci_apparmor_attr_open(proc_fd, c->apparmor_profile, e);
    if (fd < 0)
        return -1;
    *aa_fd = fd;
    return 0;
}

static int set_rlimits(const oci_config *c, mxc_error *e)
{
    for (size_t i = 0; i < c->nrlimits; i++) {
        struct rlimit rl = {(rlim_t)c->rlimits[i].soft, (rlim_t)c->rlimits[i].hard};
        if (setrlimit(c->rlimits[i].resource, &rl) == 0)
            continue;
        int err = errno;
        struct rlimit host = {0, 0};
        getrlimit(c->rlimits[i].resource, &host);
        char hard[32];
        if (host.rlim_max == RLIM_INFINITY)
            snprintf(hard, sizeof hard, "unlimited");
        else
            snprintf(hard, sizeof hard, "%llu", (unsigned long long)host.rlim_max);
        return oci_init_err(e, "process.rlimits: setrlimit %s (soft %llu, hard %llu): %s (the host's hard limit, "
                               "%s, is the ceiling: lower it, e.g. podman --ulimit)",
                            oci_rlimit_name(c->rlimits[i].resource), (unsigned long long)c->rlimits[i].soft,
                            (unsigned long long)c->rlimits[i].hard, strerror(err), hard);
    }
    return 0;
}

/* The process's own: the AppArmor profile for its execve (aa_fd; runc's order: before the
 * credentials), rlimits, umask, the bounding set while CAP_SETPCAP is held, groups/gid/uid and the
 * capability sets, cwd, the executable (into *exe), no_new_privs when the config says true
 * (else loader_caps), the Landlock scope on the host's network. */
static int become_process(const oci_config *c, char *exe_buf, size_t exe_sz, bool host_net, int aa_fd,
                          const char **exe, mxc_error *e)
{
    if (apply_apparmor(c, aa_fd, e) < 0 || set_rlimits(c, e) < 0)
        return -1;
    if (c->has_umask)
        umask(c->umask);
    /* cwd before the user too, as runc does: a cwd the user cannot reach but the container's
     * root can is entered with the root's rights (inside the container's root: nothing of the host's) */
    bool in_cwd = false;
    if (set_caps(c, e) < 0 || enter_cwd(c, true, &in_cwd, e) < 0 || set_user(c, e) < 0 ||
        (!in_cwd && enter_cwd(c, false, &in_cwd, e) < 0) || lookup(c, exe_buf, exe_sz, exe, e) < 0)
        return -1;
    int xfd = open_no_magic(*exe, O_PATH);
    if (xfd == -ELOOP)
        return oci_init_err(e, "exec: \"%s\": a magic link (the runtime's own binary, /proc/self/exe, or another "
                               "process's) out of the container, or a symlink loop: refused", *exe);
    if (xfd >= 0)
        close(xfd);
    if (!c->new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return oci_init_err_os(e, errno, "no_new_privs");
    return host_net ? scope_to_self(e) : 0;
}

/* Only fds 0-2, the preserved ones (close-on-exec cleared) and keep[] (close-on-exec) stay open. */
static int close_others(const int *keep, size_t nkeep, int preserve, mxc_error *e)
{
    int *all = calloc(nkeep + (size_t)preserve + 1, sizeof *all);
    if (!all)
        return oci_init_err(e, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < nkeep; i++)
        all[n++] = keep[i];
    for (int fd = 3; fd < 3 + preserve; fd++) {
        all[n++] = fd;
        if (fcntl(fd, F_SETFD, 0) < 0) {
            free(all);
            return oci_init_err_os(e, errno, "--preserve-fds: fd %d", fd);
        }
    }
    mxc_close_all_but(all, n);
    free(all);
    return 0;
}

/* The terminal of process.terminal, or a session of its own. */
static int own_terminal(const oci_config *c, int console, mxc_error *e)
{
    return c->terminal ? setup_terminal(c, console, e) : own_session(e);
}

_Noreturn void oci_exec_main(const oci_config *c, const oci_seccomp *sc, int sock, int console, int preserve,
                             bool host_net, int proc_fd)
{
    sock_fd = sock;
    mxc_error e = {0};
    int aa_fd = -1;
    if (open_apparmor(c, proc_fd, &aa_fd, &e) < 0)
        report(&e);
    if (proc_fd >= 0)
        close(proc_fd);
    /* root of the container's user namespace first (what it makes, a pty, is then its own) */
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
        oci_init_err_os(&e, errno, "becoming root of the container's user namespace");
        report(&e);
    }
    char exe_buf[PATH_MAX];
    const char *exe = NULL;
    if (withhold_caps(&e) < 0 || own_terminal(c, console, &e) < 0 ||
        become_process(c, exe_buf, sizeof exe_buf, host_net, aa_fd, &exe, &e) < 0)
        report(&e);
    /* not dumpable until the exec (creds changes may have reset it): the container's processes
     * cannot ptrace us nor open our /proc files (/proc/PID/exe is mxc-oci: CVE-2019-5736) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (mxc_fault("OCI_EXEC_STOP")) /* tests/oci: held here, inside the container, before the exec */
        raise(SIGSTOP);
    int keep[] = {sock_fd};
    if (close_others(keep, 1, preserve, &e) < 0)
        report(&e);
    mxc_reset_signals();
    int rc = mxc_seccomp_apply(false);
    if (rc < 0 || (rc = oci_seccomp_load(sc)) < 0) {
        oci_init_err_os(&e, -rc, "seccomp");
        report(&e);
    }
    /* a filter that notifies: its listener to exec, which hands it to the agent (notify.h) */
    if (rc > 0) { /* and waits until the agent has it: a failed handover never runs the process */
        char tag;
        int none = -1;
        if (mxc_sockmsg_send_tag(sock_fd, OCI_MSG_LISTENER, rc) < 0 || close(rc) < 0 || recv_msg(&tag, &none) < 0 ||
            tag != OCI_MSG_LISTENER_OK || none >= 0)
            _exit(1);
    }
    execve(exe, (char *const *)c->args, (char *const *)c->env);
    oci_init_err_os(&e, errno, "exec: \"%s\"", exe);
    report(&e);
}

/* ---- the container's init: its state and its steps, in order ---- */

typedef struct {
    const oci_init_args *a;
    const oci_config *c;
    mxc_error err;     /* what the failed step says */
    bool quiet;        /* the parent is gone (or a hook of its failed): exit without a report */
    int aa_fd;         /* the AppArmor exec attribute (the host's /proc), or -1 */
    int rootfs;        /* the trees the parent made: the rootfs, */
    int *binds;        /* per mount: its tree (a bind, or made by the parent), else -1 */
    int devs[MXC_DEV_NNODES], xdevs[16]; /* the default devices, linux.devices */
    int root_fd;       /* the rootfs attached at root.path, until pivot_root */
    int selffd;        /* the host's /proc/self/fd: the fifo is reopened through it after pivot_root */
    char exe_buf[PATH_MAX];
    const char *exe;   /* what execve runs */
} init_state;

static int parent_gone(init_state *s)
{
    s->quiet = true;
    return -1;
}

/* The parent wrote the id maps ('M'). */
static int wait_maps(init_state *s)
{
    char tag;
    int fd;
    return recv_msg(&tag, &fd) < 0 || tag != OCI_MSG_MAPS ? parent_gone(s) : 0;
}

/* A cgroup namespace of its own, unshared now that the parent put it in its cgroup (that cgroup is
 * its root); root inside (the range's first id outside), what no process of it holds withheld; the
 * AppArmor exec attribute now, through the host's /proc: never a /proc the container made. */
static int join_namespaces(init_state *s)
{
    const oci_config *c = s->c;
    if ((c->ns_flags & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0)
        return oci_init_err_os(&s->err, errno, "unsharing the cgroup namespace");
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
        return oci_init_err_os(&s->err, errno, "becoming root of the user namespace");
    if (withhold_caps(&s->err) < 0)
        return -1;
    if (!c->apparmor_profile)
        return 0;
    int proc_fd = oci_apparmor_proc("oci.init", &s->err);
    int rc = proc_fd < 0 ? -1 : open_apparmor(c, proc_fd, &s->aa_fd, &s->err);
    if (proc_fd >= 0)
        close(proc_fd);
    return rc;
}

/* Rootless binds: each source looked up again in this namespace's copy of the host's tree by the
 * path the parent resolved (no symlink, no magic link followed), admitted only as the very inode
 * of the parent's descriptor (inherited), then cloned with the mount's flags. */
static int own_binds(init_state *s)
{
    const oci_config *c = s->c;
    int root _cleanup_fd_ = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; i < c->nmounts; i++) {
        const oci_mount *m = &c->mounts[i];
        if (m->kind != OCI_MNT_BIND)
            continue;
        const char *p = s->a->bind_paths ? s->a->bind_paths[i] : NULL;
        if (!p || p[0] != '/' || root < 0)
            return oci_init_err(&s->err, "mounts[%zu]: no resolved source", i);
        int fd _cleanup_fd_ = mxc_openat2(root, p[1] ? p + 1 : ".", O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        struct stat want, got;
        if (fd < 0)
            return oci_init_err_os(&s->err, -fd, "mounts[%zu].source %s", i, p);
        if (fstat(s->a->bind_src[i], &want) < 0 || fstat(fd, &got) < 0 || want.st_dev != got.st_dev ||
            want.st_ino != got.st_ino)
            return oci_init_err_os(&s->err, ESTALE, "mounts[%zu].source %s: not what create resolved", i, p);
        mxc_tree_attr a = {.set = m->attr_set, .clr = m->attr_clr, .propagation = MS_PRIVATE, .userns_fd = -1,
                           .recursive = m->recursive};
        if ((s->binds[i] = mxc_tree_clone(fd, "", &a)) < 0) {
            int err = -s->binds[i];
            s->binds[i] = -1;
            return oci_init_err_os(&s->err, err, "mounts[%zu].source %s", i, p);
        }
    }
    return 0;
}

/* Rootless linux.devices: each the host's node the parent checked (devices.h), found again by its
 * path in this namespace's copy (never through a link at its name) as that very inode, bound. */
static int own_devices(init_state *s)
{
    const oci_config *c = s->c;
    for (size_t i = 0; i < c->nxdev; i++) {
        const char *p = c->xdev[i].path;
        int fd _cleanup_fd_ = open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat want, got;
        if (fd < 0)
            return oci_init_err_os(&s->err, errno, "linux.devices %s", p);
        if (fstat(s->a->xdev_src[i], &want) < 0 || fstat(fd, &got) < 0 || want.st_rdev != got.st_rdev ||
            want.st_dev != got.st_dev || want.st_ino != got.st_ino)
            return oci_init_err_os(&s->err, ESTALE, "linux.devices %s: not the node create checked", p);
        mxc_tree_attr a = {.set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, .propagation = MS_PRIVATE, .userns_fd = -1};
        if ((s->xdevs[i] = mxc_tree_clone(fd, "", &a)) < 0) {
            int err = -s->xdevs[i];
            s->xdevs[i] = -1;
            return oci_init_err_os(&s->err, err, "linux.devices %s", p);
        }
    }
    return 0;
}

/* Rootless: the parent could make no tree (the host's mount namespace is not the caller's); 'G'
 * alone.  The rootfs (the cwd the init was born with: this namespace's copy of root.path) cloned
 * recursively, nodev; the default devices from this namespace's copy of the host's /dev. */
static int own_trees(init_state *s)
{
    char tag;
    int fd;
    if (recv_msg(&tag, &fd) < 0)
        return parent_gone(s);
    if (tag != OCI_MSG_GO)
        return oci_init_err(&s->err, "protocol error");
    s->rootfs = open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_NODEV};
    if (s->rootfs < 0 || mount_setattr(s->rootfs, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
        return oci_init_err_os(&s->err, errno, "root.path: cloning the rootfs");
    size_t bad = 0;
    int r = mxc_dev_node_trees(s->devs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, MS_PRIVATE, &bad);
    return r < 0 ? oci_init_err_os(&s->err, -r, "/dev/%s", mxc_dev_nodes[bad]) : own_binds(s) < 0 ? -1 : own_devices(s);
}

/* The trees the parent made ('T' + a descriptor each, then 'G'): the rootfs, each bind (and mount
 * made by the parent) in mount order, the default devices, linux.devices. */
static int receive_trees(init_state *s)
{
    const oci_config *c = s->c;
    if (!(s->binds = calloc(c->nmounts + 1, sizeof *s->binds)))
        return oci_init_err(&s->err, "out of memory");
    size_t nb = 0, nd = 0, nx = 0;
    for (size_t i = 0; i < c->nmounts; i++)
        s->binds[i] = -1;
    if (s->a->own_trees)
        return own_trees(s);
    for (;;) {
        char tag;
        int fd;
        if (recv_msg(&tag, &fd) < 0)
            return parent_gone(s);
        if (tag == OCI_MSG_GO)
            break;
        if (tag != OCI_MSG_TREE || fd < 0)
            return oci_init_err(&s->err, "protocol error");
        if (s->rootfs < 0) {
            s->rootfs = fd;
            continue;
        }
        while (nb < c->nmounts && c->mounts[nb].kind != OCI_MNT_BIND && !c->mounts[nb].by_parent)
            nb++;
        if (nb < c->nmounts)
            s->binds[nb++] = fd;
        else if (nd < MXC_DEV_NNODES)
            s->devs[nd++] = fd;
        else if (nx < c->nxdev)
            s->xdevs[nx++] = fd;
        else
            return oci_init_err(&s->err, "protocol error");
    }
    if (s->rootfs < 0 || nd != MXC_DEV_NNODES || nx != c->nxdev)
        return oci_init_err(&s->err, "protocol error");
    return 0;
}

/* A private mount namespace (nothing done in it reaches the host's), the (idmapped) rootfs attached
 * at root.path itself, as the runtime spec's hooks address it: onto the cwd the init was born with
 * (create entered root.path's descriptor before the clone; the clone gave this namespace's copy of
 * that directory, never a path looked up again), the tree's own descriptor then the root; the
 * host's /proc/self/fd kept. */
static int setup_rootfs(init_state *s)
{
    int at = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (at < 0)
        return oci_init_err_os(&s->err, errno, "root.path: the directory create entered");
    if (chdir("/") < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        close(at);
        return oci_init_err_os(&s->err, errno, "making the mount namespace private");
    }
    int rc = mxc_view_attach(s->rootfs, at);
    close(at);
    if (rc < 0)
        return oci_init_err_os(&s->err, -rc, "root.path: move_mount");
    s->root_fd = s->rootfs; /* the tree, attached: its descriptor is the rootfs's mount in this namespace */
    s->rootfs = -1;
    if ((s->selffd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return oci_init_err_os(&s->err, errno, "opening /proc/self/fd");
    return 0;
}

/* Every set-id or file-capability file of a writable rootfs (the image's su, passwd, a cap_net_raw
 * ping) bound onto itself read-only before the config's mounts cover anything and before the
 * workload exists: the container's root owns them through the idmap, and a write through a shared
 * mapping would keep their privilege on the host (setidscan.h). */
static int protect_setid(init_state *s)
{
    if (s->c->root_readonly)
        return 0; /* all of it read-only at pivot */
    /* read-only, not nosuid: noNewPrivileges false still raises to the container's own root */
    mxc_setid_scan scan = {.keep_setid = true};
    int rc = mxc_setid_pin(s->root_fd, &scan);
    mxc_setid_scan_free(&scan);
    return rc < 0 ? oci_init_err_os(&s->err, -rc, "root.path: the set-id and file-capability files made read-only") : 0;
}

/* The config lowered to the engine's setup operations (rootops.h), applied in order by its
 * executor (setupops.h): the mounts, each on a descriptor resolved inside the rootfs, the devices
 * and /dev's links, the sysctls, the masked and read-only paths (the engine's /proc rules, then the
 * config's). */
static int apply_mounts(init_state *s)
{
    oci_setup_ops ops;
    int rc = oci_setup_lower(s->c, s->binds, s->devs, s->xdevs, &ops, &s->err);
    mxc_setup_env env = {.root = s->root_fd};
    if (rc == 0)
        rc = mxc_setup_run(&env, ops.op, ops.n, &s->err);
    oci_setup_free(&ops);
    free(s->binds);
    s->binds = NULL;
    return rc;
}

/* hooks (hooks.h): the parent runs prestart and createRuntime now, then the init runs
 * createContainer in the container's namespaces, after the mounts and before pivot_root, as the
 * container's root, its cwd the rootfs, exec'ing the binaries the parent checked. */
static int run_create_hooks(init_state *s)
{
    const oci_hooks *hk = s->a->hooks;
    if (!hk || !(hk->n[OCI_HOOK_PRESTART] || hk->n[OCI_HOOK_CREATE_RUNTIME] || hk->n[OCI_HOOK_CREATE_CONTAINER]))
        return 0;
    if (mxc_sockmsg_send_tag(sock_fd, OCI_MSG_HOOKS_ASK, -1) < 0)
        return parent_gone(s);
    char *state = recv_text(OCI_MSG_HOOKS_STATE);
    if (!state)
        return parent_gone(s); /* the parent is gone, or a hook of its failed */
    int rc = fchdir(s->root_fd) < 0 ? oci_init_err_os(&s->err, errno, "the rootfs")
                                    : oci_hooks_run(hk, OCI_HOOK_CREATE_CONTAINER, state, &s->err);
    free(state);
    return rc < 0 ? -1 : 0;
}

/* The root read-only when asked (after its mount targets were made), then pivot_root. */
static int pivot(init_state *s)
{
    const oci_config *c = s->c;
    if (c->root_readonly) {
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
        if (mount_setattr(s->root_fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
            return oci_init_err_os(&s->err, errno, "root.readonly");
    }
    int rc = mxc_view_enter(s->root_fd);
    if (rc < 0)
        return oci_init_err_os(&s->err, -rc, "pivot_root into the rootfs");
    if (c->rootfs_propagation && mount(NULL, "/", NULL, c->rootfs_propagation, NULL) < 0)
        return oci_init_err_os(&s->err, errno, "linux.rootfsPropagation");
    close(s->root_fd);
    s->root_fd = -1;
    return 0;
}

/* The loopback of a network namespace of its own, up (as runc and crun do); the names. */
static int set_names(init_state *s)
{
    const oci_config *c = s->c;
    if (c->ns_flags & CLONE_NEWNET) {
        int rc = mxc_loopback_up();
        if (rc < 0)
            return oci_init_err_os(&s->err, -rc, "bringing up the loopback");
    }
    if (c->hostname && *c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0)
        return oci_init_err_os(&s->err, errno, "hostname");
    if (c->domainname && *c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0)
        return oci_init_err_os(&s->err, errno, "domainname");
    return 0;
}

static int setup_tty(init_state *s)
{
    return own_terminal(s->c, s->a->console, &s->err);
}

/* The process's own: limits, credentials, cwd, no_new_privs, the scope. */
static int set_process(init_state *s)
{
    return become_process(s->c, s->exe_buf, sizeof s->exe_buf, s->a->host_net, s->aa_fd, &s->exe, &s->err);
}

/* Only the descriptors the workload is given, the engine's seccomp baseline last. */
static int confine(init_state *s)
{
    int keep[] = {sock_fd, s->a->fifo, s->selffd};
    if (close_others(keep, 3, s->a->preserve, &s->err) < 0)
        return -1;
    mxc_reset_signals();
    int rc = mxc_seccomp_apply(false);
    return rc < 0 ? oci_init_err_os(&s->err, -rc, "seccomp") : 0;
}

static int (*const init_steps[])(init_state *) = {
    wait_maps, join_namespaces, receive_trees, setup_rootfs, protect_setid, apply_mounts, run_create_hooks,
    pivot,     set_names,       setup_tty,     set_process,  confine,
};

/* Ready ('K'); the parent saves the state ('S'; first startContainer's state, 'P'), then the exec
 * fifo holds the init until start; the config's seccomp profile, the startContainer hooks, execve.
 * A failure from here on is start's to report (on the fifo) and stderr's: the parent has its answer. */
static _Noreturn void wait_start_and_exec(init_state *s)
{
    const oci_hooks *hk = s->a->hooks;
    char *start_state = NULL, tag;
    int fd, rc;
    /* a profile that notifies is loaded now, as runc loads it (before the fifo): create hands its
     * listener to the agent (notify.h; 'N' after 'K'), the process keeps none */
    bool notifies = oci_seccomp_notifies(s->a->seccomp);
    int listener = notifies ? oci_seccomp_load(s->a->seccomp) : 0;
    if (listener < 0) {
        oci_init_err_os(&s->err, -listener, "linux.seccomp");
        report(&s->err);
    }
    if (mxc_sockmsg_send_tag(sock_fd, OCI_MSG_READY, -1) < 0 ||
        (notifies && (mxc_sockmsg_send_tag(sock_fd, OCI_MSG_LISTENER, listener) < 0 || close(listener) < 0)) ||
        (hk && hk->n[OCI_HOOK_START_CONTAINER] && !(start_state = recv_text(OCI_MSG_START_STATE))) ||
        recv_msg(&tag, &fd) < 0 || tag != OCI_MSG_SAVED)
        _exit(1);
    close(sock_fd);
    char num[16];
    snprintf(num, sizeof num, "%d", s->a->fifo);
    int w = openat(s->selffd, num, O_WRONLY | O_CLOEXEC);
    if (w < 0)
        _exit(1);
    /* the config's profile, stacked on the baseline, before a startContainer hook: the hook is the
     * image's code and runs under the container's whole filter (as runc runs it) */
    bool hooked = start_state != NULL;
    if (hooked && !notifies && (rc = oci_seccomp_load(s->a->seccomp)) < 0) {
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
    close(s->selffd);
    /* the config's profile last, stacked on the baseline: only execve is left to pass it */
    if (!hooked && !notifies && (rc = oci_seccomp_load(s->a->seccomp)) < 0) {
        dprintf(2, "mxc-oci: linux.seccomp: %s\n", strerror(-rc));
        _exit(1);
    }
    execve(s->exe, (char *const *)s->c->args, (char *const *)s->c->env);
    dprintf(2, "mxc-oci: exec %s: %s\n", s->exe, strerror(errno));
    _exit(127);
}

_Noreturn void oci_init_main(const oci_init_args *a)
{
    sock_fd = a->sock;
    init_state s = {.a = a, .c = a->c, .aa_fd = -1, .rootfs = -1, .root_fd = -1, .selffd = -1};
    for (size_t i = 0; i < sizeof init_steps / sizeof init_steps[0]; i++)
        if (init_steps[i](&s) < 0) {
            if (s.quiet)
                _exit(1);
            report(&s.err);
        }
    wait_start_and_exec(&s);
}
