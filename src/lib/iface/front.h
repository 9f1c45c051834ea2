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
 * (The FFI's handle still embeds engine types by value — request.h, oneshot.h, session.h through
 * src/ffi/ffi_internal.h — and mxc-oci's network attachment, src/oci/mxcnet.*, nodelocal.h, reads
 * a request and a plan: scripts/layers.baseline lists those until they take typed handles.) */
#ifndef MXC_FRONT_H
#define MXC_FRONT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

typedef struct mxc_request mxc_request; /* request.h: the parsed wire request */

/* ---- request.h ---- */
#define MXC_REQUEST_MAX_BYTES (1u << 20) /* 1 MiB */

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
 * exists, out the path as far as it resolved plus the rest.  Other
 * -errno: why[] says what. */
int mxc_hostpath_resolve(const mxc_hostpath_rules *rules, const char *path, bool follow_final, char *out,
                         size_t outsz, int *fd, int *dir, char *why, size_t whysz);

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

/* ---- state.h: the caller's own directories ---- */
int mxc_open_own_dir(const char *path, mode_t forbidden);
int mxc_private_dir(bool make, char *out, size_t outsz, char *why, size_t whysz);

/* ---- inventory.h ---- */
bool mxc_label_is_valid(const char *s, size_t max);

/* ---- fresh.h: a phase run by a fresh mxc-exec ---- */
pid_t mxc_spawn_fresh(const char *exe, char *const argv[], char *const envp[], const int *fds, int n, mxc_error *e);
int mxc_session_phase_in_process(const mxc_request *r, const char *request_json, bool experimental, json_t **result,
                                 mxc_error *e);
int mxc_oneshot_in_process(const mxc_request *r, const char *request_json, bool experimental, int in, int out,
                           int err, int *exit_code, bool *timed_out, mxc_error *e);

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

/* ---- registry.h, idrange.h: host-wide id claims ---- */
void mxc_registry_range(unsigned *base, unsigned *count);

#define MXC_IDRANGE_SIZE 65536u
#define MXC_IDRANGE_NAME_MAX 32
void mxc_idrange_region(unsigned *base, unsigned *slots);
int mxc_idrange_claim(const char *state_dir, const char *const *writable, size_t nwritable, unsigned *base,
                      char name[MXC_IDRANGE_NAME_MAX], mxc_error *e);
int mxc_idrange_host_use(unsigned long long lo, unsigned long long n, bool gid, const char *mine, char *what,
                         size_t size);
void mxc_idrange_release(const char *name);
void mxc_idrange_release_dead(const char *state_dir);
void mxc_idrange_release_owned(const char *name, const char *state_dir, pid_t pid);
int mxc_idrange_set_cgroups(const char *name, const char *const *dirs, size_t n);
int mxc_idrange_set_owner(const char *name, pid_t pid);

#endif
