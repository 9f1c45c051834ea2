/* server.c — see server.h. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit.h"
#include "driver.h"
#include "sblog.h"
#include "front.h"
#include "table.h"

#define MAX_BODY (1u << 20)
#define PREFIX "/v1/sandboxes"

int gw_default_socket(bool make, char *out, size_t outsz, mxc_error *e)
{
    const char *env = getenv("MXC_GATEWAY_SOCKET");
    char priv[512];
    if (env && env[0])
        snprintf(out, outsz, "%s", env);
    else if (geteuid() == 0)
        snprintf(out, outsz, "/run/mxc-gateway.sock");
    else if (mxc_private_dir(make, priv, sizeof priv, e) == 0)
        snprintf(out, outsz, "%s/mxc-gateway.sock", priv);
    else
        return -1;
    return 0;
}

typedef struct {
    char *buf;
    size_t len;
    bool too_big;
} body;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!text)
        return MHD_NO;
    size_t len = strlen(text);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result fail(struct MHD_Connection *c, unsigned code, const char *msg)
{
    return reply(c, code, json_pack("{s:{s:s}}", "error", "message", msg));
}

/* Only the gateway's own uid (or root) may talk to it: the socket's mode
 * says so too, this holds even if the mode were changed. */
static bool peer_ok(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return false;
    return cred.uid == 0 || cred.uid == geteuid();
}

static ssize_t log_chunk(void *cls, uint64_t pos, char *buf, size_t max)
{
    ssize_t n = gw_log_reader_read(cls, pos, buf, max);
    return n > 0 ? n : n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void log_done(void *cls) { gw_log_reader_close(cls); }

/* The log streamed (log.1 then log, as they were when opened): nothing of
 * it is held in memory beyond one block. */
static enum MHD_Result logs(struct MHD_Connection *c, const char *name)
{
    json_t *rec = gw_table_get(name);
    if (!rec)
        return fail(c, 404, "no such sandbox");
    json_decref(rec);
    uint64_t total = 0;
    gw_log_reader *lr = gw_log_reader_open(name, &total);
    struct MHD_Response *r = lr ? MHD_create_response_from_callback(total, 64 * 1024, log_chunk, lr, log_done)
                                : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) {
        gw_log_reader_close(lr);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result route(struct MHD_Connection *c, const char *url, const char *method, body *b)
{
    mxc_error e = {0};
    if (!strcmp(url, "/v1/health"))
        return reply(c, 200, json_pack("{s:b, s:b}", "ok", 1, "mock", gw_driver_mock()));
    if (!strcmp(url, PREFIX)) {
        if (!strcmp(method, "GET"))
            return reply(c, 200, json_pack("{s:o}", "sandboxes", gw_table_list()));
        if (strcmp(method, "POST"))
            return fail(c, 405, "GET or POST");
        if (b->too_big)
            return fail(c, 413, "the request is larger than 1 MiB");
        json_error_t je;
        json_t *req = b->buf ? json_loadb(b->buf, b->len, JSON_REJECT_DUPLICATES, &je) : NULL;
        if (!json_is_object(req)) {
            json_decref(req);
            return fail(c, 400, "the body must be a JSON object");
        }
        int http = 500;
        json_t *rec = gw_create(req, &http, &e);
        if (!rec)
            gw_audit_refused(json_string_value(json_object_get(req, "name")), e.message);
        json_decref(req);
        if (!rec)
            return fail(c, (unsigned)http, e.message);
        const char *err = json_string_value(json_object_get(rec, "error"));
        if (err && !strcmp(json_string_value(json_object_get(rec, "status")), "failed"))
            return reply(c, 500, json_pack("{s:{s:s}, s:o}", "error", "message", err, "sandbox", rec));
        return reply(c, 201, rec);
    }
    if (strncmp(url, PREFIX "/", sizeof PREFIX))
        return fail(c, 404, "no such route");
    char name[80];
    const char *rest = url + sizeof PREFIX;
    size_t n = strcspn(rest, "/");
    if (n == 0 || n >= sizeof name)
        return fail(c, 404, "no such sandbox");
    snprintf(name, sizeof name, "%.*s", (int)n, rest);
    const char *tail = rest + n;
    if (!gw_name_ok(name))
        return fail(c, 404, "no such sandbox");
    if (!strcmp(tail, "/logs") && !strcmp(method, "GET"))
        return logs(c, name);
    if (*tail)
        return fail(c, 404, "no such route");
    if (!strcmp(method, "GET")) {
        json_t *rec = gw_table_get(name);
        return rec ? reply(c, 200, rec) : fail(c, 404, "no such sandbox");
    }
    if (!strcmp(method, "DELETE"))
        return gw_delete(name, &e) < 0 ? fail(c, 404, e.message) : reply(c, 200, json_object());
    return fail(c, 405, "GET or DELETE");
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls, (void)version;
    body *b = *con_cls;
    if (!b) { /* the first call: headers only */
        b = calloc(1, sizeof *b);
        if (!b)
            return MHD_NO;
        *con_cls = b;
        return MHD_YES;
    }
    if (*upload_size) {
        if (b->len + *upload_size > MAX_BODY) {
            b->too_big = true;
        } else {
            char *g = realloc(b->buf, b->len + *upload_size);
            if (!g)
                return MHD_NO;
            memcpy(g + b->len, upload, *upload_size);
            b->buf = g, b->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (!peer_ok(c))
        return fail(c, 403, "only the gateway's own user (or root) may use its socket");
    return route(c, url, method, b);
}

static void done_cb(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    body *b = *con_cls;
    if (b) {
        free(b->buf);
        free(b);
    }
    *con_cls = NULL;
}

/* A socket at path that nobody answers on is stale; anything else there is
 * not ours to remove. */
static int make_socket(const char *path, mxc_error *e)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t plen = strlen(path);
    if (plen >= sizeof a.sun_path) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "the socket path %s is too long", path);
        return -1;
    }
    memcpy(a.sun_path, path, plen + 1);
    struct stat st;
    if (lstat(path, &st) == 0) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = S_ISSOCK(st.st_mode) && connect(probe, (struct sockaddr *)&a, sizeof a) == 0;
        close(probe);
        if (!S_ISSOCK(st.st_mode) || live || st.st_uid != geteuid()) {
            mxc_err(e, MXC_E_BACKEND_ERROR,
                    "%s exists and is %s", path, live ? "served by another gateway" : "not a stale socket of ours");
            return -1;
        }
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    mode_t old = umask(0177);
    int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc < 0 || listen(fd, 64) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "cannot listen on %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

#define GW_LISTEN_FD 3 /* SD_LISTEN_FDS_START */

int gw_socket_activated(char *out, size_t outsz, mxc_error *e)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds)
        return 0;
    char *end;
    long lp = strtol(pid, &end, 10);
    if (*end || lp != (long)getpid())
        return 0; /* meant for another process (an ancestor's): not ours */
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    long n = strtol(fds, &end, 10);
    if (*end || n != 1) {
        mxc_err(e, MXC_E_BACKEND_ERROR,
                "socket activation passed %s sockets; the gateway serves exactly one (ListenStream=)", fds);
        return -1;
    }
    int acc = 0, type = 0, dom = 0;
    socklen_t l = sizeof acc;
    struct sockaddr_un a = {0};
    socklen_t al = sizeof a;
    if (getsockopt(GW_LISTEN_FD, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) < 0 || !acc ||
        getsockopt(GW_LISTEN_FD, SOL_SOCKET, SO_TYPE, &type, &(socklen_t){sizeof type}) < 0 || type != SOCK_STREAM ||
        getsockopt(GW_LISTEN_FD, SOL_SOCKET, SO_DOMAIN, &dom, &(socklen_t){sizeof dom}) < 0 || dom != AF_UNIX ||
        getsockname(GW_LISTEN_FD, (struct sockaddr *)&a, &al) < 0 || al <= offsetof(struct sockaddr_un, sun_path) ||
        !a.sun_path[0]) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "socket activation: fd 3 is not a listening unix stream socket with a path");
        return -1;
    }
    if (fcntl(GW_LISTEN_FD, F_SETFD, FD_CLOEXEC) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "socket activation: fd 3: %s", strerror(errno));
        return -1;
    }
    snprintf(out, outsz, "%.*s", (int)(al - offsetof(struct sockaddr_un, sun_path)), a.sun_path);
    return 1;
}

int gw_serve(const char *socket_path, bool activated, mxc_error *e)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* every thread made from here on blocks them */
    signal(SIGPIPE, SIG_IGN);
    int fd = activated ? GW_LISTEN_FD : make_socket(socket_path, e);
    if (fd < 0)
        return -1;
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                                            NULL, access_cb, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
                                            MHD_OPTION_NOTIFY_COMPLETED, done_cb, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
                                            (unsigned)30, MHD_OPTION_END);
    if (!d) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "libmicrohttpd would not start on %s", socket_path);
        close(fd);
        if (!activated)
            unlink(socket_path);
        return -1;
    }
    fprintf(stderr, "mxc-gateway: serving on %s%s\n", socket_path, activated ? " (socket activation)" : "");
    int sig;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    close(fd);
    if (!activated) /* systemd's socket stays systemd's: the next connection starts the gateway again */
        unlink(socket_path);
    return 0;
}
