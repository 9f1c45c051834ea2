/* main.c — mxc-oci, runc's command line over src/oci/ (docs/oci.md).
 * Owns: the global flags (--root, --log, --log-format, --debug,
 * --systemd-cgroup), each command's flags and arguments, usage errors,
 * printing, and the log (runc's line formats).  Runs as root; never
 * installed set-uid. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "fdio.h"
#include "lifecycle.h"
#include "store.h"

static const char *log_path, *log_format = "text";

static void log_error(const char *msg)
{
    fprintf(stderr, "mxc-oci: %s\n", msg);
    if (!log_path)
        return;
    FILE *f = fopen(log_path, "ae");
    if (!f)
        return;
    char now[40];
    oci_now(now, sizeof now);
    if (!strcmp(log_format, "json")) {
        json_t *j = json_pack("{s:s, s:s, s:s}", "level", "error", "msg", msg, "time", now);
        char *t = json_dumps(j, JSON_COMPACT);
        fprintf(f, "%s\n", t ? t : "");
        free(t);
        json_decref(j);
    } else {
        fprintf(f, "time=\"%s\" level=error msg=\"%s\"\n", now, msg);
    }
    fclose(f);
}

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

typedef struct {
    const char *name;   /* long */
    char shortname;     /* 0: none */
    bool value;         /* takes a value */
    const char **str;
    bool *set;
    const char **list;  /* a repeatable flag: each value appended (list has room for argc) */
    size_t *nlist;
} flag;

/* Flags as urfave/cli (runc's parser) takes them: -x, --name, -name,
 * --name=V, --name V; they end at the first argument or "--".  Returns
 * the index of the first argument, or -1 after an error was printed. */
static int parse_flags(int argc, char **argv, int i, const flag *fl, size_t n, const char *cmd)
{
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--"))
            return i + 1;
        const char *a = argv[i] + (argv[i][1] == '-' ? 2 : 1);
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const flag *f = NULL;
        for (size_t k = 0; k < n && !f; k++)
            if ((strlen(fl[k].name) == len && !strncmp(fl[k].name, a, len)) ||
                (fl[k].shortname && len == 1 && a[0] == fl[k].shortname))
                f = &fl[k];
        if (!f) {
            die("%s: flag provided but not defined: %s", cmd, argv[i]);
            return -1;
        }
        if (f->value) {
            const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) {
                die("%s: flag needs an argument: %s", cmd, argv[i]);
                return -1;
            }
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

static void print_json(json_t *j)
{
    char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", t ? t : "null");
    free(t);
}

static int usage(void)
{
    fprintf(stderr, "usage: mxc-oci [--root DIR] [--log FILE] [--log-format text|json] [--debug] COMMAND ...\n"
                    "commands: create, start, state, kill, delete, run, list, features, spec\n");
    return 1;
}

/* --preserve-fds N: its number, -1 when not a decimal count (refused later) */
static int count_of(const char *s)
{
    char *end;
    long n = s ? strtol(s, &end, 10) : 0;
    return !s ? 0 : (*s && !*end && n >= 0 && n <= 1000) ? (int)n : -1;
}

static int one_id(int argc, char **argv, int i, const char *cmd, const char **id)
{
    if (i >= argc)
        return die("%s: missing the container id: \"%s\" requires exactly 1 argument(s)", cmd, cmd);
    *id = argv[i];
    return 0;
}

int main(int argc, char **argv)
{
    const char *root = OCI_ROOT_DEFAULT;
    bool debug = false, systemd = false, help = false, version = false;
    const char *criu = NULL, *rootless = NULL, *cgroup_manager = NULL;
    flag global[] = {
        {"root", 0, true, &root, NULL, NULL, NULL},
        {"log", 0, true, &log_path, NULL, NULL, NULL},
        {"log-format", 0, true, &log_format, NULL, NULL, NULL},
        {"debug", 0, false, NULL, &debug, NULL, NULL}, {"systemd-cgroup", 0, false, NULL, &systemd, NULL, NULL},
        {"help", 'h', false, NULL, &help, NULL, NULL},
        {"version", 'v', false, NULL, &version, NULL, NULL},
        {"criu", 0, true, &criu, NULL, NULL, NULL},
        {"rootless", 0, true, &rootless, NULL, NULL, NULL},
        /* crun's: "disabled" is what mxc-oci does today (no cgroup of the container's own) */
        {"cgroup-manager", 0, true, &cgroup_manager, NULL, NULL, NULL},
    };
    int i = parse_flags(argc, argv, 1, global, sizeof global / sizeof global[0], "mxc-oci");
    if (i < 0)
        return 1;
    if (cgroup_manager && strcmp(cgroup_manager, "disabled"))
        return die("--cgroup-manager %s is not supported by mxc-oci yet (cgroups: later; \"disabled\" is)",
                   cgroup_manager);
    if (strcmp(log_format, "text") && strcmp(log_format, "json"))
        return die("unknown log-format %s", log_format);
    if (version || (i < argc && !strcmp(argv[i], "version"))) {
        printf("mxc-oci version 0.1.0\nspec: %s\n", OCI_SPEC_VERSION);
        return 0;
    }
    if (help || i >= argc)
        return usage();
    const char *cmd = argv[i++];
    if (rootless && strcmp(rootless, "false") && strcmp(rootless, "auto"))
        return die("--rootless %s: mxc-oci runs as root for now (rootless: later)", rootless);
    if (!strcmp(cmd, "features")) {
        json_t *j = oci_features();
        print_json(j);
        json_decref(j);
        return 0;
    }
    if (!strcmp(cmd, "spec")) {
        const char *bundle = ".", *rl = NULL;
        bool rless = false;
        flag fl[] = {{"bundle", 'b', true, &bundle, NULL, NULL, NULL}, {"rootless", 0, false, &rl, &rless, NULL, NULL}};
        if ((i = parse_flags(argc, argv, i, fl, 2, cmd)) < 0)
            return 1;
        if (rless)
            return die("spec --rootless: mxc-oci runs as root for now");
        int d = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int fd = d < 0 ? -1 : openat(d, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (d >= 0)
            close(d);
        if (fd < 0)
            return errno == EEXIST ? die("File config.json exists. Remove it first.")
                                   : die("cannot write %s/config.json: %s", bundle, strerror(errno));
        json_t *j = oci_spec();
        int rc = mxc_json_dumpfd(j, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        close(fd);
        json_decref(j);
        return rc < 0 ? die("cannot write config.json") : 0;
    }
    const char *later[] = {"pause", "resume", "update", "checkpoint", "restore", "events"};
    for (size_t k = 0; k < sizeof later / sizeof later[0]; k++)
        if (!strcmp(cmd, later[k]))
            return die("%s is not supported by mxc-oci yet", cmd);
    bool known = false;
    const char *cmds[] = {"create", "start", "state", "kill", "delete", "run", "list", "exec", "ps"};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        known |= !strcmp(cmd, cmds[k]);
    if (!known)
        return die("No help topic for '%s'", cmd);
    if (geteuid() != 0)
        return die("mxc-oci runs as root for now (rootless: later)");
    mxc_error e = {0};
    /* --preserve-fds names the caller's fds 3..: judged before mxc-oci opens one of its own */
    for (int k = i; k < argc && argv[k][0] == '-'; k++) {
        const char *v = !strncmp(argv[k], "--preserve-fds=", 15) ? argv[k] + 15
                        : !strcmp(argv[k], "--preserve-fds") && k + 1 < argc ? argv[k + 1] : NULL;
        if (v && oci_check_preserved(count_of(v), &e) < 0)
            return die("%s", e.message);
    }
    int rootfd = oci_store_root(root, &e);
    if (rootfd < 0)
        return die("%s", e.message);
    int rc = 0;
    const char *id = NULL;
    if (!strcmp(cmd, "create") || !strcmp(cmd, "run")) {
        const char *bundle = ".", *pid_file = NULL, *console = NULL, *preserve = NULL;
        bool no_pivot = false, no_keyring = false, detach = false, keep = false, no_subreaper = false;
        flag fl[] = {
            {"bundle", 'b', true, &bundle, NULL, NULL, NULL}, {"pid-file", 0, true, &pid_file, NULL, NULL, NULL},
            {"console-socket", 0, true, &console, NULL, NULL, NULL},
            {"preserve-fds", 0, true, &preserve, NULL, NULL, NULL},
            {"no-pivot", 0, false, NULL, &no_pivot, NULL, NULL},
            {"no-new-keyring", 0, false, NULL, &no_keyring, NULL, NULL},
            {"detach", 'd', false, NULL, &detach, NULL, NULL}, {"keep", 0, false, NULL, &keep, NULL, NULL},
            {"no-subreaper", 0, false, NULL, &no_subreaper, NULL, NULL},
        };
        size_t nfl = !strcmp(cmd, "run") ? 9 : 6;
        if ((i = parse_flags(argc, argv, i, fl, nfl, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else if (keep)
            rc = die("run --keep is not supported by mxc-oci yet");
        else if (systemd)
            rc = die("--systemd-cgroup is not supported by mxc-oci yet (cgroups: later)");
        else if (!strcmp(cmd, "create"))
            rc = oci_create(rootfd, id, bundle, pid_file, console, count_of(preserve), false, NULL, &e) < 0
                     ? die("%s", e.message)
                     : 0;
        else {
            int status;
            rc = oci_run(rootfd, id, bundle, pid_file, console, count_of(preserve), detach, &status, &e) < 0
                     ? die("%s", e.message)
                     : status;
        }
        /* no_pivot: pivot_root always (stricter); no_new_keyring: no keyring is ever made (keyctl is refused) */
    } else if (!strcmp(cmd, "start") || !strcmp(cmd, "state")) {
        if ((i = parse_flags(argc, argv, i, NULL, 0, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else if (!strcmp(cmd, "start"))
            rc = oci_start(rootfd, id, &e) < 0 ? die("%s", e.message) : 0;
        else {
            json_t *j = oci_query(rootfd, id, &e);
            if (j)
                print_json(j);
            else
                rc = die("%s", e.message);
            json_decref(j);
        }
    } else if (!strcmp(cmd, "exec")) {
        oci_exec_opts o = {0};
        const char *preserve = NULL, *label = NULL, *apparmor = NULL, *cgroup = NULL;
        const char **env = calloc((size_t)argc + 1, sizeof *env), **gids = calloc((size_t)argc + 1, sizeof *gids),
                   **caps = calloc((size_t)argc + 1, sizeof *caps);
        bool ignore_paused = false;
        flag fl[] = {
            {"process", 'p', true, &o.process_file, NULL, NULL, NULL}, {"cwd", 0, true, &o.cwd, NULL, NULL, NULL},
            {"user", 'u', true, &o.user, NULL, NULL, NULL}, {"pid-file", 0, true, &o.pid_file, NULL, NULL, NULL},
            {"env", 'e', true, NULL, NULL, env, &o.nenv}, {"additional-gids", 'g', true, NULL, NULL, gids, &o.ngids},
            {"cap", 'c', true, NULL, NULL, caps, &o.ncaps}, {"tty", 't', false, NULL, &o.tty, NULL, NULL},
            {"detach", 'd', false, NULL, &o.detach, NULL, NULL},
            {"no-new-privs", 0, false, NULL, &o.no_new_privs, NULL, NULL},
            {"console-socket", 0, true, &o.console, NULL, NULL, NULL},
            {"preserve-fds", 0, true, &preserve, NULL, NULL, NULL},
            {"process-label", 0, true, &label, NULL, NULL, NULL},
            {"apparmor", 0, true, &apparmor, NULL, NULL, NULL},
            {"cgroup", 0, true, &cgroup, NULL, NULL, NULL},
            {"ignore-paused", 0, false, NULL, &ignore_paused, NULL, NULL},
        };
        o.env = env, o.gids = gids, o.caps = caps;
        if (!env || !gids || !caps || (i = parse_flags(argc, argv, i, fl, sizeof fl / sizeof fl[0], cmd)) < 0 ||
            one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else if ((label && *label) || (apparmor && *apparmor) || (cgroup && *cgroup))
            rc = die("exec --process-label/--apparmor/--cgroup are not supported by mxc-oci yet");
        else {
            o.preserve = count_of(preserve);
            o.args = argv + i + 1;
            o.nargs = (size_t)(argc - i - 1);
            int status;
            rc = oci_exec(rootfd, id, &o, &status, &e) < 0 ? die("%s", e.message) : status;
        }
        free(env);
        free(gids);
        free(caps);
    } else if (!strcmp(cmd, "ps")) {
        const char *format = "table";
        flag fl[] = {{"format", 'f', true, &format, NULL, NULL, NULL}};
        if ((i = parse_flags(argc, argv, i, fl, 1, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else if (strcmp(format, "table") && strcmp(format, "json"))
            rc = die("invalid format option");
        else if (i + 1 < argc)
            rc = die("ps: options for ps(1) are not supported by mxc-oci yet");
        else {
            json_t *l = oci_ps(rootfd, id, &e);
            size_t k;
            json_t *p;
            if (!l)
                rc = die("%s", e.message);
            else if (!strcmp(format, "json")) {
                char *t = json_dumps(l, JSON_COMPACT);
                printf("%s\n", t ? t : "[]");
                free(t);
            } else {
                printf("%-8s %s\n", "PID", "CMD");
                json_array_foreach(l, k, p) {
                    char path[64], comm[64] = "";
                    snprintf(path, sizeof path, "/proc/%d/comm", (int)json_integer_value(p));
                    FILE *f = fopen(path, "re");
                    if (f && fgets(comm, sizeof comm, f))
                        comm[strcspn(comm, "\n")] = '\0';
                    if (f)
                        fclose(f);
                    printf("%-8d %s\n", (int)json_integer_value(p), comm);
                }
            }
            json_decref(l);
        }
    } else if (!strcmp(cmd, "kill")) {
        bool all = false;
        flag fl[] = {{"all", 'a', false, NULL, &all, NULL, NULL}};
        if ((i = parse_flags(argc, argv, i, fl, 1, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else {
            const char *s = i + 1 < argc ? argv[i + 1] : "SIGTERM";
            int sig = oci_signal(s);
            if (sig < 0)
                rc = die("unknown signal \"%s\"", s);
            else
                rc = oci_kill(rootfd, id, sig, all, &e) < 0 ? die("%s", e.message) : 0;
        }
    } else if (!strcmp(cmd, "delete")) {
        bool force = false;
        flag fl[] = {{"force", 'f', false, NULL, &force, NULL, NULL}};
        if ((i = parse_flags(argc, argv, i, fl, 1, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else
            rc = oci_delete(rootfd, id, force, &e) < 0 ? die("%s", e.message) : 0;
    } else { /* list */
        const char *format = "table";
        bool quiet = false;
        flag fl[] = {{"format", 'f', true, &format, NULL, NULL, NULL}, {"quiet", 'q', false, NULL, &quiet, NULL, NULL}};
        if ((i = parse_flags(argc, argv, i, fl, 2, cmd)) < 0)
            rc = 1;
        else if (strcmp(format, "table") && strcmp(format, "json"))
            rc = die("invalid format option");
        else {
            json_t *l = oci_list(rootfd);
            size_t k;
            json_t *c;
            if (!strcmp(format, "json"))
                print_json(l);
            else if (quiet)
                json_array_foreach(l, k, c) printf("%s\n", json_string_value(json_object_get(c, "id")));
            else {
                printf("%-12s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
                json_array_foreach(l, k, c)
                    printf("%-12s %-8d %-10s %-40s %-32s %s\n", json_string_value(json_object_get(c, "id")),
                           (int)json_integer_value(json_object_get(c, "pid")),
                           json_string_value(json_object_get(c, "status")),
                           json_string_value(json_object_get(c, "bundle")),
                           json_string_value(json_object_get(c, "created")), "root");
            }
            json_decref(l);
        }
    }
    mxc_error_clear(&e);
    close(rootfd);
    return rc;
}
