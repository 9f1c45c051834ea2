/* sblog.c — see sblog.h. */
#include "sblog.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "table.h"

#define MARKER_EVERY_NS 1000000000LL

static size_t log_max = GW_LOG_MAX, log_rate = GW_LOG_RATE;
/* a rotation and a reader's opening of both files never interleave */
static pthread_mutex_t rot_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t knob(const char *name, size_t dflt, size_t least)
{
    const char *v = getenv(name);
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end && n >= least && n <= dflt ? (size_t)n : dflt;
}

void gw_log_init(void)
{
    log_max = knob("MXC_GATEWAY_LOG_MAX", GW_LOG_MAX, 4096);
    log_rate = knob("MXC_GATEWAY_LOG_RATE", GW_LOG_RATE, 1024);
}

size_t gw_log_max(void) { return log_max; }
size_t gw_log_rate(void) { return log_rate; }

struct gw_log {
    char name[64];
    int dir, fd;
    size_t size;              /* of the current file */
    double tokens;            /* bytes that may be written now */
    long long last_ns;        /* when tokens were last refilled */
    long long marker_ns;      /* when drops were last said (and the record kept current) */
    unsigned long long dropped, dropped_unsaid, discarded;
    unsigned long long recorded_dropped, recorded_discarded;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_log(int dir, bool excl)
{
    return openat(dir, "log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | (excl ? O_EXCL : 0),
                  0600);
}

gw_log *gw_log_open(const char *name)
{
    int dir = gw_table_dirfd(name);
    if (dir < 0)
        return NULL;
    int fd = open_log(dir, false);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        if (fd >= 0)
            close(fd);
        close(dir);
        errno = EPERM;
        return NULL;
    }
    gw_log *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        close(dir);
        return NULL;
    }
    snprintf(l->name, sizeof l->name, "%s", name);
    l->dir = dir, l->fd = fd, l->size = (size_t)st.st_size;
    l->tokens = (double)log_max;
    l->last_ns = now_ns();
    l->marker_ns = l->last_ns - MARKER_EVERY_NS;
    return l;
}

static void put(gw_log *l, const char *buf, size_t n);

/* log -> log.1 (the older log.1 discarded, counted), a new log begun with
 * the line that says so. */
static void rotate(gw_log *l)
{
    pthread_mutex_lock(&rot_mu);
    struct stat old;
    unsigned long long gone = fstatat(l->dir, "log.1", &old, AT_SYMLINK_NOFOLLOW) == 0 ? (unsigned long long)old.st_size
                                                                                         : 0;
    int fd = -1;
    if (renameat(l->dir, "log", l->dir, "log.1") == 0)
        fd = open_log(l->dir, true);
    pthread_mutex_unlock(&rot_mu);
    if (fd < 0) { /* cannot rotate: nothing more is written (the cap holds) */
        close(l->fd);
        l->fd = -1;
        return;
    }
    close(l->fd);
    l->fd = fd, l->size = 0;
    l->discarded += gone;
    char m[300], older[80] = "";
    if (gone)
        snprintf(older, sizeof older, "; %llu older bytes were discarded", gone);
    int k = snprintf(m, sizeof m, "[mxc-gateway] the log reached its cap of %zu bytes: what came before is in log.1%s\n",
                     log_max, older);
    put(l, m, (size_t)k);
}

/* Bytes into the current file, rotating at the cap (never over it). */
static void put(gw_log *l, const char *buf, size_t n)
{
    while (n && l->fd >= 0) {
        if (l->size >= log_max) {
            rotate(l);
            continue;
        }
        size_t take = log_max - l->size < n ? log_max - l->size : n;
        if (!mxc_write_all(l->fd, buf, take)) {
            close(l->fd);
            l->fd = -1;
            return;
        }
        l->size += take, buf += take, n -= take;
    }
}

/* A line whole in one file: rotated first when it would not fit. */
static void put_line(gw_log *l, const char *line, size_t n)
{
    if (l->fd >= 0 && l->size + n > log_max)
        rotate(l);
    put(l, line, n);
}

void gw_log_flush(gw_log *l, bool force)
{
    long long now = now_ns();
    if (!force && now - l->marker_ns < MARKER_EVERY_NS)
        return; /* at most once a second: the line, and the record (written and synced) */
    if (l->dropped_unsaid) {
        char m[200];
        int k = snprintf(m, sizeof m,
                         "[mxc-gateway] %llu bytes of output dropped: faster than the log's rate cap of %zu bytes/s\n",
                         l->dropped_unsaid, log_rate);
        put_line(l, m, (size_t)k);
        l->dropped_unsaid = 0;
    }
    if (l->dropped != l->recorded_dropped || l->discarded != l->recorded_discarded) {
        gw_table_set(l->name, "logDroppedBytes", json_integer((json_int_t)l->dropped));
        gw_table_set(l->name, "logDiscardedBytes", json_integer((json_int_t)l->discarded));
        l->recorded_dropped = l->dropped, l->recorded_discarded = l->discarded;
    }
    l->marker_ns = now;
}

void gw_log_write(gw_log *l, const void *buf, size_t n)
{
    long long now = now_ns();
    l->tokens += (double)(now - l->last_ns) * (double)log_rate / 1e9;
    if (l->tokens > (double)log_max)
        l->tokens = (double)log_max;
    l->last_ns = now;
    size_t take = (double)n <= l->tokens ? n : (size_t)l->tokens;
    l->tokens -= (double)take;
    if (take < n)
        l->dropped += n - take, l->dropped_unsaid += n - take;
    put(l, buf, take);
    gw_log_flush(l, false);
}

void gw_log_close(gw_log *l)
{
    if (!l)
        return;
    gw_log_flush(l, true);
    if (l->fd >= 0)
        close(l->fd);
    close(l->dir);
    free(l);
}

void gw_log_pump(gw_log *l, int fd, int pidfd)
{
    enum { CHUNK = 1 << 16, AFTER_END = 1 << 20 };
    char *buf = malloc(CHUNK);
    bool ended = false;
    size_t after = 0; /* read since the writer ended */
    while (buf) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        /* a drop not yet said is said within a second even if nothing more comes */
        bool unsaid = l->dropped_unsaid || l->dropped != l->recorded_dropped || l->discarded != l->recorded_discarded;
        int r = ended ? 1 : poll(p, pidfd >= 0 ? 2 : 1, unsaid ? 1000 : -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (!ended && p[1].revents) {
            /* the writer ended: what it left in the pipe, then no more (a
             * descendant that kept the pipe holds the pump no longer) */
            ended = true;
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        }
        if (ended || p[0].revents) {
            ssize_t n = read(fd, buf, CHUNK);
            if (n > 0) {
                gw_log_write(l, buf, (size_t)n);
                if (ended && (after += (size_t)n) >= AFTER_END)
                    break;
                continue;
            }
            if (n == 0 || (errno != EINTR && (errno != EAGAIN || ended)))
                break;
        }
        gw_log_flush(l, false);
    }
    free(buf);
    gw_log_flush(l, true);
}

struct gw_log_reader {
    int fd[2];
    uint64_t size[2];
};

gw_log_reader *gw_log_reader_open(const char *name, uint64_t *total)
{
    int dir = gw_table_dirfd(name);
    if (dir < 0)
        return NULL;
    gw_log_reader *r = calloc(1, sizeof *r);
    if (!r) {
        close(dir);
        return NULL;
    }
    static const char *const FILES[] = {"log.1", "log"};
    pthread_mutex_lock(&rot_mu);
    for (int i = 0; i < 2; i++) {
        r->fd[i] = openat(dir, FILES[i], O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (r->fd[i] >= 0 && (fstat(r->fd[i], &st) < 0 || !S_ISREG(st.st_mode))) {
            close(r->fd[i]);
            r->fd[i] = -1;
        }
        r->size[i] = r->fd[i] >= 0 ? (uint64_t)st.st_size : 0;
    }
    pthread_mutex_unlock(&rot_mu);
    close(dir);
    *total = r->size[0] + r->size[1];
    return r;
}

ssize_t gw_log_reader_read(gw_log_reader *r, uint64_t pos, char *buf, size_t max)
{
    int i = pos < r->size[0] ? 0 : 1;
    uint64_t at = i ? pos - r->size[0] : pos;
    if (at >= r->size[i])
        return 0;
    if (max > r->size[i] - at)
        max = (size_t)(r->size[i] - at);
    ssize_t n;
    while ((n = pread(r->fd[i], buf, max, (off_t)at)) < 0 && errno == EINTR)
        ;
    return n > 0 ? n : -1; /* a file shorter than it was: an error, never a silent end */
}

void gw_log_reader_close(gw_log_reader *r)
{
    if (!r)
        return;
    for (int i = 0; i < 2; i++)
        if (r->fd[i] >= 0)
            close(r->fd[i]);
    free(r);
}
