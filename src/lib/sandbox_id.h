/* sandbox_id.h — the sandboxId codec and the identity-string validators.
 * Owns: iso:<base64url-nopad(JSON)> encode/decode (deterministic key order,
 * version gate), the routing prefix, the agent-name charset and appId rules.
 * Pure: no syscalls, no filesystem. */
#ifndef MXC_SANDBOX_ID_H
#define MXC_SANDBOX_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "iface/front.h" /* mxc_sandbox_id and its bounds: the fronts hold one */

#define MXC_SANDBOX_ID_VERSION 1

/* Writes "iso:..." into out. */
int mxc_sandbox_id_encode(const mxc_sandbox_id *id, char *out, size_t outsz, mxc_error *e);

/* Parses a wire sandboxId.  Unknown prefix -> unsupported_containment; no or
 * empty prefix, bad body -> malformed_id (newer version: message says
 * "upgrade").  A well-formed id whose agent name is outside the safe
 * charset -> stale_id: it cannot name anything we minted, and it never
 * reaches the filesystem. */
int mxc_sandbox_id_decode(const char *wire, mxc_sandbox_id *id, mxc_error *e);

/* The charset we mint agent names in: "mxc-" followed by [a-z0-9], bounded. */
bool mxc_agent_name_is_safe(const char *name);

/* The one UTF-8 scalar at s (n bytes there): its length (1-4) with the code
 * point in *cp, or 0 when it is not well-formed (truncated, overlong, a
 * surrogate, above U+10FFFF) or n is 0.  Declared for the fronts in front.h. */
size_t mxc_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/* appId: <= 256 code points, valid UTF-8, no control characters (C0, DEL, C1). */
int mxc_app_id_validate(const char *s, size_t len, mxc_error *e);

/* RFC 4648 §5 without padding; strict (canonical trailing bits). */
size_t mxc_b64url_encode(const unsigned char *in, size_t n, char *out, size_t outsz);
/* Returns decoded length or -1. */
long mxc_b64url_decode(const char *in, size_t n, unsigned char *out, size_t outsz);
/* RFC 4648 §4 with padding, strict; for --config-base64.  Returns length or -1. */
long mxc_b64std_decode(const char *in, size_t n, unsigned char *out, size_t outsz);

#endif
