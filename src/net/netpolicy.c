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

static void put_cidr(sbuf *s, const mxc_cidr *c)
{
    char a[INET6_ADDRSTRLEN];
    inet_ntop(c->family, c->addr, a, sizeof a);
    put(s, "%s/%d", a, c->len);
}

/* the network's refusals: policy_validation, bounded as the engine's readers' are (netplan.h) */
#define refuse mxc_net_refuse

/* One port selector, as the match text (may be empty: any). */
static void lower_port(const mxc_net_port *pt, sbuf *m)
{
    static const char *const NAMES[] = {[MXC_NET_PROTO_ANY] = "any", [MXC_NET_PROTO_TCP] = "tcp",
                                        [MXC_NET_PROTO_UDP] = "udp", [MXC_NET_PROTO_ICMP] = "icmp"};
    char range[16] = "";
    if (pt->port && pt->end_port != pt->port)
        snprintf(range, sizeof range, "%d-%d", pt->port, pt->end_port);
    else if (pt->port)
        snprintf(range, sizeof range, "%d", pt->port);
    if (pt->proto == MXC_NET_PROTO_ICMP)
        put(m, " meta l4proto icmp");
    else if (pt->proto == MXC_NET_PROTO_ANY)
        put(m, range[0] ? " meta l4proto { tcp, udp } th dport %s" : "", range);
    else
        put(m, range[0] ? " meta l4proto %s th dport %s" : " meta l4proto %s", NAMES[pt->proto], range);
}

/* One peer, as the match text. */
static void lower_peer(const mxc_net_peer *peer, sbuf *m)
{
    bool v6 = peer->cidr.family == AF_INET6;
    put(m, " %s daddr ", v6 ? "ip6" : "ip");
    put_cidr(m, &peer->cidr);
    for (size_t k = 0; k < peer->nexcept; k++) {
        put(m, k ? ", " : " %s daddr != { ", v6 ? "ip6" : "ip");
        put_cidr(m, &peer->except[k]);
        if (k + 1 == peer->nexcept)
            put(m, " }");
    }
}

/* Which of the (to, ports) pairs lower_rules writes: model 1's allows go
 * in two passes around the `thishost` reject, the ones whose peer is
 * exactly one address ahead of it (they name it), the rest after. */
typedef enum { PAIRS_ALL, PAIRS_ONE_ADDRESS, PAIRS_OTHERS } pairs;

/* egress.allow / egress.deny (as the engine read them: mxc_net_rules_parse): one nft rule per
 * (to, ports) pair; a pair naming IPv6 is none (IPv6 is denied ahead). */
static void lower_rules(const mxc_net_rules *rules, bool is_allow, pairs which, sbuf *s)
{
    for (size_t i = 0; i < rules->n; i++) {
        const mxc_net_rule *r = &rules->v[i];
        for (size_t j = 0; j < (r->nto ? r->nto : 1); j++) {
            const mxc_net_peer *to = r->nto ? &r->to[j] : NULL;
            bool v6 = to && to->cidr.family == AF_INET6;
            bool one = to && to->cidr.len == (v6 ? 128 : 32);
            if (v6 || !(which == PAIRS_ALL || (which == PAIRS_ONE_ADDRESS) == one))
                continue;
            sbuf peer = {0};
            if (to)
                lower_peer(to, &peer);
            for (size_t k = 0; k < (r->nports ? r->nports : 1); k++) {
                sbuf pm = {0};
                if (r->nports)
                    lower_port(&r->ports[k], &pm);
                put(s, "    meta nfproto ipv4%s%s %s\n", peer.buf ? peer.buf : "", pm.buf ? pm.buf : "",
                    is_allow ? "accept" : "reject");
                s->oom |= peer.oom || pm.oom;
                free(pm.buf);
            }
            free(peer.buf);
        }
    }
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

/* A refusal the engine kept when it typed the section (netplan.h), given now. */
static int kept(const mxc_error *why, mxc_error *e)
{
    if (e)
        *e = *why;
    return -1;
}

/* The directional form, as the engine typed it (netplan.h: the directions, then the rules, their
 * refusals given in that order: the rules' only once the model is model 1). */
static int directional(const mxc_net_section *r, const char *proxy, mxc_net_policy *np, mxc_error *e)
{
    if (r->dirs_rc < 0)
        return kept(&r->dirs_err, e);
    const mxc_net_directions *d = &r->dirs;
    bool e_allow = d->egress_allow, i_allow = d->ingress_allow, h_allow = d->loopback_allow, rules = d->has_rules;
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
    if (r->rules_rc < 0)
        return kept(&r->rules_err, e);
    np->model = MXC_NETM_DIRECT;
    sbuf s = {0};
    put_head(&s, 0);
    /* deny outranks allow: every deny is matched first; then the allows
     * that name one address, this host, the rest */
    lower_rules(&r->egress_deny, false, PAIRS_ALL, &s);
    lower_rules(&r->egress_allow, true, PAIRS_ONE_ADDRESS, &s);
    put_thishost(&s);
    lower_rules(&r->egress_allow, true, PAIRS_OTHERS, &s);
    return finish(&s, e_allow, np, e);
}

/* The legacy network.proxy: { "url": U } or { "localhost": PORT }, on a
 * blocked network only (the endpoint is the one way out). */
static int legacy_proxy(const mxc_net_section *r, mxc_net_policy *np, mxc_error *e)
{
    if (r->allow || r->nallowed || r->nblocked)
        return refuse(e, "network.proxy requires defaultPolicy block with no allowedHosts or blockedHosts: the proxy "
                         "endpoint is the only way out (model 2)");
    if (r->proxy_builtin_test)
        return refuse(e, "network.proxy.builtinTestServer cannot be delivered: mxc ships no test proxy; name your "
                         "proxy with network.proxy.url");
    if (!r->proxy_url == !r->proxy_localhost)
        return refuse(e, "network.proxy needs exactly one of url or localhost (a port)");
    if (r->proxy_url)
        return proxy_endpoint(r->proxy_url, "network.proxy.url", np, e);
    if (!r->proxy_localhost_port)
        return refuse(e, "network.proxy.localhost must be a port (1 to 65535)");
    char u[40];
    snprintf(u, sizeof u, "http://127.0.0.1:%d", r->proxy_localhost_port);
    return proxy_endpoint(u, "network.proxy.localhost", np, e);
}

/* The legacy host lists: governed egress through mxc-proxy, on a blocked
 * network (nothing else leaves: the proxy is the one way out).  The
 * entries themselves are mxc-proxy's to judge (src/proxy/hostpolicy.h); a
 * bad one refuses the run before the workload exists. */
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
    if (r->credentials && r->creds_rc < 0)
        return kept(&r->creds_err, e);
    np->ncreds = r->ncreds;
    return mxc_net_credentials_copy(r->creds, r->ncreds, &np->creds, e);
}

int mxc_net_policy_build(const mxc_net_section *r, mxc_net_policy *np, mxc_error *e)
{
    memset(np, 0, sizeof *np);
    const char *proxy = r->network_proxy;
    if (!r->present)
        return 0;
    if (!r->directional) {
        if (r->credentials && (r->proxy || r->allow || !r->nallowed))
            return refuse(e, "network.credentials needs governed egress (network.allowedHosts with defaultPolicy "
                             "block): only mxc-proxy can substitute a credential for its binding");
        if (r->proxy)
            return legacy_proxy(r, np, e);
        if (r->nallowed || r->nblocked)
            return governed(r, np, e);
        if (r->allow && r->allow_local)
            np->model = MXC_NETM_HOST;
        else if (r->allow)
            return legacy_allow(np, e);
        return 0;
    }
    return directional(r, proxy, np, e);
}
