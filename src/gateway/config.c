/* config.c — see config.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int refuse(char *why, size_t whysz, const char *fmt, const char *a, const char *b)
{
    snprintf(why, whysz, fmt, a, b ? b : "");
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

int mxc_gw_config_parse(const char *text, size_t len, mxc_gw_config *cfg, char *why, size_t whysz)
{
    memset(cfg, 0, sizeof *cfg);
    char err[300];
    json_t *doc = mxc_toml_parse(text, len, err, sizeof err);
    if (!doc)
        return refuse(why, whysz, "the configuration is not valid TOML: %s%s", err, NULL);
    int rc = -1;
    json_t *t = json_object_get(json_object_get(json_object_get(doc, "openshell"), "drivers"), "mxc");
    if (!json_is_object(t)) {
        refuse(why, whysz, "the configuration has no [openshell.drivers.mxc] table%s%s", "", NULL);
        goto out;
    }
    const char *k;
    json_t *v;
    json_object_foreach(t, k, v) {
        size_t i = 0;
        while (i < sizeof KEYS / sizeof KEYS[0] && strcmp(KEYS[i].key, k))
            i++;
        if (i == sizeof KEYS / sizeof KEYS[0]) {
            refuse(why, whysz, "[openshell.drivers.mxc] has an unknown key %s%s", k, NULL);
            goto out;
        }
        ktype ty = KEYS[i].type;
        if ((ty == K_BOOL && !json_is_boolean(v)) || (ty == K_STR && !json_is_string(v)) ||
            (ty == K_INT && !json_is_integer(v)) || (ty == K_ARRAY && !json_is_array(v))) {
            refuse(why, whysz, "[openshell.drivers.mxc] %s must be %s", k, type_word(ty));
            goto out;
        }
    }
    json_t *mp = json_object_get(t, "mxc_exec_path"), *wp = json_object_get(t, "wxc_exec_path");
    if (mp && wp) {
        refuse(why, whysz, "give mxc_exec_path or wxc_exec_path, not both%s%s", "", NULL);
        goto out;
    }
    const char *exe = json_string_value(mp ? mp : wp);
    if (!exe || exe[0] != '/') {
        refuse(why, whysz, "mxc_exec_path is required and must be an absolute path (got %s): the gateway never "
               "looks the executor up through PATH or its working directory%s", exe ? exe : "nothing", NULL);
        goto out;
    }
    if (strlen(exe) >= sizeof cfg->exec_path) {
        refuse(why, whysz, "mxc_exec_path is too long%s%s", "", NULL);
        goto out;
    }
    snprintf(cfg->exec_path, sizeof cfg->exec_path, "%s", exe);
    const char *be = json_string_value(json_object_get(t, "backend"));
    if (!be || !strcmp(be, "process") || !strcmp(be, "process_container"))
        cfg->backend = MXC_GW_BACKEND_PROCESS;
    else if (!strcmp(be, "isolation_session"))
        cfg->backend = MXC_GW_BACKEND_SESSION;
    else {
        refuse(why, whysz, "backend must be process (process_container) or isolation_session, not %s%s", be, NULL);
        goto out;
    }
    const char *dc = json_string_value(json_object_get(t, "default_configuration_id"));
    if (dc && strcmp(dc, "composable")) {
        refuse(why, whysz, "default_configuration_id %s has no Linux meaning: only \"composable\"%s", dc, NULL);
        goto out;
    }
    if (json_array_size(json_object_get(t, "pc_capabilities"))) {
        refuse(why, whysz, "pc_capabilities names Windows capability SIDs, which Linux has none of: leave it "
               "empty%s%s", "", NULL);
        goto out;
    }
    const char *rs = json_string_value(json_object_get(t, "pc_relay_spawner_path"));
    json_t *rp = json_object_get(t, "pc_relay_target_port");
    if ((rs && rs[0]) || (rp && json_integer_value(rp) != 0)) {
        refuse(why, whysz, "the relay spawner (pc_relay_spawner_path, pc_relay_target_port) is not built on "
               "Linux: leave them \"\" and 0%s%s", "", NULL);
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
        refuse(why, whysz, "egress_proxy_addr must be a loopback IPv4 address and port (127.0.0.1:PORT), not %s%s",
               pa, NULL);
        goto out;
    }
    if (cfg->egress_proxy && cfg->backend != MXC_GW_BACKEND_PROCESS) {
        refuse(why, whysz, "egress_proxy requires backend = \"process\" (the spec's rule)%s%s", "", NULL);
        goto out;
    }
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

int mxc_gw_config_load(const char *path, mxc_gw_config *cfg, char *why, size_t whysz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MXC_TOML_MAX_BYTES) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return refuse(why, whysz, "cannot read the configuration %s: %s", path,
                      fd >= 0 ? "not a regular file of at most 1 MiB" : strerror(err));
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (n != st.st_size) {
        free(buf);
        return refuse(why, whysz, "cannot read the configuration %s%s", path, NULL);
    }
    int rc = mxc_gw_config_parse(buf, (size_t)n, cfg, why, whysz);
    free(buf);
    return rc;
}
