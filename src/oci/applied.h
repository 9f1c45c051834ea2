/* applied.h — the MXC network policy a container was given, recorded at create for an operator to
 * compare with what was asked (docs/kubernetes.md "Which policy is in force").
 * Owns: the record (state.json's annotations io.mxc.applied.*, which `mxc-oci state` and the hooks'
 * state show; a config carrying any io.mxc.applied.* key is refused by
 * mxcnet.h, so the record is only ever mxc-oci's) and its one line in the --log at create.  No
 * digest is recorded: the canonical text is compared as it is (an operator who wants a hash takes
 * sha256sum of both sides; mxc-oci, linked statically, carries no crypto library for it).
 *   io.mxc.applied.network  the applied io.mxc.network, canonical JSON (compact, keys sorted), or "none"
 *   io.mxc.applied.version  io.mxc.version of the policy ("1"), or "none"
 *   io.mxc.applied.source   "self" (applied by this create to the namespace it made), "cni" (to a pod's
 *                           namespace made by CNI, joined by path), "pod:ID" (the namespace joined by
 *                           path carries the policy live container ID applied), or, with no policy,
 *                           "none:own-netns" / "none:joined-netns" / "none:host-network" */
#ifndef MXC_OCI_APPLIED_H
#define MXC_OCI_APPLIED_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "mxcnet.h"

#define OCI_APPLIED_PREFIX "io.mxc.applied."

/* After oci_mxcnet_check and _prepare: the record made (kept in m->applied) and set into c's
 * annotations (added to c->doc when it has none), so the state written at create carries it. */
int oci_applied_record(oci_mxcnet *m, int rootfd, const char *id, oci_config *c, mxc_error *e);

/* The --log's writer (main.c sets it; NULL: no --log): one line at level "info". */
extern void (*oci_applied_logger)(const char *msg);
/* The record's line, once the policy is attached (oci_mxcnet_attach); nothing before a record. */
void oci_applied_log(const oci_mxcnet *m);

#endif
