/* netpool.c — see netpool.h.
 *
 * Layout: MXC_NETPOOL_DIR/ready/<key>.<holder pid>/pids, claimed/<key>.<holder pid>.<claimer
 * pid>/pids, .new.<holder pid>/ (being made: "holder" — its pid, start time and namespace — and
 * "cgroup" before the holder is told to stay and before pasta starts, then "pids"), lock (the
 * refiller's flock).  Every step below the pool's root goes through directory descriptors,
 * O_NOFOLLOW; the root is checked to be a directory of root's, 0700, not a link: nothing a sandbox
 * can write is ever on the path. */
#include "netpool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "fdio.h"
#include "loopback.h"
#include "net.h"
#include "procs.h"
#include "stack.h"

#define NAME_MAX_POOL 192 /* <ino>-<dns>-<rules' hash>.<holder>[.<claimer>] fits */
#define RULES_MAX (4u << 20) /* mxc-nft's own bound on a script */
#define POOL_SIZE_MAX 32  /* MXC_NETPOOL_SIZE's bound */

/* this process's one claim, between mxc_netpool_claim and mxc_netpool_adopt */
static struct {
    bool live;
    ino_t ns_ino;
    dev_t ns_dev;
    int pasta_fd;
    pid_t pasta;
    char *set; /* the entry's rules as installed, past the plan's rule set: the host set's script */
    bool charged; /* pasta is in the claimer's sandbox's cgroup: the entry's, renamed (v1) */
    char name[NAME_MAX_POOL]; /* under claimed/ */
} claim = {.pasta_fd = -1};

int mxc_netpool_size(void)
{
    const char *v = getenv("MXC_NETPOOL_SIZE");
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : MXC_NETPOOL_DEFAULT_SIZE;
    return v && *v && (*end || n < 0 || n > POOL_SIZE_MAX) ? MXC_NETPOOL_DEFAULT_SIZE : (int)n;
}

static bool pool_model(const mxc_net_policy *np)
{
    return np->model == MXC_NETM_DIRECT && np->ruleset && geteuid() == 0 && mxc_netpool_size() > 0;
}

/* pasta dials from the namespace it was started in: an entry serves only callers of that
 * namespace (its inode here, checked again against pasta's own at the claim) and that DNS
 * upstream. */
static ino_t own_netns(void)
{
    struct stat st;
    return stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
}

/* The key also names the plan's rule set (FNV-1a, a filter only: a claim compares the entry's
 * installed rules with the plan's byte for byte, so a collision finds no entry). */
static void key_of(const mxc_net_policy *np, char *key, size_t sz)
{
    unsigned long long h = 14695981039346656037ULL;
    for (const char *c = np->ruleset; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    snprintf(key, sz, "%llu-%s-%016llx", (unsigned long long)own_netns(), np->dns[0] ? np->dns : "none", h);
}

/* The pool's root (made when make), checked: a directory of root's, 0700, not a link. */
static int root_open(bool make)
{
    if (make && mkdir(MXC_NETPOOL_DIR, 0700) < 0 && errno != EEXIST)
        return -1;
    int fd = open(MXC_NETPOOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 07777) != 0700)) {
        close(fd);
        return -1;
    }
    if (fd >= 0 && make)
        (void)!mkdirat(fd, "ready", 0700), (void)!mkdirat(fd, "claimed", 0700);
    return fd;
}

static int sub_open(int root, const char *name)
{
    return openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A listing of the directory dir (a descriptor of its own: dir's offset is untouched); NULL. */
static DIR *listing(int dir)
{
    int fd = dir >= 0 ? openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

static void listing_end(DIR *d)
{
    if (d)
        closedir(d);
}

typedef struct {
    pid_t holder, pasta;
    unsigned long long holder_start, pasta_start;
} entry_pids;

static int pids_read(int dir, const char *name, entry_pids *ep)
{
    char path[NAME_MAX + 8], text[128];
    snprintf(path, sizeof path, "%s/pids", name);
    if (mxc_read_small_at(dir, path, text, sizeof text) <= 0)
        return -1;
    int h, p;
    if (sscanf(text, "%d %llu %d %llu", &h, &ep->holder_start, &p, &ep->pasta_start) != 4 || h <= 0 || p <= 0)
        return -1;
    ep->holder = h, ep->pasta = p;
    return 0;
}

static void kill_checked(pid_t pid, unsigned long long start)
{
    int fd = mxc_pidfd_of(pid, start);
    if (fd >= 0) {
        syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
        close(fd);
    }
}

static void entry_remove(int dir, const char *name)
{
    static const char *const files[] = {"pids", "rules", "cgroup", "holder"};
    char path[NAME_MAX + 8];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", name, files[i]);
        unlinkat(dir, path, 0);
    }
    unlinkat(dir, name, AT_REMOVEDIR);
}

/* The entry's own cgroup (v1: "netpool-<holder>-<its start time>", made with it, its pasta inside; none on v2
 * or where it could not be made): whether it has one, its name into cg. */
static bool entry_cgroup(int dir, const char *name, char *cg, size_t cgsz)
{
    char path[NAME_MAX + 8];
    snprintf(path, sizeof path, "%s/cgroup", name);
    cg[0] = '\0';
    return mxc_read_small_at(dir, path, cg, cgsz) > 0 && !strncmp(cg, "netpool-", 8) && !strchr(cg, '/') &&
           !strchr(cg, '.');
}

/* The entry's installed rules when they are the plan's rule set (byte for byte) followed by this
 * host's set's script, one "add element" line or none: that script (owned), or NULL. */
static char *rules_match(int dir, const char *name, const char *ruleset)
{
    char path[NAME_MAX + 8];
    snprintf(path, sizeof path, "%s/rules", name);
    int fd = openat(dir, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    size_t len = 0, a = strlen(ruleset);
    char *text = fd >= 0 ? mxc_read_whole(fd, RULES_MAX, &len) : NULL;
    if (fd >= 0)
        close(fd);
    /* past the rule set, nothing but the set's one "add element" line (thishost.h), or nothing */
    static const char ADD[] = "add element inet mxc " MXC_THISHOST_SET " { ";
    const char *rest = text && len >= a && strlen(text) == len && !memcmp(text, ruleset, a) ? text + a : NULL;
    bool one_line = rest && (!*rest || (!strncmp(rest, ADD, sizeof ADD - 1) && strchr(rest, '\n') == rest + strlen(rest) - 1));
    char *set = one_line ? strdup(rest) : NULL;
    free(text);
    return set;
}

/* Its holder and pasta killed (when they are still the record's), its record removed. */
static void entry_discard(int dir, const char *name)
{
    entry_pids ep;
    char cg[64];
    if (pids_read(dir, name, &ep) == 0) {
        kill_checked(ep.pasta, ep.pasta_start);
        kill_checked(ep.holder, ep.holder_start);
    }
    if (entry_cgroup(dir, name, cg, sizeof cg))
        mxc_cgroup_pool_remove(cg);
    entry_remove(dir, name);
}

/* The entry's cgroup (when it has one) renamed to the claimer's sandbox's (*charged then): 0, or
 * -errno: not renamed (-ENOTSUP: the claimer's cgroups are not v1; -EEXIST: the name is taken),
 * or -EIO: half renamed, not undone (the entry is unusable). */
static int entry_charge(int claimed, const char *to, const char *cgroup, bool *charged)
{
    char cg[64];
    *charged = false;
    if (!entry_cgroup(claimed, to, cg, sizeof cg))
        return 0; /* pasta is moved in by the keeper (stack.c) */
    int rc = cgroup && cgroup[0] ? mxc_cgroup_rename(cg, cgroup) : -ENOTSUP;
    *charged = rc == 0;
    return rc;
}

/* The claimed entry's namespace by descriptor: its holder and pasta still the record's
 * processes (pidfds), the namespace opened while the holder is pinned and alive; the holder is
 * then killed.  The namespace's fd, or -1. */
static int entry_take(int claimed, const char *name, const char *cgroup, bool *charged)
{
    entry_pids ep;
    if (pids_read(claimed, name, &ep) < 0)
        return -1;
    int hfd = mxc_pidfd_of(ep.holder, ep.holder_start);
    int pfd = hfd >= 0 ? mxc_pidfd_of(ep.pasta, ep.pasta_start) : -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)ep.holder);
    int nsfd = pfd >= 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    /* pasta's own side in the caller's namespace (the key said so; its process says so now) */
    char ppath[64];
    snprintf(ppath, sizeof ppath, "/proc/%d/ns/net", (int)ep.pasta);
    struct stat st, pst;
    ino_t mine = own_netns();
    struct pollfd alive[2] = {{.fd = hfd, .events = POLLIN}, {.fd = pfd, .events = POLLIN}};
    bool ok = nsfd >= 0 && mine && stat(ppath, &pst) == 0 && pst.st_ino == mine && poll(alive, 2, 0) == 0 &&
              fstat(nsfd, &st) == 0;
    /* once it is known alive and ours: its cgroup renamed to the sandbox's, then the holder killed
     * (a sweep meanwhile sees an entry whose holder lives, or the sandbox's cgroup) */
    int charge = ok ? entry_charge(claimed, name, cgroup, charged) : 0;
    if (hfd >= 0 && (!ok || charge == 0 || charge == -EIO))
        syscall(SYS_pidfd_send_signal, hfd, SIGKILL, NULL, 0);
    if (hfd >= 0)
        close(hfd);
    if (!ok || charge < 0) {
        if (nsfd >= 0)
            close(nsfd);
        if (pfd >= 0)
            close(pfd);
        return !ok || charge == -EIO ? -1 : -2;
    }
    claim.live = true;
    claim.ns_ino = st.st_ino, claim.ns_dev = st.st_dev;
    claim.pasta_fd = pfd, claim.pasta = ep.pasta;
    snprintf(claim.name, sizeof claim.name, "%s", name);
    return nsfd;
}

/* A claim never adopted (the start failed between): its pasta killed, its record removed. */
void mxc_netpool_release(void)
{
    if (!claim.live)
        return;
    syscall(SYS_pidfd_send_signal, claim.pasta_fd, SIGKILL, NULL, 0);
    close(claim.pasta_fd);
    free(claim.set);
    claim.set = NULL;
    int root = root_open(false), claimed = root >= 0 ? sub_open(root, "claimed") : -1;
    if (claimed >= 0)
        entry_remove(claimed, claim.name), close(claimed);
    if (root >= 0)
        close(root);
    claim.live = false;
    claim.pasta_fd = -1;
}

int mxc_netpool_claim(const mxc_net_policy *np, const char *cgroup)
{
    mxc_netpool_release();
    if (!pool_model(np))
        return -1;
    char key[NAME_MAX_POOL - 24], prefix[NAME_MAX_POOL - 16];
    key_of(np, key, sizeof key);
    snprintf(prefix, sizeof prefix, "%s.", key);
    int root = root_open(false);
    int ready = root >= 0 ? sub_open(root, "ready") : -1, claimed = root >= 0 ? sub_open(root, "claimed") : -1;
    DIR *d = claimed >= 0 ? listing(ready) : NULL;
    int nsfd = -1, nback = 0;
    char back[POOL_SIZE_MAX][256]; /* (a d_name) put back untouched: a rename back may be listed again */
    struct dirent *de;
    while (d && nsfd < 0 && nback < POOL_SIZE_MAX && (de = readdir(d))) {
        char to[NAME_MAX_POOL];
        bool seen = false;
        for (int i = 0; i < nback && !seen; i++)
            seen = !strcmp(back[i], de->d_name);
        if (seen || strncmp(de->d_name, prefix, strlen(prefix)) || strchr(de->d_name + strlen(prefix), '.') ||
            snprintf(to, sizeof to, "%s.%d", de->d_name, (int)getpid()) >= (int)sizeof to)
            continue;
        /* one winner: a second claimer's rename finds nothing */
        if (renameat(ready, de->d_name, claimed, to) < 0)
            continue;
        char *set = rules_match(claimed, to, np->ruleset);
        bool charged = false;
        int taken = set ? entry_take(claimed, to, cgroup, &charged) : -1;
        if (taken >= 0) {
            nsfd = taken;
            claim.set = set;
            claim.charged = charged;
            continue;
        }
        free(set);
        if (taken == -2) { /* alive, but its cgroup is not this sandbox's to take: left ready, untouched */
            snprintf(back[nback++], sizeof back[0], "%s", de->d_name);
            (void)!renameat(claimed, to, ready, de->d_name);
        } else {
            entry_discard(claimed, to); /* stale, half renamed, or another rule set's: gone, the next tried */
        }
    }
    listing_end(d);
    int fds[] = {root, ready, claimed};
    for (size_t i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return nsfd;
}

int mxc_netpool_adopt(int nsfd, pid_t *pasta, bool *charged)
{
    struct stat st;
    if (!claim.live || fstat(nsfd, &st) < 0 || st.st_ino != claim.ns_ino || st.st_dev != claim.ns_dev)
        return -1;
    int root = root_open(false), claimed = root >= 0 ? sub_open(root, "claimed") : -1;
    if (claimed >= 0)
        entry_remove(claimed, claim.name);
    if (claimed >= 0)
        close(claimed);
    if (root >= 0)
        close(root);
    claim.live = false;
    free(claim.set);
    claim.set = NULL;
    *pasta = claim.pasta;
    *charged = claim.charged;
    /* made under SCHED_IDLE (the refiller's): now the sandbox's stack, scheduled as before */
    struct sched_param normal = {0};
    struct pollfd alive = {.fd = claim.pasta_fd, .events = POLLIN};
    if (poll(&alive, 1, 0) == 0) /* still the pinned process: its pid names it */
        sched_setscheduler(claim.pasta, SCHED_OTHER, &normal);
    int fd = claim.pasta_fd;
    claim.pasta_fd = -1;
    return fd;
}

const char *mxc_netpool_claimed_set(int nsfd)
{
    struct stat st;
    return claim.live && fstat(nsfd, &st) == 0 && st.st_ino == claim.ns_ino && st.st_dev == claim.ns_dev ? claim.set
                                                                                                         : NULL;
}

int mxc_netpool_move(const int *fds, size_t n, pid_t pid)
{
    char text[16];
    int len = snprintf(text, sizeof text, "%d", (int)pid);
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0 && write(fds[i], text, (size_t)len) != len)
            return -errno;
    return 0;
}

/* ---- making entries (the refiller) --------------------------------------- */

static void sysctl_set(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!write(fd, value, strlen(value));
        close(fd);
    }
}

/* The holder: a network namespace of its own (owned by the host's user namespace), ping
 * sockets for every gid (as stack.c's rules installer sets in a sandbox's own namespace), lo up
 * (the sandbox's holder, without CAP_NET_ADMIN here, cannot); then it only holds the namespace
 * until a claim kills it.  ip_unprivileged_port_start stays 1024: the workload's uid holds no
 * capability, so ports below 1024 stay refused to it as in a namespace of its own. */
static _Noreturn void holder_main(const int sp[2])
{
    int ready = sp[1];
    close(sp[0]);
    prctl(PR_SET_NAME, "mxc-netpool");
    if (unshare(CLONE_NEWNET) < 0)
        _exit(1);
    sysctl_set("/proc/sys/net/ipv4/ping_group_range", "0 2147483647");
    if (mxc_loopback_up() < 0)
        _exit(1);
    /* bound to its maker until recorded: "k" once the refiller's .new record names it (a sweep can
     * find it from then on); EOF — the refiller died or gave up — ends it */
    char k = 0;
    if (write(ready, "1", 1) != 1 || read(ready, &k, 1) != 1 || k != 'k')
        _exit(1);
    int keep[] = {-1};
    mxc_close_all_but(keep, 0);
    for (;;)
        pause();
}

/* The entry's rules installed in its namespace (the plan's rule set and this host's destinations
 * as they are now, exactly what a sandbox's own attach installs, stack.c), and the script kept
 * beside its record ("rules"), which a claim compares with its own plan's: true, or false. */
static bool entry_rules(const mxc_net_policy *np, int nsfd, int dir)
{
    int err = 0, fd = -1;
    char *script = mxc_net_rules_now(np, NULL, &err);
    mxc_error e = {0};
    bool ok = script && mxc_net_rules_into(nsfd, script, &e) == 0 &&
              (fd = openat(dir, "rules", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0 &&
              mxc_write_all(fd, script, strlen(script));
    if (fd >= 0)
        close(fd);
    mxc_error_clear(&e);
    free(script);
    return ok;
}

/* A new file name in dir holding text: true, or false. */
static bool file_put(int dir, const char *name, const char *text)
{
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && mxc_write_all(fd, text, strlen(text));
    if (fd >= 0)
        close(fd);
    return ok;
}

/* The half-made entry's record, before the holder is told to stay and before pasta starts: the
 * directory tmp under root, its "holder" (pid, start time, its namespace's inode: pasta is found by
 * it, new_unrecorded_kill, should the refiller die before "pids" names it) and its cgroup's name (cg, ""
 * for none).  0, or -1; *made: whether this call made tmp (the only record its failure removes). */
static int entry_begin(int root, const char *tmp, pid_t h, unsigned long long hstart, int nsfd, const char *cg,
                       bool *made)
{
    struct stat st;
    char text[96];
    *made = hstart && fstat(nsfd, &st) == 0 && mkdirat(root, tmp, 0700) == 0;
    int dir = *made ? sub_open(root, tmp) : -1;
    snprintf(text, sizeof text, "%d %llu %llu\n", (int)h, hstart, dir >= 0 ? (unsigned long long)st.st_ino : 0ULL);
    bool ok = dir >= 0 && file_put(dir, "holder", text) && (!cg[0] || file_put(dir, "cgroup", cg));
    if (dir >= 0)
        close(dir);
    return ok ? 0 : -1;
}

/* The record of holder and pasta (ep) in the half-made entry tmp under root, its rules installed,
 * then renamed to ready/name: 0, or -1. */
static int entry_record(const mxc_net_policy *np, int root, int ready, int nsfd, const entry_pids *ep,
                        const char *tmp, const char *name)
{
    char pids[96];
    snprintf(pids, sizeof pids, "%d %llu %d %llu\n", (int)ep->holder, ep->holder_start, (int)ep->pasta,
             ep->pasta_start);
    int dir = ep->holder_start && ep->pasta_start ? sub_open(root, tmp) : -1;
    int rc = dir >= 0 && file_put(dir, "pids", pids) && entry_rules(np, nsfd, dir) &&
                     renameat(root, tmp, ready, name) == 0
                 ? 0
                 : -1;
    if (dir >= 0)
        close(dir);
    return rc;
}

/* tests: the refiller killed at a stage of making an entry (MXC_FAULT_NETPOOL_REFILLER_DIES) */
static void refiller_fault(const char *stage)
{
    const char *f = mxc_fault("NETPOOL_REFILLER_DIES");
    if (f && !strcmp(f, stage))
        raise(SIGKILL);
}

static bool comm_is(pid_t pid, const char *const *names)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    (void)mxc_read_small_at(AT_FDCWD, path, comm, sizeof comm);
    for (; *names; names++)
        if (!strcmp(comm, *names))
            return true;
    return false;
}

static bool pool_comm(pid_t pid)
{
    static const char *const names[] = {"pasta\n", "passt\n", "passt.avx2\n", "mxc-netpool\n", NULL};
    return comm_is(pid, names);
}

/* the refiller's name (its forks' too: pasta's launcher until its exec) */
static bool refiller_comm(pid_t pid)
{
    static const char *const names[] = {"mxc-netpool-fil\n", NULL};
    return comm_is(pid, names);
}

/* Whether process pid holds a descriptor of the network namespace ino: 1, 0, or -1 when it cannot be
 * told (its descriptors unreadable here: a non-dumpable process to a caller without CAP_SYS_PTRACE). */
static int netns_held(pid_t pid, ino_t ino)
{
    char dir[64], want[48], link[48];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    snprintf(want, sizeof want, "net:[%llu]", (unsigned long long)ino);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    struct dirent *de;
    int held = d || errno == ENOENT || errno == ESRCH ? 0 : -1;
    while (d && held == 0 && (de = readdir(d))) {
        ssize_t n = readlinkat(dfd, de->d_name, link, sizeof link - 1);
        if (n > 0)
            held = (link[n] = '\0', !strcmp(link, want));
        else if (errno == EACCES || errno == EPERM)
            held = -1;
    }
    if (d)
        closedir(d);
    else if (dfd >= 0)
        close(dfd);
    return held;
}

/* tests: the holder dead (a zombie, not reaped) before it is told to stay (MXC_FAULT_NETPOOL_HOLDER_DIES) */
static void holder_fault(pid_t h)
{
    siginfo_t si;
    if (h > 0 && mxc_fault("NETPOOL_HOLDER_DIES") && kill(h, SIGKILL) == 0)
        waitid(P_PID, (id_t)h, &si, WEXITED | WNOWAIT);
}

/* pasta started on the holder's namespace nsfd, on v1 in a cgroup of the entry's own (its join
 * files, closed here: none on v2), which a claim renames into the sandbox's: charged to it from its
 * first page, and no migration on the start's path (cgroup.h).  Its pid, or -1. */
static pid_t entry_stack(const mxc_net_policy *np, int nsfd, const int *join, int njoin)
{
    char why[400];
    pid_t pasta = mxc_net_pasta_start(np, nsfd, (int *)join, (size_t)njoin, why, sizeof why);
    for (int i = 0; i < njoin; i++)
        close(join[i]);
    return pasta;
}

/* One entry of np's key, made and renamed into ready/: 0, or -1.  Nothing of it is ever unrecorded
 * while it can outlive this refiller: the holder ends by itself until told to stay ("k"), which it
 * is once .new.<holder> names it (entry_begin); pasta starts only after (found by the holder's
 * namespace until "pids" names it); the cgroup is named by the holder's pid and start time, which
 * --gc owns it by. */
static int entry_make(const mxc_net_policy *np, int root, int ready, const char *key)
{
    int sp[2]; /* the holder's "ready", then its "stay" */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
        return -1;
    pid_t h = fork();
    if (h == 0)
        holder_main(sp);
    close(sp[1]);
    refiller_fault("forked");
    char b = 0, path[64], tmp[32], name[NAME_MAX_POOL], cg[64];
    bool up = h > 0 && read(sp[0], &b, 1) == 1;
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)h);
    int nsfd = up ? open(path, O_RDONLY | O_CLOEXEC) : -1, join[2], njoin = 0;
    refiller_fault("ready");
    holder_fault(h);
    unsigned long long hstart = h > 0 ? mxc_proc_start_time(h) : 0;
    snprintf(cg, sizeof cg, "netpool-%d-%llu", (int)h, hstart);
    snprintf(tmp, sizeof tmp, ".new.%d", (int)h);
    snprintf(name, sizeof name, "%s.%d", key, (int)h);
    if (nsfd >= 0 && (njoin = mxc_cgroup_pool_make(cg, join)) < 0)
        njoin = 0, cg[0] = '\0';
    bool made = false, begun = nsfd >= 0 && entry_begin(root, tmp, h, hstart, nsfd, cg, &made) == 0 &&
                                send(sp[0], "k", 1, MSG_NOSIGNAL) == 1;
    close(sp[0]);
    pid_t pasta = begun ? entry_stack(np, nsfd, join, njoin) : -1;
    for (int i = 0; !begun && i < njoin; i++)
        close(join[i]);
    refiller_fault("pasta");
    /* pasta is not our child (it daemonized): named by a pidfd taken now and its start time read
     * after it, so a pid reused meanwhile is neither recorded nor killed */
    int pfd = pasta > 0 ? (int)syscall(SYS_pidfd_open, pasta, 0) : -1;
    entry_pids ep = {.holder = h, .pasta = pasta, .holder_start = hstart,
                     .pasta_start = pfd >= 0 ? mxc_proc_start_time(pasta) : 0};
    struct stat ns;
    int held = pfd >= 0 && syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0) == 0 && fstat(nsfd, &ns) == 0
                   ? netns_held(pasta, ns.st_ino)
                   : 0;
    /* where pasta's descriptors cannot be read (no CAP_SYS_PTRACE), its name vouches for it */
    bool ours = held == 1 || (held < 0 && pool_comm(pasta));
    if (!ours) /* gone before its start time was read, or not the one on this namespace: never killed */
        ep.pasta_start = 0;
    int rc = ep.pasta_start ? entry_record(np, root, ready, nsfd, &ep, tmp, name) : -1;
    if (nsfd >= 0)
        close(nsfd);
    if (rc < 0) {
        if (ours)
            syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
        if (h > 0)
            kill(h, SIGKILL); /* our child, not yet reaped: its pid is still its own */
        if (cg[0])
            mxc_cgroup_pool_remove(cg);
        if (made) /* only a record this call made (.new.<h> may be an older holder's) */
            entry_remove(root, tmp);
    }
    if (pfd >= 0)
        close(pfd);
    if (h > 0)
        waitpid(h, NULL, WNOHANG); /* killed: reaped here; alive: init's once we exit */
    return rc;
}

static int count_key(int ready, const char *prefix)
{
    int n = 0;
    DIR *d = listing(ready);
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += !strncmp(de->d_name, prefix, strlen(prefix));
    listing_end(d);
    return n;
}

/* Whether any process but a stack or a pool holder is in the network namespace ino: one whose
 * only members are idle pool entries' pastas is nobody's any more (a test's or a bench's
 * namespace, deleted), and its entries are never claimed again. */
static bool netns_used(ino_t ino)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    bool used = false;
    while (d && !used && (de = readdir(d))) {
        char path[300];
        struct stat st;
        pid_t pid = (pid_t)atoi(de->d_name);
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
        used = stat(path, &st) == 0 && st.st_ino == ino && !pool_comm(pid);
    }
    if (d)
        closedir(d);
    return !d || used;
}

/* Entries made for another namespace than ours whose namespace nobody uses now: discarded.  Only
 * when there are any: a pool whose callers all live in one namespace (a host's) never scans. */
static int sweep_orphans(int ready, bool act)
{
    char own[24];
    snprintf(own, sizeof own, "%llu-", (unsigned long long)own_netns());
    int n = 0;
    DIR *d = listing(ready);
    struct dirent *de;
    ino_t known_used = 0;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.' || !strncmp(de->d_name, own, strlen(own)))
            continue;
        ino_t ino = (ino_t)strtoull(de->d_name, NULL, 10);
        if (ino == known_used || netns_used(ino)) {
            known_used = ino;
            continue;
        }
        n++;
        if (act)
            entry_discard(ready, de->d_name);
    }
    listing_end(d);
    return n;
}

/* How many ready entries the caller's namespace has (own: "<its inode>-", every rule set's), and
 * the oldest of them not of this key (prefix) in oldest ("" when none). */
static int own_entries(int ready, const char *own, const char *prefix, char *oldest, size_t sz)
{
    int n = 0;
    struct timespec first = {0};
    struct stat st;
    oldest[0] = '\0';
    DIR *d = listing(ready);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, own, strlen(own)))
            continue;
        n++;
        if (!strncmp(de->d_name, prefix, strlen(prefix)) || strlen(de->d_name) >= sz ||
            fstatat(ready, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (!oldest[0] || st.st_mtim.tv_sec < first.tv_sec ||
            (st.st_mtim.tv_sec == first.tv_sec && st.st_mtim.tv_nsec < first.tv_nsec)) {
            first = st.st_mtim;
            snprintf(oldest, sz, "%s", de->d_name);
        }
    }
    listing_end(d);
    return n;
}

/* Room for one more entry of this key: the size bounds the caller's namespace's entries whatever
 * their rule sets (each its own key), so the oldest of another key's are ended first — taken out
 * of ready/ as a claim takes one (a rename, one winner: never one a claimer holds), then
 * discarded.  true, or false when there is no room (this key's own entries fill it). */
static bool entry_room(int ready, int claimed, const char *prefix, int size)
{
    char own[24], oldest[NAME_MAX_POOL], to[NAME_MAX_POOL + 16];
    snprintf(own, sizeof own, "%llu-", (unsigned long long)own_netns());
    for (int tries = 0; tries < 4 * POOL_SIZE_MAX; tries++) {
        if (own_entries(ready, own, prefix, oldest, sizeof oldest) < size)
            return true;
        if (!oldest[0] || claimed < 0)
            return false;
        snprintf(to, sizeof to, "%s.%d", oldest, (int)getpid());
        if (renameat(ready, oldest, claimed, to) == 0)
            entry_discard(claimed, to);
    }
    return false;
}

static _Noreturn void refiller(const mxc_net_policy *np)
{
    prctl(PR_SET_NAME, "mxc-netpool-fill");
    /* CPU no start is waiting for only: its holders and pastas inherit it (a claim gives the
     * pasta the normal policy back, mxc_netpool_adopt) */
    struct sched_param idle = {0};
    sched_setscheduler(0, SCHED_IDLE, &idle);
    int root = root_open(true), ready = root >= 0 ? sub_open(root, "ready") : -1;
    int lock = root >= 0 ? openat(root, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    if (ready < 0 || lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
        _exit(0);
    sweep_orphans(ready, true);
    char key[NAME_MAX_POOL - 24], prefix[NAME_MAX_POOL - 16];
    key_of(np, key, sizeof key);
    snprintf(prefix, sizeof prefix, "%s.", key);
    /* at most size entries a run, none after a failure: never a loop that outruns its sweep */
    int size = mxc_netpool_size(), claimed = sub_open(root, "claimed");
    for (int made = 0; made < size && count_key(ready, prefix) < size; made++)
        if (!entry_room(ready, claimed, prefix, size) || entry_make(np, root, ready, key) < 0)
            break;
    _exit(0);
}

void mxc_netpool_refill(const mxc_net_policy *np)
{
    /* the refiller mallocs, reads directories and starts pasta in a forked child without an exec:
     * only a single-threaded caller's child cannot find a libc lock held by another thread (an
     * in-process caller of the C ABI may have many) */
    if (!pool_model(np) || access(MXC_NET_PASTA, X_OK) < 0 || !mxc_single_threaded())
        return;
    /* what the refiller needs (pasta's arguments: the model and dns; the rules: the rule set, which
     * the forked refiller reads in its own copy of this memory) */
    mxc_net_policy mine = {.model = np->model, .ruleset = np->ruleset};
    memcpy(mine.dns, np->dns, sizeof mine.dns);
    pid_t c = fork();
    if (c == 0) {
        setsid();
        int keep[] = {-1};
        mxc_close_all_but(keep, 0);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0)
            dup2(null, 0), dup2(null, 1), dup2(null, 2);
        mxc_reset_signals();
        if (fork() == 0)
            refiller(&mine);
        _exit(0);
    }
    if (c > 0)
        while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
            ;
}

/* ---- --gc and --probe ----------------------------------------------------- */

static bool entry_stale(int dir, const char *name, bool is_ready)
{
    entry_pids ep;
    struct stat st;
    if (pids_read(dir, name, &ep) < 0)
        return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && time(NULL) - st.st_mtime > 10;
    if (!is_ready) { /* claimed/<key>.<holder>.<claimer>: its claimer adopts or dies */
        const char *dot = strrchr(name, '.');
        return !dot || kill((pid_t)atoi(dot + 1), 0) < 0;
    }
    bool old = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && time(NULL) - st.st_mtime > MXC_NETPOOL_MAX_AGE_S;
    return old || mxc_netpool_size() == 0 || !mxc_pid_alive(ep.holder, ep.holder_start) ||
           !mxc_pid_alive(ep.pasta, ep.pasta_start);
}

static int sweep_dir(int dir, bool is_ready, bool act)
{
    int n = 0;
    DIR *d = listing(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.' || !entry_stale(dir, de->d_name, is_ready))
            continue;
        n++;
        if (act)
            entry_discard(dir, de->d_name);
    }
    listing_end(d);
    return n;
}

/* A descriptor of the namespace of holder h (started at hstart) when its inode is ino: held, it
 * pins the namespace, so no other can take the inode while pastas are matched by it; -1 when the
 * holder is gone (or its pid another's: the start time read after the open). */
static int netns_pin(pid_t h, unsigned long long hstart, ino_t ino)
{
    char path[48];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)h);
    int fd = ino ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_ino != ino || mxc_proc_start_time(h) != hstart)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A half-made entry's holder (its "holder" record) killed, and what its refiller started on the
 * holder's namespace before "pids" named it: a pasta, or its launcher (the refiller's name, between
 * dropping the lock and its exec), holding that namespace.  Looked for only while the namespace is
 * pinned from the living holder: then no other namespace has its inode, and none but the entry's
 * own processes hold it (a half-made entry is nobody's).  Once the holder is gone the inode may be
 * a sandbox's, whose pasta is not ours: what the entry's cgroup holds is ended by the sweep (v1),
 * and on cgroup2 a pasta whose refiller and holder both died unrecorded is left (docs). */
static void new_unrecorded_kill(int root, const char *name)
{
    char path[NAME_MAX + 8], text[96];
    snprintf(path, sizeof path, "%s/holder", name);
    int h;
    unsigned long long hstart, ino;
    if (mxc_read_small_at(root, path, text, sizeof text) <= 0 ||
        sscanf(text, "%d %llu %llu", &h, &hstart, &ino) != 3 || h <= 0 || !hstart)
        return;
    int pin = netns_pin(h, hstart, (ino_t)ino);
    kill_checked(h, hstart);
    DIR *d = pin >= 0 ? opendir("/proc") : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        pid_t pid = (pid_t)atoi(de->d_name);
        unsigned long long start = pid > 0 ? mxc_proc_start_time(pid) : 0;
        if (start >= hstart && (pool_comm(pid) || refiller_comm(pid)) && netns_held(pid, (ino_t)ino) == 1)
            kill_checked(pid, start);
    }
    if (d)
        closedir(d);
    if (pin >= 0)
        close(pin);
}

/* .new.<holder>: being made by the refiller that holds the lock, else half made by one that died
 * (its holder lives on: the holder's pid says nothing of its maker).  Swept only while no refiller
 * runs: the lock taken here (a refill that starts meanwhile returns at once). */
static int sweep_new(int root, bool act)
{
    int n = 0, lock = openat(root, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
        if (lock >= 0)
            close(lock);
        return 0;
    }
    DIR *d = listing(root);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, ".new.", 5))
            continue;
        n++;
        if (act)
            new_unrecorded_kill(root, de->d_name), entry_discard(root, de->d_name);
    }
    listing_end(d);
    close(lock); /* the lock with it */
    return n;
}

void mxc_netpool_sweep(bool act, json_t *r)
{
    int root = geteuid() == 0 ? root_open(false) : -1, n = 0;
    if (root >= 0) {
        int ready = sub_open(root, "ready"), claimed = sub_open(root, "claimed");
        n += ready >= 0 ? sweep_dir(ready, true, act) + sweep_orphans(ready, act) : 0;
        n += claimed >= 0 ? sweep_dir(claimed, false, act) : 0;
        n += sweep_new(root, act);
        if (ready >= 0)
            close(ready);
        if (claimed >= 0)
            close(claimed);
        close(root);
    }
    json_object_set_new(r, "netpoolEntries", json_integer(n));
}

static long pss_kib(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    if (mxc_read_small_at(AT_FDCWD, path, buf, sizeof buf) <= 0)
        return -1;
    const char *p = strstr(buf, "\nPss:");
    return p ? strtol(p + 5, NULL, 10) : -1;
}

json_t *mxc_netpool_probe(void)
{
    int root = geteuid() == 0 ? root_open(false) : -1, ready = root >= 0 ? sub_open(root, "ready") : -1;
    int n = 0;
    long pss = -1;
    DIR *d = listing(ready);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        entry_pids ep;
        if (de->d_name[0] == '.' || pids_read(ready, de->d_name, &ep) < 0)
            continue;
        n++;
        long a = pss_kib(ep.holder), b = pss_kib(ep.pasta);
        if (pss < 0 && a >= 0 && b >= 0)
            pss = a + b;
    }
    listing_end(d);
    if (ready >= 0)
        close(ready);
    if (root >= 0)
        close(root);
    return json_pack("{s:i, s:b, s:i, s:i, s:o, s:s}", "size", mxc_netpool_size(), "rootOnly", true, "ready", n,
                     "maxAgeSeconds", MXC_NETPOOL_MAX_AGE_S, "idlePssKiB", pss >= 0 ? json_integer(pss) : json_null(),
                     "sizeSetting", "MXC_NETPOOL_SIZE (0: off)");
}
