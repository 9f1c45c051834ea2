/* grpcsrv.h — gRPC's wire over HTTP/2 on a unix socket, as a server (libnghttp2).
 * Owns: accepting connections on a listening socket, each an HTTP/2 session (prior
 * knowledge, no TLS: the socket's permissions are the trust boundary, docs/openshell.md),
 * every stream checked as gRPC (POST, content-type application/grpc*, one uncompressed
 * message behind its 5-byte prefix, bounded), routed by its :path to a handler, and the
 * reply: the message with its prefix, then the status in trailers (grpc-status,
 * grpc-message percent-encoded), or a trailers-only reply for a refusal.  An unknown path
 * is UNIMPLEMENTED.  Unary calls, and server streams: a streaming reply sends its first
 * messages and then stays open, messages pushed into it later (osd_push), until the caller
 * ends it or the server stops; a tick when the loop is idle.  One
 * thread, poll(2); a handler runs to completion before the next frame is read.  Knows
 * nothing of protobuf or of OpenShell's calls (calls.h). */
#ifndef MXC_OSD_GRPCSRV_H
#define MXC_OSD_GRPCSRV_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* gRPC status codes used here */
enum {
    OSD_OK = 0,
    OSD_INVALID_ARGUMENT = 3,
    OSD_NOT_FOUND = 5,
    OSD_ALREADY_EXISTS = 6,
    OSD_RESOURCE_EXHAUSTED = 8,
    OSD_FAILED_PRECONDITION = 9,
    OSD_UNIMPLEMENTED = 12,
    OSD_INTERNAL = 13,
};

#define OSD_MAX_MESSAGE (4u << 20) /* a request's message, bytes */

typedef struct {
    int status;        /* OSD_OK: body holds the reply's messages, framed */
    char message[768]; /* the refusal's grpc-message (status != OSD_OK) */
    uint8_t *body;     /* malloc'd (osd_reply_frame), freed by the server */
    size_t len;
    bool streaming;    /* a server stream: after body, the stream stays open (no trailers) */
} osd_reply;

/* One message appended to out's body behind its 5-byte prefix: 0, or -1 (out of memory:
 * out is then a RESOURCE_EXHAUSTED refusal). */
int osd_reply_frame(osd_reply *out, const uint8_t *msg, size_t len);

typedef void (*osd_handler)(void *ctx, const uint8_t *msg, size_t len, osd_reply *out);

typedef struct {
    const char *path; /* "/openshell.compute.v1.ComputeDriver/GetCapabilities" */
    osd_handler fn;
} osd_route;

/* Called with ctx when the loop has been idle OSD_TICK_MS (observations that change on
 * their own: a sandbox that died). */
typedef void (*osd_tick)(void *ctx);
#define OSD_TICK_MS 1000

/* Serves listen_fd until *stop is set (a signal handler's flag): 0, or -1 with *e. */
int osd_serve(int listen_fd, const osd_route *routes, size_t nroutes, void *ctx, osd_tick tick,
              volatile sig_atomic_t *stop, mxc_error *e);

/* msg appended, framed, to every open server stream of path (the route's), and sent as
 * the loop next writes.  Only from a handler or a tick (the loop's own thread). */
void osd_push(const char *path, const uint8_t *msg, size_t len);
/* Whether a server stream of path is open (someone to push to). */
bool osd_streams_open(const char *path);

/* A refusal into out: status and printf'd message. */
void osd_refuse(osd_reply *out, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
