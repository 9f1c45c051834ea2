/* httphead.c — owns: the strict HTTP/1.x request-head parser of mxc-proxy
 * (see httphead.h for the contract).  Reference: RFC 9112 §2–§6 (message
 * format, request line, field lines, framing), RFC 9110 §5.5/§7.2/§9.3.6
 * (field values, Host, CONNECT), RFC 4648 §4 (base64), and the smuggling
 * notes of THREATS.md ("Egress proxy").
 *
 * Shape: the head is read line by line, left to right, and every verdict is
 * an event at a byte position — a bad byte, the end of a line, the 8193rd
 * byte of the request line (414), the first byte of a 101st field line or
 * the MXC_HEAD_MAX'th byte (431).  A line not yet ended is checked as far as
 * it goes with checks that hold for every prefix of a good line, so garbage
 * is refused as soon as it is seen and a prefix of a good head is always
 * INCOMPLETE.  The first event wins; nothing is kept between calls.
 *
 * Decisions beyond the header: an empty line before the request line is
 * refused; Content-Length and Transfer-Encoding must not end in SP/HTAB
 * (`chunked\t` is refused: an upstream that does not trim would disagree),
 * Content-Length has no leading zero; Transfer-Encoding in an HTTP/1.0
 * request is refused (RFC 9112 §6.1); an absolute-form authority must be
 * followed by '/' or nothing ("http://h?q" refused); a target is visible
 * ASCII only; field values may hold obs-text (0x80–0xff) but no control byte
 * other than HTAB; base64 must be canonical (zero pad bits). */
#include "httphead.h"

#include <arpa/inet.h>
#include <string.h>

#define REQLINE_MAX 8192

typedef struct {
    mxc_head *h;
    bool host, auth; /* a Host / Proxy-Authorization field was seen */
    bool origin;     /* mxc_head_parse_origin: origin-form inside a terminated tunnel */
} pstate;

/* ---- byte classes -------------------------------------------------------- */

static bool is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_host_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '.' || c == '-' || c == '_';
}

static bool is_auth_char(unsigned char c) /* anything a good authority can hold */
{
    return is_host_char(c) || c == '[' || c == ']' || c == ':';
}

static bool is_ctl(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? c | 0x20 : c;
}

/* ASCII case-insensitive equality of n bytes. */
static bool ci_eq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return false;
    return true;
}

static bool span_is(mxc_span s, const char *name)
{
    size_t n = strlen(name);
    return s.n == n && ci_eq(s.p, name, n);
}

/* ---- authority: host[:port] ---------------------------------------------- */

static const char *parse_port(const char *s, size_t n, unsigned *port)
{
    if (n == 0 || n > 5 || s[0] == '0')
        return "bad-port";
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return "bad-port";
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 65535)
        return "bad-port";
    *port = v;
    return NULL;
}

/* The bracketed IPv6 literal at s (s[0] == '['); *used = bytes incl. ']'. */
static const char *parse_ipv6(const char *s, size_t n, char *host, size_t *used)
{
    const char *close = memchr(s, ']', n);
    if (!close)
        return "bad-host";
    size_t hn = (size_t)(close - s) - 1;
    char tmp[INET6_ADDRSTRLEN];
    struct in6_addr a;
    if (hn == 0 || hn >= sizeof tmp || memchr(s + 1, '%', hn))
        return "bad-host";
    memcpy(tmp, s + 1, hn);
    tmp[hn] = '\0';
    if (inet_pton(AF_INET6, tmp, &a) != 1)
        return "bad-host";
    memcpy(host, tmp, hn + 1);
    *used = hn + 2;
    return NULL;
}

/* host[:port] into host (MXC_HOST_MAX + 1 bytes), *v6 and *port (80 when
 * absent and allowed).  NULL or the reason. */
static const char *parse_authority(const char *s, size_t n, bool need_port, unsigned dflt, char *host, bool *v6,
                                   unsigned *port)
{
    size_t hn = 0;
    if (memchr(s, '@', n))
        return "userinfo";
    *v6 = n > 0 && s[0] == '[';
    if (*v6) {
        const char *why = parse_ipv6(s, n, host, &hn);
        if (why)
            return why;
    } else {
        while (hn < n && s[hn] != ':')
            if (!is_host_char((unsigned char)s[hn++]))
                return "bad-host";
        if (hn == 0 || hn > MXC_HOST_MAX)
            return "bad-host";
        memcpy(host, s, hn);
        host[hn] = '\0';
    }
    if (hn == n) {
        *port = dflt;
        return need_port ? "bad-port" : NULL;
    }
    if (s[hn] != ':')
        return "bad-host";
    return parse_port(s + hn + 1, n - hn - 1, port);
}

/* ---- request line --------------------------------------------------------- */

static const char *parse_target(const char *s, size_t n, mxc_head *h, bool origin)
{
    if (origin) { /* host and port are the tunnel's, set before the parse */
        h->path = (mxc_span){s, n};
        return NULL;
    }
    if (h->connect) {
        h->path = (mxc_span){s + n, 0};
        return parse_authority(s, n, true, 80, h->host, &h->host_ipv6, &h->port);
    }
    if (n < 7 || !ci_eq(s, "http://", 7))
        return "bad-target";
    s += 7, n -= 7;
    size_t a = 0;
    while (a < n && s[a] != '/' && s[a] != '?')
        a++;
    if (a < n && s[a] == '?')
        return "bad-target";
    h->path = a < n ? (mxc_span){s + a, n - a} : (mxc_span){"/", 1};
    return parse_authority(s, a, false, 80, h->host, &h->host_ipv6, &h->port);
}

/* The target's bytes as far as they go (SP seen or not): visible ASCII, no
 * fragment, and an authority's bytes where one is. */
static const char *check_target_chars(const char *s, size_t n, bool connect, bool origin)
{
    if (origin && (connect || (n && s[0] != '/')))
        return "bad-target";
    if (!origin && !connect && !ci_eq(s, "http://", n < 7 ? n : 7))
        return "bad-target";
    for (size_t i = 0; i < n; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '#')
            return "bad-target";
    if (origin)
        return NULL;
    for (size_t i = connect ? 0 : 7; i < n && (connect || s[i] != '/'); i++)
        if (!is_auth_char((unsigned char)s[i]))
            return s[i] == '@' ? "userinfo" : s[i] == '/' || s[i] == '?' ? "bad-target" : "bad-host";
    return NULL;
}

static const char *parse_version(const char *s, size_t n, bool complete, mxc_head *h)
{
    if (memcmp(s, "HTTP/1.", n < 7 ? n : 7) != 0)
        return "bad-version";
    if (n > 8 || (n == 8 && s[7] != '0' && s[7] != '1'))
        return "bad-version";
    if (n < 8)
        return complete ? "bad-version" : NULL;
    h->version_minor = s[7] - '0';
    return NULL;
}

/* `method SP target SP HTTP/1.x`, complete or as far as it goes. */
static const char *parse_request_line(const char *s, size_t n, bool complete, mxc_head *h, bool origin)
{
    size_t i = 0;
    if (memchr(s, '\0', n))
        return "nul";
    while (i < n && is_tchar((unsigned char)s[i]))
        i++;
    if (i == n)
        return complete ? "bad-request-line" : NULL;
    if (i == 0 || s[i] != ' ')
        return "bad-method";
    h->method = (mxc_span){s, i};
    h->connect = i == 7 && memcmp(s, "CONNECT", 7) == 0;
    size_t t = ++i;
    while (i < n && s[i] != ' ')
        i++;
    const char *why = check_target_chars(s + t, i - t, h->connect, origin);
    if (why)
        return why;
    if (i == n)
        return complete ? "bad-request-line" : NULL;
    if (i == t)
        return "bad-target";
    why = parse_target(s + t, i - t, h, origin);
    return why ? why : parse_version(s + i + 1, n - i - 1, complete, h);
}

/* ---- field lines ---------------------------------------------------------- */

static const char *field_cl(pstate *ps, mxc_span v, bool trailing_ows)
{
    mxc_head *h = ps->h;
    if (h->content_length >= 0)
        return "duplicate-field";
    if (trailing_ows || v.n == 0 || v.n > 18 || (v.p[0] == '0' && v.n > 1))
        return "bad-cl";
    long long cl = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return "bad-cl";
        cl = cl * 10 + (v.p[i] - '0');
    }
    if (h->chunked)
        return "cl-and-te";
    if (h->connect && cl > 0)
        return "connect-body";
    h->content_length = cl;
    return NULL;
}

static const char *field_te(pstate *ps, mxc_span v, bool trailing_ows)
{
    mxc_head *h = ps->h;
    if (h->chunked)
        return "duplicate-field";
    if (trailing_ows || !span_is(v, "chunked") || h->version_minor == 0)
        return "bad-te";
    if (h->content_length >= 0)
        return "cl-and-te";
    if (h->connect)
        return "connect-body";
    h->chunked = true;
    return NULL;
}

static const char *field_host(pstate *ps, mxc_span v)
{
    mxc_head *h = ps->h;
    if (ps->host)
        return "duplicate-field";
    ps->host = true;
    if (h->connect) /* the proxy goes by the target */
        return NULL;
    char host[MXC_HOST_MAX + 1];
    bool v6;
    unsigned port;
    const char *why = parse_authority(v.p, v.n, false, ps->origin ? 443 : 80, host, &v6, &port);
    if (why)
        return why;
    size_t n = strlen(host);
    if (v6 != h->host_ipv6 || port != h->port || n != strlen(h->host) || !ci_eq(host, h->host, n))
        return "host-mismatch";
    return NULL;
}

/* The meaning of the field just stored at h->fields[h->nfields - 1]. */
static const char *field_semantics(pstate *ps, bool trailing_ows)
{
    mxc_head *h = ps->h;
    mxc_span name = h->fields[h->nfields - 1].name, v = h->fields[h->nfields - 1].value;
    if (span_is(name, "Host"))
        return field_host(ps, v);
    if (span_is(name, "Content-Length"))
        return field_cl(ps, v, trailing_ows);
    if (span_is(name, "Transfer-Encoding"))
        return field_te(ps, v, trailing_ows);
    if (span_is(name, "Proxy-Authorization")) {
        if (ps->auth)
            return "duplicate-field";
        ps->auth = true;
    }
    return NULL;
}

/* `name: value`, complete or as far as it goes. */
static const char *parse_field_line(const char *s, size_t n, bool complete, pstate *ps)
{
    size_t i = 0, e = n;
    if (memchr(s, '\0', n))
        return "nul";
    if (n && (s[0] == ' ' || s[0] == '\t'))
        return "obs-fold";
    while (i < n && is_tchar((unsigned char)s[i]))
        i++;
    if (i == n)
        return complete ? "bad-field" : NULL;
    if (i == 0 || s[i] != ':')
        return "bad-field";
    for (size_t j = i + 1; j < n; j++)
        if (is_ctl((unsigned char)s[j]) && s[j] != '\t')
            return "bad-value";
    if (!complete)
        return NULL;
    size_t b = i + 1;
    while (b < e && (s[b] == ' ' || s[b] == '\t'))
        b++;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
        e--;
    mxc_head *h = ps->h;
    h->fields[h->nfields].name = (mxc_span){s, i};
    h->fields[h->nfields].value = (mxc_span){s + b, e - b};
    h->nfields++;
    return field_semantics(ps, e < n);
}

/* ---- the head ------------------------------------------------------------- */

static mxc_head_status fail(mxc_head *h, mxc_head_status st, int status, const char *reason)
{
    h->status = status;
    h->reason = reason;
    return st;
}

/* Checks the line at s[0..n), complete or not; line 0 is the request line. */
static const char *check_line(const char *s, size_t n, bool complete, bool first, pstate *ps)
{
    return first ? parse_request_line(s, n, complete, ps->h, ps->origin) : parse_field_line(s, n, complete, ps);
}

static mxc_head_status parse_head(const char *buf, size_t len, mxc_head *h, pstate ps)
{
    size_t lim = len < MXC_HEAD_MAX ? len : MXC_HEAD_MAX, pos = 0;
    for (;;) {
        const char *s = buf + pos;
        size_t avail = lim - pos, k = 0;
        bool first = pos == 0;
        while (k < avail && s[k] != '\r' && s[k] != '\n')
            k++;
        if (first && k > REQLINE_MAX) {
            const char *why = check_line(s, REQLINE_MAX, false, true, &ps);
            return why ? fail(h, MXC_HEAD_BAD, 400, why) : fail(h, MXC_HEAD_TOO_LARGE, 414, "request-line-too-long");
        }
        if (!first && k > 0 && h->nfields == MXC_HEAD_MAX_FIELDS)
            return fail(h, MXC_HEAD_TOO_LARGE, 431, "too-many-fields");
        if (k == avail || (s[k] == '\r' && k + 1 == avail)) { /* the line goes on */
            const char *why = check_line(s, k, false, first, &ps);
            if (why)
                return fail(h, MXC_HEAD_BAD, 400, why);
            return len >= MXC_HEAD_MAX ? fail(h, MXC_HEAD_TOO_LARGE, 431, "head-too-large") : MXC_HEAD_INCOMPLETE;
        }
        if (s[k] == '\n')
            return fail(h, MXC_HEAD_BAD, 400, "bare-lf");
        if (s[k + 1] != '\n')
            return fail(h, MXC_HEAD_BAD, 400, "lone-cr");
        if (k == 0) {
            if (first)
                return fail(h, MXC_HEAD_BAD, 400, "bad-request-line");
            if (ps.origin && !ps.host)
                return fail(h, MXC_HEAD_BAD, 400, "no-host");
            h->head_len = pos + 2;
            return MXC_HEAD_OK;
        }
        const char *why = check_line(s, k, true, first, &ps);
        if (why)
            return fail(h, MXC_HEAD_BAD, 400, why);
        pos += k + 2;
    }
}

bool mxc_head_hop_by_hop(mxc_span name)
{
    static const char *const DROP[] = {"proxy-authorization", "proxy-connection", "connection", "keep-alive", "host",
                                       "te", "upgrade", "proxy-authenticate"};
    for (size_t k = 0; k < sizeof DROP / sizeof DROP[0]; k++)
        if (span_is(name, DROP[k]))
            return true;
    return false;
}

mxc_head_status mxc_head_parse(const char *buf, size_t len, mxc_head *h)
{
    memset(h, 0, sizeof *h);
    h->content_length = -1;
    return parse_head(buf, len, h, (pstate){.h = h});
}

mxc_head_status mxc_head_parse_origin(const char *buf, size_t len, const char *host, bool v6, unsigned port,
                                      mxc_head *h)
{
    memset(h, 0, sizeof *h);
    h->content_length = -1;
    if (strlen(host) > MXC_HOST_MAX)
        return fail(h, MXC_HEAD_BAD, 400, "bad-host");
    memcpy(h->host, host, strlen(host) + 1);
    h->host_ipv6 = v6;
    h->port = port;
    return parse_head(buf, len, h, (pstate){.h = h, .origin = true});
}

const mxc_span *mxc_head_field(const mxc_head *h, const char *name)
{
    for (size_t i = 0; i < h->nfields; i++)
        if (span_is(h->fields[i].name, name))
            return &h->fields[i].value;
    return NULL;
}

/* ---- Proxy-Authorization: Basic ------------------------------------------- */

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

typedef struct {
    char *user, *pass;
    size_t usz, psz, un, pn;
    bool colon;
} creds;

/* One decoded byte: the first ':' splits; a control byte or overflow fails. */
static bool put_byte(creds *c, unsigned char b)
{
    if (b < 0x20 || b == 0x7f)
        return false;
    if (!c->colon && b == ':') {
        c->colon = true;
        return true;
    }
    char *dst = c->colon ? c->pass : c->user;
    size_t *n = c->colon ? &c->pn : &c->un, sz = c->colon ? c->psz : c->usz;
    if (*n + 1 >= sz)
        return false;
    dst[(*n)++] = (char)b;
    return true;
}

/* One group of four base64 characters; last: '=' padding allowed. */
static bool put_quad(creds *c, const char *q, bool last)
{
    int v[4], pad = 0;
    for (int i = 0; i < 4; i++) {
        v[i] = b64_val((unsigned char)q[i]);
        if (v[i] < 0 && last && q[i] == '=' && i >= 2 && (i == 3 || q[3] == '='))
            v[i] = 0, pad++;
        else if (v[i] < 0)
            return false;
    }
    unsigned long w = (unsigned long)v[0] << 18 | (unsigned long)v[1] << 12 | (unsigned long)v[2] << 6 | (unsigned long)v[3];
    if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff))) /* not canonical */
        return false;
    for (int i = 0; i < 3 - pad; i++)
        if (!put_byte(c, (unsigned char)(w >> (16 - 8 * i))))
            return false;
    return true;
}

int mxc_head_proxy_auth(const mxc_head *h, char *user, size_t usz, char *pass, size_t psz)
{
    const mxc_span *f = mxc_head_field(h, "Proxy-Authorization");
    if (usz == 0 || psz == 0)
        return -1;
    user[0] = pass[0] = '\0';
    if (!f || f->n < 6 || !ci_eq(f->p, "Basic ", 6))
        return -1;
    size_t i = 6;
    while (i < f->n && f->p[i] == ' ')
        i++;
    const char *b = f->p + i;
    size_t n = f->n - i;
    creds c = {.user = user, .pass = pass, .usz = usz, .psz = psz};
    bool ok = n > 0 && n % 4 == 0;
    for (size_t q = 0; ok && q < n; q += 4)
        ok = put_quad(&c, b + q, q + 4 == n);
    if (!ok || !c.colon || c.un == 0) {
        memset(user, 0, usz); /* no half-decoded secret left behind */
        memset(pass, 0, psz);
        return -1;
    }
    user[c.un] = pass[c.pn] = '\0';
    return 0;
}

/* ---- a chunked body's framing ------------------------------------------- */

enum { CK_SIZE, CK_EXT, CK_SIZE_LF, CK_DATA, CK_DATA_CR, CK_DATA_LF, CK_TRAILER_START, CK_TRAILER, CK_TRAILER_LF,
       CK_END_LF };

static int hexval(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

static bool ck_text(char ch)
{
    return ch == ' ' || ch == '\t' || (ch > 0x20 && ch < 0x7f);
}

long mxc_chunked_feed(mxc_chunked *c, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && !c->done && !c->bad) {
        char ch = p[i];
        if (c->state == CK_DATA) { /* the data itself: taken whole */
            size_t take = n - i < c->left ? n - i : (size_t)c->left;
            i += take;
            c->left -= take;
            if (!c->left)
                c->state = CK_DATA_CR;
            continue;
        }
        i++;
        if (++c->meta > MXC_HEAD_MAX) {
            c->bad = true;
            break;
        }
        switch (c->state) {
        case CK_SIZE:
            if (hexval(ch) >= 0 && c->digits < 15) {
                c->left = c->left * 16 + (unsigned)hexval(ch);
                c->digits++;
            } else if (c->digits && ch == ';')
                c->state = CK_EXT;
            else if (c->digits && ch == '\r')
                c->state = CK_SIZE_LF;
            else
                c->bad = true;
            break;
        case CK_EXT:
            if (ch == '\r')
                c->state = CK_SIZE_LF;
            else if (!ck_text(ch))
                c->bad = true;
            break;
        case CK_SIZE_LF:
            if (ch != '\n')
                c->bad = true;
            else if (c->left) {
                c->state = CK_DATA;
                c->meta = 0;
            } else
                c->state = CK_TRAILER_START;
            c->digits = 0;
            break;
        case CK_DATA_CR:
            c->bad = ch != '\r';
            c->state = CK_DATA_LF;
            break;
        case CK_DATA_LF:
            c->bad = ch != '\n';
            c->state = CK_SIZE;
            break;
        case CK_TRAILER_START:
            if (ch == '\r')
                c->state = CK_END_LF;
            else if (ck_text(ch) && ch != ' ' && ch != '\t') /* no obs-fold */
                c->state = CK_TRAILER;
            else
                c->bad = true;
            break;
        case CK_TRAILER:
            if (ch == '\r')
                c->state = CK_TRAILER_LF;
            else if (!ck_text(ch))
                c->bad = true;
            break;
        case CK_TRAILER_LF:
            c->bad = ch != '\n';
            c->state = CK_TRAILER_START;
            break;
        case CK_END_LF:
            c->bad = ch != '\n';
            c->done = !c->bad;
            break;
        }
    }
    return c->bad ? -1 : (long)i;
}
