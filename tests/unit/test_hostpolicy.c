/* test_hostpolicy.c — unit tests for src/proxy/hostpolicy.c: the THREATS.md
 * "Egress proxy" and "Network" cases (name matching, every IP literal form,
 * ports, DNS rebinding), wildcards, blocked over allowed, bad entries. */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "check.h"
#include "hostpolicy.h"

#define L(...) ((const char *[]){__VA_ARGS__, NULL})

static const char *R;
static char CANON[256];
static struct sockaddr_storage LIT;
static mxc_error E;
#define ERR E.message

static size_t count(const char **v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

static mxc_hostpolicy *pol(const char **allowed, const char **blocked)
{
    ERR[0] = '\0';
    mxc_hostpolicy *hp = mxc_hostpolicy_new(allowed, count(allowed), blocked, count(blocked), &E);
    CHECK_MSG(hp != NULL, "policy refused: %s", ERR);
    return hp;
}

static mxc_hp_verdict cn(const mxc_hostpolicy *hp, const char *host, unsigned port)
{
    R = NULL;
    CANON[0] = '\0';
    memset(&LIT, 0, sizeof LIT);
    return mxc_hostpolicy_check_name(hp, host, port, CANON, sizeof CANON, &LIT, &R);
}

#define DENY(hp, host, port, why)                                                                                 \
    do {                                                                                                          \
        mxc_hp_verdict v_ = cn(hp, host, port);                                                                   \
        CHECK_MSG(v_ == MXC_HP_DENY && R && strcmp(R, why) == 0, "%s port %u: verdict %d reason %s, want deny %s", \
                  host, (unsigned)(port), v_, R ? R : "-", why);                                                  \
    } while (0)

#define ALLOW_NAME(hp, host, port, canon)                                                                       \
    do {                                                                                                        \
        mxc_hp_verdict v_ = cn(hp, host, port);                                                                 \
        CHECK_MSG(v_ == MXC_HP_ALLOW_NAME && strcmp(CANON, canon) == 0, "%s port %u: verdict %d (%s) canon %s", \
                  host, (unsigned)(port), v_, R ? R : "-", CANON);                                              \
    } while (0)

#define ALLOW_ADDR(hp, host, port)                                                                           \
    do {                                                                                                     \
        mxc_hp_verdict v_ = cn(hp, host, port);                                                              \
        CHECK_MSG(v_ == MXC_HP_ALLOW_ADDR, "%s port %u: verdict %d (%s), want ALLOW_ADDR", host, (unsigned)(port), \
                  v_, R ? R : "-");                                                                          \
    } while (0)

/* The literal check_name built, as text and port. */
static bool lit_is(const char *text, unsigned port)
{
    char buf[INET6_ADDRSTRLEN];
    if (LIT.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&LIT;
        inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
        return strcmp(buf, text) == 0 && ntohs(in->sin_port) == port;
    }
    if (LIT.ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&LIT;
        inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
        return strcmp(buf, text) == 0 && ntohs(in6->sin6_port) == port;
    }
    return false;
}

/* check_addr on a text address with a port (0: none). */
static bool ca(const mxc_hostpolicy *hp, const char *text, unsigned port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (strchr(text, ':')) {
        in6->sin6_family = AF_INET6, in6->sin6_port = htons((uint16_t)port);
        CHECK_MSG(inet_pton(AF_INET6, text, &in6->sin6_addr) == 1, "test address %s", text);
    } else {
        in->sin_family = AF_INET, in->sin_port = htons((uint16_t)port);
        CHECK_MSG(inet_pton(AF_INET, text, &in->sin_addr) == 1, "test address %s", text);
    }
    R = NULL;
    return mxc_hostpolicy_check_addr(hp, (struct sockaddr *)&ss, &R);
}

#define ADDR_OK(hp, text, port) CHECK_MSG(ca(hp, text, port), "check_addr %s:%u refused (%s)", text, port, R ? R : "-")
#define ADDR_NO(hp, text, port, why)                                                                         \
    CHECK_MSG(!ca(hp, text, port) && R && strcmp(R, why) == 0, "check_addr %s:%u: reason %s, want refused %s", \
              text, port, R ? R : "(allowed)", why)

static void bad_entry(const char **allowed, const char **blocked, const char *prefix, const char *note)
{
    strcpy(ERR, "untouched");
    mxc_hostpolicy *hp = mxc_hostpolicy_new(allowed, count(allowed), blocked, count(blocked), &E);
    CHECK_MSG(hp == NULL && strncmp(ERR, prefix, strlen(prefix)) == 0 && strlen(ERR) > strlen(prefix) + 1,
              "%s: err \"%s\", want \"%s...\"", note, ERR, prefix);
    mxc_hostpolicy_free(hp);
}

static void test_names(void)
{
    mxc_hostpolicy *hp = pol(L("example.com", "bücher.example", "xn--strae-oqa.example", "_svc.example.net"), NULL);
    ALLOW_NAME(hp, "example.com", 443, "example.com");
    ALLOW_NAME(hp, "example.com", 80, "example.com");
    DENY(hp, "example.com.evil.com", 443, "not-allowed");
    DENY(hp, "evilexample.com", 443, "not-allowed");
    DENY(hp, "sub.example.com", 443, "not-allowed");
    DENY(hp, "user@evil.com", 443, "bad-host");
    DENY(hp, "example.com@evil.com", 443, "bad-host");
    ALLOW_NAME(hp, "EXAMPLE.COM", 443, "example.com");
    ALLOW_NAME(hp, "example.com.", 443, "example.com");
    ALLOW_NAME(hp, "ExAmPlE.CoM.", 443, "example.com");
    DENY(hp, "example.com..", 443, "bad-host");
    DENY(hp, ".example.com", 443, "bad-host");
    DENY(hp, "example..com", 443, "bad-host");
    DENY(hp, "", 443, "bad-host");
    DENY(hp, ".", 443, "bad-host");
    DENY(hp, "evil.com\0.example.com", 443, "not-allowed"); /* the name ends at the NUL */
    DENY(hp, "\0example.com", 443, "bad-host");
    DENY(hp, "example%2ecom", 443, "bad-host");
    DENY(hp, "%65xample.com", 443, "bad-host");
    DENY(hp, "example.com%00", 443, "bad-host");
    DENY(hp, "example.com%2f", 443, "bad-host");
    DENY(hp, "exa mple.com", 443, "bad-host");
    DENY(hp, "example.com ", 443, "bad-host");
    DENY(hp, "example.com\t", 443, "bad-host");
    DENY(hp, "example.com/", 443, "bad-host");
    DENY(hp, "example.com\\", 443, "bad-host");
    DENY(hp, "ex\x01" "ample.com", 443, "bad-host");
    DENY(hp, "ex\x7f" "ample.com", 443, "bad-host");
    DENY(hp, "*.example.com", 443, "bad-host");
    DENY(hp, "example.com:443", 443, "bad-host");
    /* IDN and punycode alike, both ways */
    ALLOW_NAME(hp, "xn--bcher-kva.example", 443, "xn--bcher-kva.example");
    ALLOW_NAME(hp, "XN--BCHER-KVA.EXAMPLE.", 443, "xn--bcher-kva.example");
    ALLOW_NAME(hp, "bücher.example", 443, "xn--bcher-kva.example");
    ALLOW_NAME(hp, "BÜCHER.EXAMPLE", 443, "xn--bcher-kva.example");
    ALLOW_NAME(hp, "straße.example", 443, "xn--strae-oqa.example"); /* non-transitional: ß stays */
    DENY(hp, "strasse.example", 443, "not-allowed");
    ALLOW_NAME(hp, "\xef\xbd\x85xample.com", 443, "example.com");           /* fullwidth e (UTS #46 map) */
    ALLOW_NAME(hp, "example\xe3\x80\x82" "com", 443, "example.com");        /* ideographic full stop */
    DENY(hp, "b\xfc" "cher.example", 443, "bad-host");                       /* Latin-1, not UTF-8 */
    DENY(hp, "xn--zzzz.example", 443, "bad-host");                           /* bad punycode */
    DENY(hp, "ex\xef\xbc\x85" "41mple.com", 443, "bad-host");               /* fullwidth % maps to % */
    DENY(hp, "example\xef\xbc\x9a" "443", 443, "bad-host");                  /* fullwidth colon */
    ALLOW_NAME(hp, "_SVC.example.net", 443, "_svc.example.net");
    mxc_hostpolicy_free(hp);
}

static void test_name_shapes(void)
{
    char label63[64], label64[65], long253[260], long254[260], long253dot[260];
    memset(label63, 'a', 63), label63[63] = '\0';
    memset(label64, 'a', 64), label64[64] = '\0';
    /* 253 = three labels of 63 and one of 61, with dots; 254 one more */
    memset(long253, 'b', 253), long253[253] = '\0';
    long253[63] = long253[127] = long253[191] = '.';
    memcpy(long254, long253, 254), long254[252] = 'c', long254[253] = 'b', long254[254] = '\0';
    memcpy(long253dot, long253, 253), strcpy(long253dot + 253, ".");
    mxc_hostpolicy *hp = pol(L("*.googlevideo.com", "*.x", long253dot), NULL);
    /* no IDNA hyphen rules on ASCII names */
    ALLOW_NAME(hp, "r3---sn-4g5e.googlevideo.com", 443, "r3---sn-4g5e.googlevideo.com");
    CHECK_MSG(strlen(long253) == 253 && strlen(long254) == 254, "test setup");
    ALLOW_NAME(hp, long253, 443, long253);
    ALLOW_NAME(hp, long253dot, 443, long253);
    DENY(hp, long254, 443, "bad-host");
    bad_entry(L(long254), NULL, "allowed[0]: ", "254-byte name");
    char host[80];
    snprintf(host, sizeof host, "%s.x", label64);
    DENY(hp, host, 443, "bad-host");
    snprintf(host, sizeof host, "%s.x", label63);
    ALLOW_NAME(hp, host, 443, host);
    char *huge = malloc(100000);
    memset(huge, 'a', 99999), huge[99999] = '\0';
    DENY(hp, huge, 443, "bad-host");
    free(huge);
    /* a canon buffer too small never overflows: the request is refused */
    R = NULL;
    char small[4] = "zzz";
    CHECK_MSG(mxc_hostpolicy_check_name(hp, "a.googlevideo.com", 443, small, sizeof small, &LIT, &R) == MXC_HP_DENY &&
                  strcmp(small, "zzz") == 0,
              "small canon buffer");
    mxc_hostpolicy_free(hp);
}

/* Every address form THREATS.md lists: special, so denied without an
 * explicit allow even though a name (example.com) is allowed. */
static void test_special_literals(void)
{
    static const char *const special[] = {
        "169.254.169.254", "127.0.0.1", "127.255.255.254", "10.1.2.3", "172.16.0.1", "172.31.255.255",
        "192.168.1.1", "100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1",
        "239.255.255.250", "240.0.0.1", "198.18.0.1", "198.19.255.255", "192.0.0.8", "::1", "[::1]", "::",
        "[::]", "::ffff:169.254.169.254", "[::ffff:169.254.169.254]", "::FFFF:A9FE:A9FE", "::ffff:127.0.0.1",
        "64:ff9b::a9fe:a9fe", "64:ff9b::127.0.0.1", "64:ff9b::10.0.0.1", "2002:a9fe:a9fe::", "2002:7f00:1::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe", /* Teredo, client 127.0.0.1 */
        "2001:0:a9fe:a9fe::1234",               /* Teredo, server 169.254.169.254 */
        "2001:0:c000:201::3f57:fefe",           /* Teredo, client 192.168.1.1 */
        "::127.0.0.1", "::ffff:0:127.0.0.1", "64:ff9b:1::1", "fe80::1", "[fe80::1]", "febf::1", "fec0::1",
        "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1", "2852039166", "0xA9FEA9FE", "0xa9fea9fe",
        "0251.0376.0251.0376", "169.254.43518", "127.1", "0x7f.1", "0177.0.0.1", "017700000001", "0x7f000001",
        "2130706433", "10.0x10203", "0x0a.0.0.1", "127.0.0.1.", "0", "0x0",
    };
    mxc_hostpolicy *hp = pol(L("example.com"), NULL);
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        DENY(hp, special[i], 443, "special-address");
    /* the literal is built in the resolver's reading */
    DENY(hp, "2852039166", 8080, "special-address");
    CHECK_MSG(lit_is("169.254.169.254", 8080), "2852039166 read as 169.254.169.254");
    DENY(hp, "0251.0376.0251.0376", 443, "special-address");
    CHECK_MSG(lit_is("169.254.169.254", 443), "octal read");
    DENY(hp, "169.254.43518", 443, "special-address");
    CHECK_MSG(lit_is("169.254.169.254", 443), "short form read");
    DENY(hp, "127.1", 443, "special-address");
    CHECK_MSG(lit_is("127.0.0.1", 443), "127.1 read as 127.0.0.1");
    DENY(hp, "::ffff:169.254.169.254", 443, "special-address");
    CHECK_MSG(lit_is("169.254.169.254", 443), "v4-mapped decided as IPv4");
    /* neighbours that are not special: decided as addresses, never as names */
    static const char *const plain[] = {
        "192.0.2.1", "198.51.100.7", "203.0.113.9", "172.32.0.1", "172.15.255.255", "100.128.0.1", "100.63.255.255",
        "198.20.0.1", "192.0.1.255", "2001:db8::1", "[2001:db8::1]", "64:ff9b::c000:201", "2002:c000:201::",
        "2001:0:c000:201::34ff:8ef6", /* Teredo, server 192.0.2.1, client 203.0.113.9 */
        "::ffff:192.0.2.1", "1.2.3", "1.256", "3221225985",
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        DENY(hp, plain[i], 443, "not-allowed");
    DENY(hp, "1.256", 443, "not-allowed");
    CHECK_MSG(lit_is("1.0.1.0", 443), "1.256 read as 1.0.1.0");
    /* numeric-looking hosts that are no address: bad-host, never a DNS name */
    static const char *const bad[] = {
        "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "08.1.1.1", "09", "1.2.65536", "1.16777216", "4294967296",
        "0x100000000", "0x", "1.0x", "example.123", "foo.0x1f", "1.2.3.4 ", " 1.2.3.4", "1.2.3.4%00",
        "[1.2.3.4]", "fe80::1%eth0", "[fe80::1%25eth0]", "[::1", "::1]", ":::", "1::2::3", "[::1]:443", "[]",
        "::ffff:1.2.3.4.5", "99999999999999999999999", "0xffffffffffffffffff", "1..2", "1.2.3.4..",
        "\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.1", /* fullwidth 127.1 maps to 127.1: decided as an address */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0] - 1; i++)
        DENY(hp, bad[i], 443, "bad-host");
    DENY(hp, bad[sizeof bad / sizeof bad[0] - 1], 443, "special-address");
    mxc_hostpolicy_free(hp);
}

/* A special address is reachable only through an allowed CIDR/literal that
 * covers it — never through an allowed name. */
static void test_explicit_allow(void)
{
    mxc_hostpolicy *hp = pol(L("127.0.0.0/8", "169.254.169.254", "::1", "fe80::/10", "[64:ff9b::a9fe:a9fe]:8080",
                               "10.0.0.0/8:5432", "localhost"),
                             NULL);
    ALLOW_ADDR(hp, "127.1", 80);
    CHECK_MSG(lit_is("127.0.0.1", 80), "127.1 literal");
    ALLOW_ADDR(hp, "127.0.0.1", 443);
    ALLOW_ADDR(hp, "0x7f.1", 443);
    ALLOW_ADDR(hp, "2852039166", 443);
    CHECK_MSG(lit_is("169.254.169.254", 443), "decimal literal");
    ALLOW_ADDR(hp, "0xA9FEA9FE", 80);
    ALLOW_ADDR(hp, "0251.0376.0251.0376", 80);
    ALLOW_ADDR(hp, "169.254.43518", 80);
    ALLOW_ADDR(hp, "::ffff:127.0.0.1", 443);
    CHECK_MSG(LIT.ss_family == AF_INET && lit_is("127.0.0.1", 443), "v4-mapped literal is AF_INET");
    ALLOW_ADDR(hp, "[::1]", 443);
    CHECK_MSG(LIT.ss_family == AF_INET6 && lit_is("::1", 443), "[::1] literal");
    ALLOW_ADDR(hp, "::1", 80);
    ALLOW_ADDR(hp, "fe80::1", 443);
    ALLOW_ADDR(hp, "64:ff9b::a9fe:a9fe", 8080);
    DENY(hp, "64:ff9b::a9fe:a9fe", 443, "port-not-allowed");
    DENY(hp, "127.1", 22, "port-not-allowed");
    DENY(hp, "169.254.169.253", 443, "special-address");
    ALLOW_ADDR(hp, "10.9.8.7", 5432);
    DENY(hp, "10.9.8.7", 443, "port-not-allowed");
    DENY(hp, "192.168.0.1", 443, "special-address");
    DENY(hp, "::2", 443, "special-address");                /* IPv4-compatible 0.0.0.2 */
    DENY(hp, "::ffff:169.254.169.253", 443, "special-address");
    /* allowing 127/8 (IPv4) does not allow v6 forms that merely embed it */
    DENY(hp, "64:ff9b::7f00:1", 443, "special-address");
    DENY(hp, "2002:7f00:1::", 443, "special-address");
    ALLOW_NAME(hp, "localhost", 443, "localhost");
    ALLOW_NAME(hp, "LOCALHOST.", 443, "localhost");
    DENY(hp, "foo.localhost", 443, "special-address");
    /* check_addr: the CIDR allows, with its ports when the port is known */
    ADDR_OK(hp, "127.0.0.1", 443);
    ADDR_OK(hp, "127.0.0.1", 0);
    ADDR_NO(hp, "127.0.0.1", 22, "special-address");
    ADDR_OK(hp, "::ffff:127.0.0.1", 80);
    ADDR_OK(hp, "10.1.1.1", 5432);
    ADDR_NO(hp, "10.1.1.1", 443, "special-address");
    ADDR_NO(hp, "192.168.1.1", 443, "special-address");
    mxc_hostpolicy_free(hp);

    /* an allowed name never makes an address reachable: "localhost" allowed, 127.0.0.1 not */
    hp = pol(L("localhost", "*.localhost"), NULL);
    ALLOW_NAME(hp, "localhost", 80, "localhost");
    ALLOW_NAME(hp, "a.localhost", 80, "a.localhost");
    ADDR_NO(hp, "127.0.0.1", 80, "special-address");
    ADDR_NO(hp, "::1", 80, "special-address");
    DENY(hp, "127.0.0.1", 80, "special-address");
    mxc_hostpolicy_free(hp);

    /* RFC 6761 localhost without an allow */
    hp = pol(L("example.com", "*.example.com"), NULL);
    DENY(hp, "localhost", 443, "special-address");
    DENY(hp, "LocalHost.", 443, "special-address");
    DENY(hp, "foo.localhost", 443, "special-address");
    DENY(hp, "localhost.example.org", 443, "not-allowed");
    DENY(hp, "notlocalhost", 443, "not-allowed");
    ALLOW_NAME(hp, "localhost.example.com", 443, "localhost.example.com");
    mxc_hostpolicy_free(hp);

    /* an IPv6 ::/0 allow never allows IPv4; a v6 entry in ::ffff:0:0/96 is IPv4 */
    hp = pol(L("::/0", "::ffff:192.0.2.0/120"), NULL);
    ALLOW_ADDR(hp, "2001:db8::1", 443);
    DENY(hp, "::1", 443, "special-address"); /* ::/0 does not name host loopback (issue 27 finding 8) */
    DENY(hp, "198.51.100.1", 443, "not-allowed");
    DENY(hp, "127.0.0.1", 443, "special-address");
    ADDR_NO(hp, "127.0.0.1", 443, "special-address");
    ALLOW_ADDR(hp, "192.0.2.77", 443);
    ALLOW_ADDR(hp, "::ffff:192.0.2.77", 443);
    mxc_hostpolicy_free(hp);
}

/* check_dial on a text address with a port; local: the kernel would
 * deliver it to this host. */
static bool cdial(const mxc_hostpolicy *hp, const char *text, unsigned port, bool local)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (strchr(text, ':')) {
        in6->sin6_family = AF_INET6, in6->sin6_port = htons((uint16_t)port);
        CHECK_MSG(inet_pton(AF_INET6, text, &in6->sin6_addr) == 1, "test address %s", text);
    } else {
        in->sin_family = AF_INET, in->sin_port = htons((uint16_t)port);
        CHECK_MSG(inet_pton(AF_INET, text, &in->sin_addr) == 1, "test address %s", text);
    }
    R = NULL;
    return mxc_hostpolicy_check_dial(hp, (struct sockaddr *)&ss, local, &R);
}

/* Issue 27 finding 8: host loopback and the host's own addresses are
 * reached only through an entry that names them; a broad CIDR that merely
 * covers them (0.0.0.0/0, the /1 halves, ::/0, 127/8 inside anything
 * wider) never does — as model 1 never lets a broad allow reopen host
 * loopback. */
static void test_broad_never_reaches_the_host(void)
{
    static const struct {
        const char *e[3];
        unsigned port;
    } broad[] = {
        {{"0.0.0.0/0:8080"}, 8080},         {{"0.0.0.0/1:8080", "128.0.0.0/1:8080"}, 8080},
        {{"96.0.0.0/3:8080"}, 8080},        {{"126.0.0.0/7:8080"}, 8080},
        {{"0.0.0.0/7:8080"}, 8080},         {{"::ffff:0.0.0.0/96"}, 443},
        {{"[::ffff:0.0.0.0/96]:8080"}, 8080}, {{"0.0.0.0/0"}, 443},
    };
    static const char *const local[] = {"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1",
                                        "127.255.255.254", "0.0.0.0", "0", "0.1.2.3", "::ffff:127.0.0.1",
                                        "[::ffff:127.0.0.1]", "[::ffff:0.0.0.0]"};
    for (size_t b = 0; b < sizeof broad / sizeof broad[0]; b++) {
        const char *allowed[4] = {broad[b].e[0], broad[b].e[1], broad[b].e[2], NULL};
        mxc_hostpolicy *hp = pol(allowed, NULL);
        unsigned port = broad[b].port;
        for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
            DENY(hp, local[i], port, "special-address");
        ADDR_NO(hp, "127.0.0.1", port, "special-address");
        ADDR_NO(hp, "127.0.0.1", 0, "special-address");
        ADDR_NO(hp, "0.0.0.0", port, "special-address");
        ADDR_NO(hp, "::ffff:127.0.0.1", port, "special-address");
        CHECK_MSG(!cdial(hp, "127.0.0.1", port, true) && R && !strcmp(R, "special-address"), "%s: dial", broad[b].e[0]);
        CHECK_MSG(!cdial(hp, "127.0.0.1", port, false), "%s: dial, whatever the route says", broad[b].e[0]);
        mxc_hostpolicy_free(hp);
    }
    mxc_hostpolicy *hp = pol(L("0.0.0.0/0:8080"), NULL);
    ALLOW_ADDR(hp, "198.51.100.7", 8080); /* the internet, still */
    ALLOW_ADDR(hp, "10.1.2.3", 8080);     /* a local network is not this host: covered, as model 1 reaches it */
    mxc_hostpolicy_free(hp);
    /* IPv6: ::/0 covers ::1, ::, and every form embedding 127/8 or 0/8, naming none */
    hp = pol(L("::/0", "[::/0]:8080", "[::/1]:8080", "[::/127]:8080"), NULL);
    static const char *const local6[] = {"::1", "[::1]", "::", "::127.0.0.1", "::ffff:0:127.0.0.1",
                                         "64:ff9b::7f00:1", "2002:7f00:1::", "[0:0:0:0:0:0:0:1]"};
    for (size_t i = 0; i < sizeof local6 / sizeof local6[0]; i++)
        DENY(hp, local6[i], 8080, "special-address");
    ADDR_NO(hp, "::1", 8080, "special-address");
    ADDR_NO(hp, "::", 8080, "special-address");
    ALLOW_ADDR(hp, "2001:db8::1", 8080);
    mxc_hostpolicy_free(hp);

    /* what names them: an entry that lies inside 127/8 or 0/8 (IPv4, any
     * form), or is exactly ::1 / :: / that embedding address (IPv6) */
    hp = pol(L("0.0.0.0/0:8080", "127.0.0.1:8080", "127.9.0.0/16:8080", "0.0.0.0:8080", "[::1]:8080",
               "[64:ff9b::7f00:1]:8080", "::ffff:127.5.0.0/112"),
             NULL);
    ALLOW_ADDR(hp, "127.0.0.1", 8080);
    ALLOW_ADDR(hp, "127.1", 8080);
    ALLOW_ADDR(hp, "127.9.4.4", 8080);
    ALLOW_ADDR(hp, "0.0.0.0", 8080);
    ALLOW_ADDR(hp, "::1", 8080);
    ALLOW_ADDR(hp, "64:ff9b::7f00:1", 8080);
    ALLOW_ADDR(hp, "127.5.1.1", 443);
    DENY(hp, "127.0.0.2", 8080, "special-address");
    DENY(hp, "0.0.0.1", 8080, "special-address");
    DENY(hp, "127.0.0.1", 443, "port-not-allowed");
    DENY(hp, "::", 8080, "special-address");
    ADDR_OK(hp, "127.0.0.1", 8080);
    ADDR_NO(hp, "127.0.0.2", 8080, "special-address");
    CHECK(cdial(hp, "127.0.0.1", 8080, true));
    mxc_hostpolicy_free(hp);
    /* 127/8 itself names it; blocked still outranks */
    hp = pol(L("127.0.0.0/8:8080", "0.0.0.0/0:8080"), L("127.0.0.7"));
    ALLOW_ADDR(hp, "127.3.3.3", 8080);
    DENY(hp, "127.0.0.7", 8080, "blocked");
    mxc_hostpolicy_free(hp);

    /* the host's own addresses (the caller's route lookup says "local"):
     * only an entry of exactly that address, with the port, reaches one */
    hp = pol(L("0.0.0.0/0:8080", "192.0.2.0/24:8080", "[2001:db8::/32]:8080"), NULL);
    CHECK(cdial(hp, "192.0.2.1", 8080, false));
    CHECK_MSG(!cdial(hp, "192.0.2.1", 8080, true) && R && !strcmp(R, "special-address"), "own address: %s",
              R ? R : "(allowed)");
    CHECK(!cdial(hp, "2001:db8::5", 8080, true));
    CHECK(cdial(hp, "2001:db8::5", 8080, false));
    mxc_hostpolicy_free(hp);
    hp = pol(L("0.0.0.0/0:8080", "192.0.2.1:8080", "[2001:db8::5]:8080", "::ffff:192.0.2.9/128"), L("192.0.2.66"));
    CHECK(cdial(hp, "192.0.2.1", 8080, true));
    CHECK(!cdial(hp, "192.0.2.1", 9090, true));
    CHECK(cdial(hp, "2001:db8::5", 8080, true));
    CHECK(cdial(hp, "::ffff:192.0.2.1", 8080, true));
    CHECK(cdial(hp, "192.0.2.9", 443, true));
    CHECK(!cdial(hp, "192.0.2.2", 8080, true));
    CHECK_MSG(!cdial(hp, "192.0.2.66", 8080, false) && R && !strcmp(R, "blocked"), "blocked: %s", R ? R : "-");
    mxc_hostpolicy_free(hp);
}

static void test_ports(void)
{
    mxc_hostpolicy *hp =
        pol(L("example.com", "api.example.com:8443", "192.0.2.10:8080", "[2001:db8::1]:8443", "[2001:db8:1::/48]:993",
              "198.51.100.0/24:25", "both.example:8080", "both.example", "*.w.example:8443"),
            NULL);
    ALLOW_NAME(hp, "example.com", 80, "example.com");
    ALLOW_NAME(hp, "example.com", 443, "example.com");
    DENY(hp, "example.com", 8080, "port-not-allowed");
    DENY(hp, "example.com", 22, "port-not-allowed");
    DENY(hp, "example.com", 8443, "port-not-allowed");
    ALLOW_NAME(hp, "api.example.com", 8443, "api.example.com");
    DENY(hp, "api.example.com", 443, "port-not-allowed");
    DENY(hp, "api.example.com", 80, "port-not-allowed");
    ALLOW_NAME(hp, "both.example", 8080, "both.example");
    ALLOW_NAME(hp, "both.example", 443, "both.example");
    DENY(hp, "both.example", 8081, "port-not-allowed");
    ALLOW_NAME(hp, "x.w.example", 8443, "x.w.example");
    DENY(hp, "x.w.example", 443, "port-not-allowed");
    ALLOW_ADDR(hp, "192.0.2.10", 8080);
    CHECK_MSG(lit_is("192.0.2.10", 8080), "literal port set");
    DENY(hp, "192.0.2.10", 443, "port-not-allowed");
    DENY(hp, "192.0.2.11", 8080, "not-allowed");
    ALLOW_ADDR(hp, "2001:db8::1", 8443);
    CHECK_MSG(lit_is("2001:db8::1", 8443), "v6 literal port set");
    DENY(hp, "2001:db8::1", 443, "port-not-allowed");
    ALLOW_ADDR(hp, "2001:db8:1:ffff::5", 993);
    DENY(hp, "2001:db8:1::5", 443, "port-not-allowed");
    ALLOW_ADDR(hp, "198.51.100.200", 25);
    DENY(hp, "198.51.100.200", 443, "port-not-allowed");
    /* ports outside 1..65535 are refused safely */
    DENY(hp, "example.com", 0, "port-not-allowed");
    DENY(hp, "example.com", 65536, "port-not-allowed");
    DENY(hp, "example.com", 65536 + 443, "port-not-allowed");
    DENY(hp, "example.com", UINT_MAX, "port-not-allowed");
    DENY(hp, "192.0.2.10", 65536 + 8080, "port-not-allowed");
    mxc_hostpolicy_free(hp);
}

static void test_wildcards(void)
{
    mxc_hostpolicy *hp = pol(L("*.example.org", "*.bücher.example"), NULL);
    ALLOW_NAME(hp, "a.example.org", 443, "a.example.org");
    ALLOW_NAME(hp, "a.b.c.example.org", 443, "a.b.c.example.org");
    ALLOW_NAME(hp, "A.EXAMPLE.ORG.", 443, "a.example.org");
    DENY(hp, "example.org", 443, "not-allowed"); /* not the apex */
    DENY(hp, "example.org.", 443, "not-allowed");
    DENY(hp, "xexample.org", 443, "not-allowed");
    DENY(hp, "a.xexample.org", 443, "not-allowed");
    DENY(hp, "example.org.evil.com", 443, "not-allowed");
    DENY(hp, "a.example.org.evil.com", 443, "not-allowed");
    DENY(hp, ".example.org", 443, "bad-host");
    DENY(hp, "a..example.org", 443, "bad-host");
    ALLOW_NAME(hp, "www.xn--bcher-kva.example", 443, "www.xn--bcher-kva.example");
    ALLOW_NAME(hp, "www.bücher.example", 443, "www.xn--bcher-kva.example");
    DENY(hp, "bücher.example", 443, "not-allowed");
    mxc_hostpolicy_free(hp);
}

static void test_blocked_outranks(void)
{
    mxc_hostpolicy *hp =
        pol(L("*.example.com", "example.com", "bad.example.com", "10.0.0.0/8", "192.0.2.0/24", "192.0.2.5",
              "example.net:8080", "2001:db8::/32", "[64:ff9b::/96]:443"),
            L("bad.example.com", "*.worse.example.com", "10.1.0.0/16", "192.0.2.66", "192.0.2.0/28", "example.net",
              "example.com:8443", "2001:db8:bad::/48", "198.51.100.0/24"));
    DENY(hp, "bad.example.com", 443, "blocked");
    DENY(hp, "BAD.example.com.", 443, "blocked");
    ALLOW_NAME(hp, "x.bad.example.com", 443, "x.bad.example.com"); /* an exact block is exact */
    DENY(hp, "x.worse.example.com", 443, "blocked");
    DENY(hp, "a.b.worse.example.com", 443, "blocked");
    ALLOW_NAME(hp, "worse.example.com", 443, "worse.example.com");
    ALLOW_NAME(hp, "good.example.com", 443, "good.example.com");
    DENY(hp, "example.net", 8080, "blocked"); /* a block without a port blocks every port */
    DENY(hp, "example.net", 1, "blocked");
    DENY(hp, "example.com", 8443, "blocked");
    ALLOW_NAME(hp, "example.com", 443, "example.com"); /* a block with a port blocks that port */
    DENY(hp, "10.1.2.3", 443, "blocked");
    DENY(hp, "10.1.2.3", 9999, "blocked");
    ALLOW_ADDR(hp, "10.2.0.1", 443);
    DENY(hp, "192.0.2.66", 443, "blocked");
    DENY(hp, "192.0.2.5", 443, "blocked"); /* a broader blocked CIDR over an allowed literal */
    ALLOW_ADDR(hp, "192.0.2.67", 443);
    DENY(hp, "::ffff:192.0.2.66", 443, "blocked");
    DENY(hp, "64:ff9b::192.0.2.66", 443, "blocked"); /* embedded forms of a blocked IPv4 */
    DENY(hp, "2002:c000:242::1", 443, "blocked");
    DENY(hp, "2001:db8:bad::1", 443, "blocked");
    ALLOW_ADDR(hp, "2001:db8:900d::1", 443);
    DENY(hp, "3221226050", 443, "blocked"); /* 192.0.2.66 in decimal */
    /* check_addr: blocked CIDRs over an allowed name's addresses */
    ADDR_NO(hp, "10.1.2.3", 443, "blocked");
    ADDR_NO(hp, "10.1.2.3", 0, "blocked");
    ADDR_NO(hp, "192.0.2.66", 443, "blocked");
    ADDR_NO(hp, "::ffff:192.0.2.66", 443, "blocked");
    ADDR_NO(hp, "64:ff9b::c000:242", 443, "blocked");
    ADDR_NO(hp, "2001:db8:bad::5", 443, "blocked");
    ADDR_NO(hp, "198.51.100.1", 443, "blocked");
    ADDR_OK(hp, "192.0.2.67", 443);
    ADDR_OK(hp, "10.2.0.1", 443);
    ADDR_OK(hp, "203.0.113.1", 443);
    mxc_hostpolicy_free(hp);

    /* a v6 block wider than ::ffff:0:0/96 blocks IPv4 too */
    hp = pol(L("192.0.2.1", "example.com"), L("::/0"));
    DENY(hp, "192.0.2.1", 443, "blocked");
    ADDR_NO(hp, "203.0.113.1", 443, "blocked");
    ALLOW_NAME(hp, "example.com", 443, "example.com");
    mxc_hostpolicy_free(hp);
}

/* DNS rebinding: every resolved address of an allowed name is checked. */
static void test_rebinding(void)
{
    mxc_hostpolicy *hp = pol(L("example.com"), NULL);
    ALLOW_NAME(hp, "example.com", 443, "example.com");
    ADDR_NO(hp, "127.0.0.1", 443, "special-address");
    ADDR_NO(hp, "10.1.2.3", 443, "special-address");
    ADDR_NO(hp, "169.254.169.254", 80, "special-address");
    ADDR_NO(hp, "0.0.0.0", 443, "special-address");
    ADDR_NO(hp, "255.255.255.255", 443, "special-address");
    ADDR_NO(hp, "100.64.1.1", 443, "special-address");
    ADDR_NO(hp, "::1", 443, "special-address");
    ADDR_NO(hp, "::", 443, "special-address");
    ADDR_NO(hp, "::ffff:127.0.0.1", 443, "special-address");
    ADDR_NO(hp, "64:ff9b::a9fe:a9fe", 443, "special-address");
    ADDR_NO(hp, "2002:a9fe:a9fe::1", 443, "special-address");
    ADDR_NO(hp, "2001:0:4136:e378:8000:63bf:80ff:fffe", 443, "special-address");
    ADDR_NO(hp, "fe80::1", 443, "special-address");
    ADDR_NO(hp, "fd00::1", 443, "special-address");
    ADDR_NO(hp, "ff02::1", 443, "special-address");
    ADDR_OK(hp, "192.0.2.1", 443);
    ADDR_OK(hp, "198.51.100.1", 443);
    ADDR_OK(hp, "203.0.113.1", 443);
    ADDR_OK(hp, "2001:db8::1", 443);
    ADDR_OK(hp, "::ffff:192.0.2.1", 443);
    ADDR_OK(hp, "64:ff9b::c000:201", 443);
    struct sockaddr_storage un;
    memset(&un, 0, sizeof un);
    un.ss_family = AF_UNIX;
    R = NULL;
    CHECK_MSG(!mxc_hostpolicy_check_addr(hp, (struct sockaddr *)&un, &R) && R, "AF_UNIX refused");
    CHECK_MSG(!mxc_hostpolicy_check_addr(hp, NULL, &R), "NULL refused");
    mxc_hostpolicy_free(hp);
}

static void test_entries(void)
{
    static const char *const bad[] = {
        "*", "*x.com", "a.*.com", "*.", "*.*.com", "**.com", "example.com:0", "example.com:65536", "example.com:0443",
        "example.com:-1", "example.com: 443", "example.com:", "example.com:443:1", ":443", "", "exa mple.com",
        "ex%41.com", "user@host.com", "a..b", ".a.com", "a.com..", "xn--zzzz.com", "a/b.com", "10.0.0.1/8",
        "10.0.0.0/33", "10.0.0.0/08", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "127.1", "2852039166",
        "0xA9FEA9FE", "0251.0376.0251.0376", "010.0.0.1", "1.2.3.4.5", "256.0.0.0", "example.123",
        "2001:db8::1/129", "2001:db8::1/64", "2001:db8::/032", "[2001:db8::1", "[2001:db8::1]x",
        "[2001:db8::1]:", "[2001:db8::1]:99999", "[10.0.0.1]", "[10.0.0.1]:443", "fe80::1%eth0", "2001:db8::1:443x",
        "[2001:db8:8000::/32]:443", "*.10.0.0.1", "\xef\xbc\x91\xef\xbc\x90.0.0.1",
    };
    char note[64];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(note, sizeof note, "bad entry #%zu", i);
        bad_entry(L("ok.example", bad[i]), NULL, "allowed[1]: ", note);
        bad_entry(NULL, L(bad[i]), "blocked[0]: ", note);
    }
    /* a NULL entry */
    const char *nul[] = {"ok.example", "ok2.example", NULL};
    ERR[0] = '\0';
    CHECK_MSG(mxc_hostpolicy_new(nul, 3, NULL, 0, &E) == NULL && strncmp(ERR, "allowed[2]: ", 12) == 0,
              "NULL entry: %s", ERR);
    CHECK_MSG(mxc_hostpolicy_new(NULL, 1, NULL, 0, &E) == NULL, "NULL list");
    /* the error is the one type, its code a refused request */
    CHECK_MSG(mxc_hostpolicy_new(L("*"), 1, NULL, 0, &E) == NULL && E.code == MXC_E_MALFORMED_REQUEST &&
                  strncmp(ERR, "allowed[0]: ", 12) == 0,
              "err: %s", ERR);
    CHECK_MSG(mxc_hostpolicy_new(L("*"), 1, NULL, 0, NULL) == NULL, "no error wanted");
    /* good entries of every kind */
    mxc_hostpolicy *hp = pol(L("example.com", "EXAMPLE.com.", "*.example.com:8443", "192.0.2.1", "192.0.2.1:8080",
                               "10.0.0.0/8", "10.0.0.0/8:443", "0.0.0.0/0", "2001:db8::1", "[2001:db8::1]",
                               "[2001:db8::1]:443", "2001:db8::/32", "[2001:db8::/32]:443", "::/0",
                               "::ffff:10.0.0.0/104",
                               "bücher.example", "_srv.example", "r3---sn.example", "localhost", "*.com"),
                             L("a.example", "*.b.example:22", "198.51.100.0/24", "[2001:db8::/48]:25"));
    CHECK(hp != NULL);
    mxc_hostpolicy_free(hp);
    /* the empty policy denies everything */
    hp = pol(NULL, NULL);
    DENY(hp, "example.com", 443, "not-allowed");
    DENY(hp, "192.0.2.1", 443, "not-allowed");
    DENY(hp, "127.0.0.1", 443, "special-address");
    DENY(hp, "localhost", 443, "special-address");
    ADDR_NO(hp, "127.0.0.1", 443, "special-address");
    ADDR_OK(hp, "192.0.2.1", 443); /* only reached after an ALLOW_NAME */
    mxc_hostpolicy_free(hp);
    mxc_hostpolicy_free(NULL);
}

int main(void)
{
    test_names();
    test_name_shapes();
    test_special_literals();
    test_explicit_allow();
    test_broad_never_reaches_the_host();
    test_ports();
    test_wildcards();
    test_blocked_outranks();
    test_rebinding();
    test_entries();
    return CHECK_DONE();
}
