/* store.h — mxc-oci's containers under --root.
 * Owns: container ids (runc's rule), the root directory (made 0700 root's,
 * refused when a symlink or someone else's), one directory per container
 * (mkdirat, 0700), its state.json (written whole under a temporary name,
 * renamed) and the exec fifo's name, the status derived from the recorded
 * process (pid and start time) and the fifo, and the OCI state JSON. Every
 * path below the root is reached by descriptor with O_NOFOLLOW. */
#ifndef MXC_OCI_STORE_H
#define MXC_OCI_STORE_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

#define OCI_ROOT_DEFAULT "/run/mxc-oci"
#define OCI_SPEC_VERSION "1.2.0"
#define OCI_FIFO "exec.fifo"
#define OCI_ID_MAX 255

typedef enum { OCI_CREATED, OCI_RUNNING, OCI_STOPPED } oci_status;

typedef struct {
    char id[OCI_ID_MAX + 1];
    pid_t pid;
    unsigned long long start;  /* the pid's start time: pid and start name the process for good */
    char bundle[PATH_MAX];
    char rootfs[PATH_MAX];
    char created[40];          /* RFC 3339, UTC, nanoseconds */
    char claim[32];            /* the id range claim ("" with the config's own user namespace) */
    char oci_version[32];      /* the config's */
    json_t *annotations;       /* owned; NULL: none */
} oci_state;

bool oci_valid_id(const char *id);
const char *oci_status_name(oci_status s);

/* The root directory's descriptor (made, parents too, when absent), or -1. */
int oci_store_root(const char *root, mxc_error *e);
/* A new container's directory (its descriptor); runc's wording when the
 * id is taken. */
int oci_store_make(int rootfd, const char *id, mxc_error *e);
/* An existing container's directory; "container does not exist". */
int oci_store_open(int rootfd, const char *id, mxc_error *e);
/* Removes the container's directory and what is in it. */
void oci_store_remove(int rootfd, const char *id);

/* Every container directory under the root (a valid id, a directory, not a link), sorted: also a
 * half-made one whose create was killed before its state was written (list shows it, so that
 * delete --force can be given its name).  A JSON array of strings, never NULL. */
json_t *oci_store_ids(int rootfd);
/* What list shows of a container directory with no readable state: its id, status "stopped", no
 * pid, empty bundle, rootfs and created (nothing recorded), owner root. */
json_t *oci_state_partial(const char *id);

int oci_state_write(int dirfd, const oci_state *s, mxc_error *e);
int oci_state_read(int dirfd, const char *id, oci_state *s, mxc_error *e);
void oci_state_free(oci_state *s);
oci_status oci_state_status(int dirfd, const oci_state *s);
/* The state as the runtime spec says (ociVersion, id, status, pid while
 * created or running, bundle, annotations) plus runc's rootfs, created
 * and owner. */
json_t *oci_state_json(const oci_state *s, oci_status st);
/* now, RFC 3339 in UTC with nanoseconds */
void oci_now(char *out, size_t outsz);

#endif
