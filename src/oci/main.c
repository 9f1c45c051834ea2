/* main.c — mxc-oci, runc's command line over src/oci/ (docs/oci.md).
 * Owns: the global flags (--root, --log, --log-format, --debug,
 * --systemd-cgroup), each command's flags and arguments, usage errors,
 * printing, and the log (runc's line formats).  Runs as root; never
 * installed set-uid. */
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
#include "events.h"
#include "fdio.h"
#include "lifecycle.h"
#include "pstable.h"
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
 * made or appended at its target), regular, one link, never a terminal.  NULL with why[] set. */
static FILE *log_open(const char *path, char *why, size_t whysz)
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
        snprintf(why, whysz, "--log %s: %s", path, what);
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
                    "commands: create, start, state, kill, delete, run, list, exec, ps, pause, resume, update, features, spec\n");
    return 1;
}

/* --preserve-fds N: its number, -1 when not a decimal count (refused later) */
static int count_of(const char *s)
{
    char *end;
    long n = s ? strtol(s, &end, 10) : 0;
    return !s ? 0 : (*s && !*end && n >= 0 && n <= 1000) ? (int)n : -1;
}

/* --preserve-fds given something count_of refuses: said with what was given and why */
static int bad_count(const char *s)
{
    return die("--preserve-fds %s: not a count of descriptors: a decimal number from 0 to 1000 (fds 3 to 3+N-1 are "
               "passed on)", s);
}

/* list's containers, and every container directory without a readable state (a create killed
 * before it wrote one) shown as stopped, in id order, so that delete --force can be given its name. */
static json_t *with_half_made(int rootfd, json_t *l)
{
    json_t *ids = oci_store_ids(rootfd), *out = json_array(), *id, *c;
    size_t k, m;
    json_array_foreach(ids, k, id) {
        json_t *found = NULL;
        json_array_foreach(l, m, c) if (!strcmp(json_string_value(json_object_get(c, "id")), json_string_value(id)))
            found = c;
        json_array_append_new(out, found ? json_incref(found) : oci_state_partial(json_string_value(id)));
    }
    json_decref(ids);
    json_decref(l);
    return out;
}

static int one_id(int argc, char **argv, int i, const char *cmd, const char **id)
{
    if (i >= argc)
        return die("%s: missing the container id: \"%s\" requires exactly 1 argument(s)", cmd, cmd);
    *id = argv[i];
    return 0;
}

/* runc's byte sizes (units.RAMInBytes): 1024-based k, m, g, t with an optional "b"; -1 = unlimited */
static bool bytes_of(const char *s, long long *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < -1)
        return false;
    long long mul = 1;
    switch (*end | 0x20) {
    case 'k': mul = 1LL << 10; end++; break;
    case 'm': mul = 1LL << 20; end++; break;
    case 'g': mul = 1LL << 30; end++; break;
    case 't': mul = 1LL << 40; end++; break;
    default: break;
    }
    if ((*end | 0x20) == 'b')
        end++;
    if (*end)
        return false;
    *out = (long long)(v * (double)mul);
    return true;
}

/* update [-r FILE|-] [--memory ...] ID: the resources as a runc-shaped object, applied by cgroup.c */
static int update(int argc, char **argv, int i, int rootfd, mxc_error *e)
{
    struct { const char *name, *group, *key; bool bytes, string; const char *val; } opt[] = {
        {"memory", "memory", "limit", true, false, NULL}, {"memory-swap", "memory", "swap", true, false, NULL},
        {"memory-reservation", "memory", "reservation", true, false, NULL},
        {"kernel-memory", "memory", "kernel", true, false, NULL},
        {"kernel-memory-tcp", "memory", "kernelTCP", true, false, NULL},
        {"pids-limit", "pids", "limit", false, false, NULL}, {"cpu-share", "cpu", "shares", false, false, NULL},
        {"cpu-quota", "cpu", "quota", false, false, NULL}, {"cpu-period", "cpu", "period", false, false, NULL},
        {"cpu-rt-period", "cpu", "realtimePeriod", false, false, NULL},
        {"cpu-rt-runtime", "cpu", "realtimeRuntime", false, false, NULL},
        {"cpu-idle", "cpu", "idle", false, false, NULL}, {"cpu-burst", "cpu", "burst", false, false, NULL},
        {"cpuset-cpus", "cpu", "cpus", false, true, NULL}, {"cpuset-mems", "cpu", "mems", false, true, NULL},
        {"blkio-weight", "blockIO", "weight", false, false, NULL},
        {"l3-cache-schema", "intelRdt", "l3CacheSchema", false, true, NULL},
        {"mem-bw-schema", "intelRdt", "memBwSchema", false, true, NULL},
    };
    enum { NOPT = sizeof opt / sizeof opt[0] };
    const char *file = NULL;
    flag fl[NOPT + 1];
    for (size_t k = 0; k < NOPT; k++)
        fl[k] = (flag){opt[k].name, 0, true, &opt[k].val, NULL, NULL, NULL};
    fl[NOPT] = (flag){"resources", 'r', true, &file, NULL, NULL, NULL};
    const char *id = NULL;
    if ((i = parse_flags(argc, argv, i, fl, NOPT + 1, "update")) < 0 || one_id(argc, argv, i, "update", &id))
        return 1;
    /* runc's command line takes the flags after the id too (`update ID --cpu-period N`); anything else
     * there is refused, never ignored */
    int j = i + 1 < argc ? parse_flags(argc, argv, i + 1, fl, NOPT + 1, "update") : argc;
    if (j < 0)
        return 1;
    if (j != argc)
        return die("update: \"update\" requires exactly 1 argument(s)");
    json_t *r = NULL;
    if (file) {
        json_error_t je;
        r = !strcmp(file, "-") ? json_loadf(stdin, 0, &je) : json_load_file(file, 0, &je);
        if (!json_is_object(r)) {
            json_decref(r);
            return die("update: -r %s: not a JSON object of resources (%s)", file, je.text);
        }
    } else {
        r = json_object();
    }
    for (size_t k = 0; k < NOPT; k++) {
        if (!opt[k].val)
            continue;
        long long v;
        char *end;
        json_t *val;
        if (opt[k].string)
            val = json_string(opt[k].val);
        else if (opt[k].bytes ? bytes_of(opt[k].val, &v) : (v = strtoll(opt[k].val, &end, 10), *opt[k].val && !*end))
            val = json_integer(v);
        else {
            json_decref(r);
            return die("update: invalid value for --%s: %s", opt[k].name, opt[k].val);
        }
        json_t *g = json_object_get(r, opt[k].group);
        if (!json_is_object(g))
            json_object_set_new(r, opt[k].group, g = json_object());
        json_object_set_new(g, opt[k].key, val);
    }
    int rc = oci_update(rootfd, id, r, e) < 0 ? die("%s", e->message) : 0;
    json_decref(r);
    return rc;
}

int main(int argc, char **argv)
{
    /* the commands that start processes in a container run from a sealed copy (selfclone.h) */
    for (int k = 1; k < argc; k++)
        if (!strcmp(argv[k], "create") || !strcmp(argv[k], "run") || !strcmp(argv[k], "exec")) {
            mxc_error ce = {0};
            if (oci_selfclone(argv, &ce) < 0)
                return die("%s", ce.message);
            break;
        }
    const char *root = OCI_ROOT_DEFAULT;
    bool systemd = false, help = false, version = false;
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
        /* crun's: cgroupfs (mxc-oci's own cgroups, the default) or disabled (none; a limit is then refused) */
        {"cgroup-manager", 0, true, &cgroup_manager, NULL, NULL, NULL},
    };
    int i = parse_flags(argc, argv, 1, global, sizeof global / sizeof global[0], "mxc-oci");
    if (i < 0)
        return 1;
    if (cgroup_manager && !strcmp(cgroup_manager, "systemd"))
        systemd = true;
    else if (cgroup_manager && strcmp(cgroup_manager, "disabled") && strcmp(cgroup_manager, "cgroupfs"))
        return die("unknown cgroup manager %s", cgroup_manager);
    oci_cgroup_disabled = cgroup_manager && !strcmp(cgroup_manager, "disabled");
    if (strcmp(log_format, "text") && strcmp(log_format, "json"))
        return die("unknown log-format %s", log_format);
    if (log_path) {
        char why[PATH_MAX + 128];
        if (!(log_file = log_open(log_path, why, sizeof why)))
            return die("%s", why);
    }
    if (version || (i < argc && !strcmp(argv[i], "version"))) {
        printf("mxc-oci version 0.1.0\nspec: %s\n", OCI_SPEC_VERSION);
        return 0;
    }
    if (help) { /* asked for: on stdout, success (runc's) */
        printf("usage: mxc-oci [--root DIR] [--log FILE] [--log-format text|json] [--debug] COMMAND ...\n"
               "commands: create, start, state, kill, delete, run, exec, ps, list, features, spec\n");
        return 0;
    }
    if (i >= argc)
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
    const char *later[] = {"checkpoint", "restore"};
    for (size_t k = 0; k < sizeof later / sizeof later[0]; k++)
        if (!strcmp(cmd, later[k]))
            return die("%s is not supported by mxc-oci yet", cmd);
    bool known = false;
    const char *cmds[] = {"create", "start", "state", "kill", "delete", "run", "list", "exec", "ps", "pause", "resume",
                          "update", "events"};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        known |= !strcmp(cmd, cmds[k]);
    if (!known)
        return die("No help topic for '%s'", cmd);
    if (geteuid() != 0)
        return die("mxc-oci runs as root for now (rootless: later)");
    log_debug("%s: --root %s, %d argument(s)", cmd, root, argc - i);
    mxc_error e = {0};
    /* --preserve-fds names the caller's fds 3..: judged before mxc-oci opens one of its own */
    for (int k = i; k < argc && argv[k][0] == '-'; k++) {
        const char *v = !strncmp(argv[k], "--preserve-fds=", 15) ? argv[k] + 15
                        : !strcmp(argv[k], "--preserve-fds") && k + 1 < argc ? argv[k + 1] : NULL;
        if (v && count_of(v) < 0)
            return bad_count(v);
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
        else if (systemd) /* runc's wording; systemd is not what manages cgroups on this host (see docs/oci.md) */
            rc = die("systemd cgroup flag passed, but systemd support for managing cgroups is not available");
        else if (preserve && count_of(preserve) < 0)
            rc = bad_count(preserve);
        else if (!strcmp(cmd, "create"))
            rc = oci_create(rootfd, id, bundle, pid_file, console, count_of(preserve), false, NULL, &e) < 0
                     ? die("%s", e.message)
                     : 0;
        else {
            int status;
            rc = oci_run(rootfd, id, bundle, pid_file, console, count_of(preserve), detach, keep, &status, &e) < 0
                     ? die("%s", e.message)
                     : status;
        }
        /* no_pivot: pivot_root always (stricter); no_new_keyring: no keyring is ever made (keyctl is refused) */
    } else if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume")) {
        if ((i = parse_flags(argc, argv, i, NULL, 0, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else
            rc = oci_pause(rootfd, id, !strcmp(cmd, "pause"), &e) < 0 ? die("%s", e.message) : 0;
    } else if (!strcmp(cmd, "update")) {
        rc = update(argc, argv, i, rootfd, &e);
    } else if (!strcmp(cmd, "events")) { /* events.h */
        bool stats = false;
        const char *interval = "5s";
        flag fl[] = {{"stats", 0, false, NULL, &stats, NULL, NULL}, {"interval", 0, true, &interval, NULL, NULL, NULL}};
        long ms;
        if ((i = parse_flags(argc, argv, i, fl, 2, cmd)) < 0 || one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else if ((ms = oci_duration_ms(interval)) <= 0)
            rc = die("events: invalid --interval %s", interval);
        else
            rc = oci_events(rootfd, id, stats, ms, &e) < 0 ? die("%s", e.message) : 0;
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
        const char *preserve = NULL, *label = NULL, *cgroup = NULL;
        const char **env = calloc((size_t)argc + 1, sizeof *env), **gids = calloc((size_t)argc + 1, sizeof *gids),
                   **caps = calloc((size_t)argc + 1, sizeof *caps);
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
            {"apparmor", 0, true, &o.apparmor, NULL, NULL, NULL},
            {"cgroup", 0, true, &cgroup, NULL, NULL, NULL},
            {"ignore-paused", 0, false, NULL, &o.ignore_paused, NULL, NULL},
        };
        o.env = env, o.gids = gids, o.caps = caps;
        if (!env || !gids || !caps || (i = parse_flags(argc, argv, i, fl, sizeof fl / sizeof fl[0], cmd)) < 0 ||
            one_id(argc, argv, i, cmd, &id))
            rc = 1;
        else if ((label && *label) || (cgroup && *cgroup))
            rc = die("exec --process-label/--cgroup are not supported by mxc-oci yet");
        else if (preserve && count_of(preserve) < 0)
            rc = bad_count(preserve);
        else {
            o.preserve = count_of(preserve);
            o.args = argv + i + 1;
            o.nargs = (size_t)(argc - i - 1);
            int status;
            /* runc's: 255 when exec itself fails, else the process's status */
            rc = oci_exec(rootfd, id, &o, &status, &e) < 0 ? (die("%s", e.message), 255) : status;
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
        else if (i + 1 < argc && strcmp(format, "table"))
            rc = die("ps: options for ps(1) go with --format table");
        else {
            json_t *l = oci_ps(rootfd, id, &e);
            if (!l)
                rc = die("%s", e.message);
            else if (!strcmp(format, "json")) {
                char *t = json_dumps(l, JSON_COMPACT);
                printf("%s\n", t ? t : "[]");
                free(t);
            } else if (oci_ps_table(l, argv + i + 1, (size_t)(argc - i - 1), &e) < 0)
                rc = die("%s", e.message);
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
            json_t *l = with_half_made(rootfd, oci_list(rootfd));
            size_t k;
            json_t *c;
            if (!strcmp(format, "json")) {
                /* runc's list document: one line, its fields in its order (callers match it as text) */
                json_t *out = json_array();
                const char *keys[] = {"ociVersion", "id", "pid", "status", "bundle", "rootfs", "created",
                                      "annotations", "owner"};
                json_array_foreach(l, k, c) {
                    json_t *o = json_object();
                    for (size_t n = 0; n < sizeof keys / sizeof keys[0]; n++) {
                        json_t *v = json_object_get(c, keys[n]);
                        if (v && !(json_is_object(v) && !json_object_size(v)))
                            json_object_set(o, keys[n], v);
                    }
                    json_array_append_new(out, o);
                }
                char *t = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
                printf("%s\n", t ? t : "[]");
                free(t);
                json_decref(out);
            } else if (quiet)
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
