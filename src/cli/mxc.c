/* mxc — the command for people: run, sessions, list, shell.
 * Owns: subcommands and their flags, turning them into exactly one wire
 * request each (--print-request shows it instead of running it), telling
 * addresses apart (a name, an agent name, a sandboxId), and saying errors
 * in words (the envelope's message and remediation on one line; --json
 * prints the envelope).  No policy logic: every rule is the library's, the
 * same one mxc-exec and the SDKs reach.  Exit status: the workload's for
 * run/exec/shell, 0/1 for the rest, 2 for a usage error. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "front.h"
#include "mxc.h"
#include "net.h"
#include "yamljson.h"

static const char *prog_sub = "mxc";
static const char *sub_usage; /* the subcommand's own lines (--help, usage errors) */
static bool opt_json, opt_print;

static const char USAGE[] =
    "usage: mxc run [POLICY] [PROCESS] [--print-request] [--json] (-- CMD [ARG...] | -c SHELL-TEXT)\n"
    "       mxc create [--name NAME] [POLICY]      provision a session; prints its id\n"
    "       mxc start|stop|rm NAME|ID\n"
    "       mxc exec [PROCESS] NAME|ID (-- CMD [ARG...] | -c SHELL-TEXT)\n"
    "       mxc shell [--env K=V]... NAME|ID        an interactive shell on a terminal\n"
    "       mxc ls [--json]   mxc inspect NAME|ID   mxc gc [--json]\n"
    "\n"
    "POLICY:  --rw PATH  --ro PATH  --deny PATH  (each repeatable)\n"
    "         --net block|allow|allow-local  --allow-host HOST  --block-host HOST  --proxy URL\n"
    "         --policy FILE (a JSON or YAML request fragment; flags add to it)\n"
    "PROCESS: --env K=V  --cwd DIR  --timeout DURATION (30s, 500ms, 2m)\n"
    "See mxc(1).\n";

#define POLICY_HELP                                                                                    \
    "  --rw PATH, --ro PATH, --deny PATH   read-write, read-only, denied (repeatable)\n"                   \
    "  --net block|allow|allow-local       the network (block: loopback only, the default)\n"             \
    "  --allow-host HOST, --block-host HOST  egress by name through mxc-proxy (repeatable)\n"             \
    "  --proxy URL                         one proxy endpoint as the only way out\n"                       \
    "  --policy FILE                       a JSON or YAML request fragment; flags add to it\n"
#define PROCESS_HELP                                                                                   \
    "  --env K=V                           an environment variable (repeatable)\n"                        \
    "  --cwd DIR                           the working directory\n"                                       \
    "  --timeout DURATION                  30s, 500ms, 2m: then TERM, then KILL\n"

static const struct {
    const char *name, *usage;
} SUBS[] = {
    {"run", "usage: mxc run [POLICY] [PROCESS] [--print-request] [--json] (-- CMD [ARG...] | -c SHELL-TEXT)\n"
            "A one-shot sandbox; the command's exit status is mxc's.\n" POLICY_HELP PROCESS_HELP},
    {"create", "usage: mxc create [--name NAME] [POLICY] [--print-request] [--json]\n"
               "Provisions a session and prints its sandbox id.\n" POLICY_HELP},
    {"start", "usage: mxc start NAME|ID [--json]\n"},
    {"stop", "usage: mxc stop NAME|ID [--json]\n"},
    {"rm", "usage: mxc rm NAME|ID [--json]\nDeprovisions the sandbox (stopping it first) and forgets its name.\n"},
    {"exec", "usage: mxc exec [PROCESS] [--json] NAME|ID (-- CMD [ARG...] | -c SHELL-TEXT)\n" PROCESS_HELP},
    {"shell", "usage: mxc shell [--env K=V]... NAME|ID\nAn interactive shell in the session, on a terminal.\n"},
    {"ls", "usage: mxc ls [--json]\nEvery sandbox of this host's state root.\n"},
    {"inspect", "usage: mxc inspect NAME|ID\nThe sandbox's policy and state, as JSON.\n"},
    {"gc", "usage: mxc gc [--json]\nReclaims what crashed sandboxes left.\n"},
};

/* ---- saying things ---------------------------------------------------- */

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog_sub);
    fprintf(stderr, fmt, arg ? arg : "");
    fprintf(stderr, "\n%s", sub_usage ? sub_usage : USAGE);
    return 2;
}

/* An error envelope (text) as one readable line, or as it is (--json). */
static int say_error(const char *env_text)
{
    if (!env_text) {
        fprintf(stderr, "%s: out of memory\n", prog_sub);
        return 1;
    }
    if (opt_json) {
        printf("%s\n", env_text);
        return 1;
    }
    json_t *env = json_loads(env_text, 0, NULL);
    json_t *er = json_object_get(env, "error");
    const char *code = json_string_value(json_object_get(er, "code"));
    const char *msg = json_string_value(json_object_get(er, "message"));
    const char *rem = json_string_value(json_object_get(er, "remediation"));
    if (code)
        fprintf(stderr, "%s: %s [%s]\n", prog_sub, msg ? msg : "", code);
    else
        fprintf(stderr, "%s: %s\n", prog_sub, env_text);
    if (rem && *rem)
        fprintf(stderr, "%s: hint: %s\n", prog_sub, rem);
    json_decref(env);
    return 1;
}

static int help(void)
{
    fputs(sub_usage ? sub_usage : USAGE, stdout);
    return 0;
}

/* ---- flags into a request ---------------------------------------------- */

typedef struct {
    json_t *req;      /* the request being built */
    bool policy_ok;   /* POLICY flags accepted here */
    bool process_ok;  /* PROCESS flags accepted here */
    bool name_ok;     /* --name accepted here (create) */
    const char *name; /* create --name */
    const char *shell_text;
} build;

static json_t *section(json_t *req, const char *key)
{
    json_t *s = json_object_get(req, key);
    if (!json_is_object(s)) {
        s = json_object();
        json_object_set_new(req, key, s);
    }
    return s;
}

static void push(json_t *req, const char *sec, const char *key, const char *value)
{
    json_t *s = section(req, sec), *a = json_object_get(s, key);
    if (!json_is_array(a)) {
        a = json_array();
        json_object_set_new(s, key, a);
    }
    json_array_append_new(a, json_string(value));
}

/* "30s", "500ms", "2m", "1h", or plain seconds -> milliseconds (0: bad). */
static unsigned long long duration_ms(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v <= 0)
        return 0;
    double mult = !*end || !strcmp(end, "s") ? 1000 : !strcmp(end, "ms") ? 1 : !strcmp(end, "m") ? 60000
                : !strcmp(end, "h") ? 3600000 : -1;
    if (mult < 0 || v * mult > 4294967295.0 || v * mult < 1)
        return 0;
    return (unsigned long long)(v * mult);
}

static int load_policy_file(json_t *req, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "%s: cannot read %s: %s\n", prog_sub, path, strerror(errno));
        return 2;
    }
    const char *dot = strrchr(path, '.');
    bool yaml = dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"));
    mxc_error e = {0};
    json_t *doc = mxc_doc_load(f, yaml, &e);
    fclose(f);
    if (!json_is_object(doc)) {
        fprintf(stderr, "%s: %s: %s\n", prog_sub, path, e.code != MXC_E_NONE ? e.message : "not an object");
        json_decref(doc);
        mxc_error_clear(&e);
        return 2;
    }
    mxc_error_clear(&e);
    json_object_update_recursive(req, doc);
    json_decref(doc);
    return 0;
}

static const struct option LONGOPTS[] = {
    {"rw", required_argument, 0, 'w'},         {"ro", required_argument, 0, 'r'},
    {"deny", required_argument, 0, 'd'},       {"net", required_argument, 0, 'n'},
    {"allow-host", required_argument, 0, 'A'}, {"block-host", required_argument, 0, 'B'},
    {"proxy", required_argument, 0, 'P'},      {"policy", required_argument, 0, 'p'},
    {"env", required_argument, 0, 'e'},        {"cwd", required_argument, 0, 'C'},
    {"timeout", required_argument, 0, 't'},    {"name", required_argument, 0, 'N'},
    {"json", no_argument, 0, 'j'},             {"print-request", no_argument, 0, 'R'},
    {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};

/* The flag as the user typed it, from the argv element it began in (el):
 * a long one by its name (without =VALUE), a short one as -C (ch: the
 * option character, or getopt's optopt after an error). */
static const char *flag_typed(const char *el, int ch, char *out, size_t outsz)
{
    if (el && strncmp(el, "--", 2) == 0)
        snprintf(out, outsz, "%.*s", (int)strcspn(el, "="), el);
    else if (ch > 32 && ch < 127)
        snprintf(out, outsz, "-%c", ch);
    else
        snprintf(out, outsz, "%s", el ? el : "?");
    return out;
}

/* The long option a typed --NAME stands for (exact, or the one option it
 * abbreviates), or NULL. */
static const struct option *long_named(const char *typed)
{
    const struct option *hit = NULL;
    size_t n = strlen(typed + 2);
    for (const struct option *o = LONGOPTS; o->name; o++) {
        if (strncmp(o->name, typed + 2, n) != 0)
            continue;
        if (strlen(o->name) == n)
            return o;
        if (hit)
            return NULL; /* ambiguous */
        hit = o;
    }
    return hit;
}

/* Parses argv[1..] (argv[0] is the subcommand); returns optind, or -2
 * (usage, said), -3 (--help). */
static int parse(int argc, char **argv, build *b)
{
    optind = 0; /* glibc: a full restart (parse runs twice for exec: before and after the address) */
    opterr = 0;
    int c;
    char typed[64];
    /* '+': stop at the first operand (the address, or the command after --);
     * ':' a missing value is told apart from an unknown flag */
    for (;;) {
        int at = optind ? optind : 1; /* the element the next flag begins in */
        optopt = 0;
        if ((c = getopt_long(argc, argv, "+:c:h", LONGOPTS, NULL)) == -1)
            break;
        const char *el = at < argc ? argv[at] : NULL;
        if (c == ':') {
            usage("%s needs a value", flag_typed(el, optopt, typed, sizeof typed));
            return -2;
        }
        if (c == '?') {
            flag_typed(el, optopt, typed, sizeof typed);
            const struct option *o = typed[1] == '-' ? long_named(typed) : NULL;
            if (o && o->has_arg == no_argument && strchr(el, '='))
                usage("%s takes no value", typed);
            else if (typed[1] == '-' && !o && strlen(typed) > 2)
                usage("unknown (or ambiguous) flag %s", typed);
            else
                usage("unknown flag %s", typed);
            return -2;
        }
        const char *a = optarg;
        bool pol = strchr("wrdnABPp", c) != NULL, proc = strchr("eCt", c) != NULL;
        if ((pol && !b->policy_ok) || (proc && !b->process_ok) || (c == 'N' && !b->name_ok) ||
            (c == 'c' && !b->process_ok)) {
            usage("%s is not a flag of this subcommand", flag_typed(el, c, typed, sizeof typed));
            return -2;
        }
        switch (c) {
        case 'w': push(b->req, "filesystem", "readwritePaths", a); break;
        case 'r': push(b->req, "filesystem", "readonlyPaths", a); break;
        case 'd': push(b->req, "filesystem", "deniedPaths", a); break;
        case 'A': push(b->req, "network", "allowedHosts", a); break;
        case 'B': push(b->req, "network", "blockedHosts", a); break;
        case 'P': json_object_set_new(section(b->req, "network"), "proxy", json_pack("{s:s}", "url", a)); break;
        case 'n': {
            json_t *net = section(b->req, "network");
            if (!strcmp(a, "block")) {
                json_object_set_new(net, "defaultPolicy", json_string("block"));
            } else if (!strcmp(a, "allow") || !strcmp(a, "allow-local")) {
                json_object_set_new(net, "defaultPolicy", json_string("allow"));
                json_object_set_new(net, "allowLocalNetwork", json_boolean(!strcmp(a, "allow-local")));
            } else {
                usage("--net takes block, allow or allow-local, not %s", a);
                return -2;
            }
            break;
        }
        case 'p':
            if (load_policy_file(b->req, a))
                return -2;
            break;
        case 'e':
            if (!strchr(a, '=') || a[0] == '=') {
                usage("--env takes K=V, not %s", a);
                return -2;
            }
            push(b->req, "process", "env", a);
            break;
        case 'C': json_object_set_new(section(b->req, "process"), "cwd", json_string(a)); break;
        case 't': {
            unsigned long long ms = duration_ms(a);
            if (!ms) {
                usage("--timeout takes a duration such as 30s, 500ms or 2m, not %s", a);
                return -2;
            }
            json_object_set_new(section(b->req, "process"), "timeout", json_integer((json_int_t)ms));
            break;
        }
        case 'N': b->name = a; break;
        case 'c': b->shell_text = a; break;
        case 'j': opt_json = true; break;
        case 'R': opt_print = true; break;
        case 'h': return -3;
        default:
            usage("unknown flag %s", flag_typed(el, c, typed, sizeof typed));
            return -2;
        }
    }
    return optind;
}

/* process.commandLine from `-- CMD ARGS` (exec'd, no shell of ours) or
 * from -c TEXT (a shell, asked for). */
static int command_line(build *b, int argc, char **argv, int first)
{
    if (b->shell_text && first < argc)
        return usage("give either -c SHELL-TEXT or -- CMD ARGS, not both%s", NULL);
    if (b->shell_text) {
        json_object_set_new(section(b->req, "process"), "commandLine", json_string(b->shell_text));
        return 0;
    }
    if (first >= argc) {
        if (json_string_value(json_object_get(json_object_get(b->req, "process"), "commandLine")))
            return 0; /* from --policy */
        return usage("no command: give -- CMD [ARG...] or -c SHELL-TEXT%s", NULL);
    }
    char *text = mxc_command_line((const char *const *)argv + first, (size_t)(argc - first));
    if (!text)
        return say_error(NULL);
    json_object_set_new(section(b->req, "process"), "commandLine", json_string(text));
    mxc_free(text);
    return 0;
}

/* --print-request: the one request this invocation is, instead of running it. */
static bool printed(json_t *req)
{
    if (!opt_print)
        return false;
    char *s = json_dumps(req, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("%s\n", s ? s : "{}");
    free(s);
    return true;
}

/* ---- addresses --------------------------------------------------------- */

/* NAME, agent name (mxc-...) or sandboxId -> sandboxId (malloc'd), or NULL (said). */
static char *resolve(const char *addr)
{
    if (!strncmp(addr, MXC_ISO_PREFIX ":", sizeof MXC_ISO_PREFIX))
        return strdup(addr);
    if (mxc_agent_name_is_safe(addr)) {
        mxc_sandbox_id id = {0};
        snprintf(id.agent_name, sizeof id.agent_name, "%s", addr);
        char out[MXC_SANDBOX_ID_MAX];
        mxc_error e = {0};
        int rc = mxc_sandbox_id_encode(&id, out, sizeof out, &e);
        mxc_error_clear(&e);
        return rc == 0 ? strdup(out) : NULL;
    }
    char *id = mxc_name_lookup(addr);
    if (!id)
        fprintf(stderr, "%s: no sandbox named %s here (mxc ls lists them)\n", prog_sub, addr);
    return id;
}

/* ---- subcommands ------------------------------------------------------- */

static int run_request(json_t *req, bool experimental)
{
    if (printed(req))
        return 0;
    char *text = json_dumps(req, JSON_COMPACT);
    if (!text)
        return say_error(NULL);
    char *err = NULL;
    fflush(stdout);
    int st = mxc_run_request_report(text, strlen(text), (experimental ? MXC_RUN_EXPERIMENTAL : 0) | MXC_RUN_EXITING, 0,
                                    1, 2, &err);
    free(text);
    if (err) {
        json_t *env = json_loads(err, 0, NULL);
        bool timed_out = json_is_true(json_object_get(json_object_get(json_object_get(env, "error"), "details"),
                                                      "timedOut"));
        json_decref(env);
        int r = say_error(err);
        free(err);
        return timed_out ? st : r;
    }
    return st;
}

static int cmd_run(int argc, char **argv)
{
    build b = {.req = json_object(), .policy_ok = true, .process_ok = true};
    int i = parse(argc, argv, &b);
    int rc = i == -3 ? help() : i < 0 ? 2 : command_line(&b, argc, argv, i);
    if (i >= 0 && rc == 0)
        rc = run_request(b.req, false);
    json_decref(b.req);
    return rc;
}

/* One non-exec phase on a sandbox; the result object, or NULL (said). */
static json_t *phase(const char *ph, const char *sid, json_t *req_in)
{
    json_t *req = req_in ? req_in : json_object();
    json_object_set_new(req, "phase", json_string(ph));
    if (sid)
        json_object_set_new(req, "sandboxId", json_string(sid));
    else
        json_object_set_new(req, "containment", json_string("isolation_session"));
    char *text = json_dumps(req, JSON_COMPACT), *resp = NULL;
    json_decref(req);
    int rc = text ? mxc_state_aware(text, &resp) : -1;
    free(text);
    if (rc < 0) {
        say_error(resp);
        mxc_free(resp);
        return NULL;
    }
    json_t *env = json_loads(resp, 0, NULL);
    mxc_free(resp);
    json_t *res = json_incref(json_object_get(env, "result"));
    json_decref(env);
    return res ? res : json_object();
}

static int cmd_create(int argc, char **argv)
{
    build b = {.req = json_object(), .policy_ok = true, .name_ok = true};
    int i = parse(argc, argv, &b);
    if (i == -3 || i < 0) {
        json_decref(b.req);
        return i == -3 ? help() : 2;
    }
    if (i < argc) {
        json_decref(b.req);
        return usage("create takes no operand (%s): flags only", argv[i]);
    }
    char *err = NULL;
    if (b.name && !opt_print && mxc_name_bind(b.name, NULL, &err) < 0) { /* free before anything is made */
        json_decref(b.req);
        int r = say_error(err);
        mxc_free(err);
        return r;
    }
    if (opt_print) {
        json_object_set_new(b.req, "containment", json_string("isolation_session"));
        json_object_set_new(b.req, "phase", json_string("provision"));
        printed(b.req);
        json_decref(b.req);
        return 0;
    }
    json_t *res = phase("provision", NULL, b.req);
    if (!res)
        return 1;
    const char *sid = json_string_value(json_object_get(res, "sandboxId"));
    if (b.name && mxc_name_bind(b.name, sid, &err) < 0) {
        /* the name went to someone else meanwhile: nothing of ours stays */
        json_decref(phase("deprovision", sid, NULL));
        json_decref(res);
        int r = say_error(err);
        mxc_free(err);
        return r;
    }
    if (opt_json) {
        char *s = json_dumps(res, JSON_COMPACT);
        printf("%s\n", s ? s : "{}");
        free(s);
    } else {
        printf("%s\n", sid ? sid : "");
    }
    json_decref(res);
    return 0;
}

/* The prologue of the subcommands that take flags and `want` operands (0,
 * or exactly one NAME|ID): parse, --help, the operand count.  The index of
 * the operand (argc when none), or -1 with *rc the exit status to return. */
static int prologue(const char *sub, int argc, char **argv, int want, int *rc)
{
    build b = {0};
    int i = parse(argc, argv, &b);
    if (i == -3)
        return *rc = help(), -1;
    if (i < 0)
        return *rc = 2, -1;
    if (want == 0 && i < argc) {
        char what[200];
        snprintf(what, sizeof what, "%s takes no operand (%%s)", sub);
        return *rc = usage(what, argv[i]), -1;
    }
    if (want == 1 && i != argc - 1)
        return *rc = usage("%s takes exactly one NAME|ID", sub), -1;
    return i;
}

static int cmd_simple_phase(const char *sub, int argc, char **argv)
{
    int rc, i = prologue(sub, argc, argv, 1, &rc);
    if (i < 0)
        return rc;
    const char *ph = !strcmp(sub, "rm") ? "deprovision" : sub;
    if (opt_print) {
        json_t *r = json_pack("{s:s, s:s}", "phase", ph, "sandboxId", argv[i]);
        printed(r);
        json_decref(r);
        return 0;
    }
    char *sid = resolve(argv[i]);
    if (!sid)
        return 1;
    json_t *res = phase(ph, sid, NULL);
    if (res && !strcmp(sub, "rm") && strcmp(argv[i], sid) != 0)
        mxc_name_unbind(argv[i], sid);
    free(sid);
    if (res && opt_json) {
        char *s = json_dumps(res, JSON_COMPACT);
        printf("%s\n", s ? s : "{}");
        free(s);
    }
    json_decref(res);
    return res ? 0 : 1;
}

static int cmd_exec(const char *sub, int argc, char **argv)
{
    bool shell = !strcmp(sub, "shell");
    build b = {.req = json_object(), .process_ok = true};
    int i = parse(argc, argv, &b);
    int rc = 0;
    if (i == -3 || i < 0) {
        json_decref(b.req);
        return i == -3 ? help() : 2;
    }
    if (i >= argc) {
        json_decref(b.req);
        return usage("%s needs NAME|ID", sub);
    }
    const char *addr = argv[i];
    /* flags may follow the address too (mxc exec web --env K=V -- cmd):
     * parsed with the address as argv[0]; getopt eats the -- */
    int j = parse(argc - i, argv + i, &b);
    if (j < 0) {
        json_decref(b.req);
        return j == -3 ? help() : 2;
    }
    i += j;
    if (shell) {
        if (i < argc || b.shell_text) {
            json_decref(b.req);
            return usage("shell takes no command (%s): use mxc exec", i < argc ? argv[i] : "-c");
        }
        if (!opt_print && (!isatty(0) || !isatty(1) || !isatty(2))) {
            json_decref(b.req);
            fprintf(stderr, "%s: a shell needs a terminal on stdin, stdout and stderr (use mxc exec for a command)\n",
                    prog_sub);
            return 2;
        }
        const char *term = getenv("TERM");
        if (term && *term) {
            char kv[300];
            snprintf(kv, sizeof kv, "TERM=%s", term);
            push(b.req, "process", "env", kv);
        }
        b.shell_text = "if [ -x /bin/bash ]; then exec /bin/bash -i; else exec /bin/sh -i; fi";
    }
    if ((rc = command_line(&b, argc, argv, i)) != 0) {
        json_decref(b.req);
        return rc;
    }
    char *sid = opt_print ? strdup(addr) : resolve(addr);
    if (!sid) {
        json_decref(b.req);
        return 1;
    }
    json_object_set_new(b.req, "phase", json_string("exec"));
    json_object_set_new(b.req, "sandboxId", json_string(sid));
    free(sid);
    rc = run_request(b.req, true);
    json_decref(b.req);
    return rc;
}

static void age_text(long long created, char *out, size_t sz)
{
    long long s = created > 0 ? (long long)time(NULL) - created : -1;
    if (s < 0)
        snprintf(out, sz, "-");
    else if (s < 120)
        snprintf(out, sz, "%llds", s);
    else if (s < 7200)
        snprintf(out, sz, "%lldm", s / 60);
    else if (s < 172800)
        snprintf(out, sz, "%lldh", s / 3600);
    else
        snprintf(out, sz, "%lldd", s / 86400);
}

static void limits_text(json_t *lim, char *out, size_t sz)
{
    json_t *p = json_object_get(lim, "pids"), *m = json_object_get(lim, "memoryBytes");
    if (!p && !m) { /* not running, or no cgroup (rootless: rlimits, per process) */
        snprintf(out, sz, "-");
        return;
    }
    char ps[32] = "-", ms[32] = "-";
    if (p)
        snprintf(ps, sizeof ps, json_integer_value(p) ? "%lld" : "max", (long long)json_integer_value(p));
    if (m && json_integer_value(m) && json_integer_value(m) < (1ll << 50))
        snprintf(ms, sizeof ms, "%lldM", (long long)(json_integer_value(m) >> 20));
    else if (m)
        snprintf(ms, sizeof ms, "max");
    snprintf(out, sz, "pids=%s mem=%s", ps, ms);
}

static int cmd_ls(int argc, char **argv)
{
    int rc, i = prologue("ls", argc, argv, 0, &rc);
    if (i < 0)
        return rc;
    char *text = mxc_list_json();
    json_t *env = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_object_get(env, "result")) {
        json_decref(env);
        int r = say_error(text);
        mxc_free(text);
        return r;
    }
    if (opt_json) {
        json_t *arr = json_object_get(json_object_get(env, "result"), "sandboxes");
        char *s = json_dumps(arr, JSON_INDENT(2));
        printf("%s\n", s ? s : "[]");
        free(s);
    } else {
        printf("%-16s %-17s %-11s %-10s %-5s %-22s %s\n", "NAME", "ID", "STATE", "UID", "AGE", "LIMITS", "WORKSPACE");
        size_t k;
        json_t *s;
        json_array_foreach(json_object_get(json_object_get(env, "result"), "sandboxes"), k, s) {
            char age[32], lim[64], uid[24] = "-";
            age_text(json_integer_value(json_object_get(s, "created")), age, sizeof age);
            limits_text(json_object_get(s, "limits"), lim, sizeof lim);
            if (json_is_integer(json_object_get(s, "uid")))
                snprintf(uid, sizeof uid, "%lld%s", (long long)json_integer_value(json_object_get(s, "uid")),
                         json_is_true(json_object_get(s, "rootless")) ? "*" : "");
            const char *nm = json_string_value(json_object_get(s, "name"));
            const char *ws = json_string_value(json_object_get(s, "workspace"));
            const char *an = json_string_value(json_object_get(s, "agentName"));
            char shot[32];
            if (!an) { /* a one-shot: its caller's pid */
                snprintf(shot, sizeof shot, "one-shot:%lld", (long long)json_integer_value(json_object_get(s, "pid")));
                an = shot;
            }
            printf("%-16s %-17s %-11s %-10s %-5s %-22s %s\n", nm ? nm : "-", an,
                   json_string_value(json_object_get(s, "state")), uid, age, lim, ws ? ws : "-");
        }
    }
    json_decref(env);
    mxc_free(text);
    return 0;
}

static int cmd_inspect(int argc, char **argv)
{
    int rc, i = prologue("inspect", argc, argv, 1, &rc);
    if (i < 0)
        return rc;
    char *sid = resolve(argv[i]);
    if (!sid)
        return 1;
    char *text = mxc_inspect_json(sid);
    free(sid);
    json_t *env = text ? json_loads(text, 0, NULL) : NULL;
    json_t *res = json_object_get(env, "result");
    rc = 0;
    if (res) {
        char *s = json_dumps(res, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("%s\n", s ? s : "{}");
        free(s);
    } else {
        rc = say_error(text);
    }
    json_decref(env);
    mxc_free(text);
    return rc;
}

static int cmd_gc(int argc, char **argv)
{
    int rc, i = prologue("gc", argc, argv, 0, &rc);
    if (i < 0)
        return rc;
    char *text = mxc_gc_json();
    json_t *env = text ? json_loads(text, 0, NULL) : NULL;
    json_t *swept = json_object_get(json_object_get(env, "result"), "swept");
    rc = 0;
    if (!swept) {
        rc = say_error(text);
    } else if (opt_json) {
        printf("%s\n", text);
    } else {
        const char *k;
        json_t *v;
        printf("swept:");
        json_object_foreach(swept, k, v) printf(" %s=%lld", k, (long long)json_integer_value(v));
        printf("\n");
    }
    json_decref(env);
    mxc_free(text);
    return rc;
}

int main(int argc, char **argv)
{
    mxc_net_install(); /* the network layer under the engine (src/net/iface/net.h) */
    signal(SIGPIPE, SIG_IGN); /* the workload gets the default back (exec.c) */
    if (argc < 2)
        return usage("a subcommand is needed%s", NULL);
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help"))
        return help();
    if (!strcmp(sub, "--version"))
        return printf("mxc %s\n", MXC_VERSION), 0;
    static char label[40];
    snprintf(label, sizeof label, "mxc %.20s", sub);
    prog_sub = label;
    for (size_t k = 0; k < sizeof SUBS / sizeof SUBS[0]; k++)
        if (!strcmp(SUBS[k].name, sub))
            sub_usage = SUBS[k].usage;
    argc--, argv++;
    if (!strcmp(sub, "run"))
        return cmd_run(argc, argv);
    if (!strcmp(sub, "create"))
        return cmd_create(argc, argv);
    if (!strcmp(sub, "start") || !strcmp(sub, "stop") || !strcmp(sub, "rm"))
        return cmd_simple_phase(sub, argc, argv);
    if (!strcmp(sub, "exec") || !strcmp(sub, "shell"))
        return cmd_exec(sub, argc, argv);
    if (!strcmp(sub, "ls"))
        return cmd_ls(argc, argv);
    if (!strcmp(sub, "inspect"))
        return cmd_inspect(argc, argv);
    if (!strcmp(sub, "gc"))
        return cmd_gc(argc, argv);
    prog_sub = "mxc";
    return usage("unknown subcommand %s", sub);
}
