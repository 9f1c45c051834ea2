/* config.c — see config.h.  Each check names the field as the spec spells
 * it (process.user.uid, mounts[2].options, linux.namespaces[0].type). */
#include "config.h"
#include "apparmor.h"
#include "cgroup.h"
#include "devices.h"
#include "ocijson.h"
#include "rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"

#define FIELD_MAX 160
#define bad oci_config_bad

int oci_config_bad(mxc_error *e, const char *field, const char *want)
{
    return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: %s must be %s", field, want);
}

static int not_yet(mxc_error *e, const char *field)
{
    return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "config.json: %s is not supported by mxc-oci yet", field);
}

static int refuse(mxc_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(mxc_error *e, const char *fmt, ...)
{
    static const char prefix[] = "config.json: ";
    char msg[sizeof prefix + 600];
    memcpy(msg, prefix, sizeof prefix);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + sizeof prefix - 1, sizeof msg - (sizeof prefix - 1), fmt, ap);
    va_end(ap);
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s", msg);
}

/* 1: present with the wanted type; 0: absent (or null); -1: wrong type. */
static int get(json_t *o, const char *key, const char *field, json_type t, json_t **out, mxc_error *e)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    bool ok = t == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == t;
    if (!ok) {
        const char *want = t == JSON_TRUE      ? "a boolean"
                           : t == JSON_INTEGER ? "an integer"
                           : t == JSON_STRING  ? "a string"
                           : t == JSON_ARRAY   ? "an array"
                                               : "an object";
        return bad(e, field, want);
    }
    *out = v;
    return 1;
}

/* Whether a value asks for something: a non-empty string, array or
 * object, true, a number, anything else present. */
static bool asks(json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v))
        return false;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    if (json_is_array(v))
        return json_array_size(v) > 0;
    if (json_is_object(v))
        return json_object_size(v) > 0;
    return true;
}

/* The first of keys (NULL-terminated) o asks for: not supported yet, named prefix + key. */
static int not_yet_if(json_t *o, const char *prefix, const char *const *keys, mxc_error *e)
{
    char field[FIELD_MAX];
    for (; *keys; keys++)
        if (asks(json_object_get(o, *keys))) {
            snprintf(field, sizeof field, "%s%s", prefix, *keys);
            return not_yet(e, field);
        }
    return 0;
}

/* Whether c joins a namespace of flag (CLONE_NEW*) by path (a pod's). */
static bool joined(const oci_config *c, int flag)
{
    for (size_t j = 0; j < c->njoin; j++)
        if (c->join[j].flag == flag)
            return true;
    return false;
}

size_t oci_find_name(const void *table, size_t n, size_t stride, const char *name)
{
    size_t k = 0;
    while (name && k < n && strcmp(*(const char *const *)((const char *)table + k * stride), name) != 0)
        k++;
    return name ? k : n;
}
#define FIND OCI_FIND
#define COUNT OCI_COUNT

/* get() of a string into *out, NULL when absent. */
static int get_str(json_t *o, const char *key, const char *field, const char **out, mxc_error *e)
{
    json_t *v;
    int rc = get(o, key, field, JSON_STRING, &v, e);
    *out = v ? json_string_value(v) : NULL;
    return rc;
}

static int uint32_of(json_t *v, const char *field, unsigned *out, mxc_error *e)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 4294967294ll)
        return bad(e, field, "an unsigned 32-bit integer");
    *out = (unsigned)json_integer_value(v);
    return 0;
}

static int strings(json_t *arr, const char *field, const char ***out, size_t *n, mxc_error *e)
{
    size_t i;
    json_t *s;
    *out = calloc(json_array_size(arr) + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    json_array_foreach(arr, i, s) {
        if (!json_is_string(s) || memchr(json_string_value(s), '\0', json_string_length(s))) {
            char f[FIELD_MAX];
            snprintf(f, sizeof f, "%s[%zu]", field, i);
            return bad(e, f, "a string");
        }
        (*out)[(*n)++] = json_string_value(s);
    }
    return 0;
}

/* The capabilities a config may name, over the container's own user namespace
 * only; NET_RAW needs a network namespace of its own (checked below).
 * held false: accepted, never held (issue 34). CAP_SETFCAP is in Podman's,
 * containerd's and Docker's default sets, so refusing it would refuse every
 * default run; held, it writes security.capability, which the idmapped rootfs
 * (container 0 <-> disk 0) stores with rootid disk 0: a file capability for
 * every host user who runs the file. Withheld, none can be made. */
static const struct { const char *name; int cap; bool held; } CAPS[] = {
    {"CAP_CHOWN", CAP_CHOWN, true}, {"CAP_DAC_OVERRIDE", CAP_DAC_OVERRIDE, true}, {"CAP_FOWNER", CAP_FOWNER, true},
    {"CAP_FSETID", CAP_FSETID, true}, {"CAP_KILL", CAP_KILL, true}, {"CAP_SETGID", CAP_SETGID, true},
    {"CAP_SETUID", CAP_SETUID, true}, {"CAP_SETPCAP", CAP_SETPCAP, true},
    {"CAP_NET_BIND_SERVICE", CAP_NET_BIND_SERVICE, true}, {"CAP_NET_RAW", CAP_NET_RAW, true},
    {"CAP_SYS_CHROOT", CAP_SYS_CHROOT, true}, {"CAP_MKNOD", CAP_MKNOD, true},
    {"CAP_AUDIT_WRITE", CAP_AUDIT_WRITE, true}, {"CAP_SETFCAP", CAP_SETFCAP, false},
};
#define NCAPS (sizeof CAPS / sizeof CAPS[0])

static uint64_t caps_mask(bool held)
{
    uint64_t m = 0;
    for (size_t i = 0; i < NCAPS; i++)
        if (CAPS[i].held == held)
            m |= 1ull << CAPS[i].cap;
    return m;
}

uint64_t oci_caps_held(void)
{
    return caps_mask(true);
}

uint64_t oci_caps_withheld(void)
{
    return caps_mask(false);
}

json_t *oci_caps_names(bool held)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < NCAPS; i++)
        if (CAPS[i].held == held)
            json_array_append_new(a, json_string(CAPS[i].name));
    return a;
}

/* "CAP_A, CAP_B and CAP_C": the names a config may ask for, held or not. */
static void cap_names(char *buf, size_t n, bool held)
{
    size_t len = 0, k = 0, total = 0;
    for (size_t i = 0; i < NCAPS; i++)
        total += CAPS[i].held == held;
    buf[0] = '\0';
    for (size_t i = 0; i < NCAPS && len < n; i++) {
        if (CAPS[i].held != held)
            continue;
        k++;
        const char *sep = k == 1 ? "" : k == total ? " and " : ", ";
        int w = snprintf(buf + len, n - len, "%s%s", sep, CAPS[i].name);
        len += w > 0 ? (size_t)w : 0;
    }
}

/* get() of an array at o[key], named prefix + key (into field, FIELD_MAX bytes, for the caller's
 * messages about its elements). */
static int get_array(json_t *o, const char *prefix, const char *key, char *field, json_t **arr, mxc_error *e)
{
    snprintf(field, FIELD_MAX, "%s%s", prefix, key);
    return get(o, key, field, JSON_ARRAY, arr, e);
}

/* Each element of the array at o[key] (absent or null: none) given to fn, named prefix + key + "[i]". */
static int each(json_t *o, const char *prefix, const char *key,
                int (*fn)(json_t *el, const char *field, oci_config *c, mxc_error *e), oci_config *c, mxc_error *e)
{
    char field[FIELD_MAX];
    json_t *arr, *el;
    size_t i;
    if (get_array(o, prefix, key, field, &arr, e) < 0)
        return -1;
    json_array_foreach(arr, i, el) {
        snprintf(field, sizeof field, "%s%s[%zu]", prefix, key, i);
        if (fn(el, field, c, e) < 0)
            return -1;
    }
    return 0;
}

static int cap_set(json_t *caps, const char *key, uint64_t *out, bool own_net, mxc_error *e)
{
    char field[FIELD_MAX];
    json_t *arr;
    *out = 0;
    int rc = get_array(caps, "process.capabilities.", key, field, &arr, e);
    if (rc <= 0)
        return rc;
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) {
        const char *name = json_string_value(s);
        if (!name) {
            snprintf(field, sizeof field, "process.capabilities.%s[%zu]", key, i);
            return bad(e, field, "a string");
        }
        size_t k = FIND(CAPS, name);
        if (k == NCAPS) {
            char held[512], withheld[128];
            cap_names(held, sizeof held, true);
            cap_names(withheld, sizeof withheld, false);
            return refuse(e, "%s: %.60s is refused: a container holds only %s (%s: accepted, never held)", field,
                          name, held, withheld);
        }
        if (CAPS[k].cap == CAP_NET_RAW && !own_net)
            return refuse(e, "%s: CAP_NET_RAW is refused without a network namespace of the container's own", field);
        if (CAPS[k].held)
            *out |= 1ull << CAPS[k].cap;
    }
    return 0;
}

static const struct { const char *name; int res; } RLIMITS[] = {
    {"RLIMIT_CPU", RLIMIT_CPU}, {"RLIMIT_FSIZE", RLIMIT_FSIZE}, {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_STACK", RLIMIT_STACK}, {"RLIMIT_CORE", RLIMIT_CORE}, {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_NPROC", RLIMIT_NPROC}, {"RLIMIT_NOFILE", RLIMIT_NOFILE}, {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_AS", RLIMIT_AS}, {"RLIMIT_LOCKS", RLIMIT_LOCKS}, {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE}, {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

const char *oci_rlimit_name(int resource)
{
    for (size_t k = 0; k < COUNT(RLIMITS); k++)
        if (RLIMITS[k].res == resource)
            return RLIMITS[k].name;
    return "RLIMIT_?";
}

/* process.terminal and process.consoleSize. */
static int parse_console(json_t *p, oci_config *c, mxc_error *e)
{
    json_t *v;
    int rc;
    if ((rc = get(p, "terminal", "process.terminal", JSON_TRUE, &v, e)) < 0)
        return rc;
    c->terminal = json_is_true(v);
    if (get(p, "consoleSize", "process.consoleSize", JSON_OBJECT, &v, e) < 0)
        return -1;
    if (v) {
        unsigned h = 0, w = 0;
        if (uint32_of(json_object_get(v, "height"), "process.consoleSize.height", &h, e) < 0 ||
            uint32_of(json_object_get(v, "width"), "process.consoleSize.width", &w, e) < 0 || h > 65535 || w > 65535)
            return bad(e, "process.consoleSize", "an object of height and width (0 to 65535)");
        c->console_height = (unsigned short)h;
        c->console_width = (unsigned short)w;
    }
    return 0;
}

/* process.args, env and cwd (apparmorProfile checked on the way, and what mxc-oci does not do yet). */
static int parse_command(json_t *p, oci_config *c, mxc_error *e)
{
    json_t *v;
    int rc;
    static const char *const later[] = {"commandLine", "selinuxLabel", "ioPriority", "scheduler",
                                        "execCPUAffinity", NULL};
    if (not_yet_if(p, "process.", later, e) < 0)
        return -1;
    /* applied by the init before its execve (apparmor.h); create and exec check the kernel has AppArmor */
    if ((rc = get(p, "apparmorProfile", "process.apparmorProfile", JSON_STRING, &v, e)) < 0)
        return rc;
    c->apparmor_profile = v && *json_string_value(v) ? json_string_value(v) : NULL;
    if (c->apparmor_profile && oci_apparmor_name_check(c->apparmor_profile, "process.apparmorProfile", e) < 0)
        return -1;
    if ((rc = get(p, "args", "process.args", JSON_ARRAY, &v, e)) < 0)
        return rc;
    if (!v || json_array_size(v) == 0)
        return bad(e, "process.args", "a non-empty array of strings");
    if (strings(v, "process.args", &c->args, &c->nargs, e) < 0)
        return -1;
    if ((rc = get(p, "env", "process.env", JSON_ARRAY, &v, e)) < 0)
        return rc;
    if (strings(v, "process.env", &c->env, &c->nenv, e) < 0) /* an empty array is static */
        return -1;
    if ((rc = get(p, "cwd", "process.cwd", JSON_STRING, &v, e)) < 0)
        return rc;
    if (!v || json_string_value(v)[0] != '/')
        return bad(e, "process.cwd", "an absolute path");
    c->cwd = json_string_value(v);
    return 0;
}

static int gid_of(json_t *g, const char *field, oci_config *c, mxc_error *e)
{
    return uint32_of(g, field, &c->gids[c->ngids++], e);
}

/* process.user: uid, gid, umask, additionalGids. */
static int parse_user(json_t *p, oci_config *c, mxc_error *e)
{
    json_t *v, *user;
    int rc;
    if ((rc = get(p, "user", "process.user", JSON_OBJECT, &user, e)) < 0)
        return rc;
    if (!user)
        return 0;
    if ((v = json_object_get(user, "uid")) && uint32_of(v, "process.user.uid", &c->uid, e) < 0)
        return -1;
    if ((v = json_object_get(user, "gid")) && uint32_of(v, "process.user.gid", &c->gid, e) < 0)
        return -1;
    if ((v = json_object_get(user, "umask")) && !json_is_null(v)) {
        if (uint32_of(v, "process.user.umask", &c->umask, e) < 0 || c->umask > 0777)
            return bad(e, "process.user.umask", "a mode (0 to 0777)");
        c->has_umask = true;
    }
    if (not_yet_if(user, "process.user.", (const char *const[]){"username", NULL}, e) < 0)
        return -1;
    if ((rc = get(user, "additionalGids", "process.user.additionalGids", JSON_ARRAY, &v, e)) < 0)
        return rc;
    if (v && !(c->gids = calloc(json_array_size(v) + 1, sizeof *c->gids)))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    return each(user, "process.user.", "additionalGids", gid_of, c, e);
}

/* An ambient capability the kernel cannot raise (PR_CAP_AMBIENT_RAISE: it must be permitted and
 * inheritable; inheritable within the bounding set) is dropped with a warning, as the runtime spec says
 * of a capability that cannot be granted ("MUST be logged as a warning", "SHOULD NOT fail"), and as
 * runc (1.2 on: a warning; 1.1 silently) and crun (silently) do: runc's `spec` template asks for three
 * ambient capabilities and no inheritable one. Dropping one never grants anything. */
static void ambient_within(oci_config *c)
{
    uint64_t keep = c->cap_ambient & c->cap_permitted & c->cap_inheritable & c->cap_bounding;
    uint64_t drop = c->cap_ambient & ~keep;
    c->cap_ambient = keep;
    if (!drop)
        return;
    char names[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < NCAPS && len < sizeof names; i++)
        if (drop & (1ull << CAPS[i].cap)) {
            int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", CAPS[i].name);
            len += w > 0 ? (size_t)w : 0;
        }
    fprintf(stderr, "mxc-oci: warning: process.capabilities.ambient: %s not raised: an ambient capability must "
                    "also be in permitted, inheritable and bounding (the kernel's rule)\n", names);
}

/* process.capabilities: the five sets (CAP_NET_RAW needs a network of the container's own);
 * ambient within the others. */
static int parse_caps(json_t *p, oci_config *c, mxc_error *e)
{
    json_t *caps;
    int rc;
    /* a network namespace joined by path (a pod's) counts as the container's own here; the host's,
     * joined by path, is refused by create once it knows (lifecycle.c, oci_create) */
    bool own_net = (c->ns_flags & CLONE_NEWNET) || joined(c, CLONE_NEWNET);
    if ((rc = get(p, "capabilities", "process.capabilities", JSON_OBJECT, &caps, e)) < 0)
        return rc;
    if (caps && (cap_set(caps, "bounding", &c->cap_bounding, own_net, e) < 0 ||
                 cap_set(caps, "effective", &c->cap_effective, own_net, e) < 0 ||
                 cap_set(caps, "inheritable", &c->cap_inheritable, own_net, e) < 0 ||
                 cap_set(caps, "permitted", &c->cap_permitted, own_net, e) < 0 ||
                 cap_set(caps, "ambient", &c->cap_ambient, own_net, e) < 0))
        return -1;
    ambient_within(c);
    return 0;
}

/* A process.rlimits entry: a Linux RLIMIT_ type once, soft not above hard. */
static int rlimit_of(json_t *l, const char *field, oci_config *c, mxc_error *e)
{
    const char *type = json_string_value(json_object_get(l, "type"));
    uint64_t soft, hard; /* RLIM_INFINITY (2^64-1) too (ocijson.h) */
    if (!json_is_object(l) || !type || !oci_u64_of(json_object_get(l, "soft"), &soft) ||
        !oci_u64_of(json_object_get(l, "hard"), &hard))
        return bad(e, field, "an object with a type (RLIMIT_...) and unsigned soft and hard limits");
    size_t k = FIND(RLIMITS, type);
    if (k == COUNT(RLIMITS)) {
        char f[FIELD_MAX];
        snprintf(f, sizeof f, "%.150s.type", field);
        return bad(e, f, "a Linux RLIMIT_ name");
    }
    if (c->nrlimits == OCI_MAX_RLIMITS || soft > hard)
        return bad(e, field, "a soft limit not above its hard limit, each type once");
    c->rlimits[c->nrlimits].resource = RLIMITS[k].res;
    c->rlimits[c->nrlimits].soft = soft;
    c->rlimits[c->nrlimits++].hard = hard;
    return 0;
}

/* process.noNewPrivileges (true: set; false or absent, the spec's default — Go's runtimes omit a
 * false — honoured inside the container's own ids: docs/oci.md "noNewPrivileges") and
 * process.oomScoreAdj. */
static int parse_oom(json_t *p, oci_config *c, mxc_error *e)
{
    json_t *v;
    int rc;
    if (get(p, "noNewPrivileges", "process.noNewPrivileges", JSON_TRUE, &v, e) < 0)
        return -1;
    c->new_privs = !(v && json_is_true(v));
    if ((rc = get(p, "oomScoreAdj", "process.oomScoreAdj", JSON_INTEGER, &v, e)) < 0)
        return rc;
    if (v) {
        if (json_integer_value(v) > 1000 || json_integer_value(v) < -1000)
            return bad(e, "process.oomScoreAdj", "between -1000 and 1000");
        /* mxc-oci writes it, as host root, before the workload runs; the kernel keeps that value as the
         * floor the workload can return to, never go below. -999 and up (the CRI's -998 for a pod's sandbox,
         * -997 for a Guaranteed pod) only rank the process among others; -1000 (OOM_SCORE_ADJ_MIN) makes it
         * unkillable, even by its own memory cgroup's OOM: that is refused (docs/oci.md "oomScoreAdj") */
        if (json_integer_value(v) <= -1000)
            return refuse(e, "process.oomScoreAdj %d is refused: -1000 exempts a process from the OOM killer, "
                          "even in its own memory cgroup (-999 to 1000)", (int)json_integer_value(v));
        c->has_oom_score_adj = true;
        c->oom_score_adj = (int)json_integer_value(v);
    }
    return 0;
}

static int parse_process(json_t *p, oci_config *c, mxc_error *e)
{
    c->has_process = true;
    if (parse_console(p, c, e) < 0 || parse_command(p, c, e) < 0 || parse_user(p, c, e) < 0 ||
        parse_caps(p, c, e) < 0 || each(p, "process.", "rlimits", rlimit_of, c, e) < 0 || parse_oom(p, c, e) < 0)
        return -1;
    return 0;
}

static int parse_maps_in(json_t *lin, const char *prefix, const char *key, oci_idmap *out, size_t *n,
                         const char *what, mxc_error *e)
{
    char field[FIELD_MAX];
    json_t *arr;
    int rc = get_array(lin, prefix, key, field, &arr, e);
    if (rc <= 0)
        return rc;
    size_t i;
    json_t *m;
    json_array_foreach(arr, i, m) {
        snprintf(field, sizeof field, "%s%s[%zu]", prefix, key, i);
        if (*n == OCI_MAX_IDMAPS)
            return bad(e, field, "one of at most 32 mappings");
        oci_idmap *x = &out[*n];
        if (!json_is_object(m) || uint32_of(json_object_get(m, "containerID"), field, &x->cid, e) < 0 ||
            uint32_of(json_object_get(m, "hostID"), field, &x->hid, e) < 0 ||
            uint32_of(json_object_get(m, "size"), field, &x->n, e) < 0)
            return bad(e, field, "an object of unsigned 32-bit containerID, hostID and size");
        if (x->n == 0 || (unsigned long long)x->cid + x->n > 4294967295ull ||
            (unsigned long long)x->hid + x->n > 4294967295ull)
            return bad(e, field, "a non-empty mapping within 32 bits");
        if (x->hid == 0)
            return refuse(e, "%s maps container %s %u onto host %s 0: refused (no container process is ever host "
                          "root)", field, what, x->cid, what);
        (*n)++;
    }
    return 0;
}

static const struct { const char *name; int flag; } NAMESPACES[] = {
    {"pid", CLONE_NEWPID}, {"network", CLONE_NEWNET}, {"mount", CLONE_NEWNS}, {"ipc", CLONE_NEWIPC},
    {"uts", CLONE_NEWUTS}, {"user", CLONE_NEWUSER}, {"cgroup", CLONE_NEWCGROUP}, {"time", 0},
};

/* A linux.namespaces entry: a namespace of the container's own, or (path) a pod's joined. */
static int namespace_of(json_t *n, const char *field, oci_config *c, mxc_error *e)
{
    char f[FIELD_MAX];
    snprintf(f, sizeof f, "%.150s.type", field);
    const char *type = json_string_value(json_object_get(n, "type"));
    if (!json_is_object(n) || !type)
        return bad(e, f, "a namespace type");
    size_t k = FIND(NAMESPACES, type);
    if (k == COUNT(NAMESPACES))
        return bad(e, f, "one of pid, network, mount, ipc, uts, user, cgroup, time");
    if (!NAMESPACES[k].flag)
        return not_yet(e, "linux.namespaces: the time namespace");
    int flag = NAMESPACES[k].flag;
    if ((c->ns_flags & flag) || joined(c, flag))
        return bad(e, f, "listed once");
    snprintf(f, sizeof f, "%.150s.path", field);
    json_t *path;
    if (get(n, "path", f, JSON_STRING, &path, e) < 0)
        return -1;
    if (!asks(path)) {
        c->ns_flags |= flag;
        return 0;
    }
    /* a pod's containers share the network, IPC and UTS (and cgroup) namespaces of the first, and its
     * user and PID namespaces: those only when they are provably a pod sibling's, a live container
     * mxc-oci made (lifecycle.c's pod proof); a mount namespace by path could be the host's */
    if (flag == CLONE_NEWNS)
        return refuse(e, "%s: joining a %s namespace by path is refused (it could be the host's)", f, type);
    if (json_string_value(path)[0] != '/')
        return bad(e, f, "an absolute path");
    c->join[c->njoin].flag = flag;
    c->join[c->njoin].type = type;
    c->join[c->njoin++].path = json_string_value(path);
    return 0;
}

/* linux.namespaces: each entry, then the ones a container must have of its own (or a pod's). */
static int parse_namespaces(json_t *lin, oci_config *c, mxc_error *e)
{
    if (each(lin, "linux.", "namespaces", namespace_of, c, e) < 0)
        return -1;
    if (!(c->ns_flags & CLONE_NEWPID) && !joined(c, CLONE_NEWPID))
        return refuse(e, "linux.namespaces has no pid namespace: the host's PID namespace is refused (a container "
                      "never sees or signals host processes)");
    /* a pod's PID namespace is shared within its one identity, never across ranges: with no user
     * namespace listed (containerd 1.6's CRI for shareProcessNamespace), the one owning it is joined */
    if (joined(c, CLONE_NEWPID) && (c->ns_flags & CLONE_NEWUSER))
        return refuse(e, "linux.namespaces: joining a pid namespace by path needs the pod's user namespace (joined "
                      "by path, or none listed: the pod's then), not one of the container's own");
    /* delete reaches a container whose PID namespace is not its own through its cgroup alone: without
     * one its processes, in the pod's PID namespace, cannot be told from the pod's and outlive it */
    if (joined(c, CLONE_NEWPID) && c->cgroup == MXC_CGROUP_NONE)
        return refuse(e, "linux.namespaces: joining a pid namespace by path needs a cgroup of the container's "
                      "own (--cgroup-manager disabled makes none: its processes could not be told from the pod's, "
                      "and would outlive its delete)");
    if (!(c->ns_flags & CLONE_NEWNS))
        return refuse(e, "linux.namespaces has no mount namespace: the host's mount namespace is refused");
    if (!(c->ns_flags & CLONE_NEWIPC) && !joined(c, CLONE_NEWIPC))
        return refuse(e, "linux.namespaces has no ipc namespace: the host's IPC namespace is refused (its shared "
                      "memory, semaphores and message queues are the host's; a pod's is joined by path)");
    c->user_ns = c->ns_flags & CLONE_NEWUSER;
    c->join_user = joined(c, CLONE_NEWUSER) || joined(c, CLONE_NEWPID);
    return 0;
}

int oci_sysctl_ns(const char *key)
{
    return !strncmp(key, "net.", 4) ? CLONE_NEWNET : CLONE_NEWIPC;
}

/* Only what belongs to a namespace of the container's own: net.* (its
 * network), kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.* (its IPC);
 * everything else is the host's (refused). */
static int parse_sysctl(json_t *lin, oci_config *c, mxc_error *e)
{
    json_t *obj;
    int rc = get(lin, "sysctl", "linux.sysctl", JSON_OBJECT, &obj, e);
    if (rc <= 0)
        return rc;
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (!json_is_string(v))
            return bad(e, "linux.sysctl", "an object of strings");
        size_t n = strlen(key);
        if (!n || n > 200 || strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_.-") != n || key[0] == '.' ||
            strstr(key, ".."))
            return refuse(e, "linux.sysctl %.80s: not a sysctl name", key);
        bool net = !strncmp(key, "net.", 4), ipc = !strncmp(key, "kernel.shm", 10) ||
                   !strncmp(key, "kernel.msg", 10) || !strcmp(key, "kernel.sem") || !strncmp(key, "fs.mqueue.", 10);
        if (!net && !ipc)
            return refuse(e, "linux.sysctl %.80s is the host's, not a namespace's: refused", key);
        int flag = net ? CLONE_NEWNET : CLONE_NEWIPC;
        /* or a pod's, by path: written by mxc-oci in it (lifecycle.c), never the host's */
        if (!(c->ns_flags & flag) && !joined(c, flag))
            return refuse(e, "linux.sysctl %.80s needs %s namespace of the container's own (or a pod's, joined by "
                          "path)", key, net ? "a network" : "an IPC");
        if (c->nsysctl == sizeof c->sysctl / sizeof c->sysctl[0])
            return bad(e, "linux.sysctl", "at most 64 entries");
        c->sysctl[c->nsysctl][0] = key;
        c->sysctl[c->nsysctl++][1] = json_string_value(v);
    }
    return 0;
}

static int device_rule_of(json_t *d, const char *field, oci_config *c, mxc_error *e)
{
    (void)c;
    return json_is_object(d) && json_is_boolean(json_object_get(d, "allow"))
               ? 0
               : bad(e, field, "an object with a boolean allow");
}

static int parse_linux(json_t *lin, oci_config *c, mxc_error *e)
{
    json_t *v;
    int rc;
    if (parse_namespaces(lin, c, e) < 0)
        return -1;
    if (parse_maps_in(lin, "linux.", "uidMappings", c->uidmap, &c->nuidmap, "uid", e) < 0 ||
        parse_maps_in(lin, "linux.", "gidMappings", c->gidmap, &c->ngidmap, "gid", e) < 0)
        return -1;
    if (c->user_ns && (!c->nuidmap || !c->ngidmap))
        return bad(e, "linux.uidMappings and linux.gidMappings", "given with a user namespace");
    if (!c->user_ns && !c->join_user && (c->nuidmap || c->ngidmap))
        return bad(e, "linux.uidMappings and linux.gidMappings", "given only with a user namespace");
    c->join_maps_given = c->join_user && (c->nuidmap || c->ngidmap); /* the pod's, or refused (lifecycle.c) */
    if (parse_sysctl(lin, c, e) < 0)
        return -1;
    if ((rc = get(lin, "seccomp", "linux.seccomp", JSON_OBJECT, &c->seccomp, e)) < 0)
        return rc; /* compiled (and checked) by profile.c */
    if ((rc = get_str(lin, "cgroupsPath", "linux.cgroupsPath", &c->cgroups_path, e)) < 0)
        return rc; /* resolved and checked by cgroup.c */
    static const char *const later[] = {"intelRdt",     "personality", "timeOffsets", "mountLabel",
                                        "memoryPolicy", "netDevices",  "rdma",        NULL};
    if (not_yet_if(lin, "linux.", later, e) < 0)
        return -1;
    if ((rc = get(lin, "resources", "linux.resources", JSON_OBJECT, &v, e)) < 0)
        return rc;
    c->resources = v;
    if (oci_cgroup_check(v, c->cgroup, e) < 0) /* pids, memory, cpu: what this host can enforce (cgroup.c) */
        return -1;
    /* device rules only narrow: no node but the defaults exists in a container and its user
     * namespace cannot mknod one; linux.devices: the defaults, or an allowlisted character device */
    if (each(v, "linux.resources.", "devices", device_rule_of, c, e) < 0 ||
        each(lin, "linux.", "devices", oci_device_parse, c, e) < 0) /* devices.c */
        return -1;
    if (c->resources && oci_device_rules(json_object_get(c->resources, "devices"), c, e) < 0)
        return -1;
    if ((rc = get(lin, "rootfsPropagation", "linux.rootfsPropagation", JSON_STRING, &v, e)) < 0)
        return rc;
    if (v && json_string_length(v)) {
        /* the root's propagation inside the container's own mount namespace: its rootfs is a private
         * clone, so no value gives it a peer or master outside (tested) */
        static const struct { const char *name; unsigned long flags; } PROP[] = {
            {"shared", MS_SHARED}, {"rshared", MS_SHARED | MS_REC}, {"slave", MS_SLAVE},
            {"rslave", MS_SLAVE | MS_REC}, {"private", MS_PRIVATE}, {"rprivate", MS_PRIVATE | MS_REC},
            {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC}};
        size_t k = FIND(PROP, json_string_value(v));
        if (k == COUNT(PROP))
            return bad(e, "linux.rootfsPropagation", "(r)shared, (r)slave, (r)private or (r)unbindable");
        c->rootfs_propagation = PROP[k].flags;
    }
    if ((rc = get(lin, "maskedPaths", "linux.maskedPaths", JSON_ARRAY, &v, e)) < 0 ||
        strings(v, "linux.maskedPaths", &c->masked, &c->nmasked, e) < 0)
        return -1;
    if ((rc = get(lin, "readonlyPaths", "linux.readonlyPaths", JSON_ARRAY, &v, e)) < 0 ||
        strings(v, "linux.readonlyPaths", &c->readonly, &c->nreadonly, e) < 0)
        return -1;
    for (size_t k = 0; k < c->nmasked + c->nreadonly; k++) {
        const char *pth = k < c->nmasked ? c->masked[k] : c->readonly[k - c->nmasked];
        if (pth[0] != '/')
            return bad(e, k < c->nmasked ? "linux.maskedPaths" : "linux.readonlyPaths", "absolute paths");
    }
    return 0;
}

bool oci_path_is(const char *path, const char *want)
{
    /* component by component, ignoring repeated slashes and "." (".." is not resolved: never equal) */
    for (;;) {
        while (*path == '/' || (path[0] == '.' && (path[1] == '/' || !path[1])))
            path++;
        while (*want == '/')
            want++;
        size_t a = strcspn(path, "/"), b = strcspn(want, "/");
        if (!a || !b)
            return !a && !b;
        if (a != b || strncmp(path, want, a))
            return false;
        path += a;
        want += b;
    }
}

/* mounts[idx]'s destination, type, source and its own id mappings. */
static int parse_mount_fields(json_t *m, size_t idx, oci_mount *o, mxc_error *e)
{
    char f[FIELD_MAX];
    snprintf(f, sizeof f, "mounts[%zu]", idx);
    if (!json_is_object(m))
        return bad(e, f, "an object");
    snprintf(f, sizeof f, "mounts[%zu].destination", idx);
    json_t *v;
    if (get(m, "destination", f, JSON_STRING, &v, e) < 0)
        return -1;
    if (!v || json_string_value(v)[0] != '/')
        return bad(e, f, "an absolute path");
    o->dest = json_string_value(v);
    if (oci_path_is(o->dest, "/"))
        return refuse(e, "%s: a mount over the root is refused (root.path is the root)", f);
    snprintf(f, sizeof f, "mounts[%zu].type", idx);
    if (get_str(m, "type", f, &o->type, e) < 0)
        return -1;
    o->type = o->type ? o->type : "";
    snprintf(f, sizeof f, "mounts[%zu].source", idx);
    if (get_str(m, "source", f, &o->source, e) < 0)
        return -1;
    /* an idmapped bind: its own mappings (checked against the container's ids by mountmap.h) */
    snprintf(f, sizeof f, "mounts[%zu].", idx);
    if (parse_maps_in(m, f, "uidMappings", o->uidmap, &o->nuidmap, "uid", e) < 0 ||
        parse_maps_in(m, f, "gidMappings", o->gidmap, &o->ngidmap, "gid", e) < 0)
        return -1;
    return 0;
}

/* mounts[].options kept as they are (the default, or stricter kept: nosuid and nodev always), the ones
 * mxc-oci does not do yet, and a bind's flags its recursive forms (rro, rnosuid, ...) name */
static const char *const KEPT_OPTS[] = {"bind", "rbind", "rw", "suid", "dev", "exec", "private", "rprivate",
                                        "defaults"};
static const char *const LATER_OPTS[] = {"slave", "rslave", "unbindable", "runbindable", "sync", "dirsync",
                                         "remount", "mand", "nomand", "lazytime", "nolazytime", "iversion",
                                         "noiversion", "norelatime", "atime", "diratime", "silent", "loud",
                                         "copy-symlink", "src-nofollow"};
static const char *const BIND_FLAGS[] = {"ro", "rw", "nosuid", "suid", "nodev", "dev", "noexec", "exec"};

/* One of mounts[idx].options (s); *nodev_asked when it is "nodev". */
static int mount_option(const char *s, size_t idx, bool bind, oci_mount *o, bool *nodev_asked, mxc_error *e)
{
    char f[FIELD_MAX];
    snprintf(f, sizeof f, "mounts[%zu].options: '%.40s'", idx, s);
    if (bind && s[0] == 'r' && FIND(BIND_FLAGS, s + 1) < COUNT(BIND_FLAGS))
        s++; /* a bind's flags are set on the whole tree already */
    if (FIND(KEPT_OPTS, s) < COUNT(KEPT_OPTS))
        return 0;
    if (!strcmp(s, "tmpcopyup"))
        o->tmpcopyup = true;
    else if (!strcmp(s, "idmap") || !strcmp(s, "ridmap"))
        o->idmap = s[0] == 'r' ? 2 : 1;
    else if (!strcmp(s, "ro"))
        o->attr_set |= MOUNT_ATTR_RDONLY;
    else if (!strcmp(s, "nosuid") || !strcmp(s, "nodev"))
        *nodev_asked |= s[2] == 'd';
    else if (!strcmp(s, "noexec"))
        o->attr_set |= MOUNT_ATTR_NOEXEC;
    else if (!strcmp(s, "noatime") || !strcmp(s, "strictatime") || !strcmp(s, "relatime")) {
        o->attr_clr |= MOUNT_ATTR__ATIME;
        o->attr_set &= ~(uint64_t)MOUNT_ATTR__ATIME;
        o->attr_set |= s[0] == 'n'   ? MOUNT_ATTR_NOATIME
                       : s[0] == 's' ? MOUNT_ATTR_STRICTATIME
                                     : MOUNT_ATTR_RELATIME;
    } else if (!strcmp(s, "nodiratime"))
        o->attr_set |= MOUNT_ATTR_NODIRATIME;
    else if (!strcmp(s, "shared") || !strcmp(s, "rshared"))
        return refuse(e, "%s: a mount shared with the host is refused (nothing a container mounts reaches "
                      "the host)", f);
    else if (FIND(LATER_OPTS, s) < COUNT(LATER_OPTS) || !strncmp(s, "X-", 2) || !strncmp(s, "x-", 2))
        return not_yet(e, f);
    else if (bind)
        return bad(e, f, "an option of a bind mount");
    else if (o->nfsopt == sizeof o->fsopt / sizeof o->fsopt[0])
        return bad(e, f, "one of at most 32 filesystem options");
    else
        o->fsopt[o->nfsopt++] = s;
    return 0;
}

/* mounts[idx].options: a bind (by type or option) or a filesystem, the mount attributes, the
 * filesystem's own options. */
static int parse_mount_options(json_t *m, size_t idx, oci_mount *o, bool *nodev_asked, mxc_error *e)
{
    char f[FIELD_MAX];
    json_t *v;
    snprintf(f, sizeof f, "mounts[%zu].options", idx);
    const char **opts = NULL;
    size_t nopts = 0;
    if (get(m, "options", f, JSON_ARRAY, &v, e) < 0 || strings(v, f, &opts, &nopts, e) < 0) {
        free(opts);
        return -1;
    }
    bool bind = !strcmp(o->type, "bind") || !strcmp(o->type, "rbind");
    o->recursive = !strcmp(o->type, "rbind");
    for (size_t i = 0; i < nopts; i++)
        if (!strcmp(opts[i], "bind") || !strcmp(opts[i], "rbind")) {
            bind = true;
            o->recursive |= opts[i][0] == 'r';
        }
    o->kind = bind ? OCI_MNT_BIND : OCI_MNT_FS;
    /* never set-uid, never a device: the default devices are the only nodes */
    o->attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    *nodev_asked = false;
    int rc = 0;
    for (size_t i = 0; i < nopts && rc == 0; i++)
        rc = mount_option(opts[i], idx, bind, o, nodev_asked, e);
    free(opts);
    return rc;
}

/* What the options make of mounts[idx] as a whole: tmpcopyup on a tmpfs only, an idmapped mount a
 * bind, a bind's source. */
static int check_mount_kind(size_t idx, oci_mount *o, mxc_error *e)
{
    char f[FIELD_MAX];
    bool bind = o->kind == OCI_MNT_BIND;
    if (o->tmpcopyup && (bind || strcmp(o->type, "tmpfs"))) {
        snprintf(f, sizeof f, "mounts[%zu].options: 'tmpcopyup'", idx);
        return bad(e, f, "an option of a tmpfs mount");
    }
    if ((o->nuidmap || o->ngidmap) && !o->idmap)
        o->idmap = 1; /* mappings given: an idmapped mount (runc's reading) */
    if (o->idmap && !bind)
        return refuse(e, "mounts[%zu]: an idmapped mount (uidMappings, idmap, ridmap) is a bind mount", idx);
    if (!o->nuidmap != !o->ngidmap) {
        snprintf(f, sizeof f, "mounts[%zu].uidMappings and gidMappings", idx);
        return bad(e, f, "given together");
    }
    if (bind && (!o->source || !o->source[0])) {
        snprintf(f, sizeof f, "mounts[%zu].source", idx);
        return bad(e, f, "the host path a bind mount shows");
    }
    return 0;
}

/* The container's /dev/shm made by mxc-oci as host root (lifecycle.c shm_tree): a tmpfs of the host's
 * user namespace, owned by the container's root, so that host root (runc's seccomp agent, a hook) can
 * make files in it as in runc's.  Not rootless (no host root), not in a pod's user namespace (its maps
 * are not the config's), not with tmpcopyup, read-only or ids of its own: those stay the init's. */
static bool shm_by_parent(const oci_mount *o, const oci_config *c)
{
    if (oci_rootless() || c->join_user || o->tmpcopyup || (o->attr_set & MOUNT_ATTR_RDONLY) ||
        !oci_path_is(o->dest, "/dev/shm"))
        return false;
    for (size_t i = 0; i < o->nfsopt; i++)
        if (!strncmp(o->fsopt[i], "uid=", 4) || !strncmp(o->fsopt[i], "gid=", 4))
            return false;
    return true;
}

/* A filesystem mount (not a bind) by its type: the ones a container may have, and how. */
static int check_fs_type(size_t idx, oci_mount *o, const oci_config *c, bool nodev_asked, mxc_error *e)
{
    char f[FIELD_MAX];
    snprintf(f, sizeof f, "mounts[%zu].type '%.40s'", idx, o->type);
    if ((!strcmp(o->type, "cgroup") || !strcmp(o->type, "cgroup2")) && c->cgroup == MXC_CGROUP_NONE &&
        oci_rootless()) {
        /* rootless without a cgroup (rootless.h): nothing of the host's hierarchy is shown; an empty
         * read-only tmpfs stands in (rootless Podman always asks for the mount), said on stderr */
        fprintf(stderr, "mxc-oci: warning: %s at %s: rootless, the container has no cgroup here: an empty "
                "read-only tmpfs stands in for it\n", f, o->dest);
        o->type = "tmpfs";
        o->attr_set |= MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        return 0;
    }
    if (!strcmp(o->type, "cgroup") || !strcmp(o->type, "cgroup2")) { /* the container's own view (cgroup.c) */
        mxc_error why = {0};
        if (oci_cgroup_mount_check(o->type, c->cgroup, &why) < 0) {
            refuse(e, "%s: %s", f, why.message);
            mxc_error_clear(&why);
            return -1;
        }
        o->attr_set |= MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC; /* read-only always */
        return 0;
    }
    if (!strcmp(o->type, "sysfs")) {
        /* a joined (pod's) network namespace is not owned by the init's user namespace: mxc-oci makes
         * that sysfs (lifecycle.c), refused there if the joined one is the host's */
        o->by_parent = !(c->ns_flags & CLONE_NEWNET) && joined(c, CLONE_NEWNET);
        if (!(c->ns_flags & CLONE_NEWNET) && !o->by_parent)
            return refuse(e, "%s needs a network namespace of the container's own (the host's sysfs is refused)", f);
        o->attr_set |= MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC; /* read-only always */
        return 0;
    }
    if (!strcmp(o->type, "mqueue") && !(c->ns_flags & CLONE_NEWIPC)) {
        /* a joined (pod's) IPC namespace is not owned by the init's user namespace: mxc-oci makes that
         * mqueue (lifecycle.c), refused there if the joined one is the host's */
        if (!(o->by_parent = joined(c, CLONE_NEWIPC)))
            return refuse(e, "%s needs an IPC namespace of the container's own", f);
    }
    if (strcmp(o->type, "proc") && strcmp(o->type, "tmpfs") && strcmp(o->type, "devpts") && strcmp(o->type, "mqueue"))
        return refuse(e, "%s: a container mounts only bind, proc, sysfs, tmpfs, devpts and mqueue", f);
    if (!strcmp(o->type, "proc")) {
        if (!oci_path_is(o->dest, "/proc"))
            return refuse(e, "mounts[%zu]: proc only at /proc, where the engine's masks of it apply", idx);
        for (size_t k = 0; k < c->nmounts; k++)
            if (c->mounts[k].kind == OCI_MNT_FS && !strcmp(c->mounts[k].type, "proc"))
                return refuse(e, "mounts[%zu]: a second proc is refused", idx);
        o->attr_set |= MOUNT_ATTR_NOEXEC;
    }
    if (!strcmp(o->type, "tmpfs"))
        o->by_parent = shm_by_parent(o, c);
    if (!strcmp(o->type, "devpts") && !nodev_asked) /* its nodes are the ptys of its own instance only */
        o->attr_set &= ~(uint64_t)MOUNT_ATTR_NODEV;
    return 0;
}

static int parse_mount(json_t *m, size_t idx, oci_mount *o, const oci_config *c, mxc_error *e)
{
    bool nodev_asked = false;
    if (parse_mount_fields(m, idx, o, e) < 0 || parse_mount_options(m, idx, o, &nodev_asked, e) < 0 ||
        check_mount_kind(idx, o, e) < 0)
        return -1;
    return o->kind == OCI_MNT_BIND ? 0 : check_fs_type(idx, o, c, nodev_asked, e);
}

int oci_config_parse(json_t *doc, int cgroup, oci_config *c, mxc_error *e)
{
    memset(c, 0, sizeof *c);
    c->cgroup = cgroup;
    c->doc = json_incref(doc);
    if (!json_is_object(doc))
        return bad(e, "the document", "a JSON object");
    json_t *v;
    int rc;
    if ((rc = get(doc, "ociVersion", "ociVersion", JSON_STRING, &v, e)) < 0)
        return rc;
    if (!v)
        return bad(e, "ociVersion", "a string");
    c->oci_version = json_string_value(v);
    if (strncmp(c->oci_version, "1.", 2) != 0)
        return refuse(e, "ociVersion %.40s: mxc-oci implements runtime-spec 1.x", c->oci_version);
    static const char *const later[] = {"windows", "solaris", "vm", "zos", NULL}; /* hooks: hooks.c */
    if (not_yet_if(doc, "", later, e) < 0)
        return -1;
    json_t *root;
    if ((rc = get(doc, "root", "root", JSON_OBJECT, &root, e)) < 0)
        return rc;
    if (!root || get(root, "path", "root.path", JSON_STRING, &v, e) <= 0 || !json_string_length(v))
        return e->code ? -1 : bad(e, "root.path", "the path of the container's root filesystem");
    c->root_path = json_string_value(v);
    if (get(root, "readonly", "root.readonly", JSON_TRUE, &v, e) < 0)
        return -1;
    c->root_readonly = json_is_true(v);
    json_t *lin;
    if ((rc = get(doc, "linux", "linux", JSON_OBJECT, &lin, e)) < 0)
        return rc;
    if (parse_linux(lin, c, e) < 0) /* absent: no namespaces, refused there */
        return -1;
    if (get_str(doc, "hostname", "hostname", &c->hostname, e) < 0 ||
        get_str(doc, "domainname", "domainname", &c->domainname, e) < 0)
        return -1;
    if (((c->hostname && *c->hostname) || (c->domainname && *c->domainname)) && !(c->ns_flags & CLONE_NEWUTS))
        return refuse(e, "hostname/domainname need a uts namespace of the container's own (the host's names are "
                      "host root's to set)");
    json_t *proc;
    if ((rc = get(doc, "process", "process", JSON_OBJECT, &proc, e)) < 0)
        return rc;
    if (proc && parse_process(proc, c, e) < 0)
        return -1;
    if ((rc = get(doc, "annotations", "annotations", JSON_OBJECT, &v, e)) < 0)
        return rc;
    const char *key;
    json_t *a;
    json_object_foreach(v, key, a)
        if (!json_is_string(a))
            return bad(e, "annotations", "an object of strings");
    c->annotations = v;
    json_t *mounts;
    if ((rc = get(doc, "mounts", "mounts", JSON_ARRAY, &mounts, e)) < 0)
        return rc;
    c->mounts = calloc(json_array_size(mounts) + 1, sizeof *c->mounts);
    if (!c->mounts)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    size_t i;
    json_array_foreach(mounts, i, v) {
        if (parse_mount(v, i, &c->mounts[i], c, e) < 0)
            return -1;
        c->nmounts++;
    }
    return 0;
}

int oci_process_parse(json_t *proc, int ns_flags, oci_config *c, mxc_error *e)
{
    memset(c, 0, sizeof *c);
    c->doc = json_incref(proc);
    c->ns_flags = ns_flags;
    if (!json_is_object(proc))
        return bad(e, "the process", "a JSON object");
    return parse_process(proc, c, e);
}

int oci_config_load(int bundle_fd, int cgroup, oci_config *c, mxc_error *e)
{
    memset(c, 0, sizeof *c);
    int fd = openat(bundle_fd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_MALFORMED_REQUEST, "oci.config", errno, NULL,
                          "cannot open config.json in the bundle");
    json_error_t je;
    json_t *doc = oci_json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    /* what was read is root's word only if only root could have written it (hooks.h); rootless, the
     * caller's (its hooks run as the caller: rootless.h) */
    struct stat fst, bst;
    bool root_written = fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_uid == geteuid() &&
                        !(fst.st_mode & (S_IWGRP | S_IWOTH)) && fst.st_nlink == 1 && fstat(bundle_fd, &bst) == 0 &&
                        bst.st_uid == geteuid() && !(bst.st_mode & (S_IWGRP | S_IWOTH));
    close(fd);
    if (!doc)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: line %d: %s", je.line, je.text);
    int rc = oci_config_parse(doc, cgroup, c, e);
    c->root_written = root_written;
    json_decref(doc);
    return rc;
}

void oci_config_free(oci_config *c)
{
    /* the arrays only: their strings are the document's (held by c->doc) */
    void *owned[] = {c->args, c->env, c->gids, c->mounts, c->masked, c->readonly};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
    json_decref(c->doc);
    memset(c, 0, sizeof *c);
}

bool oci_map_id(const oci_idmap *m, size_t n, unsigned id, unsigned *host)
{
    for (size_t i = 0; i < n; i++)
        if (id >= m[i].cid && id - m[i].cid < m[i].n) {
            *host = m[i].hid + (id - m[i].cid);
            return true;
        }
    return false;
}
