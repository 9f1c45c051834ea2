/* net.h — the network layer, from a front's side: the one header of src/net a front includes
 * (scripts/layers.json "interfaces"); the plan it takes is the engine's (netplan.h).
 * Owns: installing src/net's table of what the engine asks of a network layer (netplan.h
 * mxc_net_ops: lowering a section, the host's capabilities, governed egress's credential and
 * environment, model 1's resolver, attaching, --dry-run's rules, --probe's models) — a front
 * that links the engine calls it once at startup, before any thread; libmxc.so, which carries
 * the network layer whole, has it done at load — and the attach calls a front makes itself
 * (mxc-oci: a container's init, a pod's namespace), defined in stack.c and governed.c, and this
 * host's own IPv4 destinations as the rules see them (thishost.h), for a front that judges a
 * policy against them (mxc-oci's nodelocal.h). */
#ifndef MXC_NET_NET_H
#define MXC_NET_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "netplan.h"

/* src/net's table into the engine (mxc_net_ops_set); again is harmless. */
void mxc_net_install(void);

/* Rules, then the stack, for the network namespace of `holder`; the
 * keeper ends the stack when `holder` exits.  No-op for models 3/host.
 * cg (NULL: none): the sandbox's cgroup, whose helpers' child the keeper
 * and pasta (governed: mxc-proxy) run in. */
int mxc_net_attach(const mxc_net_policy *np, const mxc_net_cgroup *cg, pid_t holder, mxc_error *e);
/* A rule set (an nftables script) installed as one transaction in the network namespace nsfd,
 * through mxc-nft, with nothing else attached (no stack): mxc-oci's rules for a namespace
 * that has its own route (a pod's, made by CNI; src/oci/cninet.h).  backend_unavailable when
 * it cannot go in. */
int mxc_net_rules_into(int nsfd, const char *script, mxc_error *e);
/* Model 1 with no stack, in the network namespace nsfd (a pod's): head (text that goes first in the
 * same transaction), then the plan's rule set with this host's destinations as they are now, and a
 * follower process (in the caller's namespaces, a session of its own) that keeps that set current
 * while holder lives, as the stack's keeper does, and installs fallback when it cannot. */
int mxc_net_rules_followed(const mxc_net_policy *np, int nsfd, pid_t holder, const char *head, const char *fallback,
                           mxc_error *e);
/* Starts mxc-proxy for holder's network namespace (np: governed; its
 * audit_path and sandbox name the audit sink and the records' sandbox).
 * With credentials (np->creds): every secret is read now from the
 * caller's environment (secretEnv; missing → policy_validation naming it)
 * and goes to the proxy over its configuration socket only; the proxy's
 * CA certificate comes back on the status pipe ("ok\n" + PEM, EOF) and is
 * written, with a bundle of the system roots and it, to
 * <np->ca_base>/.mxc-proxy/<sandbox>/{ca,bundle}.pem (a session's
 * workspace, a one-shot's first read-write directory grant: host paths
 * bound at the same path inside) —
 * every step by descriptor (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
 * O_NOFOLLOW, a fresh O_EXCL file renamed into place): the workload may
 * have planted links there. */
int mxc_governed_attach(const mxc_net_policy *np, const mxc_net_cgroup *cg, pid_t holder, mxc_error *e);

/* This host's own IPv4 destinations, read now (thishost.h: every `local` route of the caller's
 * namespace): NULL with *err = -errno when they cannot be listed.  Whether addr (host byte
 * order) is one of them; freed. */
typedef struct mxc_net_own mxc_net_own;
mxc_net_own *mxc_net_own_read(int *err);
bool mxc_net_own_has(const mxc_net_own *own, uint32_t addr);
void mxc_net_own_free(mxc_net_own *own);

#endif
