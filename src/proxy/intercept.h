/* intercept.h — owns: one intercepted tunnel, a CONNECT to an endpoint a
 * credential binds (credbind.h), after the proxy's usual checks (407,
 * policy, every resolved address) and its TCP connection to a checked
 * address.  It answers the CONNECT, terminates the client's TLS with a leaf
 * minted for the requested name (tlsmint.h), reads one origin-form request
 * (httphead.h, mxc_head_parse_origin), applies the placeholder rule to
 * every header value (a violation: 403 with X-Mxc-Deny-Reason inside the
 * tunnel, audited, closed — before any upstream byte), opens TLS to the
 * upstream with full verification (the upstream context's roots, the
 * requested name or IP checked) — a failed verification: 502, nothing
 * sent — and only then forwards the rewritten head (Connection: close),
 * the body by its framing (Content-Length or chunked), and the response
 * until the upstream ends it.  One request per tunnel: the client sees
 * Connection: close and opens another for its next request.
 *
 * Blocking I/O on a thread of its own (see intercept.c for why), bounded by
 * the proxy's connection cap and by SO_RCVTIMEO / SO_SNDTIMEO. */
#ifndef MXC_PROXY_INTERCEPT_H
#define MXC_PROXY_INTERCEPT_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdint.h>

#include "credbind.h"
#include "tlsmint.h"

typedef struct {
    mxc_tlsmint *mint;
    SSL_CTX *server;      /* TLS toward the workload (no certificate: one per connection) */
    SSL_CTX *upstream;    /* TLS toward origins: verify peer, the roots loaded */
    const mxc_credset *creds;
    unsigned head_timeout_ms, idle_timeout_ms;
} mxc_intercept_ctx;

/* The two contexts (the upstream one trusting ca_file, or the system roots
 * when NULL); -1 with err. */
int mxc_intercept_ctx_init(mxc_intercept_ctx *ix, const char *ca_file, mxc_error *err);
void mxc_intercept_ctx_free(mxc_intercept_ctx *ix);

/* What the thread reports, once, at its end: the disposition ("allowed",
 * "denied", "error"), the reason token, the credential substituted (or
 * NULL), bytes each way. */
typedef void (*mxc_intercept_audit)(void *arg, const char *disposition, const char *reason, const char *credential,
                                    uint64_t bytes_out, uint64_t bytes_in);

typedef struct {
    const mxc_intercept_ctx *ix;
    int cfd, ufd;        /* the workload's socket, the upstream's (connected); both closed at the end */
    char host[256];      /* the requested host as the CONNECT wrote it (IPv6 without brackets) */
    bool host_ipv6;
    char key[256];       /* the host in mxc_cred_host_key form: the binding's and the verification's name */
    bool key_is_ip;
    unsigned port;
    mxc_intercept_audit audit;
    void *audit_arg;
} mxc_intercept_job;

/* Runs the tunnel to its end on the calling thread, then frees job. */
void mxc_intercept_run(mxc_intercept_job *job);

#endif
