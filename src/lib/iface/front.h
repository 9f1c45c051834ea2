/* front.h — the engine as a front (src/cli, src/ffi, src/gateway, src/oci) may use it beyond
 * include/mxc.h: the one engine header a front includes (scripts/layers.json "interfaces";
 * docs/architecture.md).  meson gives the fronts this directory, src/lib/iface, and not src/lib:
 * no other engine header is on their include path.
 * Owns: the list of what fronts may use, each function declared here by name (a front calling
 * an engine function not listed fails scripts/layers.py's symbol check).  The few types a front
 * holds by value are defined here, and so is a module whose whole interface is the fronts'
 * (hostpath.h); their module headers include this one.  Every other function is declared again
 * in its module's header, and tests/unit/test_front.c includes this header with those, so a
 * declaration here that drifts from its module's fails the build.
 * Base (src/base: error.h, fdio.h, procs.h) is every layer's and is not repeated here.
 * A request and a running workload are held through pointers the engine allocates (the FFI's
 * MxcSandbox): new, delete and the few accessors a front needs are declared here.
 * The typed network plan's types are netplan.h's (src/lib/netiface, the network layer's one
 * engine header, on the fronts' path too: src/net/iface/net.h takes them); what mxc-oci calls to
 * plan an annotation's network is declared here (the end of this file). */
#ifndef MXC_FRONT_H
#define MXC_FRONT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "netplan.h"

typedef struct mxc_request mxc_request; /* request.h: the parsed wire request */
typedef struct mxc_oneshot mxc_oneshot; /* oneshot.h: an in-process one-shot, running */
typedef struct mxc_proc mxc_proc;       /* exec.h: a started workload (a one-shot's or a session exec's) */

/* ---- request.h ---- */
#define MXC_REQUEST_MAX_BYTES (1u << 20) /* 1 MiB */

/* A request as a front holds it (libmxc_ffi's handle): behind a pointer the engine allocates.
 * new: an empty request (freeing it is a no-op), NULL when out of memory; delete: its contents
 * (mxc_request_free) and the handle, NULL is fine.  The accessors read what a front decides on. */
mxc_request *mxc_request_new(void);
void mxc_request_delete(mxc_request *r);
int mxc_request_parse(const char *buf, size_t len, mxc_request *r, mxc_error *e);
bool mxc_request_is_v1(const mxc_request *r);           /* speaks a registered contract (0.9.0-alpha and later) */
bool mxc_request_is_exec(const mxc_request *r);         /* phase exec (false for NULL) */
bool mxc_request_in_session(const mxc_request *r);      /* containment isolation_session */
const char *mxc_request_contract(const mxc_request *r); /* the contract version it names */
json_t *mxc_request_json(const mxc_request *r);         /* the whole request (borrowed) */
void mxc_request_set_pty_size(mxc_request *r, unsigned short rows, unsigned short cols); /* an exec's terminal */
/* The request's policy (filesystem, network, ui, ...) as a provision request's fields: new reference. */
json_t *mxc_request_policy_json(const mxc_request *r);

/* ---- validate.h: the validation layers of a wire request ---- */
#define MXC_VALIDATE_EXPERIMENTAL 1u /* --experimental / experimental=1 */
int mxc_validate(const char *buf, size_t len, unsigned flags, mxc_request *r, mxc_error *e);

/* ---- sandbox_id.h: the sandboxId codec ----
 * (not where upstream's FFI ABI is in scope, include/mxc_ffi.h: it names a function
 * mxc_sandbox_id; libmxc_ffi has no use for the codec) */
#ifndef MXC_FFI_H
#define MXC_AGENT_NAME_MAX 32    /* bytes, incl. NUL */
#define MXC_APP_ID_MAX_CHARS 256 /* Unicode code points */
#define MXC_APP_ID_MAX_BYTES (MXC_APP_ID_MAX_CHARS * 4 + 1)
#define MXC_SANDBOX_ID_MAX 2048
#define MXC_ISO_PREFIX "iso"

typedef struct {
    char agent_name[MXC_AGENT_NAME_MAX];
    bool has_app_id;
    char app_id[MXC_APP_ID_MAX_BYTES];
} mxc_sandbox_id;

int mxc_sandbox_id_encode(const mxc_sandbox_id *id, char *out, size_t outsz, mxc_error *e);
bool mxc_agent_name_is_safe(const char *name);
long mxc_b64std_decode(const char *in, size_t n, unsigned char *out, size_t outsz);
#endif
/* One UTF-8 scalar's length (1-4), its code point in *cp; 0 when not well-formed. */
size_t mxc_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/* ---- exec.h: the engine's diagnostics (mxc-exec --debug, --log-file) ---- */
extern bool mxc_debug;
extern int mxc_debug_fd;
void mxc_debugf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- hostpath.h: host paths opened for a caller, safely (the module's whole interface) ---- */
typedef struct {
    const char *const *own;  /* host paths the sandbox being made can write */
    size_t nown;
    bool claims;             /* live sandboxes' writable areas count too */
    void (*on_link)(void *ctx, const char *at, const char *target); /* each symlink followed */
    void *ctx;
} mxc_hostpath_rules;

/* Resolves path.  A symlink is followed (up to 40) only when the directory
 * holding it is not writable by the sandbox being made or (claims) a live
 * one; follow_final says whether a trailing symlink is followed at all.
 * 0: *fd is an O_PATH fd of the object, *dir of the directory holding it,
 * out its canonical path.  -ENOENT: *dir is the deepest directory that
 * exists, out the path as far as it resolved plus the rest (*e untouched).
 * Other -errno: *e says what (policy_validation for a path refused,
 * backend_error for a system call failed; native the errno). */
int mxc_hostpath_resolve(const mxc_hostpath_rules *rules, const char *path, bool follow_final, char *out,
                         size_t outsz, int *fd, int *dir, mxc_error *e);

/* Opens a file the executor writes for its caller (--log-file) for
 * appending, creating it 0600: its directory walked from "/" with no
 * symlink in any component (a link planted by a sandbox that has ended, or
 * whose grants are claimed only later, is invisible to the live claims),
 * refused when it lies inside what a live sandbox can write; the file
 * itself opened O_NOFOLLOW|O_NOCTTY|O_APPEND, regular, with one link.
 * Returns the fd, or -1 with *e set (operation "log.open"). */
int mxc_hostpath_open_log(const char *path, mxc_error *e);

/* Opens a file the executor reads for its caller (--config FILE): its
 * directory resolved as above (no link a sandbox could have planted), the
 * file O_NOFOLLOW|O_NOCTTY and regular; it may lie inside a sandbox's
 * workspace (a caller stages requests there).  Relative paths are taken
 * from the current directory as they are.  Returns the fd or -1, *e set. */
int mxc_hostpath_open_read(const char *path, mxc_error *e);

/* Refuses (policy_validation, *e set, -1) a read-write or read-only grant
 * (what: "read-write", "read-only") whose directory is, or contains, mxc's
 * state root, claims directory (/var/lib/mxc/claims; rootless
 * <private dir>/mxc-claims, state.h) or workspace root, or lies inside the state
 * root or claims directory.  Compared by device and inode from descriptors
 * (the grant as the kernel resolves it), walking up with "..".  0 if fine
 * or if the path does not exist. */
int mxc_hostpath_check_grant(const char *path, const char *what, mxc_error *e);

/* The same rule over another owner's places (mxc-gateway's state, audit
 * directory, socket): a grant that is or covers any of own, or (inside_too)
 * lies inside one, is refused with remedy as the remediation.  A place
 * that is a file (a socket, a key) is covered by itself and by every
 * directory above it. */
typedef struct {
    const char *path, *name;
    bool inside_too;
} mxc_hostpath_owned;
int mxc_hostpath_check_grant_against(const char *path, const char *what, const mxc_hostpath_owned *own, size_t nown,
                                     const char *remedy, mxc_error *e);
/* Whether an object as resolved (obj; parent: the directory it was found in)
 * is root or lies below it, root a directory, or is root, root anything
 * else: by device and inode, walking up by "..", no path string trusted. */
bool mxc_hostpath_within(int obj, int parent, const char *root);

/* ---- state.h: the caller's own directories ---- */
int mxc_open_own_dir(const char *path, mode_t forbidden);
int mxc_private_dir(bool make, char *out, size_t outsz, mxc_error *e);

/* ---- inventory.h ---- */
bool mxc_label_is_valid(const char *s, size_t max);

/* ---- fresh.h: a phase run by a fresh mxc-exec ---- */
pid_t mxc_spawn_fresh(const char *exe, char *const argv[], char *const envp[], const int *fds, int n, mxc_error *e);
int mxc_session_phase_fresh(const mxc_request *r, const char *request_json, bool experimental, json_t **result,
                                 mxc_error *e);
int mxc_oneshot_fresh(const mxc_request *r, const char *request_json, bool experimental, int in, int out,
                           int err, int *exit_code, bool *timed_out, mxc_error *e);

/* ---- session.h: the isolation_session phases, in the calling process ---- */
int mxc_session_phase(const mxc_request *r, json_t **result, mxc_error *e);
int mxc_session_exec_start(const mxc_request *r, bool pty, mxc_proc *proc, mxc_error *e);

/* ---- oneshot.h: an in-process one-shot (containment process) handed back running, behind a
 * pointer: new (NULL when out of memory), start, its workload (mxc_oneshot_proc) driven as a
 * session exec's is, finish, delete (the handle only: finish first if it started) ---- */
mxc_oneshot *mxc_oneshot_new(void);
int mxc_oneshot_start(const mxc_request *r, bool pty, unsigned short rows, unsigned short cols, mxc_oneshot *os,
                      mxc_error *e);
void mxc_oneshot_finish(mxc_oneshot *os);
void mxc_oneshot_delete(mxc_oneshot *os);
mxc_proc *mxc_oneshot_proc(mxc_oneshot *os);
pid_t mxc_oneshot_pid1(const mxc_oneshot *os); /* the host pid of the sandbox's PID 1 */

/* ---- exec.h: a started workload, behind a pointer ---- */
mxc_proc *mxc_proc_new(void); /* for mxc_session_exec_start; NULL when out of memory */
void mxc_proc_delete(mxc_proc *p); /* the handle only: mxc_exec_close first if it started */
int mxc_exec_run(mxc_proc *proc, int relay_in, int relay_out, int relay_err, mxc_error *e);
int mxc_exec_kill(mxc_proc *proc);
/* mxc-oci's terminal relay: the one above, for a pty master it received (exec.h) */
int mxc_exec_relay_terminal(int master, int pidfd, int in, int out);
void mxc_exec_close(mxc_proc *proc);
pid_t mxc_proc_workload(const mxc_proc *p); /* host pid of the workload */
/* The workload's pipe ends handed to the caller (p's become -1: closing stdin is the caller's). */
void mxc_proc_take_stdio(mxc_proc *p, int *in, int *out, int *err);
int mxc_proc_terminal(const mxc_proc *p); /* on a pty: its master (p's; -1 when none) */
/* Once mxc_exec_run returned: the exit code (signal N: 128+N) and whether the timeout ended it. */
int mxc_proc_exit_code(const mxc_proc *p);
bool mxc_proc_timed_out(const mxc_proc *p);

/* What it takes to kill a started exec from another thread while one drives mxc_exec_run:
 * taken once, fired any number of times, dropped (defined here, the FFI holds one). */
typedef struct {
    int conn;    /* session: a duplicate of the exec init's connection */
    int pidfd;   /* one-shot: PID 1 */
    pid_t group; /* the workload's process group */
} mxc_exec_killer;
void mxc_exec_killer_take(const mxc_proc *proc, mxc_exec_killer *k);
void mxc_exec_killer_fire(const mxc_exec_killer *k);
void mxc_exec_killer_drop(mxc_exec_killer *k);

/* ---- run_v1.h ---- */
json_t *mxc_backends_json(void);

/* ---- termfilter.h: what a workload's terminal output may do to a person's terminal ---- */
#define MXC_TERMFILTER_SEQ_MAX 4096 /* a longer sequence is dropped whole */

typedef struct mxc_termfilter {
    int state;   /* where in a sequence we are */
    size_t len;  /* bytes of the sequence held */
    unsigned char seq[MXC_TERMFILTER_SEQ_MAX];
    size_t dropped; /* sequences dropped so far */
    unsigned char u8[4]; /* a UTF-8 character begun, not yet complete */
    size_t u8len, u8need;
} mxc_termfilter;

void mxc_termfilter_init(mxc_termfilter *f);
size_t mxc_termfilter_run(mxc_termfilter *f, const unsigned char *in, size_t n, unsigned char *out);

/* ---- harden.h: the process hardening an OCI container's init and hooks take ---- */
#define MXC_LANDLOCK_ABI_SCOPE 6
int mxc_landlock_abi(void);
int mxc_seccomp_apply(bool no_memfd);
void mxc_close_all_but(int *keep, size_t n);
void mxc_reset_signals(void);

/* ---- cgroup.h ---- */
const char *mxc_cgroup_v2_root(void);
pid_t mxc_cgroup_clone(unsigned long long flags, int cgroup_fd);

/* ---- cgroup.h: the one cgroup manager (sessions, one-shots and mxc-oci alike): its backend,
 * the operations on one cgroup directory and the typed limits (defined here, declared once) ---- */
/* The backend this host gives mxc, chosen once per process: v2 where
 * /sys/fs/cgroup is cgroup2 or MXC_CGROUP2_ROOT names a cgroup2 directory;
 * else v1 where a pids, memory or cpu hierarchy is writable; else none (no
 * cgroup for mxc: the PID namespace is the kill-all, as --probe says). */
typedef enum { MXC_CGROUP_NONE, MXC_CGROUP_V1, MXC_CGROUP_V2 } mxc_cgroup_backend;
/* The backend, or -1 with e when MXC_CGROUP2_ROOT names no cgroup2
 * directory (never a silent fall back to another backend). */
int mxc_cgroup_host(mxc_error *e);

/* v1: the hierarchy of ctrl ("pids", "freezer", ...) at /sys/fs/cgroup/<ctrl>
 * when it is a cgroup v1 mount the caller may write: its real path in out
 * (cpu and cpuacct share one). */
bool mxc_cgroup_v1_root(const char *ctrl, char *out, size_t outsz);
/* A hybrid host's controller-less cgroup2 hierarchy (/sys/fs/cgroup/unified:
 * the `0::` line of /proc/PID/cgroup) the caller may write, its real path in
 * out; nothing is ever limited there. */
bool mxc_cgroup_hybrid_root(char *out, size_t outsz);

/* ---------------------------------------- one cgroup directory (cgroup_dir.c)
 * dir: an absolute path of a cgroup directory; ctrl: on v1 a controller of
 * the hierarchy dir is in (the /proc/PID/cgroup line membership is read
 * from), NULL on v2.  The file functions return 0 or -errno. */

/* Writes text to dir/file (not through a symlink); a write interrupted
 * while a memory limit reclaims (EINTR) is written again. */
int mxc_cgroup_write(const char *dir, const char *file, const char *text);
/* The first line of dir/file, without its newline. */
int mxc_cgroup_read(const char *dir, const char *file, char *out, size_t outsz);
/* A "flat keyed" file's value (cpu.stat, memory.events, cpuacct.stat: "key
 * value" lines) in *out; 0 there and -ENOENT when the key is absent. */
int mxc_cgroup_read_key(const char *dir, const char *file, const char *key, unsigned long long *out);
/* Whether the first line of dir/file has word among its space-separated ones. */
bool mxc_cgroup_has_word(const char *dir, const char *file, const char *word);
/* mkdir -p of rel below root (root exists); the full path in dir, how many
 * trailing components were made here in *made.  each (may be NULL) is called
 * for every level, made here or found, and may refuse it (a negative errno). */
typedef int (*mxc_cgroup_level_fn)(const char *dir, bool made, bool leaf, void *arg);
int mxc_cgroup_mkdirs(const char *root, const char *rel, mxc_cgroup_level_fn each, void *arg, char *dir, size_t dirsz,
                      int *made);
/* The preparation of each level of a new cgroup path, as mxc_cgroup_mkdirs's
 * each (arg: an mxc_cgroup_levels): a v1 cpuset level without cpus or mems
 * gets its parent's (as runc); a v2 level above the leaf, made here,
 * delegates to its children the controllers the root does (pids, memory,
 * cpu, cpuset). */
typedef struct {
    const char *root;
    bool v2, cpuset;
} mxc_cgroup_levels;
int mxc_cgroup_prepare_level(const char *dir, bool made, bool leaf, void *arg);
/* rmdir, waiting (at most 200 times 5 ms) while what leaves it still
 * holds it (EBUSY).  0 or -errno. */
int mxc_cgroup_rmdir(const char *dir);
/* Moves pid (0: the caller) into dir (cgroup.procs). */
int mxc_cgroup_enter(const char *dir, pid_t pid);
/* The pids in dir (cgroup.procs): how many are in out (at most max; more
 * are not counted), or -errno. */
int mxc_cgroup_pids(const char *dir, pid_t *out, size_t max);
/* Every pid in dir: *out (malloc'd, the caller frees it; NULL on error) grows
 * until the whole list fits, MXC_CGROUP_PIDS_MAX at the most.  How many, or -errno. */
#define MXC_CGROUP_PIDS_MAX (1u << 22)
int mxc_cgroup_pids_all(const char *dir, pid_t **out);
/* Sends sig to every process in dir and the cgroups below it (the whole
 * list each reads), each through a pidfd after checking, with the pid
 * pinned, that its /proc/PID/cgroup line names exactly that cgroup: a pid
 * reused meanwhile is never hit.  Returns how many it found. */
int mxc_cgroup_signal(const char *dir, const char *ctrl, int sig);
/* Kill-all: cgroup.kill (v2, 5.14+) and a wait until the subtree is
 * unpopulated (at most 1 s); else (v1, older v2, still populated) SIGKILL
 * sweeps as mxc_cgroup_signal's until dir and the cgroups below it are empty:
 * at most 500 rounds of 2 ms, dir's path for the membership check asked once. */
void mxc_cgroup_kill_dir(const char *dir, const char *ctrl);
/* Freezing: v2's cgroup.freeze (v2), else dir is a v1 freezer cgroup. */
bool mxc_cgroup_frozen(const char *dir, bool v2);
/* Freezes or thaws dir and waits (at most 2 s) until it holds; a freeze that
 * does not hold is undone.  what names the cgroup in the error. */
int mxc_cgroup_freeze(const char *dir, bool v2, bool frozen, const char *what, mxc_error *e);

/* ------------------------------------------------ limits (cgroup_limits.c) */

typedef struct {
    bool set; /* unset: the cgroup's value is left as it is */
    long long v;
} mxc_cgroup_value;

typedef struct {
    mxc_cgroup_value pids;                  /* pids.max; 0 and below: unlimited */
    mxc_cgroup_value memory;                /* bytes; below 0: unlimited */
    mxc_cgroup_value swap;                  /* memory plus swap (runc's meaning); below 0: unlimited;
                                             * unset while memory is set: no swap at all */
    mxc_cgroup_value reservation;           /* memory.low (v2), memory.soft_limit_in_bytes (v1) */
    mxc_cgroup_value shares;                /* 2..262144: v1 cpu.shares, v2 cpu.weight converted */
    mxc_cgroup_value quota, period;         /* µs; quota below 0: unlimited; an unset one is kept */
    mxc_cgroup_value rt_period, rt_runtime; /* v1 realtime cpu (CONFIG_RT_GROUP_SCHED) */
    const char *cpus, *mems;                /* cpuset; NULL: left as it is */
} mxc_cgroup_limits;

/* Where each kind of limit is written (v2: one directory; NULL: nowhere). */
typedef struct {
    bool v2;
    const char *pids, *memory, *cpu, *cpuset;
} mxc_cgroup_dirs;

/* The write that failed: a file of dir. */
typedef struct {
    const char *dir, *file;
} mxc_cgroup_failure;

/* Writes the limits that are set, each in its file for the backend, in
 * the order the kernel takes them.  0, or -errno with the file in *f:
 * -ENOENT this cgroup has no such file (v1 memory.memsw.limit_in_bytes:
 * no swap accounting); -ERANGE swap below the memory limit. */
int mxc_cgroup_set_limits(const mxc_cgroup_dirs *d, const mxc_cgroup_limits *l, mxc_cgroup_failure *f);

/* ---- registry.h, idrange.h: host-wide id claims ---- */
void mxc_registry_range(unsigned *base, unsigned *count);

#define MXC_IDRANGE_SIZE 65536u
#define MXC_IDRANGE_NAME_MAX 32
void mxc_idrange_region(unsigned *base, unsigned *slots);
int mxc_idrange_claim(const char *state_dir, const char *const *writable, size_t nwritable, unsigned *base,
                      char name[MXC_IDRANGE_NAME_MAX], mxc_error *e);
int mxc_idrange_host_use(unsigned long long lo, unsigned long long n, bool gid, const char *mine, char *what,
                         size_t size);
int mxc_idrange_claim_at(unsigned base, const char *state_dir, const char *const *writable, size_t nwritable,
                         char name[MXC_IDRANGE_NAME_MAX], mxc_error *e);
int mxc_idrange_join(const char *of, const char *of_state_dir, pid_t of_pid, const char *state_dir,
                     const char *const *writable, size_t nwritable, unsigned *base, char name[MXC_IDRANGE_NAME_MAX],
                     mxc_error *e);
void mxc_idrange_release(const char *name);
void mxc_idrange_release_dead(const char *state_dir);
void mxc_idrange_release_owned(const char *name, const char *state_dir, pid_t pid);
int mxc_idrange_set_cgroups(const char *name, const char *const *dirs, size_t n);
int mxc_idrange_set_owner(const char *name, pid_t pid);

/* ---- request.h, plan.h: a network section planned whole (mxc-oci's io.mxc.network, src/oci/mxcnet.c) ---- */
/* The wire's network section n checked and parsed as request.c parses a request's (the same
 * checks, messages and order); -1 with *e set.  Freed by mxc_net_section_free. */
int mxc_net_section_parse(json_t *n, mxc_net_section *s, mxc_error *e);
void mxc_net_section_free(mxc_net_section *s);

/* What a network plan's build needs besides the section: the sandbox it is for. */
typedef struct {
    const char *sandbox;    /* its name (the proxy's records, the CA's directory); NULL: a one-shot's own */
    const char *audit_path; /* the proxy's records unless the caller names a file (MXC_PROXY_AUDIT_FILE);
                               NULL: nowhere */
    const char *ca_base;    /* credentials: the host directory the CA files go under; NULL: none */
    const char *ca_seen;    /*   the same as the sandbox sees it (its processes' variables); NULL: ca_base */
    bool ca_required;       /* credentials without ca_base refused (a one-shot's) */
} mxc_net_plan_opts;

/* The network plan, whole (plan.c; o NULL: a one-shot's defaults, no CA), what it adds to every
 * process's environment ("K=V" array, new reference; NULL: out of memory), the network layer's
 * table the engine calls (netplan.h), and the plan freed. */
int mxc_net_plan_build(const mxc_net_section *s, const mxc_net_plan_opts *o, mxc_net_policy *np, mxc_error *e);
json_t *mxc_net_plan_env(const mxc_net_policy *np);
const mxc_net_ops *mxc_net_ops_get(void);
void mxc_net_policy_free(mxc_net_policy *np);

#endif
