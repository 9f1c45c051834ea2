/* mxc-gateway — spec 002's compute driver on Linux: the daemon and its client.
 * Owns: the command line (serve, sandbox create|list|get|logs|delete,
 * probe), reading a create's inputs on the client's side (the policy YAML
 * or JSON, --driver-config-json, --env, --env-from) into one JSON body, and
 * talking to the daemon over its unix socket (libcurl).  Everything a
 * sandbox is happens in the daemon (server.h, driver.h). */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "driver.h"
#include "net.h"
#include "sblog.h"
#include "server.h"
#include "table.h"
#include "front.h"
#include "yamljson.h"

static const char USAGE[] =
    "usage: mxc-gateway serve --config gateway.toml [--socket PATH]\n"
    "       mxc-gateway [--socket PATH] sandbox create --name N --policy FILE.yaml [--driver-config-json JSON]\n"
    "                   [--env K=V]... [--env-from FILE] [--provider NAME]... [--no-tty] [-- COMMAND ARGS...]\n"
    "       mxc-gateway [--socket PATH] sandbox list [--json] | get NAME | logs [--raw] NAME | delete NAME\n"
    "       mxc-gateway probe --config gateway.toml\n"
    "The socket: --socket, else MXC_GATEWAY_SOCKET, else /run/mxc-gateway.sock (root) or\n"
    "$XDG_RUNTIME_DIR/mxc-gateway.sock (or another private directory's).  Output to a terminal\n"
    "is filtered (no clipboard, title or query sequences); logs --raw gives the bytes as they are.\n"
    "See docs/gateway.md.\n";

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "mxc-gateway: ");
    fprintf(stderr, fmt, arg ? arg : "");
    fprintf(stderr, "\n%s", USAGE);
    return 2;
}

/* ---- the client --------------------------------------------------------- */

#define ANSWER_MAX (32u << 20) /* a JSON answer; a log is streamed, never held */

/* What the client prints of the daemon's answers: to a terminal through
 * the engine's filter (termfilter.h: nothing that acts on the person's
 * machine rather than the screen — clipboard, title, queries whose replies
 * the terminal would type), unless --raw; elsewhere byte for byte. */
typedef struct {
    FILE *f;
    bool filter;
    mxc_termfilter tf;
    unsigned char out[(16u << 10) + MXC_TERMFILTER_SEQ_MAX];
} printer;

static printer *printer_new(FILE *f, bool raw)
{
    printer *p = calloc(1, sizeof *p);
    if (p) {
        p->f = f;
        p->filter = !raw && isatty(fileno(f));
        mxc_termfilter_init(&p->tf);
    }
    return p;
}

static bool print_bytes(printer *p, const char *buf, size_t n)
{
    if (!p->filter)
        return fwrite(buf, 1, n, p->f) == n;
    while (n) {
        size_t k = n < (16u << 10) ? n : (16u << 10);
        size_t m = mxc_termfilter_run(&p->tf, (const unsigned char *)buf, k, p->out);
        if (fwrite(p->out, 1, m, p->f) != m)
            return false;
        buf += k, n -= k;
    }
    return true;
}

/* One text said to f (filtered as above), then a newline when nl. */
static void print_text(FILE *f, const char *text, bool nl)
{
    printer *p = printer_new(f, false);
    if (!p)
        return;
    print_bytes(p, text, strlen(text));
    if (nl)
        fputc('\n', f);
    free(p);
}

/* The socket is ours only when what answers is: once connected, and
 * before curl sends a byte, its peer's uid is checked (SO_PEERCRED: ours or
 * root) — a socket another local user bound first learns nothing. */
typedef struct {
    curl_socket_t fd; /* the connection's socket, made here (curl connects it) */
    bool refused;
    uid_t peer;
} conn;

static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose;
    conn *c = ud;
    c->fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    return c->fd < 0 ? CURL_SOCKET_BAD : c->fd;
}

static int peer_checked(void *ud, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
    (void)primary_ip, (void)local_ip, (void)primary_port, (void)local_port;
    conn *c = ud;
    struct ucred cr = {.uid = (uid_t)-1};
    socklen_t len = sizeof cr;
    if (c->fd < 0 || getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
        (cr.uid != geteuid() && cr.uid != 0)) {
        c->refused = true;
        c->peer = cr.uid;
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}

typedef struct {
    CURL *c;
    long status;
    printer *stream; /* a 200 answer's body goes here as it comes (logs) */
    FILE *mem;       /* else (and any error's body) here, at most ANSWER_MAX */
    size_t held;
} sink;

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = sz * n;
    if (!s->status)
        curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &s->status);
    if (s->stream && s->status == 200)
        return print_bytes(s->stream, p, len) ? len : 0;
    if (s->held + len > ANSWER_MAX)
        return 0; /* larger than any answer of ours: abandoned */
    s->held += len;
    return fwrite(p, 1, len, s->mem);
}

/* One request to the daemon; the HTTP status (0: no daemon; -1: refused,
 * said on stderr) and, unless streamed, the body. */
static long call_to(const char *sock, const char *method, const char *path, const char *body, char **resp,
                    printer *stream)
{
    CURL *c = curl_easy_init();
    char *buf = NULL;
    size_t len = 0;
    sink sk = {.c = c, .stream = stream, .mem = open_memstream(&buf, &len)};
    conn cn = {.fd = CURL_SOCKET_BAD};
    char url[300];
    snprintf(url, sizeof url, "http://mxc-gateway%s", path);
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &cn);
    curl_easy_setopt(c, CURLOPT_PREREQFUNCTION, peer_checked);
    curl_easy_setopt(c, CURLOPT_PREREQDATA, &cn);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sk);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    struct curl_slist *h = NULL;
    if (body) {
        h = curl_slist_append(h, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    long status = 0;
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK && status > 0 && !cn.refused) {
        fprintf(stderr, "mxc-gateway: the gateway's answer was cut short: %s\n", curl_easy_strerror(rc));
        status = -1;
    }
    if (cn.refused) {
        fprintf(stderr, "mxc-gateway: %s is answered by uid %u, neither you nor root: nothing was sent to it (another "
                "user may have bound it first; use a socket in a directory only you can write: --socket, "
                "MXC_GATEWAY_SOCKET or XDG_RUNTIME_DIR)\n", sock, (unsigned)cn.peer);
        status = -1;
    }
    fclose(sk.mem);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    *resp = buf;
    return status;
}

static long call(const char *sock, const char *method, const char *path, const char *body, char **resp)
{
    return call_to(sock, method, path, body, resp, NULL);
}

/* A failed answer as one line on stderr; exit status 1. */
static int said(long status, const char *resp, const char *sock)
{
    if (status < 0)
        return 1;
    if (status == 0) {
        fprintf(stderr, "mxc-gateway: no gateway answers on %s (start one with mxc-gateway serve)\n", sock);
        return 1;
    }
    json_t *j = json_loads(resp ? resp : "", 0, NULL);
    const char *msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
    char head[64];
    snprintf(head, sizeof head, " (HTTP %ld)", status);
    fputs("mxc-gateway: ", stderr);
    print_text(stderr, msg ? msg : resp ? resp : "", false);
    fprintf(stderr, "%s\n", head);
    json_decref(j);
    return 1;
}

static json_t *load_policy(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "mxc-gateway: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    const char *dot = strrchr(path, '.');
    mxc_error e = {0};
    json_t *doc = mxc_doc_load(f, !(dot && !strcmp(dot, ".json")), &e);
    fclose(f);
    if (!doc)
        fprintf(stderr, "mxc-gateway: %s: %s\n", path, e.message);
    mxc_error_clear(&e);
    return doc;
}

static int env_from(const char *path, json_t *env)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "mxc-gateway: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        if (!strchr(line, '=') || line[0] == '=') {
            fprintf(stderr, "mxc-gateway: %s: a line is not K=V\n", path);
            rc = -1;
            break;
        }
        json_array_append_new(env, json_string(line));
    }
    fclose(f);
    return rc;
}

static int create(const char *sock, int argc, char **argv)
{
    const char *name = NULL, *policy = NULL, *dcj = NULL;
    json_t *env = json_array(), *providers = json_array(), *cmd = NULL;
    int rc = 2, i;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--no-tty")) {
            continue; /* the workload never gets a terminal from the driver */
        } else if (has && !strcmp(a, "--name")) {
            name = argv[++i];
        } else if (has && !strcmp(a, "--policy")) {
            policy = argv[++i];
        } else if (has && !strcmp(a, "--driver-config-json")) {
            dcj = argv[++i];
        } else if (has && !strcmp(a, "--env")) {
            if (!strchr(argv[i + 1], '=') || argv[i + 1][0] == '=') {
                rc = usage("--env takes K=V, not %s", argv[i + 1]);
                goto out;
            }
            json_array_append_new(env, json_string(argv[++i]));
        } else if (has && !strcmp(a, "--env-from")) {
            if (env_from(argv[++i], env) < 0)
                goto out;
        } else if (has && !strcmp(a, "--provider")) {
            json_array_append_new(providers, json_string(argv[++i]));
        } else {
            rc = usage("sandbox create: unknown or incomplete flag %s", a);
            goto out;
        }
    }
    if (!name || !policy) {
        rc = usage("sandbox create needs --name and --policy%s", NULL);
        goto out;
    }
    const char *cwd = NULL;
    json_t *drv = NULL;
    if (dcj) {
        drv = json_loads(dcj, JSON_REJECT_DUPLICATES, NULL);
        json_t *mx = json_object_get(drv, "mxc");
        if (!json_is_object(mx)) {
            json_decref(drv);
            rc = usage("--driver-config-json must be {\"mxc\":{\"command\":[...],\"cwd\":\"...\"}}%s", NULL);
            goto out;
        }
        /* its command wins over -- COMMAND (spec 002), argument boundaries kept */
        cmd = json_incref(json_object_get(mx, "command"));
        cwd = json_string_value(json_object_get(mx, "cwd"));
    }
    if (!cmd) {
        cmd = json_array();
        for (; i < argc; i++)
            json_array_append_new(cmd, json_string(argv[i]));
    }
    json_t *pol = load_policy(policy);
    if (!pol) {
        json_decref(drv);
        rc = 1;
        goto out;
    }
    json_t *req = json_pack("{s:s, s:o, s:O, s:O, s:O}", "name", name, "policy", pol, "command", cmd, "env", env,
                            "providers", providers);
    if (cwd)
        json_object_set_new(req, "cwd", json_string(cwd));
    json_decref(drv);
    char *body = json_dumps(req, JSON_COMPACT), *resp = NULL;
    json_decref(req);
    long st = call(sock, "POST", "/v1/sandboxes", body, &resp);
    free(body);
    if (st == 201) {
        print_text(stdout, resp ? resp : "", true);
        rc = 0;
    } else {
        rc = said(st, resp, sock);
    }
    free(resp);
out:
    json_decref(env);
    json_decref(providers);
    json_decref(cmd);
    return rc;
}

static int sandbox(const char *sock, int argc, char **argv)
{
    if (argc < 1)
        return usage("sandbox needs create, list, get, logs or delete%s", NULL);
    const char *sub = argv[0];
    if (!strcmp(sub, "create"))
        return create(sock, argc - 1, argv + 1);
    char path[200], *resp = NULL;
    long st;
    if (!strcmp(sub, "list")) {
        bool js = argc > 1 && !strcmp(argv[1], "--json");
        if (argc > (js ? 2 : 1))
            return usage("sandbox list takes only --json%s", NULL);
        st = call(sock, "GET", "/v1/sandboxes", NULL, &resp);
        if (st != 200) {
            int r = said(st, resp, sock);
            free(resp);
            return r;
        }
        json_t *j = json_loads(resp, 0, NULL);
        json_t *arr = json_object_get(j, "sandboxes");
        if (js) {
            char *s = json_dumps(arr, JSON_INDENT(2));
            print_text(stdout, s ? s : "[]", true);
            free(s);
        } else {
            printf("%-24s %-12s %-18s %s\n", "NAME", "STATUS", "BACKEND", "EXIT");
            size_t k;
            json_t *r;
            json_array_foreach(arr, k, r) {
                json_t *code = json_object_get(r, "exitCode");
                char ex[16] = "-";
                if (code)
                    snprintf(ex, sizeof ex, "%lld", (long long)json_integer_value(code));
                printf("%-24s %-12s %-18s %s\n", json_string_value(json_object_get(r, "name")),
                       json_string_value(json_object_get(r, "status")), json_string_value(json_object_get(r, "backend")),
                       ex);
            }
        }
        json_decref(j);
        free(resp);
        return 0;
    }
    bool raw = argc == 3 && !strcmp(sub, "logs") && !strcmp(argv[1], "--raw");
    if (raw)
        argv++, argc--;
    if (argc != 2 || (strcmp(sub, "get") && strcmp(sub, "logs") && strcmp(sub, "delete")))
        return usage("sandbox %s: unknown, or NAME missing", sub);
    if (!gw_name_ok(argv[1]))
        return usage("%s is not a sandbox name", argv[1]);
    snprintf(path, sizeof path, "/v1/sandboxes/%s%s", argv[1], !strcmp(sub, "logs") ? "/logs" : "");
    int rc = 0;
    if (!strcmp(sub, "logs")) { /* streamed: the client holds one block, whatever the log's size */
        printer *out = printer_new(stdout, raw);
        st = out ? call_to(sock, "GET", path, NULL, &resp, out) : 0;
        free(out);
        if (fflush(stdout) != 0 && st == 200)
            rc = 1;
    } else {
        st = call(sock, !strcmp(sub, "delete") ? "DELETE" : "GET", path, NULL, &resp);
    }
    if (st != 200)
        rc = said(st, resp, sock);
    else if (!strcmp(sub, "get"))
        print_text(stdout, resp ? resp : "{}", true);
    free(resp);
    return rc;
}

/* ---- probe -------------------------------------------------------------- */

/* A command's first line of output and its status. */
static int first_line(const char *exe, const char *const *args, const char *input, char *out, size_t outsz)
{
    int in[2], o[2];
    if (pipe(in) < 0 || pipe(o) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0), dup2(o[1], 1), dup2(o[1], 2);
        close(in[0]), close(in[1]), close(o[0]), close(o[1]);
        execv(exe, (char *const *)args);
        _exit(127);
    }
    close(in[0]), close(o[1]);
    if (input && write(in[1], input, strlen(input)) < 0)
        (void)0;
    close(in[1]);
    char buf[65536];
    size_t n = 0;
    ssize_t r;
    while ((r = read(o[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    close(o[0]);
    buf[n] = '\0';
    snprintf(out, outsz, "%.*s", (int)strcspn(buf, "\n"), buf);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int probe(int argc, char **argv)
{
    const char *cfgpath = argc == 2 && !strcmp(argv[0], "--config") ? argv[1] : NULL;
    if (!cfgpath)
        return usage("probe --config gateway.toml%s", NULL);
    mxc_gw_config cfg;
    mxc_error e = {0};
    json_t *rep = json_object(), *verdicts = json_object();
    bool cfg_ok = mxc_gw_config_load(cfgpath, &cfg, &e) == 0;
    json_object_set_new(rep, "config", cfg_ok ? json_string("ok") : json_string(e.message));
    if (cfg_ok) {
        json_object_set_new(rep, "execPath", json_string(cfg.exec_path));
        bool exe = access(cfg.exec_path, X_OK) == 0;
        json_object_set_new(rep, "executable", json_boolean(exe));
        char line[4096] = "";
        if (exe) {
            const char *va[] = {"mxc-exec", "--version", NULL};
            first_line(cfg.exec_path, va, NULL, line, sizeof line);
            json_object_set_new(rep, "version", json_string(line));
            const char *pa[] = {"mxc-exec", "--probe", NULL};
            first_line(cfg.exec_path, pa, NULL, line, sizeof line);
            json_t *pj = json_loads(line, 0, NULL);
            json_object_set_new(rep, "runtime", pj ? json_incref(json_object_get(pj, "result")) : json_null());
            json_decref(pj);
            const char *da[] = {"mxc-exec", "--dry-run", "--experimental", "--config", "-", NULL};
            static const struct {
                const char *backend, *req;
            } TRIALS[] = {{"process", "{\"process\":{\"commandLine\":\"true\"}}"},
                          {"isolation_session", "{\"containment\":\"isolation_session\",\"phase\":\"provision\"}"}};
            for (size_t k = 0; k < 2; k++) {
                int st = first_line(cfg.exec_path, da, TRIALS[k].req, line, sizeof line);
                json_object_set_new(verdicts, TRIALS[k].backend, json_string(st == 0 ? "PASS" : "SKIP"));
            }
        }
        json_object_set_new(verdicts, "configured", json_string(exe ? "PASS" : "FAIL"));
    }
    int ka = gw_kernel_audit_enabled();
    json_object_set_new(rep, "kernelAudit", ka < 0 ? json_string("unknown") : json_boolean(ka));
    /* filesystem denials in the OCSF log: not collected (audit.h says why) */
    json_object_set_new(verdicts, "filesystemDenialAudit", json_string("SKIP"));
    json_object_set_new(rep, "verdicts", verdicts);
    char *s = json_dumps(rep, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("%s\n", s ? s : "{}");
    free(s);
    bool ok = cfg_ok && json_is_true(json_object_get(rep, "executable"));
    json_decref(rep);
    if (cfg_ok)
        mxc_gw_config_free(&cfg);
    return ok ? 0 : 1;
}

/* ---- serve -------------------------------------------------------------- */

static bool env_on(const char *k)
{
    const char *v = getenv(k);
    return v && !strcmp(v, "1");
}

static int serve(const char *sock, int argc, char **argv)
{
    const char *cfgpath = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            cfgpath = argv[++i];
        else if (!strcmp(argv[i], "--socket") && i + 1 < argc)
            sock = argv[++i];
        else
            return usage("serve: unknown or incomplete flag %s", argv[i]);
    }
    if (!cfgpath)
        return usage("serve needs --config gateway.toml%s", NULL);
    static mxc_gw_config cfg;
    mxc_error e = {0};
    /* everything that can refuse does, before any socket or sandbox exists */
    if (mxc_gw_config_load(cfgpath, &cfg, &e) < 0) {
        fprintf(stderr, "mxc-gateway: %s\n", e.message);
        return 1;
    }
    int mock = env_on("OPENSHELL_MXC_MOCK_WXC") || env_on("MXC_GATEWAY_MOCK_EXEC") || env_on("MXC_GATEWAY_MOCK")
                   ? (env_on("MXC_GATEWAY_MOCK_HOLD") ? GW_MOCK_HOLD : GW_MOCK_EXIT)
                   : GW_MOCK_OFF;
    if (!mock && access(cfg.exec_path, X_OK) < 0) {
        fprintf(stderr, "mxc-gateway: mxc_exec_path %s is not an executable file: %s\n", cfg.exec_path, strerror(errno));
        return 1;
    }
    if (gw_audit_init(&e) < 0) {
        fprintf(stderr, "mxc-gateway: %s\n", e.message);
        return 1;
    }
    if (gw_table_open(&e) < 0) {
        fprintf(stderr, "mxc-gateway: %s\n", e.message);
        return 1;
    }
    /* systemd's socket, when it started us: its path is the gateway's socket (the driver refuses grants of it) */
    static char activated_path[sizeof ((struct sockaddr_un *)0)->sun_path + 1];
    int activated = gw_socket_activated(activated_path, sizeof activated_path, &e);
    if (activated < 0) {
        fprintf(stderr, "mxc-gateway: %s\n", e.message);
        return 1;
    }
    if (activated)
        sock = activated_path;
    gw_log_init();
    gw_driver_init(&cfg, mock, sock);
    gw_reconcile();
    if (gw_audit_start(&e) < 0 || gw_serve(sock, activated, &e) < 0) {
        fprintf(stderr, "mxc-gateway: %s\n", e.message);
        gw_audit_close();
        return 1;
    }
    gw_audit_close();
    return 0;
}

int main(int argc, char **argv)
{
    mxc_net_install(); /* the network layer under the engine (src/net/iface/net.h) */
    char sock[600] = "";
    mxc_error e = {0};
    int i = 1;
    if (argc > 2 && !strcmp(argv[1], "--socket")) {
        snprintf(sock, sizeof sock, "%s", argv[2]);
        i = 3;
    }
    if (i >= argc)
        return usage("a command is needed%s", NULL);
    const char *cmd = argv[i];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return fputs(USAGE, stdout), 0;
    bool serving = !strcmp(cmd, "serve");
    if (!sock[0] && (serving || !strcmp(cmd, "sandbox")) &&
        gw_default_socket(serving, sock, sizeof sock, &e) < 0) {
        fprintf(stderr, "mxc-gateway: %s\n", e.message);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc;
    if (serving)
        rc = serve(sock, argc - i - 1, argv + i + 1);
    else if (!strcmp(cmd, "sandbox"))
        rc = sandbox(sock, argc - i - 1, argv + i + 1);
    else if (!strcmp(cmd, "probe"))
        rc = probe(argc - i - 1, argv + i + 1);
    else
        rc = usage("unknown command %s", cmd);
    curl_global_cleanup();
    return rc;
}
