/* intercept.c — see intercept.h.
 *
 * Why a blocking thread per intercepted tunnel rather than the epoll loop:
 * an intercepted exchange is a sequence (handshake with the workload, one
 * head, the placeholder decision, a verified handshake upstream, the body,
 * the response) whose every step may block on either TLS engine, in either
 * direction (a TLS read can need a write and the reverse).  Driving two
 * SSL objects as non-blocking state machines inside proxy.c's loop would
 * put a second protocol engine into it for the few connections that carry
 * credentials; a thread keeps this code a straight line that reads as the
 * rule it enforces.  The cost is bounded: such threads count against the
 * proxy's connection cap (proxy.c), each has a small stack, and every
 * socket carries SO_RCVTIMEO / SO_SNDTIMEO (the head timeout until the
 * request head is read, the idle timeout after), so a stalled peer ends its
 * thread.  Tunnels to unbound hosts never come here: they stay spliced. */
#include "intercept.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "httphead.h"
#include "reply.h"

#define OUT_HEAD_MAX (4 * MXC_HEAD_MAX) /* the rewritten head, secrets included */
#define BODY_BUF 16384

int mxc_intercept_ctx_init(mxc_intercept_ctx *ix, const char *ca_file, mxc_error *err)
{
    ix->server = SSL_CTX_new(TLS_server_method());
    ix->upstream = SSL_CTX_new(TLS_client_method());
    if (!ix->server || !ix->upstream || SSL_CTX_set_min_proto_version(ix->server, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_min_proto_version(ix->upstream, TLS1_2_VERSION) != 1) {
        mxc_err(err, MXC_E_BACKEND_ERROR, "cannot make the TLS contexts");
        return -1;
    }
    SSL_CTX_set_options(ix->server, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
    /* an origin that closes without close_notify has still said all it had (Connection: close) */
    SSL_CTX_set_options(ix->upstream, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_verify(ix->upstream, SSL_VERIFY_PEER, NULL);
    if (ca_file ? SSL_CTX_load_verify_file(ix->upstream, ca_file) != 1
                : SSL_CTX_set_default_verify_paths(ix->upstream) != 1) {
        mxc_err(err, MXC_E_BACKEND_ERROR, "cannot load the upstream roots");
        return -1;
    }
    return 0;
}

void mxc_intercept_ctx_free(mxc_intercept_ctx *ix)
{
    SSL_CTX_free(ix->server);
    SSL_CTX_free(ix->upstream);
    ix->server = ix->upstream = NULL;
}

static void timeouts(int fd, unsigned ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void blocking(int fd, unsigned ms)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    timeouts(fd, ms);
}

static bool write_all(SSL *s, const char *p, size_t n, uint64_t *count)
{
    while (n) {
        size_t w;
        if (SSL_write_ex(s, p, n, &w) != 1)
            return false;
        p += w, n -= w;
        *count += w;
    }
    return true;
}

typedef struct {
    mxc_intercept_job *job;
    SSL *cs, *us;
    char *buf;     /* the request head as read (and what followed it) */
    size_t blen;
    mxc_head *h;
    char *out;     /* the rewritten head: holds secrets */
    size_t olen;
    const char *cred;
    uint64_t bytes_out, bytes_in;
} tunnel;

static void finish(tunnel *t, const char *disposition, const char *reason)
{
    mxc_intercept_job *j = t->job;
    j->audit(j->audit_arg, disposition, reason, t->cred, t->bytes_out, t->bytes_in);
}

/* A refusal inside the tunnel (the workload's TLS is up): the answer, audited. */
static void refuse(tunnel *t, int status, const char *reason, const char *disposition)
{
    char out[512];
    size_t n = mxc_reply_format(out, sizeof out, status, reason);
    uint64_t ignored = 0;
    (void)write_all(t->cs, out, n, &ignored);
    finish(t, disposition, reason);
}

/* Appends to the rewritten head; false past OUT_HEAD_MAX. */
static bool put(tunnel *t, const char *p, size_t n)
{
    if (n > OUT_HEAD_MAX - t->olen)
        return false;
    memcpy(t->out + t->olen, p, n);
    t->olen += n;
    return true;
}

/* The head the upstream gets: the request line, every end-to-end field with
 * its placeholders substituted (a violation: *reason), Host from the
 * tunnel, Connection: close.  0, or the status to refuse with. */
static int rewrite(tunnel *t, const char **reason)
{
    const mxc_head *h = t->h;
    mxc_intercept_job *j = t->job;
    if (mxc_cred_mentioned(h->path.p, h->path.n)) {
        *reason = "credential-in-target"; /* placeholders belong in header values only */
        return 403;
    }
    char line[64];
    bool ok = put(t, h->method.p, h->method.n) && put(t, " ", 1) && put(t, h->path.p, h->path.n);
    int n = snprintf(line, sizeof line, " HTTP/1.%d\r\n", h->version_minor);
    ok = ok && put(t, line, (size_t)n);
    for (size_t i = 0; ok && i < h->nfields; i++) {
        if (mxc_head_hop_by_hop(h->fields[i].name))
            continue;
        char *v;
        size_t vn;
        const char *used;
        if (mxc_credset_substitute(j->ix->creds, j->key, j->port, h->path, h->fields[i].value, &v, &vn, &used,
                                   reason) < 0)
            return *reason && !strcmp(*reason, "resources") ? 502 : 403;
        if (used)
            t->cred = used;
        ok = put(t, h->fields[i].name.p, h->fields[i].name.n) && put(t, ": ", 2) && put(t, v, vn) &&
             put(t, "\r\n", 2);
        OPENSSL_cleanse(v, vn);
        free(v);
    }
    char host[300];
    bool v6 = h->host_ipv6;
    n = j->port == 443 ? snprintf(host, sizeof host, "Host: %s%s%s\r\nConnection: close\r\n\r\n", v6 ? "[" : "",
                                  h->host, v6 ? "]" : "")
                       : snprintf(host, sizeof host, "Host: %s%s%s:%u\r\nConnection: close\r\n\r\n", v6 ? "[" : "",
                                  h->host, v6 ? "]" : "", j->port);
    ok = ok && n > 0 && (size_t)n < sizeof host && put(t, host, (size_t)n);
    if (!ok) {
        *reason = "head-too-large";
        return 431;
    }
    return 0;
}

/* TLS with the workload, then its request head; false: already finished. */
static bool accept_request(tunnel *t)
{
    mxc_intercept_job *j = t->job;
    static const char OK[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (send(j->cfd, OK, sizeof OK - 1, MSG_NOSIGNAL) != (ssize_t)sizeof OK - 1) {
        finish(t, "allowed", "closed");
        return false;
    }
    X509 *leaf = mxc_tlsmint_leaf(j->ix->mint, j->key);
    t->cs = SSL_new(j->ix->server);
    bool ok = leaf && t->cs && SSL_use_certificate(t->cs, leaf) == 1 &&
              SSL_use_PrivateKey(t->cs, mxc_tlsmint_leaf_key(j->ix->mint)) == 1 && SSL_set_fd(t->cs, j->cfd) == 1;
    X509_free(leaf);
    if (!ok) {
        finish(t, "error", "mint");
        return false;
    }
    if (SSL_accept(t->cs) != 1) {
        finish(t, "denied", "client-tls");
        return false;
    }
    for (;;) {
        size_t got;
        if (SSL_read_ex(t->cs, t->buf + t->blen, MXC_HEAD_MAX - t->blen, &got) != 1) {
            finish(t, t->blen ? "denied" : "allowed", t->blen ? "head-timeout" : "closed");
            return false;
        }
        t->blen += got;
        mxc_head_status st = mxc_head_parse_origin(t->buf, t->blen, j->host, j->host_ipv6, j->port, t->h);
        if (st == MXC_HEAD_OK)
            return true;
        if (st == MXC_HEAD_INCOMPLETE && t->blen < MXC_HEAD_MAX)
            continue;
        if (st == MXC_HEAD_INCOMPLETE)
            refuse(t, 431, "head-too-large", "denied");
        else
            refuse(t, t->h->status ? t->h->status : 400, t->h->reason ? t->h->reason : "bad-request", "denied");
        return false;
    }
}

/* TLS to the upstream, verified for the requested name or address. */
static bool connect_upstream(tunnel *t)
{
    mxc_intercept_job *j = t->job;
    t->us = SSL_new(j->ix->upstream);
    bool ok = t->us && SSL_set_fd(t->us, j->ufd) == 1;
    if (ok && j->key_is_ip)
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->us), j->key) == 1;
    else if (ok)
        ok = SSL_set_tlsext_host_name(t->us, j->key) == 1 && SSL_set1_host(t->us, j->key) == 1;
    if (!ok) {
        refuse(t, 502, "resources", "error");
        return false;
    }
    if (SSL_connect(t->us) != 1) {
        refuse(t, 502, SSL_get_verify_result(t->us) != X509_V_OK ? "upstream-untrusted" : "upstream-tls", "error");
        return false;
    }
    return true;
}

/* The request body by its framing, from what followed the head on. */
static bool forward_body(tunnel *t)
{
    const mxc_head *h = t->h;
    const char *rest = t->buf + h->head_len;
    size_t nrest = t->blen - h->head_len;
    char tmp[BODY_BUF];
    if (h->chunked) {
        mxc_chunked ck = {0};
        long take = mxc_chunked_feed(&ck, rest, nrest);
        if (take < 0 || !write_all(t->us, rest, (size_t)take, &t->bytes_out))
            return false;
        while (!ck.done) {
            size_t got;
            if (SSL_read_ex(t->cs, tmp, sizeof tmp, &got) != 1)
                return false;
            take = mxc_chunked_feed(&ck, tmp, got);
            if (take < 0 || !write_all(t->us, tmp, (size_t)take, &t->bytes_out))
                return false;
        }
        return true;
    }
    unsigned long long left = h->content_length > 0 ? (unsigned long long)h->content_length : 0;
    size_t first = nrest < left ? nrest : (size_t)left;
    if (!write_all(t->us, rest, first, &t->bytes_out))
        return false;
    left -= first;
    while (left) {
        size_t got;
        if (SSL_read_ex(t->cs, tmp, left < sizeof tmp ? (size_t)left : sizeof tmp, &got) != 1 ||
            !write_all(t->us, tmp, got, &t->bytes_out))
            return false;
        left -= got;
    }
    return true; /* anything pipelined after the body is never forwarded */
}

static void relay_response(tunnel *t)
{
    char tmp[BODY_BUF];
    size_t got;
    uint64_t ignored = 0;
    while (SSL_read_ex(t->us, tmp, sizeof tmp, &got) == 1) {
        t->bytes_in += got;
        if (!write_all(t->cs, tmp, got, &ignored)) {
            finish(t, "allowed", "closed");
            return;
        }
    }
    int e = SSL_get_error(t->us, 0);
    finish(t, "allowed", e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL || e == SSL_ERROR_SSL ? "done" : "closed");
}

void mxc_intercept_run(mxc_intercept_job *j)
{
    tunnel t = {.job = j, .buf = malloc(MXC_HEAD_MAX), .h = malloc(sizeof(mxc_head)), .out = malloc(OUT_HEAD_MAX)};
    blocking(j->cfd, j->ix->head_timeout_ms);
    blocking(j->ufd, j->ix->idle_timeout_ms);
    if (!t.buf || !t.h || !t.out)
        finish(&t, "error", "resources");
    else if (accept_request(&t)) {
        timeouts(j->cfd, j->ix->idle_timeout_ms);
        const char *reason = NULL;
        int status = rewrite(&t, &reason);
        if (status)
            refuse(&t, status, reason, status == 403 ? "denied" : "error");
        else if (connect_upstream(&t)) { /* the secret leaves only over a verified connection */
            bool sent = write_all(t.us, t.out, t.olen, &t.bytes_out) && forward_body(&t);
            if (sent)
                relay_response(&t);
            else
                finish(&t, "allowed", "closed");
        }
    }
    if (t.out)
        OPENSSL_cleanse(t.out, OUT_HEAD_MAX);
    if (t.buf)
        OPENSSL_cleanse(t.buf, MXC_HEAD_MAX); /* the workload's head: placeholders only, but cheap */
    if (t.cs)
        SSL_shutdown(t.cs);
    SSL_free(t.cs);
    SSL_free(t.us);
    free(t.out);
    free(t.buf);
    free(t.h);
    close(j->cfd);
    close(j->ufd);
    ERR_clear_error();
    free(j);
}
