/* wroots.c — see wroots.h. */
#include "wroots.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "fdio.h"
#include "state.h"

int mxc_wroots_path(char *out, size_t outsz)
{
    char claims[512];
    int rc = mxc_claims_dir(false, claims, sizeof claims);
    if (rc < 0)
        return rc;
    return snprintf(out, outsz, "%s.roots", claims) < (int)outsz ? 0 : -ENAMETOOLONG;
}

static int claims_fd(void)
{
    char path[512];
    int rc = mxc_claims_dir(false, path, sizeof path);
    if (rc < 0)
        return rc;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* The index's directory (made with make), checked to be the caller's own and writable by no one else:
 * an index another user could write could hide a root from us. */
static int roots_fd(bool make)
{
    char path[600];
    int rc = mxc_wroots_path(path, sizeof path);
    if (rc < 0)
        return rc;
    if (make && mkdir(path, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

static bool claim_name_ok(const char *name)
{
    return name && name[0] && name[0] != '.' && strlen(name) < 64 && !strchr(name, '/');
}

json_t *mxc_wroots_of(int claims, const char *name)
{
    if (!claim_name_ok(name))
        return NULL;
    int fd = openat(claims, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_t *j = fd >= 0 ? mxc_json_loadfd(fd, 0, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    json_t *w = json_object_get(j, "writable");
    w = json_is_array(w) ? json_incref(w) : NULL;
    json_decref(j);
    return w;
}

static void root_name(unsigned long long dev, unsigned long long ino, char out[48])
{
    snprintf(out, 48, "%llu-%llu", dev, ino);
}

/* The name of the root directory a claim's "writable" element v names. */
static void element_root(json_t *v, char out[48])
{
    root_name((unsigned long long)json_integer_value(json_object_get(v, "dev")),
              (unsigned long long)json_integer_value(json_object_get(v, "ino")), out);
}

/* Whether the claim `name` lists the directory dev:ino as writable now. */
static bool lists(int claims, const char *name, unsigned long long dev, unsigned long long ino)
{
    json_t *w = mxc_wroots_of(claims, name);
    size_t i;
    json_t *v;
    bool found = false;
    json_array_foreach(w, i, v) {
        found = found || ((unsigned long long)json_integer_value(json_object_get(v, "dev")) == dev &&
                          (unsigned long long)json_integer_value(json_object_get(v, "ino")) == ino);
    }
    json_decref(w);
    return found;
}

/* An entry for the claim `name` under each directory writable lists (the shared or exclusive lock
 * held by the caller): 0 or the first -errno. */
static int add_entries(int roots, const char *name, json_t *writable)
{
    size_t i;
    json_t *v;
    json_array_foreach(writable, i, v) {
        char dn[48];
        element_root(v, dn);
        if (mkdirat(roots, dn, 0700) < 0 && errno != EEXIST)
            return -errno;
        int d = openat(roots, dn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int fd = d < 0 ? -1 : openat(d, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        int err = fd < 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
        if (d >= 0)
            close(d);
        if (err)
            return -err;
    }
    return 0;
}

int mxc_wroots_add(int claims, const char *name)
{
    json_t *w = mxc_wroots_of(claims, name);
    if (!w)
        return -EIO; /* the claim just linked, unreadable: nothing to index it by */
    int rc = 0;
    if (json_array_size(w)) {
        int roots = roots_fd(true);
        rc = roots;
        if (roots >= 0) {
            rc = flock(roots, LOCK_SH) < 0 ? -errno : add_entries(roots, name, w);
            close(roots); /* the lock with it */
        }
    }
    json_decref(w);
    return rc;
}

/* The entries under the root directory dn that no claim lists any more, removed with act (the
 * exclusive lock held), and the directory when none is left: how many were stale. */
static size_t prune_dir(int roots, int claims, const char *dn, bool act)
{
    unsigned long long dev, ino;
    char tail;
    if (sscanf(dn, "%llu-%llu%c", &dev, &ino, &tail) != 2)
        return 0;
    int d = openat(roots, dn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (!dir) {
        if (d >= 0)
            close(d);
        return 0;
    }
    size_t stale = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.' || lists(claims, de->d_name, dev, ino))
            continue;
        stale++;
        if (act)
            unlinkat(dirfd(dir), de->d_name, 0);
    }
    closedir(dir);
    if (act)
        unlinkat(roots, dn, AT_REMOVEDIR); /* ENOTEMPTY: a live claim's */
    return stale;
}

void mxc_wroots_prune(json_t *writable)
{
    if (!json_array_size(writable))
        return;
    int roots = roots_fd(false), claims = claims_fd();
    if (roots >= 0 && claims >= 0 && flock(roots, LOCK_EX) == 0) {
        size_t i;
        json_t *v;
        json_array_foreach(writable, i, v) {
            char dn[48];
            element_root(v, dn);
            prune_dir(roots, claims, dn, true);
        }
    }
    if (roots >= 0)
        close(roots);
    if (claims >= 0)
        close(claims);
}

/* .boot-<this boot's id>, or "" when the kernel does not say it (the index is then rebuilt per open) */
static void boot_marker(char out[64])
{
    out[0] = '\0';
    char id[40] = "";
    if (mxc_read_small_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", id, sizeof id) >= 32) {
        id[strcspn(id, "\n")] = '\0';
        snprintf(out, 64, ".boot-%s", id);
    }
}

/* Every claim indexed (the claims of an earlier boot, whose entries were not synced, or of an older
 * build, which kept none), then the boot's marker, the older ones removed: under the exclusive lock,
 * so that nothing is removed meanwhile and every claim linked after the scan adds its own entries. */
static int rebuild(int roots, int claims, const char *marker)
{
    if (flock(roots, LOCK_EX) < 0)
        return -errno;
    if (marker[0] && faccessat(roots, marker, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
        flock(roots, LOCK_UN);
        return 0; /* another lookup rebuilt it while we waited */
    }
    int cd = dup(claims);
    DIR *d = cd >= 0 ? fdopendir(cd) : NULL;
    if (!d) {
        int err = errno;
        if (cd >= 0)
            close(cd);
        flock(roots, LOCK_UN);
        return -err;
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        json_t *w = claim_name_ok(de->d_name) ? mxc_wroots_of(claims, de->d_name) : NULL;
        rc = w ? add_entries(roots, de->d_name, w) : 0;
        json_decref(w);
    }
    closedir(d);
    int rd = dup(roots);
    DIR *r = rc == 0 && rd >= 0 ? fdopendir(rd) : NULL;
    while (r && (de = readdir(r)))
        if (!strncmp(de->d_name, ".boot-", 6) && strcmp(de->d_name, marker) != 0)
            unlinkat(rd, de->d_name, 0);
    if (r)
        closedir(r);
    else if (rd >= 0)
        close(rd);
    int fd = rc == 0 && marker[0] ? openat(roots, marker, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    if (fd >= 0)
        close(fd);
    flock(roots, LOCK_UN);
    return rc;
}

int mxc_wroots_open(void)
{
    int claims = claims_fd();
    if (claims < 0)
        return claims == -ENOENT ? -ENOENT : claims;
    int roots = roots_fd(true);
    char marker[64];
    boot_marker(marker);
    int rc = roots;
    if (roots >= 0 && (!marker[0] || faccessat(roots, marker, F_OK, AT_SYMLINK_NOFOLLOW) < 0))
        rc = rebuild(roots, claims, marker);
    close(claims);
    if (rc < 0 && roots >= 0)
        close(roots);
    return rc < 0 ? rc : roots;
}

int mxc_wroots_listed(int roots, const struct stat *st)
{
    char dn[48];
    root_name((unsigned long long)st->st_dev, (unsigned long long)st->st_ino, dn);
    int d = openat(roots, dn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0)
        return errno == ENOENT ? 0 : -errno;
    /* a directory some claim listed: is one listing it still there? */
    int claims = claims_fd();
    DIR *dir = claims >= 0 ? fdopendir(d) : NULL;
    if (!dir) {
        close(d);
        if (claims >= 0)
            close(claims);
        return claims == -ENOENT ? 0 : -EIO;
    }
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(dir)))
        found = de->d_name[0] != '.' && lists(claims, de->d_name, (unsigned long long)st->st_dev,
                                              (unsigned long long)st->st_ino);
    closedir(dir);
    close(claims);
    return found;
}

size_t mxc_wroots_sweep(bool act)
{
    int roots = roots_fd(false), claims = claims_fd();
    size_t stale = 0;
    int rd = roots >= 0 && claims >= 0 && flock(roots, LOCK_EX) == 0 ? dup(roots) : -1;
    DIR *d = rd >= 0 ? fdopendir(rd) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.')
            stale += prune_dir(roots, claims, de->d_name, act);
    if (d)
        closedir(d);
    else if (rd >= 0)
        close(rd);
    if (roots >= 0)
        close(roots);
    if (claims >= 0)
        close(claims);
    return stale;
}
