/* request_v1.c — contract 1.0.0 (and 0.9.0-alpha, 1.1.0-alpha where they
 * differ): the exact-version dialect upstream MXC 1.0 and its SDK speak.
 * Owns: the typed schema of every 1.0 request shape as data (one table per
 * object, per-version availability), null refused everywhere, required
 * fields, non-empty rule lists, the semantic checks (no empty filesystem
 * path, CIDRs, ports, proxy URL, one backend section,
 * the IsolationSession network rule) and the mapping of a valid request onto
 * the engine's mxc_request.  Codes follow upstream: every parse or semantic
 * failure is malformed_request.  Pure: no syscalls. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "request.h"

enum { V09 = 1u, V10 = 2u, V11 = 4u, VALL = 7u };

static const struct { const char *name; unsigned bit; } CONTRACTS[] = {
    {"0.9.0-alpha", V09}, {"1.0.0", V10}, {"1.1.0-alpha", V11}};

bool mxc_contract_is_registered(const char *version)
{
    if (!version)
        return false;
    for (size_t i = 0; i < sizeof CONTRACTS / sizeof CONTRACTS[0]; i++)
        if (strcmp(version, CONTRACTS[i].name) == 0)
            return true;
    return false;
}

/* ---- the typed schema, as data ------------------------------------------ */

typedef enum { F_STR, F_NESTR, F_BOOL, F_U32, F_PORT, F_UINT, F_ENUM, F_OBJ, F_STRS, F_OBJS, F_NEOBJS, F_ANY } ftype;

typedef struct {
    const char *name;
    unsigned versions;
} choice;

typedef struct fspec {
    const char *key;
    ftype type;
    unsigned versions; /* 0 = every registered version */
    bool required;
    const struct fspec *sub; /* F_OBJ, F_OBJS */
    const choice *choices;   /* F_ENUM, NULL-name terminated */
} fspec;

#define END {0}
#define CH_END {NULL, 0}

static const choice ONESHOT_CONTAINMENTS[] = {
    {"process", VALL},        {"processcontainer", VALL}, {"appcontainer", V09}, {"lxc", VALL},
    {"bubblewrap", VALL},     {"seatbelt", VALL},         {"macos_sandbox", V09}, {"vm", V11},
    {"windows_sandbox", V11}, {"microvm", V11},           {"hyperlight", V11},    {"wslc", VALL},
    {"isolation_session", VALL}, CH_END};
static const choice ACTIONS[] = {{"allow", VALL}, {"deny", VALL}, CH_END};
static const choice PROTOCOLS[] = {{"tcp", VALL}, {"udp", VALL}, {"icmp", VALL}, {"any", VALL}, CH_END};
static const choice CLIPBOARD[] = {{"none", VALL}, {"read", VALL}, {"write", VALL}, {"all", VALL}, CH_END};
static const choice DENIAL_MODES[] = {{"block", VALL}, {"allow", VALL}, CH_END};
static const choice UI_ISOLATION[] = {{"container", VALL}, {"desktop", VALL}, {"handles", VALL}, {"atoms", VALL},
                                      CH_END};
static const choice SYSTEM_SETTINGS[] = {{"none", V11}, {"parameters", V11}, {"display", V11}, {"all", V11}, CH_END};
static const choice TCP_ONLY[] = {{"tcp", VALL}, CH_END};
static const choice HYPERLIGHT_RUNTIMES[] = {{"agent", V11}, {"python", V11}, {"python-shell", V11}, {"node", V11},
                                             {"bash", V11}, {"dotnet-jit", V11}, CH_END};

static const fspec PROCESS[] = {{"commandLine", F_NESTR, 0, true, NULL, NULL},
                                {"cwd", F_STR, 0, false, NULL, NULL},
                                {"env", F_STRS, 0, false, NULL, NULL},
                                {"inheritDefaultEnv", F_BOOL, 0, false, NULL, NULL},
                                {"timeout", F_U32, 0, false, NULL, NULL},
                                END};
static const fspec FILESYSTEM[] = {{"readwritePaths", F_STRS, 0, false, NULL, NULL},
                                   {"readonlyPaths", F_STRS, 0, false, NULL, NULL},
                                   {"deniedPaths", F_STRS, 0, false, NULL, NULL},
                                   END};
static const fspec PEER[] = {{"cidr", F_STR, 0, true, NULL, NULL}, {"except", F_STRS, 0, false, NULL, NULL}, END};
static const fspec PORT[] = {{"protocol", F_ENUM, 0, false, NULL, PROTOCOLS},
                             {"port", F_PORT, 0, false, NULL, NULL},
                             {"endPort", F_PORT, 0, false, NULL, NULL},
                             END};
/* A rule's to/ports: absent means any, present must name something. */
static const fspec RULE[] = {{"to", F_NEOBJS, 0, false, PEER, NULL}, {"ports", F_NEOBJS, 0, false, PORT, NULL}, END};
static const fspec EGRESS[] = {{"default", F_ENUM, 0, false, NULL, ACTIONS},
                               {"allow", F_OBJS, 0, false, RULE, NULL},
                               {"deny", F_OBJS, 0, false, RULE, NULL},
                               END};
static const fspec INGRESS[] = {{"default", F_ENUM, 0, false, NULL, ACTIONS},
                                {"hostLoopback", F_ENUM, 0, false, NULL, ACTIONS},
                                END};
static const fspec NETWORK[] = {{"egress", F_OBJ, 0, false, EGRESS, NULL}, {"ingress", F_OBJ, 0, false, INGRESS, NULL}, END};
static const fspec UI[] = {{"disable", F_BOOL, 0, false, NULL, NULL},
                           {"clipboard", F_ENUM, 0, false, NULL, CLIPBOARD},
                           {"injection", F_BOOL, 0, false, NULL, NULL},
                           END};
static const fspec LIFECYCLE[] = {{"destroyOnExit", F_BOOL, 0, false, NULL, NULL},
                                  {"preservePolicy", F_BOOL, 0, false, NULL, NULL},
                                  END};
static const fspec FALLBACK[] = {{"allowDaclMutation", F_BOOL, 0, false, NULL, NULL}, END};
static const fspec RUNTIME_CONFIG[] = {{"networkProxy", F_STR, 0, false, NULL, NULL}, END};
static const fspec TELEMETRY[] = {{"enabled", F_BOOL, 0, false, NULL, NULL}, END};
static const fspec CAPTURE_DENIALS[] = {{"mode", F_ENUM, 0, false, NULL, DENIAL_MODES},
                                        {"outputPath", F_STR, 0, false, NULL, NULL},
                                        {"retainEtl", F_BOOL, 0, false, NULL, NULL},
                                        END};
static const fspec PC_FILESYSTEM[] = {{"enumeratePaths", F_STRS, 0, false, NULL, NULL}, END};
static const fspec PC_NETWORK[] = {{"allowedProxyPeer", F_STR, 0, false, NULL, NULL}, END};
static const fspec PC_UI[] = {{"desktopSystemControl", F_BOOL, 0, false, NULL, NULL},
                              {"ime", F_BOOL, 0, false, NULL, NULL},
                              {"isolation", F_ENUM, 0, false, NULL, UI_ISOLATION},
                              {"systemSettings", F_STR, V09 | V10, false, NULL, NULL},
                              {"systemSettings", F_ENUM, V11, false, NULL, SYSTEM_SETTINGS},
                              END};
static const fspec PROCESS_CONTAINER[] = {{"capabilities", F_STRS, 0, false, NULL, NULL},
                                          {"captureDenials", F_OBJ, 0, false, CAPTURE_DENIALS, NULL},
                                          {"filesystem", F_OBJ, 0, false, PC_FILESYSTEM, NULL},
                                          {"learningMode", F_BOOL, 0, false, NULL, NULL},
                                          {"leastPrivilege", F_BOOL, 0, false, NULL, NULL},
                                          {"network", F_OBJ, 0, false, PC_NETWORK, NULL},
                                          {"ui", F_OBJ, 0, false, PC_UI, NULL},
                                          END};
static const fspec LXC[] = {{"distribution", F_STR, 0, true, NULL, NULL}, {"release", F_STR, 0, true, NULL, NULL}, END};
static const fspec SEATBELT[] = {{"extraMachLookups", F_STRS, 0, false, NULL, NULL},
                                 {"guiAccess", F_BOOL, 0, false, NULL, NULL},
                                 {"keychainAccess", F_BOOL, 0, false, NULL, NULL},
                                 {"nestedPty", F_BOOL, 0, false, NULL, NULL},
                                 {"profileOverride", F_STR, 0, false, NULL, NULL},
                                 END};
static const fspec PORT_MAPPING[] = {{"windowsPort", F_PORT, 0, true, NULL, NULL},
                                     {"containerPort", F_PORT, 0, true, NULL, NULL},
                                     {"protocol", F_ENUM, 0, false, NULL, TCP_ONLY},
                                     END};
static const fspec ONESHOT_WSLC[] = {{"cpuCount", F_UINT, 0, false, NULL, NULL},
                                     {"gpu", F_BOOL, 0, false, NULL, NULL},
                                     {"image", F_STR, 0, false, NULL, NULL},
                                     {"imageTarPath", F_STR, 0, false, NULL, NULL},
                                     {"memoryMb", F_UINT, 0, false, NULL, NULL},
                                     {"portMappings", F_OBJS, 0, false, PORT_MAPPING, NULL},
                                     {"storagePath", F_STR, 0, false, NULL, NULL},
                                     {"targetOs", F_STR, 0, false, NULL, NULL},
                                     END};
static const fspec HYPERLIGHT[] = {{"runtime", F_ENUM, V11, false, NULL, HYPERLIGHT_RUNTIMES}, END};
static const fspec WINDOWS_SANDBOX[] = {{"daemonPipeName", F_STR, V11, false, NULL, NULL},
                                        {"idleTimeout", F_UINT, V11, false, NULL, NULL},
                                        {"idleTimeoutMs", F_UINT, V11, false, NULL, NULL},
                                        END};
static const fspec TEST_FEATURE[] = {{"message", F_STR, V11, false, NULL, NULL}, END};

#define COMMON_TOP {"$schema", F_STR, 0, false, NULL, NULL}, {"_comment", F_ANY, 0, false, NULL, NULL}, \
                   {"version", F_STR, 0, true, NULL, NULL}

static const fspec ONESHOT[] = {COMMON_TOP,
                                {"containerId", F_STR, 0, false, NULL, NULL},
                                {"containment", F_ENUM, 0, false, NULL, ONESHOT_CONTAINMENTS},
                                {"lifecycle", F_OBJ, 0, false, LIFECYCLE, NULL},
                                {"process", F_OBJ, 0, true, PROCESS, NULL},
                                {"filesystem", F_OBJ, 0, false, FILESYSTEM, NULL},
                                {"fallback", F_OBJ, 0, false, FALLBACK, NULL},
                                {"network", F_OBJ, 0, false, NETWORK, NULL},
                                {"ui", F_OBJ, 0, false, UI, NULL},
                                {"processContainer", F_OBJ, 0, false, PROCESS_CONTAINER, NULL},
                                {"appContainer", F_OBJ, V09, false, PROCESS_CONTAINER, NULL},
                                {"lxc", F_OBJ, 0, false, LXC, NULL},
                                {"seatbelt", F_OBJ, 0, false, SEATBELT, NULL},
                                {"macos_sandbox", F_OBJ, V09, false, SEATBELT, NULL},
                                {"runtimeConfig", F_OBJ, 0, false, RUNTIME_CONFIG, NULL},
                                {"telemetry", F_OBJ, 0, false, TELEMETRY, NULL},
                                {"wslc", F_OBJ, 0, false, ONESHOT_WSLC, NULL},
                                {"hyperlight", F_OBJ, V11, false, HYPERLIGHT, NULL},
                                {"windowsSandbox", F_OBJ, V11, false, WINDOWS_SANDBOX, NULL},
                                {"test", F_OBJ, V11, false, TEST_FEATURE, NULL},
                                END};

/* State-aware shapes.  filesystem on an IsolationSession provision is our
 * extension (docs/wire-contract.md): the engine enforces it. */
static const fspec ISO_PROVISION_SECTION[] = {{"appId", F_STR, 0, false, NULL, NULL}, END};
static const fspec ISO_SECTION[] = {{"provision", F_OBJ, 0, false, ISO_PROVISION_SECTION, NULL}, END};
static const fspec PROVISION_ISO[] = {COMMON_TOP,
                                      {"phase", F_STR, 0, true, NULL, NULL},
                                      {"containment", F_STR, 0, true, NULL, NULL},
                                      {"network", F_OBJ, 0, true, NETWORK, NULL},
                                      {"telemetry", F_OBJ, 0, false, TELEMETRY, NULL},
                                      {"isolationSession", F_OBJ, 0, false, ISO_SECTION, NULL},
                                      {"filesystem", F_OBJ, 0, false, FILESYSTEM, NULL},
                                      {"runtimeConfig", F_OBJ, 0, false, RUNTIME_CONFIG, NULL},
                                      END};
static const fspec WSLC_PROVISION_SECTION[] = {{"image", F_STR, 0, false, NULL, NULL},
                                               {"imageTarPath", F_STR, 0, false, NULL, NULL},
                                               {"portMappings", F_OBJS, V11, false, PORT_MAPPING, NULL},
                                               END};
static const fspec WSLC_SECTION[] = {{"provision", F_OBJ, 0, false, WSLC_PROVISION_SECTION, NULL}, END};
static const fspec PROVISION_WSLC[] = {COMMON_TOP,
                                       {"phase", F_STR, 0, true, NULL, NULL},
                                       {"containment", F_STR, 0, true, NULL, NULL},
                                       {"filesystem", F_OBJ, 0, false, FILESYSTEM, NULL},
                                       {"network", F_OBJ, 0, false, NETWORK, NULL},
                                       {"telemetry", F_OBJ, 0, false, TELEMETRY, NULL},
                                       {"wslc", F_OBJ, 0, false, WSLC_SECTION, NULL},
                                       END};
static const fspec PROVISION_WSB[] = {COMMON_TOP,
                                      {"phase", F_STR, 0, true, NULL, NULL},
                                      {"containment", F_STR, 0, true, NULL, NULL},
                                      {"filesystem", F_OBJ, 0, false, FILESYSTEM, NULL},
                                      {"telemetry", F_OBJ, 0, false, TELEMETRY, NULL},
                                      END};
static const fspec ID_PHASE[] = {COMMON_TOP,
                                 {"phase", F_STR, 0, true, NULL, NULL},
                                 {"sandboxId", F_STR, 0, true, NULL, NULL},
                                 {"telemetry", F_OBJ, 0, false, TELEMETRY, NULL},
                                 END};
static const fspec EXEC[] = {COMMON_TOP,
                             {"phase", F_STR, 0, true, NULL, NULL},
                             {"sandboxId", F_STR, 0, true, NULL, NULL},
                             {"process", F_OBJ, 0, true, PROCESS, NULL},
                             {"network", F_OBJ, 0, false, NETWORK, NULL},
                             {"runtimeConfig", F_OBJ, 0, false, RUNTIME_CONFIG, NULL},
                             {"telemetry", F_OBJ, 0, false, TELEMETRY, NULL},
                             END};

/* ---- the walker ----------------------------------------------------------- */

typedef struct {
    unsigned ver; /* V09 / V10 / V11 */
    mxc_error *e;
} walk;

static bool available(const fspec *f, unsigned ver)
{
    return f->versions == 0 || (f->versions & ver);
}

static const char *expected(ftype t)
{
    switch (t) {
    case F_STR:
    case F_NESTR:
    case F_ENUM: return "a string";
    case F_BOOL: return "a boolean";
    case F_U32: return "u32";
    case F_PORT: return "u16 from 1 to 65535";
    case F_UINT: return "an unsigned integer";
    case F_OBJ: return "a struct (JSON object)";
    case F_STRS:
    case F_OBJS:
    case F_NEOBJS: return "a sequence (JSON array)";
    default: return "a value";
    }
}

static const char *json_kind(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "map";
    case JSON_ARRAY: return "sequence";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "floating point";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static int bad_type(walk *w, const char *path, json_t *v, ftype t)
{
    return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: invalid type: %s, expected %s", path,
                   json_kind(v), expected(t));
}

static int check_obj(walk *w, json_t *o, const fspec *spec, const char *path);

static int check_enum(walk *w, json_t *v, const choice *c, const char *path)
{
    const char *s = json_string_value(v);
    for (const choice *k = c; k->name; k++)
        if ((k->versions & w->ver) && strcmp(k->name, s) == 0)
            return 0;
    char list[400] = "";
    size_t n = 0;
    for (const choice *k = c; k->name && n < sizeof list - 40; k++)
        if (k->versions & w->ver)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s`%s`", n ? ", " : "", k->name);
    return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: unknown variant `%.64s`, expected one of %s",
                   path, s, list);
}

static int check_value(walk *w, json_t *v, const fspec *f, const char *path)
{
    if (json_is_null(v) && f->type != F_ANY)
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: invalid type: null, expected %s",
                       path, expected(f->type));
    switch (f->type) {
    case F_STR:
    case F_NESTR:
    case F_ENUM:
        if (!json_is_string(v))
            return bad_type(w, path, v, f->type);
        if (f->type == F_NESTR && json_string_length(v) == 0)
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: string must not be empty",
                           path);
        return f->type == F_ENUM ? check_enum(w, v, f->choices, path) : 0;
    case F_BOOL: return json_is_boolean(v) ? 0 : bad_type(w, path, v, f->type);
    case F_U32:
    case F_PORT:
    case F_UINT: {
        if (!json_is_integer(v))
            return bad_type(w, path, v, f->type);
        json_int_t n = json_integer_value(v);
        json_int_t lo = f->type == F_PORT ? 1 : 0;
        json_int_t hi = f->type == F_PORT ? 65535 : f->type == F_U32 ? (json_int_t)UINT32_MAX : INT64_MAX;
        if (n < lo || n > hi)
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: invalid value: integer `%lld`, expected %s",
                           path, (long long)n, expected(f->type));
        return 0;
    }
    case F_OBJ: return json_is_object(v) ? check_obj(w, v, f->sub, path) : bad_type(w, path, v, f->type);
    case F_STRS:
    case F_OBJS:
    case F_NEOBJS:
        if (!json_is_array(v))
            return bad_type(w, path, v, f->type);
        if (f->type == F_NEOBJS && json_array_size(v) == 0)
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: array must not be empty",
                           path);
        if (json_array_size(v) > MXC_LIST_MAX)
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration at `%s`: at most %d entries", path,
                           MXC_LIST_MAX);
        for (size_t i = 0; i < json_array_size(v); i++) {
            char sub[320];
            snprintf(sub, sizeof sub, "%.280s[%zu]", path, i);
            fspec item = {f->key, f->type == F_STRS ? F_STR : F_OBJ, 0, false, f->sub, NULL};
            if (check_value(w, json_array_get(v, i), &item, sub) < 0)
                return -1;
        }
        return 0;
    default: return 0;
    }
}

static int check_obj(walk *w, json_t *o, const fspec *spec, const char *path)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        const fspec *f = spec;
        while (f->key && !(strcmp(f->key, key) == 0 && available(f, w->ver)))
            f++;
        char sub[320];
        snprintf(sub, sizeof sub, "%.200s%s%.64s", path, path[0] ? "." : "", key);
        if (!f->key) {
            char list[700] = "";
            size_t n = 0;
            for (const fspec *k = spec; k->key && n < sizeof list - 40; k++)
                if (available(k, w->ver))
                    n += (size_t)snprintf(list + n, sizeof list - n, "%s`%s`", n ? ", " : "", k->key);
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                           "Invalid configuration at `%s`: unknown field `%.64s`, expected one of %s", sub, key, list);
        }
        if (check_value(w, v, f, sub) < 0)
            return -1;
    }
    for (const fspec *f = spec; f->key; f++)
        if (f->required && available(f, w->ver) && !json_object_get(o, f->key))
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid configuration%s%.200s%s: missing field `%s`",
                           path[0] ? " at `" : "", path, path[0] ? "`" : "", f->key);
    return 0;
}

/* ---- semantic checks ------------------------------------------------------ */

/* a.b.c.d[/n] or an IPv6 address[/n]; the host part must be zero.  NULL
 * when s is one, else what is wrong with it. */
static const char *cidr_problem(const char *s)
{
    static const char *const BAD_ADDR = "couldn't parse address in network: invalid IP address syntax";
    static const char *const BAD_LEN = "couldn't parse length in network";
    char addr[64];
    const char *slash = strchr(s, '/');
    size_t alen = slash ? (size_t)(slash - s) : strlen(s);
    if (alen == 0 || alen >= sizeof addr)
        return BAD_ADDR;
    memcpy(addr, s, alen);
    addr[alen] = '\0';
    unsigned char bytes[16];
    int bits;
    if (inet_pton(AF_INET, addr, bytes) == 1)
        bits = 32;
    else if (inet_pton(AF_INET6, addr, bytes) == 1)
        bits = 128;
    else
        return BAD_ADDR;
    int len = bits;
    if (slash) {
        const char *p = slash + 1;
        if (!*p || strlen(p) > 3)
            return BAD_LEN;
        len = 0;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return BAD_LEN;
            len = len * 10 + (*p - '0');
        }
        if (len > bits)
            return "invalid length for network: the length is too long";
    }
    for (int b = len; b < bits; b++)
        if (bytes[b / 8] & (0x80 >> (b % 8)))
            return "host part of address was not zero";
    return NULL;
}

static int check_rules(walk *w, json_t *rules, const char *where)
{
    for (size_t i = 0; i < json_array_size(rules); i++) {
        json_t *rule = json_array_get(rules, i);
        json_t *to = json_object_get(rule, "to"), *ports = json_object_get(rule, "ports");
        for (size_t j = 0; j < json_array_size(to); j++) {
            json_t *peer = json_array_get(to, j);
            const char *bad = cidr_problem(json_string_value(json_object_get(peer, "cidr")));
            if (bad)
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "%s[%zu].to[%zu].cidr must be a valid network CIDR: %s",
                               where, i, j, bad);
            json_t *except = json_object_get(peer, "except");
            for (size_t k = 0; k < json_array_size(except); k++)
                if ((bad = cidr_problem(json_string_value(json_array_get(except, k)))))
                    return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                                   "%s[%zu].to[%zu].except[%zu] must be a valid network CIDR: %s", where, i, j, k, bad);
        }
        for (size_t j = 0; j < json_array_size(ports); j++) {
            json_t *pt = json_array_get(ports, j);
            const char *proto = json_string_value(json_object_get(pt, "protocol"));
            json_t *port = json_object_get(pt, "port"), *end = json_object_get(pt, "endPort");
            if (proto && strcmp(proto, "icmp") == 0 && (port || end))
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                               "%s[%zu].ports[%zu] cannot specify port or endPort for protocol='icmp'", where, i, j);
            if (end && !port)
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "%s[%zu].ports[%zu].endPort requires port", where, i, j);
            if (end && json_integer_value(end) < json_integer_value(port))
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                               "%s[%zu].ports[%zu].endPort must be greater than or equal to port", where, i, j);
        }
    }
    return 0;
}

static const char *action_at(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The posture a valid directional network asks for. */
static mxc_net_v1 posture(json_t *net, const char **what)
{
    json_t *eg = json_object_get(net, "egress"), *in = json_object_get(net, "ingress");
    /* a rules list given at all asks for rules (upstream: "without rules" refuses `allow: []` too);
     * empty, it leaves nothing to lower: the posture is then judged by the defaults alone */
    bool listed = json_object_get(eg, "allow") || json_object_get(eg, "deny");
    bool rules = json_array_size(json_object_get(eg, "allow")) || json_array_size(json_object_get(eg, "deny"));
    const char *ed = action_at(eg, "default"), *id = action_at(in, "default"), *hl = action_at(in, "hostLoopback");
    bool e_allow = ed && strcmp(ed, "allow") == 0, i_allow = id && strcmp(id, "allow") == 0,
         h_allow = hl && strcmp(hl, "allow") == 0;
    if (rules) {
        *what = "network.egress allow/deny rules";
        return MXC_NET_V1_RULES;
    }
    if (e_allow && i_allow && h_allow && !listed)
        return MXC_NET_V1_ALLOW_ALL;
    if (e_allow && i_allow && h_allow) {
        *what = "network.egress allow/deny rules (an empty list) with the all-allow defaults";
        return MXC_NET_V1_RULES;
    }
    if (!e_allow && !i_allow && !h_allow)
        return MXC_NET_V1_BLOCK;
    *what = e_allow ? "network.egress.default allow without ingress and hostLoopback allow"
                    : i_allow ? "network.ingress.default allow" : "network.ingress.hostLoopback allow";
    return MXC_NET_V1_RULES;
}

/* runtimeConfig.networkProxy on every host: scheme://host[:port][/...],
 * http or https (a malformed URL is malformed whatever backend it names). */
static int check_proxy_url(walk *w, const char *url)
{
    const char *colon = strstr(url, "://");
    bool scheme_ok = colon && colon != url;
    for (const char *c = url; scheme_ok && c < colon; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (c > url && ((*c >= '0' && *c <= '9') ||
                                                                                  *c == '+' || *c == '-' || *c == '.'))))
            scheme_ok = false;
    if (!scheme_ok)
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "runtimeConfig.networkProxy is invalid: not an absolute URL");
    size_t slen = (size_t)(colon - url);
    if (!((slen == 4 && strncasecmp(url, "http", 4) == 0) || (slen == 5 && strncasecmp(url, "https", 5) == 0)))
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                       "runtimeConfig.networkProxy must use the 'http' or 'https' scheme (got '%.*s'): %.200s",
                       (int)(slen > 20 ? 20 : slen), url, url);
    return 0;
}

/* What a backend that dials the proxy from the host's loopback (ours, like
 * upstream's bubblewrap, processcontainer, seatbelt, lxc) asks of it: a
 * loopback host and egress deny with no rules.  WSLc, a backend this host
 * lacks, is routed (and refused as missing) before this would be judged. */
static int check_proxy_loopback(walk *w, const char *url, json_t *net)
{
    const char *host = strstr(url, "://") + 3, *at = strpbrk(host, "@/");
    if (at && *at == '@')
        host = at + 1;
    size_t hlen = strcspn(host, host[0] == '[' ? "]" : ":/?#");
    if (host[0] == '[' && host[hlen] == ']')
        hlen++;
    if (!((hlen == 9 && strncasecmp(host, "localhost", 9) == 0) || (hlen == 9 && strncmp(host, "127.0.0.1", 9) == 0) ||
          (hlen == 5 && strncmp(host, "[::1]", 5) == 0)))
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "runtimeConfig.networkProxy must use localhost, 127.0.0.1, or [::1]");
    json_t *eg = json_object_get(net, "egress");
    const char *ed = action_at(eg, "default");
    if ((ed && strcmp(ed, "deny") != 0) || json_array_size(json_object_get(eg, "allow")) ||
        json_array_size(json_object_get(eg, "deny")))
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                       "runtimeConfig.networkProxy requires network.egress.default='deny' with no direct allow or deny rules");
    return 0;
}

/* Every filesystem list entry names something: "" or whitespace alone is
 * refused here, as upstream refuses it, before the policy layer's path rules. */
static int check_filesystem(walk *w, json_t *fs)
{
    static const char *const LISTS[] = {"readwritePaths", "readonlyPaths", "deniedPaths"};
    for (size_t k = 0; k < sizeof LISTS / sizeof LISTS[0]; k++) {
        json_t *list = json_object_get(fs, LISTS[k]);
        for (size_t i = 0; i < json_array_size(list); i++) {
            const char *p = json_string_value(json_array_get(list, i));
            while (p && *p && strchr(" \t\n\r\v\f", *p))
                p++;
            if (p && !*p)
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Filesystem path is empty");
        }
    }
    return 0;
}

static int check_network(walk *w, json_t *net)
{
    json_t *eg = json_object_get(net, "egress");
    if (check_rules(w, json_object_get(eg, "allow"), "network.egress.allow") < 0 ||
        check_rules(w, json_object_get(eg, "deny"), "network.egress.deny") < 0)
        return -1;
    return 0;
}

/* What upstream's parser judges inside a backend's section whatever the
 * host (a malformed request is malformed everywhere): a ProcessContainer
 * capability is one name (no comma: the wire's delimiter) and not one of
 * the reserved learning-mode names; an allowedProxyPeer names something,
 * and only beside a runtimeConfig.networkProxy. */
static int check_section_values(walk *w, json_t *root)
{
    static const char *const KEYS[] = {"processContainer", "appContainer"};
    for (size_t k = 0; k < sizeof KEYS / sizeof KEYS[0]; k++) {
        json_t *pc = json_object_get(root, KEYS[k]);
        json_t *caps = json_object_get(pc, "capabilities");
        for (size_t i = 0; i < json_array_size(caps); i++) {
            const char *cap = json_string_value(json_array_get(caps, i));
            if (strchr(cap, ','))
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                               "Invalid configuration at `%s.capabilities[%zu]`: capability must not contain a comma; "
                               "provide multiple capabilities as separate array entries, for example "
                               "[\"internetClient\", \"privateNetworkClientServer\"]", KEYS[k], i);
            if (strcasecmp(cap, "learningModeLogging") == 0 || strcasecmp(cap, "permissiveLearningMode") == 0)
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                               "Invalid configuration at `%s.capabilities[%zu]`: learningModeLogging and "
                               "permissiveLearningMode are reserved; use learningMode, --audit, or captureDenials "
                               "instead", KEYS[k], i);
        }
        const char *peer = json_string_value(json_object_get(json_object_get(pc, "network"), "allowedProxyPeer"));
        if (peer) {
            const char *c = peer;
            while (*c && strchr(" \t\n\r\v\f", *c))
                c++;
            if (!*c)
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "%s.network.allowedProxyPeer must not be blank", KEYS[k]);
            if (!json_object_get(json_object_get(root, "runtimeConfig"), "networkProxy"))
                return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                               "%s.network.allowedProxyPeer requires runtimeConfig.networkProxy", KEYS[k]);
        }
    }
    return 0;
}

/* containment -> its own section (NULL: it has none). */
static const char *section_of(const char *c)
{
    static const struct { const char *containment, *section; } S[] = {
        {"processcontainer", "processContainer"}, {"appcontainer", "processContainer"}, {"lxc", "lxc"},
        {"seatbelt", "seatbelt"}, {"macos_sandbox", "seatbelt"}, {"wslc", "wslc"}, {"hyperlight", "hyperlight"},
        {"windows_sandbox", "windowsSandbox"}};
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        if (strcmp(S[i].containment, c) == 0)
            return S[i].section;
    return NULL;
}

static int check_sections(walk *w, json_t *root, const char *containment)
{
    static const struct { const char *key, *canonical; } SECTIONS[] = {
        {"processContainer", "processContainer"}, {"appContainer", "processContainer"}, {"lxc", "lxc"},
        {"seatbelt", "seatbelt"}, {"macos_sandbox", "seatbelt"}, {"wslc", "wslc"}, {"hyperlight", "hyperlight"},
        {"windowsSandbox", "windowsSandbox"}};
    if (json_object_get(root, "processContainer") && json_object_get(root, "appContainer"))
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                       "Invalid configuration: processContainer and its alias appContainer are both given; use one");
    if (json_object_get(root, "seatbelt") && json_object_get(root, "macos_sandbox"))
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                       "Invalid configuration: seatbelt and its alias macos_sandbox are both given; use one");
    const char *own = section_of(containment), *allows = own;
    if (strcmp(containment, "isolation_session") == 0)
        allows = "isolationSession"; /* a provision's; a one-shot's schema has none */
    char extra[200] = "";
    size_t n = 0;
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++)
        if (json_object_get(root, SECTIONS[i].key) && !(own && strcmp(own, SECTIONS[i].canonical) == 0))
            n += (size_t)snprintf(extra + n, sizeof extra - n, "%s%s", n ? ", " : "", SECTIONS[i].key);
    if (!n)
        return 0;
    if (allows)
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                       "Multiple containment backends configured: 'containment' is '%s' (allows the '%s' section), but "
                       "the config also includes unrelated backend section(s): %s. Only one backend section is "
                       "allowed; remove the unused section(s).", containment, allows, extra);
    return mxc_err(w->e, MXC_E_MALFORMED_REQUEST,
                   "Multiple containment backends configured: 'containment' is '%s' (no per-backend section is defined "
                   "for this backend), but the config includes backend section(s): %s. Only one backend section is "
                   "allowed; remove the unused section(s).", containment, extra);
}

static const char ISO_RULE_ONESHOT[] =
    "Invalid one-shot request: IsolationSession requires an explicit network policy with network.egress.default=allow, "
    "network.ingress.default=allow, and network.ingress.hostLoopback=allow, without rules or runtimeConfig.networkProxy";

/* ---- mapping onto the engine's request ------------------------------------ */

static void strlist_of(json_t *arr, mxc_strlist *out)
{
    out->n = json_array_size(arr);
    out->v = out->n ? calloc(out->n, sizeof *out->v) : NULL;
    if (!out->v)
        out->n = 0;
    for (size_t i = 0; i < out->n; i++)
        out->v[i] = json_string_value(json_array_get(arr, i));
}

static mxc_tri tri(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? (json_is_true(v) ? MXC_TRI_TRUE : MXC_TRI_FALSE) : MXC_TRI_ABSENT;
}

static void map_common(mxc_request *r)
{
    json_t *root = r->root;
    json_t *p = json_object_get(root, "process");
    if (p) {
        r->has_process = true;
        r->command_line = json_string_value(json_object_get(p, "commandLine"));
        r->cwd = json_string_value(json_object_get(p, "cwd"));
        r->env_given = json_object_get(p, "env") != NULL;
        strlist_of(json_object_get(p, "env"), &r->env);
        r->inherit_default_env = json_is_true(json_object_get(p, "inheritDefaultEnv"));
        r->timeout_ms = (uint32_t)json_integer_value(json_object_get(p, "timeout"));
    }
    json_t *fs = json_object_get(root, "filesystem");
    if (fs) {
        r->has_filesystem = true;
        strlist_of(json_object_get(fs, "readwritePaths"), &r->rw);
        strlist_of(json_object_get(fs, "readonlyPaths"), &r->ro);
        strlist_of(json_object_get(fs, "deniedPaths"), &r->denied);
    }
    json_t *n = json_object_get(root, "network");
    if (n) {
        r->has_network = true;
        r->net_v1 = posture(n, &r->net_v1_what);
        r->net_allow = r->net_v1 == MXC_NET_V1_ALLOW_ALL;
        r->net_allow_local = r->net_allow ? MXC_TRI_TRUE : MXC_TRI_ABSENT;
    } else {
        r->net_v1 = MXC_NET_V1_BLOCK;
    }
    json_t *u = json_object_get(root, "ui");
    if (u) {
        r->has_ui = true;
        r->ui_disable = tri(u, "disable");
        r->ui_injection = tri(u, "injection");
        r->ui_clipboard = json_string_value(json_object_get(u, "clipboard"));
    }
    json_t *lc = json_object_get(root, "lifecycle");
    if (lc) {
        r->has_lifecycle = true;
        r->destroy_on_exit = tri(lc, "destroyOnExit");
        r->preserve_policy = tri(lc, "preservePolicy");
    }
    r->has_fallback = json_object_get(root, "fallback") != NULL;
    r->has_container_id = json_object_get(root, "containerId") != NULL;
    r->has_telemetry = json_object_get(root, "telemetry") != NULL;
    r->has_wslc_section = json_object_get(root, "wslc") != NULL;
    r->network_proxy = json_string_value(json_object_get(json_object_get(root, "runtimeConfig"), "networkProxy"));
    r->has_runtime_config = r->network_proxy != NULL;
}

/* A backend we do not have: refused the way upstream's Linux build refuses
 * it (unsupported_containment), an experimental one first by its gate. */
static int refuse_backend(const char *c, unsigned opts, bool experimental_backend, mxc_error *e)
{
    if (experimental_backend && !(opts & MXC_PARSE_EXPERIMENTAL)) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "the '%s' backend is experimental; enable experimental features to use it", c);
        mxc_err_set_remediation(e, "pass --experimental (or experimental=1) to use experimental backends");
        return -1;
    }
    mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "the '%s' backend is not available on Linux", c);
    mxc_err_set_remediation(e, "use containment \"process\" (or \"bubblewrap\"), or \"isolation_session\"");
    return -1;
}

static int parse_oneshot(walk *w, mxc_request *r, unsigned opts)
{
    json_t *root = r->root;
    if (check_obj(w, root, ONESHOT, "") < 0 || check_filesystem(w, json_object_get(root, "filesystem")) < 0 ||
        check_section_values(w, root) < 0)
        return -1;
    const char *c = json_string_value(json_object_get(root, "containment"));
    r->has_containment = c != NULL;
    if (!c)
        c = "process";
    r->containment_name = c;
    if (check_sections(w, root, c) < 0)
        return -1;
    json_t *net = json_object_get(root, "network");
    if (net && check_network(w, net) < 0)
        return -1;
    map_common(r);
    if (r->network_proxy && check_proxy_url(w, r->network_proxy) < 0)
        return -1;
    /* route first: a backend this host lacks is said before its options are judged */
    if (strcmp(c, "wslc") == 0)
        return refuse_backend(c, opts, false, w->e);
    if (strcmp(c, "isolation_session") == 0 && (r->net_v1 != MXC_NET_V1_ALLOW_ALL || !net || r->network_proxy))
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "%s", ISO_RULE_ONESHOT);
    if (r->network_proxy && check_proxy_loopback(w, r->network_proxy, net) < 0)
        return -1;
    if (strcmp(c, "process") == 0 || strcmp(c, "bubblewrap") == 0) {
        r->containment = MXC_CONT_PROCESS;
        return 0;
    }
    if (strcmp(c, "isolation_session") == 0) {
        r->containment = MXC_CONT_ISOLATION_SESSION;
        return 0;
    }
    bool experimental = !strcmp(c, "hyperlight") || !strcmp(c, "microvm") || !strcmp(c, "windows_sandbox");
    if (strcmp(c, "lxc") == 0) {
        mxc_err(w->e, MXC_E_UNSUPPORTED_CONTAINMENT, "the 'lxc' backend is not available in mxc for Linux");
        mxc_err_set_remediation(w->e, "use containment \"process\" (or \"bubblewrap\"), or \"isolation_session\"");
        return -1;
    }
    return refuse_backend(c, opts, experimental, w->e);
}

static const char ISO_RULE_PROVISION[] =
    "Invalid IsolationSession provision request: IsolationSession requires network egress, ingress, and hostLoopback "
    "defaults set to allow, with no rules (mxc also accepts its own namespace: network.egress.default=deny alone, or "
    "egress rules without ingress.default=allow)";

static int parse_provision(walk *w, mxc_request *r, unsigned opts)
{
    json_t *root = r->root;
    json_t *cj = json_object_get(root, "containment");
    if (!cj)
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Invalid provision request: missing field `containment`");
    if (!json_is_string(cj))
        return bad_type(w, "containment", cj, F_STR);
    const char *c = json_string_value(cj);
    r->containment_name = c;
    r->has_containment = true;
    if (strcmp(c, "isolation_session") == 0) {
        if (check_obj(w, root, PROVISION_ISO, "") < 0 || check_filesystem(w, json_object_get(root, "filesystem")) < 0)
            return -1;
        json_t *net = json_object_get(root, "network");
        if (check_network(w, net) < 0)
            return -1;
        map_common(r);
        /* Upstream's IsolationSession takes only all-allow; mxc also takes the blocked posture and rules
         * (its own namespace, models 3 and 1): the policy layer lowers them or refuses, naming the path. */
        if (r->net_v1 == MXC_NET_V1_RULES && action_at(json_object_get(net, "ingress"), "default") &&
            !strcmp(action_at(json_object_get(net, "ingress"), "default"), "allow"))
            return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "%s", ISO_RULE_PROVISION);
        /* mxc's own: a session's model 2, the same rules as a one-shot's */
        if (r->network_proxy &&
            (check_proxy_url(w, r->network_proxy) < 0 || check_proxy_loopback(w, r->network_proxy, net) < 0))
            return -1;
        r->containment = MXC_CONT_ISOLATION_SESSION;
        json_t *app = json_object_get(json_object_get(json_object_get(root, "isolationSession"), "provision"), "appId");
        if (app) {
            r->has_app_id = true;
            r->app_id = json_string_value(app);
            r->app_id_len = json_string_length(app);
        }
        return 0;
    }
    if (strcmp(c, "wslc") == 0) {
        if (check_obj(w, root, PROVISION_WSLC, "") < 0)
            return -1;
        mxc_err(w->e, MXC_E_BACKEND_UNAVAILABLE, "the WSLc backend is not available in mxc for Linux");
        return -1;
    }
    if (strcmp(c, "windows_sandbox") == 0 && (w->ver & V11)) {
        if (check_obj(w, root, PROVISION_WSB, "") < 0)
            return -1;
        return refuse_backend(c, opts, true, w->e);
    }
    return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Unsupported containment for provision phase: \"%.40s\"", c);
}

/* The id's prefix routes it.  iso: is ours (decoded by the id layer);
 * wslc: is a backend this build lacks; no prefix is malformed. */
static int route_id(walk *w, const char *id, unsigned opts)
{
    const char *colon = strchr(id, ':');
    if (!colon || colon == id)
        return mxc_err(w->e, MXC_E_MALFORMED_ID, "sandbox_id \"%.80s\" is missing the `<prefix>:...` form", id);
    size_t plen = (size_t)(colon - id);
    if (plen == 3 && strncmp(id, "iso", 3) == 0)
        return 0;
    if (plen == 4 && strncmp(id, "wslc", 4) == 0)
        return mxc_err(w->e, MXC_E_BACKEND_UNAVAILABLE, "the WSLc backend is not available in mxc for Linux");
    if (plen == 3 && strncmp(id, "wsb", 3) == 0 && (w->ver & V11))
        return refuse_backend("windows_sandbox", opts, true, w->e);
    return mxc_err(w->e, MXC_E_UNSUPPORTED_CONTAINMENT, "no state-aware backend registered for prefix \"%.*s\"",
                   (int)(plen > 40 ? 40 : plen), id);
}

static const struct { const char *name; mxc_phase phase; } PHASES[] = {
    {"provision", MXC_PHASE_PROVISION}, {"start", MXC_PHASE_START}, {"exec", MXC_PHASE_EXEC},
    {"stop", MXC_PHASE_STOP}, {"deprovision", MXC_PHASE_DEPROVISION}};

static int parse_state_aware(walk *w, mxc_request *r, json_t *phase, unsigned opts)
{
    if (!json_is_string(phase))
        return bad_type(w, "phase", phase, F_STR);
    for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0]; i++)
        if (strcmp(PHASES[i].name, json_string_value(phase)) == 0)
            r->phase = PHASES[i].phase;
    if (r->phase == MXC_PHASE_NONE)
        return mxc_err(w->e, MXC_E_MALFORMED_REQUEST, "Unsupported phase \"%.40s\"", json_string_value(phase));
    if (r->phase == MXC_PHASE_PROVISION)
        return parse_provision(w, r, opts);
    if (check_obj(w, r->root, r->phase == MXC_PHASE_EXEC ? EXEC : ID_PHASE, "") < 0)
        return -1;
    json_t *net = json_object_get(r->root, "network");
    if (net && check_network(w, net) < 0)
        return -1;
    map_common(r);
    if (r->network_proxy && check_proxy_url(w, r->network_proxy) < 0)
        return -1;
    r->sandbox_id = json_string_value(json_object_get(r->root, "sandboxId"));
    r->containment = MXC_CONT_ISOLATION_SESSION;
    /* route first: an id of a backend this host lacks is answered as such before that backend's options are
     * judged (upstream: backend_unavailable for a wslc: exec whatever its networkProxy names) */
    if (route_id(w, r->sandbox_id, opts) < 0)
        return -1;
    return r->network_proxy ? check_proxy_loopback(w, r->network_proxy, net) : 0;
}

int mxc_request_parse_v1(mxc_request *r, unsigned opts, mxc_error *e)
{
    walk w = {.e = e};
    r->dialect = MXC_DIALECT_V1;
    r->contract = json_string_value(json_object_get(r->root, "version"));
    for (size_t i = 0; i < sizeof CONTRACTS / sizeof CONTRACTS[0]; i++)
        if (strcmp(r->contract, CONTRACTS[i].name) == 0)
            w.ver = CONTRACTS[i].bit;
    json_t *phase = json_object_get(r->root, "phase");
    return phase ? parse_state_aware(&w, r, phase, opts) : parse_oneshot(&w, r, opts);
}
