/* request.c — see request.h.  The accepted shape of every object is a key
 * table below; the checker walks the tree against it, so unknown keys and
 * wrong types are refused uniformly with their JSON path. */
#include "request.h"
#include "netrules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

typedef enum { K_STR, K_BOOL, K_UINT, K_OBJ, K_STRS, K_OPEN_OBJ, K_ANY } ktype;

typedef struct keyspec {
    const char *key;
    ktype type;
    const struct keyspec *sub; /* for K_OBJ */
} keyspec;

static const keyspec PROCESS_KEYS[] = {
    {"commandLine", K_STR, NULL}, {"cwd", K_STR, NULL}, {"env", K_STRS, NULL}, {"timeout", K_UINT, NULL}, {0}};
static const keyspec FS_KEYS[] = {
    {"readwritePaths", K_STRS, NULL}, {"readonlyPaths", K_STRS, NULL}, {"deniedPaths", K_STRS, NULL}, {0}};
/* legacy network.proxy: url, or localhost (a port); builtinTestServer is
 * known and refused by src/net */
static const keyspec PROXY_KEYS[] = {
    {"url", K_STR, NULL}, {"localhost", K_ANY, NULL}, {"builtinTestServer", K_ANY, NULL}, {0}};
static const keyspec NET_KEYS[] = {
    {"defaultPolicy", K_STR, NULL},  {"enforcementMode", K_STR, NULL}, {"allowLocalNetwork", K_BOOL, NULL},
    {"allowedHosts", K_STRS, NULL},  {"blockedHosts", K_STRS, NULL},   {"proxy", K_OBJ, PROXY_KEYS},
    {"egress", K_OPEN_OBJ, NULL},    {"ingress", K_OPEN_OBJ, NULL},
    {"credentials", K_ANY, NULL}, /* its entries' shape: src/net/netpolicy.c (with their paths) */
    {0}};
static const keyspec UI_KEYS[] = {{"disable", K_BOOL, NULL}, {"clipboard", K_STR, NULL}, {"injection", K_BOOL, NULL}, {0}};
static const keyspec LIFECYCLE_KEYS[] = {{"destroyOnExit", K_BOOL, NULL}, {"preservePolicy", K_BOOL, NULL}, {0}};
static const keyspec FALLBACK_KEYS[] = {{"allowDaclMutation", K_BOOL, NULL}, {0}};

static const keyspec TOP_KEYS[] = {
    {"version", K_STR, NULL},
    {"$schema", K_STR, NULL},
    {"_comment", K_ANY, NULL},
    {"containment", K_STR, NULL},
    {"containerId", K_STR, NULL},
    {"phase", K_STR, NULL},
    {"sandboxId", K_STR, NULL},
    {"correlationVector", K_STR, NULL},
    {"process", K_OBJ, PROCESS_KEYS},
    {"filesystem", K_OBJ, FS_KEYS},
    {"network", K_OBJ, NET_KEYS},
    {"ui", K_OBJ, UI_KEYS},
    {"lifecycle", K_OBJ, LIFECYCLE_KEYS},
    {"fallback", K_OBJ, FALLBACK_KEYS},
    /* stable sections of other backends: shape is theirs, presence is policy's */
    {"processContainer", K_OPEN_OBJ, NULL},
    {"appContainer", K_OPEN_OBJ, NULL},
    {"lxc", K_OPEN_OBJ, NULL},
    {"seatbelt", K_OPEN_OBJ, NULL},
    {"macos_sandbox", K_OPEN_OBJ, NULL},
    {"runtimeConfig", K_OPEN_OBJ, NULL},
    {"experimental", K_OPEN_OBJ, NULL},
    {0}};

static const char *type_word(ktype t)
{
    switch (t) {
    case K_STR: return "a string";
    case K_BOOL: return "a boolean";
    case K_UINT: return "an unsigned 32-bit integer (milliseconds)";
    case K_OBJ:
    case K_OPEN_OBJ: return "an object";
    case K_STRS: return "an array of strings";
    default: return "a value";
    }
}

static int check_value(json_t *v, const keyspec *k, const char *path, mxc_error *e);

static int check_object(json_t *o, const keyspec *spec, const char *path, mxc_error *e)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        const keyspec *k = spec;
        while (k->key && strcmp(k->key, key) != 0)
            k++;
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%.64s", path, path[0] ? "." : "", key);
        if (!k->key)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "unknown field %s", sub);
        if (check_value(v, k, sub, e) < 0)
            return -1;
    }
    return 0;
}

static int check_value(json_t *v, const keyspec *k, const char *path, mxc_error *e)
{
    bool ok;
    switch (k->type) {
    case K_STR: ok = json_is_string(v); break;
    case K_BOOL: ok = json_is_boolean(v); break;
    case K_UINT:
        ok = json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= (json_int_t)UINT32_MAX;
        break;
    case K_OBJ:
    case K_OPEN_OBJ: ok = json_is_object(v); break;
    case K_STRS:
        ok = json_is_array(v) && json_array_size(v) <= MXC_LIST_MAX;
        for (size_t i = 0; ok && i < json_array_size(v); i++)
            ok = json_is_string(json_array_get(v, i));
        break;
    default: ok = true;
    }
    if (!ok)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s must be %s%s", path, type_word(k->type),
                       k->type == K_STRS ? " (at most 256 entries)" : "");
    if (k->type == K_OBJ)
        return check_object(v, k->sub, path, e);
    return 0;
}

/* Depth is bounded before jansson recurses (CVE-2016-4425 class). */
static bool depth_within(const char *buf, size_t len, int max)
{
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max)
                return false;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return true;
}

static void strlist(json_t *arr, mxc_strlist *out)
{
    out->n = json_array_size(arr);
    out->v = out->n ? calloc(out->n, sizeof *out->v) : NULL;
    for (size_t i = 0; i < out->n; i++)
        out->v[i] = json_string_value(json_array_get(arr, i));
}

static const char *str_at(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static mxc_tri tri_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? (json_is_true(v) ? MXC_TRI_TRUE : MXC_TRI_FALSE) : MXC_TRI_ABSENT;
}

/* semver MAJOR.MINOR.PATCH[-pre][+build]; accepted 0.6 <= v <= 0.9. */
static int check_version(const char *v, int *minor_out, mxc_error *e)
{
    unsigned long part[3];
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "version \"%.40s\" is not a semantic version", v);
        char *end;
        part[i] = strtoul(p, &end, 10);
        if (end - p > 9)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "version \"%.40s\" is not a semantic version", v);
        p = end;
        if (i < 2 && *p++ != '.')
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "version \"%.40s\" is not a semantic version", v);
    }
    if (*p && *p != '-' && *p != '+')
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "version \"%.40s\" is not a semantic version", v);
    if (*p && p[1] == '\0')
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "version \"%.40s\" is not a semantic version", v);
    if (part[0] > 0 || part[1] > 9)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                       "Unsupported contract version %.40s. Registered versions are: 0.9.0-alpha, 1.0.0, 1.1.0-alpha "
                       "(and the legacy 0.6 to 0.9 dialect); a newer contract needs a newer mxc: upgrade mxc", v);
    if (part[1] < 6)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "version %.40s is older than the oldest supported (0.6)", v);
    *minor_out = (int)part[1];
    return 0;
}

static const struct { const char *name; mxc_phase phase; } PHASES[] = {
    {"provision", MXC_PHASE_PROVISION}, {"start", MXC_PHASE_START}, {"exec", MXC_PHASE_EXEC},
    {"stop", MXC_PHASE_STOP}, {"deprovision", MXC_PHASE_DEPROVISION}};

const char *mxc_phase_name(mxc_phase p)
{
    for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0]; i++)
        if (PHASES[i].phase == p)
            return PHASES[i].name;
    return "one-shot";
}

static int parse_network(json_t *n, int minor, mxc_request *r, mxc_error *e)
{
    r->has_network = true;
    r->net_proxy = json_object_get(n, "proxy") != NULL; /* model 2, or refused: src/net */
    bool directional = json_object_get(n, "egress") || json_object_get(n, "ingress");
    bool legacy = json_object_size(n) > (size_t)((json_object_get(n, "egress") ? 1 : 0) +
                                                  (json_object_get(n, "ingress") ? 1 : 0));
    if (directional && legacy)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                       "network mixes the directional egress/ingress form with legacy fields");
    if (directional && minor < 8)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "network.egress/ingress need \"version\" 0.8 or newer");
    r->net_directional = directional;
    const char *dp = str_at(n, "defaultPolicy");
    r->net_has_default_policy = dp != NULL;
    r->net_allow = dp && strcmp(dp, "allow") == 0; /* any other value means block, as upstream */
    const char *em = str_at(n, "enforcementMode");
    if (em && strcmp(em, "capabilities") && strcmp(em, "firewall") && strcmp(em, "both"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                       "network.enforcementMode must be capabilities, firewall or both");
    r->net_has_enforcement_mode = em != NULL;
    r->net_allow_local = tri_at(n, "allowLocalNetwork");
    strlist(json_object_get(n, "allowedHosts"), &r->allowed_hosts);
    strlist(json_object_get(n, "blockedHosts"), &r->blocked_hosts);
    r->net_credentials = json_object_get(n, "credentials");
    return 0;
}

static int parse_ui(json_t *u, mxc_request *r, mxc_error *e)
{
    r->has_ui = true;
    r->ui_disable = tri_at(u, "disable");
    r->ui_injection = tri_at(u, "injection");
    r->ui_clipboard = str_at(u, "clipboard");
    const char *c = r->ui_clipboard;
    if (c && strcmp(c, "none") && strcmp(c, "read") && strcmp(c, "write") && strcmp(c, "all"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "ui.clipboard must be none, read, write or all");
    return 0;
}

static void parse_app_id(mxc_request *r)
{
    json_t *app = json_object_get(
        json_object_get(json_object_get(r->experimental, "isolation_session"), "provision"), "appId");
    if (!app || json_is_null(app))
        return; /* null is a second spelling of absent */
    r->has_app_id = true;
    r->app_id = json_string_value(app); /* NULL when mistyped: policy rejects */
    r->app_id_len = r->app_id ? json_string_length(app) : 0;
}

static const char *const STABLE_SECTIONS[] = {"processContainer", "appContainer", "lxc", "seatbelt",
                                              "macos_sandbox"};

/* Mode rules: which of phase / sandboxId / containment / process each
 * request shape needs. */
static int check_mode(json_t *root, mxc_request *r, mxc_error *e)
{
    const char *phase = str_at(root, "phase");
    if (phase) {
        r->phase = MXC_PHASE_NONE;
        for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0]; i++)
            if (strcmp(PHASES[i].name, phase) == 0)
                r->phase = PHASES[i].phase;
        if (r->phase == MXC_PHASE_NONE)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                           "phase \"%.32s\" is not one of provision, start, exec, stop, deprovision", phase);
    }
    r->containment_name = str_at(root, "containment");
    r->has_containment = r->containment_name != NULL;
    r->sandbox_id = str_at(root, "sandboxId");
    bool state_aware = r->phase != MXC_PHASE_NONE;
    if (!state_aware && json_object_get(root, "correlationVector"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "correlationVector is only valid on state-aware requests");
    if (!state_aware && r->sandbox_id)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "sandboxId is only valid with a phase");
    if (r->phase == MXC_PHASE_PROVISION) {
        if (!r->has_containment)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "provision requires containment");
        if (r->sandbox_id)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "provision takes no sandboxId");
    } else if (state_aware) {
        if (r->has_containment)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST,
                           "containment is only valid on provision; later phases route by the sandboxId");
        if (!r->sandbox_id)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s requires sandboxId", phase);
    }
    bool runs = r->phase == MXC_PHASE_EXEC || !state_aware;
    if (runs && (!r->command_line || !r->command_line[0]))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "process.commandLine is required and must not be empty");
    return 0;
}

/* Layer 3: the backend.  One-shot defaults to process. */
static int resolve_containment(mxc_request *r, mxc_error *e)
{
    const char *c = r->containment_name;
    if (!c)
        c = r->phase == MXC_PHASE_NONE ? "process" : NULL;
    if (!c)
        return 0; /* routed by the id prefix */
    if (strcmp(c, "process") == 0 && r->phase == MXC_PHASE_NONE) {
        r->containment = MXC_CONT_PROCESS;
        return 0;
    }
    if (strcmp(c, "isolation_session") == 0) {
        r->containment = MXC_CONT_ISOLATION_SESSION;
        return 0;
    }
    mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "containment \"%.40s\" is not available in mxc for Linux%s", c,
            strcmp(c, "process") == 0 ? " for state-aware phases" : "");
    mxc_err_set_remediation(e, r->phase == MXC_PHASE_NONE
                                   ? "use \"process\" (the default) or \"isolation_session\""
                                   : "use containment \"isolation_session\" for state-aware phases");
    return -1;
}

int mxc_request_parse(const char *buf, size_t len, mxc_request *r, mxc_error *e)
{
    return mxc_request_parse_opts(buf, len, 0, r, e);
}

int mxc_request_parse_opts(const char *buf, size_t len, unsigned opts, mxc_request *r, mxc_error *e)
{
    memset(r, 0, sizeof *r);
    if (len > MXC_REQUEST_MAX_BYTES)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "request is %zu bytes; the limit is %u", len,
                       MXC_REQUEST_MAX_BYTES);
    if (!depth_within(buf, len, MXC_REQUEST_MAX_DEPTH))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "request nests deeper than %d levels", MXC_REQUEST_MAX_DEPTH);
    json_error_t jerr;
    r->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!r->root)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "request is not valid JSON: %s (line %d, column %d)", jerr.text,
                       jerr.line, jerr.column);
    if (!json_is_object(r->root))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "request must be a JSON object");
    json_t *root = r->root;
    /* An exact registered contract version selects contract 1.0's rules
     * (request_v1.c); anything else is the legacy dialect below. */
    if (mxc_contract_is_registered(str_at(root, "version")))
        return mxc_request_parse_v1(r, opts, e);
    int minor = 9;
    /* The version gate first: a newer client is the one that sends fields
     * we do not know, and "upgrade" is the answer it needs. */
    const char *version = str_at(root, "version");
    if (version && check_version(version, &minor, e) < 0) {
        unsigned major, minor_v, patch;
        if (sscanf(version, "%u.%u.%u", &major, &minor_v, &patch) == 3 && major >= 1)
            r->dialect = MXC_DIALECT_V1; /* a newer contract: answered as contract 1.0 answers */
        return -1;
    }
    if (check_object(r->root, TOP_KEYS, "", e) < 0)
        return -1;
    if (!version)
        minor = 7; /* an unversioned request speaks the 0.7 stable schema */

    json_t *p = json_object_get(root, "process");
    if (p) {
        r->has_process = true;
        r->command_line = str_at(p, "commandLine");
        r->cwd = str_at(p, "cwd");
        strlist(json_object_get(p, "env"), &r->env);
        json_t *t = json_object_get(p, "timeout");
        r->timeout_ms = t ? (uint32_t)json_integer_value(t) : 0;
    }
    json_t *fs = json_object_get(root, "filesystem");
    if (fs) {
        r->has_filesystem = true;
        strlist(json_object_get(fs, "readwritePaths"), &r->rw);
        strlist(json_object_get(fs, "readonlyPaths"), &r->ro);
        strlist(json_object_get(fs, "deniedPaths"), &r->denied);
    }
    json_t *n = json_object_get(root, "network");
    if (n && parse_network(n, minor, r, e) < 0)
        return -1;
    json_t *u = json_object_get(root, "ui");
    if (u && parse_ui(u, r, e) < 0)
        return -1;
    json_t *lc = json_object_get(root, "lifecycle");
    if (lc) {
        r->has_lifecycle = true;
        r->destroy_on_exit = tri_at(lc, "destroyOnExit");
        r->preserve_policy = tri_at(lc, "preservePolicy");
    }
    r->has_fallback = json_object_get(root, "fallback") != NULL;
    r->has_container_id = json_object_get(root, "containerId") != NULL;
    json_t *rc = json_object_get(root, "runtimeConfig");
    r->has_runtime_config = rc && json_object_size(rc) > 0;
    for (size_t i = 0; i < sizeof STABLE_SECTIONS / sizeof STABLE_SECTIONS[0]; i++)
        if (!r->stable_section && json_object_get(root, STABLE_SECTIONS[i]))
            r->stable_section = STABLE_SECTIONS[i];
    r->experimental = json_object_get(root, "experimental");
    if (check_mode(root, r, e) < 0)
        return -1;
    if (r->phase == MXC_PHASE_PROVISION)
        parse_app_id(r);
    return resolve_containment(r, e);
}

json_t *mxc_request_policy_json(const mxc_request *r)
{
    json_t *pol = json_object();
    const char *keys[] = {"filesystem", "network", "ui"};
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(r->root, keys[i]);
        if (v)
            json_object_set(pol, keys[i], v);
    }
    if (r->dialect == MXC_DIALECT_V1 && r->has_network && r->net_v1 != MXC_NET_V1_RULES) /* the posture it was
                                                                                          accepted as, in the engine's terms */
        json_object_set_new(pol, "network", r->net_v1 == MXC_NET_V1_ALLOW_ALL
                                                ? json_pack("{s:s, s:b}", "defaultPolicy", "allow", "allowLocalNetwork", 1)
                                                : json_pack("{s:s}", "defaultPolicy", "block"));
    /* the directional form (schema 0.8, contract 1.0's rules) is kept as given; the legacy dialect reads it
     * from 0.8 on, and src/net lowers it the same way from either */
    /* contract 1.0's model 2 (its network is the blocked posture) in the
     * legacy form, which carries the endpoint inside network */
    if (r->dialect == MXC_DIALECT_V1 && r->network_proxy)
        json_object_set_new(pol, "network", json_pack("{s:s, s:{s:s}}", "defaultPolicy", "block", "proxy", "url",
                                                      r->network_proxy));
    json_t *n = json_object_get(pol, "network");
    if (json_object_get(n, "egress") || json_object_get(n, "ingress"))
        json_object_set_new(pol, "version", json_string("0.8.0"));
    return pol;
}

/* The section's typed parts for src/net, from the network object net: the legacy network.proxy
 * object's (its refusals are the model's), the directional form's and the credentials' (each
 * refusal kept for src/net to give where the model asks for it: netplan.h).  Frees what it made
 * before. */
static void net_section_typed(mxc_net_section *s, json_t *net)
{
    mxc_net_rules_free(&s->egress_deny);
    mxc_net_rules_free(&s->egress_allow);
    mxc_net_credentials_free(s->creds, s->ncreds);
    s->creds = NULL, s->ncreds = 0;
    s->rules_rc = s->creds_rc = 0;
    s->dirs_rc = s->directional ? mxc_net_directions_parse(net, &s->dirs, &s->dirs_err) : 0;
    if (s->directional && s->dirs_rc == 0)
        s->rules_rc = mxc_net_rules_parse(net, &s->egress_deny, &s->egress_allow, &s->rules_err);
    if (s->credentials)
        s->creds_rc = mxc_net_credentials_parse(json_object_get(net, "credentials"), &s->creds, &s->ncreds,
                                                &s->creds_err);
    json_t *px = json_object_get(net, "proxy"), *lh = json_object_get(px, "localhost");
    s->proxy_url = json_string_value(json_object_get(px, "url"));
    s->proxy_localhost = lh != NULL;
    s->proxy_localhost_port = json_is_integer(lh) && json_integer_value(lh) >= 1 && json_integer_value(lh) <= 65535
                                  ? (int)json_integer_value(lh) : 0;
    s->proxy_builtin_test = json_object_get(px, "builtinTestServer") != NULL;
}

void mxc_request_net_section(const mxc_request *r, mxc_net_section *s)
{
    memset(s, 0, sizeof *s);
    bool v1 = r->dialect == MXC_DIALECT_V1;
    s->network_proxy = v1 ? r->network_proxy : NULL;
    s->present = r->has_network || s->network_proxy;
    s->directional = v1 || r->net_directional;
    s->allow = r->net_allow;
    s->allow_local = r->net_allow_local == MXC_TRI_TRUE;
    s->proxy = r->net_proxy;
    s->allowed_hosts = r->allowed_hosts.v;
    s->nallowed = r->allowed_hosts.n;
    s->blocked_hosts = r->blocked_hosts.v;
    s->nblocked = r->blocked_hosts.n;
    s->credentials = r->net_credentials != NULL;
    net_section_typed(s, json_object_get(r->root, "network"));
}

int mxc_net_section_parse(json_t *n, mxc_net_section *s, mxc_error *e)
{
    static const keyspec NETWORK = {"network", K_OBJ, NET_KEYS};
    mxc_request r;
    memset(&r, 0, sizeof r);
    memset(s, 0, sizeof *s);
    if (check_value(n, &NETWORK, "network", e) < 0 || parse_network(n, 9, &r, e) < 0) {
        mxc_request_free(&r);
        return -1;
    }
    mxc_request_net_section(&r, s);
    net_section_typed(s, n);
    s->owns_lists = true; /* r's lists, now the section's (r holds nothing else to free) */
    if (mxc_policy_validate_network(&r, s, e) < 0) {
        mxc_net_section_free(s);
        return -1;
    }
    return 0;
}

void mxc_net_section_free(mxc_net_section *s)
{
    mxc_net_rules_free(&s->egress_deny);
    mxc_net_rules_free(&s->egress_allow);
    mxc_net_credentials_free(s->creds, s->ncreds);
    if (s->owns_lists) {
        free(s->allowed_hosts);
        free(s->blocked_hosts);
    }
    memset(s, 0, sizeof *s);
}

void mxc_request_free(mxc_request *r)
{
    if (!r)
        return;
    mxc_strlist *lists[] = {&r->env, &r->rw, &r->ro, &r->denied, &r->allowed_hosts, &r->blocked_hosts};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        free(lists[i]->v);
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}

/* ---- a request behind a pointer, as a front holds it ---- */

mxc_request *mxc_request_new(void)
{
    return calloc(1, sizeof(mxc_request));
}

void mxc_request_delete(mxc_request *r)
{
    mxc_request_free(r);
    free(r);
}

bool mxc_request_is_v1(const mxc_request *r)
{
    return r->dialect == MXC_DIALECT_V1;
}

bool mxc_request_is_exec(const mxc_request *r)
{
    return r && r->phase == MXC_PHASE_EXEC;
}

bool mxc_request_in_session(const mxc_request *r)
{
    return r->containment == MXC_CONT_ISOLATION_SESSION;
}

const char *mxc_request_contract(const mxc_request *r)
{
    return r->contract;
}

json_t *mxc_request_json(const mxc_request *r)
{
    return r->root;
}

void mxc_request_set_pty_size(mxc_request *r, unsigned short rows, unsigned short cols)
{
    r->pty_rows = rows, r->pty_cols = cols;
}
