/* credbind.h — owns: the provider credentials one sandbox's proxy holds
 * (spec 002 "Provider credentials"), their bindings, and the placeholder
 * rule.  A credential is (name, revision, host, port, optional path
 * prefix, secret); the workload only ever sees its placeholder
 * `mxc:cred:<name>:<revision>`.  In a request to (host, port, path) inside
 * an intercepted tunnel, a header value's placeholder is replaced by the
 * secret only when that credential binds exactly this host and port and
 * path starts with its prefix and no origin's reading of the path leaves
 * it (no dot segment, with or without ";params", at any %-decoding depth;
 * no encoded dot or separator, backslash, "%u" or overlong UTF-8: see
 * credbind.c "path scope"); any other `mxc:cred:` text (an unknown
 * name, another revision, another binding, a malformed placeholder) refuses
 * the whole request.  Pure: no I/O.  Secrets are copied in, never printed,
 * and cleansed (OPENSSL_cleanse) when the set is freed. */
#ifndef MXC_PROXY_CREDBIND_H
#define MXC_PROXY_CREDBIND_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "httphead.h"

#define MXC_CRED_PREFIX "mxc:cred:"
#define MXC_CRED_MAX 64          /* credentials per sandbox */
#define MXC_CRED_NAME_MAX 64     /* [A-Za-z0-9_.-]+ */
#define MXC_CRED_SECRET_MAX 8192 /* bytes; visible ASCII, SP, HTAB, obs-text: never a CR, LF or NUL */

typedef struct mxc_credset mxc_credset;

mxc_credset *mxc_credset_new(void);
/* Cleanses every secret, then frees. */
void mxc_credset_free(mxc_credset *s);
/* 0, or -1 with err ("credentials[i]: why": never the secret). host: a
 * DNS name or an IP literal; prefix NULL or "" for every path, else it
 * starts with '/' and is itself a path the scope rule passes. */
int mxc_credset_add(mxc_credset *s, const char *name, unsigned long revision, const char *host, unsigned port,
                    const char *prefix, const char *secret, mxc_error *err);
size_t mxc_credset_count(const mxc_credset *s);

/* The form hosts are compared in: lower case, one trailing dot removed, an
 * IP literal re-printed canonically.  false when host fits neither. */
bool mxc_cred_host_key(const char *host, char *out, size_t sz);

/* Whether any credential binds (host, port) — host in mxc_cred_host_key form. */
bool mxc_credset_binds(const mxc_credset *s, const char *host, unsigned port);

/* Whether p[0..n) holds "mxc:cred:" in any letter case. */
bool mxc_cred_mentioned(const char *p, size_t n);

/* The value v with its placeholders replaced for a request to (host, port,
 * path): 0 with *out (malloc'd, *outn bytes; the caller cleanses and frees
 * it) and *used the name of the last credential substituted (or NULL),
 * -1 with *reason one of "credential-unknown", "credential-revision",
 * "credential-not-bound", "credential-path", "credential-malformed",
 * "resources". */
int mxc_credset_substitute(const mxc_credset *s, const char *host, unsigned port, mxc_span path, mxc_span v,
                           char **out, size_t *outn, const char **used, const char **reason);

#endif
