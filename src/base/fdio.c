/* fdio.c — see fdio.h. */
#include "fdio.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool mxc_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
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

char *mxc_read_all(int fd, size_t max, size_t *len)
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
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
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
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && len == cap) {
            char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!bigger)
                free(buf);
            buf = bigger, cap *= 2;
        }
        if (!buf) {
            if (error)
                snprintf(error->text, sizeof error->text, "out of memory");
            return NULL;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            if (error) {
                memset(error, 0, sizeof *error);
                error->line = error->column = -1;
                snprintf(error->text, sizeof error->text, "read error: %s", strerror(errno));
            }
            free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
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
