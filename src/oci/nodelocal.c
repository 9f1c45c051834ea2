/* nodelocal.c — see nodelocal.h.  Every address is held as IPv6 (IPv4 as ::ffff:a.b.c.d, its
 * prefix length + 96), so one comparison serves both families and the forms embedding IPv4. */
#include "nodelocal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

typedef struct {
    uint8_t b[16];
    unsigned plen;
} pfx;

typedef struct {
    pfx p;
    char what[80];
} forbidden;

#define NFORBIDDEN (3 * 5 + 3)

static const uint8_t MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* the first plen bits of a and b are equal */
static bool match(const uint8_t *a, const uint8_t *b, unsigned plen)
{
    unsigned full = plen / 8, rest = plen % 8;
    if (memcmp(a, b, full) != 0)
        return false;
    return rest == 0 || ((a[full] ^ b[full]) & (0xff << (8 - rest))) == 0;
}

/* prefixes nest or are disjoint: they meet when the shorter covers the longer */
static bool meets(const pfx *x, const pfx *y)
{
    return match(x->b, y->b, x->plen < y->plen ? x->plen : y->plen);
}

static bool covers(const pfx *x, const pfx *y)
{
    return x->plen <= y->plen && match(y->b, x->b, x->plen);
}

/* "a.b.c.d[/n]" (v6 false) or an IPv6 address "[/n]": 0 and *p (host bits cleared), or -1. */
static int parse_pfx(const char *text, bool v6, pfx *p)
{
    char buf[64];
    if (!text || strlen(text) >= sizeof buf)
        return -1;
    strcpy(buf, text);
    char *slash = strchr(buf, '/'), *end;
    unsigned long len = v6 ? 128 : 32;
    if (slash) {
        *slash = '\0';
        len = strtoul(slash + 1, &end, 10);
        if (end == slash + 1 || *end || len > (v6 ? 128u : 32u))
            return -1;
    }
    memset(p, 0, sizeof *p);
    if (v6) {
        if (inet_pton(AF_INET6, buf, p->b) != 1)
            return -1;
        p->plen = (unsigned)len;
    } else {
        memcpy(p->b, MAPPED, 12);
        if (inet_pton(AF_INET, buf, p->b + 12) != 1)
            return -1;
        p->plen = (unsigned)len + 96;
    }
    for (unsigned bit = p->plen; bit < 128; bit++)
        p->b[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
    return 0;
}

/* An allowedHosts entry (src/proxy/hostpolicy.h's forms: [v6]:port, bare v6, v4 or CIDR with
 * :port): 1 and *p when it names addresses, 0 when it is a name. */
static int entry_pfx(const char *s, pfx *p)
{
    char buf[256];
    if (!s || strlen(s) >= sizeof buf)
        return 0;
    strcpy(buf, s);
    char *host = buf, *c;
    bool v6 = false;
    if (buf[0] == '[') {
        if (!(c = strchr(buf, ']')))
            return 0;
        *c = '\0', host = buf + 1, v6 = true;
    } else if ((c = strchr(buf, ':')) && strchr(c + 1, ':')) {
        v6 = true;
    } else if (c) {
        *c = '\0';
    }
    return parse_pfx(host, v6, p) == 0;
}

/* What an annotation may not reach: loopback, "this host" and link-local, and each in the IPv6
 * forms that embed IPv4 (hostpolicy.c's embedded_v4); IPv6's own first, then IPv4's by address
 * and form (LINK_LOCAL_V4: 169.254.0.0/16 as IPv4). */
#define LINK_LOCAL_V4 (3 + 2 * 5)
static size_t forbidden_list(forbidden *f)
{
    static const struct {
        uint8_t a[4];
        unsigned len;
        const char *what;
    } V4[] = {{{127, 0, 0, 0}, 8, "loopback 127.0.0.0/8"},
              {{0, 0, 0, 0}, 8, "this host 0.0.0.0/8"},
              {{169, 254, 0, 0}, 16, "link-local 169.254.0.0/16"}};
    static const struct {
        uint8_t head[12];
        unsigned at;
        const char *form;
    } FORMS[] = {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 12, ""},
                 {{0}, 12, " as IPv4-compatible IPv6"},
                 {{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, 12, " as SIIT IPv6"},
                 {{0, 0x64, 0xff, 0x9b}, 12, " as NAT64 IPv6"},
                 {{0x20, 0x02}, 2, " as 6to4 IPv6"}};
    size_t n = 0;
    f[n++] = (forbidden){{{0}, 128}, "this host ::"};
    f[n++] = (forbidden){{{[15] = 1}, 128}, "loopback ::1"};
    f[n++] = (forbidden){{{0xfe, 0x80}, 10}, "link-local fe80::/10"};
    for (size_t i = 0; i < sizeof V4 / sizeof V4[0]; i++)
        for (size_t k = 0; k < sizeof FORMS / sizeof FORMS[0]; k++) {
            memset(&f[n], 0, sizeof f[n]);
            memcpy(f[n].p.b, FORMS[k].head, FORMS[k].at);
            memcpy(f[n].p.b + FORMS[k].at, V4[i].a, 4);
            f[n].p.plen = FORMS[k].at * 8 + V4[i].len;
            snprintf(f[n].what, sizeof f[n].what, "%s%s", V4[i].what, FORMS[k].form);
            n++;
        }
    return n;
}

/* The node's own addresses, read once when an entry of one address asks. */
typedef struct {
    bool read;
    mxc_net_own *v4;
    uint8_t (*v6)[16];
    size_t nv6;
} node;

static int node_read(node *nd, mxc_error *e)
{
    if (nd->read)
        return 0;
    int rc = 0;
    if (!(nd->v4 = mxc_net_own_read(&rc)))
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.nodelocal", -rc, NULL, "cannot read this host's addresses");
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.nodelocal", errno, NULL, "cannot read this host's addresses");
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6)
            continue;
        uint8_t(*g)[16] = realloc(nd->v6, (nd->nv6 + 1) * sizeof *g);
        if (!g)
            break;
        nd->v6 = g;
        memcpy(nd->v6[nd->nv6++], ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr.s6_addr, 16);
    }
    freeifaddrs(ifs);
    nd->read = true;
    return 0;
}

static bool node_has(const node *nd, const pfx *p)
{
    if (match(p->b, MAPPED, 96)) {
        const uint8_t *a = p->b + 12;
        return mxc_net_own_has(nd->v4, (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3]);
    }
    for (size_t i = 0; i < nd->nv6; i++)
        if (!memcmp(nd->v6[i], p->b, 16))
            return true;
    return false;
}

static int refuse(mxc_error *e, const char *field, const char *text, const char *what)
{
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s \"%.80s\" reaches %s: the node's own destinations (loopback, "
                   "link-local, its addresses) are its operator's, not an annotation's: refused (the operator "
                   "allows them with " OCI_ALLOW_NODE_LOCAL_ENV "=1 in mxc-oci's environment, or exact ADDRESS:PORT "
                   "endpoints with " OCI_ALLOW_NODE_LOCAL_ENDPOINTS_ENV ")", field, text, what);
}

/* The operator's exact endpoints (OCI_ALLOW_NODE_LOCAL_ENDPOINTS_ENV): addresses as pfx bytes. */
#define MAX_ENDPOINTS 16
typedef struct {
    uint8_t a[16];
    unsigned port;
} endpoint;

typedef struct {
    endpoint ep[MAX_ENDPOINTS];
    size_t n;
} endpoints;

/* "1".."65535", decimal digits alone, no leading zero. */
static bool parse_port(const char *s, unsigned *port)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 5 || s[n] || s[0] == '0')
        return false;
    unsigned long v = strtoul(s, NULL, 10);
    *port = (unsigned)v;
    return v <= 65535;
}

/* Exactly "a.b.c.d:port" or "[v6]:port": true and *out. */
static bool parse_endpoint(const char *s, endpoint *out)
{
    char buf[80];
    if (!s || strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    char *host = buf, *port;
    bool v6 = buf[0] == '[';
    if (v6) {
        char *c = strchr(buf, ']');
        if (!c || c[1] != ':')
            return false;
        *c = '\0', host = buf + 1, port = c + 2;
    } else {
        char *c = strchr(buf, ':');
        if (!c || strchr(c + 1, ':'))
            return false;
        *c = '\0', port = c + 1;
    }
    memset(out, 0, sizeof *out);
    if (!parse_port(port, &out->port))
        return false;
    if (v6)
        return inet_pton(AF_INET6, host, out->a) == 1;
    memcpy(out->a, MAPPED, 12);
    return inet_pton(AF_INET, host, out->a + 12) == 1;
}

/* The variable's comma-separated endpoints; unset or empty: none.  0, or -1 naming the entry. */
static int endpoints_read(endpoints *eps, mxc_error *e)
{
    const char *v = getenv(OCI_ALLOW_NODE_LOCAL_ENDPOINTS_ENV);
    eps->n = 0;
    if (!v || !*v)
        return 0;
    for (const char *p = v;; p++) {
        size_t len = strcspn(p, ",");
        char item[80];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item - 1 ? len : sizeof item - 1), p);
        if (eps->n == MAX_ENDPOINTS)
            return mxc_err(e, MXC_E_BACKEND_ERROR, OCI_ALLOW_NODE_LOCAL_ENDPOINTS_ENV " in mxc-oci's environment: "
                           "more than %d endpoints", MAX_ENDPOINTS);
        if (len >= sizeof item || !parse_endpoint(item, &eps->ep[eps->n]))
            return mxc_err(e, MXC_E_BACKEND_ERROR, OCI_ALLOW_NODE_LOCAL_ENDPOINTS_ENV " in mxc-oci's environment: "
                           "\"%.80s\" is not an endpoint (exactly IPV4:PORT or [IPV6]:PORT, port 1-65535): refused",
                           item);
        eps->n++;
        p += len;
        if (!*p)
            return 0;
    }
}

static bool endpoint_listed(const endpoints *eps, const uint8_t *a, unsigned port)
{
    for (size_t i = 0; i < eps->n; i++)
        if (eps->ep[i].port == port && !memcmp(eps->ep[i].a, a, 16))
            return true;
    return false;
}

/* A rule's ports exactly one TCP port (no range): it, else 0. */
static unsigned rule_port(const json_t *rule)
{
    const json_t *ports = json_object_get(rule, "ports"), *pt = json_array_get(ports, 0);
    const json_t *port = json_object_get(pt, "port"), *end = json_object_get(pt, "endPort");
    const char *proto = json_string_value(json_object_get(pt, "protocol"));
    if (json_array_size(ports) != 1 || !proto || strcmp(proto, "tcp") || !json_is_integer(port) ||
        (end && !json_equal(end, port)))
        return 0;
    json_int_t v = json_integer_value(port);
    return v >= 1 && v <= 65535 ? (unsigned)v : 0;
}

/* One allowed destination p (field, text: how the policy names it), less the except parts. */
static int check_one(const pfx *p, const pfx *except, size_t nexcept, const char *field, const char *text,
                     node *nd, mxc_error *e)
{
    forbidden f[NFORBIDDEN];
    size_t nf = forbidden_list(f);
    for (size_t i = 0; i < nf; i++) {
        if (!meets(p, &f[i].p))
            continue;
        const pfx *part = p->plen >= f[i].p.plen ? p : &f[i].p;
        bool carved = false;
        for (size_t k = 0; k < nexcept && !carved; k++)
            carved = covers(&except[k], part);
        if (!carved)
            return refuse(e, field, text, f[i].what);
    }
    if (p->plen == 128) {
        if (node_read(nd, e) < 0)
            return -1;
        if (node_has(nd, p))
            return refuse(e, field, text, "an address of this node");
    }
    return 0;
}

/* A peer {cidr, except}: the cidr less its except parts. */
static int check_peer(const json_t *peer, const char *field, const endpoints *eps, unsigned port, node *nd,
                      mxc_error *e)
{
    const char *text = json_string_value(json_object_get(peer, "cidr"));
    pfx p, x[64];
    if (!text || (parse_pfx(text, false, &p) < 0 && parse_pfx(text, true, &p) < 0))
        return 0; /* the engine refused it already */
    if (p.plen == 128 && port && endpoint_listed(eps, p.b, port))
        return 0; /* one address, one TCP port: an endpoint the operator named */
    const json_t *except = json_object_get(peer, "except");
    size_t nx = 0;
    for (size_t k = 0; k < json_array_size(except) && nx < 64; k++) {
        const char *xt = json_string_value(json_array_get(except, k));
        if (xt && (parse_pfx(xt, false, &x[nx]) == 0 || parse_pfx(xt, true, &x[nx]) == 0))
            nx++;
    }
    return check_one(&p, x, nx, field, text, nd, e);
}

/* egress.allow: every rule's peers; a rule without `to` allows every address. */
static int check_allow(const json_t *allow, const endpoints *eps, node *nd, mxc_error *e)
{
    for (size_t i = 0; i < json_array_size(allow); i++) {
        const json_t *rule = json_array_get(allow, i), *to = json_object_get(rule, "to");
        char field[96];
        if (!to) {
            pfx any = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96};
            snprintf(field, sizeof field, "network.egress.allow[%zu] (no to: every address)", i);
            if (check_one(&any, NULL, 0, field, "0.0.0.0/0", nd, e) < 0)
                return -1;
        }
        for (size_t j = 0; j < json_array_size(to); j++) {
            snprintf(field, sizeof field, "network.egress.allow[%zu].to[%zu].cidr", i, j);
            if (check_peer(json_array_get(to, j), field, eps, rule_port(rule), nd, e) < 0)
                return -1;
        }
    }
    return 0;
}

/* Whether egress.deny has a rule for every port whose peer covers p whole (or a rule for
 * every port and address). */
static bool deny_covers(const json_t *deny, const pfx *p)
{
    for (size_t i = 0; i < json_array_size(deny); i++) {
        const json_t *rule = json_array_get(deny, i), *to = json_object_get(rule, "to");
        if (json_object_get(rule, "ports"))
            continue;
        if (!to)
            return true;
        for (size_t j = 0; j < json_array_size(to); j++) {
            const json_t *peer = json_array_get(to, j);
            pfx c;
            const char *text = json_string_value(json_object_get(peer, "cidr"));
            if (text && parse_pfx(text, false, &c) == 0 && covers(&c, p) && !json_array_size(json_object_get(peer,
                                                                                                         "except")))
                return true;
        }
    }
    return false;
}

int oci_nodelocal_check(const mxc_net_section *s, const json_t *network, mxc_net_model model, mxc_error *e)
{
    const char *allow = getenv(OCI_ALLOW_NODE_LOCAL_ENV);
    if (allow && !strcmp(allow, "1"))
        return 0;
    if (allow && *allow)
        return mxc_err(e, MXC_E_BACKEND_ERROR, OCI_ALLOW_NODE_LOCAL_ENV "=%.40s in mxc-oci's environment: only 1 "
                       "(allow) is known", allow);
    if (model == MXC_NETM_PROXY)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "network.proxy (a proxy endpoint on the node's loopback) reaches "
                       "the node itself: refused (the operator allows it with " OCI_ALLOW_NODE_LOCAL_ENV "=1 in "
                       "mxc-oci's environment)");
    endpoints eps;
    if (endpoints_read(&eps, e) < 0)
        return -1;
    node nd = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nallowed; i++) {
        pfx p;
        endpoint ep;
        char field[64];
        snprintf(field, sizeof field, "network.allowedHosts[%zu]", i);
        if (parse_endpoint(s->allowed_hosts[i], &ep) && endpoint_listed(&eps, ep.a, ep.port))
            continue; /* exactly an endpoint the operator named */
        if (entry_pfx(s->allowed_hosts[i], &p))
            rc = check_one(&p, NULL, 0, field, s->allowed_hosts[i], &nd, e);
    }
    const json_t *egress = json_object_get(network, "egress");
    if (rc == 0 && egress)
        rc = check_allow(json_object_get(egress, "allow"), &eps, &nd, e);
    const char *def = json_string_value(json_object_get(egress, "default"));
    forbidden f[NFORBIDDEN];
    forbidden_list(f);
    const pfx *link_local = &f[LINK_LOCAL_V4].p;
    if (rc == 0 && def && !strcmp(def, "allow") && model == MXC_NETM_DIRECT &&
        !deny_covers(json_object_get(egress, "deny"), link_local))
        rc = refuse(e, "network.egress.default", "allow", "link-local 169.254.0.0/16 (deny it with an egress.deny "
                    "rule to 169.254.0.0/16 for every port)");
    mxc_net_own_free(nd.v4);
    free(nd.v6);
    return rc;
}
