/* proxy.c — see proxy.h.
 *
 * A connection moves HEAD → (RESOLVING) → CONNECTING → RELAY.  Refusals are
 * answered at once and the connection closed: 400/414/431 (the head), 407
 * (credentials: checked first, before the policy looks at the target or any
 * lookup runs), 403 with an X-Mxc-Deny-Reason token (the policy), 502 (no checked
 * address answered), 503 (the connection cap), 504 (a head, a name lookup
 * or a connect that took too long).  At the cap, or out of descriptors, the
 * oldest connection still waiting for its head is shed (503) for the
 * newcomer: idle connections never lock out the sandbox's next request; with
 * nothing to shed the newcomer gets the 503 (out of descriptors: through a
 * descriptor kept in reserve) and accepting pauses until a connection closes
 * or ACCEPT_PAUSE_MS pass — never an accept retried at once.  The relay is
 * splice(2) through a pipe per direction; an
 * absolute-form request forwards exactly its body — Content-Length bytes, or
 * a chunked body read through its framing (httphead.h), a broken framing
 * ending the exchange — and nothing pipelined after it. */
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "credbind.h"
#include "httphead.h"
#include "localroute.h"
#include "reply.h"

#define MAX_ADDRS 16
#define CONNECT_TIMEOUT_MS 10000
#define HALF_CLOSED_MS 30000 /* a tunnel one side has ended: the other gets this long, not the idle timeout */
#define CHUNK (256 * 1024)     /* the size a relay pipe grows to once it has filled */
#define PIPE_MAX (1024 * 1024) /* ... and once it has filled at CHUNK: the most an unprivileged pipe gets (pipe-max-size) */
#define PIPE_START (16 * 1024) /* a relay pipe's size at first (4 pages) */
#define PIPE_MIN 4096          /* past this proxy's pipe budget: one page, still correct, slower */
#define STREAM_LOWAT (16 * 1024) /* a stream's destination socket: its TCP_NOTSENT_LOWAT (pump) */
#define ACCEPT_PAUSE_MS 200      /* out of descriptors with nothing to shed: how long accepting rests */
#define ACCEPT_BATCH 256         /* accepted per round at most: the other events get their turn */
#define TICK_MS 500              /* the loop wakes at least this often (timeouts, the audit's summaries) */

typedef enum { C_HEAD, C_RESOLVING, C_CONNECTING, C_RELAY, C_HANDOFF } cstate;

typedef struct conn conn;

typedef struct {
    conn *c;
    bool upstream;
} tag;

/* One direction of the relay: what was written ahead of the stream (a reply,
 * a rewritten head, bytes read with the head), then src spliced into dst. */
typedef struct {
    char *pre;
    size_t plen, poff;
    int pipe[2];
    size_t pipesz;   /* its capacity, as counted against the budget (pipe_bytes) */
    size_t inpipe;
    long long limit; /* bytes still to read from src; -1: to its end */
    mxc_chunked *ck; /* a chunked request body: read through its framing, not spliced */
    bool src_done;   /* nothing more will be read */
    bool no_grow;    /* the kernel refused to grow the pipe (the user's budget): not asked again */
    bool half_close; /* shut dst's write side when src ends (a tunnel) */
    bool stream;     /* its pipe has grown to PIPE_MAX: dst's unsent queue is kept short (STREAM_LOWAT) */
    uint64_t bytes;
} dir;

struct conn {
    conn *next, *prev;
    conn *hq_next, *hq_prev; /* the queue of connections still waiting for their head, oldest first */
    bool in_hq;
    int cfd, ufd;
    cstate st;
    bool closed;   /* its sockets are closed; freed after this round of events (or when its lookup answers) */
    uint32_t want[2]; /* client, upstream socket: its events in the epoll set (0: not in it) */
    tag ct, ut;
    char *buf;     /* the head as read */
    size_t blen;
    mxc_head head;
    char canon[MXC_HOST_MAX + 1];
    char key[MXC_HOST_MAX + 1]; /* C_HANDOFF: the bound host (credbind.h form) */
    struct sockaddr_storage addr[MAX_ADDRS];
    size_t naddr, next_addr;
    char ip[INET6_ADDRSTRLEN];
    dir cu, uc; /* client→upstream, upstream→client */
    uint64_t t0, deadline;
};

typedef struct {
    conn *c;
    char name[MXC_HOST_MAX + 1];
    unsigned port;
    const char *hosts;
    struct sockaddr_storage addr[MAX_ADDRS];
    size_t naddr;
    int rfd;
} lookup;

static const mxc_proxy_config *cfg;
static int ep = -1, resolved[2] = {-1, -1};
static conn *conns, *grave, *handoff;
static unsigned nconns;
static size_t pipe_bytes; /* the relay pipes' capacity, all connections: kept <= cfg->pipe_bytes_max (proxy.h) */
static atomic_uint nintercept; /* connections on interception threads: they count against the cap too */
static unsigned nabandoned;    /* closed while their lookup still runs (resolve-timeout): so do they */
static conn *hq_head, *hq_tail; /* connections without a complete head: the ones shed first */
static mxc_auditlog *alog;
static int k_listen, k_watch, k_resolved; /* the loop's own epoll tags */
static int reserve_fd = -1;   /* held to answer one newcomer when descriptors run out */
static bool accept_paused;    /* the listener is out of the epoll set */
static bool fd_freed;         /* a connection closed since accepting paused */
static uint64_t resume_at;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the audit ---------------------------------------------------------- */

static void json_str(char *out, size_t sz, const char *s)
{
    size_t o = 0;
    for (; s && *s && o + 7 < sz; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            o += (size_t)snprintf(out + o, sz - o, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            o += (size_t)snprintf(out + o, sz - o, "\\u%04x", ch);
        else
            out[o++] = (char)ch;
    }
    out[o] = '\0';
}

/* One OCSF-shaped record (class 4002 HTTP Activity; 4001 Network Activity
 * for a tunnel): what was decided, never the credentials. */
static void audit_cred(const conn *c, const char *disposition, const char *reason, const char *credential)
{
    if (cfg->audit_fd < 0)
        return;
    char host[2 * MXC_HOST_MAX + 8] = "", sb[300] = "", cred[200] = "";
    if (credential) { /* the credential's name only: never its secret */
        char name[2 * MXC_CRED_NAME_MAX + 8];
        json_str(name, sizeof name, credential);
        snprintf(cred, sizeof cred, ",\"credential\":\"%s\"", name);
    }
    json_str(host, sizeof host, c->head.host);
    json_str(sb, sizeof sb, cfg->sandbox);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[2048]; /* every field bounded: the host (escaped) 518, the sandbox 300, the credential 200 */
    int n = snprintf(line, sizeof line,
                     "{\"class_uid\":%d,\"category_uid\":4,\"time\":%lld,\"disposition\":\"%s\",\"reason\":\"%s\","
                     "\"sandbox\":\"%s\",\"dst_endpoint\":{\"hostname\":\"%s\",\"port\":%u,\"ip\":\"%s\"},"
                     "\"traffic\":{\"bytes_out\":%llu,\"bytes_in\":%llu},\"duration\":%llu%s}\n",
                     c->head.connect ? 4001 : 4002, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, disposition,
                     reason ? reason : "", sb, host, c->head.port, c->ip, (unsigned long long)c->cu.bytes,
                     (unsigned long long)c->uc.bytes, (unsigned long long)(now_ms() - c->t0), cred);
    if (n > 0 && (size_t)n < sizeof line)
        mxc_auditlog_write(alog, disposition, line, (size_t)n, now_ms());
}

static void audit(const conn *c, const char *disposition, const char *reason)
{
    audit_cred(c, disposition, reason, NULL);
}

/* ---- connections -------------------------------------------------------- */

static void dir_init(dir *d)
{
    d->pipe[0] = d->pipe[1] = -1;
    d->limit = -1;
}

static void dir_free(dir *d)
{
    free(d->pre);
    free(d->ck);
    if (d->pipe[0] >= 0)
        close(d->pipe[0]), close(d->pipe[1]);
    pipe_bytes -= d->pipesz;
}

/* The queue of connections still waiting for their head (oldest first):
 * the ones shed at the cap or when descriptors run out. */
static void hq_add(conn *c)
{
    c->hq_prev = hq_tail;
    c->hq_next = NULL;
    if (hq_tail)
        hq_tail->hq_next = c;
    else
        hq_head = c;
    hq_tail = c;
    c->in_hq = true;
}

static void hq_remove(conn *c)
{
    if (!c->in_hq)
        return;
    if (c->hq_prev)
        c->hq_prev->hq_next = c->hq_next;
    else
        hq_head = c->hq_next;
    if (c->hq_next)
        c->hq_next->hq_prev = c->hq_prev;
    else
        hq_tail = c->hq_prev;
    c->in_hq = false;
}

/* Off the list, onto the grave: freed once no event of this round can
 * still name it. */
static void unlink_conn(conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    nconns--;
}

static void bury(conn *c)
{
    unlink_conn(c);
    c->next = grave;
    grave = c;
}

static void conn_close(conn *c)
{
    if (c->closed)
        return;
    hq_remove(c);
    if (c->cfd >= 0)
        close(c->cfd);
    if (c->ufd >= 0)
        close(c->ufd);
    c->cfd = c->ufd = -1;
    c->closed = true;
    fd_freed = true;
    if (c->st == C_RESOLVING) { /* its lookup still points here: off the list now, freed by lookup_done */
        unlink_conn(c);
        nabandoned++;
    } else
        bury(c);
}

static const char BUSY[] = "HTTP/1.1 503 Service Unavailable\r\nX-Mxc-Deny-Reason: too-many-connections\r\n"
                           "Connection: close\r\nContent-Length: 0\r\n\r\n";

/* The oldest connection still waiting for its head gives its place (and
 * its descriptor) to a newcomer; false when there is none. */
static bool shed_oldest(void)
{
    conn *c = hq_head;
    if (!c)
        return false;
    (void)!send(c->cfd, BUSY, sizeof BUSY - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    conn_close(c);
    return true;
}

/* A call that makes a descriptor found none left (errno): the oldest
 * connection still waiting for its head makes room; false when none can. */
static bool room_for_fd(void)
{
    return (errno == EMFILE || errno == ENFILE) && shed_oldest();
}

static void conn_free(conn *c)
{
    dir_free(&c->cu);
    dir_free(&c->uc);
    free(c->buf);
    free(c);
}

static void free_grave(void)
{
    while (grave) {
        conn *c = grave;
        grave = c->next;
        conn_free(c);
    }
}

/* A short answer, written once (it fits any socket buffer), then close. */
static void refuse(conn *c, int status, const char *reason, const char *disposition)
{
    char out[512];
    size_t n = mxc_reply_format(out, sizeof out, status, reason);
    if (c->cfd >= 0)
        (void)!send(c->cfd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    audit(c, disposition, reason);
    conn_close(c);
}

/* What a socket of c waits for; none: out of the epoll set (so a hang-up
 * of a socket nothing waits on cannot spin the loop).  Unchanged interest
 * costs no system call (a tunnel in flow keeps the same set chunk after chunk). */
static void watch(conn *c, bool upstream, uint32_t events)
{
    int fd = upstream ? c->ufd : c->cfd;
    uint32_t *want = &c->want[upstream];
    if (events == *want)
        return;
    if (!events) {
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        *want = 0;
        return;
    }
    struct epoll_event ev = {.events = events, .data.ptr = upstream ? &c->ut : &c->ct};
    if (epoll_ctl(ep, *want ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) == 0)
        *want = events;
}

/* ---- the relay ---------------------------------------------------------- */

/* A relay pipe starts small (an idle tunnel holds little of the pipe
 * budget that every mxc-proxy shares, running as nobody) and grows to
 * CHUNK once it fills, then to PIPE_MAX if it fills again (a stream: fewer
 * splices, window updates and pushes per byte; 1 MiB against 256 KiB
 * measured +4-5% tunnel throughput, bench/proxy.py), as long as this
 * proxy's own total stays within cfg->pipe_bytes_max; past it a new pipe
 * gets one page and nothing grows. */
static int pipe_open(dir *d)
{
    int rc, tries = 0;
    while ((rc = pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK)) < 0 && tries++ < 2 && room_for_fd()) /* two descriptors */
        ;
    if (rc < 0)
        return -1;
    size_t want = pipe_bytes + PIPE_START <= cfg->pipe_bytes_max ? PIPE_START : PIPE_MIN;
    int got = fcntl(d->pipe[1], F_SETPIPE_SZ, (int)want);
    if (got <= 0) /* not granted (the user's pipe budget): whatever the kernel made */
        got = fcntl(d->pipe[1], F_GETPIPE_SZ);
    d->pipesz = got > 0 ? (size_t)got : PIPE_MIN;
    pipe_bytes += d->pipesz;
    return 0;
}

static void pipe_grow(dir *d)
{
    size_t next = d->pipesz < CHUNK ? CHUNK : PIPE_MAX;
    if (d->no_grow || d->pipesz >= PIPE_MAX || pipe_bytes - d->pipesz + next > cfg->pipe_bytes_max)
        return;
    int got = fcntl(d->pipe[1], F_SETPIPE_SZ, (int)next);
    if (got <= 0) {
        d->no_grow = true;
        return;
    }
    pipe_bytes = pipe_bytes - d->pipesz + (size_t)got;
    d->pipesz = (size_t)got;
}

/* Moves what it can of one direction; false on a broken connection. */
static bool pump(dir *d, int src, int dst)
{
    while (d->poff < d->plen) {
        ssize_t n = send(dst, d->pre + d->poff, d->plen - d->poff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR;
        d->poff += (size_t)n;
    }
    for (;;) {
        if (d->inpipe) {
            ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->inpipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
            if (n < 0)
                return errno == EAGAIN || errno == EINTR;
            d->inpipe -= (size_t)n;
            d->bytes += (uint64_t)n;
            continue;
        }
        if (d->src_done)
            return true;
        if (d->ck) { /* exactly the body: its framing says where it ends */
            char tmp[16384];
            ssize_t got = recv(src, tmp, d->pipesz < sizeof tmp ? d->pipesz : sizeof tmp, MSG_DONTWAIT);
            if (got < 0)
                return errno == EAGAIN || errno == EINTR;
            long take = got ? mxc_chunked_feed(d->ck, tmp, (size_t)got) : 0;
            if (take < 0 || (take && write(d->pipe[1], tmp, (size_t)take) != take)) /* the pipe is empty here */
                return false;
            d->inpipe += (size_t)take;
            d->src_done = got == 0 || d->ck->done;
            continue;
        }
        size_t most = d->pipesz > CHUNK ? d->pipesz : CHUNK;
        size_t want = d->limit >= 0 && (size_t)d->limit < most ? (size_t)d->limit : most;
        ssize_t n = want ? splice(src, NULL, d->pipe[1], NULL, want, SPLICE_F_NONBLOCK | SPLICE_F_MOVE) : 0;
        if (n < 0)
            return errno == EAGAIN || errno == EINTR;
        if (n == 0) {
            d->src_done = true;
            if (d->half_close)
                shutdown(dst, SHUT_WR);
            return true;
        }
        d->inpipe += (size_t)n;
        if (d->limit >= 0)
            d->limit -= n;
        if (d->inpipe >= d->pipesz) {
            pipe_grow(d);
            /* A stream (its pipe grown to PIPE_MAX): dst takes only what
             * TCP can send at once (its unsent queue under STREAM_LOWAT),
             * the rest waits in the pipe; measured +9-12% tunnel throughput
             * with 16 KiB (4-32 KiB alike, 128 KiB none, 512 KiB worse;
             * bench/proxy.py).  With a 256 KiB pipe it cost 3-5%: a pipe
             * the budget keeps smaller is left as it was. */
            if (!d->stream && d->pipesz >= PIPE_MAX) {
                int lowat = STREAM_LOWAT;
                setsockopt(dst, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
                d->stream = true;
            }
        }
    }
}

static bool dir_idle(const dir *d)
{
    return d->src_done && !d->inpipe && d->poff == d->plen;
}

static void relay(conn *c)
{
    /* upstream→client first: a tunnel's 200 goes out before anything else is tried */
    if (!pump(&c->uc, c->ufd, c->cfd) || !pump(&c->cu, c->cfd, c->ufd)) {
        audit(c, "allowed", "closed");
        conn_close(c);
        return;
    }
    /* done when the upstream has said everything (a forwarded request ends
     * there even if the client would go on) or both ends are finished */
    if (dir_idle(&c->uc) && (dir_idle(&c->cu) || !c->head.connect)) {
        audit(c, "allowed", "done");
        conn_close(c);
        return;
    }
    bool half = c->cu.src_done || c->uc.src_done;
    c->deadline = now_ms() + (half && HALF_CLOSED_MS < cfg->idle_timeout_ms ? HALF_CLOSED_MS : cfg->idle_timeout_ms);
    bool c_in = !c->cu.src_done && !c->cu.inpipe, c_out = c->uc.inpipe || c->uc.poff < c->uc.plen;
    bool u_in = !c->uc.src_done && !c->uc.inpipe, u_out = c->cu.inpipe || c->cu.poff < c->cu.plen;
    watch(c, false, (c_in ? EPOLLIN : 0) | (c_out ? EPOLLOUT : 0));
    watch(c, true, (u_in ? EPOLLIN : 0) | (u_out ? EPOLLOUT : 0));
}

/* The request as the upstream gets it: origin-form, no proxy fields, no
 * hop-by-hop fields, Host from the target, Connection: close. */
static char *rewrite(const conn *c, size_t *len)
{
    const mxc_head *h = &c->head;
    size_t cap = h->head_len + 512, o = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    o += (size_t)snprintf(out, cap, "%.*s %.*s HTTP/1.%d\r\n", (int)h->method.n, h->method.p, (int)h->path.n,
                          h->path.p, h->version_minor);
    for (size_t i = 0; i < h->nfields; i++) {
        if (!mxc_head_hop_by_hop(h->fields[i].name))
            o += (size_t)snprintf(out + o, cap - o, "%.*s: %.*s\r\n", (int)h->fields[i].name.n, h->fields[i].name.p,
                                  (int)h->fields[i].value.n, h->fields[i].value.p);
    }
    bool v6 = h->host_ipv6;
    if (h->port == 80)
        o += (size_t)snprintf(out + o, cap - o, "Host: %s%s%s\r\n", v6 ? "[" : "", h->host, v6 ? "]" : "");
    else
        o += (size_t)snprintf(out + o, cap - o, "Host: %s%s%s:%u\r\n", v6 ? "[" : "", h->host, v6 ? "]" : "", h->port);
    o += (size_t)snprintf(out + o, cap - o, "Connection: close\r\n\r\n");
    *len = o < cap ? o : cap - 1;
    return out;
}

static int set_pre(dir *d, const char *a, size_t alen, const char *b, size_t blen)
{
    d->pre = malloc(alen + blen + 1);
    if (!d->pre)
        return -1;
    memcpy(d->pre, a, alen);
    if (blen)
        memcpy(d->pre + alen, b, blen);
    d->plen = alen + blen;
    return 0;
}

static void start_relay(conn *c)
{
    c->st = C_RELAY;
    if (pipe_open(&c->cu) < 0 || pipe_open(&c->uc) < 0) {
        refuse(c, 502, "resources", "error");
        return;
    }
    const char *rest = c->buf + c->head.head_len;
    size_t nrest = c->blen - c->head.head_len;
    int rc;
    if (c->head.connect) {
        static const char OK[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        rc = set_pre(&c->uc, OK, sizeof OK - 1, NULL, 0);
        if (rc == 0)
            rc = set_pre(&c->cu, rest, nrest, NULL, 0);
        c->cu.half_close = c->uc.half_close = true;
    } else {
        long long body = c->head.content_length > 0 ? c->head.content_length : 0;
        size_t take = (long long)nrest < body ? nrest : (size_t)body;
        if (c->head.chunked) {
            c->cu.ck = calloc(1, sizeof *c->cu.ck);
            long n = c->cu.ck ? mxc_chunked_feed(c->cu.ck, rest, nrest) : -1;
            if (n < 0) {
                refuse(c, 400, "bad-chunked", "denied");
                return;
            }
            take = (size_t)n;
        }
        size_t hl;
        char *h = rewrite(c, &hl);
        rc = h ? set_pre(&c->cu, h, hl, rest, take) : -1;
        free(h);
        c->cu.limit = c->head.chunked ? -1 : body - (long long)take;
        if (c->cu.limit == 0 || (c->cu.ck && c->cu.ck->done))
            c->cu.src_done = true; /* pipelined bytes after the body are never forwarded */
    }
    free(c->buf);
    c->buf = NULL;
    if (rc < 0) {
        refuse(c, 502, "resources", "error");
        return;
    }
    c->cu.bytes += c->cu.plen; /* what was written ahead counts as traffic */
    audit(c, "allowed", "connected");
    relay(c);
}

/* ---- connecting to a checked address ------------------------------------ */

static void established(conn *c);

static void try_connect(conn *c)
{
    while (c->next_addr < c->naddr) {
        struct sockaddr_storage *a = &c->addr[c->next_addr++];
        socklen_t alen = a->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        void *raw = a->ss_family == AF_INET ? (void *)&((struct sockaddr_in *)a)->sin_addr
                                            : (void *)&((struct sockaddr_in6 *)a)->sin6_addr;
        inet_ntop(a->ss_family, raw, c->ip, sizeof c->ip);
        /* the last word, on the address itself: this host (its loopback, any
         * of its own addresses) only where the policy names it (hostpolicy.h) */
        const char *why = NULL;
        int local = mxc_dest_is_local((struct sockaddr *)a);
        if (local < 0 || !mxc_hostpolicy_check_dial(cfg->policy, (struct sockaddr *)a, local == 1, &why)) {
            refuse(c, local < 0 ? 502 : 403, local < 0 ? "resources" : why ? why : "special-address",
                   local < 0 ? "error" : "denied");
            return;
        }
        if (c->ufd >= 0) {
            watch(c, true, 0);
            close(c->ufd);
        }
        c->ufd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->ufd < 0 && room_for_fd())
            c->ufd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->ufd < 0)
            continue;
        if (connect(c->ufd, (struct sockaddr *)a, alen) < 0 && errno != EINPROGRESS)
            continue;
        c->st = C_CONNECTING;
        c->deadline = now_ms() + CONNECT_TIMEOUT_MS;
        /* A near upstream has often answered by the time connect() returns:
         * asking again says so (0, or EISCONN), still going (EALREADY), or
         * how it failed (then the next address) — the same socket, the same
         * checked address, one system call instead of a round of the loop. */
        if (connect(c->ufd, (struct sockaddr *)a, alen) == 0 || errno == EISCONN) {
            established(c);
            return;
        }
        if (errno == EALREADY || errno == EINPROGRESS || errno == EINTR) {
            watch(c, true, EPOLLOUT);
            watch(c, false, 0);
            return;
        }
    }
    refuse(c, 502, "upstream-unreachable", "error");
}

/* ---- interception (intercept.h) ------------------------------------------ */

/* The interception thread's one report: the record, then c is freed (it
 * left the loop's list when it was handed over). */
static void intercept_done(void *arg, const char *disposition, const char *reason, const char *credential,
                           uint64_t bytes_out, uint64_t bytes_in)
{
    conn *c = arg;
    c->cu.bytes = bytes_out;
    c->uc.bytes = bytes_in;
    audit_cred(c, disposition, reason, credential);
    conn_free(c);
    atomic_fetch_sub(&nintercept, 1);
}

static void *intercept_thread(void *arg)
{
    mxc_intercept_run(arg);
    return NULL;
}

/* The host as bindings name it (credbind.h), when a binding covers c's CONNECT. */
static bool bound(const conn *c, char *key, size_t ksz)
{
    const mxc_intercept_ctx *ix = cfg->intercept;
    return ix && c->head.connect && mxc_cred_host_key(c->canon[0] ? c->canon : c->head.host, key, ksz) &&
           mxc_credset_binds(ix->creds, key, c->head.port);
}

/* A connected CONNECT to a bound endpoint leaves the loop: off the list and
 * the epoll set now, onto the hand-off list, to a thread once this round of
 * events (which may still name it) is over. */
static void hand_off(conn *c, const char *key)
{
    if (c->blen > c->head.head_len) { /* TLS bytes before our 200: no client does this; not worth a prefix BIO */
        refuse(c, 400, "early-tunnel-data", "denied");
        return;
    }
    snprintf(c->key, sizeof c->key, "%s", key);
    watch(c, false, 0);
    watch(c, true, 0);
    unlink_conn(c);
    atomic_fetch_add(&nintercept, 1);
    c->st = C_HANDOFF;
    c->next = handoff;
    handoff = c;
}

static void start_interceptions(void)
{
    while (handoff) {
        conn *c = handoff;
        handoff = c->next;
        mxc_intercept_job *j = calloc(1, sizeof *j);
        int rc = -1;
        if (j) {
            *j = (mxc_intercept_job){.ix = cfg->intercept, .cfd = c->cfd, .ufd = c->ufd,
                                     .host_ipv6 = c->head.host_ipv6, .port = c->head.port,
                                     .audit = intercept_done, .audit_arg = c};
            snprintf(j->host, sizeof j->host, "%s", c->head.host);
            snprintf(j->key, sizeof j->key, "%s", c->key);
            unsigned char raw[16];
            j->key_is_ip = inet_pton(AF_INET, c->key, raw) == 1 || inet_pton(AF_INET6, c->key, raw) == 1;
            pthread_t t;
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            pthread_attr_setstacksize(&at, 512 * 1024);
            rc = pthread_create(&t, &at, intercept_thread, j);
            pthread_attr_destroy(&at);
        }
        if (rc == 0)
            continue; /* the sockets and c are the thread's now */
        free(j);
        char out[512];
        size_t n = mxc_reply_format(out, sizeof out, 502, "resources");
        (void)!send(c->cfd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(c->cfd);
        close(c->ufd);
        intercept_done(c, "error", "resources", NULL, 0, 0);
    }
}

unsigned mxc_proxy_intercepting(void)
{
    return atomic_load(&nintercept);
}

/* The upstream socket is connected: to an interception thread, or the relay. */
static void established(conn *c)
{
    char key[MXC_HOST_MAX + 1];
    if (bound(c, key, sizeof key)) {
        hand_off(c, key);
        return;
    }
    start_relay(c);
}

static void connected(conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
        try_connect(c);
        return;
    }
    established(c);
}

/* ---- name lookups (off the loop) ---------------------------------------- */

/* A hosts table (read at start): "address name..." lines, '#' comments. */
static void lookup_table(lookup *l)
{
    FILE *f = fmemopen((void *)l->hosts, strlen(l->hosts), "r");
    if (!f)
        return;
    char line[1024];
    while (l->naddr < MAX_ADDRS && fgets(line, sizeof line, f)) {
        char *save = NULL, *addr = strtok_r(line, " \t\r\n", &save);
        if (!addr || addr[0] == '#')
            continue;
        for (char *n = strtok_r(NULL, " \t\r\n", &save); n && n[0] != '#'; n = strtok_r(NULL, " \t\r\n", &save)) {
            if (strcasecmp(n, l->name) != 0)
                continue;
            struct sockaddr_storage *a = &l->addr[l->naddr];
            memset(a, 0, sizeof *a);
            struct sockaddr_in *v4 = (struct sockaddr_in *)a;
            struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)a;
            if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
                v4->sin_family = AF_INET;
                v4->sin_port = htons((uint16_t)l->port);
                l->naddr++;
            } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
                v6->sin6_family = AF_INET6;
                v6->sin6_port = htons((uint16_t)l->port);
                l->naddr++;
            }
            break;
        }
    }
    fclose(f);
}

static void *lookup_thread(void *arg)
{
    lookup *l = arg;
    if (l->hosts)
        lookup_table(l);
    else {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG}, *res = NULL;
        char port[8], fqdn[MXC_HOST_MAX + 2];
        snprintf(port, sizeof port, "%u", l->port);
        snprintf(fqdn, sizeof fqdn, "%s.", l->name); /* absolute: no search domain turns it into another host */
        if (getaddrinfo(fqdn, port, &hints, &res) == 0) {
            for (struct addrinfo *r = res; r && l->naddr < MAX_ADDRS; r = r->ai_next)
                if ((r->ai_family == AF_INET || r->ai_family == AF_INET6) && r->ai_addrlen <= sizeof l->addr[0])
                    memcpy(&l->addr[l->naddr++], r->ai_addr, r->ai_addrlen);
            freeaddrinfo(res);
        }
    }
    (void)!write(l->rfd, &l, sizeof l);
    return NULL;
}

static void start_lookup(conn *c)
{
    lookup *l = calloc(1, sizeof *l);
    if (!l) {
        refuse(c, 502, "resources", "error");
        return;
    }
    l->c = c;
    snprintf(l->name, sizeof l->name, "%s", c->canon);
    l->port = c->head.port;
    l->hosts = cfg->hosts;
    l->rfd = resolved[1];
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 256 * 1024);
    int rc = pthread_create(&t, &at, lookup_thread, l);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        free(l);
        refuse(c, 502, "resources", "error");
        return;
    }
    c->st = C_RESOLVING;
    c->deadline = now_ms() + cfg->resolve_timeout_ms;
    watch(c, false, 0);
}

static void lookup_done(lookup *l)
{
    conn *c = l->c;
    c->st = C_CONNECTING;
    if (c->closed) { /* given up on while the lookup ran (resolve-timeout): already off the list */
        nabandoned--;
        c->next = grave;
        grave = c;
        free(l);
        return;
    }
    const char *why = NULL;
    for (size_t i = 0; i < l->naddr && !why; i++)
        if (!mxc_hostpolicy_check_addr(cfg->policy, (struct sockaddr *)&l->addr[i], &why) && !why)
            why = "special-address";
    if (!l->naddr)
        why = "no-address";
    if (why) {
        free(l);
        refuse(c, 403, why, "denied");
        return;
    }
    memcpy(c->addr, l->addr, l->naddr * sizeof l->addr[0]);
    c->naddr = l->naddr;
    free(l);
    try_connect(c);
}

/* ---- the head ----------------------------------------------------------- */

static bool token_ok(const char *user, const char *pass)
{
    size_t a = strlen(pass), b = strlen(cfg->token);
    unsigned char diff = (unsigned char)(a != b) | (unsigned char)(strcmp(user, cfg->user) != 0);
    for (size_t i = 0; i < a && i < b; i++)
        diff |= (unsigned char)(pass[i] ^ cfg->token[i]);
    return diff == 0;
}

static void on_head(conn *c)
{
    ssize_t n = recv(c->cfd, c->buf + c->blen, MXC_HEAD_MAX - c->blen, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    c->blen += (size_t)n;
    mxc_head_status st = mxc_head_parse(c->buf, c->blen, &c->head);
    if (st == MXC_HEAD_INCOMPLETE) {
        if (c->blen >= MXC_HEAD_MAX)
            refuse(c, 431, "head-too-large", "denied");
        return;
    }
    hq_remove(c); /* decided from here on: never shed for a newcomer */
    if (st != MXC_HEAD_OK) {
        c->head.host[0] = '\0';
        refuse(c, c->head.status ? c->head.status : 400, c->head.reason ? c->head.reason : "bad-request", "denied");
        return;
    }
    char user[256], pass[256];
    if (mxc_head_proxy_auth(&c->head, user, sizeof user, pass, sizeof pass) < 0 || !token_ok(user, pass)) {
        memset(pass, 0, sizeof pass);
        refuse(c, 407, "auth", "auth-failed");
        return;
    }
    memset(pass, 0, sizeof pass);
    /* a placeholder is substituted only inside an intercepted tunnel: in a
     * head the proxy forwards as is (or a CONNECT's own), it goes nowhere */
    if (mxc_cred_mentioned(c->buf, c->head.head_len)) {
        refuse(c, 403, "credential-not-bound", "denied");
        return;
    }
    const char *why = NULL;
    struct sockaddr_storage lit;
    mxc_hp_verdict v = mxc_hostpolicy_check_name(cfg->policy, c->head.host, c->head.port, c->canon, sizeof c->canon,
                                                 &lit, &why);
    if (v == MXC_HP_DENY) {
        refuse(c, 403, why ? why : "not-allowed", "denied");
        return;
    }
    if (v == MXC_HP_ALLOW_ADDR) {
        c->canon[0] = '\0'; /* bindings go by the literal (bound()) */
        c->addr[0] = lit;
        c->naddr = 1;
        try_connect(c);
        return;
    }
    start_lookup(c);
}

/* ---- the loop ----------------------------------------------------------- */

/* Out of descriptors, nothing to shed: one waiting newcomer is answered
 * through the reserve descriptor, and accepting rests until a connection
 * closes or ACCEPT_PAUSE_MS pass (the listener leaves the epoll set: no
 * wake-up, no retry, meanwhile). */
static void pause_accepting(void)
{
    if (reserve_fd >= 0) {
        close(reserve_fd);
        int fd = accept4(cfg->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            (void)!send(fd, BUSY, sizeof BUSY - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(fd);
        }
        reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    if (!accept_paused)
        epoll_ctl(ep, EPOLL_CTL_DEL, cfg->listen_fd, NULL);
    accept_paused = true;
    fd_freed = false;
    resume_at = now_ms() + ACCEPT_PAUSE_MS;
}

static void resume_accepting(void)
{
    if (!accept_paused || (!fd_freed && now_ms() < resume_at))
        return;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &k_listen};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, cfg->listen_fd, &ev) == 0)
        accept_paused = false;
    else
        resume_at = now_ms() + ACCEPT_PAUSE_MS;
}

static void on_accept(void)
{
    bool shed = false; /* the host out of descriptors (ENFILE): one shed per round, then a rest */
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(cfg->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            /* a connection that failed on its way in (accept(2): network errors are passed on) */
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO || errno == ENETDOWN ||
                errno == ENOPROTOOPT || errno == EHOSTDOWN || errno == ENONET || errno == EHOSTUNREACH ||
                errno == EOPNOTSUPP || errno == ENETUNREACH)
                continue;
            /* out of descriptors (ours: EMFILE, each shed frees one for the newcomer; the
             * host's: ENFILE, another process may take it) or memory */
            if ((errno == EMFILE || (errno == ENFILE && !shed)) && shed_oldest()) {
                shed = true;
                continue;
            }
            pause_accepting();
            return;
        }
        if (nconns + atomic_load(&nintercept) + nabandoned >= cfg->max_conns && !shed_oldest()) {
            (void)!send(fd, BUSY, sizeof BUSY - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(fd);
            continue;
        }
        conn *c = calloc(1, sizeof *c);
        char *buf = malloc(MXC_HEAD_MAX);
        if (!c || !buf) {
            free(c), free(buf);
            close(fd);
            continue;
        }
        c->buf = buf;
        c->cfd = fd;
        c->ufd = -1;
        c->ct = (tag){c, false};
        c->ut = (tag){c, true};
        dir_init(&c->cu);
        dir_init(&c->uc);
        c->t0 = now_ms();
        c->deadline = c->t0 + cfg->head_timeout_ms;
        c->next = conns;
        if (conns)
            conns->prev = c;
        conns = c;
        nconns++;
        hq_add(c);
        watch(c, false, EPOLLIN);
    }
}

static void expire(void)
{
    uint64_t t = now_ms();
    for (conn *c = conns, *nx; c; c = nx) {
        nx = c->next;
        if (c->closed || t < c->deadline)
            continue;
        if (c->st == C_RELAY) {
            audit(c, "allowed", "idle-timeout");
            conn_close(c);
        } else /* a lookup still running on its thread answers into a closed conn (lookup_done) */
            refuse(c, 504, c->st == C_HEAD ? "head-timeout" : c->st == C_RESOLVING ? "resolve-timeout" : "connect-timeout",
                   "denied");
    }
}

static void on_event(tag *t, uint32_t events)
{
    conn *c = t->c;
    if (c->closed)
        return;
    switch (c->st) {
    case C_HEAD:
        on_head(c);
        break;
    case C_CONNECTING:
        if (t->upstream)
            connected(c);
        break;
    case C_RELAY:
        relay(c);
        break;
    case C_RESOLVING:
    case C_HANDOFF:
        break;
    }
}

int mxc_proxy_run(const mxc_proxy_config *config)
{
    cfg = config;
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0 || pipe2(resolved, O_CLOEXEC) < 0)
        return -1;
    alog = cfg->audit_fd >= 0 ? mxc_auditlog_new(cfg->audit_fd, cfg->sandbox, &cfg->audit_limits, now_ms()) : NULL;
    reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int fl = fcntl(cfg->listen_fd, F_GETFL);
    fcntl(cfg->listen_fd, F_SETFL, fl | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &k_listen};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, cfg->listen_fd, &ev) < 0)
        return -1;
    ev.data.ptr = &k_resolved;
    epoll_ctl(ep, EPOLL_CTL_ADD, resolved[0], &ev);
    if (cfg->watch_fd >= 0) {
        ev.data.ptr = &k_watch;
        epoll_ctl(ep, EPOLL_CTL_ADD, cfg->watch_fd, &ev);
    }
    for (;;) {
        struct epoll_event evs[64];
        int wait = TICK_MS;
        if (accept_paused) {
            uint64_t t = now_ms();
            wait = resume_at <= t ? 0 : resume_at - t < TICK_MS ? (int)(resume_at - t) : TICK_MS;
        }
        int n = epoll_wait(ep, evs, 64, wait);
        if (n < 0 && errno != EINTR)
            return -1;
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &k_watch) { /* the sandbox is gone: the last count of what the audit dropped */
                mxc_auditlog_finish(alog, now_ms());
                return 0;
            }
            if (p == &k_listen)
                on_accept();
            else if (p == &k_resolved) {
                lookup *l;
                if (read(resolved[0], &l, sizeof l) == (ssize_t)sizeof l)
                    lookup_done(l);
            } else
                on_event(p, evs[i].events);
        }
        start_interceptions();
        expire();
        free_grave();
        resume_accepting();
        mxc_auditlog_tick(alog, now_ms());
    }
}
