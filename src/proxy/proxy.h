/* proxy.h — owns: mxc-proxy's engine, one sandbox's governed egress.  An
 * event loop (epoll, one thread; name lookups on short-lived threads) over
 * a listening socket that the executor created *inside* the sandbox's
 * network namespace, so the sandbox reaches nothing but this listener
 * while the upstream connections leave from the proxy's own (the host's)
 * namespace.  Per connection: read the head (httphead.h), authenticate
 * (407 before anything else: no policy, no lookup), decide by name
 * (hostpolicy.h), resolve, decide every address, and just before each
 * dial decide the address once more with the kernel's word on whether it
 * is this host (localroute.h, hostpolicy.h's check_dial); connect to a
 * checked address only, then tunnel (CONNECT) or forward one absolute-form request
 * (Connection: close).  A CONNECT to an endpoint a credential binds is
 * handed, once connected, to intercept.h on a thread of its own; a head
 * that carries a credential placeholder anywhere else is refused (403).  One audit record per decision (OCSF-shaped JSON
 * lines), within the audit's budgets (auditlog.h: what is dropped is counted and said); credentials are never
 * written anywhere.  Out of descriptors it sheds and backs off, never retries accept at once.  Ends when the watched
 * sandbox PID 1 exits.  Runs with no privilege: everything it opens is
 * given to it before mxc_proxy_run. */
#ifndef MXC_PROXY_PROXY_H
#define MXC_PROXY_PROXY_H

#include <stddef.h>

#include "auditlog.h"
#include "hostpolicy.h"
#include "intercept.h"

typedef struct {
    int listen_fd;          /* listening, inside the sandbox's namespace */
    int watch_fd;           /* a pidfd: the proxy ends when it is readable; -1: none */
    int audit_fd;           /* JSON lines; -1: none */
    const char *sandbox;    /* the sandbox's name, for the audit */
    const char *user;       /* the credential the sandbox was given */
    const char *token;
    const mxc_hostpolicy *policy;
    const char *hosts;      /* NULL: the system resolver; else only this table ("addr name..." lines) */
    unsigned max_conns;     /* concurrent client connections: at the cap (or out of descriptors) the oldest one
                               still waiting for its head makes room, else the newcomer gets a 503 */
    unsigned head_timeout_ms;
    unsigned idle_timeout_ms;
    unsigned resolve_timeout_ms; /* a name lookup that has not answered by then: 504, the tunnel ends */
    size_t pipe_bytes_max;  /* the relay pipes' total capacity (bytes): past it new pipes get one page, none grows */
    const mxc_intercept_ctx *intercept; /* NULL: no credential bindings, every CONNECT spliced */
    mxc_auditlog_limits audit_limits;   /* the audit's rate and size budgets (auditlog.h) */
} mxc_proxy_config;

/* Runs until the watched process exits (0) or a fatal error (-1). */
int mxc_proxy_run(const mxc_proxy_config *cfg);
/* Intercepted tunnels still running on their threads (after mxc_proxy_run
 * returned: the caller must not free what they use, and exits instead). */
unsigned mxc_proxy_intercepting(void);

#endif
