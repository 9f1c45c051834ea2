/* sockmsg.c — see sockmsg.h. */
#include "sockmsg.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int) * MXC_SOCKMSG_MAX_FDS) + CMSG_SPACE(sizeof(struct ucred))];
} control;

/* One control message of `type` holding len bytes of data. */
static ssize_t send_one(int sock, const void *buf, size_t len, int type, const void *data, size_t dlen)
{
    control cm;
    memset(&cm, 0, sizeof cm);
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (dlen) {
        mh.msg_control = cm.buf;
        mh.msg_controllen = CMSG_SPACE(dlen);
        struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = type;
        h->cmsg_len = CMSG_LEN(dlen);
        memcpy(CMSG_DATA(h), data, dlen);
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}

ssize_t mxc_sockmsg_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds)
{
    if (nfds > MXC_SOCKMSG_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    return send_one(sock, buf, len, SCM_RIGHTS, fds, sizeof(int) * nfds);
}

ssize_t mxc_sockmsg_send_cred(int sock, const void *buf, size_t len, pid_t pid, uid_t uid, gid_t gid)
{
    struct ucred u = {.pid = pid, .uid = uid, .gid = gid};
    return send_one(sock, buf, len, SCM_CREDENTIALS, &u, sizeof u);
}

/* The descriptors of one SCM_RIGHTS item: kept while there is room, else closed. */
static void take_fds(const struct cmsghdr *h, mxc_sockmsg_in *in, size_t room)
{
    size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const unsigned char *data = CMSG_DATA(h);
    for (size_t i = 0; i < k; i++) {
        int fd;
        memcpy(&fd, data + i * sizeof(int), sizeof fd);
        if (in->nfds < room)
            in->fds[in->nfds++] = fd;
        else
            close(fd), in->dropped++;
    }
}

ssize_t mxc_sockmsg_recv(int sock, void *buf, size_t len, int flags, mxc_sockmsg_in *in, size_t room)
{
    mxc_sockmsg_in none;
    if (!in)
        in = &none, room = 0;
    if (room > MXC_SOCKMSG_MAX_FDS)
        room = MXC_SOCKMSG_MAX_FDS;
    *in = (mxc_sockmsg_in){0};
    for (size_t i = 0; i < MXC_SOCKMSG_MAX_FDS; i++)
        in->fds[i] = -1;
    control cm;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = sizeof cm.buf};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return n;
    in->truncated = (mh.msg_flags & MSG_CTRUNC) != 0;
    in->long_payload = (mh.msg_flags & MSG_TRUNC) != 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_len < CMSG_LEN(0))
            continue;
        if (h->cmsg_type == SCM_RIGHTS) {
            take_fds(h, in, room);
        } else if (h->cmsg_type == SCM_CREDENTIALS && h->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred u;
            memcpy(&u, CMSG_DATA(h), sizeof u);
            in->has_cred = true;
            in->cred_pid = u.pid;
        }
    }
    return n;
}

void mxc_sockmsg_in_close(mxc_sockmsg_in *in)
{
    for (size_t i = 0; i < MXC_SOCKMSG_MAX_FDS; i++)
        if (in->fds[i] >= 0) {
            close(in->fds[i]);
            in->fds[i] = -1;
        }
    in->nfds = 0;
}

int mxc_msg_send(int sock, int kind, int err, pid_t pid, const char *stage, const char *detail, const int *fds,
                 size_t nfds)
{
    mxc_msg m = {.kind = kind, .err = err, .pid = pid};
    snprintf(m.stage, sizeof m.stage, "%s", stage ? stage : "");
    snprintf(m.detail, sizeof m.detail, "%s", detail ? detail : "");
    ssize_t n = mxc_sockmsg_send(sock, &m, sizeof m, fds, nfds);
    if (n >= 0 && n != (ssize_t)sizeof m)
        errno = EIO;
    return n == (ssize_t)sizeof m ? 0 : -1;
}

int mxc_msg_recv(int sock, mxc_msg *m, int flags, mxc_sockmsg_in *in, size_t room)
{
    mxc_sockmsg_in none;
    if (!in)
        in = &none, room = 0;
    ssize_t n = mxc_sockmsg_recv(sock, m, sizeof *m, flags, in, room);
    if (n < 0)
        return -1;
    if (n == (ssize_t)sizeof *m && !in->long_payload)
        return 0;
    errno = n == 0 ? EPIPE : in->long_payload ? EMSGSIZE : EIO;
    return -1;
}

int mxc_sockmsg_send_tag(int sock, char tag, int fd)
{
    ssize_t n = mxc_sockmsg_send(sock, &tag, 1, &fd, fd >= 0 ? 1 : 0);
    return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

int mxc_sockmsg_recv_tag(int sock, char *tag, int *fd)
{
    char buf[2];
    mxc_sockmsg_in in;
    ssize_t n = mxc_sockmsg_recv(sock, buf, sizeof buf, 0, &in, 1);
    *fd = -1;
    if (n < 0)
        return -errno;
    if (n != 1) {
        mxc_sockmsg_in_close(&in);
        return n == 0 ? -EPIPE : -EBADMSG;
    }
    *tag = buf[0];
    *fd = in.fds[0];
    return 0;
}

int mxc_sockmsg_send_text(int sock, char tag, const char *text)
{
    size_t n = strlen(text);
    struct iovec iov[2] = {{.iov_base = &tag, .iov_len = 1}, {.iov_base = (void *)text, .iov_len = n}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t r;
    do
        r = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)(n + 1) ? 0 : r < 0 ? -errno : -EMSGSIZE;
}

char *mxc_sockmsg_recv_text(int sock, char tag, size_t max)
{
    char *buf = max < (size_t)-2 ? malloc(max + 2) : NULL;
    if (!buf)
        return NULL;
    ssize_t n;
    do
        n = recv(sock, buf, max + 1, MSG_TRUNC);
    while (n < 0 && errno == EINTR);
    if (n < 1 || (size_t)n > max + 1 || buf[0] != tag) {
        free(buf);
        return NULL;
    }
    memmove(buf, buf + 1, (size_t)n - 1);
    buf[n - 1] = '\0';
    return buf;
}

/* The fixed part of an error report, after its tag. */
typedef struct {
    uint32_t code;
    int32_t native;
    uint16_t oplen, msglen, remlen, pad;
} error_header;

_Static_assert(sizeof(error_header) == MXC_ERROR_WIRE_HEADER, "the error report's header");

size_t mxc_error_encode(char tag, const mxc_error *e, void *buf, size_t len)
{
    error_header h = {.code = (uint32_t)e->code, .native = e->native,
                      .oplen = (uint16_t)strnlen(e->operation, sizeof e->operation - 1),
                      .msglen = (uint16_t)strnlen(e->message, sizeof e->message - 1),
                      .remlen = (uint16_t)strnlen(e->remediation, sizeof e->remediation - 1)};
    size_t total = 1 + sizeof h + h.oplen + h.msglen + h.remlen;
    if (len < total)
        return 0;
    char *p = buf;
    *p++ = tag;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memcpy(p, e->operation, h.oplen);
    memcpy(p + h.oplen, e->message, h.msglen);
    memcpy(p + h.oplen + h.msglen, e->remediation, h.remlen);
    return total;
}

/* One text of a report into its field: it fits and holds no NUL. */
static bool take_text(char *field, size_t size, const char *src, size_t n)
{
    if (n >= size || memchr(src, '\0', n))
        return false;
    memcpy(field, src, n);
    field[n] = '\0';
    return true;
}

int mxc_error_decode(char tag, const void *buf, size_t n, mxc_error *e)
{
    const char *p = buf;
    error_header h;
    mxc_error_clear(e);
    if (n < 1 + sizeof h || p[0] != tag)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "protocol error: a short error report (%zu bytes)", n);
    memcpy(&h, p + 1, sizeof h);
    const char *t = p + 1 + sizeof h;
    if (h.code == MXC_E_NONE || h.code >= MXC_E__COUNT || h.msglen == 0 ||
        n != 1 + sizeof h + h.oplen + h.msglen + h.remlen || !take_text(e->operation, sizeof e->operation, t, h.oplen) ||
        !take_text(e->message, sizeof e->message, t + h.oplen, h.msglen) ||
        !take_text(e->remediation, sizeof e->remediation, t + h.oplen + h.msglen, h.remlen))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "protocol error: a malformed error report (%zu bytes)", n);
    e->code = (mxc_code)h.code;
    e->native = h.native;
    return 0;
}

int mxc_error_send(int sock, char tag, const mxc_error *e)
{
    char buf[MXC_ERROR_WIRE_MAX];
    size_t n = mxc_error_encode(tag, e, buf, sizeof buf);
    ssize_t r = mxc_sockmsg_send(sock, buf, n, NULL, 0);
    return r == (ssize_t)n ? 0 : r < 0 ? -errno : -EMSGSIZE;
}

ssize_t mxc_error_recv(int sock, char tag, void *buf, size_t len, mxc_error *e)
{
    return mxc_error_recv_fd(sock, tag, buf, len, NULL, e);
}

ssize_t mxc_error_recv_fd(int sock, char tag, void *buf, size_t len, int *fd, mxc_error *e)
{
    char wire[MXC_ERROR_WIRE_MAX + 1];
    mxc_sockmsg_in in;
    if (fd)
        *fd = -1;
    ssize_t n = mxc_sockmsg_recv(sock, wire, sizeof wire, 0, &in, fd ? 1 : 0);
    if (n < 0) /* not the end of the stream: a peer gone with unread data (ECONNRESET) is no success */
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, NULL, errno, NULL, "cannot read from the child");
    if (n == 0 || in.long_payload || wire[0] == tag || (size_t)n > len)
        mxc_sockmsg_in_close(&in); /* no message of the caller's: nothing kept */
    if (n == 0)
        return 0;
    if (in.long_payload || (wire[0] != tag && (size_t)n > len))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "protocol error: a message longer than %zu bytes",
                       in.long_payload ? sizeof wire : len);
    if (wire[0] == tag) {
        mxc_error_decode(tag, wire, (size_t)n, e);
        return -1;
    }
    memcpy(buf, wire, (size_t)n);
    if (fd)
        *fd = in.fds[0];
    return n;
}
