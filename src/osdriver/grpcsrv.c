/* grpcsrv.c — see grpcsrv.h. */
#include "grpcsrv.h"

#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 64
#define MAX_STREAMS 100

typedef struct {
    const osd_route *routes;
    size_t nroutes;
    void *ctx;
} server;

typedef struct stream stream;

typedef struct {
    int fd;
    nghttp2_session *h2;
    const server *srv;
    stream *streams; /* every open stream: nghttp2_session_del calls no close callback */
    size_t buffered; /* request bytes its open streams hold (CONN_BUDGET) */
} conn;

/* Request bytes held at once: per connection, and by the whole driver.  A message is at most
 * OSD_MAX_MESSAGE, but a peer could open MAX_STREAMS streams on each of MAX_CONNS connections and
 * fill each without ending it (tens of GiB); beyond a budget a stream is answered as too big. */
#define CONN_BUDGET (2 * (size_t)OSD_MAX_MESSAGE + 10)
#define TOTAL_BUDGET (8 * (size_t)OSD_MAX_MESSAGE)
static size_t buffered_total;

/* One request stream: what its headers said, its body, then its reply. */
struct stream {
    stream *prev, *next;
    const osd_route *route;
    bool post, grpc_type, too_big;
    uint8_t *buf;
    size_t len;
    osd_reply reply;
    size_t sent; /* of the reply's framed messages */
    int32_t id;  /* its HTTP/2 stream id (a push resumes it) */
    char status_text[12], message[3 * 768 + 1];
};

void osd_refuse(osd_reply *out, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof out->message, fmt, ap);
    va_end(ap);
    out->status = status;
}

static void stream_free(conn *c, stream *s)
{
    if (!s)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        c->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    c->buffered -= s->len;
    buffered_total -= s->len;
    free(s->buf);
    free(s->reply.body);
    free(s);
}

/* grpc-message: percent-encoded outside printable ASCII and '%' (gRPC's HTTP/2 spec) */
static void percent_encode(const char *in, char *out, size_t outsz)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < outsz; p++) {
        if (*p >= 0x20 && *p <= 0x7e && *p != '%')
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, outsz - o, "%%%02X", *p);
    }
    out[o] = '\0';
}

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE}

int osd_reply_frame(osd_reply *out, const uint8_t *msg, size_t len)
{
    uint8_t *nb = len <= OSD_MAX_MESSAGE ? realloc(out->body, out->len + 5 + len) : NULL;
    if (!nb) {
        osd_refuse(out, OSD_RESOURCE_EXHAUSTED, "the reply does not fit in memory");
        return -1;
    }
    nb[out->len] = 0;
    for (int i = 0; i < 4; i++)
        nb[out->len + 1 + i] = (uint8_t)(len >> (24 - 8 * i));
    if (len)
        memcpy(nb + out->len + 5, msg, len);
    out->body = nb;
    out->len += 5 + len;
    return 0;
}

static ssize_t read_reply(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                          nghttp2_data_source *src, void *user)
{
    stream *s = src->ptr;
    size_t n = s->reply.len - s->sent;
    if (n > length)
        n = length;
    if (n)
        memcpy(buf, s->reply.body + s->sent, n);
    s->sent += n;
    if (s->sent < s->reply.len)
        return (ssize_t)n;
    if (s->reply.streaming) /* sent what there is; the stream stays open */
        return n ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    nghttp2_nv trailers[] = {NV("grpc-status", "0")};
    if (nghttp2_submit_trailer(h2, id, trailers, 1) != 0)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    return (ssize_t)n;
}

/* The reply: its messages then a trailer of status 0 (or, streaming, the stream left
 * open), or headers only with the refusal. */
static int submit_reply(nghttp2_session *h2, int32_t id, stream *s)
{
    if (s->reply.status == OSD_OK) {
        nghttp2_nv hdrs[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
        nghttp2_data_provider dp = {.source.ptr = s, .read_callback = read_reply};
        return nghttp2_submit_response(h2, id, hdrs, 2, &dp);
    }
    snprintf(s->status_text, sizeof s->status_text, "%d", s->reply.status);
    percent_encode(s->reply.message, s->message, sizeof s->message);
    nghttp2_nv hdrs[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
                         NV("grpc-status", s->status_text), NV("grpc-message", s->message)};
    return nghttp2_submit_response(h2, id, hdrs, 4, NULL);
}

/* The request's one message, checked, to its handler. */
static void dispatch(const server *srv, stream *s)
{
    if (!s->post || !s->grpc_type)
        return osd_refuse(&s->reply, OSD_INVALID_ARGUMENT, "not a gRPC request (POST with content-type application/grpc)");
    if (!s->route)
        return osd_refuse(&s->reply, OSD_UNIMPLEMENTED, "unknown method: this driver serves openshell.compute.v1.ComputeDriver");
    if (s->too_big)
        return osd_refuse(&s->reply, OSD_RESOURCE_EXHAUSTED, "the request is larger than %u bytes, or the requests "
                          "open on this connection or the driver hold more than their budget", OSD_MAX_MESSAGE);
    if (s->len < 5)
        return osd_refuse(&s->reply, OSD_INVALID_ARGUMENT, "the request has no message");
    if (s->buf[0] != 0)
        return osd_refuse(&s->reply, OSD_UNIMPLEMENTED, "compressed messages are not accepted (grpc-encoding identity)");
    size_t mlen = (size_t)s->buf[1] << 24 | (size_t)s->buf[2] << 16 | (size_t)s->buf[3] << 8 | s->buf[4];
    if (mlen != s->len - 5)
        return osd_refuse(&s->reply, OSD_INVALID_ARGUMENT, "a unary call carries exactly one whole message");
    s->route->fn(srv->ctx, s->buf + 5, mlen, &s->reply);
}

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    conn *c = user;
    stream *s = calloc(1, sizeof *s);
    if (!s)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    s->next = c->streams;
    if (s->next)
        s->next->prev = s;
    c->streams = s;
    s->id = f->hd.stream_id;
    return nghttp2_session_set_stream_user_data(h2, f->hd.stream_id, s) ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static bool equals(const uint8_t *v, size_t vlen, const char *want)
{
    return vlen == strlen(want) && !memcmp(v, want, vlen);
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user)
{
    stream *s = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
    if (!s || f->hd.type != NGHTTP2_HEADERS)
        return 0;
    const conn *c = user;
    if (equals(name, namelen, ":method"))
        s->post = equals(value, valuelen, "POST");
    else if (equals(name, namelen, "content-type"))
        s->grpc_type = valuelen >= 16 && !memcmp(value, "application/grpc", 16) &&
                       (valuelen == 16 || value[16] == '+' || value[16] == ';');
    else if (equals(name, namelen, ":path"))
        for (size_t i = 0; i < c->srv->nroutes; i++)
            if (equals(value, valuelen, c->srv->routes[i].path))
                s->route = &c->srv->routes[i];
    return 0;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
    stream *s = nghttp2_session_get_stream_user_data(h2, id);
    conn *c = user;
    if (!s || s->too_big)
        return 0;
    if (s->len + len > OSD_MAX_MESSAGE + 5 || c->buffered + len > CONN_BUDGET || buffered_total + len > TOTAL_BUDGET) {
        s->too_big = true;
        return 0;
    }
    uint8_t *nb = realloc(s->buf, s->len + len);
    if (!nb)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    memcpy(nb + s->len, data, len);
    s->buf = nb;
    s->len += len;
    c->buffered += len;
    buffered_total += len;
    return 0;
}

static int on_frame(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
    if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    stream *s = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
    if (!s)
        return 0;
    const conn *c = user;
    dispatch(c->srv, s);
    if (submit_reply(h2, f->hd.stream_id, s) != 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int on_close(nghttp2_session *h2, int32_t id, uint32_t code, void *user)
{
    stream_free(user, nghttp2_session_get_stream_user_data(h2, id));
    nghttp2_session_set_stream_user_data(h2, id, NULL);
    return 0;
}

static ssize_t do_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags, void *user)
{
    const conn *c = user;
    ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
    return n;
}

static ssize_t do_recv(nghttp2_session *h2, uint8_t *buf, size_t len, int flags, void *user)
{
    const conn *c = user;
    ssize_t n = recv(c->fd, buf, len, 0);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
    return n == 0 ? NGHTTP2_ERR_EOF : n;
}

static int conn_open(conn *c, int fd, const server *srv)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        return -1;
    nghttp2_session_callbacks_set_send_callback(cb, do_send);
    nghttp2_session_callbacks_set_recv_callback(cb, do_recv);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    *c = (conn){.fd = fd, .srv = srv};
    int rc = nghttp2_session_server_new(&c->h2, cb, c);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS}};
    if (rc != 0 || nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 1) != 0) {
        if (rc == 0)
            nghttp2_session_del(c->h2);
        return -1;
    }
    return 0;
}

static void conn_close(conn *c)
{
    nghttp2_session_del(c->h2);
    while (c->streams)
        stream_free(c, c->streams);
    close(c->fd);
    free(c);
}

/* Reads what arrived and writes what is due; false: the connection is done. */
static bool conn_step(conn *c, short revents)
{
    if ((revents & POLLIN) && nghttp2_session_recv(c->h2) != 0)
        return false;
    if (nghttp2_session_send(c->h2) != 0)
        return false;
    if (revents & (POLLERR | POLLNVAL))
        return false;
    return nghttp2_session_want_read(c->h2) || nghttp2_session_want_write(c->h2);
}

static void accept_one(int lfd, conn **conns, size_t *n, const server *srv)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    conn *c = *n < MAX_CONNS ? malloc(sizeof *c) : NULL;
    if (!c || conn_open(c, fd, srv) < 0) {
        free(c);
        close(fd);
        return;
    }
    if (nghttp2_session_send(c->h2) != 0) {
        conn_close(c);
        return;
    }
    conns[(*n)++] = c;
}

/* The serving loop's connections, for osd_push (one server per process). */
static conn **live_conns;
static size_t *live_n;

void osd_push(const char *path, const uint8_t *msg, size_t len)
{
    for (size_t i = 0; live_conns && i < *live_n; i++)
        for (stream *s = live_conns[i]->streams; s; s = s->next) {
            if (!s->reply.streaming || s->reply.status != OSD_OK || !s->route || strcmp(s->route->path, path))
                continue;
            if (s->sent == s->reply.len) /* all sent: start the buffer again */
                s->sent = s->reply.len = 0;
            if (osd_reply_frame(&s->reply, msg, len) == 0)
                nghttp2_session_resume_data(live_conns[i]->h2, s->id);
            else
                s->reply.status = OSD_OK; /* a dropped event; the stream stays */
        }
}

bool osd_streams_open(const char *path)
{
    for (size_t i = 0; live_conns && i < *live_n; i++)
        for (stream *s = live_conns[i]->streams; s; s = s->next)
            if (s->reply.streaming && s->reply.status == OSD_OK && s->route && !strcmp(s->route->path, path))
                return true;
    return false;
}

int osd_serve(int listen_fd, const osd_route *routes, size_t nroutes, void *ctx, osd_tick tick,
              volatile sig_atomic_t *stop, mxc_error *e)
{
    server srv = {routes, nroutes, ctx};
    static conn *conns[MAX_CONNS]; /* static: osd_push reaches them (one server per process) */
    static size_t n;
    n = 0;
    live_conns = conns;
    live_n = &n;
    struct pollfd pfd[MAX_CONNS + 1];
    while (!*stop) {
        pfd[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
        for (size_t i = 0; i < n; i++)
            pfd[i + 1] = (struct pollfd){.fd = conns[i]->fd,
                                         .events = (short)(POLLIN | (nghttp2_session_want_write(conns[i]->h2) ? POLLOUT : 0))};
        int ready = poll(pfd, n + 1, tick ? OSD_TICK_MS : -1);
        if (ready < 0 && errno != EINTR) {
            live_conns = NULL;
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "poll", errno, NULL, "the driver's poll failed");
        }
        if (ready <= 0) {
            if (tick && ready == 0)
                tick(ctx);
            for (size_t i = n; i-- > 0;) /* what the tick pushed goes out */
                if (!conn_step(conns[i], 0)) {
                    conn_close(conns[i]);
                    conns[i] = conns[--n];
                }
            continue;
        }
        for (size_t i = n; i-- > 0;)
            if (pfd[i + 1].revents && !conn_step(conns[i], pfd[i + 1].revents)) {
                conn_close(conns[i]);
                conns[i] = conns[--n];
            }
        if (pfd[0].revents & POLLIN)
            accept_one(listen_fd, conns, &n, &srv);
    }
    for (size_t i = 0; i < n; i++) { /* a GOAWAY first: the caller learns it was a stop */
        nghttp2_session_terminate_session(conns[i]->h2, NGHTTP2_NO_ERROR);
        nghttp2_session_send(conns[i]->h2);
        conn_close(conns[i]);
    }
    live_conns = NULL;
    return 0;
}
