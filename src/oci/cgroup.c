/* cgroup.c — see cgroup.h. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "store.h"
#include "front.h"
#include "fdio.h"
#include "mounttree.h"
#include "setupops.h"

#define SAVED "cgroup.json"
#define V2(cg) ((cg)->backend == MXC_CGROUP_V2)

/* The cgroup create made, for the init it clones (a copy of this memory): its cgroup mounts. */
static oci_cgroup made_here;

/* The v1 hierarchies a container joins (the ones this host mounts). */
static const char *const V1[] = {"pids", "memory", "cpu", "cpuacct", "cpuset", "freezer"};

/* -------------------------------------------------------------- the host */

/* v1 realtime cpu (cpu.rt_period_us, cpu.rt_runtime_us): only where the kernel has CONFIG_RT_GROUP_SCHED. */
static bool rt_sched(const oci_cgroup *cg)
{
    char root[PATH_MAX], path[PATH_MAX + 32];
    const char *dir = cg ? (V2(cg) ? NULL : oci_cgroup_dir(cg, "cpu"))
                         : (!mxc_cgroup_v2_root() && mxc_cgroup_v1_root("cpu", root, sizeof root) ? root : NULL);
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
    if (cg && V2(cg))
        return !strcmp(ctrl, "freezer") || mxc_cgroup_has_word(cg->h[0].dir, "cgroup.controllers", ctrl);
    if (cg)
        return oci_cgroup_dir(cg, ctrl) != NULL;
    const char *v2 = mxc_cgroup_v2_root();
    char root[PATH_MAX];
    if (v2)
        return !strcmp(ctrl, "freezer") || mxc_cgroup_has_word(v2, "cgroup.subtree_control", ctrl);
    return mxc_cgroup_v1_root(ctrl, root, sizeof root);
}

static const char *where_missing(const oci_cgroup *cg, const char *ctrl)
{
    static char why[PATH_MAX + 128];
    const char *v2 = cg ? (V2(cg) ? cg->h[0].dir : NULL) : mxc_cgroup_v2_root();
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
        else if (!strcmp(key, "unified") && !(cg ? V2(cg) : mxc_cgroup_v2_root() != NULL))
            /* runc's words: its v2 files on a v1 host are an invalid configuration */
            rc = refuse_field(e, where, key, "invalid configuration: cgroup v2 files on a cgroup v1 host");
        else
            rc = refuse_field(e, where, key, "not delivered by mxc-oci");
        if (rc < 0)
            return rc;
    }
    return 0;
}

int oci_cgroup_check(json_t *resources, int backend, mxc_error *e)
{
    if (resources && !json_is_object(resources))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.resources must be an object");
    const char *key;
    json_t *v;
    json_object_foreach(resources, key, v)
        if (backend == MXC_CGROUP_NONE && strcmp(key, "devices") && set(v))
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
    char path[PATH_MAX];
    mxc_fd_path(dirfd, path, sizeof path);
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
    pid_t one;
    return mxc_cgroup_pids(dir, &one, 1) == 0;
}

static void unmake(const oci_cgroup *cg, bool made_too)
{
    for (size_t i = 0; i < cg->n; i++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", cg->h[i].dir);
        int levels = made_too ? cg->h[i].made : cg->levels;
        for (int l = 0; l < levels; l++) {
            if (l == 0 && !cg->pending)
                (void)mxc_cgroup_rmdir(dir);
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

/* cgroup.json, whole or not at all: written aside, renamed into place (a kill or a full disk never leaves a
 * half record, nor a directory no record names).  Not synced: cgroups live in the kernel's memory, and a
 * crash of the machine that could lose the file ends every one it names.  The error says why (ENOSPC:
 * a full disk). */
static int save(int dirfd, const oci_cgroup *cg, mxc_error *e)
{
    json_t *dirs = json_object();
    for (size_t i = 0; i < cg->n; i++)
        json_object_set_new(dirs, cg->h[i].ctrl, json_string(cg->h[i].dir));
    json_t *j = json_pack("{s:b, s:s, s:i, s:o, s:b}", "v2", V2(cg), "path", cg->path, "levels", cg->levels, "dirs",
                          dirs, "pending", cg->pending);
    int err = -mxc_json_replace_at_unsynced(dirfd, SAVED, NULL, j);
    json_decref(j);
    if (err)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", err, NULL, "cannot save the container's cgroup "
                          "(cgroup.json in its state directory)");
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
        cg->backend = json_is_true(json_object_get(j, "v2")) ? MXC_CGROUP_V2 : MXC_CGROUP_V1;
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
    if (!ok || !cg->n)
        cg->backend = MXC_CGROUP_NONE;
    return cg->backend != MXC_CGROUP_NONE;
}

const char *oci_cgroup_dir(const oci_cgroup *cg, const char *ctrl)
{
    for (size_t i = 0; i < cg->n; i++)
        if (V2(cg) || !strcmp(cg->h[i].ctrl, ctrl))
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

/* The hierarchies the container's cgroup is made in, by the engine's backend: v2's one directory; on v1 each
 * hierarchy this host has (cpu and cpuacct mounted together: once), and a hybrid's cgroup2 one last (no limit
 * there; the v1 mount leaves it out). */
static int find_roots(oci_cgroup *cg, char roots[][PATH_MAX / 2], mxc_error *e)
{
    int backend = mxc_cgroup_host(e); /* -1: MXC_CGROUP2_ROOT naming no cgroup2 directory */
    if (backend < 0)
        return -1;
    cg->backend = backend == MXC_CGROUP_V2 ? MXC_CGROUP_V2 : MXC_CGROUP_V1;
    if (backend == MXC_CGROUP_V2) {
        snprintf(cg->h[0].ctrl, sizeof cg->h[0].ctrl, "unified");
        snprintf(roots[0], sizeof roots[0], "%s", mxc_cgroup_v2_root());
        cg->n = 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof V1 / sizeof V1[0]; i++) {
        char root[PATH_MAX];
        if (!mxc_cgroup_v1_root(V1[i], root, sizeof root) || strlen(root) >= sizeof roots[0])
            continue;
        bool dup = false;
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
    if (cg->n < OCI_CGROUP_MAX && mxc_cgroup_hybrid_root(roots[cg->n], sizeof roots[0])) {
        snprintf(cg->h[cg->n].ctrl, sizeof cg->h[cg->n].ctrl, "unified");
        cg->n++;
    }
    return 0;
}

int oci_cgroup_create(int dirfd, const char *id, const char *cgroups_path, json_t *resources,
                      oci_cgroup_recorder record, void *record_arg, oci_cgroup *cg, mxc_error *e)
{
    memset(cg, 0, sizeof *cg);
    if (mxc_cgroup_host(e) < 0) /* MXC_CGROUP2_ROOT naming no cgroup2 directory: said first */
        return -1;
    char tag[16];
    root_tag(dirfd, tag, sizeof tag);
    if (resolve(id, tag, cgroups_path, cg->path, sizeof cg->path, e) < 0 || oci_cgroup_check(resources, OCI_CGROUP_HOST, e) < 0)
        return -1;
    cg->levels = (!cgroups_path || !*cgroups_path) && tag[0] ? 2 : 1;
    char roots[OCI_CGROUP_MAX][PATH_MAX / 2];
    if (find_roots(cg, roots, e) < 0)
        return -1;
    if (record_ahead(dirfd, cg, roots, record, record_arg, e) < 0)
        return -1;
    for (size_t i = 0; i < cg->n; i++) {
        mxc_cgroup_levels l = {.root = roots[i], .v2 = V2(cg), .cpuset = !V2(cg) && strstr(roots[i], "cpuset")};
        int rc = mxc_cgroup_mkdirs(roots[i], cg->path, mxc_cgroup_prepare_level, &l, cg->h[i].dir,
                                   sizeof cg->h[i].dir, &cg->h[i].made);
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
    return V2(cg) ? open(cg->h[0].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

int oci_cgroup_enter(const oci_cgroup *cg, pid_t pid, mxc_error *e)
{
    for (size_t i = 0; i < cg->n; i++) {
        int rc = mxc_cgroup_enter(cg->h[i].dir, pid);
        if (rc < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup", -rc, NULL, "cannot move the process into %s",
                              cg->h[i].dir);
    }
    return 0;
}

int oci_cgroup_sole(const oci_cgroup *cg, pid_t pid, mxc_error *e)
{
    for (size_t i = 0; i < cg->n; i++) {
        pid_t in[2];
        if (mxc_cgroup_pids(cg->h[i].dir, in, 2) != 1 || in[0] != pid)
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

static mxc_cgroup_value value(json_t *r, const char *group, const char *key)
{
    json_t *v = member(r, group, key);
    return (mxc_cgroup_value){set(v), (long long)json_integer_value(v)};
}

static const char *text(json_t *r, const char *group, const char *key)
{
    json_t *v = member(r, group, key);
    return set(v) ? json_string_value(v) : NULL;
}

/* linux.resources (checked against the host: check) lowered to the manager's limits; the values runc refuses are
 * refused here, before anything is written. */
static int lower(json_t *r, mxc_cgroup_limits *l, mxc_error *e)
{
    json_t *pids = member(r, "pids", "limit");
    *l = (mxc_cgroup_limits){
        .pids = {pids != NULL, (long long)json_integer_value(pids)},
        .memory = value(r, "memory", "limit"), .swap = value(r, "memory", "swap"),
        .reservation = value(r, "memory", "reservation"), .shares = value(r, "cpu", "shares"),
        .quota = value(r, "cpu", "quota"), .period = value(r, "cpu", "period"),
        .rt_period = value(r, "cpu", "realtimePeriod"), .rt_runtime = value(r, "cpu", "realtimeRuntime"),
        .cpus = text(r, "cpu", "cpus"), .mems = text(r, "cpu", "mems"),
    };
    const char *bad = NULL;
    if (l->shares.set && (l->shares.v < 2 || l->shares.v > 262144))
        bad = "cpu.shares must be 2..262144";
    else if (l->period.set && (l->period.v < 1000 || l->period.v > 1000000))
        bad = "cpu.period must be 1000..1000000 (µs)";
    else if (l->quota.set && l->quota.v > 0 && l->quota.v < 1000)
        bad = "cpu.quota must be at least 1000 (µs), or -1";
    else if (l->rt_period.set && l->rt_period.v < 1)
        bad = "cpu.realtimePeriod must be positive (µs)";
    else if (l->rt_runtime.set && l->rt_runtime.v < -1)
        bad = "cpu.realtimeRuntime must be -1 or more (µs)";
    return bad ? mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.%s", bad) : 0;
}

/* The linux.resources field a cgroup file is written for. */
static const char *field_of(const char *file, const mxc_cgroup_limits *l)
{
    static const char *const FIELDS[][2] = {
        {"pids.max", "pids.limit"}, {"memory.low", "memory.reservation"},
        {"memory.soft_limit_in_bytes", "memory.reservation"}, {"memory.max", "memory.limit"},
        {"memory.limit_in_bytes", "memory.limit"}, {"memory.swap.max", "memory.swap"},
        {"memory.memsw.limit_in_bytes", "memory.swap"}, {"cpu.weight", "cpu.shares"}, {"cpu.shares", "cpu.shares"},
        {"cpu.cfs_period_us", "cpu.period"}, {"cpu.cfs_quota_us", "cpu.quota"},
        {"cpu.rt_period_us", "cpu.realtimePeriod"}, {"cpu.rt_runtime_us", "cpu.realtimeRuntime"},
        {"cpuset.cpus", "cpu.cpus"}, {"cpuset.mems", "cpu.mems"},
    };
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        if (!strcmp(FIELDS[i][0], file))
            return FIELDS[i][1];
    return l->quota.set ? "cpu.quota" : "cpu.period"; /* v2's cpu.max */
}

int oci_cgroup_apply(const oci_cgroup *cg, json_t *r, mxc_error *e)
{
    mxc_cgroup_limits l;
    if (!r || lower(r, &l, e) < 0)
        return r ? -1 : 0;
    mxc_cgroup_dirs d = {.v2 = V2(cg), .pids = oci_cgroup_dir(cg, "pids"), .memory = oci_cgroup_dir(cg, "memory"),
                         .cpu = oci_cgroup_dir(cg, "cpu"), .cpuset = oci_cgroup_dir(cg, "cpuset")};
    mxc_cgroup_failure f = {0};
    int rc = mxc_cgroup_set_limits(&d, &l, &f);
    if (rc == -ERANGE)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "linux.resources.memory.swap (%lld) must be at least "
                       "memory.limit (memory plus swap)", l.swap.v);
    if (rc == -ENOENT && !strcmp(f.file, "memory.memsw.limit_in_bytes"))
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "linux.resources.memory.swap is refused: this host's memory "
                       "cgroup has no swap accounting (memory.memsw.limit_in_bytes)");
    return rc < 0 ? wrote(rc, field_of(f.file, &l), f.dir, f.file, e) : 0;
}

/* ------------------------------------------------------ freeze, processes */

/* The directory freezing is done in: v2's one, else the v1 freezer's (NULL: none). */
static const char *freezer_of(const oci_cgroup *cg)
{
    return V2(cg) ? cg->h[0].dir : oci_cgroup_dir(cg, "freezer");
}

bool oci_cgroup_frozen(const oci_cgroup *cg)
{
    const char *dir = freezer_of(cg);
    return dir && mxc_cgroup_frozen(dir, V2(cg));
}

int oci_cgroup_freeze(const oci_cgroup *cg, bool frozen, mxc_error *e)
{
    const char *dir = freezer_of(cg);
    if (!dir)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "the container's cgroup has no freezer (this host has no cgroup "
                       "v1 freezer hierarchy mxc-oci may write)");
    return mxc_cgroup_freeze(dir, V2(cg), frozen, "the container's cgroup", e);
}

json_t *oci_cgroup_pids(const oci_cgroup *cg)
{
    pid_t *pids = NULL;
    int n = cg->n ? mxc_cgroup_pids_all(cg->h[0].dir, &pids) : -1;
    json_t *out = n < 0 ? NULL : json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(out, json_integer(pids[i]));
    free(pids);
    return out;
}

/* The controller whose /proc/PID/cgroup line says a process is in the first hierarchy (v2: none). */
static const char *first_ctrl(const oci_cgroup *cg)
{
    return V2(cg) ? NULL : cg->h[0].ctrl;
}

void oci_cgroup_signal(const oci_cgroup *cg, int sig)
{
    if (!cg->n)
        return;
    mxc_cgroup_signal(cg->h[0].dir, first_ctrl(cg), sig);
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
    if (oci_cgroup_frozen(cg))
        oci_cgroup_signal(cg, SIGKILL); /* killed, then thawed to die */
    mxc_cgroup_kill_dir(cg->h[0].dir, first_ctrl(cg));
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

int oci_cgroup_mount_check(const char *type, int backend, mxc_error *e)
{
    if (backend == MXC_CGROUP_NONE)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "needs the container's own cgroup (--cgroup-manager disabled "
                       "makes none)");
    if (!strcmp(type, "cgroup2") && !mxc_cgroup_v2_root()) /* its directory would be the host's root */
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "this host's cgroups are v1 (its cgroup2 mount has no "
                       "controllers and not the container's cgroup): a mount of type cgroup shows them");
    return 0;
}

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* Without a cgroup namespace of its own (or with a pod's): a read-only clone of the container's own
 * directory of the hierarchy — its cgroup is the mount's root, nothing above it is reachable. */
static int own_bind(const char *dir)
{
    mxc_tree_attr attr = {.set = RO_ATTRS};
    return mxc_tree_clone(AT_FDCWD, dir, &attr);
}

static int mount_failed(mxc_error *e, const char *what, int err)
{
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cgroup_mount", err, NULL, "%s", what); /* "what: strerror" */
}

/* v2: the container's own directory is its cgroup namespace's root. */
static int mount_v2(const oci_cgroup *cg, int root_fd, const char *dest, bool own_ns, oci_resolver target_of,
                    mxc_error *e)
{
    int m = own_ns ? mxc_fresh_fs("cgroup2", NULL, RO_ATTRS) : own_bind(cg->h[0].dir);
    int t = m < 0 ? m : target_of(root_fd, dest, true, true);
    int rc = m < 0 ? m : t < 0 ? t : mxc_view_attach(m, t);
    if (m >= 0)
        close(m);
    if (t >= 0)
        close(t);
    return rc < 0 ? mount_failed(e, "cgroup2", -rc) : 0;
}

/* v1: into the tmpfs at t, one read-only mount per hierarchy the container is in (names[i] for its h[i]). */
static int mount_v1_each(const oci_cgroup *cg, int t, char names[][64], size_t n, bool own_ns, mxc_error *e)
{
    for (size_t i = 0; i < n; i++) {
        const char *flags[9] = {NULL}; /* the hierarchy's controllers, each a flag (key, NULL) */
        size_t nf = 0;
        char copy[64];
        snprintf(copy, sizeof copy, "%.63s", names[i]);
        for (char *save = NULL, *w = strtok_r(copy, ",", &save); w && nf < 8; w = strtok_r(NULL, ",", &save), nf += 2)
            flags[nf] = w;
        int sub = openat(t, names[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int m = sub < 0 ? -errno : own_ns ? mxc_fresh_fs("cgroup", flags, RO_ATTRS) : own_bind(cg->h[i].dir);
        int rc = m < 0 ? m : mxc_view_attach(m, sub);
        if (m >= 0)
            close(m);
        if (sub >= 0)
            close(sub);
        if (rc < 0) {
            char what[80];
            snprintf(what, sizeof what, "cgroup %.63s", names[i]);
            return mount_failed(e, what, -rc);
        }
    }
    return 0;
}

/* v1: a tmpfs with one read-only mount per hierarchy the container is in, each of the container's own cgroup
 * namespace (its cgroup is the root there); the tmpfs read-only once they are in.  mfd: the tmpfs. */
static int mount_v1(const oci_cgroup *cg, int mfd, int root_fd, const char *dest, bool own_ns, oci_resolver target_of,
                    mxc_error *e)
{
    char names[OCI_CGROUP_MAX][64];
    size_t n = 0;
    for (size_t i = 0; i < cg->n && strcmp(cg->h[i].ctrl, "unified"); i++) { /* the hybrid's cgroup2: last */
        char link[128], real[PATH_MAX];
        snprintf(link, sizeof link, "/sys/fs/cgroup/%s", cg->h[i].ctrl);
        const char *base = realpath(link, real) ? strrchr(real, '/') + 1 : cg->h[i].ctrl;
        snprintf(names[n++], sizeof names[0], "%s", base);
    }
    for (size_t i = 0; i < n; i++)
        if (mkdirat(mfd, names[i], 0755) < 0) {
            char what[80];
            snprintf(what, sizeof what, "tmpfs %s", names[i]);
            return mount_failed(e, what, errno);
        }
    int t = target_of(root_fd, dest, true, true);
    int rc = t < 0 ? t : mxc_view_attach(mfd, t);
    if (t >= 0)
        close(t);
    if (rc < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "%s", strerror(-rc));
    t = target_of(root_fd, dest, false, true); /* now the tmpfs */
    if (t < 0)
        return mount_failed(e, "read-only", -t);
    rc = mount_v1_each(cg, t, names, n, own_ns, e);
    close(t);
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if (rc == 0 && mount_setattr(mfd, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
        return mount_failed(e, "read-only", errno);
    return rc;
}

int oci_cgroup_mount(int root_fd, const char *dest, bool own_ns, oci_resolver target_of, mxc_error *e)
{
    const oci_cgroup *cg = &made_here;
    if (!cg->n)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container has no cgroup");
    if (V2(cg))
        return mount_v2(cg, root_fd, dest, own_ns, target_of, e);
    const char *topt[] = {"mode", "755", "size", "64k", NULL};
    int mfd = mxc_fresh_fs("tmpfs", topt, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (mfd < 0)
        return mount_failed(e, "tmpfs", -mfd);
    int rc = mount_v1(cg, mfd, root_fd, dest, own_ns, target_of, e);
    close(mfd);
    return rc;
}
