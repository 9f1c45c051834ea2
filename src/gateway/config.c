/* config.c — see config.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "toml.h"

typedef enum { K_BOOL, K_STR, K_INT, K_ARRAY } ktype;

/* Every key of [openshell.drivers.mxc]: what it is, and (for the spec's
 * Windows-only keys) the one value that means the same on Linux. */
static const struct {
    const char *key;
    ktype type;
} KEYS[] = {
    {"mxc_exec_path", K_STR},      {"wxc_exec_path", K_STR},        {"backend", K_STR},
    {"default_configuration_id", K_STR},
    {"pc_least_privilege", K_BOOL}, {"pc_capabilities", K_ARRAY},   {"pc_relay_spawner_path", K_STR},
    {"pc_relay_target_port", K_INT}, {"pc_minimal_env", K_BOOL},    {"pc_network_allow", K_BOOL},
    {"pc_allow_local_network", K_BOOL}, {"egress_proxy", K_BOOL},   {"egress_proxy_addr", K_STR},
    {"debug", K_BOOL},             {"audit", K_BOOL},               {"etw_audit", K_BOOL},
};

static int refuse(mxc_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(mxc_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mxc_verr(e, MXC_E_MALFORMED_REQUEST, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *type_word(ktype t)
{
    return t == K_BOOL ? "true or false" : t == K_STR ? "a string" : t == K_INT ? "an integer" : "an array";
}

static bool loopback_addr(const char *v, char *ip, size_t ipsz, uint16_t *port)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v || (size_t)(colon - v) >= ipsz)
        return false;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || p < 1 || p > 65535)
        return false;
    snprintf(ip, ipsz, "%.*s", (int)(colon - v), v);
    struct in_addr a;
    if (inet_pton(AF_INET, ip, &a) != 1 || (ntohl(a.s_addr) >> 24) != 127)
        return false;
    *port = (uint16_t)p;
    return true;
}

void mxc_gw_config_free(mxc_gw_config *cfg)
{
    json_decref(cfg->providers);
    cfg->providers = NULL;
}

static bool env_name_ok(const char *s)
{
    if (!s || !s[0] || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* "host:port" or "host:port/path/prefix" ("[v6]:port..." for IPv6). */
static json_t *endpoint(const char *e)
{
    if (!e || !e[0])
        return NULL;
    char host[256];
    const char *rest;
    if (e[0] == '[') {
        const char *rb = strchr(e, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - e - 1) >= sizeof host)
            return NULL;
        snprintf(host, sizeof host, "%.*s", (int)(rb - e - 1), e + 1);
        rest = rb + 2;
    } else {
        const char *colon = strchr(e, ':');
        if (!colon || colon == e || (size_t)(colon - e) >= sizeof host)
            return NULL;
        snprintf(host, sizeof host, "%.*s", (int)(colon - e), e);
        rest = colon + 1;
    }
    char *end;
    errno = 0;
    long port = strtol(rest, &end, 10);
    if (end == rest || errno || port < 1 || port > 65535 || (*end && *end != '/') || strpbrk(host, "/ *"))
        return NULL;
    json_t *o = json_pack("{s:s, s:i}", "host", host, "port", (int)port);
    if (*end)
        json_object_set_new(o, "pathPrefix", json_string(end));
    return o;
}

/* [mxc.providers.*]: every key known, every value checked, nothing read. */
static json_t *providers(json_t *t, mxc_error *e)
{
    json_t *out = json_object();
    const char *name;
    json_t *p;
    json_object_foreach(t, name, p) {
        static const char *const PKEYS[] = {"token_env", "token_file", "env", "endpoints", "revision", "expires_at", NULL};
        bool ok_name = name[0] != '\0';
        for (const char *c = name; *c; c++)
            ok_name = ok_name && ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                                  *c == '-' || *c == '_' || *c == '.');
        if (!ok_name || strlen(name) > 64 || !json_is_object(p)) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST,
                    "[mxc.providers.%s]: a provider is a table named by [A-Za-z0-9_.-]{1,64}", name);
            goto fail;
        }
        const char *k;
        json_t *v;
        json_object_foreach(p, k, v) {
            size_t i = 0;
            while (PKEYS[i] && strcmp(PKEYS[i], k))
                i++;
            if (!PKEYS[i]) {
                mxc_err(e, MXC_E_MALFORMED_REQUEST, "[mxc.providers.%s] has an unknown key %s", name, k);
                goto fail;
            }
        }
        const char *te = json_string_value(json_object_get(p, "token_env"));
        const char *tf = json_string_value(json_object_get(p, "token_file"));
        if (!te == !tf || (te && !env_name_ok(te)) || (tf && tf[0] != '/')) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST,
                    "[mxc.providers.%s] needs exactly one of token_env (a variable name) or token_file "
                    "(an absolute path)", name);
            goto fail;
        }
        const char *env = json_string_value(json_object_get(p, "env"));
        if (!env_name_ok(env)) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST,
                    "[mxc.providers.%s] env must name the workload variable that receives the placeholder",
                    name);
            goto fail;
        }
        json_t *rev = json_object_get(p, "revision");
        if (rev && (!json_is_integer(rev) || json_integer_value(rev) < 1)) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST, "[mxc.providers.%s] revision must be a positive integer", name);
            goto fail;
        }
        json_t *eps = json_object_get(p, "endpoints"), *list = json_array();
        size_t i;
        json_array_foreach(eps, i, v) {
            json_t *ep = endpoint(json_string_value(v));
            if (!ep) {
                json_decref(list);
                mxc_err(e, MXC_E_MALFORMED_REQUEST,
                        "[mxc.providers.%s] endpoints[%zu] must be host:port or host:port/path-prefix",
                        name, i);
                goto fail;
            }
            json_array_append_new(list, ep);
        }
        if (!json_is_array(eps) || !json_array_size(list)) {
            json_decref(list);
            mxc_err(e, MXC_E_MALFORMED_REQUEST, "[mxc.providers.%s] needs endpoints (host:port...)", name);
            goto fail;
        }
        json_t *pr = json_pack("{s:s, s:o, s:I}", "env", env, "endpoints", list, "revision",
                               rev ? json_integer_value(rev) : (json_int_t)1);
        json_object_set_new(pr, te ? "token_env" : "token_file", json_string(te ? te : tf));
        if (json_object_get(p, "expires_at"))
            json_object_set_new(pr, "expires", json_true());
        json_object_set_new(out, name, pr);
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}

int mxc_gw_config_parse(const char *text, size_t len, mxc_gw_config *cfg, mxc_error *e)
{
    memset(cfg, 0, sizeof *cfg);
    mxc_error te = {0};
    json_t *doc = mxc_toml_parse(text, len, &te);
    if (!doc)
        return refuse(e, "the configuration is not valid TOML: %s", te.message);
    int rc = -1;
    json_t *t = json_object_get(json_object_get(json_object_get(doc, "openshell"), "drivers"), "mxc");
    if (!json_is_object(t)) {
        refuse(e, "the configuration has no [openshell.drivers.mxc] table");
        goto out;
    }
    const char *k;
    json_t *v;
    json_object_foreach(t, k, v) {
        size_t i = 0;
        while (i < sizeof KEYS / sizeof KEYS[0] && strcmp(KEYS[i].key, k))
            i++;
        if (i == sizeof KEYS / sizeof KEYS[0]) {
            refuse(e, "[openshell.drivers.mxc] has an unknown key %s", k);
            goto out;
        }
        ktype ty = KEYS[i].type;
        if ((ty == K_BOOL && !json_is_boolean(v)) || (ty == K_STR && !json_is_string(v)) ||
            (ty == K_INT && !json_is_integer(v)) || (ty == K_ARRAY && !json_is_array(v))) {
            refuse(e, "[openshell.drivers.mxc] %s must be %s", k, type_word(ty));
            goto out;
        }
    }
    json_t *mp = json_object_get(t, "mxc_exec_path"), *wp = json_object_get(t, "wxc_exec_path");
    if (mp && wp) {
        refuse(e, "give mxc_exec_path or wxc_exec_path, not both");
        goto out;
    }
    const char *exe = json_string_value(mp ? mp : wp);
    if (!exe || exe[0] != '/') {
        refuse(e, "mxc_exec_path is required and must be an absolute path (got %s): the gateway never "
               "looks the executor up through PATH or its working directory", exe ? exe : "nothing");
        goto out;
    }
    if (strlen(exe) >= sizeof cfg->exec_path) {
        refuse(e, "mxc_exec_path is too long");
        goto out;
    }
    snprintf(cfg->exec_path, sizeof cfg->exec_path, "%s", exe);
    const char *be = json_string_value(json_object_get(t, "backend"));
    if (!be || !strcmp(be, "process") || !strcmp(be, "process_container"))
        cfg->backend = MXC_GW_BACKEND_PROCESS;
    else if (!strcmp(be, "isolation_session"))
        cfg->backend = MXC_GW_BACKEND_SESSION;
    else {
        refuse(e, "backend must be process (process_container) or isolation_session, not %s", be);
        goto out;
    }
    const char *dc = json_string_value(json_object_get(t, "default_configuration_id"));
    if (dc && strcmp(dc, "composable")) {
        refuse(e, "default_configuration_id %s has no Linux meaning: only \"composable\"", dc);
        goto out;
    }
    if (json_array_size(json_object_get(t, "pc_capabilities"))) {
        refuse(e, "pc_capabilities names Windows capability SIDs, which Linux has none of: leave it "
               "empty");
        goto out;
    }
    const char *rs = json_string_value(json_object_get(t, "pc_relay_spawner_path"));
    json_t *rp = json_object_get(t, "pc_relay_target_port");
    if ((rs && rs[0]) || (rp && json_integer_value(rp) != 0)) {
        refuse(e, "the relay spawner (pc_relay_spawner_path, pc_relay_target_port) is not built on "
               "Linux: leave them \"\" and 0");
        goto out;
    }
    cfg->minimal_env = json_is_true(json_object_get(t, "pc_minimal_env"));
    cfg->network_allow = json_is_true(json_object_get(t, "pc_network_allow"));
    cfg->allow_local_network = json_is_true(json_object_get(t, "pc_allow_local_network"));
    cfg->egress_proxy = json_is_true(json_object_get(t, "egress_proxy"));
    cfg->debug = json_is_true(json_object_get(t, "debug"));
    cfg->audit = json_is_true(json_object_get(t, "audit")) || json_is_true(json_object_get(t, "etw_audit"));
    const char *pa = json_string_value(json_object_get(t, "egress_proxy_addr"));
    if (pa && pa[0] && !loopback_addr(pa, cfg->proxy_ip, sizeof cfg->proxy_ip, &cfg->proxy_port)) {
        refuse(e, "egress_proxy_addr must be a loopback IPv4 address and port (127.0.0.1:PORT), not %s",
               pa);
        goto out;
    }
    if (cfg->egress_proxy && cfg->backend != MXC_GW_BACKEND_PROCESS) {
        refuse(e, "egress_proxy requires backend = \"process\" (the spec's rule)");
        goto out;
    }
    json_t *pt = json_object_get(json_object_get(doc, "mxc"), "providers");
    if (pt && !json_is_object(pt)) {
        refuse(e, "[mxc.providers] must be a table of providers");
        goto out;
    }
    cfg->providers = providers(pt, e);
    if (!cfg->providers)
        goto out;
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

int mxc_gw_config_load(const char *path, mxc_gw_config *cfg, mxc_error *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MXC_TOML_MAX_BYTES) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return refuse(e, "cannot read the configuration %s: %s", path,
                      fd >= 0 ? "not a regular file of at most 1 MiB" : strerror(err));
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (n != st.st_size) {
        free(buf);
        return refuse(e, "cannot read the configuration %s", path);
    }
    int rc = mxc_gw_config_parse(buf, (size_t)n, cfg, e);
    free(buf);
    return rc;
}

/* config.h */
char *mxc_gw_provider_token(const json_t *p)
{
    const char *ev = json_string_value(json_object_get(p, "token_env"));
    if (ev) {
        const char *v = getenv(ev);
        return v && *v ? strdup(v) : NULL;
    }
    const char *path = json_string_value(json_object_get(p, "token_file"));
    if (!path)
        return NULL;
    char buf[8193];
    ssize_t n = mxc_read_small_at(AT_FDCWD, path, buf, sizeof buf);
    if (n <= 0 || n == (ssize_t)sizeof buf - 1) {
        explicit_bzero(buf, sizeof buf);
        return NULL;
    }
    buf[strcspn(buf, "\r\n")] = '\0';
    char *t = buf[0] ? strdup(buf) : NULL;
    explicit_bzero(buf, sizeof buf);
    return t;
}
