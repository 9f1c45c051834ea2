/* netpolicy.c — see netpolicy.h. */
#include "netpolicy.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "thishost.h"

/* A growing script. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} sbuf;

static void put(sbuf *s, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            s->oom = true;
            return;
        }
        if (s->buf && s->len + (size_t)n < s->cap) {
            s->len += (size_t)n;
            return;
        }
        size_t cap = (s->cap ? s->cap * 2 : 1024) + (size_t)n;
        char *g = realloc(s->buf, cap);
        if (!g) {
            s->oom = true;
            return;
        }
        s->buf = g;
        s->cap = cap;
    }
}

typedef struct {
    int family; /* AF_INET / AF_INET6 */
    unsigned char addr[16];
    int len;
} cidr;

/* "a.b.c.d[/n]" or an IPv6 address[/n], host part zero.  0, or -1 with
 * why set (a name is called a hostname). */
static int parse_cidr(const char *s, cidr *c, const char **why)
{
    char a[64];
    *why = "is not an IP address or CIDR";
    if (!s)
        return -1;
    const char *slash = strchr(s, '/');
    size_t alen = slash ? (size_t)(slash - s) : strlen(s);
    if (alen == 0 || alen >= sizeof a)
        return -1;
    memcpy(a, s, alen);
    a[alen] = '\0';
    int bits;
    if (inet_pton(AF_INET, a, c->addr) == 1)
        c->family = AF_INET, bits = 32;
    else if (inet_pton(AF_INET6, a, c->addr) == 1)
        c->family = AF_INET6, bits = 128;
    else {
        bool name = false;
        for (const char *p = a; *p; p++)
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
                name = true;
        if (name)
            *why = "is a hostname: rules take IP addresses and CIDRs only (names are the egress proxy's business)";
        return -1;
    }
    c->len = bits;
    if (slash) {
        const char *p = slash + 1;
        if (!*p || strlen(p) > 3)
            return -1;
        c->len = 0;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return -1;
            c->len = c->len * 10 + (*p - '0');
        }
        if (c->len > bits)
            return -1;
    }
    for (int b = c->len; b < bits; b++)
        if (c->addr[b / 8] & (0x80 >> (b % 8))) {
            *why = "has a non-zero host part";
            return -1;
        }
    return 0;
}

static void put_cidr(sbuf *s, const cidr *c)
{
    char a[INET6_ADDRSTRLEN];
    inet_ntop(c->family, c->addr, a, sizeof a);
    put(s, "%s/%d", a, c->len);
}

static int refuse(mxc_error *e, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s", msg);
}

/* Only the keys named (NULL-terminated) may appear in o. */
static int only_keys(json_t *o, const char *where, const char *const *keys, mxc_error *e)
{
    if (!json_is_object(o))
        return refuse(e, "%s must be an object", where);
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (const char *const *p = keys; *p; p++)
            ok |= strcmp(*p, k) == 0;
        if (!ok)
            return refuse(e, "%s has an unknown field `%.60s`", where, k);
    }
    return 0;
}

static int action(json_t *o, const char *key, const char *where, bool *allow, mxc_error *e)
{
    json_t *v = json_object_get(o, key);
    *allow = false;
    if (!v)
        return 0;
    const char *s = json_string_value(v);
    if (!s || (strcmp(s, "allow") != 0 && strcmp(s, "deny") != 0))
        return refuse(e, "%s.%s must be \"allow\" or \"deny\"", where, key);
    *allow = strcmp(s, "allow") == 0;
    return 0;
}

/* One port selector, lowered to the match text (may be empty: any). */
static int lower_port(json_t *pt, const char *where, bool is_allow, sbuf *m, mxc_error *e)
{
    static const char *const KEYS[] = {"protocol", "port", "endPort", NULL};
    if (only_keys(pt, where, KEYS, e) < 0)
        return -1;
    json_t *pj = json_object_get(pt, "protocol"), *port = json_object_get(pt, "port"), *end = json_object_get(pt, "endPort");
    const char *proto = pj ? json_string_value(pj) : "any";
    if (!proto || (strcmp(proto, "tcp") && strcmp(proto, "udp") && strcmp(proto, "icmp") && strcmp(proto, "any")))
        return refuse(e, "%s.protocol must be tcp, udp, icmp or any", where);
    json_int_t lo = 0, hi = 0;
    if (port && (!json_is_integer(port) || (lo = json_integer_value(port)) < 1 || lo > 65535))
        return refuse(e, "%s.port must be an integer from 1 to 65535", where);
    if (end && (!json_is_integer(end) || (hi = json_integer_value(end)) < 1 || hi > 65535))
        return refuse(e, "%s.endPort must be an integer from 1 to 65535", where);
    if (end && !port)
        return refuse(e, "%s.endPort requires port", where);
    if (end && hi < lo)
        return refuse(e, "%s.endPort must be greater than or equal to port", where);
    if (!strcmp(proto, "icmp") && port)
        return refuse(e, "%s cannot specify port or endPort for protocol='icmp'", where);
    (void)is_allow;
    char range[16] = "";
    if (port && end && hi != lo)
        snprintf(range, sizeof range, "%d-%d", (int)lo, (int)hi);
    else if (port)
        snprintf(range, sizeof range, "%d", (int)lo);
    if (!strcmp(proto, "icmp"))
        put(m, " meta l4proto icmp");
    else if (!strcmp(proto, "any"))
        put(m, range[0] ? " meta l4proto { tcp, udp } th dport %s" : "", range);
    else
        put(m, range[0] ? " meta l4proto %s th dport %s" : " meta l4proto %s", proto, range);
    return 0;
}

/* One peer, lowered to the match text; *v6 says it names IPv6, *one that
 * it is exactly one address (/32, /128). */
static int lower_peer(json_t *peer, const char *where, sbuf *m, bool *v6, bool *one, mxc_error *e)
{
    static const char *const KEYS[] = {"cidr", "except", NULL};
    if (only_keys(peer, where, KEYS, e) < 0)
        return -1;
    const char *why;
    cidr c;
    const char *text = json_string_value(json_object_get(peer, "cidr"));
    if (!text)
        return refuse(e, "%s.cidr is required and must be a string", where);
    if (parse_cidr(text, &c, &why) < 0)
        return refuse(e, "%s.cidr \"%.80s\" %s", where, text, why);
    *v6 = c.family == AF_INET6;
    *one = c.len == (*v6 ? 128 : 32);
    put(m, " %s daddr ", *v6 ? "ip6" : "ip");
    put_cidr(m, &c);
    json_t *except = json_object_get(peer, "except");
    if (except && !json_is_array(except))
        return refuse(e, "%s.except must be an array of CIDRs", where);
    for (size_t k = 0; k < json_array_size(except); k++) {
        cidr x;
        const char *xt = json_string_value(json_array_get(except, k));
        if (parse_cidr(xt, &x, &why) < 0)
            return refuse(e, "%s.except[%zu] \"%.80s\" %s", where, k, xt ? xt : "", why);
        if (x.family != c.family)
            return refuse(e, "%s.except[%zu] is not of the address family of the cidr", where, k);
        put(m, k ? ", " : " %s daddr != { ", *v6 ? "ip6" : "ip");
        put_cidr(m, &x);
        if (k + 1 == json_array_size(except))
            put(m, " }");
    }
    return 0;
}

/* Which of the (to, ports) pairs lower_rules writes: model 1's allows go
 * in two passes around the `thishost` reject, the ones whose peer is
 * exactly one address ahead of it (they name it), the rest after. */
typedef enum { PAIRS_ALL, PAIRS_ONE_ADDRESS, PAIRS_OTHERS } pairs;

/* egress.allow / egress.deny: one nft rule per (to, ports) pair. */
static int lower_rules(json_t *rules, const char *where, bool is_allow, pairs which, sbuf *s, mxc_error *e)
{
    if (!rules)
        return 0;
    if (!json_is_array(rules))
        return refuse(e, "%s must be an array of rules", where);
    static const char *const KEYS[] = {"to", "ports", NULL};
    for (size_t i = 0; i < json_array_size(rules); i++) {
        json_t *rule = json_array_get(rules, i);
        char rw[96];
        snprintf(rw, sizeof rw, "%s[%zu]", where, i);
        if (only_keys(rule, rw, KEYS, e) < 0)
            return -1;
        json_t *to = json_object_get(rule, "to"), *ports = json_object_get(rule, "ports");
        if ((to && (!json_is_array(to) || !json_array_size(to))) || (ports && (!json_is_array(ports) || !json_array_size(ports))))
            return refuse(e, "%s: to and ports, when given, must be non-empty arrays", rw);
        size_t nt = to ? json_array_size(to) : 1, np = ports ? json_array_size(ports) : 1;
        for (size_t j = 0; j < nt; j++) {
            sbuf peer = {0};
            bool v6 = false, one = false;
            char pw[128];
            snprintf(pw, sizeof pw, "%s.to[%zu]", rw, j);
            if (to && lower_peer(json_array_get(to, j), pw, &peer, &v6, &one, e) < 0) {
                free(peer.buf);
                return -1;
            }
            if (v6 && is_allow) {
                free(peer.buf);
                return refuse(e, "%s.cidr is IPv6: the sandbox's userspace network stack runs IPv4 only, so an IPv6 "
                                 "allow cannot be delivered (IPv6 is always denied)", pw);
            }
            for (size_t k = 0; k < np; k++) {
                sbuf pm = {0};
                char kw[128];
                snprintf(kw, sizeof kw, "%s.ports[%zu]", rw, k);
                if (ports && lower_port(json_array_get(ports, k), kw, is_allow, &pm, e) < 0) {
                    free(peer.buf), free(pm.buf);
                    return -1;
                }
                if (!v6 && (which == PAIRS_ALL || (which == PAIRS_ONE_ADDRESS) == one)) /* IPv6: denied ahead */
                    put(s, "    meta nfproto ipv4%s%s %s\n", peer.buf ? peer.buf : "", pm.buf ? pm.buf : "",
                        is_allow ? "accept" : "reject");
                free(pm.buf);
            }
            free(peer.buf);
        }
    }
    return 0;
}

/* proxy_port: model 2's one way out, the gateway's proxy port; 0 (model
 * 1): the gateway (host loopback) and host loopback's own ranges are
 * rejected ahead of every caller rule, so a broad allow cannot reopen
 * them, and the table has the set of this host's own destinations
 * (thishost.h), filled when the rules are installed — its reject is the
 * caller's to place (put_thishost). */
static void put_head(sbuf *s, long proxy_port)
{
    put(s, "table inet " MXC_NET_TABLE " {\n");
    if (!proxy_port)
        put(s, "  set " MXC_THISHOST_SET " {\n"
               "    type ipv4_addr\n"
               "    flags interval\n"
               "  }\n");
    put(s, "  chain input {\n"
           "    type filter hook input priority filter; policy drop;\n"
           "    iifname \"lo\" accept\n"
           "    ct state established,related accept\n"
           "  }\n"
           "  chain output {\n"
           "    type filter hook output priority filter; policy drop;\n"
           "    oifname \"lo\" accept\n"
           "    meta nfproto ipv6 reject\n");
    if (proxy_port)
        put(s, "    ip daddr " MXC_NET_GATEWAY " tcp dport %ld accept\n", proxy_port);
    else
        put(s, "    ip daddr " MXC_NET_GATEWAY " reject\n"
               "    ip daddr { 0.0.0.0/8, 127.0.0.0/8 } reject\n");
}

/* Model 1: this host's own destinations (pasta dials from the host's
 * namespace), after the denies and the allows of exactly one address,
 * before every broader allow and the default: a CIDR covers this host
 * without naming it (docs/design-decisions.md). */
static void put_thishost(sbuf *s)
{
    put(s, "    ip daddr @" MXC_THISHOST_SET " reject\n");
}

static int finish(sbuf *s, bool default_allow, mxc_net_policy *np, mxc_error *e)
{
    put(s, "    %s\n  }\n}\n", default_allow ? "accept" : "reject");
    if (s->oom) {
        free(s->buf);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory lowering the network rules");
    }
    np->ruleset = s->buf;
    return 0;
}

/* The legacy `allow` without allowLocalNetwork: the internet, not the
 * local network (private, link-local, CGNAT, loopback and multicast
 * ranges), not host loopback. */
static int legacy_allow(mxc_net_policy *np, mxc_error *e)
{
    static const char *const LOCAL[] = {"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
                                        "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4"};
    sbuf s = {0};
    np->model = MXC_NETM_DIRECT;
    put_head(&s, 0);
    put_thishost(&s);
    for (size_t i = 0; i < sizeof LOCAL / sizeof LOCAL[0]; i++)
        put(&s, "    ip daddr %s reject\n", LOCAL[i]);
    return finish(&s, true, np, e);
}

/* http(s)://localhost|127.0.0.1:PORT[/...] -> the same endpoint as the
 * sandbox reaches it, through the gateway.  field names the request's
 * path in every refusal. */
static int proxy_endpoint(const char *url, const char *field, mxc_net_policy *np, mxc_error *e)
{
    const char *sep = strstr(url, "://");
    size_t slen = sep ? (size_t)(sep - url) : 0;
    if (!((slen == 4 && !strncasecmp(url, "http", 4)) || (slen == 5 && !strncasecmp(url, "https", 5))))
        return refuse(e, "%s must be an http:// or https:// URL: %.200s", field, url);
    bool https = slen == 5;
    const char *host = sep + 3;
    const char *at = strpbrk(host, "@/");
    if (at && *at == '@')
        host = at + 1;
    if (host[0] == '[')
        return refuse(e, "%s [::1] cannot be delivered: the sandbox's network stack runs IPv4 only; use 127.0.0.1",
                      field);
    size_t hlen = strcspn(host, ":/?#");
    if (!((hlen == 9 && !strncasecmp(host, "localhost", 9)) || (hlen == 9 && !strncmp(host, "127.0.0.1", 9))))
        return refuse(e, "%s must name a proxy on this host's loopback (localhost or 127.0.0.1): %.200s", field, url);
    if (host[hlen] != ':')
        return refuse(e, "%s must name its port explicitly (e.g. http://127.0.0.1:3128)", field);
    const char *p = host + hlen + 1;
    long port = 0;
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
        port = port * 10 + (*p - '0');
    if (!digits || port < 1 || port > 65535 || (*p && *p != '/' && *p != '?' && *p != '#'))
        return refuse(e, "%s has no valid port (1 to 65535)", field);
    np->model = MXC_NETM_PROXY;
    np->proxy_port = (unsigned short)port;
    snprintf(np->proxy_url, sizeof np->proxy_url, "%s://" MXC_NET_GATEWAY ":%ld/", https ? "https" : "http", port);
    sbuf s = {0};
    put_head(&s, port);
    return finish(&s, false, np, e);
}

static int directional(json_t *net, const char *proxy, mxc_net_policy *np, mxc_error *e)
{
    static const char *const NET_KEYS[] = {"egress", "ingress", NULL};
    static const char *const EG_KEYS[] = {"default", "allow", "deny", NULL};
    static const char *const IN_KEYS[] = {"default", "hostLoopback", NULL};
    if (only_keys(net, "network", NET_KEYS, e) < 0)
        return -1;
    json_t *eg = json_object_get(net, "egress"), *in = json_object_get(net, "ingress");
    bool e_allow, i_allow, h_allow;
    if ((eg && only_keys(eg, "network.egress", EG_KEYS, e) < 0) || (in && only_keys(in, "network.ingress", IN_KEYS, e) < 0) ||
        action(eg, "default", "network.egress", &e_allow, e) < 0 || action(in, "default", "network.ingress", &i_allow, e) < 0 ||
        action(in, "hostLoopback", "network.ingress", &h_allow, e) < 0)
        return -1;
    json_t *allow = json_object_get(eg, "allow"), *deny = json_object_get(eg, "deny");
    bool rules = json_array_size(allow) || json_array_size(deny);
    if (e_allow && i_allow && h_allow && !rules && !proxy) {
        np->model = MXC_NETM_HOST;
        return 0;
    }
    if (i_allow)
        return refuse(e, "network.ingress.default allow cannot be delivered: nothing outside may open connections into "
                         "the sandbox's own network namespace (only the host network, with egress, ingress and "
                         "hostLoopback all allow and no rules, lets them in)");
    /* allow only where both directions hold: the host's loopback clients
     * cannot open connections into the sandbox's own namespace either */
    if (h_allow)
        return refuse(e, "network.ingress.hostLoopback allow cannot be delivered: the sandbox's loopback is its own "
                         "namespace's, so the host cannot dial a sandbox listener (only the host network, with egress, "
                         "ingress and hostLoopback all allow and no rules, shares the host's loopback); use "
                         "hostLoopback deny");
    if (proxy) {
        if (e_allow || rules)
            return refuse(e, "runtimeConfig.networkProxy requires network.egress.default deny, no rules and no "
                             "hostLoopback allow: the proxy endpoint is the only way out");
        return proxy_endpoint(proxy, "runtimeConfig.networkProxy", np, e);
    }
    if (!e_allow && !rules) {
        np->model = MXC_NETM_NONE;
        return 0;
    }
    np->model = MXC_NETM_DIRECT;
    sbuf s = {0};
    put_head(&s, 0);
    /* deny outranks allow: every deny is matched first; then the allows
     * that name one address, this host, the rest */
    if (lower_rules(deny, "network.egress.deny", false, PAIRS_ALL, &s, e) < 0 ||
        lower_rules(allow, "network.egress.allow", true, PAIRS_ONE_ADDRESS, &s, e) < 0) {
        free(s.buf);
        return -1;
    }
    put_thishost(&s);
    if (lower_rules(allow, "network.egress.allow", true, PAIRS_OTHERS, &s, e) < 0) {
        free(s.buf);
        return -1;
    }
    return finish(&s, e_allow, np, e);
}

/* The legacy network.proxy: { "url": U } or { "localhost": PORT }, on a
 * blocked network only (the endpoint is the one way out). */
static int legacy_proxy(const mxc_net_section *r, json_t *px, mxc_net_policy *np, mxc_error *e)
{
    if (r->allow || r->nallowed || r->nblocked)
        return refuse(e, "network.proxy requires defaultPolicy block with no allowedHosts or blockedHosts: the proxy "
                         "endpoint is the only way out (model 2)");
    if (json_object_get(px, "builtinTestServer"))
        return refuse(e, "network.proxy.builtinTestServer cannot be delivered: mxc ships no test proxy; name your "
                         "proxy with network.proxy.url");
    json_t *url = json_object_get(px, "url"), *lh = json_object_get(px, "localhost");
    if (!url == !lh)
        return refuse(e, "network.proxy needs exactly one of url or localhost (a port)");
    if (url)
        return proxy_endpoint(json_string_value(url), "network.proxy.url", np, e);
    if (!json_is_integer(lh) || json_integer_value(lh) < 1 || json_integer_value(lh) > 65535)
        return refuse(e, "network.proxy.localhost must be a port (1 to 65535)");
    char u[40];
    snprintf(u, sizeof u, "http://127.0.0.1:%d", (int)json_integer_value(lh));
    return proxy_endpoint(u, "network.proxy.localhost", np, e);
}

/* The legacy host lists: governed egress through mxc-proxy, on a blocked
 * network (nothing else leaves: the proxy is the one way out).  The
 * entries themselves are mxc-proxy's to judge (src/proxy/hostpolicy.h); a
 * bad one refuses the run before the workload exists. */
static bool env_name_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 128 || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* network.credentials: [{name, revision, host, port, pathPrefix?,
 * secretEnv, env?}] — the shape only (mxc-proxy judges the binding again
 * and the secrets are read at attach); into np->creds. */
static int credentials(json_t *a, mxc_net_policy *np, mxc_error *e)
{
    if (!json_is_array(a) || json_array_size(a) > 64)
        return refuse(e, "network.credentials must be an array of at most 64 credential objects");
    static const char *const KEYS[] = {"name", "revision", "host", "port", "pathPrefix", "secretEnv", "env"};
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *c = json_array_get(a, i), *v;
        const char *k;
        if (!json_is_object(c))
            return refuse(e, "network.credentials[%zu] must be an object", i);
        json_object_foreach(c, k, v) {
            bool known = false;
            for (size_t j = 0; j < sizeof KEYS / sizeof KEYS[0]; j++)
                known |= !strcmp(k, KEYS[j]);
            if (!known)
                return refuse(e, "network.credentials[%zu].%s is not a known field", i, k);
        }
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *rev = json_object_get(c, "revision"), *port = json_object_get(c, "port");
        json_t *prefix = json_object_get(c, "pathPrefix"), *wenv = json_object_get(c, "env");
        size_t nl = name ? strlen(name) : 0;
        bool name_ok = nl > 0 && nl <= 64 && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                         "0123456789_.-") == nl;
        if (!name_ok)
            return refuse(e, "network.credentials[%zu].name must be 1 to 64 of A-Z a-z 0-9 _ . -", i);
        if (!json_is_integer(rev) || json_integer_value(rev) < 0)
            return refuse(e, "network.credentials[%zu].revision must be an integer of at least 0", i);
        if (!json_is_string(json_object_get(c, "host")))
            return refuse(e, "network.credentials[%zu].host must be a host name or IP literal", i);
        if (!json_is_integer(port) || json_integer_value(port) < 1 || json_integer_value(port) > 65535)
            return refuse(e, "network.credentials[%zu].port must be a port (1 to 65535)", i);
        if (prefix && (!json_is_string(prefix) || json_string_value(prefix)[0] != '/'))
            return refuse(e, "network.credentials[%zu].pathPrefix must be a path starting with /", i);
        if (!env_name_ok(json_string_value(json_object_get(c, "secretEnv"))))
            return refuse(e, "network.credentials[%zu].secretEnv must name an environment variable", i);
        if (wenv && !env_name_ok(json_string_value(wenv)))
            return refuse(e, "network.credentials[%zu].env must name an environment variable", i);
    }
    np->creds = json_dumps(a, JSON_COMPACT);
    return np->creds ? 0 : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
}

static int governed(const mxc_net_section *r, mxc_net_policy *np, mxc_error *e)
{
    if (r->allow)
        return refuse(e, "network.allowedHosts / blockedHosts need defaultPolicy block: governed egress lets out only "
                         "what allowedHosts names (a blocklist over an open network cannot be enforced by name)");
    if (!r->nallowed)
        return refuse(e, "network.blockedHosts without allowedHosts lets nothing out: name what may be reached in "
                         "network.allowedHosts");
    json_t *doc = json_object(), *lists[2] = {json_array(), json_array()};
    const char **src[2] = {r->allowed_hosts, r->blocked_hosts};
    size_t n[2] = {r->nallowed, r->nblocked};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < n[k]; i++)
            json_array_append_new(lists[k], json_string(src[k][i]));
    json_object_set_new(doc, "allowed", lists[0]);
    json_object_set_new(doc, "blocked", lists[1]);
    np->hosts = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!np->hosts)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    np->model = MXC_NETM_GOVERNED;
    return r->credentials ? credentials(r->credentials, np, e) : 0;
}

int mxc_net_policy_build(const mxc_net_section *r, mxc_net_policy *np, mxc_error *e)
{
    memset(np, 0, sizeof *np);
    const char *proxy = r->network_proxy;
    if (!r->present)
        return 0;
    json_t *net = r->json;
    if (!r->directional) {
        if (r->credentials && (r->proxy || r->allow || !r->nallowed))
            return refuse(e, "network.credentials needs governed egress (network.allowedHosts with defaultPolicy "
                             "block): only mxc-proxy can substitute a credential for its binding");
        if (r->proxy)
            return legacy_proxy(r, json_object_get(net, "proxy"), np, e);
        if (r->nallowed || r->nblocked)
            return governed(r, np, e);
        if (r->allow && r->allow_local)
            np->model = MXC_NETM_HOST;
        else if (r->allow)
            return legacy_allow(np, e);
        return 0;
    }
    if (net)
        return directional(net, proxy, np, e);
    json_t *none = json_object(); /* runtimeConfig.networkProxy alone: egress deny by default */
    int rc = directional(none, proxy, np, e);
    json_decref(none);
    return rc;
}
