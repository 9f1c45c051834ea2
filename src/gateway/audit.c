/* audit.c — see audit.h. */
#include "audit.h"
#include "front.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_RECORDS 4096
#define QUEUE_BYTES (16u << 20)
#define RETENTION_S 5
#define WARN_EVERY_S 30
#define LOG_NAME "mxc-gateway-ocsf.jsonl"
#define LINE_MAX_BYTES (16u << 10) /* a proxy record longer than this is dropped */

typedef struct {
    char sandbox[64];
    char path[800];
    pid_t pid;
    unsigned long long start;
    bool governed, retired, seen_file, skipping;
    time_t retired_at;
    off_t offset, punched;
    unsigned long records;
    double tokens;         /* records it may yield now (GW_AUDIT_SOURCE_RATE a second) */
    long long last_ns;
    unsigned long over_rate; /* dropped over the rate, not yet said */
    time_t said_at;          /* when such drops were last said */
} source;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool on;
static int out_fd = -1;
static char *queue[QUEUE_RECORDS];
static size_t qhead, qlen, qbytes, qmax = QUEUE_RECORDS;
static source *sources; /* every governed sandbox's, until it is deleted */
static size_t nsources;
static size_t log_max = GW_AUDIT_LOG_MAX, source_rate = GW_AUDIT_SOURCE_RATE;
static char adir[600];
static int adfd = -1;
static off_t out_size;

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
static dropcount rate_drops = {.what = "a sandbox's proxy records over the rate cap were dropped (each said in the "
                                       "log as an mxc-proxy-audit-dropped finding)"};
static dropcount long_drops = {.what = "proxy records longer than 16 KiB were dropped"};

static void warn(dropcount *d, time_t now)
{
    fprintf(stderr, "mxc-gateway: warning: %s: %lu since the last warning, %lu in all\n", d->what, d->since_warn,
            d->total);
    d->warned = true, d->last_warn = now, d->since_warn = 0;
}

static void drop(dropcount *d, unsigned long n)
{
    time_t now = time(NULL);
    d->since_warn += n, d->total += n;
    if (!d->warned || now - d->last_warn >= WARN_EVERY_S)
        warn(d, now);
}

/* The aggregated warning is due even when no further drop comes to trigger
 * it (force: at shutdown, whatever is still unreported). */
static void warn_pending(dropcount *d, bool force)
{
    time_t now = time(NULL);
    if (d->since_warn && (force || now - d->last_warn >= WARN_EVERY_S))
        warn(d, now);
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
    if (pid <= 0) /* mock mode: no process */
        json_object_del(json_object_get(r, "process"), "pid");
    gw_audit_emit(r);
}

void gw_audit_lost(const char *sandbox, const char *backend, const char *why)
{
    gw_audit_emit(json_pack("{s:i, s:s, s:i, s:s, s:i, s:s, s:{s:s, s:s}}", "class_uid", 1007, "class_name",
                            "Process Activity", "activity_id", GW_AUDIT_TERMINATE, "activity_name", "Terminate",
                            "severity_id", 3, "status_detail", why, "unmapped", "sandbox", sandbox, "backend", backend));
}

void gw_audit_refused(const char *sandbox, const char *reason)
{
    gw_audit_emit(json_pack("{s:i, s:s, s:i, s:s, s:s, s:s, s:i, s:{s:s}}", "class_uid", 6003, "class_name",
                            "API Activity", "activity_id", 1, "activity_name", "Create", "status", "Failure",
                            "status_detail", reason, "severity_id", 3, "unmapped", "sandbox", sandbox ? sandbox : ""));
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void gw_audit_source_add(const char *sandbox, const char *path, pid_t pid, unsigned long long start, bool governed)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    source *g = realloc(sources, (nsources + 1) * sizeof *sources);
    if (g) {
        sources = g;
        source *s = &sources[nsources++];
        memset(s, 0, sizeof *s);
        snprintf(s->sandbox, sizeof s->sandbox, "%s", sandbox);
        snprintf(s->path, sizeof s->path, "%s", path);
        s->pid = pid, s->start = start, s->governed = governed;
        s->tokens = (double)source_rate * 10, s->last_ns = mono_ns(); /* a burst of 10 s */
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

static void finding_zero_events(const source *s);
static void finding_rate(source *s);
static void tail(source *s, bool attribute);

void gw_audit_source_forget(const char *sandbox)
{
    if (!on)
        return;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nsources;) {
        if (!strcmp(sources[i].sandbox, sandbox)) {
            source *s = &sources[i];
            tail(s, !s->retired || time(NULL) - s->retired_at <= RETENTION_S); /* its last lines */
            if (s->governed && !s->seen_file)
                finding_zero_events(s);
            if (s->over_rate)
                finding_rate(s);
            sources[i] = sources[--nsources];
            continue;
        }
        i++;
    }
    pthread_mutex_unlock(&mu);
}

/* Whether s may yield one more record now (its rate cap). */
static bool within_rate(source *s)
{
    long long now = mono_ns();
    s->tokens += (double)(now - s->last_ns) * (double)source_rate / 1e9;
    if (s->tokens > (double)source_rate * 10)
        s->tokens = (double)source_rate * 10;
    s->last_ns = now;
    if (s->tokens < 1) {
        s->over_rate++;
        drop(&rate_drops, 1);
        return false;
    }
    s->tokens -= 1;
    return true;
}

/* What was read of s's file is freed (a hole punched: the proxy appends,
 * so the file's length stays and its blocks go), so the file a workload
 * makes its proxy write holds at most what is not yet read. */
static void release(source *s, int fd)
{
    off_t upto = s->offset & ~(off_t)4095;
    if (upto > s->punched && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, s->punched, upto - s->punched) == 0)
        s->punched = upto;
}

/* New complete lines of s's file: attributed while its key lives or is
 * within retention (attribute), else counted as unattributed drops. */
static void tail(source *s, bool attribute)
{
    int fd = open(s->path, O_RDWR | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }
    s->seen_file = true;
    char buf[LINE_MAX_BYTES + 1];
    ssize_t n;
    while ((n = pread(fd, buf, sizeof buf - 1, s->offset)) > 0) {
        buf[n] = '\0';
        char *start = buf, *end = strrchr(buf, '\n');
        if (s->skipping) { /* the rest of a line too long to keep */
            char *nl = memchr(buf, '\n', (size_t)n);
            s->offset += nl ? nl - buf + 1 : n;
            s->skipping = !nl;
            continue;
        }
        if (!end) {
            if ((size_t)n == sizeof buf - 1) { /* no end within the bound: dropped, not waited for */
                drop(&long_drops, 1);
                s->offset += n;
                s->skipping = true;
                continue;
            }
            break; /* a line still being written */
        }
        s->offset += end - buf + 1;
        *end = '\0';
        for (char *line = strtok(start, "\n"); line; line = strtok(NULL, "\n")) {
            if (!attribute) {
                drop(&orphan_drops, 1);
                continue;
            }
            if (!within_rate(s))
                continue;
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
    release(s, fd);
    close(fd);
}

/* A sandbox's proxy records dropped over the rate cap, said in the log. */
static void finding_rate(source *s)
{
    json_t *r = json_pack("{s:i, s:s, s:i, s:s, s:i, s:I, s:{s:s, s:s}, s:{s:{s:s}, s:s}}", "class_uid", 2004,
                          "class_name", "Detection Finding", "activity_id", 1, "activity_name", "Create", "severity_id",
                          3, "time", (json_int_t)now_ms(), "finding_info", "title", "mxc-proxy-audit-dropped", "desc",
                          "records of the sandbox's egress proxy were dropped: more than the sink's rate cap",
                          "metadata", "product", "name", "mxc-gateway", "version", "1.1.0");
    json_object_set_new(r, "unmapped", json_pack("{s:s, s:I, s:I}", "sandbox", s->sandbox, "dropped",
                                                 (json_int_t)s->over_rate, "ratePerSecond", (json_int_t)source_rate));
    s->over_rate = 0;
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    if (text)
        enqueue_text(text);
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

static bool started, stopping, stopped;

int gw_kernel_audit_enabled(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
    if (fd < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct audit_status st;
    } req = {.h = {.nlmsg_len = NLMSG_LENGTH(0), .nlmsg_type = AUDIT_GET, .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1}};
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int enabled = -1;
    if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        close(fd);
        return -1;
    }
    char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (int tries = 0; tries < 4 && enabled < 0; tries++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            break;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; n > 0 && NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == AUDIT_GET && h->nlmsg_len >= NLMSG_LENGTH(sizeof(__u32) * 2)) {
                struct audit_status st = {0};
                size_t len = h->nlmsg_len - NLMSG_LENGTH(0);
                memcpy(&st, NLMSG_DATA(h), len < sizeof st ? len : sizeof st);
                enabled = st.enabled != 0;
            } else if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = NLMSG_DATA(h);
                if (e->error)
                    tries = 4;
            }
        }
    }
    close(fd);
    return enabled;
}

/* Filesystem denials come from Landlock's audit records, which the kernel
 * writes only while its audit is enabled (a host setting mxc leaves alone)
 * and which this gateway does not collect yet: the gap is said once, as a
 * finding, never hidden. */
static void finding_no_landlock_audit(int enabled)
{
    json_t *r = json_pack("{s:i, s:s, s:i, s:s, s:i, s:I, s:{s:s, s:s}, s:{s:{s:s}, s:s}}", "class_uid", 2004,
                          "class_name", "Detection Finding", "activity_id", 1, "activity_name", "Create", "severity_id",
                          2, "time", (json_int_t)now_ms(), "finding_info", "title", "mxc-landlock-audit-unavailable",
                          "desc",
                          enabled == 0 ? "the kernel's audit is disabled on this host, so Landlock logs no filesystem "
                                         "denial: they are not in this log (mxc does not change that host setting)"
                          : enabled > 0 ? "the kernel's audit is enabled, but this gateway does not collect Landlock's "
                                          "records: filesystem denials are in the host's audit log, not in this one"
                                        : "the kernel's audit status cannot be read: filesystem denials are not in "
                                          "this log",
                          "metadata", "product", "name", "mxc-gateway", "version", "1.1.0");
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    if (text)
        enqueue_text(text);
}

/* The new file, made under a temporary name in the audit directory (the
 * gateway's own: no one else writes there), begins with the finding that
 * says the old one became .1.  Returns its descriptor, or -1. */
static int fresh_file(long long gone)
{
    unlinkat(adfd, LOG_NAME ".new", 0); /* a rotation cut short before */
    int fd = openat(adfd, LOG_NAME ".new", O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                    0600);
    if (fd < 0)
        return -1;
    json_t *r = json_pack("{s:i, s:s, s:i, s:s, s:i, s:I, s:{s:s, s:s}, s:{s:{s:s}, s:s}}", "class_uid", 2004,
                          "class_name", "Detection Finding", "activity_id", 1, "activity_name", "Create", "severity_id",
                          2, "time", (json_int_t)now_ms(), "finding_info", "title", "mxc-gateway-audit-rotated", "desc",
                          "the audit log reached its cap: what came before is in " LOG_NAME ".1, and the older "
                          "file it replaced was discarded",
                          "metadata", "product", "name", "mxc-gateway", "version", "1.1.0");
    json_object_set_new(r, "unmapped", json_pack("{s:I, s:I}", "capBytes", (json_int_t)log_max, "discardedBytes",
                                                 (json_int_t)gone));
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    size_t len = text ? strlen(text) : 0;
    bool ok = text && write(fd, text, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
    free(text);
    if (!ok) {
        close(fd);
        unlinkat(adfd, LOG_NAME ".new", 0);
        return -1;
    }
    return fd;
}

/* The new file takes the log's name and the full one becomes .1 (the
 * older .1 discarded), each by one rename: the name never goes missing
 * for a reader tailing it.  Where the filesystem cannot exchange two
 * names, the full file is linked to .1 first, then replaced. */
static bool swap_in(void)
{
    if (renameat2(adfd, LOG_NAME ".new", adfd, LOG_NAME, RENAME_EXCHANGE) == 0) {
        /* the new file has the name: were .1 not replaced, the full one stays as .new */
        (void)renameat(adfd, LOG_NAME ".new", adfd, LOG_NAME ".1");
        return true;
    }
    if (errno != EINVAL && errno != ENOSYS)
        return false;
    unlinkat(adfd, LOG_NAME ".1.new", 0);
    return linkat(adfd, LOG_NAME, adfd, LOG_NAME ".1.new", 0) == 0 &&
           renameat(adfd, LOG_NAME ".1.new", adfd, LOG_NAME ".1") == 0 &&
           renameat(adfd, LOG_NAME ".new", adfd, LOG_NAME) == 0;
}

/* The sink's file is full: it becomes .1 (the older .1 discarded) and a
 * new one, beginning with the finding that says so, takes its name. */
static void rotate(void)
{
    struct stat old, now;
    long long gone = fstatat(adfd, LOG_NAME ".1", &old, AT_SYMLINK_NOFOLLOW) == 0 ? (long long)old.st_size : 0;
    int fd = fresh_file(gone);
    if (fd >= 0 && (!swap_in() || fstat(fd, &now) < 0)) {
        close(fd);
        unlinkat(adfd, LOG_NAME ".new", 0);
        fd = -1;
    }
    if (fd < 0) { /* nothing more is written: the cap holds */
        fprintf(stderr, "mxc-gateway: warning: the OCSF audit log %s/%s cannot be rotated: no more records are "
                "written\n", adir, LOG_NAME);
        close(out_fd);
        out_fd = -1;
        return;
    }
    close(out_fd);
    out_fd = fd, out_size = now.st_size;
}

static void write_record_line(char *text)
{
    size_t len = strlen(text);
    if (out_fd >= 0 && out_size > 0 && out_size + (off_t)len + 1 > (off_t)log_max)
        rotate();
    if (out_fd < 0)
        return;
    text[len] = '\n'; /* the NUL becomes the line's end; written as one append */
    if (write(out_fd, text, len + 1) == (ssize_t)len + 1)
        out_size += (off_t)len + 1;
}

static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!stopped) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        if (!qlen)
            pthread_cond_timedwait(&cv, &mu, &until);
        time_t now = time(NULL);
        for (size_t i = 0; i < nsources; i++) {
            source *s = &sources[i];
            bool expired = s->retired && now - s->retired_at > RETENTION_S;
            if (expired && s->governed && !s->seen_file) {
                finding_zero_events(s);
                s->governed = false; /* said once */
            }
            /* kept until its sandbox is deleted: what comes later is
             * unattributed, dropped and counted, its blocks freed */
            tail(s, !expired);
            if (s->over_rate && now != s->said_at) { /* at most once a second */
                finding_rate(s);
                s->said_at = now;
            }
        }
        while (qlen) {
            char *text = queue[qhead];
            qhead = (qhead + 1) % QUEUE_RECORDS;
            qlen--, qbytes -= strlen(text);
            pthread_mutex_unlock(&mu);
            write_record_line(text);
            free(text);
            pthread_mutex_lock(&mu);
        }
        warn_pending(&full_drops, false);
        warn_pending(&orphan_drops, false);
        warn_pending(&rate_drops, false);
        warn_pending(&long_drops, false);
        if (stopping) { /* everything queued before gw_audit_close is written */
            stopped = true;
            pthread_cond_broadcast(&cv);
        }
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

const char *gw_audit_dir(void) { return on ? adir : NULL; }

static size_t knob(const char *name, size_t dflt, size_t least)
{
    const char *v = getenv(name);
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end && n >= least && n <= dflt ? (size_t)n : dflt;
}

int gw_audit_init(mxc_error *e)
{
    const char *a = getenv("OPENSHELL_OCSF_JSON"), *b = getenv("MXC_OCSF_JSON");
    if (!((a && !strcmp(a, "1")) || (b && !strcmp(b, "1"))))
        return 0;
    const char *dir = getenv("OPENSHELL_OCSF_LOG_DIR"), *home = getenv("HOME");
    struct stat hs;
    if (dir && dir[0] == '/') {
        snprintf(adir, sizeof adir, "%s", dir);
    } else if (geteuid() == 0) {
        snprintf(adir, sizeof adir, "/var/log/mxc");
    } else if (home && home[0] == '/' && stat(home, &hs) == 0 && hs.st_uid == geteuid()) {
        snprintf(adir, sizeof adir, "%s/.local/state/mxc/logs", home);
    } else { /* never a name in /tmp another user could make first */
        char priv[512];
        if (mxc_private_dir(true, priv, sizeof priv, e) < 0)
            return -1;
        snprintf(adir, sizeof adir, "%s/mxc-logs", priv);
    }
    struct stat st;
    if ((adfd = mxc_open_own_dir(adir, 022)) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR,
                "the OCSF audit directory %s is unusable: it must be a directory of the gateway's uid "
                "that no one else can write", adir);
        return -1;
    }
    out_fd = openat(adfd, LOG_NAME, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    if (out_fd < 0 || fstat(out_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "the OCSF audit sink %s/%s cannot be opened: %s", adir, LOG_NAME,
                out_fd < 0 ? strerror(errno) : "not a regular file with one link");
        return -1;
    }
    out_size = st.st_size;
    const char *qm = getenv("MXC_OCSF_QUEUE_MAX"); /* tests: a smaller queue, to see the drops */
    if (qm && atoi(qm) > 0 && atoi(qm) < QUEUE_RECORDS)
        qmax = (size_t)atoi(qm);
    log_max = knob("MXC_OCSF_LOG_MAX", GW_AUDIT_LOG_MAX, 65536); /* tests: lower caps only */
    source_rate = knob("MXC_OCSF_SOURCE_RATE", GW_AUDIT_SOURCE_RATE, 1);
    on = true;
    fprintf(stderr, "mxc-gateway: OCSF audit records to %s/%s\n", adir, LOG_NAME);
    int kernel_audit = gw_kernel_audit_enabled();
    pthread_mutex_lock(&mu);
    finding_no_landlock_audit(kernel_audit); /* the log's first record */
    pthread_mutex_unlock(&mu);
    return 0;
}

int gw_audit_start(mxc_error *e)
{
    if (!on)
        return 0;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, writer, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "cannot start the audit writer");
        return -1;
    }
    started = true;
    return 0;
}

void gw_audit_close(void)
{
    if (!started)
        return;
    pthread_mutex_lock(&mu);
    stopping = true;
    pthread_cond_signal(&cv);
    while (!stopped)
        pthread_cond_wait(&cv, &mu);
    warn_pending(&full_drops, true);
    warn_pending(&orphan_drops, true);
    warn_pending(&rate_drops, true);
    warn_pending(&long_drops, true);
    pthread_mutex_unlock(&mu);
}
