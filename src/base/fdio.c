/* fdio.c — see fdio.h. */
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

/* All of buf to fd; with wait, EAGAIN (an O_NONBLOCK description) waits for room (poll). */
static bool write_all(int fd, const void *buf, size_t len, bool wait)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && wait && errno == EAGAIN) {
            struct pollfd w = {.fd = fd, .events = POLLOUT};
            if (poll(&w, 1, -1) < 0 && errno != EINTR)
                return false;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        p += n, len -= (size_t)n;
    }
    return true;
}

bool mxc_write_all(int fd, const void *buf, size_t len)
{
    return write_all(fd, buf, len, false);
}

bool mxc_write_all_wait(int fd, const void *buf, size_t len)
{
    return write_all(fd, buf, len, true);
}

/* what fd holds, its first max bytes at most; a read error ends the text, or (strict) fails it */
static char *read_upto(int fd, size_t max, size_t *len, bool strict)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf && n < max) {
        if (n == cap) {
            char *bigger = cap <= (SIZE_MAX - 1) / 2 ? realloc(buf, cap * 2 + 1) : NULL;
            if (!bigger)
                free(buf);
            buf = bigger, cap *= 2;
            continue;
        }
        size_t want = cap - n < max - n ? cap - n : max - n;
        ssize_t got = read(fd, buf + n, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && strict) {
            int err = errno;
            free(buf);
            errno = err;
            return NULL;
        }
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *mxc_read_all(int fd, size_t max, size_t *len)
{
    return read_upto(fd, max, len, false);
}

char *mxc_read_whole(int fd, size_t max, size_t *len)
{
    return read_upto(fd, max, len, true);
}

ssize_t mxc_read_small_at(int dirfd, const char *path, char *buf, size_t size)
{
    int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n;
    do
        n = read(fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    int err = errno;
    close(fd);
    if (n < 0)
        return -err;
    buf[n] = '\0';
    return n;
}

int mxc_copy_size(int in, int out, long long size)
{
    for (long long left = size; left > 0;) {
        ssize_t n = sendfile(out, in, NULL, (size_t)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        left -= n;
    }
    return 0;
}

bool mxc_fd_path(int fd, char *out, size_t outsz)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, outsz - 1);
    out[n > 0 ? n : 0] = '\0';
    return n > 0 && (size_t)n < outsz - 1;
}

int mxc_text_memfd(const char *name, const char *text)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (!mxc_write_all(fd, text, strlen(text)) || lseek(fd, 0, SEEK_SET) != 0) {
        int err = errno ? errno : EIO;
        close(fd);
        return -err;
    }
    return fd;
}

json_t *mxc_json_loadfd(int fd, size_t flags, json_error_t *error)
{
    size_t len = 0;
    char *buf = mxc_read_whole(fd, SIZE_MAX, &len);
    if (!buf) {
        if (error) {
            memset(error, 0, sizeof *error);
            error->line = error->column = -1;
            if (errno == ENOMEM)
                snprintf(error->text, sizeof error->text, "out of memory");
            else
                snprintf(error->text, sizeof error->text, "read error: %s", strerror(errno));
        }
        return NULL;
    }
    json_t *j = json_loadb(buf, len, flags, error);
    free(buf);
    return j;
}

int mxc_json_dumpfd(const json_t *json, int fd, size_t flags)
{
    char *text = json_dumps(json, flags);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    bool ok = mxc_write_all(fd, text, strlen(text));
    int err = errno;
    free(text);
    errno = err;
    return ok ? 0 : -1;
}

/* mxc_replace_at and mxc_replace_at_unsynced: the same write, synced or not. */
static int replace_at(int dirfd, const char *name, const char *tmp, const void *buf, size_t len, mode_t mode, bool sync)
{
    char own[256];
    if (!tmp) {
        snprintf(own, sizeof own, "%s.new", name);
        tmp = own;
    }
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    int rc = mxc_write_all(fd, buf, len) && (!sync || fsync(fd) == 0) ? 0 : -errno;
    close(fd);
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

int mxc_replace_at(int dirfd, const char *name, const char *tmp, const void *buf, size_t len, mode_t mode)
{
    return replace_at(dirfd, name, tmp, buf, len, mode, true);
}

int mxc_replace_at_unsynced(int dirfd, const char *name, const char *tmp, const void *buf, size_t len, mode_t mode)
{
    return replace_at(dirfd, name, tmp, buf, len, mode, false);
}

static int json_replace_at(int dirfd, const char *name, const char *tmp, const json_t *json, bool sync)
{
    char *text = json ? json_dumps(json, JSON_COMPACT) : NULL;
    if (!text)
        return -ENOMEM;
    int rc = replace_at(dirfd, name, tmp, text, strlen(text), 0600, sync);
    free(text);
    return rc;
}

int mxc_json_replace_at(int dirfd, const char *name, const char *tmp, const json_t *json)
{
    return json_replace_at(dirfd, name, tmp, json, true);
}

int mxc_json_replace_at_unsynced(int dirfd, const char *name, const char *tmp, const json_t *json)
{
    return json_replace_at(dirfd, name, tmp, json, false);
}
