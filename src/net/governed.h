/* governed.h — governed egress from the caller's side.
 * Owns: the sandbox's proxy credential and
 * starting mxc-proxy for a sandbox — its listening socket made *inside* the
 * sandbox's network namespace (a short-lived child joins only that
 * namespace, brings its loopback up, binds 127.0.0.1:3128 and hands the
 * socket back), the proxy itself in the caller's namespaces (never in the
 * sandbox's: invisible and unsignalable from inside), watching the
 * sandbox's PID 1 through a pidfd and ending with it.  The configuration
 * (host lists, credential) goes over a pipe, never argv or the
 * environment; mxc-proxy answers on a status pipe once its policy is
 * built, so a bad host entry refuses the run before the workload exists.
 * Like stack.h, it must run while the holder still waits.  The attach is
 * declared in net.h (a front's entry: mxc-oci's pod), the rest reaches the
 * engine through its table (netplan.h). */
#ifndef MXC_NET_GOVERNED_H
#define MXC_NET_GOVERNED_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "net.h"
#include "netpolicy.h"

/* A fresh credential into np->proxy_url (32 hex digits of getrandom). */
int mxc_governed_credential(mxc_net_policy *np, mxc_error *e);

/* A one-shot's end: its CA files and their directories (when empty) go,
 * by descriptor as they were written. */
void mxc_governed_remove_ca(const mxc_net_policy *np);

/* What every process of a sandbox with credentials gets (np->creds set):
 * each credential's env variable = its placeholder mxc:cred:<name>:<rev>,
 * SSL_CERT_FILE / REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE / GIT_SSL_CAINFO = the
 * bundle, NODE_EXTRA_CA_CERTS / DENO_CERT = the CA alone; into
 * np->workload_env (a JSON array of "K=V"). */
int mxc_governed_workload_env(mxc_net_policy *np, mxc_error *e);

#endif
