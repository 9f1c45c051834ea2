/* hooks.h — the config's hooks (runtime-spec config.md "POSIX-platform Hooks").
 * Owns: the hooks parsed and checked (path absolute, args, env, timeout
 * > 0); the rule for whose binaries a hook resolved on the host may run
 * (docs/oci.md "Hooks": the config written by root only, the binary
 * resolved by descriptor through root-owned directories nobody else can
 * write, never beneath the bundle or the rootfs, the file root's and not
 * writable by others, exec'd through the checked descriptor so it cannot
 * be swapped in between); and running a phase: each hook in its own
 * session with the state JSON on its stdin, killed (its whole process
 * group) at its timeout.  Where each phase runs is the callers':
 * lifecycle.c (host root, the runtime's namespaces: prestart,
 * createRuntime, poststart, poststop) and init.c (the container's
 * namespaces: createContainer before pivot_root, startContainer as the
 * container's process before its exec). */
#ifndef MXC_OCI_HOOKS_H
#define MXC_OCI_HOOKS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "error.h"

typedef enum {
    OCI_HOOK_PRESTART,
    OCI_HOOK_CREATE_RUNTIME,
    OCI_HOOK_CREATE_CONTAINER,
    OCI_HOOK_START_CONTAINER,
    OCI_HOOK_POSTSTART,
    OCI_HOOK_POSTSTOP,
    OCI_HOOK_NPHASES
} oci_hook_phase;

typedef struct {
    const char *path;   /* absolute */
    const char **args;  /* NULL-terminated; {path} when the config has none */
    const char **env;   /* NULL-terminated */
    int timeout;        /* seconds; 0: none */
    int fd;             /* the checked binary (O_PATH) of a host-resolved hook; -1: exec'd by path */
} oci_hook;

typedef struct {
    json_t *doc; /* a reference: the strings point into it */
    oci_hook *hook[OCI_HOOK_NPHASES];
    size_t n[OCI_HOOK_NPHASES];
} oci_hooks;

extern const char *const oci_hook_phase_name[OCI_HOOK_NPHASES];

/* config_doc's "hooks" (absent: none) into *h; a wrong type refused naming the field. */
int oci_hooks_parse(json_t *config_doc, oci_hooks *h, mxc_error *e);
void oci_hooks_free(oci_hooks *h);
/* Whether any hook of a phase other than startContainer is listed (those
 * run with the runtime's privileges or see the host's tree, so the config
 * must be root's own). */
bool oci_hooks_host_side(const oci_hooks *h);

/* The trust rule, on path: the binary's O_PATH descriptor, or -1 with e
 * saying why.  deny: directories (st_dev/st_ino) the binary may not be
 * beneath (the bundle, the rootfs). */
int oci_hook_open(const char *path, const struct stat *deny, size_t ndeny, mxc_error *e);
/* oci_hook_open for each hook of phase p (their fd set). */
int oci_hooks_open(oci_hooks *h, oci_hook_phase p, const struct stat *deny, size_t ndeny, mxc_error *e);

/* Runs phase p's hooks in order, state on each one's stdin, stdout and
 * stderr to this process's stderr.  0, or -1 at the first that fails
 * (exit status not 0, killed, or its timeout: its process group killed)
 * with e naming it. */
int oci_hooks_run(const oci_hooks *h, oci_hook_phase p, const char *state, mxc_error *e);

#endif
