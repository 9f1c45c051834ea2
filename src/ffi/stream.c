/* stream.c — the stream objects over a handle's stdio (the C# SDK's path;
 * the Node SDK takes native descriptors instead): blocking reads that a
 * closer can end without killing the workload, writes, and their frees.
 * A stream owns its descriptor once taken; freeing the stdin stream closes
 * it, which is the workload's EOF. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ffi_internal.h"

struct MxcStreamCloser {
    int efd; /* readable once closed */
    int refs; /* the closer handle and its stream */
    pthread_mutex_t mu;
};

struct MxcReadStream {
    int fd;
    MxcStreamCloser *closer; /* shared with the handle's closer, may be NULL */
};

struct MxcWriteStream {
    int fd;
};

void ffi_closer_unref(MxcStreamCloser *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    int left = --c->refs;
    pthread_mutex_unlock(&c->mu);
    if (left == 0) {
        close(c->efd);
        pthread_mutex_destroy(&c->mu);
        free(c);
    }
}

static MxcStreamCloser *closer_new(void)
{
    MxcStreamCloser *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->efd < 0) {
        free(c);
        return NULL;
    }
    c->refs = 1;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

/* The handle's closer for one output stream, made on first demand (by the
 * take or by a closer request, in either order); a new reference.  Called
 * with h->mu held. */
static MxcStreamCloser *closer_ref_locked(MxcSandbox *h, bool err)
{
    MxcStreamCloser **slot = err ? &h->err_closer : &h->out_closer;
    if (!*slot && !(*slot = closer_new()))
        return NULL;
    MxcStreamCloser *c = *slot;
    pthread_mutex_lock(&c->mu);
    c->refs++;
    pthread_mutex_unlock(&c->mu);
    return c;
}

static MxcReadStream *take_read(MxcSandbox *h, bool err)
{
    if (!h)
        return NULL;
    pthread_mutex_lock(&h->mu);
    int *fd = err ? &h->err_fd : &h->out_fd;
    bool *taken = err ? &h->stderr_taken : &h->stdout_taken;
    MxcReadStream *s = NULL;
    if (!h->native_taken && !*taken && *fd >= 0 && (s = calloc(1, sizeof *s))) {
        s->fd = *fd;
        *fd = -1;
        *taken = true;
        s->closer = closer_ref_locked(h, err);
    }
    pthread_mutex_unlock(&h->mu);
    return s;
}

FFI_EXPORT MxcWriteStream *mxc_sandbox_take_stdin(MxcSandbox *h)
{
    if (!h)
        return NULL;
    pthread_mutex_lock(&h->mu);
    MxcWriteStream *s = NULL;
    if (!h->native_taken && !h->stdin_taken && h->in_fd >= 0 && (s = calloc(1, sizeof *s))) {
        s->fd = h->in_fd;
        h->in_fd = -1;
        h->stdin_taken = true;
    }
    pthread_mutex_unlock(&h->mu);
    return s;
}

FFI_EXPORT MxcReadStream *mxc_sandbox_take_stdout(MxcSandbox *h)
{
    return take_read(h, false);
}

FFI_EXPORT MxcReadStream *mxc_sandbox_take_stderr(MxcSandbox *h)
{
    return take_read(h, true);
}

/* A closer ends the reads of the stream taken from the same handle, before
 * or after it was taken. */
static MxcStreamCloser *closer_for(MxcSandbox *h, bool err)
{
    if (!h)
        return NULL;
    pthread_mutex_lock(&h->mu);
    MxcStreamCloser *c = closer_ref_locked(h, err);
    pthread_mutex_unlock(&h->mu);
    return c;
}

FFI_EXPORT MxcStreamCloser *mxc_sandbox_stdout_closer(MxcSandbox *h)
{
    return closer_for(h, false);
}

FFI_EXPORT MxcStreamCloser *mxc_sandbox_stderr_closer(MxcSandbox *h)
{
    return closer_for(h, true);
}

FFI_EXPORT int32_t mxc_stream_closer_close(MxcStreamCloser *c)
{
    if (!c)
        return MXC_STATUS_NULL_ARGUMENT;
    uint64_t one = 1;
    (void)!write(c->efd, &one, sizeof one);
    return 0;
}

FFI_EXPORT void mxc_stream_closer_free(MxcStreamCloser *c)
{
    ffi_closer_unref(c);
}

FFI_EXPORT int32_t mxc_stream_read(MxcReadStream *s, uint8_t *buf, size_t cap, size_t *out_read)
{
    if (out_read)
        *out_read = 0;
    if (!s || !buf || !out_read)
        return MXC_STATUS_NULL_ARGUMENT;
    for (;;) {
        struct pollfd pf[2] = {{.fd = s->fd, .events = POLLIN}, {.fd = s->closer ? s->closer->efd : -1, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return MXC_E_BACKEND_ERROR;
        }
        if (pf[1].revents)
            return 0; /* closed: EOF */
        ssize_t n = read(s->fd, buf, cap);
        if (n >= 0) {
            *out_read = (size_t)n;
            return 0;
        }
        if (errno != EAGAIN && errno != EINTR)
            return errno == EIO ? 0 : MXC_E_BACKEND_ERROR;
    }
}

FFI_EXPORT int32_t mxc_stream_write(MxcWriteStream *s, const uint8_t *buf, size_t len, size_t *out_written)
{
    if (out_written)
        *out_written = 0;
    if (!s || (!buf && len) || !out_written)
        return MXC_STATUS_NULL_ARGUMENT;
    for (;;) {
        ssize_t n = write(s->fd, buf, len);
        if (n >= 0) {
            *out_written = (size_t)n;
            return 0;
        }
        if (errno != EINTR)
            return MXC_E_BACKEND_ERROR;
    }
}

FFI_EXPORT int32_t mxc_stream_flush(MxcWriteStream *s)
{
    return s ? 0 : MXC_STATUS_NULL_ARGUMENT; /* writes go straight to the pipe */
}

FFI_EXPORT void mxc_read_stream_free(MxcReadStream *s)
{
    if (!s)
        return;
    close(s->fd);
    ffi_closer_unref(s->closer);
    free(s);
}

FFI_EXPORT void mxc_write_stream_free(MxcWriteStream *s)
{
    if (!s)
        return;
    close(s->fd);
    free(s);
}
