/* test_cgroup.c — the cgroup manager's file side, on a scratch directory of
 * plain files standing in for a cgroup (no cgroupfs needed): which file each
 * typed limit is written to on v1 and v2 and with what text, the refusals
 * (swap below the limit, no swap accounting), and the directory helpers
 * (mkdirs, pids, has_word, read_key, rmdir), and the membership test a
 * signal is sent after (a /proc/PID/cgroup line naming exactly the cgroup's
 * path, which mountinfo gives for a directory). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "check.h"

static char top[64];

/* A fresh stand-in cgroup: dir top/name holding the given files, empty. */
static const char *fake(const char *name, const char *const *files)
{
    static char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", top, name);
    CHECK(mkdir(dir, 0755) == 0);
    for (size_t i = 0; files[i]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0);
        close(fd);
    }
    return dir;
}

static const char *content(const char *dir, const char *file)
{
    static char text[128];
    if (mxc_cgroup_read(dir, file, text, sizeof text) < 0)
        return "(absent)";
    return text;
}

static void v2_limits(void)
{
    const char *files[] = {"pids.max", "memory.max", "memory.swap.max", "cpu.max", "cpu.weight", NULL};
    const char *d = fake("v2", files);
    mxc_cgroup_dirs dirs = {.v2 = true, .pids = d, .memory = d, .cpu = d, .cpuset = NULL};
    mxc_cgroup_limits l = {.pids = {true, 0}, .memory = {true, 64 << 20}, .shares = {true, 1024},
                           .quota = {true, 50000}, .period = {true, 100000}};
    mxc_cgroup_failure f = {0};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), 0);
    CHECK_STR_EQ(content(d, "pids.max"), "max");          /* 0 and below: unlimited */
    CHECK_STR_EQ(content(d, "memory.max"), "67108864");
    CHECK_STR_EQ(content(d, "memory.swap.max"), "0");     /* a limit without swap: none at all */
    CHECK_STR_EQ(content(d, "cpu.weight"), "39");         /* runc's conversion of 1024 shares */
    CHECK_STR_EQ(content(d, "cpu.max"), "50000 100000");

    /* swap is memory plus swap: below the limit is refused, naming the file */
    const char *files2[] = {"memory.max", "memory.swap.max", NULL};
    d = fake("v2swap", files2);
    dirs = (mxc_cgroup_dirs){.v2 = true, .memory = d};
    l = (mxc_cgroup_limits){.memory = {true, 100}, .swap = {true, 50}};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), -ERANGE);
    CHECK_STR_EQ(f.file, "memory.swap.max");
    l.swap.v = 300;
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), 0);
    CHECK_STR_EQ(content(d, "memory.swap.max"), "200");

    /* no swap accounting (no memory.swap.max): a limit alone is still set */
    const char *files3[] = {"memory.max", NULL};
    d = fake("v2noswap", files3);
    dirs = (mxc_cgroup_dirs){.v2 = true, .memory = d};
    l = (mxc_cgroup_limits){.memory = {true, 4096}};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), 0);
    l.swap = (mxc_cgroup_value){true, 8192};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), -ENOENT);
}

static void v1_limits(void)
{
    const char *files[] = {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "cpu.cfs_period_us",
                           "cpu.cfs_quota_us", "cpuset.cpus", "cpuset.mems", NULL};
    const char *d = fake("v1", files);
    mxc_cgroup_dirs dirs = {.v2 = false, .memory = d, .cpu = d, .cpuset = d};
    mxc_cgroup_limits l = {.memory = {true, 1 << 20}, .quota = {true, -1}, .period = {true, 20000},
                           .cpus = "0-1", .mems = "0"};
    mxc_cgroup_failure f = {0};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), 0);
    CHECK_STR_EQ(content(d, "memory.limit_in_bytes"), "1048576");
    CHECK_STR_EQ(content(d, "memory.memsw.limit_in_bytes"), "1048576"); /* no swap: memsw = limit */
    CHECK_STR_EQ(content(d, "cpu.cfs_period_us"), "20000");
    CHECK_STR_EQ(content(d, "cpu.cfs_quota_us"), "-1");
    CHECK_STR_EQ(content(d, "cpuset.cpus"), "0-1");
    CHECK_STR_EQ(content(d, "cpuset.mems"), "0");

    /* swap asked for where the host has no swap accounting: refused naming memsw */
    const char *files2[] = {"memory.limit_in_bytes", NULL};
    d = fake("v1noswap", files2);
    dirs = (mxc_cgroup_dirs){.memory = d};
    l = (mxc_cgroup_limits){.memory = {true, 1 << 20}, .swap = {true, 2 << 20}};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), -ENOENT);
    CHECK_STR_EQ(f.file, "memory.memsw.limit_in_bytes");
    /* a kind of limit with no directory is left alone */
    l = (mxc_cgroup_limits){.pids = {true, 5}};
    CHECK_INT_EQ(mxc_cgroup_set_limits(&dirs, &l, &f), 0);
}

static void directories(void)
{
    char dir[256];
    int made = -1;
    /* the link count says whether a directory has directories below it (cgroupfs, as tmpfs) */
    snprintf(dir, sizeof dir, "%s/hc", top);
    CHECK(mkdir(dir, 0755) == 0);
    struct stat hst;
    bool counts = stat(dir, &hst) == 0 && hst.st_nlink == 2; /* not btrfs's 1 */
    CHECK(!counts || !mxc_cgroup_has_children(dir));
    CHECK(mkdir(strcat(dir, "/x"), 0755) == 0);
    CHECK(!counts || !mxc_cgroup_has_children(dir));
    CHECK(mxc_cgroup_has_children(dirname(dir)));
    CHECK(mxc_cgroup_has_children("/nonexistent/cgroup")); /* unknown: looked into */
    CHECK_INT_EQ(mxc_cgroup_mkdirs(top, "a/b", NULL, NULL, dir, sizeof dir, &made), 0);
    CHECK_INT_EQ(made, 2);
    CHECK(strstr(dir, "/a/b") != NULL);
    CHECK_INT_EQ(mxc_cgroup_mkdirs(top, "a/b", NULL, NULL, dir, sizeof dir, &made), 0);
    CHECK_INT_EQ(made, 0); /* found, not made */
    const char *none[] = {NULL};
    fake("file-in-the-way", none);
    char path[128];
    snprintf(path, sizeof path, "%s/file-in-the-way/x", top);
    CHECK(open(path, O_WRONLY | O_CREAT, 0644) >= 0);
    CHECK_INT_EQ(mxc_cgroup_mkdirs(top, "file-in-the-way/x/y", NULL, NULL, dir, sizeof dir, &made), -ENOTDIR);

    const char *files[] = {"cgroup.procs", "cgroup.controllers", NULL};
    const char *d = fake("procs", files);
    CHECK_INT_EQ(mxc_cgroup_write(d, "cgroup.procs", "10\n20\n30\n"), 0);
    pid_t pids[2];
    CHECK_INT_EQ(mxc_cgroup_pids(d, pids, 2), 2); /* at most max */
    CHECK_INT_EQ(pids[1], 20);
    static char many[3000 * 6];
    for (int i = 0, at = 0; i < 3000; i++)
        at += snprintf(many + at, sizeof many - at, "%d\n", i + 1);
    CHECK_INT_EQ(mxc_cgroup_write(d, "cgroup.procs", many), 0);
    pid_t *all = NULL;
    CHECK_INT_EQ(mxc_cgroup_pids_all(d, &all), 3000); /* the whole list, past any first buffer */
    CHECK(all && all[2999] == 3000);
    free(all);
    CHECK_INT_EQ(mxc_cgroup_write(d, "cgroup.controllers", "cpu memory pids\n"), 0);
    CHECK(mxc_cgroup_has_word(d, "cgroup.controllers", "memory"));
    CHECK(!mxc_cgroup_has_word(d, "cgroup.controllers", "mem"));
    unsigned long long v = 1;
    CHECK_INT_EQ(mxc_cgroup_write(d, "cgroup.controllers", "usage_usec 12\nuser_usec 7\nmax 3\n"), 0);
    CHECK_INT_EQ(mxc_cgroup_read_key(d, "cgroup.controllers", "user_usec", &v), 0);
    CHECK_INT_EQ((int)v, 7);
    CHECK_INT_EQ(mxc_cgroup_read_key(d, "cgroup.controllers", "max", &v), 0);
    CHECK_INT_EQ((int)v, 3);
    CHECK_INT_EQ(mxc_cgroup_read_key(d, "cgroup.controllers", "user", &v), -ENOENT); /* whole keys only */
    CHECK_INT_EQ((int)v, 0);
    CHECK_INT_EQ(mxc_cgroup_write(d, "no-such-file", "1"), -ENOENT);
    /* read: its first line; a failed one (missing, a link: never followed) leaves the buffer as it
     * was (quota_v2's default cpu.max) */
    char t[32] = "kept";
    CHECK_INT_EQ(mxc_cgroup_read(d, "no-such-file", t, sizeof t), -ENOENT);
    CHECK_STR_EQ(t, "kept");
    char link[300];
    snprintf(link, sizeof link, "%s/l", d);
    CHECK(symlink("cgroup.controllers", link) == 0);
    CHECK_INT_EQ(mxc_cgroup_read(d, "l", t, sizeof t), -ELOOP);
    CHECK_STR_EQ(t, "kept");
    CHECK(unlink(link) == 0);
    CHECK_INT_EQ(mxc_cgroup_read(d, "cgroup.controllers", t, 8), 0); /* cut at the buffer */
    CHECK_STR_EQ(t, "usage_u");
    CHECK_INT_EQ(mxc_cgroup_read(d, "cgroup.controllers", t, sizeof t), 0);
    CHECK_STR_EQ(t, "usage_usec 12");
    CHECK_INT_EQ(mxc_cgroup_rmdir(d), -ENOTEMPTY); /* only EBUSY is waited for */
}

/* A process's /proc/PID/cgroup line is the directory's whole path, of the
 * right hierarchy: a process in /b is not in …/a/b, nor one in /x/a/b. */
static void membership(void)
{
    CHECK(mxc_cgroup_line_is("0::/a/b\n", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("0::/b\n", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("0::/x/a/b", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("0::/a/bc", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("0::/a", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("0::/", NULL, "/")); /* never the root */
    CHECK(!mxc_cgroup_line_is("0::/a/b", "pids", "/a/b")); /* v2's line is not a v1 hierarchy's */
    CHECK(mxc_cgroup_line_is("4:cpu,cpuacct:/a/b", "cpu", "/a/b"));
    CHECK(mxc_cgroup_line_is("4:cpu,cpuacct:/a/b", "cpuacct", "/a/b"));
    CHECK(!mxc_cgroup_line_is("4:cpu,cpuacct:/b", "cpu", "/a/b"));
    CHECK(!mxc_cgroup_line_is("4:cpuset:/a/b", "cpu", "/a/b")); /* "cpu" is not "cpuset" */
    CHECK(!mxc_cgroup_line_is("4:cpu,cpuacct:/a/b", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("1:name=systemd:/a/b", NULL, "/a/b"));
    CHECK(!mxc_cgroup_line_is("garbage", NULL, "/a/b"));

    char path[4096];
    CHECK_INT_EQ(mxc_cgroup_proc_path(top, path, sizeof path), -ENOENT); /* not a cgroup mount */
    /* this process's own v1 pids cgroup, where the mount shows the hierarchy's root */
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096], dir[4200];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *p = strstr(line, ":pids:");
        if (!p)
            continue;
        snprintf(dir, sizeof dir, "/sys/fs/cgroup/pids%s", p + 6);
        struct stat st;
        if (strcmp(p + 6, "/") && stat(dir, &st) == 0) {
            CHECK_INT_EQ(mxc_cgroup_proc_path(dir, path, sizeof path), 0);
            CHECK_STR_EQ(path, p + 6);
            CHECK(mxc_cgroup_line_is(line, "pids", path));
        }
        if (stat("/sys/fs/cgroup/pids", &st) == 0 && !strcmp(p + 6, "/")) {
            CHECK_INT_EQ(mxc_cgroup_proc_path("/sys/fs/cgroup/pids/", path, sizeof path), 0);
            CHECK_STR_EQ(path, "/");
        }
    }
    if (f)
        fclose(f);
}

/* This process's own cgroup of a v1 hierarchy where it is not the root's (here: memory), asked
 * for twice (the mount from the cache, by its ID) and through a link to it (the real path by
 * descriptor): the path /proc/self/cgroup names. */
static void proc_path_again_and_through_a_link(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096], dir[4200], link[4200], path[4096];
    bool done = false;
    while (f && !done && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        struct stat st;
        if (!b || !strcmp(b + 1, "/") || strchr(a + 1, '=') || b == a + 1)
            continue;
        *b = '\0';
        snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s%s", a + 1, b + 1);
        if (stat(dir, &st) < 0)
            continue;
        done = true;
        snprintf(link, sizeof link, "%s/cg-link", top);
        CHECK(symlink(dir, link) == 0);
        for (int i = 0; i < 2; i++) {
            CHECK_INT_EQ(mxc_cgroup_proc_path(dir, path, sizeof path), 0);
            CHECK_STR_EQ(path, b + 1);
        }
        CHECK_INT_EQ(mxc_cgroup_proc_path(link, path, sizeof path), 0);
        CHECK_STR_EQ(path, b + 1);
        unlink(link);
    }
    if (f)
        fclose(f);
    if (!done)
        fprintf(stderr, "note: no v1 cgroup of this process below a hierarchy's root: proc_path via a link not tried\n");
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/mxc-test-cgroup-XXXXXX");
    if (!mkdtemp(top))
        return 1;
    v2_limits();
    v1_limits();
    directories();
    membership();
    proc_path_again_and_through_a_link();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    CHECK_INT_EQ(system(cmd), 0);
    return CHECK_DONE();
}
