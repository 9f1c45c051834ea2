/* cmd_update.c — `update [-r FILE|-] [--memory ...] ID`: the resources as a runc-shaped
 * object (-r's, each flag's value set over it), applied by cgroup.c's oci_update. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cmds.h"

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

typedef struct {
    const char *name, *group, *key;
    bool bytes, string;
    const char *val;
} update_opt;

/* -r FILE (or - for stdin): its object of resources; else an empty one.  NULL with e set. */
static json_t *resources_file(const char *file, mxc_error *e)
{
    if (!file)
        return json_object();
    json_error_t je;
    json_t *r = !strcmp(file, "-") ? json_loadf(stdin, 0, &je) : json_load_file(file, 0, &je);
    if (json_is_object(r))
        return r;
    json_decref(r);
    mxc_err(e, MXC_E_MALFORMED_REQUEST, "update: -r %s: not a JSON object of resources (%s)", file, je.text);
    return NULL;
}

/* each flag given set in r as group.key: 0, or -1 with e set on a value of the wrong kind */
static int set_flags(json_t *r, const update_opt *opt, size_t n, mxc_error *e)
{
    for (size_t k = 0; k < n; k++) {
        if (!opt[k].val)
            continue;
        long long v;
        char *end;
        json_t *val;
        if (opt[k].string)
            val = json_string(opt[k].val);
        else if (opt[k].bytes ? bytes_of(opt[k].val, &v) : (v = strtoll(opt[k].val, &end, 10), *opt[k].val && !*end))
            val = json_integer(v);
        else
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "update: invalid value for --%s: %s", opt[k].name, opt[k].val);
        json_t *g = json_object_get(r, opt[k].group);
        if (!json_is_object(g))
            json_object_set_new(r, opt[k].group, g = json_object());
        json_object_set_new(g, opt[k].key, val);
    }
    return 0;
}

int oci_cmd_update(oci_cli *cli, mxc_error *e)
{
    update_opt opt[] = {
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
    const char *file = NULL, *id;
    oci_flag fl[NOPT + 1];
    for (size_t k = 0; k < NOPT; k++)
        fl[k] = (oci_flag){opt[k].name, 0, true, &opt[k].val, NULL, NULL, NULL};
    fl[NOPT] = (oci_flag){"resources", 'r', true, &file, NULL, NULL, NULL};
    if (oci_cli_flags_id(cli, fl, NOPT + 1, &id, e) < 0)
        return -1;
    /* runc's command line takes the flags after the id too (`update ID --cpu-period N`); anything else
     * there is refused, never ignored */
    int i = cli->i, j = i + 1 < cli->argc ? oci_parse_flags(cli->argc, cli->argv, i + 1, fl, NOPT + 1, "update", e)
                                          : cli->argc;
    if (j < 0)
        return -1;
    if (j != cli->argc)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "update: \"update\" requires exactly 1 argument(s)");
    json_t *r = resources_file(file, e);
    if (!r)
        return -1;
    int rc = set_flags(r, opt, NOPT, e) < 0 || oci_update(cli->rootfd, id, r, e) < 0 ? -1 : 0;
    json_decref(r);
    return rc;
}
