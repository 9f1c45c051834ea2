/* test_httphead.c — unit tests for src/proxy/httphead.c: the accepted
 * forms, every prefix of a good head being INCOMPLETE, fail-early refusal,
 * the limits (414/431), the egress-proxy parsing threats of THREATS.md
 * (smuggling, authority tricks, ports, Host mismatch, duplicates) and
 * Proxy-Authorization: Basic decoding. */
#include <stdlib.h>

#include "check.h"
#include "httphead.h"

static mxc_head h; /* large: not on the stack */

static const char *st_name(mxc_head_status st)
{
    return st == MXC_HEAD_OK ? "OK" : st == MXC_HEAD_INCOMPLETE ? "INCOMPLETE" : st == MXC_HEAD_BAD ? "BAD" : "TOO_LARGE";
}

static mxc_head_status parse_n(const char *s, size_t n)
{
    return mxc_head_parse(s, n, &h);
}

static mxc_head_status parse(const char *s)
{
    return parse_n(s, strlen(s));
}

/* The head s[0..n) must give st (and, for errors, status and reason). */
static void expect_n(const char *note, const char *s, size_t n, mxc_head_status st, int status, const char *reason)
{
    mxc_head_status got = parse_n(s, n);
    CHECK_MSG(got == st, "%s: got %s (%d %s), want %s", note, st_name(got), h.status, h.reason ? h.reason : "-",
              st_name(st));
    if (got == st && (st == MXC_HEAD_BAD || st == MXC_HEAD_TOO_LARGE)) {
        CHECK_MSG(h.status == status, "%s: status %d, want %d", note, h.status, status);
        CHECK_MSG(h.reason && reason && strcmp(h.reason, reason) == 0, "%s: reason %s, want %s", note,
                  h.reason ? h.reason : "(null)", reason);
    }
}

static void expect(const char *note, const char *s, mxc_head_status st, int status, const char *reason)
{
    expect_n(note, s, strlen(s), st, status, reason);
}

static void bad(const char *note, const char *s, const char *reason)
{
    expect(note, s, MXC_HEAD_BAD, 400, reason);
}

static void ok(const char *note, const char *s)
{
    expect(note, s, MXC_HEAD_OK, 0, NULL);
    CHECK_MSG(h.head_len == strlen(s), "%s: head_len %zu of %zu", note, h.head_len, strlen(s));
}

#define GET_HOST(target, field) "GET " target " HTTP/1.1\r\n" field "\r\n"
#define CONN(target, fields) "CONNECT " target " HTTP/1.1\r\n" fields "\r\n"

static void test_valid(void)
{
    ok("CONNECT to a name", CONN("example.com:443", "Host: example.com:443\r\n"));
    CHECK_MSG(h.connect && strcmp(h.host, "example.com") == 0 && h.port == 443 && !h.host_ipv6, "CONNECT name: fields");
    CHECK_MSG(h.path.n == 0 && h.version_minor == 1 && h.content_length == -1 && !h.chunked, "CONNECT name: rest");
    CHECK_MSG(h.method.n == 7 && memcmp(h.method.p, "CONNECT", 7) == 0, "CONNECT name: method span");
    ok("CONNECT to an IPv4 literal", CONN("10.0.0.1:8443", ""));
    CHECK_MSG(strcmp(h.host, "10.0.0.1") == 0 && h.port == 8443 && !h.host_ipv6, "CONNECT IPv4: host/port");
    ok("CONNECT to [IPv6]", CONN("[2001:db8::1]:443", ""));
    CHECK_MSG(strcmp(h.host, "2001:db8::1") == 0 && h.port == 443 && h.host_ipv6, "CONNECT IPv6: brackets removed");
    ok("CONNECT to [::ffff:1.2.3.4] (IPv4-mapped text)", CONN("[::ffff:1.2.3.4]:443", ""));
    ok("CONNECT with a Host that differs (not checked)", CONN("a.example:443", "Host: b.example\r\n"));
    ok("CONNECT with Content-Length: 0", CONN("a.example:443", "Content-Length: 0\r\n"));
    ok("CONNECT over HTTP/1.0", "CONNECT a.example:443 HTTP/1.0\r\n\r\n");
    CHECK_MSG(h.version_minor == 0, "HTTP/1.0: version_minor 0");
    ok("numeric host forms stored as written", CONN("0xA9FEA9FE:80", ""));
    CHECK_STR_EQ(h.host, "0xA9FEA9FE");

    ok("GET absolute-form without port", GET_HOST("http://example.com/a/b", "Host: example.com\r\n"));
    CHECK_MSG(!h.connect && strcmp(h.host, "example.com") == 0 && h.port == 80, "GET no port: host, port 80");
    CHECK_MSG(h.path.n == 4 && memcmp(h.path.p, "/a/b", 4) == 0, "GET no port: path");
    ok("GET absolute-form with port and query", GET_HOST("http://example.com:8080/p?q=1&r", "Host: example.com:8080\r\n"));
    CHECK_MSG(h.port == 8080 && h.path.n == 8 && memcmp(h.path.p, "/p?q=1&r", 8) == 0, "GET port+query: port, path");
    ok("GET with empty path gets \"/\"", "GET http://example.com HTTP/1.1\r\n\r\n");
    CHECK_MSG(h.path.n == 1 && h.path.p[0] == '/', "empty path: \"/\"");
    ok("HTTP/1.1 absolute-form without Host is fine", "GET http://example.com/ HTTP/1.1\r\n\r\n");
    ok("scheme is case-insensitive", GET_HOST("HTTP://Example.COM/", "Host: example.com\r\n"));
    ok("Host port 80 equals a missing port", GET_HOST("http://example.com/", "Host: example.com:80\r\n"));
    ok("Host compare is case-insensitive", GET_HOST("http://example.com:81/", "host: EXAMPLE.com:81\r\n"));
    ok("Host [IPv6] matches", GET_HOST("http://[::1]:8080/", "Host: [::1]:8080\r\n"));
    ok("POST with a body length", "POST http://a.example/x HTTP/1.1\r\nContent-Length: 5\r\n\r\n");
    CHECK_INT_EQ(h.content_length, 5);
    ok("18-digit Content-Length", "POST http://a.example/x HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\n");
    CHECK_INT_EQ(h.content_length, 999999999999999999LL);
    ok("Transfer-Encoding: Chunked (case-insensitive)", "POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n");
    CHECK_MSG(h.chunked && h.content_length == -1, "Chunked: chunked set");
    ok("value OWS trimmed, obs-text allowed", "GET http://a.example/ HTTP/1.1\r\nX-A: \t v \xc3\xa9 \t\r\nY:\r\n\r\n");
    CHECK_MSG(h.nfields == 2 && h.fields[0].value.n == 4 && memcmp(h.fields[0].value.p, "v \xc3\xa9", 4) == 0,
              "trimmed value");
    CHECK_MSG(h.fields[1].value.n == 0, "empty value");
    ok("reg-name with '_' and trailing dot", CONN("a_b.example.:443", ""));
    char longhost[600];
    memset(longhost, 'a', 255);
    strcpy(longhost + 255, ":443");
    char req[1024];
    snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\n\r\n", longhost);
    ok("255-byte host", req);
    memset(longhost, 'a', 256);
    strcpy(longhost + 256, ":443");
    snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\n\r\n", longhost);
    bad("256-byte host", req, "bad-host");
}

static void test_field_lookup(void)
{
    parse("GET http://a.example/ HTTP/1.1\r\nX-One: 1\r\nx-one: 2\r\nHost: a.example\r\n\r\n");
    const mxc_span *v = mxc_head_field(&h, "X-ONE");
    CHECK_MSG(v && v->n == 1 && v->p[0] == '1', "mxc_head_field: case-insensitive, the first");
    CHECK_MSG(mxc_head_field(&h, "X-On") == NULL, "mxc_head_field: no prefix match");
    CHECK_MSG(mxc_head_field(&h, "Absent") == NULL, "mxc_head_field: absent gives NULL");
}

static void test_incomplete(void)
{
    static const char *const goods[] = {
        "GET http://example.com:8080/p?q HTTP/1.1\r\nHost: example.com:8080\r\nContent-Length: 12\r\n\r\n",
        "CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\n",
    };
    for (size_t g = 0; g < 2; g++) {
        size_t n = strlen(goods[g]), bad_at = 0;
        for (size_t k = 0; k < n; k++)
            if (parse_n(goods[g], k) != MXC_HEAD_INCOMPLETE && !bad_at)
                bad_at = k + 1;
        CHECK_MSG(bad_at == 0, "every prefix of good head %zu is INCOMPLETE (prefix %zu was %s)", g,
                  bad_at ? bad_at - 1 : 0, st_name(parse_n(goods[g], bad_at ? bad_at - 1 : 0)));
        CHECK_MSG(parse_n(goods[g], n) == MXC_HEAD_OK && h.head_len == n, "good head %zu whole is OK", g);
    }
    expect("empty input", "", MXC_HEAD_INCOMPLETE, 0, NULL);
    expect("a CR awaiting its LF", "GET http://a/ HTTP/1.1\r", MXC_HEAD_INCOMPLETE, 0, NULL);
}

static void test_fail_early(void)
{
    bad("TLS ClientHello bytes at once", "\x16\x03\x01\x02", "bad-method");
    bad("origin-form refused before the line ends", "GET /", "bad-target");
    bad("https refused before the line ends", "GET https:", "bad-target");
    bad("userinfo refused before the line ends", "GET http://user@", "userinfo");
    bad("bad version refused before the line ends", "GET http://a/ HTTP/2", "bad-version");
    expect_n("NUL in a partial line", "GET http://a/\0", 14, MXC_HEAD_BAD, 400, "nul");
    bad("obs-fold in a partial line", "GET http://a/ HTTP/1.1\r\nA: b\r\n ", "obs-fold");
    bad("control byte in a partial value", "GET http://a/ HTTP/1.1\r\nA: b\x01", "bad-value");
    bad("empty line before the request line", "\r\nGET http://a/ HTTP/1.1\r\n\r\n", "bad-request-line");
}

static void test_smuggling(void)
{
    bad("TE: chunked, gzip", "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "bad-te");
    bad("TE: chunked<HTAB> (trailing OWS refused on framing fields)",
        "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n\r\n", "bad-te");
    bad("TE: gzip", "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "bad-te");
    bad("TE: chunked;q=1", "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", "bad-te");
    bad("TE twice", "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "duplicate-field");
    bad("TE in HTTP/1.0", "POST http://a/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "bad-te");
    bad("TE then CL", "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", "cl-and-te");
    bad("CL then TE", "POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "cl-and-te");
    bad("duplicate CL, same value", "POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
        "duplicate-field");
    bad("duplicate CL, different values", "POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n",
        "duplicate-field");
    bad("CL list", "POST http://a/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", "bad-cl");
    bad("Content-Length : 5 (space before colon)", "POST http://a/ HTTP/1.1\r\nContent-Length : 5\r\n\r\n", "bad-field");
    bad("CL +5", "POST http://a/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n", "bad-cl");
    bad("CL -1", "POST http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "bad-cl");
    bad("CL 0x5", "POST http://a/ HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n", "bad-cl");
    bad("CL 05 (leading zero)", "POST http://a/ HTTP/1.1\r\nContent-Length: 05\r\n\r\n", "bad-cl");
    bad("CL 19 digits", "POST http://a/ HTTP/1.1\r\nContent-Length: 1000000000000000000\r\n\r\n", "bad-cl");
    bad("CL empty", "POST http://a/ HTTP/1.1\r\nContent-Length:\r\n\r\n", "bad-cl");
    bad("CL with trailing SP", "POST http://a/ HTTP/1.1\r\nContent-Length: 5 \r\n\r\n", "bad-cl");
    bad("CONNECT with CL > 0", CONN("a:443", "Content-Length: 1\r\n"), "connect-body");
    bad("CONNECT with TE", CONN("a:443", "Transfer-Encoding: chunked\r\n"), "connect-body");
    bad("obs-fold", "GET http://a/ HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", "obs-fold");
    bad("obs-fold with HTAB", "GET http://a/ HTTP/1.1\r\nX-A: b\r\n\tc\r\n\r\n", "obs-fold");
    bad("bare LF ending the request line", "GET http://a/ HTTP/1.1\nHost: a\r\n\r\n", "bare-lf");
    bad("bare LF ending a field", "GET http://a/ HTTP/1.1\r\nHost: a\n\r\n", "bare-lf");
    bad("bare LF as the blank line", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\n", "bare-lf");
    bad("lone CR in a value", "GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n", "lone-cr");
    bad("lone CR in the request line", "GET http://a/\r HTTP/1.1\r\n\r\n", "lone-cr");
    expect_n("NUL in the request line", "GET http://a\0/ HTTP/1.1\r\n\r\n", 27, MXC_HEAD_BAD, 400, "nul");
    expect_n("NUL in a field name", "GET http://a/ HTTP/1.1\r\nX\0: 1\r\n\r\n", 33, MXC_HEAD_BAD, 400, "nul");
    expect_n("NUL in a field value", "GET http://a/ HTTP/1.1\r\nX: \0\r\n\r\n", 32, MXC_HEAD_BAD, 400, "nul");
    bad("DEL in a value", "GET http://a/ HTTP/1.1\r\nX: \x7f\r\n\r\n", "bad-value");
    bad("empty field name", "GET http://a/ HTTP/1.1\r\n: x\r\n\r\n", "bad-field");
    bad("non-token field name", "GET http://a/ HTTP/1.1\r\nX\"y: z\r\n\r\n", "bad-field");
    bad("field line without a colon", "GET http://a/ HTTP/1.1\r\nXy\r\n\r\n", "bad-field");
}

static void test_authority(void)
{
    bad("CONNECT user@evil.com", CONN("user@evil.com:443", ""), "userinfo");
    bad("absolute-form user@evil.com", "GET http://user@evil.com/ HTTP/1.1\r\n\r\n", "userinfo");
    bad("absolute-form allowed@evil.com", "GET http://allowed:x@evil.com/ HTTP/1.1\r\n\r\n", "userinfo");
    bad("port :0", CONN("a.example:0", ""), "bad-port");
    bad("port :65536", CONN("a.example:65536", ""), "bad-port");
    bad("port :-1", CONN("a.example:-1", ""), "bad-port");
    bad("port :0443", CONN("a.example:0443", ""), "bad-port");
    bad("port : 443 (space)", CONN("a.example: 443", ""), "bad-port");
    bad("port : (empty)", CONN("a.example:", ""), "bad-port");
    bad("port 6 digits", CONN("a.example:000443", ""), "bad-port");
    bad("absolute-form port :0", "GET http://a.example:0/ HTTP/1.1\r\n\r\n", "bad-port");
    bad("absolute-form empty port", "GET http://a.example:/ HTTP/1.1\r\n\r\n", "bad-port");
    ok("port 65535", CONN("a.example:65535", ""));
    bad("CONNECT without port", CONN("a.example", ""), "bad-port");
    bad("CONNECT with a path", CONN("a.example:443/x", ""), "bad-target");
    bad("CONNECT absolute-form", CONN("http://a.example:443/", ""), "bad-target");
    bad("%-encoded host", "GET http://a%2eexample/ HTTP/1.1\r\n\r\n", "bad-host");
    bad("empty host", "GET http:/// HTTP/1.1\r\n\r\n", "bad-host");
    bad("CONNECT empty host", CONN(":443", ""), "bad-host");
    bad("IPv6 zone id", CONN("[fe80::1%25eth0]:443", ""), "bad-host");
    bad("IPv6 not an address", CONN("[fe80::g]:443", ""), "bad-host");
    bad("IPv6 unclosed", CONN("[::1:443", ""), "bad-host");
    bad("IPv6 junk after ']'", CONN("[::1]x:443", ""), "bad-host");
    bad("backslash in authority", "GET http://evil.com\\@allowed/ HTTP/1.1\r\n\r\n", "bad-host");
    bad("query straight after authority", "GET http://a.example?x HTTP/1.1\r\n\r\n", "bad-target");
}

static void test_target_and_version(void)
{
    bad("GET http://allowed/ with Host: evil", GET_HOST("http://allowed/", "Host: evil\r\n"), "host-mismatch");
    bad("Host with another port", GET_HOST("http://allowed:8080/", "Host: allowed\r\n"), "host-mismatch");
    bad("Host [::1] vs ::2", GET_HOST("http://[::1]/", "Host: [::2]\r\n"), "host-mismatch");
    bad("empty Host vs an authority", GET_HOST("http://allowed/", "Host:\r\n"), "bad-host");
    bad("two Host fields", GET_HOST("http://a/", "Host: a\r\nHost: a\r\n"), "duplicate-field");
    bad("two Host fields on CONNECT", CONN("a:443", "Host: a\r\nhost: a\r\n"), "duplicate-field");
    bad("two Proxy-Authorization fields",
        GET_HOST("http://a/", "Proxy-Authorization: Basic dXNlcjpwYXNz\r\nproxy-authorization: Basic dXNlcjpwYXNz\r\n"),
        "duplicate-field");
    bad("https:// absolute-form", "GET https://a.example/ HTTP/1.1\r\n\r\n", "bad-target");
    bad("ftp:// absolute-form", "GET ftp://a.example/ HTTP/1.1\r\n\r\n", "bad-target");
    bad("origin-form", "GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", "bad-target");
    bad("asterisk-form", "OPTIONS * HTTP/1.1\r\n\r\n", "bad-target");
    bad("fragment in target", "GET http://a/x#y HTTP/1.1\r\n\r\n", "bad-target");
    bad("non-ASCII in target", "GET http://a/\xc3\xa9 HTTP/1.1\r\n\r\n", "bad-target");
    bad("HTTP/2.0", "GET http://a/ HTTP/2.0\r\n\r\n", "bad-version");
    bad("HTTP/1.2", "GET http://a/ HTTP/1.2\r\n\r\n", "bad-version");
    bad("lowercase http/1.1", "GET http://a/ http/1.1\r\n\r\n", "bad-version");
    bad("HTTP/1.1 with trailing SP", "GET http://a/ HTTP/1.1 \r\n\r\n", "bad-version");
    bad("two spaces after the method", "GET  http://a/ HTTP/1.1\r\n\r\n", "bad-target");
    bad("two spaces before the version", "GET http://a/  HTTP/1.1\r\n\r\n", "bad-version");
    bad("HTAB as separator", "GET\thttp://a/ HTTP/1.1\r\n\r\n", "bad-method");
    bad("no version", "GET http://a/\r\n\r\n", "bad-request-line");
    bad("method alone", "GET\r\n\r\n", "bad-request-line");
}

static char *repeat_head(const char *line, const char *field, size_t times, size_t *len)
{
    size_t ln = strlen(line), fn = strlen(field);
    char *s = malloc(ln + fn * times + 3);
    memcpy(s, line, ln);
    for (size_t i = 0; i < times; i++)
        memcpy(s + ln + i * fn, field, fn);
    memcpy(s + ln + fn * times, "\r\n", 3);
    *len = ln + fn * times + 2;
    return s;
}

static void test_limits(void)
{
    size_t n;
    char *s = malloc(110000);
    if (!s) {
        CHECK_MSG(0, "out of memory");
        return;
    }
    strcpy(s, "GET http://a/ HTTP/1.1\r\nX-Big: ");
    memset(s + strlen(s), 'v', 65536);
    strcpy(s + 31 + 65536, "\r\n\r\n");
    expect("64 KiB header", s, MXC_HEAD_TOO_LARGE, 431, "head-too-large");
    expect_n("64 KiB header, first 16 KiB only", s, MXC_HEAD_MAX, MXC_HEAD_TOO_LARGE, 431, "head-too-large");
    expect_n("64 KiB header, just under the limit", s, MXC_HEAD_MAX - 1, MXC_HEAD_INCOMPLETE, 0, NULL);

    strcpy(s, "GET http://a/");
    memset(s + 13, 'p', 102400);
    strcpy(s + 13 + 102400, " HTTP/1.1\r\n\r\n");
    expect("100 KiB request line", s, MXC_HEAD_TOO_LARGE, 414, "request-line-too-long");
    s[11] = '@';
    expect("100 KiB request line with a bad byte early", s, MXC_HEAD_BAD, 400, "userinfo");
    memset(s, 'A', 9000);
    expect_n("9000 bytes of method, no SP", s, 9000, MXC_HEAD_TOO_LARGE, 414, "request-line-too-long");
    expect_n("8192 bytes of method, no SP", s, 8192, MXC_HEAD_INCOMPLETE, 0, NULL);
    free(s);

    s = repeat_head("GET http://a/ HTTP/1.1\r\n", "X: y\r\n", 10000, &n);
    expect_n("10k headers", s, n, MXC_HEAD_TOO_LARGE, 431, "too-many-fields");
    free(s);
    s = repeat_head("GET http://a/ HTTP/1.1\r\n", "X: y\r\n", MXC_HEAD_MAX_FIELDS, &n);
    expect_n("exactly MXC_HEAD_MAX_FIELDS fields", s, n, MXC_HEAD_OK, 0, NULL);
    CHECK_INT_EQ(h.nfields, MXC_HEAD_MAX_FIELDS);
    free(s);
    s = repeat_head("GET http://a/ HTTP/1.1\r\n", "X: y\r\n", MXC_HEAD_MAX_FIELDS + 1, &n);
    expect_n("MXC_HEAD_MAX_FIELDS + 1 fields", s, n, MXC_HEAD_TOO_LARGE, 431, "too-many-fields");
    free(s);
}

static void test_pipelined(void)
{
    const char *head = "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n";
    char buf[256];
    size_t n = strlen(head);
    memcpy(buf, head, n);
    memcpy(buf + n, "\x16\x03\x01\0\nGET / HTTP/1.1\r\n\r\n", 24);
    CHECK_MSG(parse_n(buf, n + 24) == MXC_HEAD_OK && h.head_len == n, "pipelined bytes after the head are not parsed");
    CHECK_MSG(h.nfields == 1, "pipelined: one field");
}

static int auth(const char *value, char *user, size_t usz, char *pass, size_t psz)
{
    char req[512];
    snprintf(req, sizeof req, "CONNECT a:443 HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n", value);
    if (parse(req) != MXC_HEAD_OK)
        return -2;
    return mxc_head_proxy_auth(&h, user, usz, pass, psz);
}

static void test_proxy_auth(void)
{
    char u[64], p[64];
    CHECK_MSG(auth("Basic dXNlcjpwYXNz", u, sizeof u, p, sizeof p) == 0 && !strcmp(u, "user") && !strcmp(p, "pass"),
              "auth: good");
    CHECK_MSG(auth("bAsIc dXNlcjpwYXNz", u, sizeof u, p, sizeof p) == 0 && !strcmp(u, "user"), "auth: scheme bAsIc");
    CHECK_MSG(auth("Basic   dXNlcjpwYXNz", u, sizeof u, p, sizeof p) == 0, "auth: several SP after the scheme");
    CHECK_MSG(auth("Basic dXNlcjpwYTpzcw==", u, sizeof u, p, sizeof p) == 0 && !strcmp(p, "pa:ss"),
              "auth: split at the first colon");
    CHECK_MSG(auth("Basic dXNlcjo=", u, sizeof u, p, sizeof p) == 0 && !strcmp(u, "user") && !p[0],
              "auth: empty password allowed");
    CHECK_MSG(auth("Basic YWxpY2U6czNjcsOpdA==", u, sizeof u, p, sizeof p) == 0 && !strcmp(p, "s3cr\xc3\xa9t"),
              "auth: UTF-8 password");
    CHECK_MSG(auth("Bearer dXNlcjpwYXNz", u, sizeof u, p, sizeof p) == -1, "auth: Bearer refused");
    CHECK_MSG(auth("Basic\tdXNlcjpwYXNz", u, sizeof u, p, sizeof p) == -1, "auth: HTAB after the scheme refused");
    CHECK_MSG(auth("BasicdXNlcjpwYXNz", u, sizeof u, p, sizeof p) == -1, "auth: no SP after the scheme");
    CHECK_MSG(auth("Basic", u, sizeof u, p, sizeof p) == -1, "auth: scheme alone");
    CHECK_MSG(auth("Basic dXNl*jpwYXNz", u, sizeof u, p, sizeof p) == -1, "auth: bad base64 character");
    CHECK_MSG(auth("Basic dXNl cjpwYXNz", u, sizeof u, p, sizeof p) == -1, "auth: SP inside base64");
    CHECK_MSG(auth("Basic dXNlcjpwYXM", u, sizeof u, p, sizeof p) == -1, "auth: length not a multiple of 4");
    CHECK_MSG(auth("Basic dXNlcjpwYQFzcw=", u, sizeof u, p, sizeof p) == -1, "auth: missing padding");
    CHECK_MSG(auth("Basic dXNl=jpwYXNz", u, sizeof u, p, sizeof p) == -1, "auth: '=' inside");
    CHECK_MSG(auth("Basic dXNlcjo=dXNl", u, sizeof u, p, sizeof p) == -1, "auth: padding before the end");
    CHECK_MSG(auth("Basic YWI6Y2R=", u, sizeof u, p, sizeof p) == -1, "auth: non-zero pad bits");
    CHECK_MSG(auth("Basic dXNlcg==", u, sizeof u, p, sizeof p) == -1 && !u[0] && !p[0], "auth: no colon (cleared)");
    CHECK_MSG(auth("Basic OnBhc3M=", u, sizeof u, p, sizeof p) == -1, "auth: empty user");
    CHECK_MSG(auth("Basic dXNlcjpwYQFzcw==", u, sizeof u, p, sizeof p) == -1, "auth: control byte in password");
    CHECK_MSG(auth("Basic dTpwfw==", u, sizeof u, p, sizeof p) == -1, "auth: DEL in password");
    CHECK_MSG(auth("Basic dXNlcjpwYXNz", u, 4, p, sizeof p) == -1, "auth: user too long for its buffer");
    CHECK_MSG(auth("Basic dXNlcjpwYXNz", u, 5, p, 5) == 0, "auth: exactly fits (with NUL)");
    CHECK_MSG(auth("Basic dXNlcjpwYXNz", u, sizeof u, p, 4) == -1, "auth: password too long for its buffer");
    CHECK_MSG(auth("Basic dXNlcjpwYXNz", u, 0, p, 0) == -1, "auth: zero-size buffers");
    parse("CONNECT a:443 HTTP/1.1\r\n\r\n");
    CHECK_MSG(mxc_head_proxy_auth(&h, u, sizeof u, p, sizeof p) == -1, "auth: field absent");
}

/* Feeds body in pieces of `step` bytes; returns the bytes taken (-1: error). */
static long chunked_all(const char *body, size_t len, size_t step, bool *done)
{
    mxc_chunked c = {0};
    size_t taken = 0;
    for (size_t i = 0; i < len && !c.done; i += step) {
        size_t k = len - i < step ? len - i : step;
        long n = mxc_chunked_feed(&c, body + i, k);
        if (n < 0)
            return -1;
        taken += (size_t)n;
    }
    *done = c.done;
    return (long)taken;
}

static void test_chunked(void)
{
    static const char GOOD[] = "5\r\nhello\r\n1a;name=val\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\n";
    static const char PIPELINED[] = "GET http://other.test/ HTTP/1.1\r\n\r\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%s%s", GOOD, PIPELINED);
    for (size_t step = 1; step <= sizeof buf; step++) {
        bool done = false;
        long n = chunked_all(buf, strlen(buf), step, &done);
        CHECK_MSG(done && n == (long)strlen(GOOD), "step %zu: %ld of %zu", step, n, strlen(GOOD));
    }
    bool done;
    CHECK_MSG(chunked_all("0\r\n\r\n", 5, 5, &done) == 5 && done, "the empty body");
    CHECK_MSG(chunked_all("3\r\nab", 6, 6, &done) == 6 && !done, "a body that has not ended: all taken, not done");
    static const char *const BAD[] = {
        "5\nhello\r\n0\r\n\r\n",          /* bare LF after the size */
        "5\r\nhello\n0\r\n\r\n",          /* bare LF after the data */
        "5\r\nhelloX\r\n0\r\n\r\n",      /* more data than the size says */
        "g\r\n",                          /* not hex */
        "\r\n",                           /* no size */
        " 5\r\nhello\r\n",               /* whitespace before the size */
        "1234567890abcdef\r\n",           /* 16 hex digits */
        "5;a\x01b\r\nhello\r\n",          /* a control byte in an extension */
        "0\r\n folded\r\n\r\n",           /* obs-fold in the trailers */
        "0\r\nX-T: 1\n\r\n",              /* bare LF in the trailers */
        "0\r\n\r\r",                      /* a lone CR at the end */
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        CHECK_MSG(chunked_all(BAD[i], strlen(BAD[i]), 1, &done) < 0, "bad framing %zu accepted", i);
    char big[MXC_HEAD_MAX + 16] = "5;";
    memset(big + 2, 'x', sizeof big - 3);
    CHECK_MSG(chunked_all(big, strlen(big), 4096, &done) < 0, "an endless extension is cut");
}

/* origin-form inside a terminated tunnel to api.example.test:443 */
static mxc_head_status origin(const char *s, const char *host, unsigned port)
{
    return mxc_head_parse_origin(s, strlen(s), host, false, port, &h);
}

static void test_origin(void)
{
    CHECK_INT_EQ(origin("GET /repos/x?y=1 HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: t\r\n\r\n",
                        "api.example.test", 443), MXC_HEAD_OK);
    CHECK(h.path.n == 12 && !memcmp(h.path.p, "/repos/x?y=1", 12));
    CHECK_STR_EQ(h.host, "api.example.test");
    CHECK_INT_EQ(h.port, 443);
    CHECK_INT_EQ(origin("GET / HTTP/1.1\r\nHost: API.example.test:443\r\n\r\n", "api.example.test", 443), MXC_HEAD_OK);
    CHECK_INT_EQ(origin("GET / HTTP/1.1\r\nHost: api.example.test:8443\r\n\r\n", "api.example.test", 8443),
                 MXC_HEAD_OK);
    CHECK_INT_EQ(origin("POST /a HTTP/1.1\r\nHost: api.example.test\r\nContent-Length: 3\r\n\r\nabc",
                        "api.example.test", 443), MXC_HEAD_OK);
    CHECK_INT_EQ(h.content_length, 3);
    static const struct {
        const char *head, *reason;
    } BAD[] = {
        {"GET / HTTP/1.1\r\n\r\n", "no-host"},
        {"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n", "host-mismatch"},
        {"GET / HTTP/1.1\r\nHost: api.example.test\r\nHost: api.example.test\r\n\r\n", "duplicate-field"},
        {"GET / HTTP/1.1\r\nHost: api.example.test:8443\r\n\r\n", "host-mismatch"},
        {"GET http://api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\n\r\n", "bad-target"},
        {"CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test\r\n\r\n", "bad-target"},
        {"OPTIONS * HTTP/1.1\r\nHost: api.example.test\r\n\r\n", "bad-target"},
        {"GET / HTTP/1.1\r\nHost: api.example.test\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
         "cl-and-te"},
        {"GET / HTTP/1.1\r\nHost: api.example.test\r\n x: folded\r\n\r\n", "obs-fold"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        CHECK_MSG(origin(BAD[i].head, "api.example.test", 443) == MXC_HEAD_BAD, "%s", BAD[i].head);
        CHECK_MSG(h.reason && !strcmp(h.reason, BAD[i].reason), "%s: %s", BAD[i].head, h.reason ? h.reason : "-");
    }
    CHECK_INT_EQ(origin("GET / HTTP/1.1\r\nHost: api.exa", "api.example.test", 443), MXC_HEAD_INCOMPLETE);
    /* IPv6 tunnel */
    static const char V6[] = "GET / HTTP/1.1\r\nHost: [2001:db8::1]\r\n\r\n";
    CHECK_INT_EQ(mxc_head_parse_origin(V6, sizeof V6 - 1, "2001:db8::1", true, 443, &h), MXC_HEAD_OK);
}

int main(void)
{
    test_origin();
    test_valid();
    test_field_lookup();
    test_incomplete();
    test_fail_early();
    test_smuggling();
    test_authority();
    test_target_and_version();
    test_limits();
    test_pipelined();
    test_proxy_auth();
    test_chunked();
    return CHECK_DONE();
}
