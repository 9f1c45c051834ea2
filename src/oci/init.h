/* init.h — the container's init, between clone and execve.
 * Owns: everything the new process does in its namespaces, as named steps
 * over one state (init.c's init_steps): receiving the detached trees its
 * parent made (rootfs, binds, default devices), the container's root built
 * by the setup operations the config is lowered to (rootops.h: mounts,
 * devices, /dev links, sysctls, masked and read-only paths, the engine's
 * /proc rules among them), pivot_root, the hostname, rlimits,
 * groups/gid/uid, capabilities, no_new_privs, the engine's seccomp
 * baseline, then "ready" to the parent and the exec fifo.  Never returns:
 * execve, or _exit after telling the parent why (the mxc_error itself). */
#ifndef MXC_OCI_INIT_H
#define MXC_OCI_INIT_H

#include "config.h"
#include "hooks.h"
#include "profile.h"
#include "rootops.h" /* setupops.h: MXC_DEV_NNODES, mxc_make_in_root_as */

/* Messages on the socketpair (SOCK_SEQPACKET): parent -> init: 'M' maps
 * written, 'T' + a tree descriptor (rootfs, then each bind in mount order,
 * then each default device), 'G' go; init -> parent: 'K' ready or 'E' +
 * the mxc_error; with a seccomp profile that notifies, init -> parent 'N'
 * + its listener right after 'K' (notify.h: OCI_MSG_LISTENER; an exec'd
 * process sends it before its execve); parent -> init: 'S' state saved
 * (then the init waits on the fifo).  One byte each (src/base/sockmsg.h's tag messages), but for the
 * error report after 'E' (sockmsg.h's mxc_error_send) and the texts after
 * 'h' and 'P'. */
enum {
    OCI_MSG_MAPS = 'M',
    OCI_MSG_TREE = 'T',
    OCI_MSG_GO = 'G',
    OCI_MSG_HOOKS_ASK = 'H',   /* init -> parent: run prestart/createRuntime */
    OCI_MSG_HOOKS_STATE = 'h', /* parent -> init: + the state, those hooks ran */
    OCI_MSG_READY = 'K',
    OCI_MSG_FAIL = 'E',
    OCI_MSG_START_STATE = 'P', /* parent -> init: + startContainer's state */
    OCI_MSG_SAVED = 'S',
};

typedef struct {
    const oci_config *c;
    int sock;  /* the init's end */
    int fifo;  /* O_PATH of the exec fifo */
    int console; /* process.terminal: connected to the console socket; else -1 */
    const oci_seccomp *seccomp; /* the config's profile, loaded last (after the baseline) */
    int preserve;               /* fds 3..3+preserve-1 stay open for the process */
    bool host_net;              /* on the host's network namespace: the Landlock scope applies */
    const oci_hooks *hooks;     /* createContainer (its binaries' checked fds) and startContainer: run by
                                 * the init; with any hook before pivot_root it asks the parent first ('H',
                                 * answered 'h' + the state once prestart/createRuntime ran), and with
                                 * startContainer it gets that phase's state ('P' + text) before 'S' */
    bool own_trees;             /* rootless: no tree comes ('G' alone); the init clones the rootfs (its cwd)
                                 * and the default devices itself, in its own mount namespace (rootless.h) */
    const int *bind_src;        /* own_trees: per mount, the parent's descriptor of a bind's source, or -1 */
    char *const *bind_paths;    /* own_trees: per mount, that source's resolved path (the parent's, no link) */
    const int *xdev_src;        /* own_trees: per linux.devices entry, the parent's checked host node (O_PATH) */
} oci_init_args;

_Noreturn void oci_init_main(const oci_init_args *a);

/* exec: in a process already inside the container's namespaces (and its
 * PID namespace's child): the process's limits, credentials, cwd,
 * no_new_privs, the Landlock scope on the host's network (host_net), not
 * dumpable, only fds 0-2 (with process.terminal: a pty of the container's
 * devpts, its master sent to console), process.apparmorProfile through
 * proc_fd (the host's /proc, taken before the namespaces were joined; -1
 * without a profile), the seccomp baseline, execve.  A failure is
 * 'E' + the mxc_error on sock (close-on-exec: EOF means the exec happened). */
_Noreturn void oci_exec_main(const oci_config *c, const oci_seccomp *sc, int sock, int console, int preserve,
                             bool host_net, int proc_fd);

#endif
