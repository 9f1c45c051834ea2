/* cgroup.c — see cgroup.h. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static bool is_cgroup2(const char *path)
{
    struct statfs sf;
    return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Whether /sys/fs/cgroup/<ctrl> is a v1 hierarchy this process may add processes to. */
static bool v1_usable(const char *ctrl)
{
    char path[128];
    struct statfs sf;
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s", ctrl);
    if (statfs(path, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC)
        return false;
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.procs", ctrl);
    return access(path, W_OK) == 0;
}

bool mxc_cgroup_v1_root(const char *ctrl, char *out, size_t outsz)
{
    char path[128], real[PATH_MAX];
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s", ctrl);
    return v1_usable(ctrl) && realpath(path, real) && snprintf(out, outsz, "%s", real) < (int)outsz;
}

bool mxc_cgroup_hybrid_root(char *out, size_t outsz)
{
    char real[PATH_MAX];
    if (!is_cgroup2("/sys/fs/cgroup/unified") || access("/sys/fs/cgroup/unified/cgroup.procs", W_OK) < 0)
        return false;
    return realpath("/sys/fs/cgroup/unified", real) && snprintf(out, outsz, "%s", real) < (int)outsz;
}

/* What the host offers is probed once per process: every one-shot and
 * exec asks several times, and each probe is a handful of statfs/reads. */
static const char *const CONTROLLERS[] = {"pids", "memory", "cpu"};
#define NCONTROLLERS (sizeof CONTROLLERS / sizeof CONTROLLERS[0])
static struct {
    bool v2; /* enabled for the children of the v2 root */
    bool v1;
} detected[NCONTROLLERS];
static char v2_root[400];      /* "" = no cgroup v2 use */
static bool v2_root_bad;       /* MXC_CGROUP2_ROOT names no usable cgroup2 directory */
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

/* v2 where the whole host is cgroup2, or where the caller delegates a
 * cgroup2 directory to us (MXC_CGROUP2_ROOT: a systemd Delegate= unit, a
 * container's own subtree, a test's private directory).  A hybrid host's
 * /sys/fs/cgroup/unified carries no controllers and is left alone unless
 * named: its v1 hierarchies hold the limits.  A controller counts on v2
 * only when it is enabled for the root's children (cgroup.subtree_control):
 * mxc does not enable controllers on a hierarchy it does not own. */
static void detect(void)
{
    const char *forced = getenv("MXC_CGROUP2_ROOT");
    if (forced && *forced) {
        if (forced[0] == '/' && strlen(forced) < sizeof v2_root && is_cgroup2(forced))
            snprintf(v2_root, sizeof v2_root, "%s", forced);
        else
            v2_root_bad = true;
    } else if (is_cgroup2("/sys/fs/cgroup")) {
        snprintf(v2_root, sizeof v2_root, "/sys/fs/cgroup");
    }
    for (size_t c = 0; c < NCONTROLLERS; c++) {
        if (v2_root[0])
            detected[c].v2 = mxc_cgroup_has_word(v2_root, "cgroup.subtree_control", CONTROLLERS[c]);
        else if (!v2_root_bad)
            detected[c].v1 = v1_usable(CONTROLLERS[c]); /* whether, not where: no realpath */
    }
}

const char *mxc_cgroup_v2_root(void)
{
    pthread_once(&detect_once, detect);
    return v2_root[0] ? v2_root : NULL;
}

static size_t controller_index(const char *controller)
{
    for (size_t c = 0; c < NCONTROLLERS; c++)
        if (strcmp(CONTROLLERS[c], controller) == 0)
            return c;
    return 0;
}

static bool v2_has(const char *controller)
{
    pthread_once(&detect_once, detect);
    return detected[controller_index(controller)].v2;
}

static bool v1_has(const char *controller)
{
    pthread_once(&detect_once, detect);
    return detected[controller_index(controller)].v1;
}

int mxc_cgroup_host(mxc_error *e)
{
    pthread_once(&detect_once, detect);
    if (v2_root_bad) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_CGROUP2_ROOT does not name a cgroup2 directory");
        mxc_err_set_remediation(e, "set MXC_CGROUP2_ROOT to an absolute path on a cgroup2 mount that mxc may "
                                   "create directories in, or unset it");
        return -1;
    }
    if (v2_root[0])
        return MXC_CGROUP_V2;
    for (size_t c = 0; c < NCONTROLLERS; c++)
        if (detected[c].v1)
            return MXC_CGROUP_V1;
    return MXC_CGROUP_NONE;
}

bool mxc_cgroup_available(const char *controller)
{
    return v2_has(controller) || v1_has(controller);
}

const char *mxc_cgroup_mode(const char *controller)
{
    if (v2_has(controller))
        return "v2";
    return v1_has(controller) ? "v1" : "none";
}

/* A sandbox's directory in the v1 hierarchy of controller. */
static void v1_dir(const char *controller, const char *name, char *out, size_t outsz)
{
    snprintf(out, outsz, "/sys/fs/cgroup/%s/mxc/%s", controller, name);
}

static void dir_for(const char *controller, const char *name, const mxc_cgroup *cg, char *out, size_t outsz)
{
    if (cg->v2 && v2_has(controller))
        snprintf(out, outsz, "%s", cg->v2_dir);
    else if (v1_has(controller))
        v1_dir(controller, name, out, outsz);
    else
        out[0] = '\0';
}

static void fill_dirs(const char *name, mxc_cgroup *cg)
{
    memset(cg, 0, sizeof *cg);
    const char *root = mxc_cgroup_v2_root();
    if (root) {
        cg->v2 = true;
        snprintf(cg->v2_dir, sizeof cg->v2_dir, "%s/mxc-%s", root, name);
    }
    dir_for("pids", name, cg, cg->pids_dir, sizeof cg->pids_dir);
    dir_for("memory", name, cg, cg->memory_dir, sizeof cg->memory_dir);
    dir_for("cpu", name, cg, cg->cpu_dir, sizeof cg->cpu_dir);
}

/* v2: the cpu controller lives in the sandbox's one directory. */
static bool cpu_dir_shared(const mxc_cgroup *cg)
{
    return cg->v2 || strcmp(cg->cpu_dir, cg->pids_dir) == 0 || strcmp(cg->cpu_dir, cg->memory_dir) == 0;
}

void mxc_cgroup_open(const char *name, mxc_cgroup *cg)
{
    fill_dirs(name, cg);
    /* A cpu cgroup of its own (v1) exists only if the sandbox was started
     * with a limit; v2's one directory is attached to and removed anyway. */
    cg->cpu_limited = cg->cpu_dir[0] && !cpu_dir_shared(cg) && access(cg->cpu_dir, F_OK) == 0;
}

/* The sandbox's directory and its parent ("mxc" on v1; v2: the root). */
static int make_dir(const char *dir)
{
    char root[512], made[512];
    snprintf(root, sizeof root, "%s", dir);
    char *leaf = strrchr(root, '/');
    if (!leaf || leaf == root)
        return -EINVAL;
    *leaf = '\0';
    char *parent = strrchr(root, '/');
    *leaf = '/';
    if (!parent || parent == root)
        return -EINVAL;
    *parent = '\0';
    int n;
    return mxc_cgroup_mkdirs(root, parent + 1, NULL, NULL, made, sizeof made, &n);
}

/* Makes dir and writes the limits l there (the one kind dirs names). */
static int setup(const char *dir, const mxc_cgroup_dirs *dirs, const mxc_cgroup_limits *l)
{
    int rc = make_dir(dir);
    return rc < 0 ? rc : mxc_cgroup_set_limits(dirs, l, NULL);
}

/* The pids limit, and the memory limit with no swap (v2 memory.swap.max 0
 * where swap is accounted; v1 memory+swap the same as the limit where the
 * knob exists), each in its directory where this host has one. */
static int setup_pids_memory(const mxc_cgroup *cg, uint64_t pids_max, uint64_t memory_max, mxc_error *e)
{
    const struct {
        const char *dir, *kind;
        mxc_cgroup_dirs d;
        mxc_cgroup_limits l;
    } steps[] = {
        {cg->pids_dir, "pids", {.v2 = cg->v2, .pids = cg->pids_dir}, {.pids = {true, (long long)pids_max}}},
        {cg->memory_dir, "memory", {.v2 = cg->v2, .memory = cg->memory_dir}, {.memory = {true, (long long)memory_max}}},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int rc = steps[i].dir[0] ? setup(steps[i].dir, &steps[i].d, &steps[i].l) : 0;
        char op[32];
        snprintf(op, sizeof op, "cgroup.%s", steps[i].kind);
        if (rc < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, op, -rc, NULL, "cannot set up the %s cgroup %s", steps[i].kind,
                              steps[i].dir);
    }
    return 0;
}

static int cpu_unavailable(mxc_error *e, const char *remediation, const char *why)
{
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_CPU_MAX asks for a CPU limit, but %s", why);
    mxc_err_set_remediation(e, remediation);
    return -1;
}

static int no_cpu_controller(mxc_error *e)
{
    return cpu_unavailable(e,
                           "run as root with the cgroup v1 cpu hierarchy at /sys/fs/cgroup/cpu or the cpu "
                           "controller available in cgroup v2, or unset MXC_CPU_MAX to run without a CPU limit",
                           "no cpu cgroup controller is available to mxc here (see mxc-exec --probe: cgroups.cpu)");
}

/* Only with a limit: the default costs no cpu cgroup at all. */
static int setup_cpu(mxc_cgroup *cg, uint64_t quota_us, mxc_error *e)
{
    if (quota_us == 0)
        return 0;
    cg->cpu_limited = true; /* from here on it is ours to remove */
    mxc_cgroup_limits l = {.quota = {true, (long long)quota_us}, .period = {true, MXC_CGROUP_CPU_PERIOD_US}};
    int rc = setup(cg->cpu_dir, &(mxc_cgroup_dirs){.v2 = cg->v2, .cpu = cg->cpu_dir}, &l);
    if (rc == -ENOENT && v2_has("cpu"))
        return cpu_unavailable(e,
                               "enable the controller for child cgroups: echo +cpu > <cgroup2 root>/cgroup.subtree_control, "
                               "or unset MXC_CPU_MAX",
                               "the cgroup v2 cpu controller is not enabled for child cgroups (no cpu.max)");
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.cpu", -rc, NULL, "cannot set up the cpu cgroup %s",
                          cg->cpu_dir);
    return 0;
}

int mxc_cgroup_create(const char *name, uint64_t pids_max, uint64_t memory_max, uint64_t cpu_quota_us, mxc_cgroup *cg,
                      mxc_error *e)
{
    fill_dirs(name, cg);
    if (mxc_cgroup_host(e) < 0)
        return -1;
    if (cpu_quota_us && !cg->cpu_dir[0]) /* never unlimited in silence; refused before anything is made */
        return no_cpu_controller(e);
    if (cg->v2 && mkdir(cg->v2_dir, 0755) < 0 && errno != EEXIST)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.create", errno, NULL, "cannot create the cgroup %s",
                          cg->v2_dir);
    if (setup_pids_memory(cg, pids_max, memory_max, e) < 0 || setup_cpu(cg, cpu_quota_us, e) < 0) {
        mxc_cgroup_remove(cg);
        return -1;
    }
    return 0;
}

/* The distinct directories a process must be written into (v2: one). */
static size_t attach_dirs(const mxc_cgroup *cg, const char *dirs[3])
{
    if (cg->v2) {
        dirs[0] = cg->v2_dir;
        return 1;
    }
    const char *all[] = {cg->pids_dir, cg->memory_dir, cg->cpu_limited ? cg->cpu_dir : ""};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        bool dup = !all[i][0];
        for (size_t j = 0; j < n && !dup; j++)
            dup = strcmp(dirs[j], all[i]) == 0;
        if (!dup)
            dirs[n++] = all[i];
    }
    return n;
}

/* The file a process writes "0" to, to join a directory of cg: on v1 `tasks`, which moves only the
 * writing thread (the joiners are single-threaded, just forked) and skips the RCU grace period a
 * cgroup.procs write waits out (4-15 ms here; docs/design-decisions.md); on v2 cgroup.procs. */
static const char *join_file(const mxc_cgroup *cg)
{
    return cg->v2 ? "cgroup.procs" : "tasks";
}

int mxc_cgroup_join_fds(const mxc_cgroup *cg, int fds[3], mxc_error *e)
{
    const char *dirs[3];
    size_t n = attach_dirs(cg, dirs);
    for (size_t i = 0; i < n; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", dirs[i], join_file(cg));
        fds[i] = open(path, O_WRONLY | O_CLOEXEC);
        if (fds[i] < 0) {
            int err = errno;
            for (size_t j = 0; j < i; j++)
                close(fds[j]);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.attach", err, NULL, "cannot open %s", path);
        }
    }
    return (int)n;
}

int mxc_cgroup_helpers_join_fds(const char *name, uint64_t pids_max, uint64_t memory_max, uint64_t cpu_quota_us,
                                int fds[3], mxc_error *e)
{
    mxc_cgroup cg;
    if (mxc_cgroup_create(name, pids_max, memory_max, cpu_quota_us, &cg, e) < 0)
        return -1;
    const char *dirs[3];
    size_t n = attach_dirs(&cg, dirs);
    for (size_t i = 0; i < n; i++) {
        char dir[600], path[700];
        snprintf(dir, sizeof dir, "%s/" MXC_CGROUP_HELPERS, dirs[i]);
        snprintf(path, sizeof path, "%s/%s", dir, join_file(&cg)); /* before the stack or the proxy starts */
        int err = mkdir(dir, 0755) < 0 && errno != EEXIST ? errno : 0;
        if (!err && (fds[i] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
            err = errno;
        if (err) {
            for (size_t j = 0; j < i; j++)
                close(fds[j]);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.helpers", err, NULL,
                              "cannot set up the network helpers' cgroup %s", dir);
        }
    }
    return (int)n;
}

/* v1's pids and memory directories of a name (either "" where this host has none); false: not v1. */
static bool pool_dirs(const char *name, mxc_cgroup *cg)
{
    mxc_error e = {0};
    bool v1 = mxc_cgroup_host(&e) == MXC_CGROUP_V1;
    mxc_error_clear(&e);
    fill_dirs(name, cg);
    return v1 && (cg->pids_dir[0] || cg->memory_dir[0]);
}

int mxc_cgroup_pool_make(const char *name, int fds[2])
{
    mxc_cgroup cg;
    if (!pool_dirs(name, &cg))
        return -ENOTSUP;
    const char *dirs[] = {cg.pids_dir, cg.memory_dir};
    int n = 0, err = 0;
    for (size_t i = 0; i < 2 && !err; i++) {
        char helpers[600], path[700];
        snprintf(helpers, sizeof helpers, "%s/" MXC_CGROUP_HELPERS, dirs[i]);
        snprintf(path, sizeof path, "%s/tasks", helpers);
        if (!dirs[i][0])
            continue;
        if (access(dirs[i], F_OK) == 0) /* made new, never one found */
            err = EEXIST;
        else if ((err = -make_dir(dirs[i])) == 0 && mkdir(helpers, 0755) < 0)
            err = errno;
        if (!err && (fds[n] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
            err = errno;
        n += !err;
    }
    if (err) {
        for (int i = 0; i < n; i++)
            close(fds[i]);
        mxc_cgroup_remove(&cg);
        return -err;
    }
    return n;
}

void mxc_cgroup_pool_remove(const char *name)
{
    /* on v1 wherever it was made, whatever this process's backend (a test's MXC_CGROUP2_ROOT) */
    mxc_cgroup cg = {0};
    const char *ctrl[] = {"pids", "memory"};
    char *dirs[] = {cg.pids_dir, cg.memory_dir};
    for (size_t i = 0; i < 2; i++)
        if (v1_usable(ctrl[i]))
            v1_dir(ctrl[i], name, dirs[i], sizeof cg.pids_dir);
    mxc_cgroup_kill_all(&cg);
    mxc_cgroup_remove(&cg);
}

int mxc_cgroup_rename(const char *from, const char *to)
{
    mxc_cgroup a, b;
    if (!pool_dirs(from, &a) || !pool_dirs(to, &b))
        return -ENOTSUP;
    if (a.pids_dir[0] && rename(a.pids_dir, b.pids_dir) < 0)
        return -errno;
    if (a.memory_dir[0] && rename(a.memory_dir, b.memory_dir) < 0) {
        int err = errno;
        if (a.pids_dir[0] && rename(b.pids_dir, a.pids_dir) < 0)
            err = EIO; /* half renamed: the caller removes both names */
        return -err;
    }
    return 0;
}

int mxc_cgroup_dir_fd(const mxc_cgroup *cg)
{
    if (!cg->v2) {
        errno = ENOTSUP;
        return -1;
    }
    return open(cg->v2_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* struct clone_args as of Linux 5.7 (CLONE_ARGS_SIZE_VER2), spelled out
 * here rather than taken from <linux/sched.h>, whose CLONE_* macros clash
 * with glibc's. */
struct mxc_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
#define MXC_CLONE_INTO_CGROUP 0x200000000ULL

pid_t mxc_cgroup_clone(unsigned long long flags, int cgroup_fd)
{
    if (cgroup_fd < 0)
        return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0);
    struct mxc_clone_args ca = {.flags = flags | MXC_CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                                .cgroup = (uint64_t)cgroup_fd};
    return (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
}

int mxc_cgroup_join_self(int *fds, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        if (rc == 0 && write(fds[i], "0", 1) != 1)
            rc = -errno;
        close(fds[i]);
        fds[i] = -1;
    }
    return rc;
}

/* The helpers end on their own once the sandbox's PID 1 is gone, and
 * every caller kills it first: a moment (at most 200 ms) for them to do so
 * — mxc-proxy writes its audit's last count as it ends — before anything
 * of the cgroup is killed. */
static void helpers_grace(const char *dir)
{
    char helpers[700];
    snprintf(helpers, sizeof helpers, "%s/" MXC_CGROUP_HELPERS, dir);
    pid_t one;
    for (int round = 0; round < 100 && mxc_cgroup_pids(helpers, &one, 1) > 0; round++)
        usleep(2000);
}

void mxc_cgroup_kill_all(const mxc_cgroup *cg)
{
    const char *dir = cg->v2 ? cg->v2_dir : cg->pids_dir[0] ? cg->pids_dir : cg->memory_dir;
    if (!dir[0])
        return;
    helpers_grace(dir);
    mxc_cgroup_kill_dir(dir, cg->v2 ? NULL : dir == cg->pids_dir ? "pids" : "memory");
}

static void remove_dir(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/" MXC_CGROUP_HELPERS, dir);
    (void)mxc_cgroup_rmdir(path); /* the helpers end with the sandbox's PID 1, or were killed with it */
    snprintf(path, sizeof path, "%s", dir);
    DIR *d = mxc_cgroup_has_children(path) ? opendir(path) : NULL;
    if (d) { /* per-exec children of earlier builds first */
        struct dirent *de;
        while ((de = readdir(d)))
            if (de->d_type == DT_DIR && strncmp(de->d_name, "exec-", 5) == 0) {
                char sub[1000];
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                rmdir(sub);
            }
        closedir(d);
    }
    (void)mxc_cgroup_rmdir(path);
}

void mxc_cgroup_remove(const mxc_cgroup *cg)
{
    /* a cpu cgroup made after cg was opened (the helpers' start makes the
     * sandbox's: mxc_cgroup_helpers_join_fds) goes too */
    mxc_cgroup all = *cg;
    all.cpu_limited = cg->cpu_limited || (cg->cpu_dir[0] && !cpu_dir_shared(cg) && access(cg->cpu_dir, F_OK) == 0);
    const char *dirs[3];
    size_t n = attach_dirs(&all, dirs);
    for (size_t i = 0; i < n; i++)
        remove_dir(dirs[i]);
}
