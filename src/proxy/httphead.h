/* httphead.h — owns: reading one HTTP/1.x request head as mxc-proxy, a
 * forward proxy, receives it from a sandbox — strictly.  Pure: no I/O, no
 * allocation; every span points into the caller's buffer.
 *
 * Accepted: `CONNECT host:port HTTP/1.1` (authority-form, explicit port) and
 * absolute-form `METHOD http://host[:port]/path HTTP/1.x` (port 80 when
 * absent).  Refused (status 400 unless said otherwise, with a short static
 * reason for the proxy's reason header): origin-form and asterisk-form
 * targets, an https:// or other scheme in absolute-form, userinfo in an
 * authority (`user@host`), a port that is not 1..65535 written without
 * leading zeros or spaces, NUL / %-encoding / any byte outside
 * [A-Za-z0-9.-_] in a host name (IPv6 literals in brackets are checked as
 * IPv6 text), bare LF or a lone CR anywhere in the head, obs-fold
 * (a field line starting with SP/HTAB), whitespace between a field name and
 * its colon, an empty or non-token field name, Transfer-Encoding together
 * with Content-Length, Transfer-Encoding other than exactly `chunked`
 * (case-insensitive, no parameters, no list), more than one
 * Transfer-Encoding, Content-Length that is not all digits or repeated
 * (even with the same value), an absolute-form request whose Host field
 * names another authority, more than one Host or Proxy-Authorization
 * field, HTTP versions other than 1.0 / 1.1.  A head larger than
 * MXC_HEAD_MAX bytes or with more than MXC_HEAD_MAX_FIELDS fields →
 * MXC_HEAD_TOO_LARGE (431; a request line over the limit: 414). */
#ifndef MXC_PROXY_HTTPHEAD_H
#define MXC_PROXY_HTTPHEAD_H

#include <stdbool.h>
#include <stddef.h>

#define MXC_HEAD_MAX 16384
#define MXC_HEAD_MAX_FIELDS 100
#define MXC_HOST_MAX 255

typedef enum {
    MXC_HEAD_INCOMPLETE = 0, /* no CRLFCRLF yet and still under the limits: read more */
    MXC_HEAD_OK = 1,
    MXC_HEAD_BAD = -1,       /* h->status (400) and h->reason say why */
    MXC_HEAD_TOO_LARGE = -2, /* h->status 431 (or 414) */
} mxc_head_status;

typedef struct {
    const char *p;
    size_t n;
} mxc_span;

typedef struct {
    size_t head_len;              /* bytes up to and including the blank line's CRLF */
    bool connect;                 /* CONNECT (authority-form) */
    mxc_span method;              /* as received (a token) */
    char host[MXC_HOST_MAX + 1];  /* the target host, as written, NUL-terminated; IPv6 without brackets */
    bool host_ipv6;               /* host was a bracketed IPv6 literal */
    unsigned port;                /* 1..65535 */
    mxc_span path;                /* absolute-form: path and query ("/" when empty); CONNECT: empty */
    int version_minor;            /* 0 or 1 */
    long long content_length;     /* -1: none */
    bool chunked;                 /* Transfer-Encoding: chunked */
    size_t nfields;
    struct {
        mxc_span name, value;     /* value without surrounding SP/HTAB */
    } fields[MXC_HEAD_MAX_FIELDS];
    int status;                   /* on an error: 400, 414 or 431 */
    const char *reason;           /* on an error: static text, no CR/LF, e.g. "obs-fold" */
} mxc_head;

/* Parses the head at the start of buf[0..len).  Bytes after the head (a
 * pipelined body or tunnel data) are not looked at. */
mxc_head_status mxc_head_parse(const char *buf, size_t len, mxc_head *h);

/* The same for a request inside a tunnel the proxy terminated (TLS
 * interception) to host:port (host as in mxc_head.host, v6: an IPv6
 * literal): origin-form only (a target starting with '/'; CONNECT,
 * absolute-form and asterisk-form → "bad-target"), a Host field required
 * ("no-host") naming host:port, the port 443 when Host has none
 * ("host-mismatch" otherwise).  h->host / h->port are the tunnel's. */
mxc_head_status mxc_head_parse_origin(const char *buf, size_t len, const char *host, bool v6, unsigned port,
                                      mxc_head *h);

/* Whether a field is dropped when the proxy forwards a request: proxy and
 * hop-by-hop fields (Proxy-Authorization, Proxy-Connection, Connection,
 * Keep-Alive, TE, Upgrade, Proxy-Authenticate) and Host (re-written from
 * the target). */
bool mxc_head_hop_by_hop(mxc_span name);

/* The one field named name (ASCII case-insensitive), or NULL when absent. */
const mxc_span *mxc_head_field(const mxc_head *h, const char *name);

/* Proxy-Authorization: `Basic <base64 of user:password>`, the scheme
 * case-insensitive.  0 with both NUL-terminated; -1 when the field is absent,
 * not Basic, bad base64 (padding, alphabet), has no colon, holds NUL or a
 * control byte, or does not fit. */
int mxc_head_proxy_auth(const mxc_head *h, char *user, size_t usz, char *pass, size_t psz);

/* A chunked request body's framing (RFC 9112 §7.1), fed as it arrives, so
 * that exactly the body — and nothing pipelined after it — is forwarded.
 * Strict: hex sizes of at most 15 digits, extensions of visible ASCII /
 * SP / HTAB only, CRLF everywhere (a bare LF, a lone CR or a missing CRLF
 * after a chunk's data is an error), trailer lines of visible ASCII /
 * SP / HTAB, at most MXC_HEAD_MAX bytes for one chunk's size line and for
 * the trailers. */
typedef struct {
    int state;
    unsigned long long left; /* data bytes still due in this chunk */
    unsigned digits;
    size_t meta;             /* bytes of sizes, extensions and trailers so far */
    bool done, bad;
} mxc_chunked;

/* Consumes a prefix of p[0..n): returns how many bytes belong to the body
 * (all of n unless the body ends inside it: then done is set and the rest is
 * not the body's), or -1 (bad set) on a framing error. */
long mxc_chunked_feed(mxc_chunked *c, const char *p, size_t n);

#endif
