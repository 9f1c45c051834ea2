/* fuzz_hostpolicy.c — libFuzzer harness for the egress host policy.
 * Input: byte 0 = the number of entry lines (low 3 bits) and a port seed;
 * then lines: the entries first ('!' in front: blocked, else allowed), the
 * rest requested hosts, each with a port from a table (0 and 65536 too).
 * Oracles:
 *  - new returns NULL (err "allowed[i]: ..."/"blocked[i]: ...", bounded) or
 *    a policy; nothing crashes;
 *  - DENY gives one of the five reason tokens; ALLOW_NAME a canon that is
 *    non-empty, lowercase [a-z0-9-_.], no empty label, no trailing dot, and
 *    that decides the same again; ALLOW_ADDR an AF_INET/AF_INET6 literal
 *    with the port set, which check_addr then passes; a literal DENY
 *    "blocked" is refused by check_addr too;
 *  - normalisation: the host in upper case, with a trailing dot added or its
 *    one trailing dot removed, gets the same verdict, reason, canon, literal;
 *  - the empty policy denies every host;
 *  - a reference special-address test written apart from the module: with
 *    no allowed entry that could be a CIDR/literal, check_addr of a special
 *    address is false; with no blocked entry, of a plain one true;
 *  - this host (issue 27 finding 8): with no allowed entry that could name
 *    host loopback (an IPv4 one inside 127/8 or 0/8, an IPv6 one of 104 bits
 *    or more) — broad CIDRs such as 0.0.0.0/0 and ::/0 do not —, check_addr
 *    of a host-local address (127/8, 0/8, ::1, ::, or a v6 form embedding
 *    127/8 or 0/8) is false, and check_dial of any address the route calls
 *    local is false unless an allowed entry could be that exact address.
 *   tests/fuzz/run.sh [SECONDS]
 * Built without libFuzzer (-DMXC_FUZZ_STANDALONE), main() runs the harness
 * over each file named, or the built-in cases when none is. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostpolicy.h"

#define MAXLINES 24
#define LINEMAX 600

static const unsigned PORTS[] = {443, 80, 8080, 22, 1, 65535, 0, 65536, 8443, 5432};

static void fail(const char *what, const char *host)
{
    fprintf(stderr, "oracle violated: %s (host \"%s\")\n", what, host ? host : "");
    abort();
}

/* ---- a reference special-address test, apart from the module ---------- */

static int ref_v4(uint32_t a)
{
    unsigned o1 = a >> 24, o2 = (a >> 16) & 0xff;
    return o1 == 0 || o1 == 10 || o1 == 127 || o1 >= 224 || (o1 == 100 && o2 >= 64 && o2 < 128) ||
           (o1 == 169 && o2 == 254) || (o1 == 172 && o2 >= 16 && o2 < 32) || (o1 == 192 && o2 == 168) ||
           (o1 == 192 && o2 == 0 && ((a >> 8) & 0xff) == 0) || (o1 == 198 && (o2 == 18 || o2 == 19));
}

static int ref_v6(const uint8_t *b)
{
    uint32_t w[4];
    for (int i = 0; i < 4; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    if (w[0] == 0 && w[1] == 0 && (w[2] == 0 || w[2] == 0xffff || w[2] == 0xffff0000))
        return ref_v4(w[3]);
    if (w[0] == 0x0064ff9b && w[1] == 0 && w[2] == 0)
        return ref_v4(w[3]);
    if (w[0] == 0x0064ff9b && w[1] >> 16 == 1)
        return 1;
    if (w[0] >> 16 == 0x2002)
        return ref_v4(w[0] << 16 | w[1] >> 16);
    if (w[0] == 0x20010000)
        return ref_v4(w[1]) || ref_v4(~w[3]);
    unsigned top = w[0] >> 16;
    return (top & 0xffc0) == 0xfe80 || (top & 0xffc0) == 0xfec0 || (top & 0xfe00) == 0xfc00 || (top & 0xff00) == 0xff00;
}

static int ref_local_v4(uint32_t a)
{
    return a >> 24 == 127 || a >> 24 == 0;
}

static int ref_local_v6(const uint8_t *b)
{
    uint32_t w[4];
    for (int i = 0; i < 4; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    if (w[0] == 0 && w[1] == 0 && w[2] == 0 && (w[3] == 0 || w[3] == 1))
        return 1;
    if ((w[0] == 0 && w[1] == 0 && (w[2] == 0 || w[2] == 0xffff || w[2] == 0xffff0000)) ||
        (w[0] == 0x0064ff9b && w[1] == 0 && w[2] == 0))
        return ref_local_v4(w[3]);
    if (w[0] >> 16 == 0x2002)
        return ref_local_v4(w[0] << 16 | w[1] >> 16);
    if (w[0] == 0x20010000)
        return ref_local_v4(w[1]) || ref_local_v4(~w[3]);
    return 0;
}

/* Whether an allowed entry's text could name host loopback (see the
 * oracle): a prefix length written below the naming bound rules it out. */
static int may_name_local(const char *e)
{
    const char *sl = strchr(e, '/'), *colon = strchr(e, ':');
    long len = sl ? strtol(sl + 1, NULL, 10) : 999;
    if (e[0] == '[' || (colon && strchr(colon + 1, ':'))) /* IPv6 (a v4 entry has one ':', its port) */
        return len >= 104;
    return (!strncmp(e, "127.", 4) || !strncmp(e, "0.", 2) || (e[0] == '0' && (!e[1] || e[1] == ':'))) && len >= 8;
}

/* b[17]: b[0] picks the family, b[1..16] the address, some forced into the
 * interesting ranges. */
static void addr_check(const mxc_hostpolicy *hp, const uint8_t *b, int may_allow_net, int has_block, int may_local)
{
    static const uint8_t pre[][4] = {{127}, {10}, {169, 254}, {0, 0x64, 0xff, 0x9b}, {0x20, 0x02}, {0x20, 0x01, 0, 0},
                                     {0xfe, 0x80}, {0xfc}, {0xff}, {0, 0, 0, 0}, {192, 0, 2}};
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    uint8_t a[16];
    memcpy(a, b + 1, 16);
    if (b[0] & 0x10)
        memcpy(a, pre[b[0] % (sizeof pre / sizeof pre[0])], 4);
    if ((b[0] & 0x60) == 0x60) /* an IPv4-mapped one */
        memset(a, 0, 10), a[10] = a[11] = 0xff;
    int special, local;
    if (b[0] & 0x80) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = htons(443);
        memcpy(&in->sin_addr, a, 4);
        special = ref_v4((uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3]);
        local = ref_local_v4((uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3]);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(443);
        memcpy(&in6->sin6_addr, a, 16);
        special = ref_v6(a);
        local = ref_local_v6(a);
    }
    const char *why = NULL;
    bool ok = mxc_hostpolicy_check_addr(hp, (struct sockaddr *)&ss, &why);
    if (!ok && (!why || (strcmp(why, "blocked") != 0 && strcmp(why, "special-address") != 0)))
        fail("check_addr refused without a reason token", NULL);
    if (special && !may_allow_net && ok)
        fail("check_addr passed a special address no CIDR/literal allows", NULL);
    if (!special && !has_block && !ok)
        fail("check_addr refused a plain address with no blocked entry", NULL);
    if (local && !may_local && ok)
        fail("check_addr passed a host-local address no entry names", NULL);
    bool dial = mxc_hostpolicy_check_dial(hp, (struct sockaddr *)&ss, false, &why);
    if (dial != ok)
        fail("check_dial of a non-local address differs from check_addr", NULL);
    if (mxc_hostpolicy_check_dial(hp, (struct sockaddr *)&ss, true, &why) && (!ok || !may_allow_net))
        fail("check_dial passed one of this host's addresses no literal names", NULL);
}

/* ---- check_name ---------------------------------------------------------- */

typedef struct {
    mxc_hp_verdict v;
    const char *why;
    char canon[300];
    struct sockaddr_storage lit;
} result;

static void decide(const mxc_hostpolicy *hp, const char *host, unsigned port, result *r)
{
    memset(r, 0, sizeof *r);
    r->v = mxc_hostpolicy_check_name(hp, host, port, r->canon, sizeof r->canon, &r->lit, &r->why);
}

static int same(const result *a, const result *b)
{
    if (a->v != b->v)
        return 0;
    if (a->v == MXC_HP_DENY)
        return a->why && b->why && strcmp(a->why, b->why) == 0;
    if (a->v == MXC_HP_ALLOW_NAME)
        return strcmp(a->canon, b->canon) == 0;
    return memcmp(&a->lit, &b->lit, sizeof a->lit) == 0;
}

static void check_canon(const char *c, const char *host)
{
    size_t n = strlen(c);
    if (n == 0 || n > 253 || c[0] == '.' || c[n - 1] == '.' || strstr(c, ".."))
        fail("ALLOW_NAME canon is empty or has an empty label or trailing dot", host);
    if (strspn(c, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
        fail("ALLOW_NAME canon has a byte outside [a-z0-9-_.]", host);
}

/* An ASCII byte a name may end with: a dot added or removed after it is
 * the one trailing dot (after a non-ASCII one, UTS #46 may map a dot). */
static int label_byte(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

static void check_one(const mxc_hostpolicy *hp, const char *host, unsigned port)
{
    static const char *const tokens[] = {"bad-host", "blocked", "not-allowed", "port-not-allowed", "special-address"};
    result r, again;
    decide(hp, host, port, &r);
    const char *why = NULL;
    if (r.v == MXC_HP_DENY) {
        int known = 0;
        for (size_t i = 0; r.why && i < sizeof tokens / sizeof tokens[0]; i++)
            known |= strcmp(r.why, tokens[i]) == 0;
        if (!known)
            fail("DENY without one of the reason tokens", host);
        if (strcmp(r.why, "blocked") == 0 && r.lit.ss_family &&
            mxc_hostpolicy_check_addr(hp, (struct sockaddr *)&r.lit, &why))
            fail("a blocked literal passes check_addr", host);
    } else if (port == 0 || port > 65535) {
        fail("a port outside 1..65535 allowed", host);
    } else if (r.v == MXC_HP_ALLOW_NAME) {
        check_canon(r.canon, host);
        decide(hp, r.canon, port, &again);
        if (!same(&r, &again))
            fail("the canon of an allowed name decides differently", host);
    } else if (r.v == MXC_HP_ALLOW_ADDR) {
        in_port_t p = r.lit.ss_family == AF_INET    ? ((struct sockaddr_in *)&r.lit)->sin_port
                      : r.lit.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&r.lit)->sin6_port
                                                    : 0;
        if (!p || ntohs(p) != port)
            fail("ALLOW_ADDR without an AF_INET/AF_INET6 literal with the port", host);
        if (!mxc_hostpolicy_check_addr(hp, (struct sockaddr *)&r.lit, &why))
            fail("an allowed literal fails check_addr", host);
    } else {
        fail("an unknown verdict", host);
    }

    /* normalisation: upper case, one trailing dot more or less */
    char v[LINEMAX + 2];
    size_t n = strlen(host);
    for (size_t i = 0; i <= n; i++)
        v[i] = (char)((unsigned char)host[i] < 0x80 ? toupper((unsigned char)host[i]) : host[i]);
    decide(hp, v, port, &again);
    if (!same(&r, &again))
        fail("the host in upper case decides differently", host);
    int lit6 = strpbrk(host, ":[") != NULL;
    if (n >= 2 && host[n - 1] == '.' && !lit6 && label_byte(host[n - 2])) {
        memcpy(v, host, n - 1), v[n - 1] = '\0';
        decide(hp, v, port, &again);
        if (!same(&r, &again))
            fail("the host without its trailing dot decides differently", host);
    } else if (n && !lit6 && label_byte(host[n - 1])) {
        memcpy(v, host, n), v[n] = '.', v[n + 1] = '\0';
        decide(hp, v, port, &again);
        if (!same(&r, &again))
            fail("the host with a trailing dot decides differently", host);
    }
}

/* ---- the harness --------------------------------------------------------- */

static int may_be_net(const char *e)
{
    return strpbrk(e, ":/[") != NULL || strspn(e, "0123456789.") == strlen(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mxc_hostpolicy *empty;
    if (!empty && !(empty = mxc_hostpolicy_new(NULL, 0, NULL, 0, NULL)))
        fail("the empty policy refused", NULL);
    if (size < 1 || size > 8192)
        return 0;
    size_t nent = data[0] & 7, seed = data[0] >> 3;
    static char lines[MAXLINES][LINEMAX + 1];
    size_t nl = 0;
    for (size_t i = 1; i <= size && nl < MAXLINES;) {
        size_t j = i;
        while (j < size && data[j] != '\n')
            j++;
        size_t k = j - i < LINEMAX ? j - i : LINEMAX;
        memcpy(lines[nl], data + i, k), lines[nl][k] = '\0';
        nl++, i = j + 1;
    }
    const char *allowed[8], *blocked[8];
    size_t na = 0, nb = 0;
    int may_allow_net = 0, may_local = 0;
    for (size_t i = 0; i < nent && i < nl; i++) {
        if (lines[i][0] == '!')
            blocked[nb++] = lines[i] + 1;
        else
            allowed[na++] = lines[i], may_allow_net |= may_be_net(lines[i]), may_local |= may_name_local(lines[i]);
    }
    mxc_error he = {0};
    mxc_hostpolicy *hp = mxc_hostpolicy_new(allowed, na, blocked, nb, &he);
    if (!hp && (he.code == MXC_E_NONE || (strncmp(he.message, "allowed[", 8) != 0 &&
                                          strncmp(he.message, "blocked[", 8) != 0)))
        fail("a refused policy without an \"allowed[i]\"/\"blocked[i]\" error", he.message);
    for (size_t i = nent; i < nl; i++) {
        unsigned port = PORTS[(seed + i) % (sizeof PORTS / sizeof PORTS[0])];
        result r;
        decide(empty, lines[i], port, &r);
        if (r.v != MXC_HP_DENY)
            fail("the empty policy allowed a host", lines[i]);
        if (hp)
            check_one(hp, lines[i], port);
    }
    if (hp && size >= 18)
        for (size_t off = 1; off + 17 <= size && off < 1 + 17 * 8; off += 17)
            addr_check(hp, data + off, may_allow_net, nb > 0, may_local);
    mxc_hostpolicy_free(hp);
    return 0;
}

#ifdef MXC_FUZZ_STANDALONE
/* Entries then hosts, as the fuzzer writes them. */
static const char *const cases[] = {
    "\x02" "example.com\n*.example.org\nexample.com\nEXAMPLE.COM.\nexample.com.evil.com\na.b.example.org\n"
    "user@evil.com",
    "\x01" "bücher.example\nxn--bcher-kva.example\nBÜCHER.EXAMPLE.\nxn--zzzz.example\nb\xfc" "cher.example",
    "\x08" "169.254.169.254\n2852039166\n0xA9FEA9FE\n0251.0376.0251.0376\n169.254.43518\n127.1\n::1\n[::1]",
    "\x03" "127.0.0.0/8\n[::1]:8080\n!127.0.0.2\n127.1\n127.0.0.2\n::1\n::ffff:127.0.0.1\n0x7f.2",
    "\x02" "*.example.com\n!bad.example.com\nbad.example.com\nok.example.com\nexample.com\nexample%2ecom",
    "\x01" "::/0\n64:ff9b::a9fe:a9fe\n2002:a9fe:a9fe::\n2001:0:4136:e378:8000:63bf:80ff:fffe\nfe80::1\nfc00::1",
    "\x07" "a\n*\n*x.com\n10.0.0.1/8\n127.1\n[10.0.0.1]\nexample.com:0443\nx",
    "\x02" "0.0.0.0/1:8080\n128.0.0.0/1:8080\n127.0.0.1\n0.0.0.0\n2130706433\n[::ffff:127.0.0.1]\n127.1\n"
    "\x80\x7f\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    "\x02" "::/0\n0.0.0.0/0\n::1\n::\n::127.0.0.1\n64:ff9b::7f00:1\n2002:7f00:1::\n0\n0.1.2.3",
};

int main(int argc, char **argv)
{
    /* the reference sees the attacks */
    static const uint8_t v6[][16] = {{[15] = 1}, {0, 0x64, 0xff, 0x9b, [12] = 169, 254, 169, 254},
                                     {0x20, 0x02, 169, 254, 169, 254}, {0xfe, 0x80, [15] = 1}};
    int bad = 0;
    for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++)
        if (!ref_v6(v6[i]))
            fprintf(stderr, "the reference misses special address %zu\n", i), bad = 1;
    for (size_t i = 0; argc < 2 && i < sizeof cases / sizeof cases[0]; i++)
        LLVMFuzzerTestOneInput((const uint8_t *)cases[i], strlen(cases[i]));
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp)
            continue;
        static unsigned char buf[8193];
        size_t n = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        LLVMFuzzerTestOneInput(buf, n);
    }
    return bad;
}
#endif
