/* reply.h — owns: the short answers mxc-proxy gives of its own (400, 403,
 * 407, 414, 431, 502, 503, 504), the same bytes whether they go out in
 * clear (proxy.c) or inside an intercepted tunnel (intercept.c): a status
 * line, X-Mxc-Deny-Reason when there is a reason, Proxy-Authenticate on
 * 407, Connection: close, an empty body. */
#ifndef MXC_PROXY_REPLY_H
#define MXC_PROXY_REPLY_H

#include <stddef.h>

/* The answer's length (it fits 512 bytes for a reason of up to 64). */
size_t mxc_reply_format(char *out, size_t sz, int status, const char *reason);

#endif
