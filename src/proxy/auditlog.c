/* auditlog.c — see auditlog.h. */
#include "auditlog.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What is counted when dropped: the proxy's dispositions (anything else
 * is counted as an error). */
enum { K_ALLOWED, K_DENIED, K_AUTH, K_ERROR, NKINDS };
static const char *const KIND[NKINDS] = {"allowed", "denied", "auth-failed", "error"};

typedef struct {
    uint64_t milli; /* tokens, in thousandths */
    uint64_t cap;   /* the burst, in thousandths */
    uint64_t per_sec;
    uint64_t at;    /* when milli was last brought up to date (ms) */
} bucket;

struct mxc_auditlog {
    pthread_mutex_t mu;
    int fd;
    char sandbox[400]; /* JSON-escaped */
    uint64_t max, size;
    bucket rate[2];           /* refusals, allowed traffic */
    uint64_t pending[NKINDS]; /* dropped since the last summary */
    uint64_t last_summary;    /* when it was written (ms) */
    bool full;                /* the size cap is reached: every record from here on is counted only */
};

static int kind_of(const char *disposition)
{
    for (int k = 0; k < NKINDS; k++)
        if (disposition && strcmp(disposition, KIND[k]) == 0)
            return k;
    return K_ERROR;
}

static void refill(bucket *b, uint64_t now)
{
    if (now > b->at) {
        uint64_t add = (now - b->at) * b->per_sec; /* per_sec tokens a second: per_sec thousandths a ms */
        b->milli = b->cap - b->milli < add ? b->cap : b->milli + add;
        b->at = now;
    }
}

static bool take(bucket *b, uint64_t now)
{
    refill(b, now);
    if (b->milli < 1000)
        return false;
    b->milli -= 1000;
    return true;
}

/* The line, whole, when the file stays within limit; false otherwise. */
static bool append(mxc_auditlog *l, const char *line, size_t len, uint64_t limit)
{
    if (l->fd < 0 || l->size + len > limit)
        return false;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(l->fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    l->size += off; /* a short write (a full disk) still counts */
    return off == len;
}

static uint64_t pending_total(const mxc_auditlog *l)
{
    uint64_t n = 0;
    for (int k = 0; k < NKINDS; k++)
        n += l->pending[k];
    return n;
}

/* A Detection Finding: title, and the counts since the last one (reset
 * when written), within limit. */
static bool summary(mxc_auditlog *l, const char *title, const char *cause, uint64_t limit, uint64_t now)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t n = pending_total(l);
    char desc[200];
    if (!strcmp(title, "mxc-proxy-audit-full"))
        snprintf(desc, sizeof desc, "the audit file reached its cap of %llu bytes: later records are dropped and "
                 "counted, the count written when the proxy ends", (unsigned long long)l->max);
    else
        snprintf(desc, sizeof desc, "%llu audit records were dropped (%s)", (unsigned long long)n,
                 !strcmp(cause, "size") ? "the audit file's size cap" : "the audit's rate limit");
    char line[1024];
    int len = snprintf(line, sizeof line,
                       "{\"class_uid\":2004,\"class_name\":\"Detection Finding\",\"category_uid\":2,\"activity_id\":1,"
                       "\"activity_name\":\"Create\",\"severity_id\":3,\"time\":%lld,\"finding_info\":{\"title\":\"%s\","
                       "\"desc\":\"%s\"},\"sandbox\":\"%s\",\"dropped\":{\"records\":%llu,\"cause\":\"%s\","
                       "\"allowed\":%llu,\"denied\":%llu,\"auth-failed\":%llu,\"error\":%llu}}\n",
                       (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, title, desc, l->sandbox,
                       (unsigned long long)n, cause, (unsigned long long)l->pending[K_ALLOWED],
                       (unsigned long long)l->pending[K_DENIED], (unsigned long long)l->pending[K_AUTH],
                       (unsigned long long)l->pending[K_ERROR]);
    if (len <= 0 || (size_t)len >= sizeof line || !append(l, line, (size_t)len, limit))
        return false;
    memset(l->pending, 0, sizeof l->pending);
    l->last_summary = now;
    return true;
}

/* The normal records' limit: the cap less the room kept for the last two. */
static uint64_t body_limit(const mxc_auditlog *l)
{
    return l->max > AUDITLOG_RESERVE ? l->max - AUDITLOG_RESERVE : 0;
}

/* The cap is reached: said once (with what the rate dropped until now),
 * then every record is only counted. */
static void go_full(mxc_auditlog *l, uint64_t now)
{
    if (l->full)
        return;
    l->full = true;
    summary(l, "mxc-proxy-audit-full", "rate", l->max, now);
}

mxc_auditlog *mxc_auditlog_new(int fd, const char *sandbox, const mxc_auditlog_limits *lim, uint64_t now_ms)
{
    mxc_auditlog *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    l->fd = fd;
    size_t o = 0;
    for (const char *s = sandbox ? sandbox : ""; *s && o + 7 < sizeof l->sandbox; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            o += (size_t)snprintf(l->sandbox + o, sizeof l->sandbox - o, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            o += (size_t)snprintf(l->sandbox + o, sizeof l->sandbox - o, "\\u%04x", ch);
        else
            l->sandbox[o++] = (char)ch;
    }
    l->sandbox[o] = '\0';
    struct stat st;
    l->size = fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    l->max = lim->max_bytes;
    const unsigned per[2] = {lim->denied_per_sec, lim->allowed_per_sec}, burst[2] = {lim->denied_burst, lim->allowed_burst};
    for (int i = 0; i < 2; i++)
        l->rate[i] = (bucket){.milli = (uint64_t)burst[i] * 1000, .cap = (uint64_t)burst[i] * 1000,
                              .per_sec = per[i], .at = now_ms};
    l->last_summary = now_ms;
    return l;
}

bool mxc_auditlog_write(mxc_auditlog *l, const char *disposition, const char *line, size_t len, uint64_t now_ms)
{
    if (!l)
        return false;
    int k = kind_of(disposition);
    bool written = false;
    pthread_mutex_lock(&l->mu);
    if (!l->full && take(&l->rate[k == K_ALLOWED], now_ms)) {
        written = append(l, line, len, body_limit(l));
        if (!written)
            go_full(l, now_ms);
    }
    if (!written)
        l->pending[k]++;
    pthread_mutex_unlock(&l->mu);
    return written;
}

void mxc_auditlog_tick(mxc_auditlog *l, uint64_t now_ms)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    if (!l->full && pending_total(l) && now_ms - l->last_summary >= 1000 &&
        !summary(l, "mxc-proxy-audit-dropped", "rate", body_limit(l), now_ms))
        go_full(l, now_ms);
    pthread_mutex_unlock(&l->mu);
}

void mxc_auditlog_finish(mxc_auditlog *l, uint64_t now_ms)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    if (pending_total(l))
        summary(l, "mxc-proxy-audit-dropped", l->full ? "size" : "rate", l->max, now_ms);
    pthread_mutex_unlock(&l->mu);
}

void mxc_auditlog_free(mxc_auditlog *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    free(l);
}
