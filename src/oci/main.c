/* main.c — mxc-oci, runc's command line over src/oci/ (docs/oci.md).
 * Owns: the global flags (--root, --log, --log-format, --debug,
 * --systemd-cgroup), the command table and its dispatch (each command in
 * its own src/oci/cmd_*.c, cmds.h), the flag parser the commands share,
 * printing an error one way, and the log (runc's line formats).  Runs as
 * root; never installed set-uid. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "cgroup.h"
#include "cmds.h"
#include "applied.h"
#include "lifecycle.h"
#include "rootless.h"
#include "selfclone.h"
#include "store.h"

static const char *log_path, *log_format = "text";

/* A line of the log (--log FILE; a debug line goes to stderr without one), in runc's formats. */
static void log_line(FILE *f, const char *level, const char *msg)
{
    char now[40];
    oci_now(now, sizeof now);
    json_t *j = json_pack("{s:s, s:s, s:s}", "level", level, "msg", msg, "time", now);
    if (!strcmp(log_format, "json")) {
        char *t = json_dumps(j, JSON_COMPACT);
        fprintf(f, "%s\n", t ? t : "");
        free(t);
    } else {
        char *q = json_dumps(json_object_get(j, "msg"), JSON_ENCODE_ANY); /* quoted and escaped */
        fprintf(f, "time=\"%s\" level=%s msg=%s\n", now, level, q ? q : "\"\"");
        free(q);
    }
    json_decref(j);
}

static FILE *log_file; /* --log, opened once by log_open */

/* --log FILE opened for appending: its directory as named, the file itself beneath it with
 * O_NOFOLLOW (a symlink planted where the log goes, e.g. in a bundle, would have a root-owned file
 * made or appended at its target), regular, one link, never a terminal.  NULL with e set. */
static FILE *log_open(const char *path, mxc_error *e)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1, slash ? path : ".");
    int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int fd = d < 0 || !*name ? -1 : openat(d, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                                           0600);
    int err = d < 0 ? errno : !*name ? EISDIR : fd < 0 ? errno : 0;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1))
        err = -1;
    if (d >= 0)
        close(d);
    FILE *f = err ? NULL : fdopen(fd, "a");
    if (!f) {
        const char *what = err == ELOOP ? "a symbolic link: refused (the log is opened with no link at its name)"
                           : err == -1  ? "not a regular file with one link: refused"
                                        : strerror(err ? err : errno);
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "--log %s: %s", path, what);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

static void log_error(const char *msg)
{
    fprintf(stderr, "mxc-oci: %s\n", msg);
    if (log_file)
        log_line(log_file, "error", msg);
}

/* an info line of the lifecycle (applied.h: the policy applied at create), to the --log only */
static void log_info(const char *msg)
{
    log_line(log_file, "info", msg);
}

/* --debug: what mxc-oci is doing, for whoever drives it */
static bool debug;
static void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_debug(const char *fmt, ...)
{
    if (!debug)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line(log_file ? log_file : stderr, "debug", msg);
}

/* An error of main's own (the global flags, the command's name): printed as a command's is. */
static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_error(msg);
    return 1;
}

/* Flags as urfave/cli (runc's parser) takes them: -x, --name, -name,
 * --name=V, --name V; they end at the first argument or "--".  Returns
 * the index of the first argument, or -1 with e set. */
int oci_parse_flags(int argc, char **argv, int i, const oci_flag *fl, size_t n, const char *cmd, mxc_error *e)
{
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--"))
            return i + 1;
        const char *a = argv[i] + (argv[i][1] == '-' ? 2 : 1);
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const oci_flag *f = NULL;
        for (size_t k = 0; k < n && !f; k++)
            if ((strlen(fl[k].name) == len && !strncmp(fl[k].name, a, len)) ||
                (fl[k].shortname && len == 1 && a[0] == fl[k].shortname))
                f = &fl[k];
        if (!f)
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s: flag provided but not defined: %s", cmd, argv[i]);
        if (f->value) {
            const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s: flag needs an argument: %s", cmd, argv[i]);
            if (f->list)
                f->list[(*f->nlist)++] = v;
            else
                *f->str = v;
        } else if (eq) {
            *f->set = !strcmp(eq + 1, "true") || !strcmp(eq + 1, "1");
        } else {
            *f->set = true;
        }
    }
    return i;
}

int oci_one_id(const oci_cli *cli, const char **id, mxc_error *e)
{
    if (cli->i >= cli->argc)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s: missing the container id: \"%s\" requires exactly 1 "
                       "argument(s)", cli->name, cli->name);
    *id = cli->argv[cli->i];
    return 0;
}

int oci_cli_flags_id(oci_cli *cli, const oci_flag *fl, size_t n, const char **id, mxc_error *e)
{
    if ((cli->i = oci_parse_flags(cli->argc, cli->argv, cli->i, fl, n, cli->name, e)) < 0)
        return -1;
    return oci_one_id(cli, id, e);
}

int oci_cli_switch_id(oci_cli *cli, const char *name, char shortname, bool *set, const char **id, mxc_error *e)
{
    oci_flag fl = {name, shortname, false, NULL, set, NULL, NULL};
    return oci_cli_flags_id(cli, &fl, 1, id, e);
}

void oci_print_json(json_t *j)
{
    char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", t ? t : "null");
    free(t);
}

int oci_count_of(const char *s)
{
    char *end;
    long n = s ? strtol(s, &end, 10) : 0;
    return !s ? 0 : (*s && !*end && n >= 0 && n <= 1000) ? (int)n : -1;
}

int oci_bad_count(const char *s, mxc_error *e)
{
    return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--preserve-fds %s: not a count of descriptors: a decimal number "
                   "from 0 to 1000 (fds 3 to 3+N-1 are passed on)", s);
}

/* The commands: name, handler, over the store, from a sealed copy, help.  `version` and the
 * global --help are main's own (answered before a command is looked up). */
const oci_cmd oci_cmds[] = {
    {"create", oci_cmd_create, true, true, "create a container from a bundle (its process waits for start)"},
    {"start", oci_cmd_start, true, false, "let a created container's process run"},
    {"state", oci_cmd_state, true, false, "print a container's state"},
    {"kill", oci_cmd_kill, true, false, "send a signal to a container's process (or all of them)"},
    {"delete", oci_cmd_delete, true, false, "delete a stopped container (or any, with --force)"},
    {"run", oci_cmd_run, true, true, "create and start a container, and wait for it unless detached"},
    {"list", oci_cmd_list, true, false, "list the containers"},
    {"exec", oci_cmd_exec, true, true, "run a process of its own in a container"},
    {"ps", oci_cmd_ps, true, false, "list a container's processes"},
    {"pause", oci_cmd_pause, true, false, "freeze a container's processes"},
    {"resume", oci_cmd_pause, true, false, "thaw a paused container's processes"},
    {"update", oci_cmd_update, true, false, "change a container's resource limits"},
    {"events", oci_cmd_events, true, false, "a container's events and statistics"},
    {"features", oci_cmd_features, false, false, "what this runtime supports"},
    {"spec", oci_cmd_spec, false, false, "write a default config.json"},
    {"checkpoint", oci_cmd_later, false, false, "not supported yet"},
    {"restore", oci_cmd_later, false, false, "not supported yet"},
    {NULL, NULL, false, false, NULL},
};

static const oci_cmd *cmd_named(const char *name)
{
    for (const oci_cmd *c = oci_cmds; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: mxc-oci [--root DIR] [--log FILE] [--log-format text|json] [--debug] COMMAND ...\n"
                    "commands: create, start, state, kill, delete, run, list, exec, ps, pause, resume, update, features, spec\n");
    return 1;
}

typedef struct {
    const char *root, *criu, *rootless, *cgroup_manager;
    bool systemd, help, version;
    int cgroup; /* the backend a new container's cgroup is given (cgroup.h) */
} globals;

/* the global flags into *g (and the log's, main's statics): the index of the command, or -1 with e set */
static int global_flags(int argc, char **argv, globals *g, mxc_error *e)
{
    oci_flag global[] = {
        {"root", 0, true, &g->root, NULL, NULL, NULL},
        {"log", 0, true, &log_path, NULL, NULL, NULL},
        {"log-format", 0, true, &log_format, NULL, NULL, NULL},
        {"debug", 0, false, NULL, &debug, NULL, NULL}, {"systemd-cgroup", 0, false, NULL, &g->systemd, NULL, NULL},
        {"help", 'h', false, NULL, &g->help, NULL, NULL},
        {"version", 'v', false, NULL, &g->version, NULL, NULL},
        {"criu", 0, true, &g->criu, NULL, NULL, NULL},
        {"rootless", 0, true, &g->rootless, NULL, NULL, NULL},
        /* crun's: cgroupfs (mxc-oci's own cgroups, the default) or disabled (none; a limit is then refused) */
        {"cgroup-manager", 0, true, &g->cgroup_manager, NULL, NULL, NULL},
    };
    int i = oci_parse_flags(argc, argv, 1, global, sizeof global / sizeof global[0], "mxc-oci", e);
    if (i < 0)
        return -1;
    const char *cm = g->cgroup_manager;
    if (cm && !strcmp(cm, "systemd"))
        g->systemd = true;
    else if (cm && strcmp(cm, "disabled") && strcmp(cm, "cgroupfs"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "unknown cgroup manager %s", cm);
    g->cgroup = cm && !strcmp(cm, "disabled") ? MXC_CGROUP_NONE : OCI_CGROUP_HOST;
    if (strcmp(log_format, "text") && strcmp(log_format, "json"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "unknown log-format %s", log_format);
    if (log_path && !(log_file = log_open(log_path, e)))
        return -1;
    if (log_file)
        oci_applied_logger = log_info;
    return i;
}

/* --preserve-fds names the caller's fds 3..: judged before mxc-oci opens one of its own */
static int preserved_first(int argc, char **argv, int i, mxc_error *e)
{
    for (int k = i; k < argc && argv[k][0] == '-'; k++) {
        const char *v = !strncmp(argv[k], "--preserve-fds=", 15) ? argv[k] + 15
                        : !strcmp(argv[k], "--preserve-fds") && k + 1 < argc ? argv[k + 1] : NULL;
        if (v && oci_count_of(v) < 0)
            return oci_bad_count(v, e);
        if (v && oci_check_preserved(oci_count_of(v), e) < 0)
            return -1;
    }
    return 0;
}

/* A command over the store: as root, --preserve-fds judged, --root opened, then the handler. */
static int run_over_store(const oci_cmd *c, oci_cli *cli, const char *root, mxc_error *e)
{
    char own[PATH_MAX];
    if (!root && oci_rootless()) { /* a non-root caller's default: its runtime directory (rootless.h); with
                                    * --root given, start, kill and delete read no uid_map to ask */
        if (oci_rootless_root(own, sizeof own, e) < 0)
            return -1;
        root = own;
    }
    if (!root)
        root = OCI_ROOT_DEFAULT;
    log_debug("%s: --root %s, %d argument(s)", cli->name, root, cli->argc - cli->i);
    if (preserved_first(cli->argc, cli->argv, cli->i, e) < 0)
        return -1;
    if ((cli->rootfd = oci_store_root(root, e)) < 0)
        return -1;
    int rc = c->run(cli, e);
    close(cli->rootfd);
    return rc;
}

int main(int argc, char **argv)
{
    mxc_error e = {0};
    /* the commands that start processes in a container run from a sealed copy (selfclone.h) */
    for (int k = 1; k < argc; k++) {
        const oci_cmd *c = cmd_named(argv[k]);
        if (c && c->sealed) {
            if (oci_selfclone(argv, &e) < 0)
                return die("%s", e.message);
            break;
        }
    }
    globals g = {.root = NULL};
    int i = global_flags(argc, argv, &g, &e);
    if (i < 0)
        return die("%s", e.message);
    if (g.version || (i < argc && !strcmp(argv[i], "version"))) {
        printf("mxc-oci version 0.1.0\nspec: %s\n", OCI_SPEC_VERSION);
        return 0;
    }
    if (g.help) { /* asked for: on stdout, success (runc's) */
        printf("usage: mxc-oci [--root DIR] [--log FILE] [--log-format text|json] [--debug] COMMAND ...\n"
               "commands: create, start, state, kill, delete, run, exec, ps, list, features, spec\n");
        return 0;
    }
    if (i >= argc)
        return usage();
    oci_cli cli = {.argc = argc, .argv = argv, .i = i + 1, .name = argv[i], .rootfd = -1, .systemd = g.systemd, .cgroup = g.cgroup,
                   .fail_status = 1};
    if (g.rootless && strcmp(g.rootless, "false") && strcmp(g.rootless, "auto") &&
        (strcmp(g.rootless, "true") || !oci_rootless()))
        return die("--rootless %s: mxc-oci is rootless exactly when run by a non-root user (rootless.h)", g.rootless);
    if (g.rootless && !strcmp(g.rootless, "false") && oci_rootless())
        return die("--rootless false: run by a non-root user, mxc-oci is rootless: run it as root");
    const oci_cmd *c = cmd_named(cli.name);
    if (!c)
        return die("No help topic for '%s'", cli.name);
    int rc = c->store ? run_over_store(c, &cli, g.root, &e) : c->run(&cli, &e);
    if (rc < 0) {
        log_error(e.message);
        rc = cli.fail_status;
    }
    mxc_error_clear(&e);
    return rc;
}
