/* state.c — see state.h. */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int mkdir_p(const char *path, mode_t mode)
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
    if (mkdir_p(out, 0700) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot create the state root %s", out);
    return 0;
}

static int lock_dir(mxc_state *st, mxc_error *e)
{
    char path[700];
    snprintf(path, sizeof path, "%s/lock", st->dir);
    st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (st->lock_fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.lock", errno, NULL, "cannot open the sandbox lock");
    while (flock(st->lock_fd, LOCK_EX) < 0)
        if (errno != EINTR)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.flock", errno, NULL, "cannot lock the sandbox");
    return 0;
}

static int state_init(const char *name, mxc_state *st, mxc_error *e)
{
    memset(st, 0, sizeof *st);
    st->lock_fd = -1;
    if (mxc_state_root(st->root, sizeof st->root, e) < 0)
        return -1;
    snprintf(st->dir, sizeof st->dir, "%s/%s", st->root, name);
    return 0;
}

int mxc_state_open_locked(const char *name, mxc_state *st, mxc_error *e)
{
    if (state_init(name, st, e) < 0)
        return -1;
    struct stat sb;
    if (lstat(st->dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        return mxc_err(e, MXC_E_STALE_ID, "no sandbox %s exists on this host (deprovisioned, or never provisioned)", name);
    if (lock_dir(st, e) < 0) {
        if (e->native == ENOENT) /* removed between the check and the open */
            return mxc_err(e, MXC_E_STALE_ID, "no sandbox %s exists on this host (deprovisioned, or never provisioned)", name);
        return -1;
    }
    char path[700];
    snprintf(path, sizeof path, "%s/state.json", st->dir);
    if (lstat(st->dir, &sb) < 0 || access(path, F_OK) < 0) { /* removed while we waited, or never completed */
        mxc_state_unlock(st);
        return mxc_err(e, MXC_E_STALE_ID, "no sandbox %s exists on this host (deprovisioned, or never provisioned)", name);
    }
    return 0;
}

int mxc_state_create_locked(const char *name, mxc_state *st, mxc_error *e)
{
    if (state_init(name, st, e) < 0)
        return -1;
    if (mkdir(st->dir, 0700) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot create the sandbox directory");
    return lock_dir(st, e);
}

void mxc_state_unlock(mxc_state *st)
{
    if (st->lock_fd >= 0)
        close(st->lock_fd); /* releases the flock */
    st->lock_fd = -1;
}

int mxc_state_read(const mxc_state *st, json_t **out, mxc_error *e)
{
    char path[700];
    snprintf(path, sizeof path, "%s/state.json", st->dir);
    json_error_t jerr;
    *out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!*out || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state file is unreadable: %s", jerr.text);
    }
    return 0;
}

int mxc_state_write(const mxc_state *st, json_t *state, mxc_error *e)
{
    char tmp[720], path[700];
    snprintf(path, sizeof path, "%s/state.json", st->dir);
    snprintf(tmp, sizeof tmp, "%s/.state.json.%d", st->dir, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.write", errno, NULL, "cannot write the sandbox state");
    char *text = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);
    size_t len = text ? strlen(text) : 0;
    ssize_t n = text ? write(fd, text, len) : -1;
    free(text);
    int err = errno;
    if (n != (ssize_t)len || fsync(fd) < 0) {
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

/* rm -rf below dirfd; O_NOFOLLOW everywhere, so a symlink planted by the
 * agent in its workspace is removed, never followed. */
static int remove_tree_at(int dirfd, int depth)
{
    if (depth > 256)
        return -ELOOP;
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return -errno;
    }
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (unlinkat(dirfd, de->d_name, 0) == 0)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            rc = -errno;
            continue;
        }
        int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            rc = -errno;
            continue;
        }
        fchmod(sub, 0700);
        int r = remove_tree_at(sub, depth + 1);
        if (r < 0)
            rc = r;
        if (unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0)
            rc = -errno;
    }
    closedir(d);
    return rc;
}

int mxc_state_destroy(mxc_state *st, mxc_error *e)
{
    int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.remove", errno, NULL, "cannot open the sandbox directory");
    int rc = remove_tree_at(fd, 0);
    if (rc == 0 && rmdir(st->dir) < 0)
        rc = -errno;
    mxc_state_unlock(st);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.remove", -rc, NULL, "cannot remove the sandbox directory");
    return 0;
}
