/* netplan.c — see netplan.h: the plan's own functions (free, names, the proxy URL's shape) and
 * the network layer's table, with the engine's own failing-closed one until it is installed. */
#include "netplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int no_network(mxc_error *e)
{
    mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "this program carries no network layer: only a sandbox without a network "
            "(its own namespace, loopback only) can be made");
    mxc_err_set_remediation(e, "use mxc-exec, mxc, mxc-gateway, mxc-oci or libmxc, or leave network out");
    return -1;
}

static int lower_none(const mxc_net_section *s, mxc_net_policy *np, mxc_error *e)
{
    memset(np, 0, sizeof *np);
    return s->present ? no_network(e) : 0;
}

static int require_none(const mxc_net_policy *np, bool rootless, mxc_error *e)
{
    (void)rootless;
    return np->model == MXC_NETM_NONE ? 0 : no_network(e);
}

static int policy_none(mxc_net_policy *np, mxc_error *e)
{
    (void)np;
    return no_network(e);
}

static void resolve_none(mxc_net_policy *np)
{
    (void)np;
}

static bool needs_none(const mxc_net_policy *np)
{
    return np->model != MXC_NETM_NONE; /* never planned here: attach refuses it */
}

static int attach_none(const mxc_net_policy *np, const mxc_net_cgroup *cg, pid_t holder, mxc_error *e)
{
    (void)cg;
    (void)holder;
    return np->model == MXC_NETM_NONE ? 0 : no_network(e);
}

static int after_maps_none(const mxc_net_policy *np, const mxc_net_cgroup *cg, bool direct, pid_t pid1, mxc_error *e)
{
    return direct ? attach_none(np, cg, pid1, e) : 0;
}

static void remove_ca_none(const mxc_net_policy *np)
{
    (void)np;
}

static char *rules_none(const mxc_net_policy *np, int *err)
{
    (void)np;
    *err = 0;
    return NULL;
}

static json_t *probe_none(void)
{
    return json_pack("{s:b}", "networkLayer", 0);
}

static int pool_claim_none(const mxc_net_policy *np, const char *cgroup)
{
    (void)np, (void)cgroup;
    return -1;
}

static void pool_refill_none(const mxc_net_policy *np)
{
    (void)np;
}

static void pool_release_none(void)
{
}

static void pool_sweep_none(bool act, json_t *r)
{
    (void)act;
    (void)r;
}

static const mxc_net_ops NONE = {
    .lower = lower_none, .require = require_none, .credential = policy_none, .workload_env = policy_none,
    .resolve = resolve_none, .needs_stack = needs_none, .after_maps = after_maps_none, .attach = attach_none,
    .remove_ca = remove_ca_none, .rules_now = rules_none, .probe = probe_none, .pool_claim = pool_claim_none,
    .pool_refill = pool_refill_none, .pool_sweep = pool_sweep_none, .pool_release = pool_release_none,
};

static const mxc_net_ops *installed;

void mxc_net_ops_set(const mxc_net_ops *ops)
{
    installed = ops;
}

const mxc_net_ops *mxc_net_ops_get(void)
{
    return installed ? installed : &NONE;
}

bool mxc_net_proxy_url_ok(const char *u)
{
    static const char GW_HTTP[] = "http://" MXC_NET_GATEWAY ":", GW_HTTPS[] = "https://" MXC_NET_GATEWAY ":";
    static const char GOV[] = MXC_GOVERNED_URL_HEAD, GOV_TAIL[] = "@" MXC_GOVERNED_ADDR ":" MXC_GOVERNED_PORT_TEXT "/";
    if (!u || strlen(u) >= sizeof ((mxc_net_policy *)0)->proxy_url)
        return false;
    const char *p = NULL;
    if (!strncmp(u, GW_HTTP, sizeof GW_HTTP - 1))
        p = u + sizeof GW_HTTP - 1;
    else if (!strncmp(u, GW_HTTPS, sizeof GW_HTTPS - 1))
        p = u + sizeof GW_HTTPS - 1;
    if (p) {
        size_t d = strspn(p, "0123456789");
        return d >= 1 && d <= 5 && !strcmp(p + d, "/");
    }
    if (strncmp(u, GOV, sizeof GOV - 1))
        return false;
    p = u + sizeof GOV - 1;
    return strspn(p, "0123456789abcdef") == 32 && !strcmp(p + 32, GOV_TAIL);
}

void mxc_net_policy_free(mxc_net_policy *np)
{
    free(np->ruleset);
    free(np->hosts);
    mxc_net_credentials_free(np->creds, np->ncreds);
    free(np->workload_env);
    memset(np, 0, sizeof *np);
}

const char *mxc_net_model_name(mxc_net_model m)
{
    static const char *const N[] = {"own namespace, loopback only (model 3: nothing)",
                                     "host (unrestricted, acknowledged)",
                                     "own namespace, direct egress under rules through the userspace stack (model 1)",
                                     "own namespace, the proxy endpoint only (model 2)",
                                     "own namespace, governed egress: only mxc-proxy, by host name"};
    return N[m];
}

void mxc_net_plan_restore(const char *proxy_url, const json_t *env, mxc_net_policy *np)
{
    memset(np, 0, sizeof *np);
    if (!mxc_net_proxy_url_ok(proxy_url))
        return;
    bool governed = strncmp(proxy_url, MXC_GOVERNED_URL_HEAD, sizeof MXC_GOVERNED_URL_HEAD - 1) == 0;
    np->model = governed ? MXC_NETM_GOVERNED : MXC_NETM_PROXY;
    snprintf(np->proxy_url, sizeof np->proxy_url, "%s", proxy_url);
    if (json_is_array(env))
        np->workload_env = json_dumps(env, JSON_COMPACT);
}
