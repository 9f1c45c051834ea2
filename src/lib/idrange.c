/* idrange.c — see idrange.h. */
#include "idrange.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "procs.h"
#include "registry.h"
#include "state.h"
#include "wroots.h"

#define RANGE_BASE_DEFAULT 2147483648u /* 2^31: far above the single-uid region and every allocator's */
#define RANGE_SLOTS_DEFAULT 4096u

void mxc_idrange_region(unsigned *base, unsigned *slots)
{
    *base = mxc_env_uint("MXC_RANGE_BASE", RANGE_BASE_DEFAULT) & ~(MXC_IDRANGE_SIZE - 1);
    *slots = mxc_env_uint("MXC_RANGE_SLOTS", RANGE_SLOTS_DEFAULT);
    /* the last usable id is 4294967294 ((uid_t)-1 is no id) */
    unsigned long long room = (4294967295ull - *base) / MXC_IDRANGE_SIZE;
    if (*slots > room)
        *slots = (unsigned)room;
}

static bool overlaps(unsigned long long a, unsigned long long alen, unsigned long long b, unsigned long long blen)
{
    return a < b + blen && b < a + alen;
}

/* The first entry of one host file (/etc/passwd, /etc/group: name:x:id:;
 * /etc/subuid, /etc/subgid: name:start:count) that host ids [lo, lo+n)
 * meet, described in what[]: 1, 0 none, -errno (a file that exists and
 * cannot be read: no answer is not "free"). */
static int file_use(int etc, size_t which, unsigned long long lo, unsigned long long n, char *what, size_t size)
{
    static const char *const NAME[] = {"passwd", "group", "subuid", "subgid"},
                          *const KIND[] = {"local account", "group", "subordinate uid range", "subordinate gid range"};
    int fd = openat(etc, NAME[which], O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return err == ENOENT ? 0 : -err;
    }
    char line[4096];
    int hit = 0;
    while (!hit && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':'), *end;
        if (!c || line[0] == '#')
            continue;
        *c = '\0';
        unsigned long long start, count = 1;
        if (which >= 2) { /* name:start:count */
            start = strtoull(c + 1, &end, 10);
            count = *end == ':' ? strtoull(end + 1, NULL, 10) : 0;
        } else { /* name:password:id: */
            char *id = strchr(c + 1, ':');
            if (!id)
                continue;
            start = strtoull(id + 1, &end, 10);
            if (end == id + 1)
                continue;
        }
        if (count > 0 && overlaps(lo, n, start, count)) {
            hit = 1;
            if (which >= 2)
                snprintf(what, size, "%s %llu+%llu of %.64s (/etc/%s)", KIND[which], start, count, line, NAME[which]);
            else
                snprintf(what, size, "%s %llu (%.64s)", KIND[which], start, line);
        }
    }
    fclose(f);
    return hit;
}

/* What [lo, lo+n) meets on the host: a local account, group or subordinate range (see idrange.h);
 * gid: the group files asked first (what a gid map names is likelier a group). */
static int files_use(unsigned long long lo, unsigned long long n, bool gid, char *what, size_t size)
{
    static const size_t UID_FIRST[] = {0, 2, 1, 3}, GID_FIRST[] = {1, 3, 0, 2};
    int etc = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (etc < 0)
        return -errno;
    int rc = 0;
    for (size_t i = 0; i < 4 && rc == 0; i++)
        rc = file_use(etc, gid ? GID_FIRST[i] : UID_FIRST[i], lo, n, what, size);
    close(etc);
    return rc;
}


/* writable: [{"path","dev","ino"}], the registry's own record of what a sandbox can write */
static json_t *writable_json(const char *const *writable, size_t n)
{
    json_t *w = json_array();
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(writable[i], &st) < 0)
            continue;
        json_array_append_new(w, json_pack("{s:s, s:I, s:I}", "path", writable[i], "dev", (json_int_t)st.st_dev,
                                           "ino", (json_int_t)st.st_ino));
    }
    return w;
}

/* cgroups (may be NULL): the container's cgroup directories, recorded before they are made (the
 * sweeper removes them, empty, with the claim once its owner is gone) */
/* member: a pod member's claim on its pod's range (mxc_idrange_join): its uid 0, so that the sweeper,
 * releasing it once the member is gone, kills no process of the range the pod still uses; "range" the
 * range's first id */
static char *claim_text(const char *state_dir, json_t *writable, unsigned base, pid_t pid, json_t *cgroups,
                        bool member)
{
    json_t *j = json_pack("{s:I, s:I, s:s, s:s, s:I, s:I, s:O}", "uid", (json_int_t)(member ? 0 : base), "count",
                          (json_int_t)MXC_IDRANGE_SIZE, "kind", "oci", "stateDir", state_dir, "pid", (json_int_t)pid,
                          "start", (json_int_t)mxc_proc_start_time(pid), "writable", writable);
    if (j && member)
        json_object_set_new(j, "range", json_integer((json_int_t)base));
    if (j && json_is_array(cgroups))
        json_object_set(j, "cgroups", cgroups);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return text;
}

/* A complete file `name` in dir holding text, not yet synced: its
 * descriptor (for the caller's fsync), or -errno (nothing left behind). */
static int write_file(int dir, const char *name, const char *text)
{
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) {
        close(fd);
        unlinkat(dir, name, 0);
        return -EIO;
    }
    return fd;
}

/* A complete file holding text with no name yet (O_TMPFILE): its descriptor, linked in by
 * link_anon once whole, so that a writer killed at any point leaves no file behind; -errno
 * (-EOPNOTSUPP: the file system has no O_TMPFILE, the caller writes a named one). */
static int anon_file(int dir, const char *text)
{
    int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : -errno;
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) {
        close(fd);
        return -EIO;
    }
    return fd;
}

/* Gives anon_file's file the name `name` in dir (EEXIST when it is taken): 0 or -errno. */
static int link_anon(int fd, int dir, const char *name)
{
    if (linkat(fd, "", dir, name, AT_EMPTY_PATH) == 0)
        return 0;
    if (errno != EPERM && errno != ENOENT)
        return -errno;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

/* The name of a claim file this process writes before it has its own name (anon_file's, linked in
 * before a rename; write_file's without O_TMPFILE): .new-<pid>-<start>-<tag>, the registry's rule
 * (mxc_registry_dead_writer), so that the sweeper and `delete --force` tell a dead writer's file from
 * a live one's by the process's start time too: a file named by pid alone looked alive, and was
 * kept, while any later process had that pid. */
static void writer_name(char out[64], unsigned tag)
{
    snprintf(out, 64, ".new-%d-%llu-%08x", (int)getpid(), mxc_proc_start_time(getpid()), tag);
}

/* The claim cand made whole and durable before it is used: written with no name (anon_file) and
 * linked to cand (-EEXIST when another has it; without O_TMPFILE, written as tmp, linked, tmp
 * removed), the file synced after the link (its one journal commit carries the new name too;
 * synced before it, the directory's sync made a second), then the directory (the caller), which
 * finds nothing left to write.  0 or -errno, nothing left behind. */
static int link_claim(int dir, const char *tmp, const char *cand, const char *text)
{
    int fd = anon_file(dir, text);
    bool named = fd == -EOPNOTSUPP;
    if (named)
        fd = write_file(dir, tmp, text);
    if (fd < 0)
        return fd;
    int rc = named ? (linkat(dir, tmp, dir, cand, 0) < 0 ? -errno : 0) : link_anon(fd, dir, cand);
    if (named)
        unlinkat(dir, tmp, 0);
    if (rc == 0 && fsync(fd) < 0) {
        rc = -errno;
        unlinkat(dir, cand, 0);
    }
    close(fd);
    return rc;
}

/* The engine's claim directory (state.h), host-wide: ranges are root's only. */
static int open_claim_dir(void)
{
    char path[512];
    if (geteuid() != 0)
        return -EPERM;
    int rc = mxc_claims_dir(true, path, sizeof path);
    if (rc < 0)
        return rc;
    int d = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return d < 0 ? -errno : d;
}

/* A claim's name: range-<lo> (a range's own), or member-<lo>-<8 hex> (a pod member's on it). */
static bool parse_name(const char *name, unsigned *lo, bool *member)
{
    char *end;
    *member = name && !strncmp(name, "member-", 7);
    size_t skip = *member ? 7 : 6;
    if (!name || (!*member && strncmp(name, "range-", 6) != 0) || name[skip] < '0' || name[skip] > '9')
        return false;
    unsigned long v = strtoul(name + skip, &end, 10);
    *lo = (unsigned)v;
    if (*member && (end[0] != '-' || strlen(end + 1) != 8 || strspn(end + 1, "0123456789abcdef") != 8))
        return false;
    return (*member || !*end) && v < 4294967295ul && v % MXC_IDRANGE_SIZE == 0;
}

static bool valid_name(const char *name, unsigned *lo)
{
    bool member;
    return parse_name(name, lo, &member);
}

/* Whether a pod member's claim on the range at lo is in the claim directory dir: the range is in use
 * while one is, its own claim released or not (1, 0, -errno). */
static int has_members(int dir, unsigned lo)
{
    int d2 = dup(dir);
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d) {
        int err = errno;
        if (d2 >= 0)
            close(d2);
        return -err;
    }
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "member-%u-", lo), hit = 0;
    struct dirent *de;
    while (!hit && (de = readdir(d)))
        hit = !strncmp(de->d_name, prefix, (size_t)n);
    closedir(d);
    return hit;
}

/* The claim cand, linked and checked, indexed under what it can write before it is handed out (before
 * anything of the container runs: wroots.h); one that cannot be is removed (0 or -errno). */
static int indexed(int dir, const char *cand)
{
    int rc = mxc_wroots_add(dir, cand);
    if (rc < 0)
        unlinkat(dir, cand, 0);
    return rc;
}

/* The claim name removed, then its entries in the index of writable roots. */
static void forget(int dir, const char *name)
{
    json_t *w = mxc_wroots_of(dir, name);
    unlinkat(dir, name, 0);
    mxc_wroots_prune(w);
    json_decref(w);
}

int mxc_idrange_claim(const char *state_dir, const char *const *writable, size_t nwritable, unsigned *base,
                      char name[MXC_IDRANGE_NAME_MAX], mxc_error *e)
{
    name[0] = '\0';
    unsigned rbase, slots, ubase, ucount;
    mxc_idrange_region(&rbase, &slots);
    mxc_registry_range(&ubase, &ucount);
    if (slots == 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the id range region (MXC_RANGE_BASE/MXC_RANGE_SLOTS) is empty");
    if (overlaps(rbase, (unsigned long long)slots * MXC_IDRANGE_SIZE, ubase, ucount))
        return mxc_err(e, MXC_E_BACKEND_ERROR,
                       "the id range region %u+%u*65536 (MXC_RANGE_BASE/MXC_RANGE_SLOTS) overlaps the single-uid "
                       "region %u+%u (MXC_UID_BASE/MXC_UID_COUNT)", rbase, slots, ubase, ucount);
    int dir = open_claim_dir();
    if (dir < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.dir", -dir, NULL, "cannot use the claim directory");
    unsigned r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        close(dir);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.getrandom", errno, NULL, "no randomness");
    }
    char tmp[64];
    writer_name(tmp, r);
    json_t *w = writable_json(writable, nwritable);
    /* from a random slot on, each slot once: a busy region is searched, not sampled */
    for (unsigned i = 0; i < slots; i++) {
        unsigned lo = rbase + ((r + i) % slots) * MXC_IDRANGE_SIZE;
        char what[160];
        int taken = files_use(lo, MXC_IDRANGE_SIZE, false, what, sizeof what);
        if (taken < 0) {
            close(dir);
            json_decref(w);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.accounts", -taken, NULL, "cannot tell whether ids "
                              "%u..%u are a local account's, a group's or a subordinate range (/etc/passwd, "
                              "/etc/group, /etc/subuid, /etc/subgid)", lo, lo + (MXC_IDRANGE_SIZE - 1));
        }
        if (taken)
            continue;
        char cand[MXC_IDRANGE_NAME_MAX];
        snprintf(cand, sizeof cand, "range-%u", lo);
        if (faccessat(dir, cand, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || has_members(dir, lo) != 0)
            continue;
        char *text = claim_text(state_dir, w, lo, getpid(), NULL, false);
        int rc = text ? link_claim(dir, tmp, cand, text) : -ENOMEM;
        free(text);
        /* a member's claim linked since the check above (its own claim released as it joined): the
         * member checks the claim it joins after linking its own, so one of the two sees the other */
        if (rc == 0 && has_members(dir, lo) != 0) {
            unlinkat(dir, cand, 0);
            continue;
        }
        if (rc == 0 && (rc = indexed(dir, cand)) < 0) {
            close(dir);
            json_decref(w);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.claim", -rc, NULL, "cannot index an id range's claim");
        }
        if (rc == 0) {
            fsync(dir);
            close(dir);
            json_decref(w);
            snprintf(name, MXC_IDRANGE_NAME_MAX, "%s", cand);
            *base = lo;
            return 0;
        }
        if (rc != -EEXIST) {
            close(dir);
            json_decref(w);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.claim", -rc, NULL, "cannot claim an id range");
        }
    }
    close(dir);
    json_decref(w);
    return mxc_err(e, MXC_E_BACKEND_ERROR,
                   "no free 65536-id range in the region %u+%u*65536 (MXC_RANGE_BASE/MXC_RANGE_SLOTS)", rbase, slots);
}

/* A new claim cand[] (range-<lo>, or a member's: member-<lo>-<random tag>) of the range at lo for
 * the container at state_dir, written whole and linked in the claim directory (link_claim): the
 * directory's descriptor, *rc 0 or -EEXIST (the name taken); or -1 with e set. */
static int new_claim(unsigned lo, bool member, const char *state_dir, const char *const *writable, size_t nwritable,
                     char cand[MXC_IDRANGE_NAME_MAX], int *rc, mxc_error *e)
{
    unsigned r;
    int dir = open_claim_dir();
    if (dir < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.dir", -dir, NULL, "cannot use the claim directory");
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        close(dir);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.getrandom", errno, NULL, "no randomness");
    }
    char tmp[64];
    writer_name(tmp, r);
    if (member)
        snprintf(cand, MXC_IDRANGE_NAME_MAX, "member-%u-%08x", lo, r);
    else
        snprintf(cand, MXC_IDRANGE_NAME_MAX, "range-%u", lo);
    json_t *w = writable_json(writable, nwritable);
    char *text = claim_text(state_dir, w, lo, getpid(), NULL, member);
    json_decref(w);
    *rc = text ? link_claim(dir, tmp, cand, text) : -ENOMEM;
    free(text);
    if (*rc < 0 && *rc != -EEXIST) {
        close(dir);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.claim", -*rc, NULL, "cannot claim host ids %u+65536", lo);
    }
    return dir;
}

int mxc_idrange_claim_at(unsigned base, const char *state_dir, const char *const *writable, size_t nwritable,
                         char name[MXC_IDRANGE_NAME_MAX], mxc_error *e)
{
    name[0] = '\0';
    char cand[MXC_IDRANGE_NAME_MAX];
    int rc;
    if (base % MXC_IDRANGE_SIZE || base > 4294967295u - MXC_IDRANGE_SIZE)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "host ids %u+65536: not a 65536-aligned range", base);
    int dir = new_claim(base, false, state_dir, writable, nwritable, cand, &rc, e);
    if (dir < 0)
        return -1;
    if (rc == 0 && has_members(dir, base) != 0) { /* a pod's members still on it (mxc_idrange_claim's rule) */
        unlinkat(dir, cand, 0);
        rc = -EEXIST;
    }
    if (rc == 0)
        fsync(dir);
    int irc = rc == 0 ? indexed(dir, cand) : 0;
    close(dir);
    if (irc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.claim", -irc, NULL, "cannot index an id range's claim");
    if (rc < 0)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "host ids %u..%u are another container's (a range claim on "
                       "them): refused", base, base + (MXC_IDRANGE_SIZE - 1));
    snprintf(name, MXC_IDRANGE_NAME_MAX, "%s", cand);
    return 0;
}

/* Whether the claim `of` in dir is still the one the caller proved: its state directory and owner. */
static bool claim_is(int dir, const char *of, const char *of_state_dir, pid_t of_pid)
{
    int fd = openat(dir, of, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_t *j = fd >= 0 ? mxc_json_loadfd(fd, 0, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    const char *owner = json_string_value(json_object_get(j, "stateDir"));
    bool same = owner && !strcmp(owner, of_state_dir) &&
                json_integer_value(json_object_get(j, "pid")) == (json_int_t)of_pid;
    json_decref(j);
    return same;
}

int mxc_idrange_join(const char *of, const char *of_state_dir, pid_t of_pid, const char *state_dir,
                     const char *const *writable, size_t nwritable, unsigned *base, char name[MXC_IDRANGE_NAME_MAX],
                     mxc_error *e)
{
    name[0] = '\0';
    unsigned lo;
    int rc;
    char cand[MXC_IDRANGE_NAME_MAX];
    if (!valid_name(of, &lo))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the pod's id range claim %.40s: not a claim's name", of ? of : "");
    int dir = new_claim(lo, true, state_dir, writable, nwritable, cand, &rc, e);
    if (dir < 0)
        return -1;
    if (rc < 0) { /* the same random tag taken */
        close(dir);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot claim the pod's id range: try again");
    }
    fsync(dir);
    /* linked first, checked second (mxc_idrange_claim links, then looks for members): a claim
     * released and the range claimed anew in between is seen here, never shared */
    if (!claim_is(dir, of, of_state_dir, of_pid)) {
        unlinkat(dir, cand, 0);
        close(dir);
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "the pod's id range claim %s is no longer its container's "
                       "(released as it ended): refused", of);
    }
    if ((rc = indexed(dir, cand)) < 0) {
        close(dir);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "idrange.claim", -rc, NULL, "cannot index a pod member's claim");
    }
    close(dir);
    snprintf(name, MXC_IDRANGE_NAME_MAX, "%s", cand);
    *base = lo;
    return 0;
}

/* Rewrites the claim name (atomically) naming pid as its owner (0: the one it names) and, when
 * cgroups is an array, those cgroup directories (else the ones it names). */
static int rewrite(const char *name, pid_t pid, json_t *cgroups)
{
    unsigned lo;
    bool member;
    if (!parse_name(name, &lo, &member))
        return -EINVAL;
    int dir = open_claim_dir();
    if (dir < 0)
        return dir;
    json_t *old = NULL;
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        old = mxc_json_loadfd(fd, 0, NULL);
        close(fd);
    }
    const char *state_dir = json_string_value(json_object_get(old, "stateDir"));
    int rc = -ENOENT;
    if (state_dir) {
        json_t *w = json_object_get(old, "writable");
        w = json_is_array(w) ? json_incref(w) : json_array(); /* what it can write stays recorded */
        if (pid <= 0)
            pid = (pid_t)json_integer_value(json_object_get(old, "pid"));
        json_t *cg = json_is_array(cgroups) ? cgroups : json_object_get(old, "cgroups");
        char *text = claim_text(state_dir, w, lo, pid, cg, member);
        json_decref(w);
        char tmp[64];
        writer_name(tmp, 0); /* the owner's or the cgroups': one at a time in this process */
        /* not synced: the claim itself is durable since it was made, and this only names
         * another process of the same container or its cgroups (after a crash neither lives,
         * and an unreadable claim names none: the sweeper releases it either way).  Named only
         * once whole: a writer killed before the rename leaves a complete file naming the
         * container (mxc_idrange_release_dead removes it), never an empty one */
        int nfd = text ? anon_file(dir, text) : -ENOMEM;
        rc = nfd < 0 ? nfd : link_anon(nfd, dir, tmp);
        if (nfd == -EOPNOTSUPP) {
            nfd = write_file(dir, tmp, text);
            rc = nfd < 0 ? nfd : 0;
        }
        if (nfd >= 0)
            close(nfd);
        free(text);
        if (rc == 0 && renameat(dir, tmp, dir, name) < 0) {
            rc = -errno;
            unlinkat(dir, tmp, 0);
        }
        /* a release (unlink, then its entries pruned) between the read above and the rename
         * brings the claim back: its entries are made again (idempotent, the shared lock), so
         * the index never misses a claim that is there (review of the index, finding 3) */
        if (rc == 0 && json_array_size(json_object_get(old, "writable")))
            rc = mxc_wroots_add(dir, name);
    }
    json_decref(old);
    close(dir);
    return rc;
}

int mxc_idrange_set_owner(const char *name, pid_t pid)
{
    return pid > 0 ? rewrite(name, pid, NULL) : -EINVAL;
}

int mxc_idrange_set_cgroups(const char *name, const char *const *dirs, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(dirs[i]));
    int rc = a ? rewrite(name, 0, a) : -ENOMEM;
    json_decref(a);
    return rc;
}

void mxc_idrange_release(const char *name)
{
    unsigned lo;
    if (!valid_name(name, &lo))
        return;
    int dir = open_claim_dir();
    if (dir < 0)
        return;
    forget(dir, name);
    close(dir);
}

void mxc_idrange_release_owned(const char *name, const char *state_dir, pid_t pid)
{
    unsigned lo;
    if (!valid_name(name, &lo))
        return;
    int dir = open_claim_dir();
    if (dir < 0)
        return;
    if (claim_is(dir, name, state_dir, pid))
        forget(dir, name);
    close(dir);
}

void mxc_idrange_release_dead(const char *state_dir)
{
    int dir = open_claim_dir();
    DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
    if (!d) {
        if (dir >= 0)
            close(dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        unsigned lo;
        if (!valid_name(de->d_name, &lo))
            continue;
        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        json_t *j = fd >= 0 ? mxc_json_loadfd(fd, 0, NULL) : NULL;
        if (fd >= 0)
            close(fd);
        const char *owner = json_string_value(json_object_get(j, "stateDir"));
        pid_t pid = (pid_t)json_integer_value(json_object_get(j, "pid"));
        unsigned long long start = (unsigned long long)json_integer_value(json_object_get(j, "start"));
        if (owner && !strcmp(owner, state_dir) && pid > 0 && !mxc_pid_alive(pid, start))
            unlinkat(dirfd(d), de->d_name, 0);
        json_decref(j);
    }
    closedir(d);
    mxc_registry_drop_unlinked(state_dir); /* and a claim's file its dead writer had not renamed in */
}

/* The first range claim other than mine that [lo, lo+n) meets: 1, 0, -errno. */
static int claims_use(unsigned long long lo, unsigned long long n, const char *mine, char *what, size_t size)
{
    int dir = open_claim_dir();
    if (dir == -EPERM)
        return 0; /* not root: no range is claimed by this caller's kind (rootless: later) */
    DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
    if (!d) {
        int err = dir >= 0 ? errno : -dir;
        if (dir >= 0)
            close(dir);
        return -err;
    }
    struct dirent *de;
    int hit = 0;
    while (!hit && (de = readdir(d))) {
        unsigned base;
        if (valid_name(de->d_name, &base) && !(mine && !strcmp(mine, de->d_name)) &&
            overlaps(lo, n, base, MXC_IDRANGE_SIZE)) {
            hit = 1;
            snprintf(what, size, "another container's range claim %s (%u+65536)", de->d_name, base);
        }
    }
    closedir(d);
    return hit;
}

int mxc_idrange_host_use(unsigned long long lo, unsigned long long n, bool gid, const char *mine, char *what,
                         size_t size)
{
    int rc = files_use(lo, n, gid, what, size);
    return rc != 0 ? rc : claims_use(lo, n, mine, what, size);
}
