/* config.h — an OCI bundle's config.json, checked.
 * Owns: reading config.json from the bundle by descriptor, its types
 * (a wrong type is refused naming the field), and the refusal list of
 * docs/oci.md: what would make a container host root or needs what only
 * host root has (refused always), and what mxc-oci does not deliver yet
 * (refused naming the field, never ignored).  Unknown properties are
 * ignored, as the runtime spec requires of a reader.  Strings point into
 * the parsed document, which the config owns. */
#ifndef MXC_OCI_CONFIG_H
#define MXC_OCI_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define OCI_MAX_IDMAPS 32
#define OCI_MAX_RLIMITS 16

typedef struct {
    unsigned cid, hid, n; /* containerID, hostID, size */
} oci_idmap;

typedef enum { OCI_MNT_BIND, OCI_MNT_FS } oci_mount_kind;

typedef struct {
    const char *dest;        /* absolute, inside the rootfs */
    const char *type;        /* fs type (OCI_MNT_FS) */
    const char *source;      /* bind: host path (relative: to the bundle) */
    oci_mount_kind kind;
    bool recursive;          /* rbind */
    bool by_parent;          /* OCI_MNT_FS made by mxc-oci, passed as a tree: sysfs of a joined network namespace, /dev/shm */
    uint64_t attr_set, attr_clr; /* MOUNT_ATTR_* */
    const char *fsopt[32];   /* fsconfig options "key" or "key=value" */
    size_t nfsopt;
    bool tmpcopyup;          /* tmpfs: the rootfs's files at dest copied in (tmpcopy.h) */
    int idmap;               /* 0, 1 idmap, 2 ridmap (submounts too): an idmapped bind (mountmap.h) */
    oci_idmap uidmap[OCI_MAX_IDMAPS], gidmap[OCI_MAX_IDMAPS]; /* its own; none: the container's */
    size_t nuidmap, ngidmap;
} oci_mount;

typedef struct {
    json_t *doc;
    const char *oci_version;
    const char *root_path;
    bool root_readonly;
    const char *hostname, *domainname;
    /* process */
    bool has_process;
    bool terminal;                         /* a pty, its master sent to the console socket */
    unsigned short console_height, console_width;
    const char **args; size_t nargs;
    const char **env; size_t nenv;
    const char *cwd;
    unsigned uid, gid;
    unsigned *gids; size_t ngids;
    bool has_umask; unsigned umask;
    struct { int resource; uint64_t soft, hard; } rlimits[OCI_MAX_RLIMITS];
    size_t nrlimits;
    uint64_t cap_bounding, cap_effective, cap_inheritable, cap_permitted, cap_ambient;
    bool has_oom_score_adj; int oom_score_adj;
    bool new_privs;                        /* process.noNewPrivileges not true (false or absent): init.c */
    const char *apparmor_profile;          /* process.apparmorProfile; NULL: none (apparmor.h) */
    /* linux */
    int ns_flags;            /* CLONE_NEW* of the namespaces listed as new (not joined) */
    bool user_ns;            /* listed (its maps then come from the config) */
    bool join_user;          /* a pod's user namespace joined: by path, or the owner of the pod's PID namespace
                              * joined by path with none listed (its maps then the pod's range); set by
                              * lifecycle.c too when, none listed, a network, IPC or UTS namespace joined by
                              * path is owned by a pod container's user namespace (implied_pod) */
    bool join_maps_given;    /* ... and the config gave maps: they must be the pod's (lifecycle.c) */
    struct { int flag; const char *type, *path; } join[6]; /* network, ipc, uts, cgroup, user, pid by path */
    size_t njoin;
    oci_idmap uidmap[OCI_MAX_IDMAPS], gidmap[OCI_MAX_IDMAPS];
    size_t nuidmap, ngidmap;
    oci_mount *mounts; size_t nmounts;
    unsigned long rootfs_propagation; /* MS_SHARED/SLAVE/PRIVATE/UNBINDABLE [|MS_REC] of "/" after pivot_root; 0: as is */
    const char **masked; size_t nmasked;
    const char **readonly; size_t nreadonly;
    json_t *annotations;     /* borrowed from doc; NULL: none */
    json_t *seccomp;         /* linux.seccomp, borrowed; NULL: none (profile.c compiles it) */
    const char *cgroups_path;  /* linux.cgroupsPath; NULL: none (cgroup.c resolves it) */
    json_t *resources;         /* linux.resources, borrowed; NULL: none */
    int cgroup;                /* the backend its cgroup is given (cgroup.h's OCI_CGROUP_HOST, or none) */
    const char *sysctl[64][2]; /* key, value: namespaced keys only */
    size_t nsysctl;
    bool root_written;       /* config.json (one link) and the bundle directory: the runtime's user's (root's;
                              * rootless, the caller's), nobody else may write */
    /* linux.devices beyond the defaults: allowlisted character devices, the host's nodes bound (devices.h) */
    struct { const char *path; unsigned major, minor; long mode, uid, gid; /* -1: not given */ } xdev[16];
    size_t nxdev;
} oci_config;

/* The capabilities a container may hold (in its own user namespace); those a
 * config may name and none of its processes ever holds (CAP_SETFCAP: no file
 * capability can be made, issue 34); their names, as a JSON array. */
uint64_t oci_caps_held(void);
uint64_t oci_caps_withheld(void);
json_t *oci_caps_names(bool held);

/* The RLIMIT_ name of a resource (RLIMIT_NPROC), for errors. */
const char *oci_rlimit_name(int resource);

/* Parses doc (a new reference is taken) into *c; cgroup: the backend the
 * container's cgroup is given (cgroup.h), the resources and cgroup mounts
 * judged against it. */
int oci_config_parse(json_t *doc, int cgroup, oci_config *c, mxc_error *e);
/* A process object alone (exec's --process FILE, or the container's own
 * with exec's flags applied) into c's process fields; ns_flags the
 * container's namespaces (CAP_NET_RAW needs its own network). */
int oci_process_parse(json_t *proc, int ns_flags, oci_config *c, mxc_error *e);
/* config.json of the bundle directory at bundle_fd. */
int oci_config_load(int bundle_fd, int cgroup, oci_config *c, mxc_error *e);
void oci_config_free(oci_config *c);
/* "config.json: <field> must be <want>" (MXC_E_MALFORMED_REQUEST): the parsers' one way to say a
 * field is malformed.  -1. */
int oci_config_bad(mxc_error *e, const char *field, const char *want);
/* The index of name in table (n entries of stride bytes, each starting with its name, a const char *);
 * n when absent or name is NULL.  OCI_FIND(table, name) of a static array. */
size_t oci_find_name(const void *table, size_t n, size_t stride, const char *name);
#define OCI_COUNT(table) (sizeof(table) / sizeof(table)[0])
#define OCI_FIND(table, name) oci_find_name((table), OCI_COUNT(table), sizeof(table)[0], (name))
/* Whether path names want (an absolute path), ignoring repeated slashes
 * and "." components; ".." is never resolved (so never equal). */
bool oci_path_is(const char *path, const char *want);
/* With the container's maps known (its own or the range's): whether
 * container id `id` maps, and onto what host id. */
bool oci_map_id(const oci_idmap *m, size_t n, unsigned id, unsigned *host);

/* The namespace a (checked) linux.sysctl key belongs to: CLONE_NEWNET for
 * net.*, else CLONE_NEWIPC. */
int oci_sysctl_ns(const char *key);

#endif
