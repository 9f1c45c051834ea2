/* credbind.c — see credbind.h. */
#include "credbind.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    char name[MXC_CRED_NAME_MAX + 1];
    unsigned long revision;
    char host[MXC_HOST_MAX + 1];
    unsigned port;
    char *prefix; /* NULL: every path */
    char *secret;
    size_t secret_len;
} cred;

struct mxc_credset {
    cred v[MXC_CRED_MAX];
    size_t n;
};

mxc_credset *mxc_credset_new(void)
{
    return calloc(1, sizeof(mxc_credset));
}

void mxc_credset_free(mxc_credset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        OPENSSL_cleanse(s->v[i].secret, s->v[i].secret_len);
        free(s->v[i].secret);
        free(s->v[i].prefix);
    }
    OPENSSL_cleanse(s, sizeof *s);
    free(s);
}

size_t mxc_credset_count(const mxc_credset *s)
{
    return s ? s->n : 0;
}

static bool path_plain(mxc_span path);

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

bool mxc_cred_host_key(const char *host, char *out, size_t sz)
{
    unsigned char a[16];
    if (inet_pton(AF_INET, host, a) == 1)
        return inet_ntop(AF_INET, a, out, (socklen_t)sz) != NULL;
    if (inet_pton(AF_INET6, host, a) == 1)
        return inet_ntop(AF_INET6, a, out, (socklen_t)sz) != NULL;
    size_t n = strlen(host);
    if (n && host[n - 1] == '.')
        n--;
    if (n == 0 || n >= sz || n > MXC_HOST_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!name_char(host[i]) || host[i] == '_')
            return false;
        out[i] = host[i] >= 'A' && host[i] <= 'Z' ? (char)(host[i] | 0x20) : host[i];
    }
    out[n] = '\0';
    return true;
}

int mxc_credset_add(mxc_credset *s, const char *name, unsigned long revision, const char *host, unsigned port,
                    const char *prefix, const char *secret, mxc_error *err)
{
    size_t i = s->n;
    if (i >= MXC_CRED_MAX) {
        mxc_err(err, MXC_E_MALFORMED_REQUEST, "credentials[%zu]: more than %d credentials", i, MXC_CRED_MAX);
        return -1;
    }
    cred *c = &s->v[i];
    size_t nl = name ? strlen(name) : 0;
    bool name_ok = nl > 0 && nl <= MXC_CRED_NAME_MAX;
    for (size_t k = 0; name_ok && k < nl; k++)
        name_ok = name_char(name[k]);
    const char *why = !name_ok                                   ? "name: not 1..64 of [A-Za-z0-9_.-]"
                      : !host || !mxc_cred_host_key(host, c->host, sizeof c->host) ? "host: not a host name or IP literal"
                      : port < 1 || port > 65535                 ? "port: not 1..65535"
                      : prefix && *prefix && *prefix != '/'      ? "pathPrefix: does not start with '/'"
                      : !secret || !*secret                      ? "secret: empty"
                                                                 : NULL;
    size_t sl = secret ? strlen(secret) : 0;
    if (!why && sl > MXC_CRED_SECRET_MAX)
        why = "secret: too long";
    for (size_t k = 0; !why && k < sl; k++)
        if (((unsigned char)secret[k] < 0x20 && secret[k] != '\t') || secret[k] == 0x7f)
            why = "secret: holds a control character";
    for (size_t k = 0; !why && prefix && prefix[k]; k++)
        if ((unsigned char)prefix[k] <= 0x20 || (unsigned char)prefix[k] >= 0x7f)
            why = "pathPrefix: not visible ASCII";
    if (!why && prefix && *prefix && !path_plain((mxc_span){prefix, strlen(prefix)}))
        why = "pathPrefix: holds a dot segment, a backslash or an encoded dot or separator";
    /* a name may come again only as the same credential bound once more (a
     * provider with several endpoints: one placeholder, several bindings) */
    for (size_t k = 0; !why && k < s->n; k++)
        if (!strcmp(s->v[k].name, name) &&
            (s->v[k].revision != revision || s->v[k].secret_len != sl || CRYPTO_memcmp(s->v[k].secret, secret, sl)))
            why = "name: twice, with another revision or secret";
    if (why) {
        memset(c, 0, sizeof *c);
        mxc_err(err, MXC_E_MALFORMED_REQUEST, "credentials[%zu].%s", i, why);
        return -1;
    }
    memcpy(c->name, name, nl + 1);
    c->revision = revision;
    c->port = port;
    c->prefix = prefix && *prefix ? strdup(prefix) : NULL;
    c->secret = malloc(sl + 1);
    if ((prefix && *prefix && !c->prefix) || !c->secret) {
        free(c->prefix);
        free(c->secret);
        memset(c, 0, sizeof *c);
        mxc_err(err, MXC_E_MALFORMED_REQUEST, "credentials[%zu]: out of memory", i);
        return -1;
    }
    memcpy(c->secret, secret, sl + 1);
    c->secret_len = sl;
    s->n++;
    return 0;
}

bool mxc_credset_binds(const mxc_credset *s, const char *host, unsigned port)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (s->v[i].port == port && !strcmp(s->v[i].host, host))
            return true;
    return false;
}

static const char *find_ci(const char *p, size_t n)
{
    size_t k = sizeof MXC_CRED_PREFIX - 1;
    for (size_t i = 0; i + k <= n; i++)
        if (!strncasecmp(p + i, MXC_CRED_PREFIX, k))
            return p + i;
    return NULL;
}

bool mxc_cred_mentioned(const char *p, size_t n)
{
    return find_ci(p, n) != NULL;
}

/* ---- path scope ------------------------------------------------------------
 *
 * A prefix is judged on the path as the origin will read it, and origins
 * differ: RFC 3986 §5.2.4 removes "." and ".." segments; servlet containers
 * (Tomcat, Jetty, Spring) cut a segment's ";parameters" first, so
 * "/repos/..;/admin" is "/repos/../admin"; some decode %-escapes before
 * they normalise, and a front proxy that decodes once more turns
 * "%252e%252e" into ".."; IIS takes "%u002e", backslashes and overlong
 * UTF-8 as dots and slashes; Windows drops trailing dots, so "..." may be
 * "..".  Rather than guess one reading, a path (the part before '?') is
 * judged at every decoding depth up to MAX_DECODES and refused when any
 * depth holds
 *   - a segment whose part before ';' is only dots ("." "..", "...", "..;x");
 *   - a backslash, a control character (NUL, CR, LF...), "%u";
 *   - an escape that decodes to '.', '/' or '\\' (an encoded dot or
 *     separator: "%2e", "%2f", "%5c", and through "%25" their
 *     double-encoded "%252e", "%252f", "%255c");
 *   - decoded bytes that are not well-formed UTF-8 (overlong "%c0%ae");
 * and when escapes are still left after MAX_DECODES (ambiguous).  What
 * passes has no segment that climbs at any depth, so every reading keeps
 * the path's leading bytes (the prefix) as its leading segments. */

#define MAX_DECODES 3

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Whether b[0..n) is well-formed UTF-8 (RFC 3629: no overlong form, no
 * surrogate, nothing above U+10FFFF). */
static bool utf8_ok(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = b[i], len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (len == 0 || i + len > n || (len == 2 && c < 0xc2))
            return false;
        unsigned cp = len == 1 ? c : c & (0x7f >> len);
        for (unsigned k = 1; k < len; k++) {
            if ((b[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (b[i + k] & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += len;
    }
    return true;
}

/* One depth: no dot-only segment, backslash, control character or "%u". */
static bool depth_plain(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f || c == '\\' || (c == '%' && i + 1 < n && (p[i + 1] == 'u' || p[i + 1] == 'U')))
            return false;
        if (c == '/' || i == 0) {
            size_t a = c == '/' ? i + 1 : i, e = a;
            while (e < n && p[e] == '.')
                e++;
            if (e > a && (e == n || p[e] == '/' || p[e] == ';'))
                return false;
        }
    }
    return true;
}

/* Decodes every %XX of p[0..*n) in place; false when one decodes to '.',
 * '/' or '\\'.  *more: an escape was decoded. */
static bool decode_once(char *p, size_t *n, bool *more)
{
    size_t w = 0;
    *more = false;
    for (size_t i = 0; i < *n; i++) {
        int hi, lo;
        if (p[i] == '%' && i + 2 < *n && (hi = hexval(p[i + 1])) >= 0 && (lo = hexval(p[i + 2])) >= 0) {
            char d = (char)(hi << 4 | lo);
            if (d == '.' || d == '/' || d == '\\')
                return false;
            p[w++] = d;
            i += 2;
            *more = true;
        } else {
            p[w++] = p[i];
        }
    }
    *n = w;
    return true;
}

/* Whether every reading of path (the part before '?') keeps it where it
 * is: see the comment above. */
static bool path_plain(mxc_span path)
{
    size_t n = 0;
    while (n < path.n && path.p[n] != '?')
        n++;
    if (!depth_plain(path.p, n))
        return false;
    char *b = malloc(n + 1);
    if (!b)
        return false;
    memcpy(b, path.p, n);
    bool ok = true, more = true;
    for (int d = 0; ok && more && d < MAX_DECODES; d++)
        ok = decode_once(b, &n, &more) && (!more || (depth_plain(b, n) && utf8_ok((unsigned char *)b, n)));
    if (ok && more) /* escapes may still be left: one more pass only looks */
        for (size_t i = 0; ok && i + 2 < n; i++)
            ok = !(b[i] == '%' && hexval(b[i + 1]) >= 0 && hexval(b[i + 2]) >= 0);
    free(b);
    return ok;
}

/* The placeholder at p (it starts with the prefix, any case): its
 * credential, or NULL with *reason; *len its length. */
static const cred *resolve(const mxc_credset *s, const char *p, size_t n, const char *host, unsigned port,
                           mxc_span path, size_t *len, const char **reason)
{
    size_t k = sizeof MXC_CRED_PREFIX - 1, a = k;
    if (memcmp(p, MXC_CRED_PREFIX, k) != 0) {
        *reason = "credential-malformed";
        return NULL;
    }
    while (a < n && name_char(p[a]))
        a++;
    size_t nl = a - k, b = a + 1;
    if (nl == 0 || nl > MXC_CRED_NAME_MAX || a >= n || p[a] != ':') {
        *reason = "credential-malformed";
        return NULL;
    }
    unsigned long rev = 0;
    while (b < n && p[b] >= '0' && p[b] <= '9' && b - a <= 18)
        rev = rev * 10 + (unsigned long)(p[b++] - '0');
    if (b == a + 1 || (b < n && p[b] >= '0' && p[b] <= '9')) {
        *reason = "credential-malformed";
        return NULL;
    }
    *len = b;
    /* every binding of the name is tried; when none fits, the closest miss
     * is said: path over host/port over revision over unknown */
    static const char *const RANK[] = {"credential-unknown", "credential-revision", "credential-not-bound",
                                       "credential-path"};
    int miss = 0;
    const cred *c = NULL;
    for (size_t i = 0; s && i < s->n && !c; i++) {
        const cred *x = &s->v[i];
        if (strlen(x->name) != nl || memcmp(x->name, p + k, nl))
            continue;
        int m = x->revision != rev                               ? 1
                : x->port != port || strcmp(x->host, host) != 0 ? 2
                : x->prefix && (!path_plain(path) || path.n < strlen(x->prefix) ||
                                memcmp(path.p, x->prefix, strlen(x->prefix)) != 0)
                    ? 3
                    : 0;
        if (m == 0)
            c = x;
        else if (m > miss)
            miss = m;
    }
    *reason = c ? NULL : RANK[miss];
    return *reason ? NULL : c;
}

int mxc_credset_substitute(const mxc_credset *s, const char *host, unsigned port, mxc_span path, mxc_span v,
                           char **out, size_t *outn, const char **used, const char **reason)
{
    *out = NULL;
    *outn = 0;
    *used = NULL;
    /* first pass: every placeholder valid, and the size */
    size_t size = 0;
    for (size_t i = 0; i < v.n;) {
        const char *at = find_ci(v.p + i, v.n - i);
        if (!at) {
            size += v.n - i;
            break;
        }
        size_t len;
        const cred *c = resolve(s, at, (size_t)(v.p + v.n - at), host, port, path, &len, reason);
        if (!c)
            return -1;
        size += (size_t)(at - (v.p + i)) + c->secret_len;
        i = (size_t)(at - v.p) + len;
    }
    char *o = malloc(size + 1);
    if (!o) {
        *reason = "resources";
        return -1;
    }
    size_t w = 0;
    for (size_t i = 0; i < v.n;) {
        const char *at = find_ci(v.p + i, v.n - i);
        if (!at) {
            memcpy(o + w, v.p + i, v.n - i);
            w += v.n - i;
            break;
        }
        size_t len, lit = (size_t)(at - (v.p + i));
        const cred *c = resolve(s, at, (size_t)(v.p + v.n - at), host, port, path, &len, reason);
        memcpy(o + w, v.p + i, lit);
        memcpy(o + w + lit, c->secret, c->secret_len);
        w += lit + c->secret_len;
        *used = c->name;
        i = (size_t)(at - v.p) + len;
    }
    o[w] = '\0';
    *out = o;
    *outn = w;
    *reason = NULL;
    return 0;
}
