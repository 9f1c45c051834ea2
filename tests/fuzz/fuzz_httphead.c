/* fuzz_httphead.c — libFuzzer harness for the proxy's request-head parser.
 * Oracles: parsing never crashes nor reads past the buffer (each parse gets
 * an exact-size heap copy); an error carries status 400 / 414 / 431 and a
 * short kebab-case reason; INCOMPLETE means under MXC_HEAD_MAX and no
 * CRLFCRLF in the input; an OK head ends at the first CRLFCRLF, holds no NUL,
 * bare LF, lone CR or obs-fold, has one field per line, spans inside the head,
 * a host of allowed bytes (or one inet_pton reads as IPv6), a port 1..65535,
 * consistent framing (never CL and chunked, no body on CONNECT, at most one
 * Host / Proxy-Authorization / CL / TE), and a request line that a reference
 * rebuilds from the result (target = [http://]authority[:port][path]) and
 * a Host field, if any, naming that authority; parsing is prefix-consistent
 * (a shorter prefix is INCOMPLETE or the same verdict; one covering the head
 * is the same OK); and Basic credentials, when decoded, re-encode to exactly
 * the field's base64 and hold no control byte.
 *   tests/fuzz/run.sh [SECONDS]
 * An input starting with 0x01 is expanded (count, split, pattern length, then
 * the text: a slice of the text is repeated) so the limits are reachable.
 * Built without libFuzzer (-DMXC_FUZZ_STANDALONE), main() runs the harness
 * over each file named, or the built-in attacks when none is. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httphead.h"

#define INPUT_MAX 40000

static void violated(const char *what)
{
    fprintf(stderr, "oracle violated: %s\n", what);
    abort();
}

#define ORACLE(cond, what)                                                      \
    do {                                                                        \
        if (!(cond))                                                            \
            violated(what);                                                     \
    } while (0)

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int ci_ncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return 1;
    return 0;
}

static int span_is(mxc_span s, const char *name)
{
    return s.n == strlen(name) && ci_ncmp(s.p, name, s.n) == 0;
}

static int inside(const char *base, size_t len, mxc_span s)
{
    return s.p >= base && s.n <= len && (size_t)(s.p - base) <= len - s.n;
}

/* ---- the input ------------------------------------------------------------ */

/* 0x01 count split plen text: text with text[split..split+plen) repeated
 * count*128+1 times at split; otherwise the input as it is. */
static size_t build(const uint8_t *data, size_t size, char *out)
{
    if (size < 4 || data[0] != 0x01) {
        size = size < INPUT_MAX ? size : INPUT_MAX;
        memcpy(out, data, size);
        return size;
    }
    const char *t = (const char *)data + 4;
    size_t tn = size - 4, count = (size_t)data[1] * 128 + 1, split = data[2] % (tn + 1);
    size_t plen = data[3] % 16 + 1, n = split;
    plen = plen < tn - split ? plen : tn - split;
    memcpy(out, t, split);
    for (size_t i = 0; plen && i < count && n + plen <= INPUT_MAX; i++, n += plen)
        memcpy(out + n, t + split, plen);
    size_t rest = tn - split < INPUT_MAX - n ? tn - split : INPUT_MAX - n;
    memcpy(out + n, t + split, rest);
    return n + rest;
}

/* Parses an exact-size heap copy of s[0..n) (ASan sees any over-read). */
static mxc_head_status parse_copy(const char *s, size_t n, mxc_head *h, char **copy)
{
    *copy = malloc(n ? n : 1);
    memcpy(*copy, s, n);
    return mxc_head_parse(*copy, n, h);
}

/* ---- the oracles ---------------------------------------------------------- */

static void check_error(mxc_head_status st, const mxc_head *h)
{
    ORACLE(h->reason, "an error without a reason");
    size_t n = strlen(h->reason);
    ORACLE(n > 0 && n < 40 && strspn(h->reason, "abcdefghijklmnopqrstuvwxyz0123456789-") == n,
           "a reason that is not short kebab-case");
    ORACLE(st == MXC_HEAD_BAD ? h->status == 400 : h->status == 431 || h->status == 414, "a wrong status code");
}

static void check_lines(const char *b, const mxc_head *h)
{
    size_t lines = 0, reqline = 0, n = h->head_len;
    ORACLE(n >= 4 && n <= MXC_HEAD_MAX && memcmp(b + n - 4, "\r\n\r\n", 4) == 0, "head_len not at a CRLFCRLF");
    ORACLE(memmem(b, n, "\r\n\r\n", 4) == b + n - 4, "the head goes past the first CRLFCRLF");
    ORACLE(!memchr(b, '\0', n), "NUL in an OK head");
    for (size_t i = 0; i < n; i++) {
        ORACLE(b[i] != '\n' || (i > 0 && b[i - 1] == '\r'), "bare LF in an OK head");
        ORACLE(b[i] != '\r' || (i + 1 < n && b[i + 1] == '\n'), "lone CR in an OK head");
        if (b[i] == '\n' && !lines++)
            reqline = i - 1;
        ORACLE(!(i > 0 && b[i - 1] == '\n' && (b[i] == ' ' || b[i] == '\t')), "obs-fold in an OK head");
    }
    ORACLE(reqline <= 8192, "request line over 8192 bytes");
    ORACLE(lines == h->nfields + 2, "fields do not match the lines");
}

/* 1..18 digits, no leading zero, no trailing OWS, the value parsed. */
static void check_cl(mxc_span v, long long cl)
{
    long long want = 0;
    ORACLE(v.n >= 1 && v.n <= 18 && (v.p[0] != '0' || v.n == 1) && v.p[v.n] == '\r', "a malformed Content-Length");
    for (size_t i = 0; i < v.n; i++) {
        ORACLE(v.p[i] >= '0' && v.p[i] <= '9', "a non-digit in Content-Length");
        want = want * 10 + (v.p[i] - '0');
    }
    ORACLE(want == cl, "content_length is not the field's value");
}

static void check_fields(const char *b, const mxc_head *h)
{
    int host = 0, auth = 0, cl = 0, te = 0;
    ORACLE(h->nfields <= MXC_HEAD_MAX_FIELDS, "too many fields");
    for (size_t i = 0; i < h->nfields; i++) {
        mxc_span k = h->fields[i].name, v = h->fields[i].value;
        ORACLE(inside(b, h->head_len, k) && inside(b, h->head_len, v), "a field span outside the head");
        ORACLE(k.n > 0 && k.p[k.n] == ':', "a field name not followed by its colon");
        for (size_t j = 0; j < k.n; j++)
            ORACLE((unsigned char)k.p[j] > 0x20 && k.p[j] != 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", k.p[j]),
                   "a non-token field name");
        for (size_t j = 0; j < v.n; j++)
            ORACLE(v.p[j] == '\t' || ((unsigned char)v.p[j] >= 0x20 && v.p[j] != 0x7f), "a control byte in a value");
        ORACLE(v.n == 0 || (v.p[0] != ' ' && v.p[0] != '\t' && v.p[v.n - 1] != ' ' && v.p[v.n - 1] != '\t'),
               "a value not trimmed");
        host += span_is(k, "Host"), auth += span_is(k, "Proxy-Authorization");
        cl += span_is(k, "Content-Length"), te += span_is(k, "Transfer-Encoding");
        if (span_is(k, "Transfer-Encoding"))
            ORACLE(span_is(v, "chunked") && v.p[v.n] == '\r', "a Transfer-Encoding other than chunked");
        if (span_is(k, "Content-Length"))
            check_cl(v, h->content_length);
    }
    ORACLE(host <= 1 && auth <= 1 && cl <= 1 && te <= 1, "a repeated Host / Proxy-Authorization / CL / TE");
    ORACLE(h->content_length >= -1 && (h->content_length >= 0) == (cl == 1) && h->chunked == (te == 1),
           "framing does not match the fields");
    ORACLE(!(h->content_length >= 0 && h->chunked), "both Content-Length and chunked");
    ORACLE(!h->connect || (h->content_length <= 0 && !h->chunked), "a CONNECT with a body");
}

static void check_host(const mxc_head *h)
{
    size_t n = strnlen(h->host, sizeof h->host);
    ORACLE(n > 0 && n <= MXC_HOST_MAX, "host empty or not NUL-terminated");
    ORACLE(h->port >= 1 && h->port <= 65535, "port out of range");
    if (h->host_ipv6) {
        struct in6_addr a;
        ORACLE(inet_pton(AF_INET6, h->host, &a) == 1, "an IPv6 host inet_pton refuses");
        return;
    }
    ORACLE(strspn(h->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == n,
           "a host byte outside [A-Za-z0-9.-_]");
}

/* "host" or "[host]" into a; its length. */
static size_t authority_of(const mxc_head *h, char *a)
{
    return (size_t)sprintf(a, h->host_ipv6 ? "[%s]" : "%s", h->host);
}

/* The request line rebuilt from the result must be the one received. */
static void check_request_line(const char *b, const mxc_head *h)
{
    char a[MXC_HOST_MAX + 16];
    size_t an = authority_of(h, a), m = h->method.n;
    ORACLE(h->method.p == b && m > 0 && b[m] == ' ', "method span not at the start");
    ORACLE(h->connect == (m == 7 && memcmp(b, "CONNECT", 7) == 0), "connect flag wrong");
    const char *t = b + m + 1, *end = memchr(t, ' ', h->head_len - m - 1);
    ORACLE(end && memcmp(end, " HTTP/1.", 8) == 0 && end[8] - '0' == h->version_minor && end[9] == '\r',
           "version not as received");
    ORACLE(h->version_minor == 0 || h->version_minor == 1, "version_minor not 0/1");
    if (!h->connect) {
        ORACLE(ci_ncmp(t, "http://", 7) == 0, "absolute-form without http://");
        t += 7;
    }
    ORACLE((size_t)(end - t) >= an && ci_ncmp(t, a, an) == 0, "host not as in the target");
    t += an;
    char port[8];
    int pn = sprintf(port, ":%u", h->port);
    if (*t == ':') {
        ORACLE(memcmp(t, port, (size_t)pn) == 0, "port not as in the target");
        t += pn;
    } else {
        ORACLE(!h->connect && h->port == 80, "a port that was not in the target");
    }
    if (h->connect)
        ORACLE(t == end && h->path.n == 0 && inside(b, h->head_len, h->path), "CONNECT target has more, or a path");
    else if (t == end)
        ORACLE(h->path.n == 1 && h->path.p[0] == '/', "empty path is not \"/\"");
    else
        ORACLE(h->path.p == t && h->path.p + h->path.n == end && *t == '/', "path span not the target's rest");
}

static void check_host_field(const mxc_head *h)
{
    const mxc_span *v = mxc_head_field(h, "Host");
    if (h->connect || !v)
        return;
    char a[MXC_HOST_MAX + 16];
    size_t an = authority_of(h, a);
    int bare = v->n == an && ci_ncmp(v->p, a, an) == 0;
    sprintf(a + an, ":%u", h->port);
    ORACLE((bare && h->port == 80) || (v->n == strlen(a) && ci_ncmp(v->p, a, v->n) == 0),
           "a Host field naming another authority");
}

static size_t b64(const unsigned char *s, size_t n, char *out)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned long w = (unsigned long)s[i] << 16 | (i + 1 < n ? (unsigned long)s[i + 1] << 8 : 0) |
                          (i + 2 < n ? s[i + 2] : 0);
        out[o++] = al[w >> 18 & 63], out[o++] = al[w >> 12 & 63];
        out[o++] = i + 1 < n ? al[w >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? al[w & 63] : '=';
    }
    return o;
}

static void check_auth(const mxc_head *h, unsigned small)
{
    static char user[MXC_HEAD_MAX], pass[MXC_HEAD_MAX], joined[2 * MXC_HEAD_MAX], enc[3 * MXC_HEAD_MAX];
    char su[16], sp[16];
    int r = mxc_head_proxy_auth(h, user, sizeof user, pass, sizeof pass);
    int rs = mxc_head_proxy_auth(h, su, small % 16 + 1, sp, small / 16 % 16 + 1);
    if (r != 0) {
        ORACLE(rs != 0, "credentials decoded only into smaller buffers");
        return;
    }
    size_t un = strlen(user), pn = strlen(pass);
    ORACLE(un > 0, "an empty user accepted");
    for (size_t i = 0; i < un + pn; i++) {
        unsigned char c = (unsigned char)(i < un ? user[i] : pass[i - un]);
        ORACLE(c >= 0x20 && c != 0x7f, "a control byte in decoded credentials");
    }
    ORACLE(!memchr(user, ':', un), "a colon in the user");
    memcpy(joined, user, un), joined[un] = ':', memcpy(joined + un + 1, pass, pn);
    size_t en = b64((unsigned char *)joined, un + 1 + pn, enc);
    const mxc_span *v = mxc_head_field(h, "Proxy-Authorization");
    ORACLE(v && v->n > en && ci_ncmp(v->p, "Basic ", 6) == 0 && memcmp(v->p + v->n - en, enc, en) == 0 &&
               strspn(v->p + 5, " ") == v->n - en - 5,
           "credentials do not re-encode to the field");
    ORACLE(rs != 0 || (strcmp(su, user) == 0 && strcmp(sp, pass) == 0), "smaller buffers gave other credentials");
    ORACLE(rs == 0 || un + 1 > small % 16 + 1 || pn + 1 > small / 16 % 16 + 1, "credentials that fit were refused");
}

static void check_ok(const char *b, size_t n, const mxc_head *h, unsigned small)
{
    ORACLE(h->head_len <= n, "head_len beyond the input");
    check_lines(b, h);
    check_fields(b, h);
    check_host(h);
    check_request_line(b, h);
    check_host_field(h);
    check_auth(h, small);
}

static void check_same(const char *b1, const mxc_head *a, const char *b2, const mxc_head *c)
{
    int same = a->head_len == c->head_len && a->connect == c->connect && a->method.n == c->method.n &&
               strcmp(a->host, c->host) == 0 && a->host_ipv6 == c->host_ipv6 && a->port == c->port &&
               a->path.n == c->path.n && a->version_minor == c->version_minor &&
               a->content_length == c->content_length && a->chunked == c->chunked && a->nfields == c->nfields;
    ORACLE(same, "a prefix covering the head parsed differently");
    ORACLE(memcmp(a->path.p, c->path.p, a->path.n) == 0, "a prefix covering the head has another path");
    for (size_t i = 0; i < a->nfields; i++)
        ORACLE(a->fields[i].name.p - b1 == c->fields[i].name.p - b2 && a->fields[i].name.n == c->fields[i].name.n &&
                   a->fields[i].value.p - b1 == c->fields[i].value.p - b2 &&
                   a->fields[i].value.n == c->fields[i].value.n,
               "a prefix covering the head has other fields");
}

/* A prefix of k bytes: INCOMPLETE or the same verdict (the same OK when it
 * covers the head). */
static void check_prefix(const char *b, size_t n, mxc_head_status st, const mxc_head *h, size_t k)
{
    static mxc_head hp;
    if (k >= n)
        return;
    char *copy;
    mxc_head_status sp = parse_copy(b, k, &hp, &copy);
    if (st == MXC_HEAD_OK && k >= h->head_len) {
        ORACLE(sp == MXC_HEAD_OK, "a prefix covering an OK head is not OK");
        check_same(b, h, copy, &hp);
    } else if (st == MXC_HEAD_OK) {
        ORACLE(sp == MXC_HEAD_INCOMPLETE, "a prefix of an OK head is not INCOMPLETE");
    } else {
        ORACLE(sp == MXC_HEAD_INCOMPLETE || (sp == st && hp.status == h->status), "a prefix gave another verdict");
    }
    free(copy);
}

static void check_one(const char *b, size_t n, unsigned small)
{
    static mxc_head h;
    char *copy;
    mxc_head_status st = parse_copy(b, n, &h, &copy);
    if (st == MXC_HEAD_INCOMPLETE)
        ORACLE(n < MXC_HEAD_MAX && !memmem(copy, n, "\r\n\r\n", 4), "INCOMPLETE with a CRLFCRLF or over the limit");
    else if (st == MXC_HEAD_OK)
        check_ok(copy, n, &h, small);
    else
        check_error(st, &h);
    size_t ks[] = {n - 1, n - 2, n / 2, n / 3, h.head_len, h.head_len - 1, small * 67 % (n + 1)};
    for (size_t i = 0; n > 2 && i < sizeof ks / sizeof ks[0]; i++)
        check_prefix(copy, n, st, &h, ks[i]);
    free(copy);
}

/* The chunked framing: one call or a byte at a time, the same verdict and
 * the same length of body; never more than it was given. */
static void check_chunked(const char *p, size_t n)
{
    mxc_chunked whole = {0}, bytes = {0};
    long a = mxc_chunked_feed(&whole, p, n), b = 0;
    for (size_t i = 0; i < n && !bytes.done && !bytes.bad; i++) {
        long k = mxc_chunked_feed(&bytes, p + i, 1);
        b = k < 0 ? -1 : b + k;
    }
    if (a != b || whole.done != bytes.done || whole.bad != bytes.bad || a > (long)n || (a >= 0 && whole.bad)) {
        fprintf(stderr, "oracle violated: chunked framing %ld/%d/%d vs bytewise %ld/%d/%d\n", a, whole.done, whole.bad,
                b, bytes.done, bytes.bad);
        abort();
    }
}

/* The origin-form parse (an intercepted tunnel to api.example.test:443):
 * an error is well-formed; an OK head ends at its first CRLFCRLF, keeps the
 * tunnel's host and port, has an origin-form path inside the head, no
 * CONNECT, and exactly one Host field (naming the tunnel, RFC 9112 §3.2). */
static void check_origin(const char *b, size_t n)
{
    static mxc_head h;
    char *copy = malloc(n ? n : 1);
    memcpy(copy, b, n);
    mxc_head_status st = mxc_head_parse_origin(copy, n, "api.example.test", false, 443, &h);
    if (st == MXC_HEAD_BAD || st == MXC_HEAD_TOO_LARGE)
        check_error(st, &h);
    if (st == MXC_HEAD_OK) {
        ORACLE(h.head_len >= 4 && memmem(copy, h.head_len, "\r\n\r\n", 4) == copy + h.head_len - 4,
               "origin: head_len not at the first CRLFCRLF");
        ORACLE(!strcmp(h.host, "api.example.test") && h.port == 443 && !h.connect, "origin: the tunnel changed");
        ORACLE(h.path.n > 0 && h.path.p[0] == '/' && inside(copy, h.head_len, h.path), "origin: a bad path");
        int hosts = 0;
        for (size_t i = 0; i < h.nfields; i++) {
            ORACLE(inside(copy, h.head_len, h.fields[i].name) && inside(copy, h.head_len, h.fields[i].value),
                   "origin: a span outside the head");
            hosts += span_is(h.fields[i].name, "Host");
        }
        ORACLE(hosts == 1, "origin: not exactly one Host");
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char buf[INPUT_MAX];
    size_t n = build(data, size, buf);
    check_one(buf, n, size ? data[size - 1] : 0);
    check_origin(buf, n);
    check_chunked((const char *)data, size);
    return 0;
}

#ifdef MXC_FUZZ_STANDALONE
/* The egress-proxy parsing threats (THREATS.md), each with the verdict it
 * must get, run through the harness too. */
static const struct {
    const char *req;
    mxc_head_status want;
} attacks[] = {
    {"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", MXC_HEAD_BAD},
    {"POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", MXC_HEAD_BAD},
    {"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", MXC_HEAD_BAD},
    {"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n\r\n", MXC_HEAD_BAD},
    {"POST http://a/ HTTP/1.1\r\nContent-Length : 5\r\n\r\n", MXC_HEAD_BAD},
    {"GET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", MXC_HEAD_BAD},
    {"GET http://a/ HTTP/1.1\nHost: a\r\n\r\n", MXC_HEAD_BAD},
    {"GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT user@evil.com:443 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a:0 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a:65536 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a:-1 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a:0443 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a: 443 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a%2e:443 HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"GET http://allowed/ HTTP/1.1\r\nHost: evil\r\n\r\n", MXC_HEAD_BAD},
    {"GET http://a/ HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", MXC_HEAD_BAD},
    {"GET https://a/ HTTP/1.1\r\n\r\n", MXC_HEAD_BAD},
    {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", MXC_HEAD_BAD},
    {"GET http://a/ HTTP/1.2\r\n\r\n", MXC_HEAD_BAD},
    {"CONNECT a:443 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", MXC_HEAD_BAD},
    /* 0x01 expansions: a 64 KiB field, 10k fields, a 100 KiB request line */
    {"\x01\xff\x20\x10GET http://a/ HTTP/1.1\r\nX: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n\r\n", MXC_HEAD_TOO_LARGE},
    {"\x01\x4f\x18\x05GET http://a/ HTTP/1.1\r\nX: y\r\n\r\n", MXC_HEAD_TOO_LARGE},
    {"\x01\xff\x0d\x10GET http://a/p HTTP/1.1\r\n\r\n", MXC_HEAD_TOO_LARGE},
    {"CONNECT [::1]:443 HTTP/1.1\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\n\x16\x03", MXC_HEAD_OK},
};

int main(int argc, char **argv)
{
    int bad = 0;
    for (size_t i = 0; argc < 2 && i < sizeof attacks / sizeof attacks[0]; i++) {
        static char buf[INPUT_MAX];
        static mxc_head h;
        const char *s = attacks[i].req;
        size_t n = build((const uint8_t *)s, strlen(s), buf);
        mxc_head_status st = mxc_head_parse(buf, n, &h);
        if (st != attacks[i].want) {
            fprintf(stderr, "attack %zu: got %d (%s), want %d\n", i, st, h.reason ? h.reason : "-", attacks[i].want);
            bad = 1;
        }
        check_one(buf, n, (unsigned)i);
    }
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp)
            continue;
        static unsigned char in[INPUT_MAX + 1];
        size_t n = fread(in, 1, sizeof in, fp);
        fclose(fp);
        LLVMFuzzerTestOneInput(in, n);
    }
    return bad;
}
#endif
