/* mxcnet.h — the io.mxc.* annotations: the MXC network policy of an OCI container.
 * Owns: reading and refusing the annotations (io.mxc.version "1", io.mxc.network: the wire
 * contract's network section as JSON text; any other io.mxc.* key or a bad value refused naming
 * the key; the node's own destinations refused unless its operator allows them: nodelocal.h),
 * the pod rule (the policy is applied once, by the container that makes the network namespace;
 * a container joining one by path must carry the same policy as a live container of
 * this root that applied it there, or none; one nobody of this root is in — a pod's, made by
 * CNI — gets it from its first container, see cninet.h), and applying it through the engine: the
 * section is checked and parsed by the engine's own code for a one-shot's network
 * (mxc_net_section_parse: no wire JSON written or read again), the plan built whole by the engine
 * (mxc_net_plan_build, with the container's name, audit file and CA directory), attached
 * by src/net (rules and pasta, or the container's own mxc-proxy, in mxc-oci's namespaces, never
 * the container's) to the init's network namespace while the init still waits for its trees.
 * What every process of the container gets (the proxy variables with the credential,
 * placeholders, the CA files' paths) goes into process.env and, for exec, into <state>/mxc-net.json.
 * The proxy and the stack watch the init through a pidfd and end with it (delete, or its death). */
#ifndef MXC_OCI_MXCNET_H
#define MXC_OCI_MXCNET_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "front.h"
#include "net.h"

#define OCI_MXC_PREFIX "io.mxc."
#define OCI_MXC_VERSION "io.mxc.version"
#define OCI_MXC_NETWORK "io.mxc.network"
#define OCI_MXC_FILE "mxc-net.json"        /* in the container's state directory: {"applied":b,"env":[..]} */
#define OCI_MXC_AUDIT "proxy-audit.jsonl"  /* governed egress: the proxy's records, in the state directory */
#define OCI_MXC_CA_DIR "mxc-ca"            /* credentials: the CA files' directory in the state directory, */
#define OCI_MXC_CA_INSIDE "/run/mxc"       /*   bound read-only here in the container */

typedef struct {
    json_t *network;     /* io.mxc.network parsed (owned); NULL: no policy */
    bool apply;          /* the container makes its network namespace: the policy is applied by it */
    mxc_net_policy *plan; /* apply: the engine's network plan (owned), not changed once built */
    json_t *env;         /* "K=V" every process gets (owned) */
    char cni[4096];      /* apply on a namespace joined by path (a pod's, made by CNI: cninet.h): its path */
    char applier[256];   /* joined: the live container of this root that applied the same policy there */
    char ca_src[4096];   /* credentials: the CA directory on the host, bound at OCI_MXC_CA_INSIDE */
    bool host_net;       /* the container has the host's network (no namespace of its own) */
    json_t *applied;     /* the record of what was applied (applied.h; owned) */
    char *applied_msg;   /* its --log line (owned) */
} oci_mxcnet;

/* Before any state exists: the annotations checked, the policy validated as the engine validates a
 * one-shot's network; host_net (no network namespace of the container's own) with a policy refused;
 * a joined network namespace checked against the containers of rootfd (the pod rule). */
int oci_mxcnet_check(int rootfd, const oci_config *c, bool host_net, oci_mxcnet *m, mxc_error *e);
/* Once the state directory exists (dir_fd, at dir_path): the engine's plan for the container named
 * id, the process's environment (c->doc's process.env and c->env), the CA directory's read-only
 * bind appended to c->mounts (credentials), and OCI_MXC_FILE written. */
int oci_mxcnet_prepare(oci_mxcnet *m, int dir_fd, const char *dir_path, const char *id, oci_config *c,
                       mxc_error *e);
/* The init exists (its maps written) and waits, and mxc-oci is back in its own namespaces (the
 * proxy and pasta start in them, never in the container's or the pod's): the policy attached to the
 * init's network namespace. */
int oci_mxcnet_attach(oci_mxcnet *m, pid_t init, mxc_error *e);
/* In the init, first thing: the values of the variables the policy's credentials name (secretEnv)
 * wiped in its copy of mxc-oci's environment.  mxc-oci reads them at attach for the proxy alone;
 * the init, a clone of mxc-oci, carried them in its memory and /proc/PID/environ until start's
 * execve; every entry of such a name, not only the one getenv finds.  Async-signal-safe (no
 * allocation). */
void oci_mxcnet_wipe_secrets(const oci_mxcnet *m);
void oci_mxcnet_free(oci_mxcnet *m);
/* The pod rule's look-up: a live container of rootfd in the network namespace at path whose
 * OCI_MXC_FILE says it applied a policy equal to want (any policy: want NULL); its id into applier
 * and, got non-NULL, its policy into *got (a new reference).  0 found, 1 no live container of
 * rootfd is in that namespace, 2 one is but none applied such a policy. */
int oci_mxcnet_applier(int rootfd, const char *path, const json_t *want, char *applier, size_t sz, json_t **got);
/* exec: the container's OCI_MXC_FILE environment set in proc's env (each key replaced or added). */
int oci_mxcnet_exec_env(int dir_fd, json_t *proc, mxc_error *e);

#endif
