/* sweep.c — see sweep.h.
 * "Young" things (made in the last MXC_SWEEP_MIN_AGE seconds, default 10)
 * are left alone besides the ownership checks: something being made right
 * now may be seen half-way. */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "fdio.h"
#include "netplan.h"
#include "procs.h"
#include "registry.h"
#include "session.h"
#include "state.h"
#include "wroots.h"

static long young_s(void)
{
    const char *v = getenv("MXC_SWEEP_MIN_AGE");
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : 10;
    return v && *v && !*end && n >= 0 && n <= 86400 ? n : 10;
}

static void bump(json_t *r, const char *k)
{
    json_object_set_new(r, k, json_integer(json_integer_value(json_object_get(r, k)) + 1));
}

static bool young_path(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && time(NULL) - st.st_ctime < young_s();
}

static bool young_pid(pid_t pid)
{
    unsigned long long start = mxc_proc_start_time(pid); /* clock ticks after boot */
    struct timespec up;
    clock_gettime(CLOCK_BOOTTIME, &up);
    long hz = sysconf(_SC_CLK_TCK);
    return start && hz > 0 && (double)up.tv_sec - (double)start / (double)hz < (double)young_s();
}

/* 1. this state root's transient directories whose makers are dead */
static void sweep_transients(const char *root, bool act, json_t *r)
{
    DIR *d = opendir(root);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        bool tomb, alive;
        char name[64];
        if (!mxc_state_transient(de->d_name, &tomb, name, sizeof name, &alive) || alive)
            continue;
        bump(r, tomb ? "tombstones" : "halfProvisions");
        if (act) {
            char path[1000];
            snprintf(path, sizeof path, "%s/%s", root, de->d_name);
            mxc_session_finish(path, NULL);
        }
    }
    if (d)
        closedir(d);
}

/* 1b. this state root's sandboxes nobody knows: committed, their answer
 * never delivered (the maker died in between), and sandbox directories no
 * claim names (a deprovision that could not remove its directory) */
static void sweep_unknown(const char *root, bool act, json_t *r)
{
    DIR *d = opendir(root);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char path[1000];
        snprintf(path, sizeof path, "%s/%s", root, de->d_name);
        if (de->d_name[0] == '.') {
            if (mxc_session_reap_unanswered(root, de->d_name, act))
                bump(r, "unanswered");
            continue;
        }
        if (!young_path(path) && mxc_session_reap_unclaimed(root, de->d_name, act))
            bump(r, "unclaimed");
    }
    if (d)
        closedir(d);
}

/* A process's real uid (status: "Uid:\t<real>\t..."). */
static bool proc_uid(pid_t pid, uid_t *uid, char comm[16])
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (mxc_read_small_at(AT_FDCWD, path, buf, sizeof buf) <= 0)
        return false;
    const char *state = strstr(buf, "\nState:\t");
    if (state && state[8] == 'Z')
        return false; /* a zombie runs nothing and holds nothing but its pid; its reaper is not us */
    const char *u = strstr(buf, "\nUid:");
    if (!u || strncmp(buf, "Name:\t", 6) != 0)
        return false;
    snprintf(comm, 16, "%.*s", (int)strcspn(buf + 6, "\n"), buf + 6);
    *uid = (uid_t)strtoul(u + 5, NULL, 10);
    return true;
}

/* Every process of uid; kill: SIGKILL them.  Returns how many. */
static size_t procs_of(uid_t uid, bool kill_them)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        pid_t pid = (pid_t)atoi(de->d_name);
        uid_t u;
        char comm[16];
        if (pid <= 0 || !proc_uid(pid, &u, comm) || u != uid)
            continue;
        n++;
        if (kill_them)
            kill(pid, SIGKILL);
    }
    if (d)
        closedir(d);
    return n;
}

/* Whether a session's sandbox directory (or a transient one of it that is
 * still being worked on) exists. */
static bool session_exists(const char *state_dir)
{
    struct stat st;
    if (lstat(state_dir, &st) == 0 && S_ISDIR(st.st_mode))
        return true;
    const char *base = strrchr(state_dir, '/');
    if (!base)
        return false;
    char root[700];
    snprintf(root, sizeof root, "%.*s", (int)(base - state_dir), state_dir);
    DIR *d = opendir(root);
    struct dirent *de;
    bool found = false;
    while (d && !found && (de = readdir(d))) {
        bool tomb, alive;
        char name[64];
        found = mxc_state_transient(de->d_name, &tomb, name, sizeof name, &alive) && alive &&
                strcmp(name, base + 1) == 0;
    }
    if (d)
        closedir(d);
    /* committed while we looked (the staging directory renamed to its final
     * name between the first lstat and the scan) */
    return found || (lstat(state_dir, &st) == 0 && S_ISDIR(st.st_mode));
}

static bool claim_dir_path(char *out, size_t outsz)
{
    return mxc_claims_dir(false, out, outsz) == 0;
}

/* An OCI container's cgroup directories its range claim names (recorded before they were made: a
 * create killed, a container never deleted): each removed when empty (its init, and with it its PID
 * namespace, is gone).  Only directories on a cgroup file system, never through "..". */
static void remove_claimed_cgroups(json_t *cgroups)
{
    size_t i;
    json_t *v;
    json_array_foreach(cgroups, i, v) {
        const char *dir = json_string_value(v);
        struct statfs fs;
        if (!dir || dir[0] != '/' || strstr(dir, "/..") || statfs(dir, &fs) < 0 ||
            (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC))
            continue;
        rmdir(dir);
    }
}

/* 2. claims whose sandbox is gone */
/* Whether the range claim `name` (range-<base>) has a pod member's claim beside it in dir
 * (member-<base>-<tag>): the range is then still a live member's, and its processes are not the
 * dead owner's to kill. */
static bool range_has_members(const char *dir, const char *name)
{
    unsigned base;
    char prefix[40];
    if (sscanf(name, "range-%u", &base) != 1)
        return false;
    snprintf(prefix, sizeof prefix, "member-%u-", base);
    DIR *d = opendir(dir);
    struct dirent *de;
    bool found = false;
    while (d && !found && (de = readdir(d)))
        found = !strncmp(de->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return found;
}

static void sweep_claims(bool act, json_t *r)
{
    char dir[600];
    claim_dir_path(dir, sizeof dir);
    bool root = geteuid() == 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (de->d_name[0] == '.') {
            /* a claim being written (.new-<pid>-<start>-<tag>; an older build's .new-<pid>-<tag>): left over when its writer was killed
             * between open and unlink */
            if (mxc_registry_dead_writer(de->d_name) && !young_path(path)) {
                bump(r, "claims");
                if (act)
                    unlink(path);
            }
            continue;
        }
        if (young_path(path))
            continue;
        json_t *j = json_load_file(path, 0, NULL);
        const char *kind = json_string_value(json_object_get(j, "kind"));
        const char *state_dir = json_string_value(json_object_get(j, "stateDir"));
        uid_t uid = (uid_t)json_integer_value(json_object_get(j, "uid"));
        pid_t pid = (pid_t)json_integer_value(json_object_get(j, "pid"));
        unsigned long long start = (unsigned long long)json_integer_value(json_object_get(j, "start"));
        bool live;
        if (kind && !strcmp(kind, "session"))
            live = state_dir && session_exists(state_dir);
        else /* a one-shot lives as long as its caller: without it, what is left is an orphan */
            live = mxc_pid_alive(pid, start);
        /* a session's workspace, by the claim's own record of it (made for
         * that sandbox's name, which it must end in) */
        char ws[700] = "";
        const char *cws = json_string_value(json_object_get(j, "workspace"));
        const char *wb = cws ? strrchr(cws, '/') : NULL, *sb = state_dir ? strrchr(state_dir, '/') : NULL;
        if (!live && kind && !strcmp(kind, "session") && cws && cws[0] == '/' && wb && sb && !strcmp(wb, sb))
            snprintf(ws, sizeof ws, "%s", cws);
        if (!live && act && kind && !strcmp(kind, "oci"))
            remove_claimed_cgroups(json_object_get(j, "cgroups"));
        json_decref(j);
        if (live)
            continue;
        bump(r, "claims");
        if (act && ws[0])
            mxc_state_remove_tree(ws);
        if (act) {
            /* an orphaned holder of that uid and everything in it; the uid is handed out
             * again only once none of them is left (SIGKILL is not instant: a dying
             * process keeps its uid until its namespaces are torn down) */
            bool gone = true;
            if (range_has_members(dir, de->d_name))
                uid = 0; /* a pod's range a member still uses: the claim goes, its processes stay */
            for (int i = 0; root && uid && i < 200 && (gone = procs_of(uid, true) == 0) == false; i++)
                nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
            if (gone)
                unlink(path);
        }
    }
    if (d)
        closedir(d);
}

/* Whether the cgroup named name belongs to something alive. */
/* The state directories that the claims name, read once per sweep (a claim directory of N sessions
 * read per cgroup was N^2 JSON files: 7 s for `mxc --gc` beside 1000 idle sessions).  A claim made
 * after this read belongs to a session whose cgroups are made after it, which young_path() spares. */
typedef struct {
    char **dir;
    size_t n;
} claim_dirs;

static void claim_dirs_read(claim_dirs *cd)
{
    *cd = (claim_dirs){0};
    char dir[600];
    claim_dir_path(dir, sizeof dir);
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t cap = 0;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        json_t *j = json_load_file(path, 0, NULL);
        const char *state_dir = json_string_value(json_object_get(j, "stateDir"));
        if (state_dir && cd->n == cap) {
            char **g = realloc(cd->dir, (cap = cap ? cap * 2 : 64) * sizeof *g);
            if (g)
                cd->dir = g;
        }
        if (state_dir && cd->n < cap)
            cd->dir[cd->n] = strdup(state_dir), cd->n += cd->dir[cd->n] != NULL;
        json_decref(j);
    }
    if (d)
        closedir(d);
}

static void claim_dirs_free(claim_dirs *cd)
{
    for (size_t i = 0; i < cd->n; i++)
        free(cd->dir[i]);
    free(cd->dir);
}

/* id as "<n>[-<n>...]", at most max decimal fields, the first a pid: how many, or 0 when it is not of
 * that form (a name mxc did not make: kept, whatever it is — the sweep's bases include the host's
 * cgroup2 root, where another's cgroup may bear such a name). */
static int id_fields(const char *id, unsigned long long *n, int max)
{
    int fields = 0;
    for (const char *p = id;;) {
        char *end;
        if (fields == max || *p < '0' || *p > '9')
            return 0;
        errno = 0;
        n[fields++] = strtoull(p, &end, 10);
        if (errno || (*end && *end != '-'))
            return 0;
        if (!*end)
            break;
        p = end + 1;
    }
    return n[0] > 0 && n[0] <= INT_MAX ? fields : 0;
}

/* A model-1 pool entry's cgroup (src/net/netpool.h), named "netpool-<holder pid>-<its start time>":
 * its while that very process lives (a reused pid is another process: its start time differs); the
 * pool's own sweep removes it with its entry, a claim renames it first.  The bare "netpool-<pid>" of
 * earlier builds: while that pid is a pool holder (mxc-netpool). */
static bool pool_cgroup_owned(const char *id)
{
    unsigned long long n[2];
    int fields = id_fields(id, n, 2);
    if (fields == 1)
        return mxc_pid_alive_as((pid_t)n[0], mxc_proc_start_time((pid_t)n[0]), "mxc-netpool");
    return fields != 2 || mxc_pid_alive((pid_t)n[0], n[1]);
}

/* A one-shot's cgroup, named "oneshot-<caller's pid>-<its start time>-<serial>": its while that very
 * process exists (a reused pid is another process; a caller whose main thread has ended shows as a
 * zombie while its other threads run, so a zombie still owns it).  The "oneshot-<pid>-<serial>" and
 * bare "oneshot-<pid>" of earlier builds (and of a caller whose start time could not be read): while
 * that pid is any process. */
static bool oneshot_cgroup_owned(const char *id)
{
    unsigned long long n[3];
    int fields = id_fields(id, n, 3);
    if (fields == 3 && n[1])
        return mxc_proc_start_time((pid_t)n[0]) == n[1];
    return fields <= 0 || kill((pid_t)n[0], 0) == 0;
}

static bool cgroup_owned(const char *name, const claim_dirs *cd)
{
    if (!strncmp(name, "oneshot-", 8))
        return oneshot_cgroup_owned(name + 8);
    if (!strncmp(name, "netpool-", 8))
        return pool_cgroup_owned(name + 8);
    /* a session's: while its sandbox exists (its own phases remove it) */
    bool owned = false;
    for (size_t i = 0; i < cd->n && !owned; i++) {
        const char *base = strrchr(cd->dir[i], '/');
        owned = base && !strcmp(base + 1, name) && session_exists(cd->dir[i]); /* its start/stop/deprovision own it */
    }
    return owned;
}

/* 3. cgroups without a live owner, in every place mxc makes them */
static void sweep_cgroups(bool act, json_t *r)
{
    /* v1's, then v2's: a delegated root (MXC_CGROUP2_ROOT) and the places
     * earlier builds used */
    const char *v2 = mxc_cgroup_v2_root();
    const char *bases[] = {"/sys/fs/cgroup/pids/mxc", "/sys/fs/cgroup/memory/mxc", "/sys/fs/cgroup/cpu/mxc",
                           "/sys/fs/cgroup", "/sys/fs/cgroup/unified", v2 ? v2 : "/sys/fs/cgroup"};
    /* every name once (v1's three controllers name each twice or thrice), however many: a fixed 512 left
     * the cgroups past the 512th unexamined beside 1000 sessions, by every --gc alike (readdir's order) */
    char (*seen)[64] = NULL;
    size_t nseen = 0, cap = 0;
    claim_dirs cd;
    claim_dirs_read(&cd);
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
        bool v2_root = b >= 3;
        DIR *d = opendir(bases[b]);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (de->d_type != DT_DIR || de->d_name[0] == '.')
                continue;
            const char *name = de->d_name;
            if (v2_root) { /* v2: "mxc-<name>" beside the host's own */
                if (strncmp(name, "mxc-", 4) != 0)
                    continue;
                name += 4;
            }
            bool dup = false;
            for (size_t i = 0; i < nseen && !dup; i++)
                dup = !strcmp(seen[i], name);
            if (!dup && nseen == cap) {
                size_t more = cap ? cap * 2 : 512;
                char (*g)[64] = realloc(seen, more * sizeof *seen);
                if (!g)
                    break;
                seen = g, cap = more;
            }
            if (dup || strlen(name) >= sizeof seen[0])
                continue;
            snprintf(seen[nseen++], sizeof seen[0], "%s", name);
            char path[900];
            snprintf(path, sizeof path, "%s/%s", bases[b], de->d_name);
            if (young_path(path) || cgroup_owned(name, &cd))
                continue;
            bump(r, "cgroups");
            if (act && !strncmp(name, "netpool-", 8)) { /* v1's, whatever this process's backend */
                mxc_cgroup_pool_remove(name);
            } else if (act) {
                mxc_cgroup cg;
                mxc_cgroup_open(name, &cg);
                mxc_cgroup_kill_all(&cg);
                mxc_cgroup_remove(&cg);
            }
        }
        if (d)
            closedir(d);
    }
    claim_dirs_free(&cd);
    free(seen);
}

/* 4. session holders (root) whose uid no claim names: their sandbox is gone.
 * Only uids of the reserved range root hands out: a holder of any other uid
 * is a rootless session, some user's own process with its claims in that
 * user's runtime directory, never root's to judge or kill. */
static void sweep_holders(bool act, json_t *r)
{
    if (geteuid() != 0)
        return;
    unsigned base, count;
    mxc_registry_range(&base, &count);
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        pid_t pid = (pid_t)atoi(de->d_name);
        uid_t uid;
        char comm[16];
        if (pid <= 0 || !proc_uid(pid, &uid, comm) || strcmp(comm, "mxc-holder") != 0 || uid == 0 || young_pid(pid))
            continue;
        if (uid < base || uid - base >= count)
            continue;
        char claim[64];
        snprintf(claim, sizeof claim, "/var/lib/mxc/claims/%u", (unsigned)uid);
        if (access(claim, F_OK) == 0)
            continue;
        bump(r, "holders");
        if (act) {
            int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
            if (pfd >= 0) {
                syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
                close(pfd);
            }
        }
    }
    if (d)
        closedir(d);
}

json_t *mxc_sweep(bool act, mxc_error *e)
{
    char root[512];
    if (mxc_state_root(root, sizeof root, e) < 0)
        return NULL;
    json_t *r = json_pack("{s:i, s:i, s:i, s:i, s:i}", "tombstones", 0, "halfProvisions", 0, "claims", 0, "cgroups", 0,
                          "holders", 0);
    sweep_transients(root, act, r);
    json_object_set_new(r, "unanswered", json_integer(0));
    json_object_set_new(r, "unclaimed", json_integer(0));
    sweep_unknown(root, act, r);
    sweep_claims(act, r);
    /* after the claims: the entries of the claims just released (and of any whose releaser died) */
    json_object_set_new(r, "writableIndex", json_integer((json_int_t)mxc_wroots_sweep(act)));
    sweep_cgroups(act, r);
    sweep_holders(act, r);
    /* src/net: model 1's pool of namespaces made ahead (dead, over-age, or the pool off) */
    mxc_net_ops_get()->pool_sweep(act, r);
    return r;
}
