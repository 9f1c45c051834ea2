/* bundle.c — see bundle.h. */
#include "bundle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* name=value pairs of env (a JSON object) as process.env. */
static json_t *env_array(const json_t *env)
{
    json_t *arr = json_array();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)env, k, v) {
        size_t n = strlen(k) + json_string_length(v) + 2;
        char *s = malloc(n);
        if (!s)
            break;
        snprintf(s, n, "%s=%s", k, json_string_value(v));
        json_array_append_new(arr, json_string(s));
        free(s);
    }
    return arr;
}

static void put_env(json_t *env, Openshell__Compute__V1__DriverSandboxSpec__EnvironmentEntry **kv, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_object_set_new(env, kv[i]->key, json_string(kv[i]->value));
}

/* The user's variables a provider's placeholder owns (its env, in any letter case) dropped:
 * mxc-oci sets the placeholder, never a value given here (as mxc-gateway's providers). */
static void drop_provider_vars(json_t *env, const json_t *creds)
{
    size_t i;
    json_t *c;
    json_array_foreach(creds, i, c) {
        const char *owned = json_string_value(json_object_get(c, "env")), *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(env, tmp, k, v) {
            if (owned && !strcasecmp(k, owned))
                json_object_del(env, k);
        }
    }
}

/* process: the supervisor, its environment (bundle.h). */
static int process(json_t *cfg, const pb_sandbox *sb, const osd_bundle_in *in, const json_t *creds, mxc_error *e)
{
    const pb_spec *s = sb->spec;
    json_t *user = json_object(), *env = json_object();
    json_object_set_new(env, "PATH", json_string("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    if (s->template_)
        put_env(user, (void *)s->template_->environment, s->template_->n_environment);
    put_env(user, s->environment, s->n_environment);
    drop_provider_vars(user, creds);
    json_object_update(env, user);
    char *userjs = json_object_size(user) ? json_dumps(user, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (userjs)
        json_object_set_new(env, "OPENSHELL_USER_ENVIRONMENT", json_string(userjs));
    free(userjs);
    json_t *cmd = json_array();
    for (size_t i = 0; i < s->n_command; i++)
        json_array_append_new(cmd, json_string(s->command[i]));
    json_t *main = json_pack("{s:i,s:o,s:b}", "version", 1, "command", cmd, "tty", s->tty);
    if (!s->n_command) { /* upstream's scratch process when no command is given */
        json_object_set_new(main, "command", json_pack("[ss]", "/bin/bash", "-l"));
        json_object_set_new(main, "tty", json_true());
    }
    char *mainjs = json_dumps(main, JSON_COMPACT);
    json_decref(main);
    json_object_set_new(env, "OPENSHELL_MAIN_PROCESS_SPEC", json_string(mainjs ? mainjs : ""));
    free(mainjs);
    json_object_set_new(env, "OPENSHELL_SANDBOX", json_string(sb->name));
    json_object_set_new(env, "OPENSHELL_SANDBOX_ID", json_string(sb->id));
    json_object_set_new(env, "OPENSHELL_CONTAINER_IMAGE", json_string(s->template_->image));
    if (s->log_level[0])
        json_object_set_new(env, "OPENSHELL_LOG_LEVEL", json_string(s->log_level));
    json_object_del(env, "OPENSHELL_ENDPOINT");
    if (in->endpoint)
        json_object_set_new(env, "OPENSHELL_ENDPOINT", json_string(in->endpoint));
    json_object_del(env, "OPENSHELL_SANDBOX_TOKEN");
    json_object_del(env, "OPENSHELL_SANDBOX_TOKEN_FILE");
    json_object_del(env, "OPENSHELL_GATEWAY_TLS_SERVER_NAME");
    if (in->token)
        json_object_set_new(env, "OPENSHELL_SANDBOX_TOKEN_FILE", json_string(OSD_TOKEN_IN));
    json_t *p = json_object_get(cfg, "process");
    if (!json_is_object(p)) {
        json_decref(user);
        json_decref(env);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "mxc-oci spec wrote a config without a process");
    }
    json_object_set_new(p, "args", json_pack("[sss]", OSD_SUPERVISOR_IN, "--workdir", OSD_WORKDIR_IN));
    json_object_set_new(p, "env", env_array(env));
    json_object_set_new(p, "terminal", json_false());
    json_object_set_new(p, "cwd", json_string("/"));
    json_decref(user);
    json_decref(env);
    return 0;
}

static void bind_ro(json_t *mounts, const char *src, const char *dst, bool exec)
{
    json_t *opts = json_pack("[ssss]", "rbind", "ro", "nosuid", "nodev");
    if (!exec)
        json_array_append_new(opts, json_string("noexec"));
    json_array_append_new(mounts, json_pack("{s:s,s:s,s:s,s:o}", "destination", dst, "type", "bind", "source", src,
                                            "options", opts));
}

/* driver_config's filesystem grants: each host path bound at the same path in the sandbox,
 * read-only or read-write as granted, nosuid and nodev (checked by life.c first: never the
 * driver's own places). */
static void grants(json_t *mounts, const json_t *fs)
{
    static const char *const LISTS[] = {"readonlyPaths", "readwritePaths"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(fs, LISTS[l]), i, p) {
            json_t *opts = json_pack("[ssss]", "rbind", l ? "rw" : "ro", "nosuid", "nodev");
            json_array_append_new(mounts, json_pack("{s:O,s:s,s:O,s:o}", "destination", p, "type", "bind", "source",
                                                    p, "options", opts));
        }
    }
}

/* linux.resources[section][key] = v (the section made when absent). */
static void put_resource(json_t *r, const char *section, const char *key, uint64_t v)
{
    json_t *sec = json_object_get(r, section);
    if (!json_is_object(sec)) {
        sec = json_object();
        json_object_set_new(r, section, sec);
    }
    json_object_set_new(sec, key, json_integer((json_int_t)v));
}

/* The limits: a cpu quota over a 100 ms period (500m -> 50000/100000), memory.limit.  The
 * requests: cpu.shares as Kubernetes converts millicores (m * 1024 / 1000, within the 2..262144
 * mxc-oci takes: it makes cpu.weight of it on cgroup v2), memory.reservation (memory.low). */
static void resources(json_t *cfg, const osd_limits *lim)
{
    json_t *linux_ = json_object_get(cfg, "linux");
    if (!json_is_object(linux_) ||
        !(lim->cpu_limit_milli | lim->memory_limit | lim->cpu_request_milli | lim->memory_request))
        return;
    json_t *r = json_object_get(linux_, "resources");
    if (!json_is_object(r)) {
        r = json_object();
        json_object_set_new(linux_, "resources", r);
    }
    if (lim->cpu_limit_milli) {
        put_resource(r, "cpu", "quota", lim->cpu_limit_milli * 100);
        put_resource(r, "cpu", "period", 100000);
    }
    if (lim->cpu_request_milli) {
        uint64_t shares = lim->cpu_request_milli * 1024 / 1000;
        put_resource(r, "cpu", "shares", shares < 2 ? 2 : shares > 262144 ? 262144 : shares);
    }
    if (lim->memory_limit)
        put_resource(r, "memory", "limit", lim->memory_limit);
    if (lim->memory_request)
        put_resource(r, "memory", "reservation", lim->memory_request);
}

static const char *str_or(const json_t *v, const char *dflt)
{
    return json_string_value(v) ? json_string_value(v) : dflt;
}

/* The sandbox's network section (a new reference), or NULL: none (bundle.h). */
static json_t *network(const json_t *net, const char *gateway)
{
    const char *dflt = str_or(json_object_get(net, "defaultPolicy"), "");
    bool deny_all = json_object_size(net) == 1 && !strcmp(dflt, "deny");
    json_t *out = net && json_object_size(net) && !deny_all ? json_deep_copy(net) : NULL;
    if (!gateway || !strcmp(dflt, "allow"))
        return out;
    if (!out)
        out = json_pack("{s:s}", "defaultPolicy", "block");
    json_t *hosts = json_object_get(out, "allowedHosts");
    if (!json_is_array(hosts)) {
        hosts = json_array();
        json_object_set_new(out, "allowedHosts", hosts);
    }
    json_array_append_new(hosts, json_string(gateway));
    return out;
}

int osd_bundle_config(json_t *cfg, const pb_sandbox *sb, const json_t *fragment, const osd_limits *lim,
                      const osd_bundle_in *in, mxc_error *e)
{
    const json_t *creds = fragment ? json_object_get(json_object_get(fragment, "network"), "credentials") : NULL;
    if (process(cfg, sb, in, creds, e) < 0)
        return -1;
    json_object_set_new(cfg, "root", json_pack("{s:s,s:b}", "path", "rootfs", "readonly", 0));
    json_object_set_new(cfg, "hostname", json_string(sb->name[0] ? sb->name : sb->id));
    json_t *mounts = json_object_get(cfg, "mounts");
    if (!json_is_array(mounts))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "mxc-oci spec wrote a config without mounts");
    bind_ro(mounts, in->supervisor, OSD_SUPERVISOR_IN, true);
    if (in->token)
        bind_ro(mounts, in->token, OSD_TOKEN_IN, false);
    resources(cfg, lim);
    grants(mounts, fragment ? json_object_get(fragment, "filesystem") : NULL);
    json_t *net = network(fragment ? json_object_get(fragment, "network") : NULL, in->gateway);
    if (net) { /* else: an empty network namespace, loopback alone */
        char *js = json_dumps(net, JSON_COMPACT);
        json_t *ann = json_object_get(cfg, "annotations");
        if (!json_is_object(ann)) {
            ann = json_object();
            json_object_set_new(cfg, "annotations", ann);
        }
        json_object_set_new(ann, "io.mxc.version", json_string("1")); /* docs/oci.md "Annotations" */
        json_object_set_new(ann, "io.mxc.network", json_string(js ? js : "{}"));
        free(js);
        json_decref(net);
    }
    return 0;
}
