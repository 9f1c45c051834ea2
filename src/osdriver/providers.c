/* providers.c — see providers.h. */
#include "providers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool listed(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (json_is_string(v) && !strcmp(json_string_value(v), s))
            return true;
    }
    return false;
}

/* The provider named at names[i], checked: configured, not expiring, named once, every
 * endpoint allowed by hosts; NULL with *e. */
static const json_t *one(const json_t *names, size_t i, const json_t *hosts, const mxc_gw_config *cfg, mxc_error *e)
{
    const char *name = json_string_value(json_array_get(names, i));
    const json_t *p = name ? json_object_get(cfg->providers, name) : NULL;
    const char *why = NULL;
    char ep[300] = "";
    if (!name)
        why = "is not a name";
    else if (!p)
        why = "is not configured ([mxc.providers.NAME] in the driver's --config)";
    else if (json_is_true(json_object_get(p, "expires")))
        why = "has an expiring credential: the driver has no channel to refresh it";
    else if (!hosts)
        why = "needs governed egress: egress_proxy = true in --config and network_policies naming its endpoints";
    for (size_t k = 0; !why && i && k < i; k++)
        if (!strcmp(json_string_value(json_array_get(names, k)), name))
            why = "is named twice";
    size_t k;
    json_t *x;
    json_array_foreach(p && !why ? json_object_get(p, "endpoints") : NULL, k, x) {
        const char *h = json_string_value(json_object_get(x, "host"));
        snprintf(ep, sizeof ep, strchr(h, ':') ? "[%s]:%lld" : "%s:%lld", h,
                 (long long)json_integer_value(json_object_get(x, "port")));
        if (!listed(hosts, ep)) {
            why = "has an endpoint network_policies do not allow: ";
            break;
        }
    }
    if (why) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "template.driver_config.providers[%zu] %s %s%s", i,
                name ? name : "", why, strstr(why, "allow:") ? ep : "");
        return NULL;
    }
    return p;
}

int osd_providers_bind(json_t *fragment, const json_t *names, const mxc_gw_config *cfg, mxc_error *e)
{
    if (!names)
        return 0;
    if (!json_is_array(names) || json_array_size(names) > OSD_MAX_PROVIDERS)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "template.driver_config.providers must be a list of at most %d "
                                                   "provider names",
                       OSD_MAX_PROVIDERS);
    json_t *net = json_object_get(fragment, "network");
    const json_t *hosts = json_object_get(net, "allowedHosts");
    json_t *creds = json_array();
    for (size_t i = 0; i < json_array_size(names); i++) {
        const json_t *p = one(names, i, hosts, cfg, e);
        if (!p) {
            json_decref(creds);
            return -1;
        }
        char var[40];
        snprintf(var, sizeof var, OSD_SECRET_ENV "%zu", i);
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(p, "endpoints"), k, x) {
            json_t *c = json_pack("{s:O,s:O,s:O,s:O,s:s,s:O}", "name", json_array_get(names, i), "revision",
                                  json_object_get(p, "revision"), "host", json_object_get(x, "host"), "port",
                                  json_object_get(x, "port"), "secretEnv", var, "env", json_object_get(p, "env"));
            if (c && json_object_get(x, "pathPrefix"))
                json_object_set(c, "pathPrefix", json_object_get(x, "pathPrefix"));
            json_array_append_new(creds, c);
        }
    }
    if (json_array_size(creds))
        json_object_set(net, "credentials", creds);
    json_decref(creds);
    return 0;
}

void osd_providers_wipe(char **kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        explicit_bzero(kv[i], strlen(kv[i]));
        free(kv[i]);
        kv[i] = NULL;
    }
}

int osd_providers_secrets(const json_t *names, const mxc_gw_config *cfg, char **kv, size_t *n, mxc_error *e)
{
    *n = 0;
    for (size_t i = 0; i < json_array_size(names) && i < OSD_MAX_PROVIDERS; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        const json_t *p = name ? json_object_get(cfg->providers, name) : NULL;
        char *tok = p ? mxc_gw_provider_token(p) : NULL;
        if (!tok || asprintf(&kv[*n], OSD_SECRET_ENV "%zu=%s", i, tok) < 0) {
            if (tok)
                explicit_bzero(tok, strlen(tok));
            free(tok);
            osd_providers_wipe(kv, *n);
            *n = 0;
            return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                           "provider %s has no token now (not in the driver's --config, its token_env unset or empty "
                           "in the driver's environment, or its token_file unreadable)",
                           name ? name : "?");
        }
        explicit_bzero(tok, strlen(tok));
        free(tok);
        (*n)++;
    }
    return 0;
}
