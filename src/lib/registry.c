/* registry.c — see registry.h. */
#include "registry.h"
#include "fault.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procs.h"
#include "state.h"
#include "wroots.h"

#define UID_BASE_DEFAULT 2100000000u
#define UID_COUNT_DEFAULT 65536u

/* The claim directory: host-wide as root; rootless the caller's own, in
 * its private directory (state.h: never a name another user can take
 * first), which must be a directory of its uid, mode 0700. */
static int claim_dir(char *out, size_t outsz)
{
    return mxc_claims_dir(true, out, outsz);
}

unsigned mxc_env_uint(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n = v ? strtoul(v, &end, 10) : 0;
    return v && *v && !*end && n > 0 && n < 4294967295ul ? (unsigned)n : dflt;
}

void mxc_registry_range(unsigned *base, unsigned *count)
{
    *base = mxc_env_uint("MXC_UID_BASE", UID_BASE_DEFAULT);
    *count = mxc_env_uint("MXC_UID_COUNT", UID_COUNT_DEFAULT);
    if (*base + (unsigned long long)*count > 4294967294ull)
        *count = 4294967294u - *base;
}

static json_t *claim_json(const mxc_claim *c, unsigned uid)
{
    json_t *w = json_array();
    for (size_t i = 0; i < c->nwritable; i++) {
        struct stat st;
        if (stat(c->writable[i], &st) < 0)
            continue; /* absent on the host: nothing there to write */
        json_array_append_new(w, json_pack("{s:s, s:I, s:I}", "path", c->writable[i], "dev", (json_int_t)st.st_dev,
                                           "ino", (json_int_t)st.st_ino));
    }
    json_t *j = json_pack("{s:I, s:s, s:I, s:o}", "uid", (json_int_t)uid, "kind",
                          c->kind == MXC_CLAIM_SESSION ? "session" : "oneshot", "pid", (json_int_t)getpid(),
                          "writable", w);
    if (c->state_dir)
        json_object_set_new(j, "stateDir", json_string(c->state_dir));
    if (c->workspace)
        json_object_set_new(j, "workspace", json_string(c->workspace));
    json_object_set_new(j, "start", json_integer((json_int_t)mxc_proc_start_time(getpid())));
    return j;
}

/* A complete claim file under a temporary name, linked to its final name:
 * link(2) fails with EEXIST when the uid is taken, and a claim is never
 * seen half written (its whole text is written before the link).  Not
 * synced here: a session's claim is made durable by its start
 * (mxc_registry_sync), before anything of the sandbox runs. */
static int try_claim(const mxc_claim *c, const char *dir, const char *name, unsigned uid, const char *tmp)
{
    json_t *j = claim_json(c, uid);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!text)
        return -ENOMEM;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    int rc = fd < 0 ? -errno : 0;
    size_t len = strlen(text);
    ssize_t n = rc == 0 ? write(fd, text, len) : 0;
    if (rc == 0 && n != (ssize_t)len)
        rc = n < 0 ? -errno : -ENOSPC; /* the real reason, as state.c keeps it */
    free(text);
    if (rc == 0 && c->kind == MXC_CLAIM_SESSION && mxc_fault("KILL_WRITING_CLAIM")) /* tests/faults */
        kill(getpid(), SIGKILL);
    char final[640];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    if (rc == 0 && link(tmp, final) < 0)
        rc = -errno;
    unlink(tmp);
    if (fd >= 0)
        close(fd);
    /* indexed before the claim is handed out, and so before anything of the sandbox runs (wroots.h);
     * one that cannot be indexed is not made */
    int d = rc == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (rc == 0 && (rc = d < 0 ? -errno : mxc_wroots_add(d, name)) < 0) {
        unlink(final);
        if (rc == -EEXIST)
            rc = -EIO; /* not a taken uid: the caller must not try another */
    }
    if (d >= 0)
        close(d);
    return rc;
}

int mxc_registry_sync(const char *name)
{
    char dir[512];
    int rc = claim_dir(dir, sizeof dir);
    if (rc < 0)
        return rc;
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        return -errno;
    int fd = openat(d, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    /* the file first: the one journal commit its fsync forces carries the
     * directory's new entry too, and the directory's fsync then finds
     * nothing left to write (the other order paid two commits) */
    if (fd < 0 || fsync(fd) < 0 || fsync(d) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    close(d);
    return rc;
}

/* Whether /etc/passwd has an account with this uid.  Read directly, not
 * through getpwuid(3): NSS modules (systemd's, sssd's) cost 0.6-1.5 ms per
 * first lookup here, on the path of every one-shot.  Accounts that only a
 * network directory knows are not seen: the reserved range (2100000000 up)
 * lies above every range systemd or useradd allocate from, and
 * MXC_UID_BASE moves it where a directory uses it. */
static bool local_account(unsigned uid)
{
    FILE *f = fopen("/etc/passwd", "re");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        c = c ? strchr(c + 1, ':') : NULL; /* name:password:uid: */
        char *end;
        unsigned long v = c ? strtoul(c + 1, &end, 10) : 0;
        found = c && end != c + 1 && *end == ':' && v == uid;
    }
    fclose(f);
    return found;
}

int mxc_registry_claim(const mxc_claim *c, unsigned *uid, char name[MXC_CLAIM_NAME_MAX], mxc_error *e)
{
    /* name is ours only on success: on every failure it is empty, never
     * the last name tried (someone else's claim, which a caller releasing
     * "its" claim on the way out would delete). */
    name[0] = '\0';
    char dir[600];
    int rc = claim_dir(dir, sizeof dir);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "registry.mkdir", -rc, NULL, "cannot use the claim directory %s", dir);
    bool root = geteuid() == 0;
    unsigned base, count;
    mxc_registry_range(&base, &count);
    unsigned tag;
    if (getrandom(&tag, sizeof tag, 0) != (ssize_t)sizeof tag)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "registry.getrandom", errno, NULL, "no randomness");
    char tmp[700];
    /* the writer named for good, by pid and start time: a later phase's sweep tells a dead one (gone, or a
     * zombie its killer has not reaped yet) from a live one by the same rule as every liveness (procs.h) */
    snprintf(tmp, sizeof tmp, "%s/.new-%d-%llu-%08x", dir, (int)getpid(), mxc_proc_start_time(getpid()), tag);
    for (int attempt = 0; attempt < 256; attempt++) {
        unsigned r;
        name[0] = '\0';
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "registry.getrandom", errno, NULL, "no randomness");
        unsigned candidate = base + r % count;
        if (root) {
            if (local_account(candidate)) /* never collide with a real account */
                continue;
            snprintf(name, MXC_CLAIM_NAME_MAX, "%u", candidate);
        } else {
            snprintf(name, MXC_CLAIM_NAME_MAX, "r-%08x%08x", tag, r);
        }
        rc = try_claim(c, dir, name, root ? candidate : 0, tmp);
        if (rc == 0) {
            if (root)
                *uid = candidate;
            return 0;
        }
        name[0] = '\0'; /* not ours: EEXIST is another sandbox's claim, any other error made none */
        if (rc != -EEXIST)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "registry.claim", -rc, NULL, "cannot claim a uid in %s", dir);
    }
    return mxc_err(e, MXC_E_BACKEND_ERROR, "no free uid in the reserved range (MXC_UID_BASE/MXC_UID_COUNT)");
}

/* A claim's path, for a name that is one of ours (digits, or r- and hex). */
static bool claim_path(const char *name, char *out, size_t outsz)
{
    if (!name || !*name || strlen(name) >= MXC_CLAIM_NAME_MAX || strspn(name, "r-0123456789abcdef") != strlen(name))
        return false;
    char dir[600];
    if (claim_dir(dir, sizeof dir) < 0)
        return false;
    snprintf(out, outsz, "%s/%s", dir, name);
    return true;
}

/* The claim at path unlinked, and its entries in the index of writable roots (wroots.h) after it. */
static void unlink_claim(const char *path, const char *name)
{
    char dir[600];
    int d = claim_dir(dir, sizeof dir) == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    json_t *w = d >= 0 ? mxc_wroots_of(d, name) : NULL;
    if (d >= 0)
        close(d);
    unlink(path);
    mxc_wroots_prune(w);
    json_decref(w);
}

void mxc_registry_release(const char *name)
{
    char path[700];
    if (claim_path(name, path, sizeof path))
        unlink_claim(path, name);
}

bool mxc_registry_is_session_claim(const char *name, const char *state_dir)
{
    char path[700];
    if (!claim_path(name, path, sizeof path))
        return false;
    json_t *j = json_load_file(path, 0, NULL);
    const char *owner = json_string_value(json_object_get(j, "stateDir"));
    bool mine = owner && strcmp(owner, state_dir) == 0;
    json_decref(j);
    return mine;
}

void mxc_registry_release_owned(const char *name, const char *state_dir)
{
    char path[700];
    if (mxc_registry_is_session_claim(name, state_dir) && claim_path(name, path, sizeof path))
        unlink_claim(path, name);
}

bool mxc_registry_dead_writer(const char *entry)
{
    int writer = 0;
    unsigned long long start = 0;
    unsigned tag;
    int got = sscanf(entry, ".new-%d-%llu-%x", &writer, &start, &tag);
    if (got < 1 || writer <= 0)
        return false;
    /* an older build's .new-<pid>-<tag>: whatever now has that pid, if alive, may be its writer */
    if (got < 3)
        start = mxc_proc_start_time(writer);
    return !mxc_pid_alive(writer, start);
}

void mxc_registry_drop_unlinked(const char *state_dir)
{
    char dir[600];
    if (claim_dir(dir, sizeof dir) < 0)
        return;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!mxc_registry_dead_writer(de->d_name))
            continue;
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        json_t *j = json_load_file(path, 0, NULL);
        const char *owner = json_string_value(json_object_get(j, "stateDir"));
        if (owner && strcmp(owner, state_dir) == 0)
            unlink(path);
        json_decref(j);
    }
    if (d)
        closedir(d);
}

bool mxc_registry_find_session(const char *state_dir, char name[MXC_CLAIM_NAME_MAX], char *workspace, size_t wsz)
{
    char dir[600];
    if (claim_dir(dir, sizeof dir) < 0)
        return false;
    DIR *d = opendir(dir);
    struct dirent *de;
    bool found = false;
    while (d && !found && (de = readdir(d))) {
        if (de->d_name[0] == '.' || strlen(de->d_name) >= MXC_CLAIM_NAME_MAX)
            continue;
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        json_t *j = json_load_file(path, 0, NULL);
        const char *owner = json_string_value(json_object_get(j, "stateDir"));
        if (owner && strcmp(owner, state_dir) == 0) {
            found = true;
            snprintf(name, MXC_CLAIM_NAME_MAX, "%s", de->d_name);
            snprintf(workspace, wsz, "%s", json_string_value(json_object_get(j, "workspace")) ?: "");
        }
        json_decref(j);
    }
    if (d)
        closedir(d);
    return found;
}

typedef struct {
    dev_t dev;
    ino_t ino;
} dev_ino;

static bool listed(const dev_ino *set, size_t n, const struct stat *st)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].dev == st->st_dev && set[i].ino == st->st_ino)
            return true;
    return false;
}

/* Each directory from dirfd up to the root is looked up in own[] and, with claims, in the index of
 * writable roots (wroots.h): one lookup per directory, whatever the number of claims (reading every
 * claim per symlink met was O(claims) per grant).  The index is read after the caller read the
 * symlink it asks about, and a sandbox's entries are made before anything of it runs: one that can
 * have planted that link is in it. */
bool mxc_registry_inside_writable(int dirfd, const char *const *own, size_t nown, bool claims)
{
    dev_ino *set = malloc((nown + 1) * sizeof *set);
    if (!set)
        return true; /* cannot tell: treat it as writable (refuse) */
    size_t n = 0;
    for (size_t i = 0; i < nown; i++) {
        struct stat st;
        if (stat(own[i], &st) == 0)
            set[n++] = (dev_ino){st.st_dev, st.st_ino};
    }
    int roots = claims ? mxc_wroots_open() : -ENOENT;
    bool inside = roots < 0 && roots != -ENOENT; /* an index that cannot be read: refuse */
    int cur = inside ? -1 : dup(dirfd);
    for (int depth = 0; cur >= 0 && depth < 4096; depth++) {
        struct stat st, up;
        if (fstat(cur, &st) < 0)
            break;
        if (listed(set, n, &st) || (roots >= 0 && mxc_wroots_listed(roots, &st) != 0)) {
            inside = true; /* an index entry that cannot be read counts too */
            break;
        }
        int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0 || fstat(parent, &up) < 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
            if (parent >= 0)
                close(parent);
            break; /* the root */
        }
        close(cur);
        cur = parent;
    }
    if (cur >= 0)
        close(cur);
    if (roots >= 0)
        close(roots);
    free(set);
    return inside;
}

json_t *mxc_registry_oneshots(void)
{
    json_t *out = json_array();
    char dir[600];
    if (claim_dir(dir, sizeof dir) < 0)
        return out;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.' || strlen(de->d_name) >= MXC_CLAIM_NAME_MAX)
            continue;
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        json_t *j = lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? json_load_file(path, 0, NULL) : NULL;
        json_t *pid = json_object_get(j, "pid");
        const char *kind = json_string_value(json_object_get(j, "kind"));
        pid_t p = json_is_integer(pid) ? (pid_t)json_integer_value(pid) : 0;
        json_t *sj = json_object_get(j, "start");
        unsigned long long start = json_is_integer(sj) ? (unsigned long long)json_integer_value(sj)
                                                       : mxc_proc_start_time(p);
        if (kind && !strcmp(kind, "oneshot") && p > 0 && mxc_pid_alive(p, start)) { /* procs.h's one rule */
            json_t *o = json_pack("{s:s, s:O, s:I}", "claim", de->d_name, "pid", pid, "created", (json_int_t)st.st_mtime);
            json_t *uid = json_object_get(j, "uid");
            if (geteuid() == 0 && json_is_integer(uid)) /* rootless claims carry no uid of their own */
                json_object_set(o, "uid", uid);
            json_array_append_new(out, o);
        }
        json_decref(j);
    }
    if (d)
        closedir(d);
    return out;
}
