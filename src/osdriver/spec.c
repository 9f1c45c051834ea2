/* spec.c — see spec.h. */
#include "spec.h"

#include <stdio.h>
#include <string.h>

#include "drvcfg.h"
#include "front.h"
#include "policymap.h"
#include "providers.h"
#include "quantity.h"

#define ID_MAX 128
#define MAX_ENV 1024
#define MAX_ARGS 4096
#define MAX_ARG_LEN (128u << 10)  /* the kernel's MAX_ARG_STRLEN */
#define MAX_ARGV_TOTAL (1u << 20)
#define MAX_LABELS 64
#define MAX_IMAGE_LEN 4096
#define MAX_TOKEN_LEN (16u << 10)
#define MIN_MEMORY (4u << 20)     /* below this the workload cannot start */

bool osd_id_is_valid(const char *s)
{
    return mxc_label_is_valid(s, ID_MAX);
}

/* a malformed value: mxc_err's -1 with the code every such refusal has */
#define bad(e, ...) mxc_err((e), MXC_E_MALFORMED_REQUEST, __VA_ARGS__)

/* Printable ASCII without spaces, bounded (an image reference, a label key). */
static bool is_token(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7f)
            return false;
    return true;
}

static bool env_name_ok(const char *k)
{
    if (!k[0] || strlen(k) > 256 || (k[0] >= '0' && k[0] <= '9'))
        return false;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return true;
}

static int check_identity(const pb_sandbox *sb, mxc_error *e)
{
    if (!osd_id_is_valid(sb->id))
        return bad(e, "sandbox.id %s: an id is 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit",
                   sb->id[0] ? "is malformed" : "is empty", ID_MAX);
    if (sb->name[0] && !osd_id_is_valid(sb->name))
        return bad(e, "sandbox.name is malformed: 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit",
                   ID_MAX);
    if (sb->namespace_[0] && !osd_id_is_valid(sb->namespace_))
        return bad(e, "sandbox.namespace is malformed: 1-%d letters, digits, '.', '_' or '-'", ID_MAX);
    if (sb->workspace[0] && !osd_id_is_valid(sb->workspace))
        return bad(e, "sandbox.workspace is malformed: 1-%d letters, digits, '.', '_' or '-'", ID_MAX);
    return 0;
}

/* One environment map (spec.environment or template.environment) as its keys and values. */
static int check_env_kv(const char *field, size_t n, const char *const *keys, const char *const *vals, mxc_error *e)
{
    for (size_t i = 0; i < n; i++) {
        if (!env_name_ok(keys[i]))
            return bad(e, "%s: the name \"%.64s\" is not a variable name ([A-Za-z_][A-Za-z0-9_]*, at most 256)", field,
                       keys[i]);
        if (strlen(vals[i]) > MAX_ARG_LEN)
            return bad(e, "%s.%s is longer than %u bytes", field, keys[i], MAX_ARG_LEN);
    }
    return 0;
}

/* An environment map's entries (protoc-c: a struct type per map field) to check_env_kv. */
#define check_env(field, n, ents, e)                                                    \
    __extension__({                                                                     \
        const char *keys_[MAX_ENV], *vals_[MAX_ENV];                                    \
        size_t n_ = (n);                                                                \
        for (size_t i_ = 0; i_ < n_ && i_ < MAX_ENV; i_++) {                            \
            keys_[i_] = (ents)[i_]->key;                                                \
            vals_[i_] = (ents)[i_]->value;                                              \
        }                                                                               \
        n_ > MAX_ENV ? bad(e, "%s has more than %d variables", field, MAX_ENV)          \
                     : check_env_kv(field, n_, keys_, vals_, e);                        \
    })

static int check_command(const pb_spec *sp, mxc_error *e)
{
    if (sp->n_command > MAX_ARGS)
        return bad(e, "spec.command has more than %d arguments", MAX_ARGS);
    size_t total = 0;
    for (size_t i = 0; i < sp->n_command; i++) {
        size_t n = strlen(sp->command[i]);
        if (n > MAX_ARG_LEN)
            return bad(e, "spec.command[%zu] is longer than %u bytes", i, MAX_ARG_LEN);
        total += n + 1;
    }
    if (total > MAX_ARGV_TOTAL)
        return bad(e, "spec.command is longer than %u bytes in all", MAX_ARGV_TOTAL);
    if (sp->n_command > 0 && !sp->command[0][0])
        return bad(e, "spec.command[0] is empty: it names the program");
    return 0;
}

static int check_spec(const pb_spec *sp, mxc_error *e)
{
    static const char *const LEVELS[] = {"", "trace", "debug", "info", "warn", "error", NULL};
    size_t l = 0;
    while (LEVELS[l] && strcmp(LEVELS[l], sp->log_level))
        l++;
    if (!LEVELS[l])
        return bad(e, "spec.log_level \"%.32s\" is none of trace, debug, info, warn, error", sp->log_level);
    if (check_env("spec.environment", sp->n_environment, sp->environment, e) < 0 || check_command(sp, e) < 0)
        return -1;
    if (sp->sandbox_token[0] && !is_token(sp->sandbox_token, MAX_TOKEN_LEN))
        return bad(e, "spec.sandbox_token is not a token: printable ASCII without spaces, at most %u bytes",
                   MAX_TOKEN_LEN);
    if (sp->resource_requirements && sp->resource_requirements->gpu)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                       "spec.resource_requirements.gpu: the mxc driver gives a sandbox no GPU");
    return 0;
}

static int quantity(const char *field, const char *text, osd_qty_unit unit, uint64_t *out, mxc_error *e)
{
    const char *why;
    if (!text[0])
        return 0;
    if (osd_quantity_parse(text, unit, out, &why) < 0)
        return bad(e, "template.resources.%s \"%.40s\" %s", field, text, why);
    return 0;
}

static int check_resources(const pb_resources *r, osd_limits *lim, mxc_error *e)
{
    if (quantity("cpu_request", r->cpu_request, OSD_QTY_CPU_MILLI, &lim->cpu_request_milli, e) < 0 ||
        quantity("cpu_limit", r->cpu_limit, OSD_QTY_CPU_MILLI, &lim->cpu_limit_milli, e) < 0 ||
        quantity("memory_request", r->memory_request, OSD_QTY_BYTES, &lim->memory_request, e) < 0 ||
        quantity("memory_limit", r->memory_limit, OSD_QTY_BYTES, &lim->memory_limit, e) < 0)
        return -1;
    if (r->cpu_limit[0] && lim->cpu_limit_milli == 0)
        return bad(e, "template.resources.cpu_limit is 0: the sandbox could never run");
    if (r->memory_limit[0] && lim->memory_limit < MIN_MEMORY)
        return bad(e, "template.resources.memory_limit is below 4Mi: the sandbox could not start");
    if (lim->cpu_limit_milli && lim->cpu_request_milli > lim->cpu_limit_milli)
        return bad(e, "template.resources.cpu_request is above cpu_limit");
    if (lim->memory_limit && lim->memory_request > lim->memory_limit)
        return bad(e, "template.resources.memory_request is above memory_limit");
    return 0;
}

static int check_labels(const pb_template *t, mxc_error *e)
{
    if (t->n_labels > MAX_LABELS)
        return bad(e, "template.labels has more than %d labels", MAX_LABELS);
    for (size_t i = 0; i < t->n_labels; i++) {
        if (!is_token(t->labels[i]->key, 253) || strchr(t->labels[i]->key, '='))
            return bad(e, "template.labels: the key \"%.64s\" is not printable ASCII without spaces or '=', 1-253 bytes",
                       t->labels[i]->key);
        if (t->labels[i]->value[0] && !is_token(t->labels[i]->value, 253))
            return bad(e, "template.labels.%s: the value is not printable ASCII without spaces, at most 253 bytes",
                       t->labels[i]->key);
    }
    return 0;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

static int check_template(const pb_template *t, osd_limits *lim, mxc_error *e)
{
    if (!t->image[0])
        return bad(e, "template.image is empty and the mxc driver has no default image");
    if (!is_token(t->image, MAX_IMAGE_LEN) || t->image[0] == '-')
        return bad(e, "template.image is not an image reference (printable ASCII without spaces, not starting with "
                      "'-', at most %d bytes)",
                   MAX_IMAGE_LEN);
    const char *asp = t->agent_socket_path;
    if (asp[0] && (asp[0] != '/' || strlen(asp) >= 108 || strstr(asp, "/../") || strstr(asp, "/./") || ends_with(asp, "/..") ||
                   ends_with(asp, "/.") ||
                   !is_token(asp, 107)))
        return bad(e, "template.agent_socket_path is not an absolute socket path without . or .. (at most 107 bytes)");
    if (check_env("template.environment", t->n_environment, t->environment, e) < 0 || check_labels(t, e) < 0)
        return -1;
    if (t->resources && check_resources(t->resources, lim, e) < 0)
        return -1;
    if (t->platform_config && t->platform_config->n_fields)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                       "template.platform_config is not read by the mxc driver: its settings go in driver_config");
    return 0;
}

/* driver_config: mxc's policy document, mapped as mxc-gateway maps its policy YAML. */
static int check_policy(const pb_template *t, const mxc_gw_config *cfg, json_t **fragment, mxc_error *e)
{
    if (!t->driver_config || !t->driver_config->n_fields)
        return 0;
    json_t *doc = osd_driver_config_json(t->driver_config, e);
    if (!doc)
        return -1;
    json_t *names = json_incref(json_object_get(doc, "providers")); /* mxc's own key, beside the policy */
    json_object_del(doc, "providers");
    *fragment = mxc_gw_map_policy(doc, cfg, NULL, e);
    json_decref(doc);
    if (*fragment && osd_providers_bind(*fragment, names, cfg, e) < 0) {
        json_decref(*fragment);
        *fragment = NULL;
        json_decref(names);
        return -1;
    }
    json_decref(names);
    if (!*fragment) {
        char msg[sizeof e->message];
        snprintf(msg, sizeof msg, "%s", e->message);
        mxc_code code = e->code;
        mxc_error_clear(e);
        return mxc_err(e, code, "template.driver_config: %s", msg);
    }
    return 0;
}

int osd_spec_check(const pb_sandbox *sb, const osd_judge *j, osd_limits *lim, json_t **fragment, mxc_error *e)
{
    *lim = (osd_limits){0};
    *fragment = NULL;
    if (check_identity(sb, e) < 0)
        return -1;
    if (!sb->spec)
        return bad(e, "sandbox.spec is missing");
    if (!sb->spec->template_)
        return bad(e, "sandbox.spec.template is missing");
    if (check_spec(sb->spec, e) < 0 || check_template(sb->spec->template_, lim, e) < 0 ||
        check_policy(sb->spec->template_, j->cfg, fragment, e) < 0)
        return -1;
    if (!j->have_supervisor) {
        json_decref(*fragment);
        *fragment = NULL;
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE,
                       "no supervisor is configured (mxc-openshell-driver --supervisor PATH): a sandbox without "
                       "openshell-sandbox cannot be created");
    }
    return 0;
}
