/* lifecycle.h — the runc commands over the store, the config and the init.
 * Owns: create (config checked, id range claimed, directory and exec fifo
 * made, the init cloned into its namespaces, its user namespace's maps
 * written, the detached trees made and passed, the state saved), start
 * (the fifo read, with a pidfd on the init), state, kill, delete, run,
 * list, and the documents of features and spec.  Errors use runc's
 * wording where callers parse it.  create and exec run as named steps over
 * one context each (lifecycle.c: create_steps, exec_steps), a failed step
 * rolled back by the one rollback. */
#ifndef MXC_OCI_LIFECYCLE_H
#define MXC_OCI_LIFECYCLE_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "stdiorelay.h"

/* create; with keep, the init stays this process's child (run) and *child names it. */
/* console: --console-socket (with process.terminal), or NULL; preserve:
 * --preserve-fds, fds 3..3+preserve-1 passed to the process (never a
 * directory or an O_PATH descriptor: a way out of the rootfs); cgroup: the
 * backend the container's cgroup is given (--cgroup-manager: cgroup.h's
 * OCI_CGROUP_HOST, or MXC_CGROUP_NONE: none is made); io: without
 * process.terminal, filled with the pipes the caller relays in place of its
 * stdio that are terminals (stdiorelay.h: run, not detached), or NULL: a
 * detached process, /dev/null there. */
int oci_create(int rootfd, const char *id, const char *bundle, const char *pid_file, const char *console,
               int preserve, int cgroup, bool keep, pid_t *child, oci_stdio *io, mxc_error *e);
int oci_start(int rootfd, const char *id, mxc_error *e);
json_t *oci_query(int rootfd, const char *id, mxc_error *e);
int oci_kill(int rootfd, const char *id, int sig, bool all, mxc_error *e);
int oci_delete(int rootfd, const char *id, bool force, mxc_error *e);
/* run: create + start, then (unless detach) wait and delete; *status is
 * the container's exit status (128+N after signal N). */
/* --preserve-fds N, checked before mxc-oci opens anything of its own (the
 * fds above 2 must be the caller's). */
int oci_check_preserved(int n, mxc_error *e);
/* keep: (not detached) the stopped container stays until delete (runc's --keep) */
int oci_run(int rootfd, const char *id, const char *bundle, const char *pid_file, const char *console, int preserve,
            int cgroup, bool detach, bool keep, int *status, mxc_error *e);
typedef struct {
    const char *process_file;            /* --process FILE; else args with the flags below */
    char **args; size_t nargs;
    const char *cwd, *user, *pid_file;   /* user: UID[:GID] */
    const char *console;                 /* --console-socket (with --tty) */
    const char *apparmor;                /* --apparmor PROFILE: process.apparmorProfile (apparmor.h) */
    const char **env; size_t nenv;       /* appended */
    const char **gids; size_t ngids;     /* --additional-gids, appended */
    const char **caps; size_t ncaps;     /* --cap: added to bounding, effective, permitted (ambient if inheritable) */
    bool tty, detach, no_new_privs;
    bool ignore_paused;                  /* --ignore-paused: exec into a frozen cgroup (the process waits there) */
    int preserve;                        /* --preserve-fds */
} oci_exec_opts;
/* exec: a process of its own in a created or running container (its
 * namespaces joined through a pidfd, the process set up as create's, not
 * dumpable until its exec); unless detach, waits (*status as run's). */
int oci_exec(int rootfd, const char *id, const oci_exec_opts *o, int *status, mxc_error *e);
json_t *oci_list(int rootfd);
/* ps: the host pids of the container's processes (its PID namespace), the init first. */
json_t *oci_ps(int rootfd, const char *id, mxc_error *e);
json_t *oci_features(void);
json_t *oci_spec(void);
/* "KILL", "SIGKILL", "9": the number, or -1. */
int oci_signal(const char *s);

#endif
