/* audit.c — see audit.h. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_RECORDS 4096
#define QUEUE_BYTES (16u << 20)
#define RETENTION_S 5
#define WARN_EVERY_S 30
#define MAX_SOURCES 1024

typedef struct {
    char sandbox[64];
    char path[800];
    pid_t pid;
    unsigned long long start;
    bool governed, retired, seen_file;
    time_t retired_at;
    off_t offset;
    unsigned long records;
} source;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool on;
static int out_fd = -1;
static char *queue[QUEUE_RECORDS];
static size_t qhead, qlen, qbytes, qmax = QUEUE_RECORDS;
static source sources[MAX_SOURCES];
static size_t nsources;

/* drops: counted, one warning at once, then one per WARN_EVERY_S */
typedef struct {
    const char *what;
    unsigned long since_warn, total;
    time_t last_warn;
    bool warned;
} dropcount;

static dropcount full_drops = {.what = "the audit queue is full: records were dropped (a coverage gap)"};
static dropcount orphan_drops = {.what = "unattributed audit records were dropped (their source's owner ended over "
                                         "5 s before)"};

static void drop(dropcount *d, unsigned long n)
{
    time_t now = time(NULL);
    d->since_warn += n, d->total += n;
    if (!d->warned || now - d->last_warn >= WARN_EVERY_S) {
        fprintf(stderr, "mxc-gateway: warning: %s: %lu since the last warning, %lu in all\n", d->what, d->since_warn,
                d->total);
        d->warned = true, d->last_warn = now, d->since_warn = 0;
    }
}

bool gw_audit_on(void) { return on; }

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Under mu. */
static void enqueue_text(char *text)
{
    size_t len = strlen(text);
    if (qlen == qmax || qbytes + len > QUEUE_BYTES) {
        free(text);
        drop(&full_drops, 1);
        return;
    }
    queue[(qhead + qlen) % QUEUE_RECORDS] = text;
    qlen++, qbytes += len;
    pthread_cond_signal(&cv);
}

void gw_audit_emit(json_t *rec)
{
    if (!on || !rec) {
        json_decref(rec);
        return;
    }
    if (!json_object_get(rec, "time"))
        json_object_set_new(rec, "time", json_integer(now_ms()));
    if (!json_object_get(rec, "metadata"))
        json_object_set_new(rec, "metadata", json_pack("{s:{s:s}, s:s}", "product", "name", "mxc-gateway", "version",
                                                       "1.1.0"));
    char *text = json_dumps(rec, JSON_COMPACT);
    json_decref(rec);
    if (!text)
        return;
    pthread_mutex_lock(&mu);
    enqueue_text(text);
    pthread_mutex_unlock(&mu);
}

void gw_audit_process(const char *sandbox, const char *backend, int activity, pid_t pid, int exit_code)
{
    json_t *r = json_pack("{s:i, s:s, s:i, s:s, s:i, s:{s:i}, s:{s:s, s:s}}", "class_uid", 1007, "class_name",
                          "Process Activity", "activity_id", activity, "activity_name",
                          activity == GW_AUDIT_LAUNCH ? "Launch" : "Terminate", "severity_id", 1, "process", "pid",
                          (int)pid, "unmapped", "sandbox", sandbox, "backend", backend);
    if (activity == GW_AUDIT_TERMINATE)
        json_object_set_new(r, "exit_code", json_integer(exit_code));
    gw_audit_emit(r);
}

void gw_audit_refused(const char *sandbox, const char *reason)
{
    gw_audit_emit(json_pack("{s:i, s:s, s:i, s:s, s:s, s:s, s:i, s:{s:s}}", "class_uid", 6003, "class_name",
                            "API Activity", "activity_id", 1, "activity_name", "Create", "status", "Failure",
                            "status_detail", reason, "severity_id", 3, "unmapped", "sandbox", sandbox ? sandbox : ""));
}

void gw_audit_source_add(const char *sandbox, const char *path, pid_t pid, unsigned long long start, bool governed)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    if (nsources < MAX_SOURCES) {
        source *s = &sources[nsources++];
        memset(s, 0, sizeof *s);
        snprintf(s->sandbox, sizeof s->sandbox, "%s", sandbox);
        snprintf(s->path, sizeof s->path, "%s", path);
        s->pid = pid, s->start = start, s->governed = governed;
    }
    pthread_mutex_unlock(&mu);
}

void gw_audit_source_retire(pid_t pid, unsigned long long start)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nsources; i++)
        if (sources[i].pid == pid && sources[i].start == start && !sources[i].retired) {
            sources[i].retired = true;
            sources[i].retired_at = time(NULL);
        }
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

/* New complete lines of s's file: attributed while its key lives or is
 * within retention (attribute), else counted as unattributed drops. */
static void tail(source *s, bool attribute)
{
    int fd = open(s->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    s->seen_file = true;
    char buf[65536];
    ssize_t n;
    while ((n = pread(fd, buf, sizeof buf - 1, s->offset)) > 0) {
        buf[n] = '\0';
        char *end = strrchr(buf, '\n');
        if (!end)
            break; /* a line still being written */
        s->offset += end - buf + 1;
        *end = '\0';
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
            if (!attribute) {
                drop(&orphan_drops, 1);
                continue;
            }
            json_t *r = json_loads(line, 0, NULL);
            if (!json_is_object(r)) {
                json_decref(r);
                continue;
            }
            json_t *um = json_object_get(r, "unmapped");
            if (!json_is_object(um)) {
                um = json_object();
                json_object_set_new(r, "unmapped", um);
            }
            json_object_set_new(um, "sandbox", json_string(s->sandbox)); /* by the generation key's owner */
            json_object_set_new(um, "ownerPid", json_integer(s->pid));
            if (!json_object_get(r, "time"))
                json_object_set_new(r, "time", json_integer(now_ms()));
            char *text = json_dumps(r, JSON_COMPACT);
            json_decref(r);
            if (text)
                enqueue_text(text);
            s->records++;
        }
    }
    close(fd);
}

static void finding_zero_events(const source *s)
{
    char *text = NULL;
    json_t *r = json_pack("{s:i, s:s, s:i, s:s, s:i, s:I, s:{s:s, s:s}, s:{s:{s:s}, s:s}}", "class_uid", 2004,
                          "class_name", "Detection Finding", "activity_id", 1, "activity_name", "Create", "severity_id",
                          3, "time", (json_int_t)now_ms(), "finding_info", "title", "mxc-proxy-audit-zero-events", "desc",
                          "the sandbox's egress proxy never opened its audit sink: its network decisions are not in "
                          "this log", "metadata", "product", "name", "mxc-gateway", "version", "1.1.0");
    json_object_set_new(r, "unmapped", json_pack("{s:s}", "sandbox", s->sandbox));
    text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    if (text)
        enqueue_text(text);
}

static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        if (!qlen)
            pthread_cond_timedwait(&cv, &mu, &until);
        time_t now = time(NULL);
        for (size_t i = 0; i < nsources;) {
            source *s = &sources[i];
            bool expired = s->retired && now - s->retired_at > RETENTION_S;
            tail(s, !expired);
            if (expired) {
                if (s->governed && !s->seen_file)
                    finding_zero_events(s);
                tail(s, false); /* what came after retention: unattributed */
                sources[i] = sources[--nsources];
                continue;
            }
            i++;
        }
        while (qlen) {
            char *text = queue[qhead];
            qhead = (qhead + 1) % QUEUE_RECORDS;
            qlen--, qbytes -= strlen(text);
            pthread_mutex_unlock(&mu);
            size_t len = strlen(text);
            text[len] = '\n'; /* the NUL becomes the line's end; written as one append */
            if (write(out_fd, text, len + 1) < 0)
                (void)0;
            free(text);
            pthread_mutex_lock(&mu);
        }
    }
    return NULL;
}

static int mkdir_p(const char *path)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(tmp, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

int gw_audit_init(char *why, size_t whysz)
{
    const char *a = getenv("OPENSHELL_OCSF_JSON"), *b = getenv("MXC_OCSF_JSON");
    if (!((a && !strcmp(a, "1")) || (b && !strcmp(b, "1"))))
        return 0;
    const char *dir = getenv("OPENSHELL_OCSF_LOG_DIR");
    char d[600];
    if (dir && dir[0] == '/')
        snprintf(d, sizeof d, "%s", dir);
    else if (geteuid() == 0)
        snprintf(d, sizeof d, "/var/log/mxc");
    else
        snprintf(d, sizeof d, "%s/.local/state/mxc/logs", getenv("HOME") ? getenv("HOME") : "/tmp");
    char path[700];
    snprintf(path, sizeof path, "%s/mxc-gateway-ocsf.jsonl", d);
    if (mkdir_p(d) < 0 ||
        (out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
        snprintf(why, whysz, "the OCSF audit sink %s cannot be opened: %s", path, strerror(errno));
        return -1;
    }
    const char *qm = getenv("MXC_OCSF_QUEUE_MAX"); /* tests: a smaller queue, to see the drops */
    if (qm && atoi(qm) > 0 && atoi(qm) < QUEUE_RECORDS)
        qmax = (size_t)atoi(qm);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, writer, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        snprintf(why, whysz, "cannot start the audit writer");
        return -1;
    }
    on = true;
    fprintf(stderr, "mxc-gateway: OCSF audit records to %s\n", path);
    return 0;
}
