/* driver.c — see driver.h. */
#include "driver.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "fdio.h"
#include "front.h"
#include "mxc.h"
#include "policymap.h"
#include "procs.h"
#include "sblog.h"
#include "table.h"

static const mxc_gw_config *CFG;
static int MOCK;
static char SOCK[600];

void gw_driver_init(const mxc_gw_config *cfg, int mock, const char *socket_path)
{
    CFG = cfg, MOCK = mock;
    snprintf(SOCK, sizeof SOCK, "%s", socket_path ? socket_path : "");
}

bool gw_driver_mock(void) { return MOCK != GW_MOCK_OFF; }

/* The mock executor: what the real path would send, into the sandbox's log. */
static void mock_run(const char *name, const char *what, const json_t *req)
{
    gw_log *l = gw_log_open(name);
    char *s = l ? json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (s) {
        char head[64];
        int k = snprintf(head, sizeof head, "mock: would run %s ", what);
        gw_log_write(l, head, (size_t)k);
        gw_log_write(l, s, strlen(s));
        gw_log_write(l, "\n", 1);
    }
    free(s);
    gw_log_close(l);
}

/* *e, and *http (when given) the HTTP status it answers: 400 a request
 * refused, 409 a name taken, 500 (or 0: none) the runtime failing. */
static void say(mxc_error *e, int *http, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(mxc_error *e, int *http, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mxc_verr(e, code == 400 ? MXC_E_MALFORMED_REQUEST : code == 409 ? MXC_E_ALREADY_STARTED : MXC_E_BACKEND_ERROR, fmt,
             ap);
    va_end(ap);
    if (http)
        *http = code;
}

/* ---- running mxc-exec --------------------------------------------------- */


/* Starts mxc-exec FLAGS --config - with request on its stdin; its stdout
 * and stderr to out_fd (-1: a pipe into *pipe_out).  No PDEATHSIG: it is
 * tied to the forking *thread* (an API connection's, gone with its
 * answer); a workload that outlives a crashed gateway is found by its
 * record (pid and start time) and ended by the next one (gw_reconcile). */
extern char **environ;

/* The gateway's environment plus extra ("K=V", NULL-terminated): the
 * mxc-exec child's (a provider's secret reaches the runtime only so, never
 * in a request).  Built before fork: the child only execs. */
static char **env_with(char *const *extra)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    while (extra && extra[k])
        k++;
    char **v = calloc(n + k + 1, sizeof *v);
    if (!v)
        return NULL;
    memcpy(v, environ, n * sizeof *v);
    if (k)
        memcpy(v + n, extra, k * sizeof *v);
    return v;
}

static pid_t spawn_exec(bool experimental, bool dry, const char *request, int out_fd, int *pipe_out, char *const *extra)
{
    int po[2] = {-1, -1};
    char **envp = env_with(extra);
    if (!envp)
        return -1;
    /* the request as a memfd (its stdin): nothing to write to a child that may be gone */
    int in = mxc_text_memfd("mxc-request", request);
    if (in < 0 || (out_fd < 0 && pipe2(po, O_CLOEXEC) < 0)) {
        if (in >= 0)
            close(in);
        free(envp);
        return -1;
    }
    char *argv[6];
    int n = 0;
    argv[n++] = "mxc-exec";
    if (experimental)
        argv[n++] = "--experimental";
    if (dry)
        argv[n++] = "--dry-run";
    argv[n++] = "--config";
    argv[n++] = "-";
    argv[n] = NULL;
    int o = out_fd >= 0 ? out_fd : po[1];
    int fds[] = {in, o, o};
    mxc_error e = {0};
    /* posix_spawn: this threaded daemon's memory is not copied per run */
    pid_t pid = mxc_spawn_fresh(CFG->exec_path, argv, envp, fds, 3, &e);
    mxc_error_clear(&e);
    free(envp); /* the array only: its strings are environ's and the caller's */
    close(in);
    if (po[1] >= 0)
        close(po[1]);
    if (pid < 0) {
        if (po[0] >= 0)
            close(po[0]);
        return -1;
    }
    if (pipe_out)
        *pipe_out = po[0];
    return pid;
}

/* Runs a non-workload request to its end: the envelope it printed (or
 * NULL) and its status. */
static json_t *run_exec(bool experimental, bool dry, json_t *req, int *status, char *const *extra)
{
    char *text = json_dumps(req, JSON_COMPACT);
    int out = -1;
    pid_t pid = text ? spawn_exec(experimental, dry, text, -1, &out, extra) : -1;
    free(text);
    *status = -1;
    if (pid < 0)
        return NULL;
    char buf[1 << 16];
    size_t n = 0;
    ssize_t r;
    while ((r = read(out, buf + n, sizeof buf - 1 - n)) > 0 || (r < 0 && errno == EINTR))
        if (r > 0)
            n += (size_t)r;
    close(out);
    buf[n] = '\0';
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    /* the envelope is the last line that parses */
    json_t *env = NULL;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *j = json_loads(line, 0, NULL);
        if (json_is_object(j)) {
            json_decref(env);
            env = j;
        } else {
            json_decref(j);
        }
    }
    return env;
}

static const char *env_error(json_t *env)
{
    return json_string_value(json_object_get(json_object_get(env, "error"), "message"));
}

/* A phase on a session; true when it answered a result. */
static bool phase(const char *ph, const char *sid, json_t **result, mxc_error *e, char *const *extra)
{
    json_t *req = json_pack("{s:s, s:s}", "phase", ph, "sandboxId", sid);
    int st;
    json_t *env = run_exec(true, false, req, &st, extra);
    json_decref(req);
    json_t *res = json_object_get(env, "result");
    if (res && result)
        *result = json_incref(res);
    if (!res)
        mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", ph, env_error(env) ? env_error(env) : "mxc-exec gave no answer");
    json_decref(env);
    return res != NULL;
}

static const char *error_code(json_t *env)
{
    return json_string_value(json_object_get(json_object_get(env, "error"), "code"));
}

/* ---- the workload ------------------------------------------------------- */

typedef struct {
    char name[64];
    char backend[24];
    pid_t pid;
    unsigned long long start;
    int out, pidfd; /* the driver's pipe from mxc-exec, and mxc-exec's pidfd */
    gw_log *log;
} watch;

/* Names whose watcher still runs (name -> count): a delete waits for them,
 * so nothing writes into a sandbox's directory once it is removed. */
static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wcv = PTHREAD_COND_INITIALIZER;
static json_t *watching;

static void watching_add(const char *name, int d)
{
    pthread_mutex_lock(&wmu);
    if (!watching)
        watching = json_object();
    json_int_t n = json_integer_value(json_object_get(watching, name)) + d;
    if (n > 0)
        json_object_set_new(watching, name, json_integer(n));
    else
        json_object_del(watching, name);
    pthread_cond_broadcast(&wcv);
    pthread_mutex_unlock(&wmu);
}

/* Waits (at most 30 s) until no watcher of name runs. */
static void watching_wait(const char *name)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&wmu);
    while (watching && json_object_get(watching, name))
        if (pthread_cond_timedwait(&wcv, &wmu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&wmu);
}

static void *watcher(void *arg)
{
    watch *w = arg;
    /* the workload's output into its log, under the log's caps (sblog.h) */
    gw_log_pump(w->log, w->out, w->pidfd);
    close(w->out);
    if (w->pidfd >= 0)
        close(w->pidfd);
    int st;
    while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
        ;
    gw_log_close(w->log);
    json_t *rec = gw_table_get(w->name);
    /* the record still names this process (a delete may have removed it) */
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    gw_audit_process(w->name, w->backend, GW_AUDIT_TERMINATE, w->pid, code);
    gw_audit_source_retire(w->pid, w->start);
    if (rec && json_integer_value(json_object_get(rec, "pid")) == w->pid) {
        gw_table_set(w->name, "exitCode", json_integer(code));
        /* the driver reports a failed workload as failed (spec 002), its code kept */
        gw_table_set(w->name, "status", json_string(code == 0 ? "exited" : "failed"));
        if (code != 0) {
            char e[96];
            if (WIFEXITED(st))
                snprintf(e, sizeof e, "the workload exited with status %d", code);
            else
                snprintf(e, sizeof e, "the workload was killed by signal %d", WTERMSIG(st));
            gw_table_set(w->name, "error", json_string(e));
        }
        gw_table_set(w->name, "pid", NULL);
        gw_table_set(w->name, "pidStart", NULL);
        gw_table_set(w->name, "ended", json_integer((json_int_t)time(NULL)));
    }
    json_decref(rec);
    watching_add(w->name, -1);
    free(w);
    return NULL;
}

static int launch(const char *name, json_t *req, bool experimental, mxc_error *e, char *const *extra,
                  const char *audit_file, bool governed)
{
    watch *w = calloc(1, sizeof *w);
    gw_log *log = w ? gw_log_open(name) : NULL;
    if (!log) {
        free(w);
        return say(e, NULL, 0, "cannot open the sandbox's log"), -1;
    }
    /* through a pipe the driver reads: the workload never writes a file of ours itself */
    char *text = json_dumps(req, JSON_COMPACT);
    int out = -1;
    pid_t pid = text ? spawn_exec(experimental, false, text, -1, &out, extra) : -1;
    free(text);
    if (pid < 0) {
        gw_log_close(log);
        free(w);
        return say(e, NULL, 0, "cannot start mxc-exec (%s)", CFG->exec_path), -1;
    }
    unsigned long long pstart = mxc_proc_start_time(pid);
    gw_table_set(name, "pid", json_integer(pid));
    gw_table_set(name, "pidStart", json_integer((json_int_t)pstart));
    gw_audit_process(name, experimental ? "isolation_session" : "process", GW_AUDIT_LAUNCH, pid, 0);
    if (audit_file)
        gw_audit_source_add(name, audit_file, pid, pstart, governed);
    gw_table_set(name, "status", json_string("running")); /* the driver reports readiness itself */
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->backend, sizeof w->backend, "%s", experimental ? "isolation_session" : "process");
    w->pid = pid, w->start = pstart, w->out = out, w->log = log;
    w->pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* our unreaped child: it is this process */
    watching_add(name, 1);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, watcher, w) != 0)
        watcher(w); /* no thread: the create answers when the workload ends */
    pthread_attr_destroy(&attr);
    return 0;
}

static void teardown_session(const char *sid);

/* ---- create ------------------------------------------------------------- */

static bool env_entry_ok(const char *kv)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;
    return eq && eq != kv;
}

/* The workload's environment: the Linux bootstrap set (unless
 * pc_minimal_env), then the request's entries, a later key replacing an
 * earlier one. */
static json_t *environment(const json_t *given, mxc_error *e, int *http)
{
    json_t *byk = json_object(), *order = json_array();
    static const char *const SEED[] = {"PATH", "LANG", "TZ"};
    for (size_t i = 0; !CFG->minimal_env && i < 3; i++) {
        const char *v = getenv(SEED[i]);
        if (v) {
            char kv[4200];
            snprintf(kv, sizeof kv, "%s=%s", SEED[i], v);
            json_object_set_new(byk, SEED[i], json_string(kv));
            json_array_append_new(order, json_string(SEED[i]));
        }
    }
    size_t i;
    json_t *it;
    json_array_foreach(given, i, it) {
        const char *kv = json_string_value(it);
        if (!env_entry_ok(kv)) {
            say(e, http, 400, "env entries are K=V (%s)", kv ? kv : "not a string");
            json_decref(byk), json_decref(order);
            return NULL;
        }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(kv, '=') - kv), kv);
        if (!json_object_get(byk, key))
            json_array_append_new(order, json_string(key));
        json_object_set_new(byk, key, json_string(kv));
    }
    json_t *out = json_array();
    json_array_foreach(order, i, it) json_array_append(out, json_object_get(byk, json_string_value(it)));
    json_decref(byk), json_decref(order);
    return out;
}

/* ---- grants ------------------------------------------------------------- */

/* No grant reaches the gateway's own machinery — its state directory
 * (records, their key, every sandbox's log and proxy records), its audit
 * directory, its socket — by the runtime's rule for its own state
 * (mxc_hostpath_check_grant_against: by descriptor, a grant that is,
 * covers or lies inside one is refused). */
static int own_places_refused(const json_t *frag, mxc_error *e)
{
    const mxc_hostpath_owned own[] = {{gw_table_dir(), "the gateway's state directory", true},
                                      {gw_audit_dir(), "the gateway's audit directory", true},
                                      {SOCK, "the gateway's socket", true}};
    static const char *const LISTS[][2] = {{"readwritePaths", "read-write"}, {"readonlyPaths", "read-only"}};
    json_t *fs = json_object_get(frag, "filesystem");
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(fs, LISTS[l][0]), i, p) {
            mxc_error ge = {0};
            if (mxc_hostpath_check_grant_against(json_string_value(p), LISTS[l][1], own, sizeof own / sizeof own[0],
                                                 "grant a directory that neither contains nor lies inside the "
                                                 "gateway's state directory (MXC_GATEWAY_STATE), audit directory "
                                                 "(OPENSHELL_OCSF_LOG_DIR) or socket (MXC_GATEWAY_SOCKET)",
                                                 &ge) < 0) {
                mxc_err(e, MXC_E_POLICY_VALIDATION, "policy refused: %s (%s)", ge.message, ge.remediation);
                mxc_error_clear(&ge);
                return -1;
            }
        }
    }
    return 0;
}

/* ---- providers ---------------------------------------------------------- */

#define MAX_SECRETS 16

/* The secrets handed to one create's mxc-exec runs, as "K=V" environment
 * entries; wiped when done (they are in the gateway's memory only for the
 * create). */
typedef struct {
    char *kv[MAX_SECRETS + 1];
    size_t n;
} secret_env;

static void secrets_wipe(secret_env *se)
{
    for (size_t i = 0; i < se->n; i++) {
        explicit_bzero(se->kv[i], strlen(se->kv[i]));
        free(se->kv[i]);
        se->kv[i] = NULL;
    }
    se->n = 0;
}

static void endpoint_text(const json_t *ep, char *out, size_t sz)
{
    const char *h = json_string_value(json_object_get(ep, "host"));
    int port = (int)json_integer_value(json_object_get(ep, "port"));
    snprintf(out, sz, strchr(h, ':') ? "[%s]:%d" : "%s:%d", h, port);
}

static bool allowed(const json_t *hosts, const char *entry)
{
    size_t i;
    json_t *h;
    json_array_foreach(hosts, i, h) if (!strcmp(json_string_value(h), entry)) return true;
    return false;
}

/* --provider NAME...: each provider's credential bound to its endpoints
 * (network.credentials), its secret into se for mxc-exec's environment, its
 * workload variable taking precedence over any --env of the same name (in
 * any letter case).  The policy must already govern egress to every
 * endpoint. */
static int providers(const json_t *names, json_t *net, json_t *envs, secret_env *se, json_t *used, int *http,
                     mxc_error *e)
{
    json_t *hosts = json_object_get(net, "allowedHosts"), *creds = json_array();
    size_t i;
    json_t *nm;
    json_array_foreach(names, i, nm) {
        const char *name = json_string_value(nm);
        json_t *p = name ? json_object_get(CFG->providers, name) : NULL;
        const char *fail = NULL;
        char ep_text[300] = "";
        if (!p)
            fail = "is not configured ([mxc.providers.NAME] in the gateway's configuration)";
        else if (json_is_true(json_object_get(p, "expires")))
            fail = "has an expiring credential: the driver has no channel to refresh it (use a non-expiring token; "
                   "recreate the sandbox to rotate it)";
        else if (!hosts)
            fail = "needs governed egress: egress_proxy = true and network_policies naming its endpoints";
        else if (se->n == MAX_SECRETS || allowed(used, name))
            fail = "is named twice, or too many providers are given";
        size_t k;
        json_t *ep;
        json_array_foreach(p ? json_object_get(p, "endpoints") : NULL, k, ep) {
            endpoint_text(ep, ep_text, sizeof ep_text);
            if (!fail && !allowed(hosts, ep_text))
                fail = "has an endpoint the policy's network_policies do not allow: ";
        }
        char *token = fail ? NULL : mxc_gw_provider_token(p);
        if (!fail && !token)
            fail = "has no token (its token_env is unset or empty, or its token_file unreadable)";
        if (fail) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST, "provider %s %s%s", name ? name : "(not a string)", fail,
                    strstr(fail, "do not allow") ? ep_text : "");
            *http = 400;
            json_decref(creds);
            return -1;
        }
        char var[40];
        snprintf(var, sizeof var, "MXC_GATEWAY_SECRET_%zu", se->n);
        size_t tl = strlen(token), vl = strlen(var);
        char *kv = malloc(vl + tl + 2);
        if (!kv) {
            explicit_bzero(token, tl);
            free(token);
            json_decref(creds);
            return say(e, http, 500, "out of memory"), -1;
        }
        memcpy(kv, var, vl);
        kv[vl] = '=';
        memcpy(kv + vl + 1, token, tl + 1);
        explicit_bzero(token, tl);
        free(token);
        se->kv[se->n++] = kv;
        const char *wenv = json_string_value(json_object_get(p, "env"));
        json_array_foreach(json_object_get(p, "endpoints"), k, ep) {
            json_t *c = json_pack("{s:s, s:O, s:O, s:O, s:s, s:s}", "name", name, "revision",
                                  json_object_get(p, "revision"), "host", json_object_get(ep, "host"), "port",
                                  json_object_get(ep, "port"), "secretEnv", var, "env", wenv);
            if (json_object_get(ep, "pathPrefix"))
                json_object_set(c, "pathPrefix", json_object_get(ep, "pathPrefix"));
            json_array_append_new(creds, c);
        }
        /* provider-owned keys win, case-insensitively: the placeholder, never a value given here */
        for (size_t x = json_array_size(envs); x-- > 0;) {
            const char *kve = json_string_value(json_array_get(envs, x));
            size_t kl = strcspn(kve, "=");
            if (kl == strlen(wenv) && !strncasecmp(kve, wenv, kl))
                json_array_remove(envs, x);
        }
        json_array_append_new(used, json_string(name));
    }
    if (json_array_size(creds))
        json_object_set_new(net, "credentials", creds);
    else
        json_decref(creds);
    return 0;
}

/* One create's parts, from the request to the runtime's run. */
typedef struct {
    const char *name, *cwd;   /* the request's */
    const char *argv[256];
    size_t argc;
    json_t *frag;             /* the mapped policy: every runtime request's base */
    json_t *envs;             /* the workload's environment, until proc takes it */
    json_t *proc;             /* the workload's process object */
    json_t *used;             /* the providers' names */
    char *cl;                 /* the command line */
    secret_env secrets;
    bool session, governed;
    char audit_file[800], audit_kv[840];
    char *extra[MAX_SECRETS + 2]; /* mxc-exec's environment additions, NULL-terminated */
} create_job;

static void create_done(create_job *c)
{
    json_decref(c->frag), json_decref(c->envs), json_decref(c->proc), json_decref(c->used);
    free(c->cl);
    secrets_wipe(&c->secrets);
}

/* The request's fields checked and its policy mapped into c->frag, no grant
 * reaching the gateway's own places; -1 (400) with *e. */
static int create_read(const json_t *req, create_job *c, int *http, mxc_error *e)
{
    c->name = json_string_value(json_object_get(req, "name"));
    if (!gw_name_ok(c->name))
        return say(e, http, 400, "name %s is not usable: 1 to 63 of [A-Za-z0-9_.-], starting alphanumeric",
                   c->name ? c->name : "(none)"), -1;
    json_t *cmd = json_object_get(req, "command");
    if (!json_is_array(cmd) || !json_array_size(cmd))
        return say(e, http, 400, "a command is required (--driver-config-json {\"mxc\":{\"command\":[...]}} or "
                   "-- COMMAND)"), -1;
    size_t i;
    json_t *a;
    json_array_foreach(cmd, i, a) {
        if (!json_is_string(a) || c->argc == 255)
            return say(e, http, 400, "command: at most 255 strings"), -1;
        c->argv[c->argc++] = json_string_value(a);
    }
    c->cwd = json_string_value(json_object_get(req, "cwd"));
    if (json_object_get(req, "cwd") && (!c->cwd || c->cwd[0] != '/'))
        return say(e, http, 400, "cwd must be an absolute path"), -1;
    json_t *pnames = json_object_get(req, "providers");
    if (pnames && !json_is_array(pnames))
        return say(e, http, 400, "providers must be a list of names"), -1;
    json_t *policy = json_object_get(req, "policy");
    if (!policy)
        return say(e, http, 400, "a policy is required (--policy FILE.yaml)"), -1;
    mxc_error me = {0};
    c->frag = mxc_gw_map_policy(policy, CFG, c->cwd, &me);
    if (!c->frag)
        return say(e, http, 400, "policy refused: %s", me.message), -1;
    if (own_places_refused(c->frag, e) < 0)
        return *http = 400, -1;
    return 0;
}

/* The workload's process (environment, command line, the providers'
 * credentials on the policy's network) and mxc-exec's own environment
 * (the providers' secrets, the proxy's audit file); -1 with *http, *e. */
static int create_process(const json_t *req, create_job *c, int *http, mxc_error *e)
{
    c->envs = environment(json_object_get(req, "env"), e, http);
    c->cl = mxc_command_line(c->argv, c->argc);
    c->used = json_array();
    json_t *net = json_object_get(c->frag, "network");
    if (!c->envs || !c->cl ||
        providers(json_object_get(req, "providers"), net, c->envs, &c->secrets, c->used, http, e) < 0)
        return -1;
    c->session = CFG->backend == MXC_GW_BACKEND_SESSION;
    /* the proxy's records, when the audit sink collects them: a file of the sandbox's own */
    c->governed = json_object_get(net, "allowedHosts") != NULL;
    size_t nx = 0;
    for (size_t k = 0; k < c->secrets.n; k++)
        c->extra[nx++] = c->secrets.kv[k];
    if (gw_audit_on() && c->governed &&
        gw_table_file_path(c->name, "proxy-audit.jsonl", c->audit_file, sizeof c->audit_file) == 0) {
        snprintf(c->audit_kv, sizeof c->audit_kv, "MXC_PROXY_AUDIT_FILE=%s", c->audit_file);
        c->extra[nx++] = c->audit_kv;
    }
    c->extra[nx] = NULL;
    c->proc = json_pack("{s:s, s:o}", "commandLine", c->cl, "env", c->envs);
    c->envs = NULL; /* the process's now */
    if (c->cwd)
        json_object_set_new(c->proc, "cwd", json_string(c->cwd));
    return 0;
}

/* The runtime request the backend starts with: a session's provision, or
 * the one-shot with the workload's process. */
static json_t *first_request(const create_job *c)
{
    json_t *r = json_deep_copy(c->frag);
    if (c->session) {
        json_object_set_new(r, "containment", json_string("isolation_session"));
        json_object_set_new(r, "phase", json_string("provision"));
    } else {
        json_object_set(r, "process", c->proc);
    }
    return r;
}

/* The runtime judges the whole request first (--dry-run): a refusal leaves
 * nothing; -1 (400) with *e. */
static int create_judged(const create_job *c, int *http, mxc_error *e)
{
    if (MOCK)
        return 0;
    json_t *check = first_request(c);
    int st;
    json_t *env = run_exec(c->session, true, check, &st, c->secrets.kv);
    json_decref(check);
    int rc = 0;
    if (!json_object_get(env, "result")) {
        say(e, http, 400, "the runtime refuses the sandbox: %s",
            env_error(env) ? env_error(env) : "mxc-exec gave no answer");
        rc = -1;
    }
    json_decref(env);
    return rc;
}

/* The sandbox's record, "provisioning"; -1 (409: it exists) with *e. */
static int create_record(const create_job *c, int *http, mxc_error *e)
{
    json_t *rec = json_pack("{s:s, s:s, s:s, s:I, s:s}", "name", c->name, "backend",
                            c->session ? "isolation_session" : "process", "status", "provisioning", "created",
                            (json_int_t)time(NULL), "commandLine", c->cl);
    if (c->cwd)
        json_object_set_new(rec, "cwd", json_string(c->cwd));
    if (json_array_size(c->used))
        json_object_set(rec, "providers", c->used); /* names only */
    if (gw_table_insert(c->name, rec, e) < 0)
        return *http = 409, -1;
    return 0;
}

/* The mock executor's run: each runtime request into the log, the workload
 * "running" (MXC_GATEWAY_MOCK_HOLD) or "exited 0". */
static void create_mock(const create_job *c)
{
    const char *backend = c->session ? "isolation_session" : "process";
    json_t *run = first_request(c);
    if (c->session) {
        mock_run(c->name, "provision", run);
        json_t *st = json_pack("{s:s, s:s}", "phase", "start", "sandboxId", "mock");
        mock_run(c->name, "start", st);
        json_decref(st);
        json_t *ex = json_pack("{s:s, s:s, s:O}", "phase", "exec", "sandboxId", "mock", "process", c->proc);
        mock_run(c->name, "exec", ex);
        json_decref(ex);
    } else {
        mock_run(c->name, "one-shot", run);
    }
    json_decref(run);
    gw_audit_process(c->name, backend, GW_AUDIT_LAUNCH, 0, 0);
    if (MOCK == GW_MOCK_HOLD) {
        gw_table_set(c->name, "status", json_string("running"));
    } else {
        gw_audit_process(c->name, backend, GW_AUDIT_TERMINATE, 0, 0);
        gw_table_set(c->name, "status", json_string("exited"));
        gw_table_set(c->name, "exitCode", json_integer(0));
    }
}

/* A session's run: provision, start, then the workload as its exec; a
 * failure stops and deprovisions what was made.  -1 with *e. */
static int create_session(const create_job *c, mxc_error *e)
{
    json_t *prov = first_request(c), *res = NULL;
    int st, rc = 0;
    json_t *env = run_exec(true, false, prov, &st, c->secrets.kv);
    json_decref(prov);
    const char *sid = json_string_value(json_object_get(json_object_get(env, "result"), "sandboxId"));
    if (!sid) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "provision: %s", env_error(env) ? env_error(env) : "mxc-exec gave no answer");
        json_decref(env);
        return -1;
    }
    gw_table_set(c->name, "sandboxId", json_string(sid));
    if (!phase("start", sid, &res, e, c->extra)) {
        rc = -1;
    } else {
        json_t *ex = json_pack("{s:s, s:s, s:O}", "phase", "exec", "sandboxId", sid, "process", c->proc);
        rc = launch(c->name, ex, true, e, NULL, c->audit_file[0] ? c->audit_file : NULL, c->governed);
        json_decref(ex);
    }
    json_decref(res);
    if (rc < 0) /* nothing of a failed create stays in the runtime */
        teardown_session(sid);
    json_decref(env);
    return rc;
}

json_t *gw_create(const json_t *req, int *http, mxc_error *e)
{
    *http = 400;
    create_job c = {0};
    if (create_read(req, &c, http, e) < 0 || create_process(req, &c, http, e) < 0 ||
        create_judged(&c, http, e) < 0 || create_record(&c, http, e) < 0) {
        create_done(&c);
        return NULL;
    }
    int rc = 0;
    if (MOCK) {
        create_mock(&c);
    } else if (!c.session) {
        json_t *run = first_request(&c);
        rc = launch(c.name, run, false, e, c.extra, c.audit_file[0] ? c.audit_file : NULL, c.governed);
        json_decref(run);
    } else {
        rc = create_session(&c, e);
    }
    create_done(&c);
    if (rc < 0) {
        *http = 500;
        gw_table_set(c.name, "status", json_string("failed"));
        gw_table_set(c.name, "error", json_string(e->message));
    }
    return gw_table_get(c.name);
}

/* ---- delete, reconcile ------------------------------------------------ */

/* Ends the driver's mxc-exec of rec: TERM (its 3-tier shutdown), then KILL. */
static void end_process(json_t *rec)
{
    pid_t pid = (pid_t)json_integer_value(json_object_get(rec, "pid"));
    unsigned long long st = (unsigned long long)json_integer_value(json_object_get(rec, "pidStart"));
    if (pid <= 0 || mxc_proc_start_time(pid) != st)
        return;
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return;
    if (mxc_proc_start_time(pid) == st) { /* still the same process, now pinned */
        syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0);
        struct pollfd p = {.fd = pfd, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
    }
    close(pfd);
}

static void teardown_session(const char *sid)
{
    phase("stop", sid, NULL, NULL, NULL);
    phase("deprovision", sid, NULL, NULL, NULL);
}

int gw_delete(const char *name, mxc_error *e)
{
    json_t *rec = gw_table_get(name);
    if (!rec)
        return say(e, NULL, 0, "no sandbox named %s", name), -1;
    gw_table_set(name, "pid", NULL); /* the watcher records nothing more */
    end_process(rec);
    const char *sid = json_string_value(json_object_get(rec, "sandboxId"));
    if (sid && !MOCK)
        teardown_session(sid);
    watching_wait(name); /* its output pumped, its log closed */
    gw_audit_source_forget(name);
    gw_table_remove(name);
    json_decref(rec);
    return 0;
}

void gw_reconcile(void)
{
    json_t *all = gw_table_list();
    size_t i;
    json_t *rec;
    json_array_foreach(all, i, rec) {
        const char *name = json_string_value(json_object_get(rec, "name"));
        const char *status = json_string_value(json_object_get(rec, "status"));
        if (!status || (strcmp(status, "running") && strcmp(status, "provisioning")))
            continue;
        end_process(rec); /* an orphan of the previous gateway's: ours to end */
        const char *sid = json_string_value(json_object_get(rec, "sandboxId"));
        const char *why = "the gateway restarted: its workload was ended (the driver could no longer watch it)";
        if (sid && !MOCK) {
            json_t *req = json_pack("{s:s, s:s}", "phase", "stop", "sandboxId", sid);
            int st;
            json_t *env = run_exec(true, false, req, &st, NULL);
            json_decref(req);
            const char *code = error_code(env);
            if (code && !strcmp(code, "stale_id")) {
                why = "the gateway restarted and the sandbox's runtime state is gone";
            } else {
                phase("deprovision", sid, NULL, NULL, NULL);
                why = "the gateway restarted: the orphaned session was stopped and deprovisioned";
            }
            json_decref(env);
        }
        const char *backend = json_string_value(json_object_get(rec, "backend"));
        gw_audit_lost(name, backend ? backend : "process", why);
        gw_table_set(name, "pid", NULL);
        gw_table_set(name, "pidStart", NULL);
        gw_table_set(name, "status", json_string("lost"));
        gw_table_set(name, "error", json_string(why));
    }
    json_decref(all);
}
