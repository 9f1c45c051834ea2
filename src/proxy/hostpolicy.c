/* hostpolicy.c — see hostpolicy.h.  Owns the parsing of policy entries, the
 * normalisation of a requested host (name, IDN, every resolver IP form) and
 * the two decisions: by name before DNS, by address after it.
 *
 * References: RFC 6890 (special-purpose address registries), RFC 6052 (NAT64
 * 64:ff9b::/96), RFC 8215 (local-use NAT64 64:ff9b:1::/48), RFC 3056 (6to4),
 * RFC 4380 (Teredo), RFC 4291 §2.5.5 (IPv4-compatible and -mapped), RFC 6761
 * (localhost), inet_aton(3) (the numbers-and-dots forms), UTS #46 / IDNA2008
 * (libidn2).
 *
 * Decisions beyond the header, all on the side of denying:
 * - Entry syntax: `name[:port]`, `*.name[:port]`, `a.b.c.d[/len][:port]`
 *   (dotted quad only), bare `v6[/len]` (no port), `[v6]:port` and
 *   `[v6/len]:port` (a v6 CIDR with a port goes inside the brackets).
 * - Ports: an allowed entry without a port covers 80 and 443; a BLOCKED entry
 *   without a port blocks every port (the asymmetry is deliberate).
 * - Addresses are kept as 16 bytes, IPv4 as ::ffff:a.b.c.d.  A v6 entry
 *   inside ::ffff:0:0/96 is an IPv4 entry.  A v6 entry wider than that
 *   (say ::/0) still BLOCKS IPv4 but never ALLOWS it.  A blocked IPv4 entry
 *   also blocks every v6 address that embeds a covered IPv4 one
 *   (IPv4-compatible, SIIT ::ffff:0:0:0/96, NAT64, 6to4, Teredo server or
 *   client); allowing one needs an allowed v6 entry covering the v6 address.
 * - Special, besides the brief's list: SIIT ::ffff:0:0:0/96 judged by its
 *   IPv4, 64:ff9b:1::/48 (local-use NAT64) and fec0::/10 (old site-local).
 * - check_addr honours the sockaddr's port when it is set: a special address
 *   is allowed only by an allowed CIDR/literal whose ports contain it (port
 *   0 = unknown: the address alone decides).  A blocked entry with a port
 *   blocks that port, and any port when the sockaddr's is 0.
 * - A request host whose last label is numeric (digits, or 0x and hex) is an
 *   IPv4 literal or bad-host, never a name; one with ':' or '[' is IPv6 or
 *   bad-host.  Pure-ASCII names without an `xn--` label skip libidn2 (which
 *   would refuse real names such as `r3---sn-x.googlevideo.com`). */
#include "hostpolicy.h"

#include <arpa/inet.h>
#include <idn2.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NAME_MAXLEN 253 /* without the trailing dot */
#define INPUT_MAX 1024  /* bytes of a host or entry looked at, at most */

typedef enum { K_NAME, K_WILD, K_NET } kind;

typedef struct {
    kind k;
    bool blocked;
    bool v4;       /* K_NET inside ::ffff:0:0/96 */
    unsigned port; /* 0: none written */
    unsigned plen; /* K_NET: of the 128 bits */
    uint8_t addr[16];
    char name[NAME_MAXLEN + 1]; /* K_NAME, K_WILD (without "*.") */
} entry;

struct mxc_hostpolicy {
    entry *e;
    size_t n;
};

typedef struct {
    uint8_t b[16]; /* IPv4 as ::ffff:a.b.c.d */
    bool v4;
} ipaddr;

static const uint8_t MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* ---- names ---------------------------------------------------------------- */

static bool has_alabel(const char *s)
{
    for (const char *p = s; p; p = strchr(p, '.'), p = p ? p + 1 : NULL)
        if (strncasecmp(p, "xn--", 4) == 0)
            return true;
    return false;
}

/* Lowercase, one trailing dot off, [a-z0-9-_.] only, labels 1..63, total
 * <= 253: 0 and out[NAME_MAXLEN + 1], or -1. */
static int finish_name(const char *s, char *out)
{
    size_t n = strlen(s);
    if (n && s[n - 1] == '.')
        n--;
    if (n == 0 || n > NAME_MAXLEN)
        return -1;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == '.') {
            if (label == 0)
                return -1;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
            if (++label > 63)
                return -1;
        } else {
            return -1;
        }
        out[i] = c;
    }
    if (label == 0)
        return -1;
    out[n] = '\0';
    return 0;
}

/* A host name as a resolver would look it up: 0 and out, or -1. */
static int norm_name(const char *in, char *out)
{
    size_t n = strnlen(in, INPUT_MAX + 1);
    if (n == 0 || n > INPUT_MAX)
        return -1;
    bool ascii = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c <= 0x20 || c == 0x7f || strchr("%@/\\[]:*", c))
            return -1;
        ascii = ascii && c < 0x80;
    }
    if (ascii && !has_alabel(in))
        return finish_name(in, out);
    uint8_t *idn = NULL;
    int rc = idn2_lookup_u8((const uint8_t *)in, &idn, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
    if (rc == IDN2_OK && idn)
        rc = finish_name((const char *)idn, out);
    else
        rc = -1;
    idn2_free(idn);
    return rc;
}

/* The last label is all digits, or 0x and hex digits: a resolver may read
 * the name as an IPv4 address, so it is never a name. */
static bool numeric_tail(const char *name)
{
    const char *l = strrchr(name, '.');
    l = l ? l + 1 : name;
    if (l[0] == '0' && l[1] == 'x')
        return strspn(l + 2, "0123456789abcdef") == strlen(l + 2);
    return strspn(l, "0123456789") == strlen(l);
}

static bool is_localhost(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "localhost") == 0 || (n > 10 && strcmp(name + n - 10, ".localhost") == 0);
}

/* ---- addresses ------------------------------------------------------------ */

static int digit_in(char c, unsigned base)
{
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    return d >= 0 && (unsigned)d < base ? d : -1;
}

/* inet_aton(3)'s forms, strictly: 1..4 parts, each decimal, 0-octal or
 * 0x-hex (at least one digit), the last filling the bytes left; nothing
 * after.  s is lowercase. */
static bool parse_v4_any(const char *s, uint32_t *out)
{
    uint32_t part[4], a = 0;
    int np = 0;
    for (const char *p = s;; p++) {
        unsigned base = 10;
        uint64_t v = 0;
        size_t nd = 0;
        if (p[0] == '0' && p[1] == 'x')
            base = 16, p += 2;
        else if (p[0] == '0')
            base = 8;
        for (int d; (d = digit_in(*p, base)) >= 0; p++, nd++)
            if ((v = v * base + (unsigned)d) > 0xffffffffu)
                return false;
        if (nd == 0 || np == 4)
            return false;
        part[np++] = (uint32_t)v;
        if (*p == '\0')
            break;
        if (*p != '.')
            return false;
    }
    for (int i = 0; i < np - 1; i++) {
        if (part[i] > 0xff)
            return false;
        a |= part[i] << (24 - 8 * i);
    }
    unsigned bits = 32 - 8 * (unsigned)(np - 1);
    if (bits < 32 && part[np - 1] >> bits)
        return false;
    *out = a | part[np - 1];
    return true;
}

static void set_v4(ipaddr *ip, uint32_t a)
{
    memcpy(ip->b, MAPPED, 12);
    ip->b[12] = (uint8_t)(a >> 24), ip->b[13] = (uint8_t)(a >> 16);
    ip->b[14] = (uint8_t)(a >> 8), ip->b[15] = (uint8_t)a;
    ip->v4 = true;
}

static uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void set_v6(ipaddr *ip, const uint8_t b[16])
{
    memcpy(ip->b, b, 16);
    ip->v4 = memcmp(b, MAPPED, 12) == 0;
}

static bool prefix_match(const uint8_t *a, const uint8_t *net, unsigned plen)
{
    size_t whole = plen / 8;
    unsigned rest = plen % 8;
    if (memcmp(a, net, whole) != 0)
        return false;
    return rest == 0 || ((a[whole] ^ net[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool v4_special(uint32_t a)
{
    static const struct {
        uint32_t net;
        unsigned len;
    } sp[] = {
        {0x00000000, 8},  {0x0a000000, 8},  {0x64400000, 10}, {0x7f000000, 8}, {0xa9fe0000, 16}, {0xac100000, 12},
        {0xc0000000, 24}, {0xc0a80000, 16}, {0xc6120000, 15}, {0xe0000000, 4}, {0xf0000000, 4},
    };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        if (((a ^ sp[i].net) & (0xffffffffu << (32 - sp[i].len))) == 0)
            return true;
    return false;
}

/* The IPv4 addresses a v6 one carries (RFC 4291, 6052, 3056, 4380): their
 * count, into out[2]. */
static int embedded_v4(const uint8_t b[16], uint32_t out[2])
{
    static const uint8_t compat[12] = {0}, siit[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0},
                         nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (memcmp(b, compat, 12) == 0 || memcmp(b, MAPPED, 12) == 0 || memcmp(b, siit, 12) == 0 ||
        memcmp(b, nat64, 12) == 0) {
        out[0] = be32(b + 12);
        return 1;
    }
    if (b[0] == 0x20 && b[1] == 0x02) {
        out[0] = be32(b + 2);
        return 1;
    }
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
        out[0] = be32(b + 4);
        out[1] = ~be32(b + 12);
        return 2;
    }
    return 0;
}

static bool is_special(const ipaddr *ip)
{
    static const struct {
        uint8_t net[16];
        unsigned len;
    } sp[] = {
        {{0}, 128},
        {{[15] = 1}, 128},
        {{0xfe, 0x80}, 10},
        {{0xfe, 0xc0}, 10},
        {{0xfc}, 7},
        {{0xff}, 8},
        {{0, 0x64, 0xff, 0x9b, 0, 1}, 48},
    };
    if (ip->v4)
        return v4_special(be32(ip->b + 12));
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        if (prefix_match(ip->b, sp[i].net, sp[i].len))
            return true;
    uint32_t v4[2];
    int n = embedded_v4(ip->b, v4);
    for (int i = 0; i < n; i++)
        if (v4_special(v4[i]))
            return true;
    return false;
}

/* Host-local: delivered to this host whatever its interfaces — 127/8, and
 * 0/8 (Linux connects 0.0.0.0 to loopback); ::1, ::; and every IPv6 form
 * that embeds one of them. */
static bool v4_host_local(uint32_t a)
{
    return a >> 24 == 127 || a >> 24 == 0;
}

static bool host_local(const ipaddr *ip)
{
    static const uint8_t any[16] = {0}, one[16] = {[15] = 1};
    if (ip->v4)
        return v4_host_local(be32(ip->b + 12));
    if (!memcmp(ip->b, any, 16) || !memcmp(ip->b, one, 16))
        return true;
    uint32_t v4[2];
    int n = embedded_v4(ip->b, v4);
    for (int i = 0; i < n; i++)
        if (v4_host_local(v4[i]))
            return true;
    return false;
}

/* ---- entries -------------------------------------------------------------- */

/* 1..65535, digits only, no leading zero. */
static int parse_num(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 5 || strspn(s, "0123456789") != n || (s[0] == '0' && n > 1))
        return -1;
    unsigned long v = strtoul(s, NULL, 10);
    if (v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static const char *parse_net(char *host, bool v6, entry *e)
{
    char *slash = strchr(host, '/');
    unsigned plen = v6 ? 128 : 32;
    if (slash) {
        *slash = '\0';
        if (parse_num(slash + 1, 0, plen, &plen) < 0)
            return v6 ? "bad prefix length (0..128, no leading zeros)" : "bad prefix length (0..32, no leading zeros)";
    }
    uint8_t b[16];
    if (inet_pton(v6 ? AF_INET6 : AF_INET, host, b) != 1)
        return v6 ? "not an IPv6 address" : "not a dotted-quad IPv4 address";
    if (v6) {
        memcpy(e->addr, b, 16);
        e->v4 = plen >= 96 && memcmp(b, MAPPED, 12) == 0;
    } else {
        memcpy(e->addr, MAPPED, 12);
        memcpy(e->addr + 12, b, 4);
        plen += 96, e->v4 = true;
    }
    for (unsigned bit = plen; bit < 128; bit++)
        if (e->addr[bit / 8] & (0x80 >> (bit % 8)))
            return "host bits set after the prefix length";
    e->k = K_NET, e->plen = plen;
    return NULL;
}

static const char *parse_name(const char *host, entry *e)
{
    if (strchr(host, '*'))
        return "'*' only as a leading \"*.\"";
    if (norm_name(host, e->name) < 0)
        return "not a valid host name";
    if (numeric_tail(e->name))
        return "an IPv4 address must be a dotted quad";
    return NULL;
}

/* Splits off the port and sends the rest to the parser of its kind. */
static const char *parse_entry(const char *s, entry *e)
{
    size_t n = s ? strnlen(s, INPUT_MAX + 1) : 0;
    if (n == 0)
        return "empty entry";
    if (n > INPUT_MAX)
        return "entry too long";
    char buf[INPUT_MAX + 1], *host = buf, *port = NULL, *c;
    bool v6 = false;
    memcpy(buf, s, n + 1);
    if (buf[0] == '[') {
        if (!(c = strchr(buf, ']')))
            return "'[' without ']'";
        *c = '\0', host = buf + 1, v6 = true;
        if (c[1] == ':')
            port = c + 2;
        else if (c[1])
            return "only \":port\" may follow ']'";
    } else if ((c = strchr(buf, ':')) && strchr(c + 1, ':')) {
        v6 = true; /* a bare IPv6 address: no port */
    } else if (c) {
        *c = '\0', port = c + 1;
    }
    if (port && parse_num(port, 1, 65535, &e->port) < 0)
        return "bad port (1..65535, no leading zeros)";
    if (v6 || strchr(host, '/'))
        return parse_net(host, v6, e);
    if (host[0] == '*') {
        if (host[1] != '.')
            return "a wildcard is \"*.\" and a name";
        e->k = K_WILD;
        return parse_name(host + 2, e);
    }
    if (strspn(host, "0123456789.") == strlen(host) && strchr(host, '.') && !strstr(host, ".."))
        if (parse_net(host, false, e) == NULL)
            return NULL;
    e->k = K_NAME;
    return parse_name(host, e);
}

mxc_hostpolicy *mxc_hostpolicy_new(const char *const *allowed, size_t nallowed, const char *const *blocked,
                                   size_t nblocked, mxc_error *err)
{
    mxc_hostpolicy *hp = calloc(1, sizeof *hp);
    size_t n = nallowed + nblocked;
    if (!hp || n < nallowed || !(hp->e = calloc(n ? n : 1, sizeof *hp->e))) {
        mxc_err(err, MXC_E_MALFORMED_REQUEST, "out of memory");
        mxc_hostpolicy_free(hp);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        bool blk = i >= nallowed;
        size_t j = blk ? i - nallowed : i;
        const char *const *list = blk ? blocked : allowed;
        entry *e = &hp->e[hp->n++];
        e->blocked = blk;
        const char *why = parse_entry(list ? list[j] : NULL, e);
        if (why) {
            mxc_err(err, MXC_E_MALFORMED_REQUEST, "%s[%zu]: %s", blk ? "blocked" : "allowed", j, why);
            mxc_hostpolicy_free(hp);
            return NULL;
        }
    }
    return hp;
}

void mxc_hostpolicy_free(mxc_hostpolicy *hp)
{
    if (hp)
        free(hp->e);
    free(hp);
}

/* ---- decisions ------------------------------------------------------------ */

/* Whether e's ports contain port; 0 = unknown (check_addr): any. */
static bool port_ok(const entry *e, unsigned port)
{
    if (port == 0 || (e->blocked && e->port == 0))
        return true;
    return e->port ? e->port == port : port == 80 || port == 443;
}

static bool name_match(const entry *e, const char *name)
{
    if (e->k == K_NAME)
        return strcmp(e->name, name) == 0;
    if (e->k != K_WILD)
        return false;
    size_t a = strlen(name), b = strlen(e->name);
    return a > b + 1 && name[a - b - 1] == '.' && memcmp(name + a - b, e->name, b) == 0;
}

static bool net_blocks(const entry *e, const ipaddr *ip)
{
    if (prefix_match(ip->b, e->addr, e->plen))
        return true;
    uint32_t v4[2];
    int n = ip->v4 || !e->v4 ? 0 : embedded_v4(ip->b, v4);
    for (int i = 0; i < n; i++) {
        ipaddr m;
        set_v4(&m, v4[i]);
        if (prefix_match(m.b, e->addr, e->plen))
            return true;
    }
    return false;
}

static bool addr_blocked(const mxc_hostpolicy *hp, const ipaddr *ip, unsigned port)
{
    for (size_t i = 0; hp && i < hp->n; i++)
        if (hp->e[i].blocked && hp->e[i].k == K_NET && port_ok(&hp->e[i], port) && net_blocks(&hp->e[i], ip))
            return true;
    return false;
}

/* Whether allowed entry e, which covers ip, may admit it.  A host-local
 * address only by an entry that names host loopback itself: an IPv4 one
 * lying inside 127/8 or 0/8 (127.0.0.1, 127.0.0.0/8, 127.9.0.0/16,
 * 0.0.0.0), an IPv6 one of exactly that address (::1, [64:ff9b::7f00:1]);
 * a wider CIDR (0.0.0.0/0, 0.0.0.0/1, 126.0.0.0/7, ::/0) covers without
 * naming.  own: the address is one of this host's (the dial's route
 * lookup): only an entry of exactly that address (/32, /128) names it. */
static bool names(const entry *e, const ipaddr *ip, bool own)
{
    if (host_local(ip))
        return ip->v4 ? e->plen >= 96 + 8 && v4_host_local(be32(e->addr + 12)) : e->plen == 128;
    return !own || e->plen == 128;
}

/* 2: an allowed CIDR/literal admits ip with port; 1: without it; 0: none. */
static int addr_allowed(const mxc_hostpolicy *hp, const ipaddr *ip, unsigned port, bool own)
{
    int best = 0;
    for (size_t i = 0; hp && i < hp->n; i++) {
        const entry *e = &hp->e[i];
        if (!e->blocked && e->k == K_NET && e->v4 == ip->v4 && prefix_match(ip->b, e->addr, e->plen) &&
            names(e, ip, own))
            best = port_ok(e, port) ? 2 : best > 1 ? best : 1;
        if (best == 2)
            break;
    }
    return best;
}

static void to_sockaddr(const ipaddr *ip, unsigned port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (ip->v4) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        memcpy(&in->sin_addr, ip->b + 12, 4);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        memcpy(&in6->sin6_addr, ip->b, 16);
    }
}

static mxc_hp_verdict deny(const char **reason, const char *why)
{
    *reason = why;
    return MXC_HP_DENY;
}

static mxc_hp_verdict decide_literal(const mxc_hostpolicy *hp, const ipaddr *ip, unsigned port,
                                     struct sockaddr_storage *literal, const char **reason)
{
    if (!literal)
        return deny(reason, "bad-host");
    to_sockaddr(ip, port, literal);
    if (addr_blocked(hp, ip, port))
        return deny(reason, "blocked");
    int cover = addr_allowed(hp, ip, port, false);
    if (cover == 2)
        return MXC_HP_ALLOW_ADDR;
    if (cover == 1)
        return deny(reason, "port-not-allowed");
    return deny(reason, is_special(ip) ? "special-address" : "not-allowed");
}

static mxc_hp_verdict decide_name(const mxc_hostpolicy *hp, const char *name, unsigned port, char *canon, size_t csz,
                                  const char **reason)
{
    bool named = false;
    for (size_t i = 0; hp && i < hp->n; i++)
        if (hp->e[i].blocked && name_match(&hp->e[i], name) && port_ok(&hp->e[i], port))
            return deny(reason, "blocked");
    for (size_t i = 0; hp && i < hp->n; i++) {
        if (hp->e[i].blocked || !name_match(&hp->e[i], name))
            continue;
        named = true;
        if (!port_ok(&hp->e[i], port))
            continue;
        if (!canon || strlen(name) >= csz)
            return deny(reason, "bad-host");
        strcpy(canon, name);
        return MXC_HP_ALLOW_NAME;
    }
    if (is_localhost(name))
        return deny(reason, "special-address");
    return deny(reason, named ? "port-not-allowed" : "not-allowed");
}

/* An IPv6 literal, bare or in brackets: 0 and ip, or -1. */
static int parse_v6_host(const char *host, ipaddr *ip)
{
    char buf[INET6_ADDRSTRLEN + 2];
    size_t n = strnlen(host, sizeof buf);
    if (n == sizeof buf)
        return -1;
    memcpy(buf, host, n + 1);
    char *s = buf;
    if (s[0] == '[') {
        if (n < 2 || s[n - 1] != ']')
            return -1;
        s[n - 1] = '\0', s++;
    }
    uint8_t b[16];
    if (inet_pton(AF_INET6, s, b) != 1)
        return -1;
    set_v6(ip, b);
    return 0;
}

mxc_hp_verdict mxc_hostpolicy_check_name(const mxc_hostpolicy *hp, const char *host, unsigned port, char *canon,
                                         size_t csz, struct sockaddr_storage *literal, const char **reason)
{
    const char *dummy;
    char name[NAME_MAXLEN + 1];
    ipaddr ip;
    uint32_t a;
    reason = reason ? reason : &dummy;
    if (port == 0 || port > 65535)
        return deny(reason, "port-not-allowed");
    if (!host)
        return deny(reason, "bad-host");
    if (host[0] == '[' || strchr(host, ':')) {
        if (parse_v6_host(host, &ip) < 0)
            return deny(reason, "bad-host");
        return decide_literal(hp, &ip, port, literal, reason);
    }
    if (norm_name(host, name) < 0)
        return deny(reason, "bad-host");
    if (numeric_tail(name)) {
        if (!parse_v4_any(name, &a))
            return deny(reason, "bad-host");
        set_v4(&ip, a);
        return decide_literal(hp, &ip, port, literal, reason);
    }
    return decide_name(hp, name, port, canon, csz, reason);
}

static bool decide_addr(const mxc_hostpolicy *hp, const struct sockaddr *addr, bool own, const char **reason)
{
    const char *dummy;
    ipaddr ip;
    unsigned port;
    reason = reason ? reason : &dummy;
    if (addr && addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        set_v4(&ip, ntohl(in->sin_addr.s_addr));
        port = ntohs(in->sin_port);
    } else if (addr && addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        set_v6(&ip, in6->sin6_addr.s6_addr);
        port = ntohs(in6->sin6_port);
    } else {
        *reason = "special-address";
        return false;
    }
    if (addr_blocked(hp, &ip, port)) {
        *reason = "blocked";
        return false;
    }
    if ((is_special(&ip) || own) && addr_allowed(hp, &ip, port, own) != 2) {
        *reason = "special-address";
        return false;
    }
    return true;
}

bool mxc_hostpolicy_check_addr(const mxc_hostpolicy *hp, const struct sockaddr *addr, const char **reason)
{
    return decide_addr(hp, addr, false, reason);
}

bool mxc_hostpolicy_check_dial(const mxc_hostpolicy *hp, const struct sockaddr *addr, bool local, const char **reason)
{
    return decide_addr(hp, addr, local, reason);
}
