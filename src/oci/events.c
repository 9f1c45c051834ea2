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

static const char *dir_for(const oci_cgroup *cg, const char *ctrl)
{
    for (size_t i = 0; i < cg->n; i++)
        if (!strcmp(cg->h[i].ctrl, cg->v2 ? "unified" : ctrl))
            return cg->h[i].dir;
    return NULL;
}

/* the whole of a small file, or "" */
static void slurp(const char *dir, const char *file, char *out, size_t outsz)
{
    char p[PATH_MAX];
    out[0] = '\0';
    if (!dir)
        return;
    snprintf(p, sizeof p, "%s/%s", dir, file);
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, outsz - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
}

static unsigned long long num_of(const char *dir, const char *file)
{
    char t[64];
    slurp(dir, file, t, sizeof t);
    return strtoull(t, NULL, 10); /* "max" and "" are 0 */
}

/* "key value" lines: the value of key, 0 when absent */
static unsigned long long keyed(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, n) && l[n] == ' ')
            return strtoull(l + n + 1, NULL, 10);
    return 0;
}

static json_t *stats_of(const oci_cgroup *cg)
{
    char text[8192];
    json_t *data = json_object(), *cpu = json_object(), *usage = json_object(), *mem = json_object(),
           *mu = json_object(), *pids = json_object();
    long tick = sysconf(_SC_CLK_TCK);
    if (tick <= 0)
        tick = 100;
    if (cg->v2) {
        const char *d = dir_for(cg, "unified");
        slurp(d, "cpu.stat", text, sizeof text);
        json_object_set_new(usage, "total", json_integer((json_int_t)(keyed(text, "usage_usec") * 1000)));
        json_object_set_new(usage, "user", json_integer((json_int_t)(keyed(text, "user_usec") * 1000)));
        json_object_set_new(usage, "kernel", json_integer((json_int_t)(keyed(text, "system_usec") * 1000)));
        json_object_set_new(mu, "usage", json_integer((json_int_t)num_of(d, "memory.current")));
        json_object_set_new(mu, "max", json_integer((json_int_t)num_of(d, "memory.peak")));
        json_object_set_new(mu, "limit", json_integer((json_int_t)num_of(d, "memory.max")));
        slurp(d, "memory.events", text, sizeof text);
        json_object_set_new(mu, "failcnt", json_integer((json_int_t)keyed(text, "max")));
        json_object_set_new(pids, "current", json_integer((json_int_t)num_of(d, "pids.current")));
        json_object_set_new(pids, "limit", json_integer((json_int_t)num_of(d, "pids.max")));
    } else {
        const char *d = dir_for(cg, "cpuacct");
        json_object_set_new(usage, "total", json_integer((json_int_t)num_of(d, "cpuacct.usage")));
        slurp(d, "cpuacct.stat", text, sizeof text);
        json_object_set_new(usage, "user", json_integer((json_int_t)(keyed(text, "user") * (1000000000ULL / tick))));
        json_object_set_new(usage, "kernel",
                            json_integer((json_int_t)(keyed(text, "system") * (1000000000ULL / tick))));
        json_t *percpu = json_array();
        slurp(d, "cpuacct.usage_percpu", text, sizeof text);
        for (char *p = text, *end; *p; p = end) {
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p)
                break;
            json_array_append_new(percpu, json_integer((json_int_t)v));
        }
        json_object_set_new(usage, "percpu", percpu);
        d = dir_for(cg, "memory");
        json_object_set_new(mu, "usage", json_integer((json_int_t)num_of(d, "memory.usage_in_bytes")));
        json_object_set_new(mu, "max", json_integer((json_int_t)num_of(d, "memory.max_usage_in_bytes")));
        json_object_set_new(mu, "limit", json_integer((json_int_t)num_of(d, "memory.limit_in_bytes")));
        json_object_set_new(mu, "failcnt", json_integer((json_int_t)num_of(d, "memory.failcnt")));
        d = dir_for(cg, "pids");
        json_object_set_new(pids, "current", json_integer((json_int_t)num_of(d, "pids.current")));
        json_object_set_new(pids, "limit", json_integer((json_int_t)num_of(d, "pids.max")));
    }
    json_object_set_new(cpu, "usage", usage);
    json_object_set_new(data, "cpu", cpu);
    json_object_set_new(mem, "usage", mu);
    json_object_set_new(data, "memory", mem);
    json_object_set_new(data, "pids", pids);
    return data;
}

static unsigned long long oom_kills(const oci_cgroup *cg)
{
    char text[4096];
    slurp(dir_for(cg, "memory"), cg->v2 ? "memory.events" : "memory.oom_control", text, sizeof text);
    return keyed(text, "oom_kill");
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
