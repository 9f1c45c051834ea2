/* policymap.c — see policymap.h. */
#include "policymap.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_PATHS 256   /* read_only + read_write, OpenShell's bound */
#define MAX_PATH_LEN 4096
#define MAX_HOSTS 256   /* allowed host entries after expansion */

static json_t *refuse(mxc_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static json_t *refuse(mxc_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mxc_verr(e, MXC_E_POLICY_VALIDATION, fmt, ap);
    va_end(ap);
    return NULL;
}

/* Every key of obj is one of keys[] (NULL-terminated); else the first
 * stranger's name into *bad. */
static bool only_keys(const json_t *obj, const char *const *keys, const char **bad)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k))
            i++;
        if (!keys[i]) {
            *bad = k;
            return false;
        }
    }
    return true;
}

/* An absolute path with no "." or ".." component, bounded. */
static const char *path_problem(const char *p)
{
    if (!p || p[0] != '/')
        return "is not absolute";
    if (strlen(p) > MAX_PATH_LEN)
        return "is longer than 4096 characters";
    for (const char *s = p; *s;) {
        while (*s == '/')
            s++;
        size_t n = strcspn(s, "/");
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return "has a . or .. component";
        s += n;
    }
    return NULL;
}

static bool is_root(const char *p)
{
    return strspn(p, "/") == strlen(p);
}

static json_t *paths(const json_t *list, const char *field, bool writable, size_t *total, mxc_error *e)
{
    if (list && !json_is_array(list))
        return refuse(e, "filesystem_policy.%s must be a list of paths", field);
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        const char *p = json_string_value(v);
        const char *problem = p ? path_problem(p) : "is not a string";
        if (!problem && writable && is_root(p))
            problem = "is the whole filesystem (too broad to be writable)";
        if (problem || ++*total > MAX_PATHS) {
            json_decref(out);
            return problem ? refuse(e, "filesystem_policy.%s[%zu] %s", field, i, problem)
                           : refuse(e, "filesystem_policy lists more than %d paths", MAX_PATHS);
        }
        json_array_append(out, v);
    }
    return out;
}

static json_t *filesystem(const json_t *fs, const char *workdir, mxc_error *e)
{
    static const char *const KEYS[] = {"include_workdir", "read_only", "read_write", NULL};
    const char *bad;
    if (fs && !json_is_object(fs))
        return refuse(e, "filesystem_policy must be a mapping");
    if (fs && !only_keys(fs, KEYS, &bad))
        return refuse(e, "filesystem_policy has an unknown field %s", bad);
    json_t *iw = json_object_get(fs, "include_workdir");
    if (iw && !json_is_boolean(iw))
        return refuse(e, "filesystem_policy.include_workdir must be true or false");
    size_t total = 0;
    json_t *ro = paths(json_object_get(fs, "read_only"), "read_only", false, &total, e);
    json_t *rw = ro ? paths(json_object_get(fs, "read_write"), "read_write", true, &total, e) : NULL;
    if (!rw) {
        json_decref(ro);
        return NULL;
    }
    if (json_is_true(iw)) {
        const char *problem = workdir ? path_problem(workdir) : "is not given";
        if (!problem && is_root(workdir))
            problem = "is the whole filesystem (too broad to be writable)";
        if (problem) {
            json_decref(ro);
            json_decref(rw);
            return refuse(e, "filesystem_policy.include_workdir: the working directory %s", problem);
        }
        json_array_append_new(rw, json_string(workdir));
    }
    json_t *out = json_object();
    if (json_array_size(ro))
        json_object_set(out, "readonlyPaths", ro);
    if (json_array_size(rw))
        json_object_set(out, "readwritePaths", rw);
    json_decref(ro);
    json_decref(rw);
    return out;
}

/* One endpoint host as mxc-proxy's entry syntax has it (hostpolicy.h):
 * OpenShell's "**.example.com" (any depth) is our "*.example.com";
 * a one-label "*.example.com" or a wildcard inside a label has no
 * equivalent in mxc-proxy and is refused rather than widened. */
static const char *host_entry(const char *h, char *out, size_t outsz)
{
    if (!h || !h[0])
        return "needs a host";
    if (strchr(h, '/') || strchr(h, ' '))
        return "is not a host name or address";
    if (!strncmp(h, "**.", 3)) {
        if (strchr(h + 3, '*') || !strchr(h + 3, '.'))
            return "is a wildcard over a top-level domain or with a second '*'";
        snprintf(out, outsz, "*.%s", h + 3);
        return NULL;
    }
    if (strchr(h, '*'))
        return "is a one-label or intra-label wildcard, which mxc-proxy cannot match exactly (write **.domain "
               "for every subdomain)";
    snprintf(out, outsz, "%s", h);
    return NULL;
}

/* "host:port", or "[v6]:port". */
static void entry_with_port(const char *host, long port, char *out, size_t outsz)
{
    if (strchr(host, ':'))
        snprintf(out, outsz, "[%s]:%ld", host, port);
    else
        snprintf(out, outsz, "%s:%ld", host, port);
}

static bool add_host(json_t *hosts, const char *entry)
{
    size_t i;
    json_t *v;
    json_array_foreach(hosts, i, v) if (!strcmp(json_string_value(v), entry)) return true;
    if (json_array_size(hosts) >= MAX_HOSTS)
        return false;
    json_array_append_new(hosts, json_string(entry));
    return true;
}

/* L7 fields mxc-proxy does not enforce: a policy that asks for them is
 * refused, never run with the inspection silently missing. */
static const char *const L7_FIELDS[] = {"protocol", "access", "rules", "deny_rules", "enforcement", "allow_encoded_slash",
                                       "websocket_credential_rewrite", "request_body_credential_rewrite",
                                       "credential_signing", "signing_service", "signing_region", "persisted_queries",
                                       "graphql_persisted_queries", "graphql_max_body_bytes", "mcp", "json_rpc", NULL};

static json_t *endpoints_of(const char *rule, const json_t *entry, json_t *hosts, mxc_error *e)
{
    static const char *const KEYS[] = {"name", "endpoints", "binaries", NULL};
    const char *bad;
    if (!json_is_object(entry))
        return refuse(e, "network_policies.%s must be a mapping", rule);
    if (!only_keys(entry, KEYS, &bad))
        return refuse(e, "network_policies.%s has an unknown field %s", rule, bad);
    json_t *eps = json_object_get(entry, "endpoints");
    if (!json_is_array(eps) || !json_array_size(eps))
        return refuse(e, "network_policies.%s.endpoints must list at least one endpoint", rule);
    json_t *bins = json_object_get(entry, "binaries");
    if (bins && !json_is_array(bins))
        return refuse(e, "network_policies.%s.binaries must be a list", rule);
    size_t i;
    json_t *ep;
    json_array_foreach(eps, i, ep) {
        static const char *const EP_KEYS[] = {"host", "port", "ports", "path", "tls", "allow_uninspected_credentials",
                                              NULL};
        if (!json_is_object(ep))
            return refuse(e, "network_policies.%s.endpoints[%zu] must be a mapping", rule, i);
        for (size_t k = 0; L7_FIELDS[k]; k++)
            if (json_object_get(ep, L7_FIELDS[k]))
                return refuse(e, "network_policies.%s.endpoints[%zu].%s: HTTP inspection is not enforced "
                              "by mxc-proxy (it allows or refuses by host and port, and substitutes provider "
                              "credentials); remove it or use another driver", rule, i, L7_FIELDS[k]);
        if (!only_keys(ep, EP_KEYS, &bad))
            return refuse(e, "network_policies.%s.endpoints[%zu] has an unknown field %s", rule, i, bad);
        if (json_object_get(ep, "allowed_ips"))
            return refuse(e, "network_policies.%s.endpoints[%zu].allowed_ips: mxc-proxy allows a range by "
                          "address for every name alike, wider than a per-endpoint override; name the addresses as "
                          "endpoints of their own if they are meant to be reachable", rule, i);
        const char *tls = json_string_value(json_object_get(ep, "tls"));
        if (json_object_get(ep, "tls") && (!tls || (strcmp(tls, "skip") && strcmp(tls, "terminate") &&
                                                    strcmp(tls, "passthrough"))))
            return refuse(e, "network_policies.%s.endpoints[%zu].tls must be skip, terminate or passthrough",
                          rule, i);
        const char *path = json_string_value(json_object_get(ep, "path"));
        if (json_object_get(ep, "path") && (!path || (path[0] && strcmp(path, "/**") && strcmp(path, "**"))))
            return refuse(e, "network_policies.%s.endpoints[%zu].path: choosing by HTTP path is not enforced "
                          "by mxc-proxy for tunnelled traffic; leave it empty", rule, i);
        char host[300];
        const char *problem = host_entry(json_string_value(json_object_get(ep, "host")), host, sizeof host);
        if (problem)
            return refuse(e, "network_policies.%s.endpoints[%zu].host %s", rule, i, problem);
        json_t *port = json_object_get(ep, "port"), *ports = json_object_get(ep, "ports");
        if (!port == !ports)
            return refuse(e, "network_policies.%s.endpoints[%zu] needs port or ports (one of them)", rule, i);
        json_t *one = ports ? NULL : json_array();
        if (one)
            json_array_append(one, port);
        json_t *list = ports ? ports : one;
        size_t j;
        json_t *p;
        bool ok = json_is_array(list) && json_array_size(list);
        json_array_foreach(list, j, p) {
            long n = json_is_integer(p) ? (long)json_integer_value(p) : 0;
            char hp[330];
            if (n < 1 || n > 65535) {
                ok = false;
                break;
            }
            entry_with_port(host, n, hp, sizeof hp);
            if (!add_host(hosts, hp)) {
                json_decref(one);
                return refuse(e, "network_policies name more than %d endpoints", MAX_HOSTS);
            }
        }
        json_decref(one);
        if (!ok)
            return refuse(e, "network_policies.%s.endpoints[%zu]: ports are 1 to 65535", rule, i);
    }
    return hosts;
}

static json_t *network(const json_t *policy, const mxc_gw_config *cfg, mxc_error *e)
{
    if (json_object_get(policy, "network_middlewares"))
        return refuse(e, "network_middlewares are refused: mxc-proxy has no middleware registry (spec 002)");
    json_t *np = json_object_get(policy, "network_policies");
    if (np && !json_is_object(np))
        return refuse(e, "network_policies must be a mapping of named rules");
    json_t *net = json_object();
    if (!json_object_size(np)) {
        if (cfg->egress_proxy && cfg->network_allow) {
            json_decref(net);
            return refuse(e, "pc_network_allow with egress_proxy and no network_policies would turn governed "
                          "egress into allow-all: name the endpoints in network_policies");
        }
        json_object_set_new(net, "defaultPolicy", json_string(cfg->network_allow ? "allow" : "block"));
        if (cfg->network_allow && cfg->allow_local_network)
            json_object_set_new(net, "allowLocalNetwork", json_true());
        return net;
    }
    if (!cfg->egress_proxy) {
        json_decref(net);
        return refuse(e, "network_policies need egress_proxy = true in [openshell.drivers.mxc]: without the "
                      "proxy no network rule can be enforced (spec 002: fail closed)");
    }
    json_t *hosts = json_array();
    const char *rule;
    json_t *entry;
    json_object_foreach(np, rule, entry) {
        if (!endpoints_of(rule, entry, hosts, e)) {
            json_decref(hosts);
            json_decref(net);
            return NULL;
        }
    }
    json_object_set_new(net, "defaultPolicy", json_string("block"));
    json_object_set_new(net, "allowedHosts", hosts);
    return net;
}

static bool ui_ok(const json_t *ui, const mxc_gw_config *cfg, mxc_error *e)
{
    static const char *const KEYS[] = {"allow_graphical_ui", "clipboard", "allow_input_injection", NULL};
    const char *bad;
    if (!ui)
        return true;
    if (!json_is_object(ui))
        return refuse(e, "ui must be a mapping"), false;
    if (cfg->backend == MXC_GW_BACKEND_SESSION)
        return refuse(e, "ui: the isolation_session backend supports no ui section (spec 002); remove it"),
               false;
    if (!only_keys(ui, KEYS, &bad))
        return refuse(e, "ui has an unknown field %s", bad), false;
    json_t *g = json_object_get(ui, "allow_graphical_ui"), *inj = json_object_get(ui, "allow_input_injection");
    const char *clip = json_string_value(json_object_get(ui, "clipboard"));
    if ((g && !json_is_boolean(g)) || (inj && !json_is_boolean(inj)) || (json_object_get(ui, "clipboard") && !clip))
        return refuse(e, "ui: allow_graphical_ui and allow_input_injection are true or false, clipboard a "
                      "word"), false;
    if (clip && strcmp(clip, "none") && strcmp(clip, "read") && strcmp(clip, "write") && strcmp(clip, "all"))
        return refuse(e, "ui.clipboard must be none, read, write or all, not %s", clip), false;
    if (json_is_true(g) || json_is_true(inj) || (clip && strcmp(clip, "none")))
        return refuse(e, "ui: an mxc sandbox on Linux reaches no display server, clipboard or input device; "
                      "graphical UI, clipboard and input injection cannot be granted"), false;
    return true;
}

json_t *mxc_gw_map_policy(const json_t *policy, const mxc_gw_config *cfg, const char *workdir,
                          mxc_error *e)
{
    static const char *const KEYS[] = {"version", "filesystem_policy", "landlock", "process", "network_policies",
                                       "network_middlewares", "ui", NULL};
    const char *bad;
    if (!json_is_object(policy))
        return refuse(e, "the policy must be a mapping");
    if (!only_keys(policy, KEYS, &bad))
        return refuse(e, "the policy has an unknown field %s", bad);
    json_t *ver = json_object_get(policy, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        return refuse(e, "the policy's version must be 1");
    json_t *ll = json_object_get(policy, "landlock");
    static const char *const LL_KEYS[] = {"compatibility", NULL};
    if (ll && (!json_is_object(ll) || !only_keys(ll, LL_KEYS, &bad)))
        return refuse(e, "landlock takes only compatibility");
    const char *compat = json_string_value(json_object_get(ll, "compatibility"));
    if (json_object_get(ll, "compatibility") &&
        (!compat || (strcmp(compat, "best_effort") && strcmp(compat, "hard_requirement"))))
        return refuse(e, "landlock.compatibility must be best_effort or hard_requirement");
    json_t *proc = json_object_get(policy, "process");
    static const char *const P_KEYS[] = {"run_as_user", "run_as_group", NULL};
    if (proc && (!json_is_object(proc) || !only_keys(proc, P_KEYS, &bad)))
        return refuse(e, "process takes only run_as_user and run_as_group");
    for (size_t i = 0; P_KEYS[i]; i++) {
        json_t *v = json_object_get(proc, P_KEYS[i]);
        if (v && (!json_is_string(v) || strcmp(json_string_value(v), "sandbox")))
            return refuse(e, "process.%s: mxc gives every sandbox a uid of its own (claimed per sandbox, never "
                          "root); only \"sandbox\" can be honoured", P_KEYS[i]);
    }
    if (!ui_ok(json_object_get(policy, "ui"), cfg, e))
        return NULL;
    json_t *fs = filesystem(json_object_get(policy, "filesystem_policy"), workdir, e);
    if (!fs)
        return NULL;
    json_t *net = network(policy, cfg, e);
    if (!net) {
        json_decref(fs);
        return NULL;
    }
    json_t *out = json_object();
    if (json_object_size(fs))
        json_object_set(out, "filesystem", fs);
    json_object_set_new(out, "network", net);
    json_decref(fs);
    return out;
}
