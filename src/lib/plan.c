/* plan.c — see plan.h.  Pure except for one stat() per grant when picking
 * the default cwd, and the check that no grant reaches mxc's own state
 * (hostpath.h, by descriptor). */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "harden.h"
#include "helperbounds.h"
#include "hostpath.h"

#define DEFAULT_PIDS_MAX 512
#define DEFAULT_MEMORY_MAX (1024ull * 1024 * 1024)

static int add_grant(mxc_plan *p, const char *path, mxc_grant_mode mode, mxc_error *e)
{
    for (size_t i = 0; i < p->ngrants; i++) {
        if (strcmp(p->grants[i].path, path) == 0) {
            if (mode > p->grants[i].mode) /* denied > read-only > read-write */
                p->grants[i].mode = mode;
            return 0;
        }
    }
    if (p->ngrants >= MXC_MAX_GRANTS)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "too many filesystem entries (limit %d)", MXC_MAX_GRANTS);
    p->grants[p->ngrants].path = strdup(path);
    p->grants[p->ngrants].mode = mode;
    p->ngrants++;
    return 0;
}

static size_t depth(const char *path)
{
    size_t d = 0;
    for (; *path; path++)
        d += *path == '/';
    return d;
}

int mxc_grant_depth_cmp(const mxc_grant *x, const mxc_grant *y)
{
    size_t dx = depth(x->path), dy = depth(y->path);
    if (dx != dy)
        return dx < dy ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int by_depth(const void *a, const void *b)
{
    return mxc_grant_depth_cmp(a, b);
}

/* A positive decimal limit from the host's environment (unset or empty:
 * dflt).  Like MXC_CPU_MAX, a bad value fails the request: a limit the
 * operator set is never replaced by the default in silence. */
static int env_limit(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *out, mxc_error *e)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v || !*v)
        return 0;
    uint64_t n = 0;
    const char *c = v;
    for (; *c >= '0' && *c <= '9' && n <= hi; c++)
        n = n * 10 + (uint64_t)(*c - '0');
    if (c != v && !*c && n >= lo && n <= hi) {
        *out = n;
        return 0;
    }
    mxc_err(e, MXC_E_BACKEND_ERROR, "%s=\"%.64s\" is not a limit: it must be a decimal integer from %llu to %llu",
            name, v, (unsigned long long)lo, (unsigned long long)hi);
    mxc_err_set_remediation(e, "fix or unset it (unset: the default)");
    return -1;
}

#define CPU_MAX_CPUS 1024
#define CPU_MIN_QUOTA_US 1000 /* the kernel refuses a CFS quota below 1 ms */
#define CPU_MAX_SYNTAX "a plain decimal number of CPUs (at most 5 decimals), greater than 0 and at most 1024 (e.g. 0.5, 1.5, 2)"

/* "1.5" -> 150000: digits, optionally '.' and digits; below the period's
 * microsecond resolution only zeros.  -1 on anything else. */
static int parse_cpus(const char *s, uint64_t *quota_us)
{
    const char *c = s;
    uint64_t whole = 0, frac = 0, scale = MXC_CGROUP_CPU_PERIOD_US;
    for (; *c >= '0' && *c <= '9'; c++)
        if (whole <= CPU_MAX_CPUS) /* past it: out of range anyway, and no overflow */
            whole = whole * 10 + (uint64_t)(*c - '0');
    if (c == s)
        return -1;
    if (*c == '.') {
        const char *digits = ++c;
        for (; *c >= '0' && *c <= '9'; c++) {
            uint64_t d = (uint64_t)(*c - '0');
            if (scale == 1) {
                if (d)
                    return -1;
                continue;
            }
            scale /= 10;
            frac += d * scale;
        }
        if (c == digits)
            return -1;
    }
    if (*c)
        return -1;
    *quota_us = whole * MXC_CGROUP_CPU_PERIOD_US + frac;
    return 0;
}

/* MXC_CPU_MAX, the host's CPU limit for every sandbox; unset or empty: none.
 * A bad value fails the request: a limit is never dropped in silence. */
static int cpu_quota_from_env(uint64_t *quota_us, mxc_error *e)
{
    const char *v = getenv("MXC_CPU_MAX");
    *quota_us = 0;
    if (!v || !*v)
        return 0;
    uint64_t q = 0;
    const char *why = NULL;
    if (parse_cpus(v, &q) < 0 || q == 0 || q > (uint64_t)CPU_MAX_CPUS * MXC_CGROUP_CPU_PERIOD_US)
        why = "is not a CPU limit: it must be " CPU_MAX_SYNTAX;
    else if (q < CPU_MIN_QUOTA_US)
        why = "is below 0.01, the smallest CPU limit the kernel takes (1 ms per 100 ms)";
    if (!why) {
        *quota_us = q;
        return 0;
    }
    mxc_err(e, MXC_E_BACKEND_ERROR, "MXC_CPU_MAX=\"%.64s\" %s", v, why);
    mxc_err_set_remediation(e, "set MXC_CPU_MAX to " CPU_MAX_SYNTAX ", or unset it for no CPU limit");
    return -1;
}

/* Governed egress: the sandbox's name, for its proxy's records and its
 * CA's directory — the caller's (a session's, a container's), else a
 * one-shot's, unique on this host while it runs (this process, and a serial
 * for in-process callers that run one-shots side by side) —, the proxy's
 * bounds, its credential, where its records go, and with credentials where
 * the CA's files go and what every process of the sandbox gets. */
static int governed_setup(mxc_net_policy *np, const mxc_net_plan_opts *o, mxc_error *e)
{
    static _Atomic unsigned long serial;
    if (o->sandbox && o->sandbox[0])
        snprintf(np->sandbox, sizeof np->sandbox, "%.63s", o->sandbox);
    else
        snprintf(np->sandbox, sizeof np->sandbox, "oneshot-%d-%lu", (int)getpid(), ++serial);
    /* the proxy's bounds (helperbounds.h); a bad value fails the request */
    uint64_t conns, audit;
    if (env_limit("MXC_PROXY_MAX_CONNECTIONS", MXC_PROXY_MAX_CONNECTIONS, 1, MXC_PROXY_MAX_CONNECTIONS_MOST, &conns,
                  e) < 0 ||
        env_limit("MXC_PROXY_AUDIT_MAX_BYTES", MXC_PROXY_AUDIT_MAX_BYTES, 4096, 1ull << 40, &audit, e) < 0)
        return -1;
    np->proxy_max_conns = (unsigned)conns;
    np->proxy_audit_max = audit;
    if (mxc_net_ops_get()->credential(np, e) < 0)
        return -1;
    /* a caller that collects the proxy's records (mxc-gateway) names the file;
     * opened as --log-file is (hostpath.h), never through a link; else the caller's default */
    const char *file = getenv("MXC_PROXY_AUDIT_FILE");
    if (file && file[0] == '/' && strlen(file) < sizeof np->audit_path) {
        snprintf(np->audit_path, sizeof np->audit_path, "%s", file);
        np->audit_by_caller = true;
    } else if (o->audit_path && snprintf(np->audit_path, sizeof np->audit_path, "%s", o->audit_path) >=
                                    (int)sizeof np->audit_path) {
        np->audit_path[0] = '\0';
    }
    if (!np->creds)
        return 0;
    if (o->ca_required && (!o->ca_base || strlen(o->ca_base) >= sizeof np->ca_base))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "network.credentials on a one-shot needs a read-write directory in "
                       "filesystem.readwritePaths: the sandbox's CA certificate is written there (.mxc-proxy/)");
    if (!o->ca_base)
        return 0;
    /* never a truncated path: the CA files are written and removed under it (a prefix could name
     * another directory) */
    if (strlen(o->ca_base) >= sizeof np->ca_base || (o->ca_seen && strlen(o->ca_seen) >= sizeof np->ca_base))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "the directory the sandbox's CA certificate is written to is "
                       "longer than %zu bytes: %.80s...", sizeof np->ca_base - 1, o->ca_base);
    /* the CA files' paths as the sandbox sees them, then where they are written on the host */
    snprintf(np->ca_base, sizeof np->ca_base, "%s", o->ca_seen ? o->ca_seen : o->ca_base);
    int rc = mxc_net_ops_get()->workload_env(np, e);
    snprintf(np->ca_base, sizeof np->ca_base, "%s", o->ca_base);
    return rc;
}

int mxc_net_plan_build(const mxc_net_section *s, const mxc_net_plan_opts *o, mxc_net_policy *np, mxc_error *e)
{
    static const mxc_net_plan_opts none = {0};
    if (!o)
        o = &none;
    const mxc_net_ops *net = mxc_net_ops_get(); /* src/net, installed by the front (netplan.h) */
    if (net->lower(s, np, e) < 0 || net->require(np, geteuid() != 0, e) < 0 ||
        (np->model == MXC_NETM_GOVERNED && governed_setup(np, o, e) < 0)) {
        mxc_net_policy_free(np);
        return -1;
    }
    net->resolve(np); /* model 1: the DNS forwarder's resolver, never host loopback */
    return 0;
}

/* A one-shot's CA files go under its first read-write directory grant
 * (docs/design-decisions.md says why), in a directory of its own name. */
static const char *oneshot_ca_home(const mxc_plan *p)
{
    for (size_t i = 0; i < p->ngrants; i++) {
        struct stat st;
        if (p->grants[i].mode == MXC_GRANT_RW && stat(p->grants[i].path, &st) == 0 && S_ISDIR(st.st_mode))
            return p->grants[i].path;
    }
    return NULL;
}

/* A network that runs the userspace stack (models 1 and 2: pasta, in the sandbox's helpers'
 * cgroup) under a memory limit a cgroup enforces (not the workload's RLIMIT_AS fallback, which
 * pasta is not under): the limit must hold pasta and leave the workload room (helperbounds.h). */
static int stack_memory_check(const mxc_plan *p, mxc_error *e)
{
    bool pasta = mxc_net_ops_get()->needs_stack(&p->net) && p->net.model != MXC_NETM_GOVERNED;
    if (!pasta || p->as_rlimit || p->memory_max >= MXC_NET_STACK_MEMORY_MIN)
        return 0;
    mxc_err(e, MXC_E_POLICY_VALIDATION,
            "the sandbox's memory limit (MXC_MEMORY_MAX=%llu bytes, %llu MiB) is below the %llu MiB a network of "
            "this model needs: its userspace network stack pasta (~%d MiB) is charged to the sandbox's limit, "
            "beside the workload",
            (unsigned long long)p->memory_max, (unsigned long long)(p->memory_max >> 20),
            (unsigned long long)(MXC_NET_STACK_MEMORY_MIN >> 20), MXC_NET_STACK_MEMORY_NEED_MIB);
    char fix[256];
    snprintf(fix, sizeof fix, "raise MXC_MEMORY_MAX to at least %llu (%llu MiB), or use a network without the userspace "
             "stack: blocked (model 3), or network.allowedHosts (governed egress)",
             (unsigned long long)MXC_NET_STACK_MEMORY_MIN, (unsigned long long)(MXC_NET_STACK_MEMORY_MIN >> 20));
    mxc_err_set_remediation(e, fix);
    return -1;
}

int mxc_plan_from_request(const mxc_request *r, const mxc_net_plan_opts *net, mxc_plan *p, mxc_error *e)
{
    memset(p, 0, sizeof *p);
    /* the limits first: nothing to free yet */
    if (cpu_quota_from_env(&p->cpu_quota_us, e) < 0 ||
        env_limit("MXC_PIDS_MAX", DEFAULT_PIDS_MAX, 8, 4194304, &p->pids_max, e) < 0 ||
        env_limit("MXC_MEMORY_MAX", DEFAULT_MEMORY_MAX, 16ull << 20, 1ull << 50, &p->memory_max, e) < 0)
        return -1;
    /* DESIGN §4 "Resources": where no cgroup takes a limit (rootless, or a
     * host without the controller), the documented rlimit fallback. */
    p->nproc_rlimit = !mxc_cgroup_available("pids");
    p->as_rlimit = !mxc_cgroup_available("memory");
    const struct { const mxc_strlist *l; mxc_grant_mode m; } lists[] = {
        {&r->rw, MXC_GRANT_RW}, {&r->ro, MXC_GRANT_RO}, {&r->denied, MXC_GRANT_DENIED}};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < lists[k].l->n; i++)
            if ((lists[k].m != MXC_GRANT_DENIED &&
                 mxc_hostpath_check_grant(lists[k].l->v[i], lists[k].m == MXC_GRANT_RW ? "read-write" : "read-only",
                                          e) < 0) ||
                add_grant(p, lists[k].l->v[i], lists[k].m, e) < 0) {
                mxc_plan_free(p);
                return -1;
            }
    /* Less specific first: a deeper grant is mounted over a shallower one,
     * so a denied path below a grant is hidden and a grant below a denied
     * path is reachable. */
    qsort(p->grants, p->ngrants, sizeof p->grants[0], by_depth);
    /* the network plan (src/net chooses the model and whether this host can enforce it) */
    mxc_net_plan_opts o = net ? *net : (mxc_net_plan_opts){0};
    if (r->containment == MXC_CONT_PROCESS) {
        o.ca_base = oneshot_ca_home(p);
        o.ca_required = true;
    }
    mxc_net_section sec;
    mxc_request_net_section(r, &sec);
    int built = mxc_net_plan_build(&sec, &o, &p->net, e);
    mxc_net_section_free(&sec);
    if (built < 0) {
        mxc_plan_free(p);
        return -1;
    }
    p->host_network = p->net.model == MXC_NETM_HOST;
    if ((p->host_network && mxc_landlock_require_scope(e) < 0) || stack_memory_check(p, e) < 0) {
        mxc_plan_free(p);
        return -1;
    }
    snprintf(p->hostname, sizeof p->hostname, "mxc-sandbox");
    return 0;
}

void mxc_plan_free(mxc_plan *p)
{
    for (size_t i = 0; i < p->ngrants; i++)
        free(p->grants[i].path);
    free(p->workspace);
    mxc_net_policy_free(&p->net);
    memset(p, 0, sizeof *p);
}

const char *mxc_plan_default_cwd(const mxc_plan *p)
{
    if (p->workspace)
        return p->workspace;
    for (size_t i = 0; i < p->ngrants; i++) {
        struct stat st;
        if (p->grants[i].mode == MXC_GRANT_RW && stat(p->grants[i].path, &st) == 0 && S_ISDIR(st.st_mode))
            return p->grants[i].path;
    }
    return "/tmp";
}

static int env_push(char ***envp, size_t *n, const char *kv)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < *n; i++) {
        if (strncmp((*envp)[i], kv, klen) == 0 && (*envp)[i][klen] == '=') {
            free((*envp)[i]);
            (*envp)[i] = strdup(kv);
            return 0;
        }
    }
    char **grown = realloc(*envp, (*n + 2) * sizeof **envp);
    if (!grown)
        return -1;
    *envp = grown;
    (*envp)[(*n)++] = strdup(kv);
    (*envp)[*n] = NULL;
    return 0;
}

/* What the network adds to every process's environment: model 2 and governed
 * egress: the proxy endpoint is the only way out; every proxy variable names
 * it (governed: with the sandbox's credential) and nothing bypasses it;
 * credentials (governed.h): placeholders and the CA's files, never a secret. */
static int net_env(const mxc_net_policy *np, char ***envp, size_t *n)
{
    if (np->model == MXC_NETM_PROXY || np->model == MXC_NETM_GOVERNED) {
        static const char *const VARS[] = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY",
                                           "http_proxy", "https_proxy", "all_proxy", "ftp_proxy"};
        char kv[192];
        for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++) {
            snprintf(kv, sizeof kv, "%s=%s", VARS[i], np->proxy_url);
            if (env_push(envp, n, kv) < 0)
                return -1;
        }
        if (env_push(envp, n, "NO_PROXY=") < 0 || env_push(envp, n, "no_proxy=") < 0)
            return -1;
    }
    if (np->model == MXC_NETM_GOVERNED && np->workload_env) {
        json_error_t jerr;
        json_t *kvs = json_loads(np->workload_env, 0, &jerr);
        for (size_t i = 0; i < json_array_size(kvs); i++) {
            const char *kv = json_string_value(json_array_get(kvs, i));
            if (kv && env_push(envp, n, kv) < 0) {
                json_decref(kvs);
                return -1;
            }
        }
        json_decref(kvs);
    }
    return 0;
}

json_t *mxc_net_plan_env(const mxc_net_policy *np)
{
    char **envp = NULL;
    size_t n = 0;
    json_t *out = net_env(np, &envp, &n) == 0 ? json_array() : NULL;
    for (size_t i = 0; i < n; i++) {
        if (out && json_array_append_new(out, json_string(envp[i])) < 0) {
            json_decref(out);
            out = NULL;
        }
        free(envp[i]);
    }
    free(envp);
    return out;
}

int mxc_exec_spec_build(const mxc_request *r, const mxc_plan *p, mxc_exec_spec *s, mxc_error *e)
{
    memset(s, 0, sizeof *s);
    s->command_line = r->command_line;
    s->cwd = r->cwd;
    s->timeout_ms = r->timeout_ms;
    s->pty_rows = r->pty_rows;
    s->pty_cols = r->pty_cols;
    size_t n = 0;
    char home[4200];
    snprintf(home, sizeof home, "HOME=%s", mxc_plan_default_cwd(p));
    char user[64];
    snprintf(user, sizeof user, "USER=%s", p->agent_name[0] ? p->agent_name : "agent");
    const char *boot[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", home,
                          "LANG=C.UTF-8", user, "TERM=xterm-256color"};
    /* Contract 1.0: a given process.env is the whole environment unless
     * inheritDefaultEnv layers it on the defaults (which add TERM there). */
    bool v1 = r->dialect == MXC_DIALECT_V1;
    size_t nboot = v1 && r->env_given && !r->inherit_default_env ? 0 : v1 ? 5 : 4;
    for (size_t i = 0; i < nboot; i++)
        if (env_push(&s->envp, &n, boot[i]) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory building the environment");
    for (size_t i = 0; i < r->env.n; i++) {
        const char *kv = r->env.v[i];
        if (!strchr(kv, '=') || kv[0] == '=')
            continue; /* entries without '=' are skipped, as upstream */
        if (env_push(&s->envp, &n, kv) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory building the environment");
    }
    if (net_env(&p->net, &s->envp, &n) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory building the environment");
    return 0;
}

int mxc_exec_spec_setenv(mxc_exec_spec *s, const char *kv)
{
    size_t n = 0;
    while (s->envp && s->envp[n])
        n++;
    return env_push(&s->envp, &n, kv);
}

void mxc_exec_spec_free(mxc_exec_spec *s)
{
    for (size_t i = 0; s->envp && s->envp[i]; i++)
        free(s->envp[i]);
    free(s->envp);
    memset(s, 0, sizeof *s);
}
