/* cgroup_dir.c — the operations on one cgroup directory that the engine's
 * sandboxes and mxc-oci's containers share (see cgroup.h, "one cgroup
 * directory"): its files, making and removing it, entering it, its
 * processes, signalling and killing them, freezing it. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"

int mxc_cgroup_write(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    /* memory.limit_in_bytes (v1) and memory.max (v2) give up with EINTR
     * whenever a signal is pending while they reclaim — a SIGCHLD from any
     * child of the caller (Node's libuv has a handler; a tracer makes even
     * an ignored one pending).  The limit was not set; setting it again is
     * the answer, not a failed sandbox. */
    ssize_t n;
    int tries = 0;
    do
        n = write(fd, text, strlen(text));
    while (n < 0 && errno == EINTR && ++tries < 100);
    int err = errno;
    close(fd);
    return n < 0 ? -err : 0;
}

int mxc_cgroup_read(const char *dir, const char *file, char *out, size_t outsz)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    ssize_t n = mxc_read_small_at(AT_FDCWD, path, out, outsz);
    if (n < 0)
        return (int)n;
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

int mxc_cgroup_read_key(const char *dir, const char *file, const char *key, unsigned long long *out)
{
    char path[PATH_MAX], text[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    *out = 0;
    ssize_t n = mxc_read_small_at(AT_FDCWD, path, text, sizeof text);
    if (n < 0)
        return (int)n;
    size_t klen = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, klen) && l[klen] == ' ') {
            *out = strtoull(l + klen + 1, NULL, 10);
            return 0;
        }
    return -ENOENT;
}

bool mxc_cgroup_has_word(const char *dir, const char *file, const char *word)
{
    char text[1024];
    if (mxc_cgroup_read(dir, file, text, sizeof text) < 0)
        return false;
    for (char *save = NULL, *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save))
        if (!strcmp(w, word))
            return true;
    return false;
}

int mxc_cgroup_mkdirs(const char *root, const char *rel, mxc_cgroup_level_fn each, void *arg, char *dir, size_t dirsz,
                      int *made)
{
    *made = 0;
    snprintf(dir, dirsz, "%s", root);
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", rel);
    char *save = NULL;
    for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        bool leaf = save == NULL || *save == '\0';
        size_t len = strlen(dir);
        if (len + 1 + strlen(c) >= dirsz)
            return -ENAMETOOLONG;
        snprintf(dir + len, dirsz - len, "/%s", c);
        bool here = mkdir(dir, 0755) == 0;
        if (here) {
            (*made)++;
        } else if (errno != EEXIST) {
            return -errno;
        } else {
            struct stat st;
            if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return -ENOTDIR;
        }
        int rc = each ? each(dir, here, leaf, arg) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* v1 cpuset: a new cgroup has no cpus nor mems until given its parent's. */
static int cpuset_init(const char *dir)
{
    char parent[PATH_MAX], v[1024];
    snprintf(parent, sizeof parent, "%s", dir);
    *strrchr(parent, '/') = '\0';
    const char *files[] = {"cpuset.cpus", "cpuset.mems"};
    for (size_t i = 0; i < 2; i++) {
        int rc = mxc_cgroup_read(parent, files[i], v, sizeof v);
        char cur[1024];
        if (rc == 0 && (mxc_cgroup_read(dir, files[i], cur, sizeof cur) < 0 || !cur[0]))
            rc = mxc_cgroup_write(dir, files[i], v);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* v2: the controllers the root delegates, enabled in a directory made here (its children get them). */
static void v2_enable(const char *root, const char *dir)
{
    const char *ctrls[] = {"pids", "memory", "cpu", "cpuset"};
    for (size_t i = 0; i < 4; i++)
        if (mxc_cgroup_has_word(root, "cgroup.subtree_control", ctrls[i])) {
            char w[16];
            snprintf(w, sizeof w, "+%s", ctrls[i]);
            (void)mxc_cgroup_write(dir, "cgroup.subtree_control", w); /* a limit it misses is refused by name */
        }
}

int mxc_cgroup_prepare_level(const char *dir, bool made, bool leaf, void *arg)
{
    const mxc_cgroup_levels *l = arg;
    /* a level someone else made (a pod's): an empty cpuset (no process could join anything below) is given
     * its parent's, as runc does; one already set is left as it is */
    int rc = l->cpuset ? cpuset_init(dir) : 0;
    if (rc == 0 && made && l->v2 && !leaf)
        v2_enable(l->root, dir);
    return rc;
}

int mxc_cgroup_rmdir(const char *dir)
{
    for (int tries = 0; rmdir(dir) < 0; tries++) {
        if (errno != EBUSY || tries == 200)
            return -errno;
        usleep(5000);
    }
    return 0;
}

int mxc_cgroup_enter(const char *dir, pid_t pid)
{
    char text[32];
    snprintf(text, sizeof text, "%d", (int)pid);
    return mxc_cgroup_write(dir, "cgroup.procs", text);
}

int mxc_cgroup_pids(const char *dir, pid_t *out, size_t max)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int pid, n = 0;
    while ((size_t)n < max && fscanf(f, "%d", &pid) == 1)
        out[n++] = (pid_t)pid;
    fclose(f);
    return n;
}

int mxc_cgroup_pids_all(const char *dir, pid_t **out)
{
    size_t max = 1024;
    *out = NULL;
    for (;;) { /* a list that filled the buffer is read again into a larger one */
        pid_t *more = realloc(*out, max * sizeof **out);
        if (!more) {
            free(*out);
            *out = NULL;
            return -ENOMEM;
        }
        *out = more;
        int n = mxc_cgroup_pids(dir, *out, max);
        if (n < 0) {
            free(*out);
            *out = NULL;
        }
        if (n < (int)max || max >= MXC_CGROUP_PIDS_MAX)
            return n;
        max *= 4;
    }
}

bool mxc_cgroup_has_children(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) < 0 || st.st_nlink != 2; /* cgroupfs counts a directory's subdirectories in it */
}

/* A mountinfo field (root, mount point) with its octal escapes (\040) undone, in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; w++)
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w = *r++;
        }
    *w = '\0';
}

/* From one /proc/self/mountinfo line: its mount ID, root, mount point and whether it is a cgroup
 * file system. */
static bool mount_fields(char *line, unsigned long long *id, char **root, char **mp, bool *cgroupfs)
{
    char *save = NULL, *f[5];
    for (int i = 0; i < 5; i++)
        if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
            return false;
    char *w;
    while ((w = strtok_r(NULL, " ", &save)) && strcmp(w, "-"))
        ; /* the optional fields */
    const char *type = w ? strtok_r(NULL, " ", &save) : NULL;
    if (!type)
        return false;
    *id = strtoull(f[0], NULL, 10);
    *root = f[3];
    *mp = f[4];
    unescape(*root);
    unescape(*mp);
    *cgroupfs = !strcmp(type, "cgroup") || !strcmp(type, "cgroup2");
    return true;
}

/* A cgroup mount as mountinfo shows it: its point and its root there. */
typedef struct {
    unsigned long long id; /* 0: unused */
    char mp[PATH_MAX], root[PATH_MAX];
} cg_mount;

/* The mount real (a real path) is on, from mountinfo: the one with mount ID id (statx's
 * STATX_MNT_ID; 0 where the kernel has none: the last mount on the longest point above real, the
 * one on top).  0, -ENOENT when it is not a cgroup file system, or -errno. */
static int scan_mount(const char *real, unsigned long long id, cg_mount *m)
{
    char line[3 * PATH_MAX];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -errno;
    size_t best = 0;
    bool found = false, cg = false;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *root, *mp;
        bool cgroupfs;
        unsigned long long lid;
        if (!mount_fields(line, &lid, &root, &mp, &cgroupfs) || (id && lid != id))
            continue;
        size_t lm = !strcmp(mp, "/") ? 0 : strlen(mp);
        if (strncmp(real, mp, lm) || (real[lm] != '/' && real[lm] != '\0') || (found && lm < best))
            continue; /* not real's mount; a later one on the same point is the one on top */
        found = true;
        best = lm;
        cg = cgroupfs;
        m->id = lid;
        snprintf(m->mp, sizeof m->mp, "%s", mp);
        snprintf(m->root, sizeof m->root, "%s", strcmp(root, "/") ? root : "");
    }
    fclose(f);
    return found && cg ? 0 : -ENOENT;
}

/* The cgroup mounts met so far, by mount ID: mountinfo is read once per mount and process, not at
 * every kill (the C ABI runs in-process, threaded: under a lock, only ever tried: a thread that
 * finds it held, or a child forked while another thread held it, reads mountinfo itself and never
 * waits).  A mount ID is the kernel's for as long as the mount lives; an entry whose point does
 * not hold the path asked about (the ID reused by a later mount) is read again. */
#define CG_MOUNTS 8
static cg_mount cg_mounts[CG_MOUNTS];
static pthread_mutex_t cg_mounts_lock = PTHREAD_MUTEX_INITIALIZER;

static bool below(const char *real, const char *mp)
{
    size_t lm = !strcmp(mp, "/") ? 0 : strlen(mp);
    return !strncmp(real, mp, lm) && (real[lm] == '/' || real[lm] == '\0');
}

static int mount_of(const char *real, unsigned long long id, cg_mount *out)
{
    if (id && pthread_mutex_trylock(&cg_mounts_lock) == 0) {
        for (size_t i = 0; i < CG_MOUNTS; i++)
            if (cg_mounts[i].id == id && below(real, cg_mounts[i].mp)) {
                *out = cg_mounts[i];
                pthread_mutex_unlock(&cg_mounts_lock);
                return 0;
            }
        pthread_mutex_unlock(&cg_mounts_lock);
    }
    int rc = scan_mount(real, id, out);
    if (rc < 0 || !id || pthread_mutex_trylock(&cg_mounts_lock) != 0)
        return rc;
    size_t slot = 0;
    while (slot < CG_MOUNTS - 1 && cg_mounts[slot].id && cg_mounts[slot].id != id)
        slot++;
    cg_mounts[slot] = *out; /* full: the last slot is the one replaced */
    pthread_mutex_unlock(&cg_mounts_lock);
    return 0;
}

int mxc_cgroup_proc_path(const char *dir, char *out, size_t outsz)
{
    /* dir's real path and mount by descriptor: the kernel's name for what was opened (one
     * readlink, not one per component), its mount's ID */
    char real[PATH_MAX];
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct statx sx;
    unsigned long long id = statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID)
                                ? sx.stx_mnt_id : 0;
    bool named = mxc_fd_path(fd, real, sizeof real) && real[0] == '/';
    close(fd);
    if (!named)
        return -ENOENT;
    cg_mount *m = malloc(sizeof *m);
    int rc = m ? mount_of(real, id, m) : -ENOMEM;
    int n = rc < 0 ? 0 : snprintf(out, outsz, "%s%s", m->root, real + (!strcmp(m->mp, "/") ? 0 : strlen(m->mp)));
    free(m);
    if (rc < 0)
        return rc;
    if (n < 0 || (size_t)n >= outsz)
        return -ENAMETOOLONG;
    if (!out[0])
        snprintf(out, outsz, "/");
    return 0;
}

bool mxc_cgroup_line_is(const char *line, const char *ctrl, const char *path)
{
    char copy[PATH_MAX + 256];
    if (snprintf(copy, sizeof copy, "%s", line) >= (int)sizeof copy)
        return false;
    copy[strcspn(copy, "\n")] = '\0';
    char *a = strchr(copy, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!b)
        return false;
    *b = '\0';
    bool right = !ctrl && a[1] == '\0';
    for (char *save = NULL, *w = ctrl ? strtok_r(a + 1, ",", &save) : NULL; w && !right; w = strtok_r(NULL, ",", &save))
        right = !strcmp(w, ctrl); /* "cpu" is not "cpuacct" */
    return right && strcmp(path, "/") && !strcmp(b + 1, path); /* the whole path; the root's never */
}

/* Whether pid is in the cgroup at path (mxc_cgroup_proc_path), read from
 * /proc/PID/cgroup once a pidfd pins the pid: the line of the hierarchy
 * (v2: "0::"; v1: the one naming ctrl) names exactly that path. */
static bool member_of(const char *path, const char *ctrl, pid_t pid)
{
    char proc[64], line[PATH_MAX + 256];
    snprintf(proc, sizeof proc, "/proc/%d/cgroup", (int)pid);
    FILE *f = fopen(proc, "re");
    bool in = false;
    while (f && !in && fgets(line, sizeof line, f))
        in = mxc_cgroup_line_is(line, ctrl, path);
    if (f)
        fclose(f);
    return in;
}

/* The path /proc/PID/cgroup names for a kill's top directory, asked of mxc_cgroup_proc_path
 * once per kill and only once a process is found (an empty cgroup, a one-shot's usual end, costs
 * no lookup). */
typedef struct {
    const char *dir;
    int state; /* 0 not asked yet, 1 path, -1 not a cgroup this process can see */
    char path[PATH_MAX];
} kill_top;

static bool top_path(kill_top *t)
{
    if (!t->state)
        t->state = mxc_cgroup_proc_path(t->dir, t->path, sizeof t->path) == 0 ? 1 : -1;
    return t->state > 0;
}

/* mxc_cgroup_signal, depth levels below dir (rel below the top, "" the top itself) at the most:
 * every pid the directory lists. */
static int signal_tree(kill_top *t, const char *dir, const char *rel, const char *ctrl, int sig, int depth)
{
    pid_t *pids;
    int n = mxc_cgroup_pids_all(dir, &pids);
    char path[PATH_MAX];
    if (n > 0 && (!top_path(t) ||
                  snprintf(path, sizeof path, "%s%s", strcmp(t->path, "/") ? t->path : "", rel) >= (int)sizeof path))
        n = 0; /* not a cgroup this process can see: no process is known to be in it */
    if (n > 0 && !path[0])
        snprintf(path, sizeof path, "/");
    for (int i = 0; i < n; i++) {
        int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);
        if (fd < 0)
            continue;
        if (member_of(path, ctrl, pids[i]))
            syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
        close(fd);
    }
    free(pids);
    int found = n < 0 ? 0 : n;
    DIR *d = depth > 0 && mxc_cgroup_has_children(dir) ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char sub[PATH_MAX], subrel[PATH_MAX];
        if (snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) < (int)sizeof sub &&
            snprintf(subrel, sizeof subrel, "%s/%s", rel, de->d_name) < (int)sizeof subrel)
            found += signal_tree(t, sub, subrel, ctrl, sig, depth - 1);
    }
    if (d)
        closedir(d);
    return found;
}

int mxc_cgroup_signal(const char *dir, const char *ctrl, int sig)
{
    kill_top t = {.dir = dir};
    return signal_tree(&t, dir, "", ctrl, sig, 4);
}

/* v2: whether dir's subtree has no process left (cgroup.events "populated 0"). */
static bool unpopulated(const char *dir)
{
    char path[PATH_MAX], t[256];
    snprintf(path, sizeof path, "%s/cgroup.events", dir);
    FILE *f = fopen(path, "re");
    bool empty = false;
    while (f && fgets(t, sizeof t, f))
        empty |= !strcmp(t, "populated 0\n");
    if (f)
        fclose(f);
    return empty;
}

void mxc_cgroup_kill_dir(const char *dir, const char *ctrl)
{
    /* 5.14+: the whole subtree at once, forks racing it included (the kernel refuses them while
     * it kills): what is left is to wait for the processes to be gone */
    if (!ctrl && mxc_cgroup_write(dir, "cgroup.kill", "1") == 0)
        for (int round = 0; round < 500; round++) {
            if (unpopulated(dir))
                return;
            usleep(2000);
        }
    /* v1 (or a v2 kernel before 5.14, or a subtree still populated after 1 s): sweep until empty
     * (bounded), dir's path for the membership check asked once */
    kill_top t = {.dir = dir};
    for (int round = 0; round < 500 && signal_tree(&t, dir, "", ctrl, SIGKILL, 4) > 0; round++)
        usleep(2000);
}

bool mxc_cgroup_frozen(const char *dir, bool v2)
{
    char t[64];
    if (v2)
        return mxc_cgroup_read(dir, "cgroup.freeze", t, sizeof t) == 0 && !strcmp(t, "1");
    return mxc_cgroup_read(dir, "freezer.state", t, sizeof t) == 0 && strcmp(t, "THAWED");
}

/* Whether a freeze or thaw asked of dir holds: v1 passes through FREEZING,
 * v2 says "frozen 1" in cgroup.events. */
static bool freeze_done(const char *dir, bool v2, bool frozen, const char *want)
{
    char t[256] = "";
    if (!v2)
        return mxc_cgroup_read(dir, "freezer.state", t, sizeof t) < 0 || !strcmp(t, want);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cgroup.events", dir);
    FILE *f = fopen(path, "re");
    bool done = !f;
    while (f && fgets(t, sizeof t, f))
        done |= !strcmp(t, frozen ? "frozen 1\n" : "frozen 0\n");
    if (f)
        fclose(f);
    return done;
}

int mxc_cgroup_freeze(const char *dir, bool v2, bool frozen, const char *what, mxc_error *e)
{
    const char *file = v2 ? "cgroup.freeze" : "freezer.state";
    const char *want = v2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
    int rc = mxc_cgroup_write(dir, file, want);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.freeze", -rc, NULL, "cannot write %s/%s", dir, file);
    for (int round = 0; round < 2000; round++) {
        if (freeze_done(dir, v2, frozen, want))
            return 0;
        if (!v2 && frozen && round % 10 == 9)
            (void)mxc_cgroup_write(dir, file, want); /* v1: a task that was forking when asked is retried */
        usleep(1000);
    }
    if (frozen)
        (void)mxc_cgroup_write(dir, file, v2 ? "0" : "THAWED");
    return mxc_err(e, MXC_E_BACKEND_ERROR, "%s %s did not %s", what, dir, frozen ? "freeze" : "thaw");
}
