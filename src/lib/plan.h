/* plan.h — the containment plan.
 * Owns: the data a validated request becomes before any privileged step:
 * the filesystem grants (sorted, most specific last), the network plan
 * (netplan.h: built whole by mxc_net_plan_build, inside
 * mxc_plan_from_request, from the request's network section — or, for
 * mxc-oci's io.mxc.network annotation, from that section alone), the limits
 * and the exec specification.  mxc_plan_from_request builds it from a
 * request that passed policy validation; the caller then sets the identity
 * (uid, gid, agent name, rootless) and a session's workspace and view
 * (session.c, from its state) before any OS module reads it.  The network
 * plan is not changed after it is built: what differs per sandbox (its name,
 * where the proxy's records and the CA files go) goes into the build
 * (mxc_net_plan_opts), and the sandbox's cgroup is given to the attach. */
#ifndef MXC_PLAN_H
#define MXC_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "iface/front.h" /* mxc_net_plan_opts, the network plan functions a front calls */
#include "netplan.h"
#include "request.h"

typedef enum { MXC_GRANT_RW = 0, MXC_GRANT_RO, MXC_GRANT_DENIED } mxc_grant_mode;

typedef struct {
    char *path;          /* absolute, normalised; same path inside and outside.  Once the view
                            is resolved (mxc_fsview_open_sources): the host path with every
                            symlink resolved, which is where it is mounted in the view */
    mxc_grant_mode mode;
    /* filled by the resolution: */
    bool present;        /* exists on the host (an absent denied path is skipped, never created; an absent grant is refused) */
    bool is_dir;
    bool on_link;        /* denied: the mask goes on the symlink itself, not on its target */
    bool covers;         /* denied directory with other entries below it (its mask holds their targets) */
} mxc_grant;

#define MXC_MAX_GRANTS 1100 /* 3 lists x MXC_LIST_MAX, plus the mask of each denied symlink */

/* Inside every sandbox the workload is this ordinary uid/gid (the agent in
 * the generated /etc/passwd), never 0; it maps to the plan's host uid. */
#define MXC_INNER_UID 1000
#define MXC_INNER_GID 1000

typedef struct mxc_plan {
    uid_t uid;             /* host uid of the sandbox (MXC_INNER_UID inside the user namespace) */
    gid_t gid;
    char agent_name[32];
    char hostname[64];
    bool host_network;     /* canonical allow acknowledgment (net.model == MXC_NETM_HOST) */
    bool net_pooled;       /* set by container.c for its clone: the sandbox's first process is cloned in a
                              namespace claimed from src/net's pool (netpool.h), without CLONE_NEWNET */
    mxc_net_policy net;    /* the connectivity model and, for models 1 and 2, its nftables rule set (src/net) */
    bool rootless;         /* no root: uid is the caller's, setgroups denied, no cgroups (rlimit fallback) */
    char *workspace;       /* host path bound read-write at the same path; NULL for one-shot */
    mxc_grant grants[MXC_MAX_GRANTS];
    size_t ngrants;
    uint64_t pids_max;
    uint64_t memory_max;   /* bytes */
    uint64_t cpu_quota_us; /* per MXC_CGROUP_CPU_PERIOD_US (100 ms); 0 = no CPU limit */
    bool nproc_rlimit;     /* no pids cgroup here: pids_max becomes RLIMIT_NPROC */
    bool as_rlimit;        /* no memory cgroup here: memory_max becomes RLIMIT_AS per process,
                              memfd_create is refused, /tmp and /dev/shm sized within it */
} mxc_plan;

typedef struct mxc_exec_spec {
    const char *command_line;
    const char *cwd;       /* NULL: the default (workspace, or the first directory grant, or /tmp) */
    char **envp;           /* NULL-terminated, owned */
    uint32_t timeout_ms;
    unsigned short pty_rows, pty_cols; /* a session exec's terminal size; 0: the kernel's default */
    bool pty;              /* the exec init makes the workload a terminal of its own */
} mxc_exec_spec;

/* mxc_net_plan_opts: front.h (the fronts plan an annotation's network with it). */

/* The network plan, whole: src/net's model and rules for the section, whether this host can
 * enforce it, governed egress's name, bounds, credential, audit file and CA, model 1's resolver.
 * o may be NULL (a one-shot's defaults, no CA). */
int mxc_net_plan_build(const mxc_net_section *s, const mxc_net_plan_opts *o, mxc_net_policy *np, mxc_error *e);

/* Builds the policy part of the plan from a (policy-validated) request, its network with net
 * (may be NULL; a one-shot's CA goes under its first read-write directory grant whatever net
 * says).  Duplicates across lists take the most restrictive mode. */
int mxc_plan_from_request(const mxc_request *r, const mxc_net_plan_opts *net, mxc_plan *p, mxc_error *e);
void mxc_plan_free(mxc_plan *p);

/* process.env (entries without '=' skipped) over the Linux bootstrap set. */
int mxc_exec_spec_build(const mxc_request *r, const mxc_plan *p, mxc_exec_spec *s, mxc_error *e);
void mxc_exec_spec_free(mxc_exec_spec *s);
/* Sets (or replaces) one KEY=VALUE in the spec's environment. */
int mxc_exec_spec_setenv(mxc_exec_spec *s, const char *kv);

/* What the network plan adds to every process's environment (proxy variables, credential
 * placeholders, the CA files' variables), a JSON array of "K=V" (new reference; NULL: out of
 * memory): what mxc_exec_spec_build puts over the request's environment. */
json_t *mxc_net_plan_env(const mxc_net_policy *np);

/* Orders grants by depth, most specific last (ties by path). */
int mxc_grant_depth_cmp(const mxc_grant *a, const mxc_grant *b);

/* The cwd the workload starts in when process.cwd is absent. */
const char *mxc_plan_default_cwd(const mxc_plan *p);

#endif
