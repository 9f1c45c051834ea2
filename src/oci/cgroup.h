/* cgroup.h — a container's cgroup (docs/oci.md, "cgroups").
 * Owns: `linux.cgroupsPath` with runc's cgroupfs meaning (absolute: below
 * each hierarchy's root; relative: below mxc-oci's parent, OCI_CGROUP_PARENT;
 * empty: OCI_CGROUP_PARENT/<id>), refused when it climbs ("..") or names a
 * cgroup that already holds processes, or the engine's own; the check of
 * `linux.resources` against what this host can enforce (what it cannot is
 * refused naming the field, never ignored); making the cgroup in every
 * hierarchy (cgroup v2 where the engine finds it — cgroup.h's
 * mxc_cgroup_v2_root, /sys/fs/cgroup or MXC_CGROUP2_ROOT — else the v1
 * pids, memory, cpu, cpuacct, cpuset and freezer hierarchies, and on a hybrid
 * host its controller-less cgroup2 one, where no limit is written), writing the
 * limits (create and update), moving a process in, freezing and thawing
 * (pause/resume), its processes (ps, kill --all), and removing it (delete,
 * a failed create).  What a container's cgroup is, is saved in its state
 * directory (`cgroup.json`), so later commands need no environment.
 * Also the commands that are only about the cgroup: pause, resume, update.
 * What is not OCI's is the engine's one cgroup manager (lib/cgroup.h): the
 * files, mkdirs, entering, the pids, signalling and the kill-all (pidfd
 * after a membership check), freezing and rmdir are its. */
#ifndef MXC_OCI_CGROUP_H
#define MXC_OCI_CGROUP_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "front.h" /* the manager's backend (mxc_cgroup_backend) */

/* Where a relative or empty cgroupsPath goes (not "mxc" nor "mxc-…": the
 * engine's sweeper owns those). */
#define OCI_CGROUP_PARENT "mxc.oci"
#define OCI_CGROUP_MAX 7 /* v1: six controllers and a hybrid's cgroup2 */

typedef struct {
    mxc_cgroup_backend backend; /* v2 or v1; none: the container has no cgroup (oci_cgroup_load's false) */
    int levels;              /* removed by delete: the leaf, and a per-root level of the default path */
    bool pending;            /* recorded before it is made (create under way or killed): nothing of ours in it */
    char path[PATH_MAX / 2]; /* below each hierarchy's root, starting with '/' */
    size_t n;
    struct {
        char ctrl[16];       /* v1 controller ("unified" on v2) */
        char dir[PATH_MAX / 2];
        int made;            /* how many trailing components of dir create made (removed on failure) */
    } h[OCI_CGROUP_MAX];
} oci_cgroup;

/* The backend a new container's cgroup is given, as --cgroup-manager chose
 * it: MXC_CGROUP_NONE ("disabled": no cgroup is made; a limit and a cgroup
 * mount are refused), or OCI_CGROUP_HOST ("cgroupfs", the default): the one
 * manager's backend on this host (mxc_cgroup_host: v2, else v1), found when
 * create makes the cgroup (a host with neither refuses it there).  Later
 * commands go by what the container recorded (oci_cgroup.backend). */
#define OCI_CGROUP_HOST (MXC_CGROUP_V2 + 1)

/* linux.resources (borrowed, may be NULL) checked against this host, for a
 * cgroup of backend (above); devices are config.c's.  Refused naming the field. */
int oci_cgroup_check(json_t *resources, int backend, mxc_error *e);
/* Makes the container's cgroup (cgroups_path may be NULL) and writes the
 * limits.  What it makes is recorded in dirfd's cgroup.json before the first
 * directory is made ("pending"), and recorded complete once made; each
 * record written whole and renamed into place; with record (or NULL), the
 * directories are also handed to it before the first is made (lifecycle.c
 * writes them into the range claim, for the sweeper; a negative errno
 * refuses).  On failure nothing made is left (a kill: delete --force removes
 * what the pending record names, empty). */
typedef int (*oci_cgroup_recorder)(const char *const *dirs, size_t n, void *arg);
int oci_cgroup_create(int dirfd, const char *id, const char *cgroups_path, json_t *resources,
                      oci_cgroup_recorder record, void *record_arg, oci_cgroup *cg, mxc_error *e);
/* A container's cgroup as create saved it; false (backend none) when it has none. */
bool oci_cgroup_load(int dirfd, oci_cgroup *cg);
/* The directory recorded for controller ctrl ("pids", "cpuacct", ...): on
 * v2 the one directory; NULL when the container's cgroup has no such one. */
const char *oci_cgroup_dir(const oci_cgroup *cg, const char *ctrl);
/* v2: the directory's descriptor (clone3 CLONE_INTO_CGROUP), else -1. */
int oci_cgroup_dir_fd(const oci_cgroup *cg);
/* Moves pid (0: the caller) into every hierarchy of cg. */
int oci_cgroup_enter(const oci_cgroup *cg, pid_t pid, mxc_error *e);
/* create, once the init is in: refused unless it is the cgroup's only
 * process (two creates naming one new cgroup at once both fail, closed). */
int oci_cgroup_sole(const oci_cgroup *cg, pid_t pid, mxc_error *e);
/* Writes resources (create's and update's). */
int oci_cgroup_apply(const oci_cgroup *cg, json_t *resources, mxc_error *e);
int oci_cgroup_freeze(const oci_cgroup *cg, bool frozen, mxc_error *e);
bool oci_cgroup_frozen(const oci_cgroup *cg);
/* The processes in the cgroup (host pids), NULL when it cannot be read. */
json_t *oci_cgroup_pids(const oci_cgroup *cg);
/* Sends sig to every process in the cgroup (through a pidfd, checked to
 * be still in it); thaws a frozen cgroup after a SIGKILL. */
void oci_cgroup_signal(const oci_cgroup *cg, int sig);
/* Kills what is left in it and removes it (its leaf); made_too (a failed
 * create, its init already reaped): kills nothing, removes every directory
 * create made that is empty.  A pending record (a killed create): kills
 * nothing, removes its leaf (and the default path's per-root level) when
 * empty. */
void oci_cgroup_remove(const oci_cgroup *cg, bool made_too);

/* A mount of type cgroup or cgroup2 (config.c): -1 with e (its message
 * the reason alone) when it cannot be given. */
int oci_cgroup_mount_check(const char *type, int backend, mxc_error *e);
/* In the container's init (its own user namespace, before pivot_root),
 * at dest inside the rootfs: the container's own view, read-only — v2: one
 * mount; v1: a tmpfs holding one per hierarchy the container is in (not the
 * others: there the root would be the host's).  With a cgroup namespace of
 * its own (own_ns) each is a fresh cgroup/cgroup2 mount of that namespace;
 * without one (or with a pod's, joined), a read-only clone of the
 * container's own directory, as runc does.  -1 with e. */
typedef int (*oci_resolver)(int root_fd, const char *path, bool create, bool dir); /* init.h's */
int oci_cgroup_mount(int root_fd, const char *dest, bool own_ns, oci_resolver target_of, mxc_error *e);

/* The commands (rootfd: the store's root). */
int oci_pause(int rootfd, const char *id, bool pause, mxc_error *e);
/* update: resources is the runc-shaped object (from -r or the flags). */
int oci_update(int rootfd, const char *id, json_t *resources, mxc_error *e);

#endif
