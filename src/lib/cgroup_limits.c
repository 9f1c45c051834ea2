/* cgroup_limits.c — typed limits written to a cgroup's files, the one way
 * for the engine's sandboxes and mxc-oci's linux.resources alike (see
 * cgroup.h, "limits"): which file on v1 and on v2, in which order, what is
 * read back first. */
#include "cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The write that failed, for the caller's words. */
static int failed(mxc_cgroup_failure *f, int rc, const char *dir, const char *file)
{
    if (f) {
        f->dir = dir;
        f->file = file;
    }
    return rc;
}

#define WRITE(f, dir, file, text)                                                                                      \
    do {                                                                                                               \
        int rc_ = mxc_cgroup_write(dir, file, text);                                                                   \
        if (rc_ < 0)                                                                                                   \
            return failed(f, rc_, dir, file);                                                                          \
    } while (0)

static void num(char *out, size_t outsz, long long v, bool v2)
{
    if (v < 0)
        snprintf(out, outsz, "%s", v2 ? "max" : "-1");
    else
        snprintf(out, outsz, "%lld", v);
}

/* v2: memory.max, and memory.swap.max the swap beyond it (runc's memory
 * plus swap); unset swap with a limit: none at all. */
static int memory_v2(const char *dir, const mxc_cgroup_limits *l, mxc_cgroup_failure *f)
{
    char t[32];
    if (l->memory.set) {
        num(t, sizeof t, l->memory.v, true);
        WRITE(f, dir, "memory.max", t);
    }
    if (!l->swap.set && !l->memory.set)
        return 0;
    if (!l->swap.set) {
        snprintf(t, sizeof t, "0");
    } else if (l->swap.v < 0) {
        snprintf(t, sizeof t, "max");
    } else {
        long long cur = l->memory.v;
        char m[32];
        if (!l->memory.set && mxc_cgroup_read(dir, "memory.max", m, sizeof m) == 0)
            cur = strcmp(m, "max") ? atoll(m) : -1;
        if (cur < 0 || l->swap.v < cur)
            return failed(f, -ERANGE, dir, "memory.swap.max");
        snprintf(t, sizeof t, "%lld", l->swap.v - cur);
    }
    int rc = mxc_cgroup_write(dir, "memory.swap.max", t);
    if (rc == -ENOENT && !l->swap.set)
        rc = 0; /* no swap accounting: nothing to keep out */
    return rc < 0 ? failed(f, rc, dir, "memory.swap.max") : 0;
}

/* v1: memory.memsw.limit_in_bytes is memory+swap and may never be below
 * the limit: the order of the two writes depends on which way they move;
 * unset swap with a limit: no swap at all (memsw = limit). */
static int memory_v1(const char *dir, const mxc_cgroup_limits *l, mxc_cgroup_failure *f)
{
    long long lim = l->memory.set ? l->memory.v : 0, s = l->swap.set ? l->swap.v : 0;
    if (l->memory.set && !l->swap.set)
        s = lim;
    char ls[32], ss[32], path[PATH_MAX];
    num(ls, sizeof ls, lim, false);
    num(ss, sizeof ss, s, false);
    snprintf(path, sizeof path, "%s/memory.memsw.limit_in_bytes", dir);
    bool swapping = (l->swap.set || l->memory.set) && access(path, F_OK) == 0;
    if (l->swap.set && !swapping)
        return failed(f, -ENOENT, dir, "memory.memsw.limit_in_bytes");
    if (swapping && l->swap.set && !l->memory.set) {
        char m[32];
        if (mxc_cgroup_read(dir, "memory.limit_in_bytes", m, sizeof m) == 0 && s >= 0 && s < atoll(m))
            return failed(f, -ERANGE, dir, "memory.memsw.limit_in_bytes");
    }
    /* the limit first: a new cgroup's memsw is unlimited, every limit lowers it */
    int rc = l->memory.set ? mxc_cgroup_write(dir, "memory.limit_in_bytes", ls) : 0;
    if (rc == 0) {
        if (swapping)
            WRITE(f, dir, "memory.memsw.limit_in_bytes", ss);
        return 0;
    }
    /* raising the limit above the current memsw: memsw first (the limit's error where that fails) */
    if (!swapping || mxc_cgroup_write(dir, "memory.memsw.limit_in_bytes", ss) < 0)
        return failed(f, rc, dir, "memory.limit_in_bytes");
    WRITE(f, dir, "memory.limit_in_bytes", ls);
    return 0;
}

static int memory(const char *dir, bool v2, const mxc_cgroup_limits *l, mxc_cgroup_failure *f)
{
    if (!dir || !(l->memory.set || l->swap.set || l->reservation.set))
        return 0;
    if (l->reservation.set) {
        char t[32];
        num(t, sizeof t, l->reservation.v, v2);
        WRITE(f, dir, v2 ? "memory.low" : "memory.soft_limit_in_bytes", t);
    }
    return v2 ? memory_v2(dir, l, f) : memory_v1(dir, l, f);
}

/* A period and what depends on it (v1's quota, the realtime runtime): a
 * period the kernel refuses (EINVAL: the old value over it exceeds a
 * parent's) with the other to write too is written again after it (as runc). */
static int period_pair(const char *dir, const char *pfile, const mxc_cgroup_value *p, const char *vfile,
                       const mxc_cgroup_value *v, bool v_as_num, mxc_cgroup_failure *f)
{
    char t[32];
    bool again = false;
    if (p->set) {
        snprintf(t, sizeof t, "%lld", p->v);
        int w = mxc_cgroup_write(dir, pfile, t);
        again = w == -EINVAL && v->set;
        if (!again && w < 0)
            return failed(f, w, dir, pfile);
    }
    if (v->set) {
        if (v_as_num)
            num(t, sizeof t, v->v, false);
        else
            snprintf(t, sizeof t, "%lld", v->v);
        WRITE(f, dir, vfile, t);
    }
    if (again) {
        snprintf(t, sizeof t, "%lld", p->v);
        WRITE(f, dir, pfile, t);
    }
    return 0;
}

/* v2: cpu.max "QUOTA PERIOD", the one not given kept as it is. */
static int quota_v2(const char *dir, const mxc_cgroup_limits *l, mxc_cgroup_failure *f)
{
    char cur[64] = "max 100000", qs[32], t[96];
    (void)mxc_cgroup_read(dir, "cpu.max", cur, sizeof cur);
    char *sp = strchr(cur, ' ');
    long long p = l->period.set ? l->period.v : sp ? atoll(sp + 1) : 100000;
    if (sp)
        *sp = '\0';
    if (l->quota.set)
        num(qs, sizeof qs, l->quota.v, true);
    else
        snprintf(qs, sizeof qs, "%s", cur);
    snprintf(t, sizeof t, "%s %lld", qs, p);
    WRITE(f, dir, "cpu.max", t);
    return 0;
}

static int cpu(const char *dir, bool v2, const mxc_cgroup_limits *l, mxc_cgroup_failure *f)
{
    int rc = 0;
    if (dir && l->shares.set) {
        char t[32]; /* v2's weight (1..10000) from v1's shares, as runc and crun convert it */
        snprintf(t, sizeof t, "%lld", v2 ? 1 + ((l->shares.v - 2) * 9999) / 262142 : l->shares.v);
        WRITE(f, dir, v2 ? "cpu.weight" : "cpu.shares", t);
    }
    if (dir && (l->quota.set || l->period.set))
        rc = v2 ? quota_v2(dir, l, f)
                : period_pair(dir, "cpu.cfs_period_us", &l->period, "cpu.cfs_quota_us", &l->quota, true, f);
    if (rc == 0 && dir && !v2 && (l->rt_period.set || l->rt_runtime.set))
        rc = period_pair(dir, "cpu.rt_period_us", &l->rt_period, "cpu.rt_runtime_us", &l->rt_runtime, false, f);
    return rc;
}

int mxc_cgroup_set_limits(const mxc_cgroup_dirs *d, const mxc_cgroup_limits *l, mxc_cgroup_failure *f)
{
    if (d->pids && l->pids.set) { /* 0 and below: unlimited, as runc */
        char t[32];
        if (l->pids.v > 0)
            snprintf(t, sizeof t, "%lld", l->pids.v);
        else
            snprintf(t, sizeof t, "max");
        WRITE(f, d->pids, "pids.max", t);
    }
    int rc = memory(d->memory, d->v2, l, f);
    if (rc == 0)
        rc = cpu(d->cpu, d->v2, l, f);
    const char *sets[][2] = {{"cpuset.mems", l->mems}, {"cpuset.cpus", l->cpus}}; /* mems first: v1 wants both */
    for (size_t i = 0; rc == 0 && d->cpuset && i < 2; i++)
        if (sets[i][1] && (rc = mxc_cgroup_write(d->cpuset, sets[i][0], sets[i][1])) < 0)
            failed(f, rc, d->cpuset, sets[i][0]);
    return rc;
}
