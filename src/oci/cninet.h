/* cninet.h — io.mxc.network on a network namespace the container joins by path and no live
 * container of this --root applied a policy to: a Kubernetes pod's, which the CRI's CNI made (a
 * veth eth0 with an address and routes to a bridge on the node) and the pod's sandbox (pause)
 * container joins by path.
 * Owns: who may apply a policy there (the first container of this root in that namespace, never
 * one the CRI marks as an app container — containerd's io.kubernetes.cri.container-type or CRI-O's
 * io.kubernetes.cri-o.ContainerType other than "sandbox" —, and only on a namespace owned by mxc-oci's own user namespace, over which the
 * container's root holds no capability: it cannot remove what is applied), and applying it while
 * the init waits: the rules inside the namespace through mxc-nft (src/net/stack.h), installed from
 * mxc-oci's namespaces, before anything else —
 *   governed egress and model 3: input, output and forward dropped, IPv4 and IPv6, but loopback
 *     (governed: then the container's own mxc-proxy, its listener on the namespace's
 *     127.0.0.1:3128, the proxy itself dialling from mxc-oci's — the node's — namespace; DNS only
 *     through the proxy);
 *   model 1: the plan's own rule set over the namespace's own interfaces, no pasta, this host's
 *     destinations followed into it while the init lives (stack.h mxc_net_rules_followed);
 *   model 2 (a caller's proxy on the host's loopback, reached through pasta's gateway): refused.
 * The rules live as long as the namespace (CNI deletes it with the pod); the proxy ends with the
 * init (delete). */
#ifndef MXC_OCI_CNINET_H
#define MXC_OCI_CNINET_H

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "net.h"

#define OCI_CRI_CONTAINER_TYPE "io.kubernetes.cri.container-type"
#define OCI_CRIO_CONTAINER_TYPE "io.kubernetes.cri-o.ContainerType" /* CRI-O's: "sandbox" or "container" */
#define OCI_CNINET_TABLE "mxc_pod" /* the rules' table in the pod's namespace */

/* Before any state exists: may this container (joining the network namespace at path, where no
 * live container of this root is) apply its policy (model) there?  0 yes; -1 refused, naming why. */
int oci_cninet_check(const oci_config *c, const char *path, mxc_net_model model, mxc_error *e);
/* The init (in the joined namespace at path) waits: the rules, then (governed) the proxy. */
int oci_cninet_attach(const mxc_net_policy *np, const char *path, pid_t init, mxc_error *e);

#endif
