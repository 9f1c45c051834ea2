/* state.c — see state.h. */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirtree.h"
#include "fdio.h"
#include "procs.h"

int mxc_mkdir_p(const char *path, mode_t mode)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *c = buf + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        *c = '/';
    }
    return mkdir(buf, mode) < 0 && errno != EEXIST ? -1 : 0;
}

int mxc_open_own_dir(const char *path, mode_t forbidden)
{
    struct stat st;
    int d = mxc_mkdir_p(path, 0700) < 0 ? -1 : open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d >= 0 && (fstat(d, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & forbidden))) {
        close(d);
        errno = EPERM;
        return -1;
    }
    return d;
}

int mxc_state_root(char *out, size_t outsz, mxc_error *e)
{
    const char *env = getenv("MXC_STATE_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (env && env[0] == '/')
        snprintf(out, outsz, "%s", env);
    else if (geteuid() == 0)
        snprintf(out, outsz, "/run/mxc");
    else if (xdg && xdg[0] == '/')
        snprintf(out, outsz, "%s/mxc", xdg);
    else
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "no state directory: set MXC_STATE_DIR or XDG_RUNTIME_DIR");
    if (mxc_mkdir_p(out, 0700) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot create the state root %s", out);
    return 0;
}

/* A directory of the caller's alone, judged by descriptor: not a link, the
 * euid's, no group or other permission. */
static bool private_ok(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077);
    close(fd);
    return ok;
}

int mxc_private_dir(bool make, char *out, size_t outsz, mxc_error *e)
{
    enum { XDG, RUNUSER, TMP, HOME, N };
    char c[N][512] = {{0}};
    const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
    unsigned uid = (unsigned)geteuid();
    if (xdg && xdg[0] == '/')
        snprintf(c[XDG], sizeof c[XDG], "%s", xdg);
    snprintf(c[RUNUSER], sizeof c[RUNUSER], "/run/user/%u", uid);
    snprintf(c[TMP], sizeof c[TMP], "/tmp/mxc-%u", uid);
    struct stat hs;
    char host[65] = "";
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    for (char *h = host; *h; h++) /* a name, never a path */
        if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') || (*h >= '0' && *h <= '9') || *h == '-'))
            *h = '_';
    /* the caller's own home only: nobody else can make anything in it */
    if (home && home[0] == '/' && stat(home, &hs) == 0 && hs.st_uid == geteuid())
        snprintf(c[HOME], sizeof c[HOME], "%s/.local/state/mxc/run-%s", home, host);
    for (int i = 0; i < N; i++) {
        if (!c[i][0])
            continue;
        struct stat st;
        if (lstat(c[i], &st) < 0 && errno == ENOENT) {
            if (i == XDG || i == RUNUSER)
                continue; /* the login manager's to make, not ours */
            if (!make) { /* where a maker would put it */
                snprintf(out, outsz, "%s", c[i]);
                return 0;
            }
            if (i == HOME) {
                char parent[512];
                snprintf(parent, sizeof parent, "%s", c[i]);
                *strrchr(parent, '/') = '\0';
                if (mxc_mkdir_p(parent, 0700) < 0)
                    continue;
            }
            if (mkdir(c[i], 0700) < 0 && errno != EEXIST)
                continue;
        }
        if (private_ok(c[i])) {
            snprintf(out, outsz, "%s", c[i]);
            return 0;
        }
        /* taken by another user, a link, or open to others: passed over, so it denies nothing */
    }
    snprintf(out, outsz, "(no private directory for uid %u: set XDG_RUNTIME_DIR)", uid);
    return mxc_err(e, MXC_E_BACKEND_ERROR,
                   "no private directory for uid %u: $XDG_RUNTIME_DIR is unset or not a 0700 directory of yours, "
                   "/tmp/mxc-%u belongs to someone else, and $HOME is not yours (set XDG_RUNTIME_DIR to a 0700 "
                   "directory of yours)", uid, uid);
}

int mxc_claims_dir(bool make, char *out, size_t outsz)
{
    if (geteuid() == 0) {
        snprintf(out, outsz, "/var/lib/mxc/claims");
        if (!make)
            return 0;
        if (mkdir("/var/lib/mxc", 0755) < 0 && errno != EEXIST)
            return -errno;
        return mkdir(out, 0700) < 0 && errno != EEXIST ? -errno : 0;
    }
    char dir[512];
    mxc_error pe = {0};
    if (mxc_private_dir(make, dir, sizeof dir, &pe) < 0) {
        snprintf(out, outsz, "%s", dir);
        return -EPERM;
    }
    snprintf(out, outsz, "%s/mxc-claims", dir);
    if (!make)
        return 0;
    if (mkdir(out, 0700) < 0 && errno != EEXIST)
        return -errno;
    return private_ok(out) ? 0 : -EPERM;
}

/* Apart from the state: one agent filling its workspace must not fill the
 * state root that every sandbox's phases write (and /run is memory). */
static int workspace_root_at(char *out, size_t outsz, bool create, mxc_error *e)
{
    const char *env = getenv("MXC_WORKSPACE_ROOT");
    const char *data = getenv("XDG_DATA_HOME"), *home = getenv("HOME"), *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat hs;
    if (env && env[0] == '/')
        snprintf(out, outsz, "%s", env);
    else if (geteuid() == 0)
        snprintf(out, outsz, "/var/lib/mxc/workspaces");
    else if (data && data[0] == '/')
        snprintf(out, outsz, "%s/mxc/workspaces", data);
    else if (home && home[0] == '/' && stat(home, &hs) == 0 && hs.st_uid == geteuid()) /* the caller's own home */
        snprintf(out, outsz, "%s/.local/share/mxc/workspaces", home);
    else if (xdg && xdg[0] == '/')
        snprintf(out, outsz, "%s/mxc-workspaces", xdg);
    else
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "no workspace directory: set MXC_WORKSPACE_ROOT or HOME");
    if (create && mxc_mkdir_p(out, 0711) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot create the workspace root %s",
                          out);
    return 0;
}

int mxc_workspace_root(char *out, size_t outsz, mxc_error *e)
{
    return workspace_root_at(out, outsz, true, e);
}

int mxc_workspace_path(const char *name, char *out, size_t outsz, mxc_error *e)
{
    char root[512];
    if (mxc_workspace_root(root, sizeof root, e) < 0)
        return -1;
    snprintf(out, outsz, "%s/%s", root, name);
    return 0;
}

bool mxc_workspace_root_path(char *out, size_t outsz)
{
    mxc_error ignored = {0};
    int rc = workspace_root_at(out, outsz, false, &ignored);
    mxc_error_clear(&ignored);
    return rc == 0;
}

bool mxc_workspace_is(const char *name, const char *path)
{
    char root[512], want[700];
    mxc_error ignored = {0};
    int rc = workspace_root_at(root, sizeof root, false, &ignored);
    mxc_error_clear(&ignored);
    if (rc < 0 || !path)
        return false;
    snprintf(want, sizeof want, "%s/%s", root, name);
    return strcmp(want, path) == 0;
}

int mxc_state_dir_of(const char *name, char *out, size_t outsz, mxc_error *e)
{
    char root[512];
    if (mxc_state_root(root, sizeof root, e) < 0)
        return -1;
    snprintf(out, outsz, "%s/%s", root, name);
    return 0;
}

static int state_init(const char *name, mxc_state *st, mxc_error *e)
{
    memset(st, 0, sizeof *st);
    st->lock_fd = -1;
    if (mxc_state_root(st->root, sizeof st->root, e) < 0)
        return -1;
    snprintf(st->name, sizeof st->name, "%s", name);
    snprintf(st->dir, sizeof st->dir, "%s/%s", st->root, name);
    return 0;
}

/* flock of an existing lock file (never created here: a call that races a
 * deprovision must not bring the directory back to life). */
static int lock_at(const char *dir, bool create, int *fd_out)
{
    char path[760];
    snprintf(path, sizeof path, "%s/lock", dir);
    /* read-only: flock needs no write access, and a read-only state root
     * must still let stop and deprovision kill what runs */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : 0), 0600);
    if (fd < 0)
        return -errno;
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR) {
            int err = errno;
            close(fd);
            return -err;
        }
    *fd_out = fd;
    return 0;
}

/* "<kind>.<name>.<pid>.<start>": a transient directory, and whose. */
static void transient_name(char *out, size_t outsz, const char *root, const char *kind, const char *name)
{
    snprintf(out, outsz, "%s/.%s.%s.%d.%llu", root, kind, name, (int)getpid(), mxc_proc_start_time(getpid()));
}

bool mxc_state_transient(const char *entry, bool *tomb, char *name, size_t namesz, bool *maker_alive)
{
    const char *rest;
    if (strncmp(entry, ".tomb.", 6) == 0)
        *tomb = true, rest = entry + 6;
    else if (strncmp(entry, ".new.", 5) == 0)
        *tomb = false, rest = entry + 5;
    else
        return false;
    const char *a = strchr(rest, '.');
    const char *b = a ? strchr(a + 1, '.') : NULL;
    if (!a || !b || (size_t)(a - rest) >= namesz)
        return false;
    snprintf(name, namesz, "%.*s", (int)(a - rest), rest);
    pid_t pid = (pid_t)strtol(a + 1, NULL, 10);
    unsigned long long start = strtoull(b + 1, NULL, 10);
    *maker_alive = pid > 0 && mxc_pid_alive(pid, start);
    return true;
}

int mxc_state_stage(const char *name, mxc_state *st, mxc_error *e)
{
    if (state_init(name, st, e) < 0)
        return -1;
    transient_name(st->dir, sizeof st->dir, st->root, "new", name);
    if (mkdir(st->dir, 0700) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot create the sandbox directory");
    int rc = lock_at(st->dir, true, &st->lock_fd);
    if (rc < 0) {
        rmdir(st->dir);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.lock", -rc, NULL, "cannot lock the sandbox");
    }
    return 0;
}

int mxc_state_commit(mxc_state *st, mxc_error *e)
{
    char final[700];
    snprintf(final, sizeof final, "%s/%s", st->root, st->name);
    if (renameat2(AT_FDCWD, st->dir, AT_FDCWD, final, RENAME_NOREPLACE) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.commit", errno, NULL, "cannot commit the sandbox directory");
    snprintf(st->dir, sizeof st->dir, "%s", final);
    return 0;
}

/* A deprovision of this name under way (its maker holds the tombstone's
 * lock: wait for it) or interrupted (finish it): either way, nothing of it
 * is left when this returns. */
static void settle_tombstones(const mxc_state *st, mxc_tomb_finisher fin)
{
    DIR *d = opendir(st->root);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        bool tomb, alive;
        char name[64];
        if (!mxc_state_transient(de->d_name, &tomb, name, sizeof name, &alive) || !tomb ||
            strcmp(name, st->name) != 0)
            continue;
        char path[1000];
        snprintf(path, sizeof path, "%s/%s", st->root, de->d_name);
        if (fin) /* waits for its maker (mxc_state_lock_transient), then finishes what is left */
            fin(path);
    }
    if (d)
        closedir(d);
}

int mxc_state_lock_transient(const char *dir, int *lock_fd)
{
    *lock_fd = -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -ENOENT;
    int lfd = openat(dfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    while (lfd >= 0 && flock(lfd, LOCK_EX) < 0 && errno == EINTR)
        ;
    /* a staging directory is renamed to its final name under its lock: once
     * the lock is ours, the path must still name the directory we locked */
    struct stat a, b;
    bool same = fstat(dfd, &a) == 0 && lstat(dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    close(dfd);
    if (!same) {
        if (lfd >= 0)
            close(lfd);
        return -ENOENT;
    }
    *lock_fd = lfd;
    return 0;
}

static int stale(const char *name, mxc_error *e)
{
    return mxc_err(e, MXC_E_STALE_ID, "no sandbox %s exists on this host (deprovisioned, or never provisioned)", name);
}

int mxc_state_open_locked(const char *name, mxc_tomb_finisher fin, mxc_state *st, mxc_error *e)
{
    if (state_init(name, st, e) < 0)
        return -1;
    int rc = lock_at(st->dir, false, &st->lock_fd);
    if (rc == 0) {
        struct stat sb;
        if (lstat(st->dir, &sb) == 0 && S_ISDIR(sb.st_mode))
            return 0; /* the directory is ours (it was not renamed while we waited) */
        mxc_state_unlock(st);
        rc = -ENOENT;
    }
    if (rc != -ENOENT && rc != -ENOTDIR)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.lock", -rc, NULL, "cannot lock the sandbox");
    settle_tombstones(st, fin);
    return stale(name, e);
}

void mxc_state_unlock(mxc_state *st)
{
    if (st->lock_fd >= 0)
        close(st->lock_fd); /* releases the flock */
    st->lock_fd = -1;
}

int mxc_state_read(const mxc_state *st, json_t **out, mxc_error *e)
{
    char path[760];
    snprintf(path, sizeof path, "%s/state.json", st->dir);
    json_error_t jerr;
    *out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state file is unreadable: %s", jerr.text);
    }
    json_t *f = json_object_get(*out, "stateFormat");
    if (f && (!json_is_integer(f) || json_integer_value(f) < 0)) {
        json_decref(*out);
        *out = NULL;
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state file is unreadable: \"stateFormat\" is not a format");
    }
    if (f && json_integer_value(f) > MXC_STATE_FORMAT) {
        long long v = (long long)json_integer_value(f);
        json_decref(*out);
        *out = NULL;
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.read", EPROTONOSUPPORT,
                   "use the mxc that made this sandbox (a newer one) for its phases, or install it again",
                   "the sandbox state was written by a newer mxc (state format %lld; this mxc reads formats 0 to %d)",
                   v, MXC_STATE_FORMAT);
        return -1;
    }
    return 0;
}

int mxc_state_write(const mxc_state *st, json_t *state, mxc_error *e)
{
    char tmp[780], path[760];
    snprintf(path, sizeof path, "%s/state.json", st->dir);
    snprintf(tmp, sizeof tmp, "%s/.state.json.%d", st->dir, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.write", errno, NULL, "cannot write the sandbox state");
    json_object_set_new(state, "stateFormat", json_integer(MXC_STATE_FORMAT));
    char *text = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);
    size_t len = text ? strlen(text) : 0;
    ssize_t n = text ? write(fd, text, len) : -1;
    free(text);
    int err = errno;
    /* No fsync: this is runtime state (/run/mxc by default, tmpfs on most
     * hosts).  Write-then-rename keeps it whole across any process's death;
     * only a host crash could tear it, and a host crash ends every holder
     * too — a torn or empty file is then damaged state, which stop and
     * deprovision tear down anyway.  What must outlive a reboot (the uid
     * claims, beside the persistent workspaces) is synced by registry.c.
     * On a disk-backed root each fsync cost 0.2-1 ms per phase here. */
    if (n != (ssize_t)len) {
        err = n < 0 ? err : ENOSPC;
        close(fd);
        unlink(tmp);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.write", err ? err : EIO, NULL, "cannot write the sandbox state");
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        err = errno;
        unlink(tmp);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.rename", err, NULL, "cannot commit the sandbox state");
    }
    return 0;
}

int mxc_state_entomb(mxc_state *st, mxc_error *e)
{
    char tomb[700];
    transient_name(tomb, sizeof tomb, st->root, "tomb", st->name);
    if (rename(st->dir, tomb) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.entomb", errno, NULL, "cannot retire the sandbox directory");
    snprintf(st->dir, sizeof st->dir, "%s", tomb);
    return 0;
}

/* O_NOFOLLOW everywhere, so a symlink planted by the agent in its workspace is removed, never followed */
int mxc_state_remove_tree(const char *path)
{
    return mxc_remove_tree_at(AT_FDCWD, path);
}

int mxc_state_destroy(mxc_state *st, mxc_error *e)
{
    int rc = mxc_state_remove_tree(st->dir);
    mxc_state_unlock(st);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.remove", -rc, NULL, "cannot remove the sandbox directory");
    return 0;
}

/* Small records beside the state file: written whole (temp + rename). */
static int write_small(const char *dir, const char *file, const char *text)
{
    char path[760], tmp[780];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(tmp, sizeof tmp, "%s/.%s.%d", dir, file, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    /* the real reason (ENOSPC on a full state root, EDQUOT, EIO): the caller's remediation depends on it;
     * a short write without an error is the filesystem being full */
    ssize_t n = write(fd, text, len);
    int rc = n == (ssize_t)len ? 0 : n < 0 ? -errno : -ENOSPC;
    close(fd);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

static bool read_small(const char *dir, const char *file, char *buf, size_t bufsz)
{
    char path[760];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return mxc_read_small_at(AT_FDCWD, path, buf, bufsz) > 0;
}

int mxc_state_write_holder(const mxc_state *st, pid_t holder, unsigned long long start)
{
    char text[96];
    snprintf(text, sizeof text, "%d %llu\n", (int)holder, start);
    return write_small(st->dir, "holder", text);
}

bool mxc_state_read_holder(const char *dir, pid_t *holder, unsigned long long *start)
{
    char buf[128];
    int h = 0;
    unsigned long long s = 0;
    if (!read_small(dir, "holder", buf, sizeof buf) || sscanf(buf, "%d %llu", &h, &s) != 2 || h <= 0)
        return false;
    *holder = h, *start = s;
    return true;
}

int mxc_state_note_workspace(const mxc_state *st, const char *ws)
{
    return write_small(st->dir, "workspace", ws);
}

bool mxc_state_noted_workspace(const char *dir, char *out, size_t outsz)
{
    return read_small(dir, "workspace", out, outsz) && out[0] == '/';
}

void mxc_state_clear_holder(const char *dir)
{
    char path[760];
    snprintf(path, sizeof path, "%s/holder", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/holder.exit", dir);
    unlink(path);
}

bool mxc_state_holder_death(const char *dir, char *out, size_t outsz)
{
    char buf[128];
    if (!read_small(dir, "holder.exit", buf, sizeof buf))
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(out, outsz, "%s", buf);
    return true;
}

/* ".unanswered.<name>.<pid>.<start>" in the state root: a provision's
 * answer not yet delivered (state.h). */
static void unanswered_path(char *out, size_t outsz, const char *root, const char *name)
{
    snprintf(out, outsz, "%s/.unanswered.%s.%d.%llu", root, name, (int)getpid(), mxc_proc_start_time(getpid()));
}

int mxc_state_mark_unanswered(const mxc_state *st)
{
    char path[700];
    unanswered_path(path, sizeof path, st->root, st->name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

void mxc_state_mark_answered(const char *root, const char *name)
{
    char path[700];
    unanswered_path(path, sizeof path, root, name);
    unlink(path);
}

bool mxc_state_unanswered(const char *entry, char *name, size_t namesz, bool *maker_alive)
{
    if (strncmp(entry, ".unanswered.", 12) != 0)
        return false;
    const char *rest = entry + 12;
    const char *a = strchr(rest, '.');
    const char *b = a ? strchr(a + 1, '.') : NULL;
    if (!a || !b || a == rest || (size_t)(a - rest) >= namesz)
        return false;
    snprintf(name, namesz, "%.*s", (int)(a - rest), rest);
    pid_t pid = (pid_t)strtol(a + 1, NULL, 10);
    unsigned long long start = strtoull(b + 1, NULL, 10);
    *maker_alive = pid > 0 && mxc_pid_alive(pid, start);
    return true;
}

int mxc_state_try_lock(const char *root, const char *name, mxc_state *st)
{
    memset(st, 0, sizeof *st);
    st->lock_fd = -1;
    snprintf(st->root, sizeof st->root, "%s", root);
    snprintf(st->name, sizeof st->name, "%s", name);
    snprintf(st->dir, sizeof st->dir, "%s/%s", root, name);
    int dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    int fd = openat(dfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int rc = fd < 0 ? -errno : 0;
    while (rc == 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
        if (errno != EINTR)
            rc = -errno;
    struct stat a, b;
    if (rc == 0 && !(fstat(dfd, &a) == 0 && lstat(st->dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
        rc = -ENOENT; /* renamed (entombed) while we locked it */
    close(dfd);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    st->lock_fd = fd;
    return 0;
}
