/* src/oci/events.c — `events` (see events.h). */
#include "events.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "store.h"

long oci_duration_ms(const char *s)
{
    static const struct { const char *unit; double ms; } units[] = {
        {"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3},
    };
    double total = 0;
    if (!s || !*s)
        return -1;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || v < 0)
            return -1;
        s = end;
        size_t best = 0, blen = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen(units[i].unit);
            if (n > blen && !strncmp(s, units[i].unit, n))
                best = i, blen = n;
        }
        if (!blen)
            return -1;
        total += v * units[best].ms;
        s += blen;
    }
    return total > 1e9 ? -1 : (long)total;
}

/* A value of the container's cgroup (in the directory it recorded for ctrl; on v2 its one
 * directory): a one-number file's, or with key a "flat keyed" file's; 0 when absent ("max" too). */
static json_t *value(const oci_cgroup *cg, const char *ctrl, const char *file, const char *key, unsigned long long mul)
{
    const char *dir = oci_cgroup_dir(cg, ctrl);
    char t[64];
    unsigned long long v = 0;
    if (dir && key)
        (void)mxc_cgroup_read_key(dir, file, key, &v);
    else if (dir && mxc_cgroup_read(dir, file, t, sizeof t) == 0)
        v = strtoull(t, NULL, 10);
    return json_integer((json_int_t)(v * mul));
}

/* v2's cpu, memory and pids statistics (runc's names; µs made ns) */
static void stats_v2(const oci_cgroup *cg, json_t *usage, json_t *mu, json_t *pids)
{
    json_object_set_new(usage, "total", value(cg, "cpu", "cpu.stat", "usage_usec", 1000));
    json_object_set_new(usage, "user", value(cg, "cpu", "cpu.stat", "user_usec", 1000));
    json_object_set_new(usage, "kernel", value(cg, "cpu", "cpu.stat", "system_usec", 1000));
    json_object_set_new(mu, "usage", value(cg, "memory", "memory.current", NULL, 1));
    json_object_set_new(mu, "max", value(cg, "memory", "memory.peak", NULL, 1));
    json_object_set_new(mu, "limit", value(cg, "memory", "memory.max", NULL, 1));
    json_object_set_new(mu, "failcnt", value(cg, "memory", "memory.events", "max", 1));
    json_object_set_new(pids, "current", value(cg, "pids", "pids.current", NULL, 1));
    json_object_set_new(pids, "limit", value(cg, "pids", "pids.max", NULL, 1));
}

/* v1's, from the cpuacct, memory and pids hierarchies (clock ticks made ns) */
static void stats_v1(const oci_cgroup *cg, json_t *usage, json_t *mu, json_t *pids)
{
    long tick = sysconf(_SC_CLK_TCK);
    unsigned long long ns = 1000000000ULL / (unsigned long long)(tick > 0 ? tick : 100);
    json_object_set_new(usage, "total", value(cg, "cpuacct", "cpuacct.usage", NULL, 1));
    json_object_set_new(usage, "user", value(cg, "cpuacct", "cpuacct.stat", "user", ns));
    json_object_set_new(usage, "kernel", value(cg, "cpuacct", "cpuacct.stat", "system", ns));
    json_t *percpu = json_array();
    char text[8192];
    const char *d = oci_cgroup_dir(cg, "cpuacct");
    if (!d || mxc_cgroup_read(d, "cpuacct.usage_percpu", text, sizeof text) < 0)
        text[0] = '\0';
    for (char *p = text, *end; *p; p = end) {
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p)
            break;
        json_array_append_new(percpu, json_integer((json_int_t)v));
    }
    json_object_set_new(usage, "percpu", percpu);
    json_object_set_new(mu, "usage", value(cg, "memory", "memory.usage_in_bytes", NULL, 1));
    json_object_set_new(mu, "max", value(cg, "memory", "memory.max_usage_in_bytes", NULL, 1));
    json_object_set_new(mu, "limit", value(cg, "memory", "memory.limit_in_bytes", NULL, 1));
    json_object_set_new(mu, "failcnt", value(cg, "memory", "memory.failcnt", NULL, 1));
    json_object_set_new(pids, "current", value(cg, "pids", "pids.current", NULL, 1));
    json_object_set_new(pids, "limit", value(cg, "pids", "pids.max", NULL, 1));
}

static json_t *stats_of(const oci_cgroup *cg)
{
    json_t *data = json_object(), *cpu = json_object(), *usage = json_object(), *mem = json_object(),
           *mu = json_object(), *pids = json_object();
    if (cg->backend == MXC_CGROUP_V2)
        stats_v2(cg, usage, mu, pids);
    else
        stats_v1(cg, usage, mu, pids);
    json_object_set_new(cpu, "usage", usage);
    json_object_set_new(data, "cpu", cpu);
    json_object_set_new(mem, "usage", mu);
    json_object_set_new(data, "memory", mem);
    json_object_set_new(data, "pids", pids);
    return data;
}

static unsigned long long oom_kills(const oci_cgroup *cg)
{
    const char *dir = oci_cgroup_dir(cg, "memory");
    unsigned long long n = 0;
    if (dir)
        (void)mxc_cgroup_read_key(dir, cg->backend == MXC_CGROUP_V2 ? "memory.events" : "memory.oom_control",
                                  "oom_kill", &n);
    return n;
}

static int emit(const char *type, const char *id, json_t *data)
{
    json_t *ev = json_object();
    json_object_set_new(ev, "type", json_string(type));
    json_object_set_new(ev, "id", json_string(id));
    if (data)
        json_object_set_new(ev, "data", data);
    char *t = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(ev);
    if (!t)
        return -1;
    int rc = printf("%s\n", t) < 0 || fflush(stdout) != 0 ? -1 : 0;
    free(t);
    return rc;
}

/* The container, still there and not stopped: its cgroup in *cg. */
static int alive(int rootfd, const char *id, oci_cgroup *cg, mxc_error *e)
{
    int dirfd = oci_store_open(rootfd, id, e);
    if (dirfd < 0)
        return -1;
    oci_state s;
    int rc = -1;
    if (oci_state_read(dirfd, id, &s, e) == 0) {
        if (oci_state_status(dirfd, &s) == OCI_STOPPED)
            mxc_err(e, MXC_E_ALREADY_STOPPED, "container with id %s is not running", id);
        else if (!oci_cgroup_load(dirfd, cg))
            mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "the container has no cgroup of its own (made with "
                    "--cgroup-manager disabled): no statistics");
        else
            rc = 0;
        oci_state_free(&s);
    }
    close(dirfd);
    return rc;
}

int oci_events(int rootfd, const char *id, bool stats_once, long interval_ms, mxc_error *e)
{
    oci_cgroup cg;
    if (!oci_valid_id(id))
        return mxc_err(e, MXC_E_MALFORMED_ID, "invalid id format: %s", id ? id : "");
    if (alive(rootfd, id, &cg, e) < 0)
        return -1;
    if (stats_once)
        return emit("stats", id, stats_of(&cg)) < 0 ? mxc_err(e, MXC_E_BACKEND_ERROR, "events: writing") : 0;
    if (interval_ms <= 0)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "events: the interval must be positive");
    /* a stats line now and every interval; the OOM count looked at every 100 ms at most; the container
     * looked up again each time (delete ends this) */
    unsigned long long ooms = oom_kills(&cg);
    long step = interval_ms < 100 ? interval_ms : 100, since = interval_ms;
    for (;;) {
        mxc_error gone = {0};
        if (alive(rootfd, id, &cg, &gone) < 0) {
            mxc_error_clear(&gone);
            return 0;
        }
        unsigned long long now = oom_kills(&cg);
        if (now > ooms && emit("oom", id, NULL) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "events: writing");
        ooms = now;
        if (since >= interval_ms) {
            if (emit("stats", id, stats_of(&cg)) < 0)
                return mxc_err(e, MXC_E_BACKEND_ERROR, "events: writing");
            since = 0;
        }
        (void)poll(NULL, 0, (int)step);
        since += step;
    }
}
