/* cgroup.c — see cgroup.h. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "store.h"
#include "front.h"
#include "fdio.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define SAVED "cgroup.json"

bool oci_cgroup_disabled;

/* The cgroup create made, for the init it clones (a copy of this memory): its cgroup mounts. */
static oci_cgroup made_here;

/* The v1 hierarchies a container joins (the ones this host mounts). */
static const char *const V1[] = {"pids", "memory", "cpu", "cpuacct", "cpuset", "freezer"};

/* ------------------------------------------------------------------ files */

static int write_file(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    ssize_t n;
    int tries = 0;
    do /* memory limits give up with EINTR while they reclaim (see the engine's cgroup.c) */
        n = write(fd, text, strlen(text));
    while (n < 0 && errno == EINTR && ++tries < 100);
    int err = errno;
    close(fd);
    return n < 0 ? -err : 0;
}

static int read_file(const char *dir, const char *file, char *out, size_t outsz)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, out, outsz - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return -err;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static bool has_word(const char *dir, const char *file, const char *word)
{
    char text[1024];
    if (read_file(dir, file, text, sizeof text) < 0)
        return false;
    for (char *save = NULL, *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save))
        if (!strcmp(w, word))
            return true;
    return false;
}

/* -------------------------------------------------------------- the host */

static bool v1_root(const char *ctrl, char *out, size_t outsz)
{
    char path[128];
    struct statfs sf;
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s", ctrl);
    if (statfs(path, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC)
        return false;
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.procs", ctrl);
    if (access(path, W_OK) < 0)
        return false;
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s", ctrl);
    return realpath(path, out) != NULL && strlen(out) < outsz;
}

/* A hybrid host's controller-less cgroup2 hierarchy (/sys/fs/cgroup/unified: the `0::` line of
 * /proc/PID/cgroup), which runc puts its containers in too; nothing is ever limited there. */
static bool hybrid_root(char *out, size_t outsz)
{
    struct statfs sf;
    if (statfs("/sys/fs/cgroup/unified", &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC ||
        access("/sys/fs/cgroup/unified/cgroup.procs", W_OK) < 0)
        return false;
    return realpath("/sys/fs/cgroup/unified", out) != NULL && strlen(out) < outsz;
}

static const char *dir_of(const oci_cgroup *cg, const char *ctrl);

/* v1 realtime cpu (cpu.rt_period_us, cpu.rt_runtime_us): only where the kernel has CONFIG_RT_GROUP_SCHED. */
static bool rt_sched(const oci_cgroup *cg)
{
    char root[PATH_MAX], path[PATH_MAX + 32];
    const char *dir = cg ? (cg->v2 ? NULL : dir_of(cg, "cpu"))
                         : (!mxc_cgroup_v2_root() && v1_root("cpu", root, sizeof root) ? root : NULL);
    if (!dir)
        return false;
    snprintf(path, sizeof path, "%s/cpu.rt_runtime_us", dir);
    return access(path, W_OK) == 0;
}

/* Whether controller ctrl ("pids", "memory", "cpu", "cpuset", "freezer") is
 * there: in an existing container's cgroup (cg), else on this host. */
static bool available(const oci_cgroup *cg, const char *ctrl)
{
    if (!strcmp(ctrl, "cpu.rt"))
        return rt_sched(cg);
    if (cg && cg->v2)
        return !strcmp(ctrl, "freezer") || has_word(cg->h[0].dir, "cgroup.controllers", ctrl);
    if (cg)
        return dir_of(cg, ctrl) != NULL;
    const char *v2 = mxc_cgroup_v2_root();
    char root[PATH_MAX];
    if (v2)
        return !strcmp(ctrl, "freezer") || has_word(v2, "cgroup.subtree_control", ctrl);
    return v1_root(ctrl, root, sizeof root);
}

static const char *where_missing(const oci_cgroup *cg, const char *ctrl)
{
    static char why[PATH_MAX + 128];
    const char *v2 = cg ? (cg->v2 ? cg->h[0].dir : NULL) : mxc_cgroup_v2_root();
    if (!strcmp(ctrl, "cpu.rt"))
        snprintf(why, sizeof why, "%s", v2 ? "realtime cpu has no cgroup v2 interface" :
                 "this host's cgroup v1 cpu hierarchy has no cpu.rt_runtime_us (a kernel without "
                 "CONFIG_RT_GROUP_SCHED)");
    else if (v2)
        snprintf(why, sizeof why, "the %s controller is not enabled for the children of %s (cgroup.subtree_control)",
                 ctrl, v2);
    else
        snprintf(why, sizeof why, "this host has no cgroup v1 %s hierarchy at /sys/fs/cgroup/%s that mxc-oci may "
                 "write", ctrl, ctrl);
    return why;
}

/* ------------------------------------------------------------- checking */

static bool set(json_t *v)
{
    return v && !json_is_null(v) && !json_is_false(v) && !(json_is_integer(v) && json_integer_value(v) == 0) &&
           !(json_is_string(v) && !json_string_length(v)) && !(json_is_object(v) && !json_object_size(v)) &&
           !(json_is_array(v) && !json_array_size(v));
}

static int refuse_field(mxc_error *e, const char *where, const char *field, const char *why)
{
    return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "%s: linux.resources.%s is refused: %s", where, field, why);
}

typedef struct {
    const char *name;
    json_type type;      /* JSON_INTEGER, JSON_STRING, JSON_TRUE (boolean) */
    const char *ctrl;    /* NULL: never delivered */
} rfield;

static const rfield PIDS[] = {{"limit", JSON_INTEGER, "pids"}};
static const rfield MEMORY[] = {
    {"limit", JSON_INTEGER, "memory"}, {"reservation", JSON_INTEGER, "memory"}, {"swap", JSON_INTEGER, "memory"},
    {"kernel", JSON_INTEGER, NULL}, {"kernelTCP", JSON_INTEGER, NULL}, {"swappiness", JSON_INTEGER, NULL},
    {"disableOOMKiller", JSON_TRUE, NULL}, {"useHierarchy", JSON_TRUE, NULL}, {"checkBeforeUpdate", JSON_TRUE, NULL},
};
static const rfield CPU[] = {
    {"shares", JSON_INTEGER, "cpu"}, {"quota", JSON_INTEGER, "cpu"}, {"period", JSON_INTEGER, "cpu"},
    {"cpus", JSON_STRING, "cpuset"}, {"mems", JSON_STRING, "cpuset"}, {"burst", JSON_INTEGER, NULL},
    {"realtimeRuntime", JSON_INTEGER, "cpu.rt"}, {"realtimePeriod", JSON_INTEGER, "cpu.rt"},
    {"idle", JSON_INTEGER, NULL},
};

static int check_group(json_t *obj, const char *group, const rfield *fl, size_t n, const char *where,
                       const oci_cgroup *cg, mxc_error *e)
{
    char f[128];
    if (!json_is_object(obj))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s: linux.resources.%s must be an object", where, group);
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        snprintf(f, sizeof f, "%s.%s", group, key);
        const rfield *d = NULL;
        for (size_t i = 0; i < n && !d; i++)
            if (!strcmp(fl[i].name, key))
                d = &fl[i];
        if (!set(v))
            continue;
        if (!d)
            return refuse_field(e, where, f, "not a field mxc-oci knows");
        bool ok = d->type == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == d->type;
        if (!ok)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s: linux.resources.%s must be %s", where, f,
                           d->type == JSON_STRING ? "a string" : d->type == JSON_TRUE ? "a boolean" : "an integer");
        if (!d->ctrl)
            return refuse_field(e, where, f, "not delivered by mxc-oci");
        if (!available(cg, d->ctrl))
            return refuse_field(e, where, f, where_missing(cg, d->ctrl));
    }
    return 0;
}

static int check(json_t *r, const char *where, const oci_cgroup *cg, mxc_error *e)
{
    if (!r)
        return 0;
    const char *key;
    json_t *v;
    json_object_foreach(r, key, v) {
        int rc = 0;
        if (!strcmp(key, "devices") || !set(v))
            continue; /* device rules: config.c's */
        if (!strcmp(key, "pids"))
            rc = check_group(v, key, PIDS, sizeof PIDS / sizeof PIDS[0], where, cg, e);
        else if (!strcmp(key, "memory"))
            rc = check_group(v, key, MEMORY, sizeof MEMORY / sizeof MEMORY[0], where, cg, e);
        else if (!strcmp(key, "cpu"))
            rc = check_group(v, key, CPU, sizeof CPU / sizeof CPU[0], where, cg, e);
        else if (!strcmp(key, "unified") && !(cg ? cg->v2 : mxc_cgroup_v2_root() != NULL))
            /* runc's words: its v2 files on a v1 host are an invalid configuration */
            rc = refuse_field(e, where, key, "invalid configuration: cgroup v2 files on a cgroup v1 host");
        else
            rc = refuse_field(e, where, key, "not delivered by mxc-oci");
        if (rc < 0)
            return rc;
    }
    return 0;
}

int oci_cgroup_check(json_t *resources, mxc_error *e)
{
    if (resources && !json_is_object(resources))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.resources must be an object");
    const char *key;
    json_t *v;
    json_object_foreach(resources, key, v)
        if (oci_cgroup_disabled && strcmp(key, "devices") && set(v))
            return refuse_field(e, "config.json", key, "it needs a cgroup, and the container has none "
                                "(--cgroup-manager disabled)");
    return check(resources, "config.json", NULL, e);
}

/* ------------------------------------------------------------- the path */

/* cgroupsPath → a clean absolute path below each hierarchy's root. */
/* The default's level for a --root other than the default one: ids are unique within a root only, and two
 * roots' containers of the same id must not meet in one cgroup (FNV-1a of the root's path). */
static void root_tag(int dirfd, char *out, size_t outsz)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(path, '/');
    if (slash)
        *slash = '\0'; /* <root>/<id> -> <root> */
    out[0] = '\0';
    if (!path[0] || !strcmp(path, OCI_ROOT_DEFAULT))
        return;
    uint32_t h = 2166136261u;
    for (const char *p = path; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(out, outsz, "/r%08x", h);
}

static int resolve(const char *id, const char *tag, const char *want, char *out, size_t outsz, mxc_error *e)
{
    char tmp[PATH_MAX];
    if (!want || !*want)
        snprintf(tmp, sizeof tmp, "/" OCI_CGROUP_PARENT "%s/%s", tag, id);
    else if (snprintf(tmp, sizeof tmp, "%s%s", want[0] == '/' ? "" : "/" OCI_CGROUP_PARENT "/", want) >=
             (int)sizeof tmp)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.cgroupsPath is too long");
    size_t len = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, "."))
            continue;
        if (!strcmp(c, ".."))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.cgroupsPath %s is refused: it climbs "
                           "(\"..\")", want);
        if (len == 0 && (!strcmp(c, "mxc") || !strncmp(c, "mxc-", 4)))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.cgroupsPath %s is refused: it names "
                           "the cgroups of mxc's own sandboxes", want);
        int n = snprintf(out + len, outsz - len, "/%s", c);
        if (n < 0 || (size_t)n >= outsz - len)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.cgroupsPath is too long");
        len += (size_t)n;
    }
    if (!len)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.cgroupsPath %s is refused: it is the root "
                       "cgroup", want);
    return 0;
}

/* ------------------------------------------------------------- making it */

static bool procs_empty(const char *dir)
{
    char text[64];
    return read_file(dir, "cgroup.procs", text, sizeof text) == 0 && !text[0];
}

/* v1 cpuset: a new cgroup has no cpus nor mems until given its parent's. */
static int cpuset_init(const char *dir)
{
    char parent[PATH_MAX], v[1024];
    snprintf(parent, sizeof parent, "%s", dir);
    *strrchr(parent, '/') = '\0';
    const char *files[] = {"cpuset.cpus", "cpuset.mems"};
    for (size_t i = 0; i < 2; i++) {
        int rc = read_file(parent, files[i], v, sizeof v);
        char cur[1024];
        if (rc == 0 && (read_file(dir, files[i], cur, sizeof cur) < 0 || !cur[0]))
            rc = write_file(dir, files[i], v);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* v2: the controllers the root delegates, enabled in a directory create made (its children get them). */
static void v2_enable(const char *root, const char *dir)
{
    const char *ctrls[] = {"pids", "memory", "cpu", "cpuset"};
    for (size_t i = 0; i < 4; i++)
        if (has_word(root, "cgroup.subtree_control", ctrls[i])) {
            char w[16];
            snprintf(w, sizeof w, "+%s", ctrls[i]);
            (void)write_file(dir, "cgroup.subtree_control", w); /* a limit it misses is refused by name */
        }
}

/* mkdir -p below root; *made counts the components made here. */
static int make_path(const char *root, const char *rel, bool v2, bool cpuset, char *dir, size_t dirsz, int *made)
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
        if (mkdir(dir, 0755) == 0) {
            (*made)++;
            if (cpuset) {
                int rc = cpuset_init(dir);
                if (rc < 0)
                    return rc;
            }
            if (v2 && !leaf)
                v2_enable(root, dir);
        } else if (errno != EEXIST) {
            return -errno;
        } else {
            struct stat st;
            if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return -ENOTDIR;
            /* a level someone else made (a pod's): an empty cpuset (no process could join anything below)
             * is given its parent's, as runc does; one already set is left as it is */
            int rc = cpuset ? cpuset_init(dir) : 0;
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static void rmdir_busy(const char *path)
{
    for (int tries = 0; tries < 200 && rmdir(path) < 0 && errno == EBUSY; tries++)
        usleep(5000);
}

static void unmake(const oci_cgroup *cg, bool made_too)
{
    for (size_t i = 0; i < cg->n; i++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", cg->h[i].dir);
        int levels = made_too ? cg->h[i].made : cg->levels;
        for (int l = 0; l < levels; l++) {
            if (l == 0 && !cg->pending)
                rmdir_busy(dir);
            else if (l == 0 && rmdir(dir) < 0 && errno != ENOENT)
                break; /* a record written ahead (create killed): only an empty leaf is removed */
            else if (rmdir(dir) < 0) /* a shared level: removed only once empty */
                break;
            char *slash = strrchr(dir, '/');
            if (!slash)
                break;
            *slash = '\0';
        }
    }
}

/* cgroup.json, whole or not at all: written aside, synced, renamed into place (a kill or a full disk never
 * leaves a half record, nor a directory no record names).  The error says why (ENOSPC: a full disk). */
static int save(int dirfd, const oci_cgroup *cg, mxc_error *e)
{
    json_t *dirs = json_object();
    for (size_t i = 0; i < cg->n; i++)
        json_object_set_new(dirs, cg->h[i].ctrl, json_string(cg->h[i].dir));
    json_t *j = json_pack("{s:b, s:s, s:i, s:o, s:b}", "v2", cg->v2, "path", cg->path, "levels", cg->levels, "dirs",
                          dirs, "pending", cg->pending);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int fd = text ? openat(dirfd, SAVED ".new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    size_t len = text ? strlen(text) : 0;
    ssize_t w = fd >= 0 ? write(fd, text, len) : -1;
    int err = !text ? ENOMEM : w == (ssize_t)len ? 0 : w >= 0 ? ENOSPC : errno;
    if (!err && fsync(fd) < 0)
        err = errno;
    if (fd >= 0)
        close(fd);
    free(text);
    if (!err && renameat(dirfd, SAVED ".new", dirfd, SAVED) < 0)
        err = errno;
    if (err) {
        unlinkat(dirfd, SAVED ".new", 0);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", err, NULL, "cannot save the container's cgroup "
                          "(cgroup.json in its state directory)");
    }
    return 0;
}

bool oci_cgroup_load(int dirfd, oci_cgroup *cg)
{
    memset(cg, 0, sizeof *cg);
    int fd = openat(dirfd, SAVED, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    json_t *j = mxc_json_loadfd(fd, 0, NULL);
    close(fd);
    const char *path = json_string_value(json_object_get(j, "path"));
    json_t *dirs = json_object_get(j, "dirs");
    bool ok = path && json_is_object(dirs);
    if (ok) {
        cg->v2 = json_is_true(json_object_get(j, "v2"));
        cg->pending = json_is_true(json_object_get(j, "pending"));
        cg->levels = json_integer_value(json_object_get(j, "levels")) == 2 ? 2 : 1;
        snprintf(cg->path, sizeof cg->path, "%s", path);
        const char *k;
        json_t *v;
        json_object_foreach(dirs, k, v) {
            if (cg->n == OCI_CGROUP_MAX || !json_is_string(v))
                continue;
            snprintf(cg->h[cg->n].ctrl, sizeof cg->h[cg->n].ctrl, "%s", k);
            snprintf(cg->h[cg->n].dir, sizeof cg->h[cg->n].dir, "%s", json_string_value(v));
            cg->n++;
        }
    }
    json_decref(j);
    return ok && cg->n > 0;
}

static const char *dir_of(const oci_cgroup *cg, const char *ctrl)
{
    for (size_t i = 0; i < cg->n; i++)
        if (cg->v2 || !strcmp(cg->h[i].ctrl, ctrl))
            return cg->h[i].dir;
    return NULL;
}

/* Write-ahead: what create will make, recorded before the first mkdir (cgroup.json, pending; the range
 * claim, for the sweeper), so that `delete --force` of a create killed at any point finds it.  The record
 * stays pending until the cgroup is complete: the init enters only a cgroup whose record is complete. */
static int record_ahead(int dirfd, oci_cgroup *cg, char roots[][PATH_MAX / 2], oci_cgroup_recorder record, void *arg,
                        mxc_error *e)
{
    const char *dirs[OCI_CGROUP_MAX];
    for (size_t i = 0; i < cg->n; i++) {
        if (snprintf(cg->h[i].dir, sizeof cg->h[i].dir, "%s%s", roots[i], cg->path) >= (int)sizeof cg->h[i].dir)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.cgroupsPath is too long");
        dirs[i] = cg->h[i].dir;
    }
    cg->pending = true;
    if (save(dirfd, cg, e) < 0)
        return -1;
    int rc = record ? record(dirs, cg->n, arg) : 0;
    if (rc < 0) {
        unlinkat(dirfd, SAVED, 0);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", -rc, NULL, "cannot record the container's cgroup "
                          "in its id range claim");
    }
    return 0;
}

int oci_cgroup_create(int dirfd, const char *id, const char *cgroups_path, json_t *resources,
                      oci_cgroup_recorder record, void *record_arg, oci_cgroup *cg, mxc_error *e)
{
    memset(cg, 0, sizeof *cg);
    const char *forced = getenv("MXC_CGROUP2_ROOT");
    const char *v2 = mxc_cgroup_v2_root();
    if (forced && *forced && !v2) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "MXC_CGROUP2_ROOT does not name a cgroup2 directory");
        mxc_err_set_remediation(e, "set MXC_CGROUP2_ROOT to an absolute path on a cgroup2 mount, or unset it");
        return -1;
    }
    char tag[16];
    root_tag(dirfd, tag, sizeof tag);
    if (resolve(id, tag, cgroups_path, cg->path, sizeof cg->path, e) < 0 || oci_cgroup_check(resources, e) < 0)
        return -1;
    cg->levels = (!cgroups_path || !*cgroups_path) && tag[0] ? 2 : 1;
    cg->v2 = v2 != NULL;
    char roots[OCI_CGROUP_MAX][PATH_MAX / 2];
    if (v2) {
        snprintf(cg->h[0].ctrl, sizeof cg->h[0].ctrl, "unified");
        snprintf(roots[0], sizeof roots[0], "%s", v2);
        cg->n = 1;
    } else {
        for (size_t i = 0; i < sizeof V1 / sizeof V1[0]; i++) {
            char root[PATH_MAX];
            if (!v1_root(V1[i], root, sizeof root) || strlen(root) >= sizeof roots[0])
                continue;
            bool dup = false; /* cpu and cpuacct mounted together */
            for (size_t k = 0; k < cg->n && !dup; k++)
                dup = !strcmp(roots[k], root);
            if (dup)
                continue;
            snprintf(cg->h[cg->n].ctrl, sizeof cg->h[cg->n].ctrl, "%s", V1[i]);
            snprintf(roots[cg->n], sizeof roots[0], "%s", root);
            cg->n++;
        }
        if (!cg->n)
            return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "this host has no cgroup hierarchy mxc-oci may write "
                           "(neither cgroup v2 nor v1's pids, memory, cpu, cpuset, freezer)");
        /* hybrid: the cgroup2 hierarchy as well, last (no limit there; the v1 mount leaves it out) */
        if (cg->n < OCI_CGROUP_MAX && hybrid_root(roots[cg->n], sizeof roots[0])) {
            snprintf(cg->h[cg->n].ctrl, sizeof cg->h[cg->n].ctrl, "unified");
            cg->n++;
        }
    }
    if (record_ahead(dirfd, cg, roots, record, record_arg, e) < 0)
        return -1;
    for (size_t i = 0; i < cg->n; i++) {
        bool cpuset = !cg->v2 && strstr(roots[i], "cpuset") != NULL;
        int rc = make_path(roots[i], cg->path, cg->v2, cpuset, cg->h[i].dir, sizeof cg->h[i].dir, &cg->h[i].made);
        if (rc == 0 && cg->h[i].made == 0 && !procs_empty(cg->h[i].dir)) {
            mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.cgroupsPath %s is refused: the cgroup %s already "
                    "has processes that are not this container's", cg->path, cg->h[i].dir);
            cg->n = i + 1;
            goto fail;
        }
        if (rc < 0) {
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", -rc, NULL, "cannot make the cgroup %s%s", roots[i],
                       cg->path);
            cg->n = i + 1;
            goto fail;
        }
    }
    /* an existing cgroup someone froze: the init would freeze in it before it says ready (runc's words) */
    if (oci_cgroup_frozen(cg)) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.cgroupsPath %s is refused: container's cgroup "
                "unexpectedly frozen", cg->path);
        goto fail;
    }
    cg->pending = false;
    if (oci_cgroup_apply(cg, resources, e) < 0 || save(dirfd, cg, e) < 0)
        goto fail;
    made_here = *cg;
    return 0;
fail:
    unmake(cg, true);
    unlinkat(dirfd, SAVED, 0); /* nothing of create's is left for it to name */
    return -1;
}

int oci_cgroup_dir_fd(const oci_cgroup *cg)
{
    return cg->v2 ? open(cg->h[0].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

int oci_cgroup_enter(const oci_cgroup *cg, pid_t pid, mxc_error *e)
{
    char text[32];
    snprintf(text, sizeof text, "%d", (int)pid);
    for (size_t i = 0; i < cg->n; i++) {
        int rc = write_file(cg->h[i].dir, "cgroup.procs", text);
        if (rc < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", -rc, NULL, "cannot move the process into %s",
                              cg->h[i].dir);
    }
    return 0;
}

int oci_cgroup_sole(const oci_cgroup *cg, pid_t pid, mxc_error *e)
{
    for (size_t i = 0; i < cg->n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/cgroup.procs", cg->h[i].dir);
        FILE *f = fopen(path, "re");
        int p, n = 0;
        bool other = !f;
        while (f && fscanf(f, "%d", &p) == 1)
            other |= p != pid, n++;
        if (f)
            fclose(f);
        if (other || n != 1)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.cgroupsPath %s is refused: another "
                           "process joined the cgroup %s while the container was made", cg->path, cg->h[i].dir);
    }
    return 0;
}

/* ------------------------------------------------------------ the limits */

static int wrote(int rc, const char *field, const char *dir, const char *file, mxc_error *e)
{
    if (rc == -ENOENT)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "linux.resources.%s is refused: this host's cgroup has no "
                       "%s (in %s)", field, file, dir);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", -rc, NULL, "linux.resources.%s: cannot write %s/%s",
                          field, dir, file);
    return 0;
}

static json_t *member(json_t *r, const char *group, const char *key)
{
    json_t *v = json_object_get(json_object_get(r, group), key);
    return json_is_integer(v) || json_is_string(v) ? v : NULL;
}

static void num(char *out, size_t outsz, long long v, bool v2)
{
    if (v < 0)
        snprintf(out, outsz, "%s", v2 ? "max" : "-1");
    else
        snprintf(out, outsz, "%lld", v);
}

static int apply_memory(const oci_cgroup *cg, json_t *r, mxc_error *e)
{
    json_t *lim = member(r, "memory", "limit"), *swap = member(r, "memory", "swap"),
           *res = member(r, "memory", "reservation");
    const char *dir = dir_of(cg, "memory");
    if (!dir || !(set(lim) || set(swap) || set(res)))
        return 0;
    char t[32];
    int rc;
    long long l = set(lim) ? json_integer_value(lim) : 0, s = set(swap) ? json_integer_value(swap) : 0;
    if (set(res)) {
        num(t, sizeof t, json_integer_value(res), cg->v2);
        const char *f = cg->v2 ? "memory.low" : "memory.soft_limit_in_bytes";
        if ((rc = wrote(write_file(dir, f, t), "memory.reservation", dir, f, e)) < 0)
            return rc;
    }
    if (cg->v2) {
        if (set(lim)) {
            num(t, sizeof t, l, true);
            if ((rc = wrote(write_file(dir, "memory.max", t), "memory.limit", dir, "memory.max", e)) < 0)
                return rc;
        }
        if (set(swap) || set(lim)) { /* swap is memory+swap (runc's meaning); unset: none at all */
            if (!set(swap))
                snprintf(t, sizeof t, "0");
            else if (s < 0)
                snprintf(t, sizeof t, "max");
            else {
                long long cur = l;
                char m[32];
                if (!set(lim) && read_file(dir, "memory.max", m, sizeof m) == 0)
                    cur = strcmp(m, "max") ? atoll(m) : -1;
                if (cur < 0 || s < cur)
                    return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.memory.swap (%lld) must be at least "
                                   "memory.limit (memory plus swap)", s);
                snprintf(t, sizeof t, "%lld", s - cur);
            }
            rc = write_file(dir, "memory.swap.max", t);
            if (rc == -ENOENT && !set(swap))
                rc = 0; /* no swap accounting: nothing to keep out */
            if ((rc = wrote(rc, "memory.swap", dir, "memory.swap.max", e)) < 0)
                return rc;
        }
        return 0;
    }
    /* v1: memory.memsw.limit_in_bytes is memory+swap and may never be below the limit: the order of the two
     * writes depends on which way they move; unset swap with a limit: no swap at all (memsw = limit) */
    if (set(lim) && !set(swap))
        s = l;
    char ls[32], ss[32];
    num(ls, sizeof ls, l, false);
    num(ss, sizeof ss, s, false);
    bool swapping = (set(swap) || set(lim)) && access("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", F_OK) == 0;
    if (set(swap) && !swapping)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "linux.resources.memory.swap is refused: this host's memory "
                       "cgroup has no swap accounting (memory.memsw.limit_in_bytes)");
    if (swapping && set(swap) && !set(lim)) {
        char m[32];
        if (read_file(dir, "memory.limit_in_bytes", m, sizeof m) == 0 && s >= 0 && s < atoll(m))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.memory.swap (%lld) must be at least "
                           "memory.limit (memory plus swap)", s);
    }
    if (swapping && (rc = write_file(dir, "memory.memsw.limit_in_bytes", ss)) == 0) {
        if (set(lim) && (rc = wrote(write_file(dir, "memory.limit_in_bytes", ls), "memory.limit", dir,
                                    "memory.limit_in_bytes", e)) < 0)
            return rc;
        return 0;
    }
    /* lowering memsw below the current limit: the limit first */
    if (set(lim) &&
        (rc = wrote(write_file(dir, "memory.limit_in_bytes", ls), "memory.limit", dir, "memory.limit_in_bytes", e)) < 0)
        return rc;
    if (swapping && (rc = wrote(write_file(dir, "memory.memsw.limit_in_bytes", ss), "memory.swap", dir,
                                "memory.memsw.limit_in_bytes", e)) < 0)
        return rc;
    return 0;
}

static int apply_cpu(const oci_cgroup *cg, json_t *r, mxc_error *e)
{
    json_t *shares = member(r, "cpu", "shares"), *quota = member(r, "cpu", "quota"), *period = member(r, "cpu", "period");
    const char *dir = dir_of(cg, "cpu");
    char t[64];
    int rc;
    if (dir && set(shares)) {
        long long sh = json_integer_value(shares);
        if (sh < 2 || sh > 262144)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.cpu.shares must be 2..262144");
        /* v2's weight (1..10000) from v1's shares, as runc and crun convert it */
        snprintf(t, sizeof t, "%lld", cg->v2 ? 1 + ((sh - 2) * 9999) / 262142 : sh);
        const char *f = cg->v2 ? "cpu.weight" : "cpu.shares";
        if ((rc = wrote(write_file(dir, f, t), "cpu.shares", dir, f, e)) < 0)
            return rc;
    }
    if (dir && (set(quota) || set(period))) {
        long long q = set(quota) ? json_integer_value(quota) : 0, p = set(period) ? json_integer_value(period) : 0;
        if (set(period) && (p < 1000 || p > 1000000))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.cpu.period must be 1000..1000000 (µs)");
        if (set(quota) && q > 0 && q < 1000)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.cpu.quota must be at least 1000 (µs), or -1");
        if (cg->v2) {
            char cur[64] = "max 100000", qs[32];
            (void)read_file(dir, "cpu.max", cur, sizeof cur);
            char *sp = strchr(cur, ' ');
            if (!set(period))
                p = sp ? atoll(sp + 1) : 100000;
            if (sp)
                *sp = '\0';
            if (set(quota))
                num(qs, sizeof qs, q, true);
            else
                snprintf(qs, sizeof qs, "%s", cur);
            snprintf(t, sizeof t, "%s %lld", qs, p);
            if ((rc = wrote(write_file(dir, "cpu.max", t), set(quota) ? "cpu.quota" : "cpu.period", dir, "cpu.max",
                            e)) < 0)
                return rc;
        } else {
            /* a period below the current one can be refused (EINVAL) while the old quota over it exceeds a
             * parent's limit: with a quota to write too, the period is written again after it (as runc) */
            bool again = false;
            if (set(period)) {
                snprintf(t, sizeof t, "%lld", p);
                int w = write_file(dir, "cpu.cfs_period_us", t);
                again = w == -EINVAL && set(quota);
                if (!again && (rc = wrote(w, "cpu.period", dir, "cpu.cfs_period_us", e)) < 0)
                    return rc;
            }
            if (set(quota)) {
                num(t, sizeof t, q, false);
                if ((rc = wrote(write_file(dir, "cpu.cfs_quota_us", t), "cpu.quota", dir, "cpu.cfs_quota_us", e)) < 0)
                    return rc;
            }
            if (again) {
                snprintf(t, sizeof t, "%lld", p);
                if ((rc = wrote(write_file(dir, "cpu.cfs_period_us", t), "cpu.period", dir, "cpu.cfs_period_us", e)) <
                    0)
                    return rc;
            }
        }
    }
    json_t *rtp = member(r, "cpu", "realtimePeriod"), *rtr = member(r, "cpu", "realtimeRuntime");
    if (dir && !cg->v2 && (set(rtp) || set(rtr))) {
        /* the period and the runtime depend on each other: a period the kernel refuses (EINVAL) with a
         * runtime to write too is written again after it (as runc) */
        bool again = false;
        if (set(rtp)) {
            if (json_integer_value(rtp) < 1)
                return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.cpu.realtimePeriod must be positive (µs)");
            snprintf(t, sizeof t, "%lld", (long long)json_integer_value(rtp));
            int w = write_file(dir, "cpu.rt_period_us", t);
            again = w == -EINVAL && set(rtr);
            if (!again && (rc = wrote(w, "cpu.realtimePeriod", dir, "cpu.rt_period_us", e)) < 0)
                return rc;
        }
        if (set(rtr)) {
            if (json_integer_value(rtr) < -1)
                return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.cpu.realtimeRuntime must be -1 or more (µs)");
            snprintf(t, sizeof t, "%lld", (long long)json_integer_value(rtr));
            if ((rc = wrote(write_file(dir, "cpu.rt_runtime_us", t), "cpu.realtimeRuntime", dir, "cpu.rt_runtime_us",
                            e)) < 0)
                return rc;
        }
        if (again) {
            snprintf(t, sizeof t, "%lld", (long long)json_integer_value(rtp));
            if ((rc = wrote(write_file(dir, "cpu.rt_period_us", t), "cpu.realtimePeriod", dir, "cpu.rt_period_us",
                            e)) < 0)
                return rc;
        }
    }
    dir = dir_of(cg, "cpuset");
    const char *keys[] = {"mems", "cpus"}; /* mems first: v1 wants both non-empty */
    for (size_t i = 0; dir && i < 2; i++) {
        json_t *v = member(r, "cpu", keys[i]);
        if (!set(v))
            continue;
        char f[32], name[32];
        snprintf(f, sizeof f, "cpuset.%s", keys[i]);
        snprintf(name, sizeof name, "cpu.%s", keys[i]);
        if ((rc = wrote(write_file(dir, f, json_string_value(v)), name, dir, f, e)) < 0)
            return rc;
    }
    return 0;
}

int oci_cgroup_apply(const oci_cgroup *cg, json_t *r, mxc_error *e)
{
    if (!r)
        return 0;
    json_t *lim = member(r, "pids", "limit");
    const char *dir = dir_of(cg, "pids");
    if (dir && lim) { /* 0 and below: unlimited, as runc */
        char t[32];
        long long v = json_integer_value(lim);
        if (v > 0)
            snprintf(t, sizeof t, "%lld", v);
        else
            snprintf(t, sizeof t, "max");
        int rc = wrote(write_file(dir, "pids.max", t), "pids.limit", dir, "pids.max", e);
        if (rc < 0)
            return rc;
    }
    return apply_memory(cg, r, e) < 0 || apply_cpu(cg, r, e) < 0 ? -1 : 0;
}

/* ------------------------------------------------------ freeze, processes */

bool oci_cgroup_frozen(const oci_cgroup *cg)
{
    char t[64];
    if (cg->v2)
        return read_file(cg->h[0].dir, "cgroup.freeze", t, sizeof t) == 0 && !strcmp(t, "1");
    const char *dir = dir_of(cg, "freezer");
    return dir && read_file(dir, "freezer.state", t, sizeof t) == 0 && strcmp(t, "THAWED");
}

int oci_cgroup_freeze(const oci_cgroup *cg, bool frozen, mxc_error *e)
{
    const char *dir = cg->v2 ? cg->h[0].dir : dir_of(cg, "freezer");
    if (!dir)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "the container's cgroup has no freezer (this host has no cgroup "
                       "v1 freezer hierarchy mxc-oci may write)");
    const char *file = cg->v2 ? "cgroup.freeze" : "freezer.state";
    const char *want = cg->v2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
    int rc = write_file(dir, file, want);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.freeze", -rc, NULL, "cannot write %s/%s", dir, file);
    /* until it holds: v1 passes through FREEZING, v2 says "frozen 1" in cgroup.events */
    for (int round = 0; round < 2000; round++) {
        char t[256] = "";
        bool done;
        if (cg->v2) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/cgroup.events", dir);
            FILE *f = fopen(path, "re");
            done = !f;
            while (f && fgets(t, sizeof t, f))
                done |= !strcmp(t, frozen ? "frozen 1\n" : "frozen 0\n");
            if (f)
                fclose(f);
        } else {
            done = read_file(dir, "freezer.state", t, sizeof t) < 0 || !strcmp(t, want);
        }
        if (done)
            return 0;
        if (!cg->v2 && frozen && round % 10 == 9)
            (void)write_file(dir, file, want); /* v1: a task that was forking when asked is retried */
        usleep(1000);
    }
    if (frozen)
        (void)write_file(dir, file, cg->v2 ? "0" : "THAWED");
    return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's cgroup %s did not %s", dir, frozen ? "freeze" : "thaw");
}

json_t *oci_cgroup_pids(const oci_cgroup *cg)
{
    if (!cg->n)
        return NULL;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg->h[0].dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    json_t *out = json_array();
    int pid;
    while (fscanf(f, "%d", &pid) == 1)
        json_array_append_new(out, json_integer(pid));
    fclose(f);
    return out;
}

/* Whether pid is in cg (its first hierarchy), read after a pidfd pins the pid. */
static bool member_of(const oci_cgroup *cg, pid_t pid)
{
    char path[64], line[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    FILE *f = fopen(path, "re");
    bool in = false;
    while (f && !in && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        bool right = cg->v2 && a[1] == '\0';
        for (char *save = NULL, *w = cg->v2 ? NULL : strtok_r(a + 1, ",", &save); w && !right;
             w = strtok_r(NULL, ",", &save))
            right = !strcmp(w, cg->h[0].ctrl); /* "cpu" is not "cpuacct" */
        /* the path ends with ours (v2 under a delegated root names the root's path too) */
        size_t lp = strlen(b + 1), lo = strlen(cg->path);
        in = right && lp >= lo && !strcmp(b + 1 + lp - lo, cg->path);
    }
    if (f)
        fclose(f);
    return in;
}

void oci_cgroup_signal(const oci_cgroup *cg, int sig)
{
    json_t *l = oci_cgroup_pids(cg);
    size_t i;
    json_t *p;
    json_array_foreach(l, i, p) {
        pid_t pid = (pid_t)json_integer_value(p);
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
            continue;
        if (member_of(cg, pid))
            syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
        close(fd);
    }
    json_decref(l);
    if (sig == SIGKILL && oci_cgroup_frozen(cg)) { /* v1: a frozen task dies only once thawed */
        mxc_error e = {0};
        oci_cgroup_freeze(cg, false, &e);
        mxc_error_clear(&e);
    }
}

void oci_cgroup_remove(const oci_cgroup *cg, bool made_too)
{
    if (!cg->n)
        return;
    if (made_too || cg->pending) { /* a failed create: its init is already gone; whatever else is there is not
                                    * ours (pending: a create killed before its init could enter: its empty
                                    * leaf and levels, by the record written before they were made) */
        unmake(cg, made_too);
        return;
    }
    if (cg->v2)
        (void)write_file(cg->h[0].dir, "cgroup.kill", "1"); /* 5.14+; else the sweep below */
    for (int round = 0; round < 500; round++) {
        json_t *l = oci_cgroup_pids(cg);
        bool empty = !l || json_array_size(l) == 0;
        json_decref(l);
        if (empty)
            break;
        oci_cgroup_signal(cg, SIGKILL);
        usleep(2000);
    }
    unmake(cg, made_too);
}

/* ------------------------------------------------------------ commands */

static int load_container(int rootfd, const char *id, int *dirfd, oci_state *s, oci_cgroup *cg, mxc_error *e)
{
    if (!oci_valid_id(id))
        return mxc_err(e, MXC_E_MALFORMED_ID, "invalid id format: %s", id ? id : "");
    if ((*dirfd = oci_store_open(rootfd, id, e)) < 0)
        return -1;
    if (oci_state_read(*dirfd, id, s, e) < 0) {
        close(*dirfd);
        return -1;
    }
    if (oci_state_status(*dirfd, s) == OCI_STOPPED) {
        mxc_err(e, MXC_E_ALREADY_STOPPED, "container not running");
    } else if (!oci_cgroup_load(*dirfd, cg)) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "the container has no cgroup of its own (made with "
                "--cgroup-manager disabled)");
    } else {
        return 0;
    }
    oci_state_free(s);
    close(*dirfd);
    return -1;
}

int oci_pause(int rootfd, const char *id, bool pause, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    oci_cgroup cg;
    if (load_container(rootfd, id, &dirfd, &s, &cg, e) < 0)
        return -1;
    int rc = 0;
    if (!pause && !oci_cgroup_frozen(&cg))
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "container not paused");
    else if (pause && oci_cgroup_frozen(&cg))
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "container already paused");
    else
        rc = oci_cgroup_freeze(&cg, pause, e);
    oci_state_free(&s);
    close(dirfd);
    return rc;
}

int oci_update(int rootfd, const char *id, json_t *resources, mxc_error *e)
{
    int dirfd = -1;
    oci_state s;
    oci_cgroup cg;
    if (!json_is_object(resources))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "update: the resources must be a JSON object");
    if (json_object_get(resources, "devices") && set(json_object_get(resources, "devices")))
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "update: linux.resources.devices is refused: a container's "
                       "devices are fixed at create");
    if (load_container(rootfd, id, &dirfd, &s, &cg, e) < 0)
        return -1;
    int rc = check(resources, "update", &cg, e) < 0 ? -1 : oci_cgroup_apply(&cg, resources, e);
    oci_state_free(&s);
    close(dirfd);
    return rc;
}

/* ------------------------------------------------------ the cgroup mount */

int oci_cgroup_mount_check(const char *type, char *why, size_t whysz)
{
    if (oci_cgroup_disabled) {
        snprintf(why, whysz, "needs the container's own cgroup (--cgroup-manager disabled makes none)");
        return -1;
    }
    if (!strcmp(type, "cgroup2") && !mxc_cgroup_v2_root()) { /* its directory would be the host's root */
        snprintf(why, whysz, "this host's cgroups are v1 (its cgroup2 mount has no controllers and not the "
                 "container's cgroup): a mount of type cgroup shows them");
        return -1;
    }
    return 0;
}

static int fs_mount(const char *type, const char *const *flags, size_t nflags, unsigned attr)
{
    int fs = fsopen(type, FSOPEN_CLOEXEC);
    if (fs < 0)
        return -errno;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nflags; i++) {
        const char *eq = strchr(flags[i], '=');
        char key[64];
        snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - flags[i]) : (int)strlen(flags[i]), flags[i]);
        rc = eq ? fsconfig(fs, FSCONFIG_SET_STRING, key, eq + 1, 0) : fsconfig(fs, FSCONFIG_SET_FLAG, key, NULL, 0);
    }
    if (rc == 0)
        rc = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
    int mnt = rc == 0 ? fsmount(fs, FSMOUNT_CLOEXEC, attr) : -1;
    int err = errno;
    close(fs);
    return mnt < 0 ? -err : mnt;
}

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* Without a cgroup namespace of its own (or with a pod's): a read-only clone of the container's own
 * directory of the hierarchy — its cgroup is the mount's root, nothing above it is reachable. */
static int own_bind(const char *dir)
{
    int m = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (m < 0)
        return -errno;
    struct mount_attr attr = {.attr_set = RO_ATTRS};
    if (mount_setattr(m, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
        int err = errno;
        close(m);
        return -err;
    }
    return m;
}

int oci_cgroup_mount(int root_fd, const char *dest, bool own_ns, oci_resolver target_of, char *why, size_t whysz)
{
    const oci_cgroup *cg = &made_here;
    int rc, t = -1, mfd = -1;
    if (!cg->n) {
        snprintf(why, whysz, "the container has no cgroup");
        return -1;
    }
    if (cg->v2) { /* the container's own directory is its cgroup namespace's root */
        int m = own_ns ? fs_mount("cgroup2", NULL, 0, RO_ATTRS) : own_bind(cg->h[0].dir);
        t = m < 0 ? m : target_of(root_fd, dest, true, true);
        rc = m < 0 ? m : t < 0 ? t : move_mount(m, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        rc = rc == -1 ? -errno : rc;
        if (m >= 0)
            close(m);
        if (t >= 0)
            close(t);
        if (rc < 0)
            snprintf(why, whysz, "cgroup2: %s", strerror(-rc));
        return rc < 0 ? -1 : 0;
    }
    /* v1: a tmpfs with one read-only mount per hierarchy the container is in, each of the container's own
     * cgroup namespace (its cgroup is the root there); the tmpfs read-only once they are in */
    char names[OCI_CGROUP_MAX][64];
    size_t n = 0;
    for (size_t i = 0; i < cg->n && strcmp(cg->h[i].ctrl, "unified"); i++) { /* the hybrid's cgroup2: last */
        char link[128], real[PATH_MAX];
        snprintf(link, sizeof link, "/sys/fs/cgroup/%s", cg->h[i].ctrl);
        const char *base = realpath(link, real) ? strrchr(real, '/') + 1 : cg->h[i].ctrl;
        snprintf(names[n++], sizeof names[0], "%s", base);
    }
    const char *topt[] = {"mode=755", "size=64k"};
    mfd = fs_mount("tmpfs", topt, 2, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (mfd < 0) {
        snprintf(why, whysz, "tmpfs: %s", strerror(-mfd));
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (mkdirat(mfd, names[i], 0755) < 0) {
            snprintf(why, whysz, "tmpfs %s: %s", names[i], strerror(errno));
            goto fail;
        }
    t = target_of(root_fd, dest, true, true);
    if (t < 0 || move_mount(mfd, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
        snprintf(why, whysz, "%s", strerror(t < 0 ? -t : errno));
        goto fail;
    }
    close(t);
    t = target_of(root_fd, dest, false, true); /* now the tmpfs */
    for (size_t i = 0; t >= 0 && i < n; i++) {
        const char *flags[4];
        size_t nf = 0;
        char copy[64];
        snprintf(copy, sizeof copy, "%s", names[i]);
        for (char *save = NULL, *w = strtok_r(copy, ",", &save); w && nf < 4; w = strtok_r(NULL, ",", &save))
            flags[nf++] = w;
        int sub = openat(t, names[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int m = sub < 0 ? -errno : own_ns ? fs_mount("cgroup", flags, nf, RO_ATTRS) : own_bind(cg->h[i].dir);
        rc = m < 0 ? m : move_mount(m, "", sub, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ? -errno : 0;
        if (m >= 0)
            close(m);
        if (sub >= 0)
            close(sub);
        if (rc < 0) {
            snprintf(why, whysz, "cgroup %s: %s", names[i], strerror(-rc));
            goto fail;
        }
    }
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if (t < 0 || mount_setattr(mfd, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0) {
        snprintf(why, whysz, "read-only: %s", strerror(t < 0 ? -t : errno));
        goto fail;
    }
    close(t);
    close(mfd);
    return 0;
fail:
    if (t >= 0)
        close(t);
    close(mfd);
    return -1;
}
