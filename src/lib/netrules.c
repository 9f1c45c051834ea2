/* netrules.c — see netrules.h: a directional network section's typed form (the directions'
 * defaults, the egress rules: CIDRs, except, protocols, ports), read from its JSON with the shape
 * checks and their refusals (policy_validation, naming the JSON path), so that the network layer
 * lowers typed rules and never reads the section's JSON.  The refusals come in the order the
 * network layer's lowering asks for them (directions, then the deny rules, then the allow rules).
 * And the legacy network.credentials' shape, checked the same way. */
#include "netrules.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define refuse mxc_net_refuse

int mxc_net_refuse(mxc_error *e, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s", msg);
}

/* "a.b.c.d[/n]" or an IPv6 address[/n], host part zero.  0, or -1 with
 * why set (a name is called a hostname). */
static int parse_cidr(const char *s, mxc_cidr *c, const char **why)
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

int mxc_net_directions_parse(json_t *net, mxc_net_directions *d, mxc_error *e)
{
    static const char *const NET_KEYS[] = {"egress", "ingress", NULL};
    static const char *const EG_KEYS[] = {"default", "allow", "deny", NULL};
    static const char *const IN_KEYS[] = {"default", "hostLoopback", NULL};
    memset(d, 0, sizeof *d);
    if (!net) /* runtimeConfig.networkProxy alone: egress deny by default */
        return 0;
    if (only_keys(net, "network", NET_KEYS, e) < 0)
        return -1;
    json_t *eg = json_object_get(net, "egress"), *in = json_object_get(net, "ingress");
    if ((eg && only_keys(eg, "network.egress", EG_KEYS, e) < 0) || (in && only_keys(in, "network.ingress", IN_KEYS, e) < 0) ||
        action(eg, "default", "network.egress", &d->egress_allow, e) < 0 ||
        action(in, "default", "network.ingress", &d->ingress_allow, e) < 0 ||
        action(in, "hostLoopback", "network.ingress", &d->loopback_allow, e) < 0)
        return -1;
    d->has_rules = json_array_size(json_object_get(eg, "allow")) || json_array_size(json_object_get(eg, "deny"));
    return 0;
}

/* One port selector. */
static int parse_port(json_t *pt, const char *where, mxc_net_port *out, mxc_error *e)
{
    static const char *const KEYS[] = {"protocol", "port", "endPort", NULL};
    if (only_keys(pt, where, KEYS, e) < 0)
        return -1;
    json_t *pj = json_object_get(pt, "protocol"), *port = json_object_get(pt, "port"), *end = json_object_get(pt, "endPort");
    const char *proto = pj ? json_string_value(pj) : "any";
    static const char *const NAMES[] = {[MXC_NET_PROTO_ANY] = "any", [MXC_NET_PROTO_TCP] = "tcp",
                                        [MXC_NET_PROTO_UDP] = "udp", [MXC_NET_PROTO_ICMP] = "icmp"};
    size_t p = 0;
    while (proto && p < sizeof NAMES / sizeof NAMES[0] && strcmp(proto, NAMES[p]))
        p++;
    if (!proto || p == sizeof NAMES / sizeof NAMES[0])
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
    if (p == MXC_NET_PROTO_ICMP && port)
        return refuse(e, "%s cannot specify port or endPort for protocol='icmp'", where);
    out->proto = (mxc_net_proto)p;
    out->port = (int)lo;
    out->end_port = end ? (int)hi : (int)lo;
    return 0;
}

/* One peer: its CIDR and the CIDRs excepted from it (out->except: owned). */
static int parse_peer(json_t *peer, const char *where, mxc_net_peer *out, mxc_error *e)
{
    static const char *const KEYS[] = {"cidr", "except", NULL};
    if (only_keys(peer, where, KEYS, e) < 0)
        return -1;
    const char *why;
    const char *text = json_string_value(json_object_get(peer, "cidr"));
    if (!text)
        return refuse(e, "%s.cidr is required and must be a string", where);
    if (parse_cidr(text, &out->cidr, &why) < 0)
        return refuse(e, "%s.cidr \"%.80s\" %s", where, text, why);
    json_t *except = json_object_get(peer, "except");
    if (except && !json_is_array(except))
        return refuse(e, "%s.except must be an array of CIDRs", where);
    size_t n = json_array_size(except);
    if (n && !(out->except = calloc(n, sizeof *out->except)))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    for (size_t k = 0; k < n; k++, out->nexcept++) {
        const char *xt = json_string_value(json_array_get(except, k));
        if (parse_cidr(xt, &out->except[k], &why) < 0)
            return refuse(e, "%s.except[%zu] \"%.80s\" %s", where, k, xt ? xt : "", why);
        if (out->except[k].family != out->cidr.family)
            return refuse(e, "%s.except[%zu] is not of the address family of the cidr", where, k);
    }
    return 0;
}

/* One rule's peers (peer j checked before the ports, the first before them all: the order the
 * lowering checked them in, once per (to, ports) pair) and ports.  An allow may not name IPv6. */
static int parse_rule(json_t *rule, const char *rw, bool is_allow, mxc_net_rule *out, mxc_error *e)
{
    static const char *const KEYS[] = {"to", "ports", NULL};
    if (only_keys(rule, rw, KEYS, e) < 0)
        return -1;
    json_t *to = json_object_get(rule, "to"), *ports = json_object_get(rule, "ports");
    if ((to && (!json_is_array(to) || !json_array_size(to))) || (ports && (!json_is_array(ports) || !json_array_size(ports))))
        return refuse(e, "%s: to and ports, when given, must be non-empty arrays", rw);
    size_t nt = json_array_size(to), np = json_array_size(ports);
    if ((nt && !(out->to = calloc(nt, sizeof *out->to))) || (np && !(out->ports = calloc(np, sizeof *out->ports))))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    for (size_t j = 0; j < (nt ? nt : 1); j++) {
        char pw[128];
        snprintf(pw, sizeof pw, "%s.to[%zu]", rw, j);
        if (nt) {
            int rc = parse_peer(json_array_get(to, j), pw, &out->to[j], e);
            out->nto++;
            if (rc < 0)
                return -1;
            if (is_allow && out->to[j].cidr.family == AF_INET6)
                return refuse(e, "%s.cidr is IPv6: the sandbox's userspace network stack runs IPv4 only, so an IPv6 "
                                 "allow cannot be delivered (IPv6 is always denied)", pw);
        }
        for (size_t k = 0; j == 0 && k < np; k++, out->nports++) {
            char kw[128];
            snprintf(kw, sizeof kw, "%s.ports[%zu]", rw, k);
            if (parse_port(json_array_get(ports, k), kw, &out->ports[k], e) < 0)
                return -1;
        }
    }
    return 0;
}

static int parse_rules(json_t *rules, const char *where, bool is_allow, mxc_net_rules *out, mxc_error *e)
{
    if (!rules)
        return 0;
    if (!json_is_array(rules))
        return refuse(e, "%s must be an array of rules", where);
    size_t n = json_array_size(rules);
    if (n && !(out->v = calloc(n, sizeof *out->v)))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char rw[96];
        snprintf(rw, sizeof rw, "%s[%zu]", where, i);
        out->n++;
        if (parse_rule(json_array_get(rules, i), rw, is_allow, &out->v[i], e) < 0)
            return -1;
    }
    return 0;
}

int mxc_net_rules_parse(json_t *net, mxc_net_rules *deny, mxc_net_rules *allow, mxc_error *e)
{
    memset(deny, 0, sizeof *deny);
    memset(allow, 0, sizeof *allow);
    json_t *eg = json_object_get(net, "egress");
    if (parse_rules(json_object_get(eg, "deny"), "network.egress.deny", false, deny, e) < 0 ||
        parse_rules(json_object_get(eg, "allow"), "network.egress.allow", true, allow, e) < 0) {
        mxc_net_rules_free(deny);
        mxc_net_rules_free(allow);
        return -1;
    }
    return 0;
}

void mxc_net_rules_free(mxc_net_rules *r)
{
    for (size_t i = 0; i < r->n; i++) {
        for (size_t j = 0; j < r->v[i].nto; j++)
            free(r->v[i].to[j].except);
        free(r->v[i].to);
        free(r->v[i].ports);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* An environment variable's name: [A-Za-z_][A-Za-z0-9_]*, at most 128. */
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
 * and the secrets are read at attach). */
static int credentials_check(json_t *a, mxc_error *e)
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
    return 0;
}

static char *dup_or_null(json_t *v, bool *oom)
{
    const char *s = json_string_value(v);
    char *d = s ? strdup(s) : NULL;
    *oom |= s && !d;
    return d;
}

int mxc_net_credentials_parse(json_t *a, mxc_net_credential **out, size_t *n, mxc_error *e)
{
    *out = NULL, *n = 0;
    if (credentials_check(a, e) < 0)
        return -1;
    size_t count = json_array_size(a);
    mxc_net_credential *v = calloc(count ? count : 1, sizeof *v);
    bool oom = !v;
    for (size_t i = 0; v && i < count; i++) {
        json_t *c = json_array_get(a, i);
        v[i].name = dup_or_null(json_object_get(c, "name"), &oom);
        v[i].host = dup_or_null(json_object_get(c, "host"), &oom);
        v[i].revision = (long long)json_integer_value(json_object_get(c, "revision"));
        v[i].port = (int)json_integer_value(json_object_get(c, "port"));
        v[i].path_prefix = dup_or_null(json_object_get(c, "pathPrefix"), &oom);
        v[i].secret_env = dup_or_null(json_object_get(c, "secretEnv"), &oom);
        v[i].env = dup_or_null(json_object_get(c, "env"), &oom);
    }
    if (oom) {
        mxc_net_credentials_free(v, count);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    }
    *out = v, *n = count;
    return 0;
}

void mxc_net_credentials_free(mxc_net_credential *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].name), free(c[i].host), free(c[i].path_prefix);
        free(c[i].secret_env), free(c[i].env);
    }
    free(c);
}

static char *dup_opt(const char *s, bool *oom)
{
    char *d = s ? strdup(s) : NULL;
    *oom |= s && !d;
    return d;
}

int mxc_net_credentials_copy(const mxc_net_credential *c, size_t n, mxc_net_credential **out, mxc_error *e)
{
    *out = NULL;
    if (!c)
        return 0;
    mxc_net_credential *v = calloc(n ? n : 1, sizeof *v);
    bool oom = !v;
    for (size_t i = 0; v && i < n; i++) {
        v[i] = (mxc_net_credential){.revision = c[i].revision, .port = c[i].port};
        v[i].name = dup_opt(c[i].name, &oom), v[i].host = dup_opt(c[i].host, &oom);
        v[i].path_prefix = dup_opt(c[i].path_prefix, &oom);
        v[i].secret_env = dup_opt(c[i].secret_env, &oom), v[i].env = dup_opt(c[i].env, &oom);
    }
    if (oom) {
        mxc_net_credentials_free(v, n);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    }
    *out = v;
    return 0;
}
