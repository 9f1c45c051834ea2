/* test_sockmsg.c — the one parent/child channel (src/base/sockmsg.h): a
 * payload with descriptors arrives whole, each descriptor close-on-exec; a
 * descriptor past the receiver's room is closed, never leaked; credentials
 * arrive as the sender's pid; the one-byte tag messages refuse a longer one
 * and tell the end of the stream; an mxc_error crosses whole (code, message,
 * operation, errno, remediation), and a short, long or malformed report is
 * a protocol error. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sockmsg.h"

static void pair(int sv[2])
{
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
}

static bool same_file(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

static void payload_and_fds(void)
{
    int sv[2], p[2];
    pair(sv);
    CHECK(pipe(p) == 0);
    int before = open_fds();
    CHECK_INT_EQ(mxc_sockmsg_send(sv[0], "hello", 5, p, 2), 5);
    char buf[16] = "";
    mxc_sockmsg_in in;
    CHECK_INT_EQ(mxc_sockmsg_recv(sv[1], buf, sizeof buf, 0, &in, 4), 5);
    CHECK(!memcmp(buf, "hello", 5));
    CHECK_INT_EQ(in.nfds, 2);
    CHECK_INT_EQ(in.dropped, 0);
    CHECK(!in.truncated);
    CHECK(same_file(in.fds[0], p[0]) && same_file(in.fds[1], p[1]));
    CHECK(fcntl(in.fds[0], F_GETFD) & FD_CLOEXEC);
    CHECK_INT_EQ(in.fds[2], -1);
    mxc_sockmsg_in_close(&in);
    CHECK_INT_EQ(open_fds(), before);
    /* room for one: the second is closed */
    CHECK_INT_EQ(mxc_sockmsg_send(sv[0], "x", 1, p, 2), 1);
    CHECK_INT_EQ(mxc_sockmsg_recv(sv[1], buf, sizeof buf, 0, &in, 1), 1);
    CHECK_INT_EQ(in.nfds, 1);
    CHECK_INT_EQ(in.dropped, 1);
    mxc_sockmsg_in_close(&in);
    CHECK_INT_EQ(open_fds(), before);
    /* no room asked for (in NULL): every one closed */
    CHECK_INT_EQ(mxc_sockmsg_send(sv[0], "y", 1, p, 2), 1);
    CHECK_INT_EQ(mxc_sockmsg_recv(sv[1], buf, sizeof buf, 0, NULL, 0), 1);
    CHECK_INT_EQ(open_fds(), before);
    /* more than the channel carries is refused before sending */
    int many[MXC_SOCKMSG_MAX_FDS + 1] = {p[0], p[0], p[0], p[0], p[0]};
    errno = 0;
    CHECK_INT_EQ(mxc_sockmsg_send(sv[0], "z", 1, many, MXC_SOCKMSG_MAX_FDS + 1), -1);
    CHECK_INT_EQ(errno, EINVAL);
    /* nothing waiting: MSG_DONTWAIT answers EAGAIN */
    CHECK_INT_EQ(mxc_sockmsg_recv(sv[1], buf, sizeof buf, MSG_DONTWAIT, &in, 4), -1);
    CHECK_INT_EQ(in.nfds, 0);
    close(p[0]), close(p[1]), close(sv[0]), close(sv[1]);
}

static void credentials(void)
{
    int sv[2], on = 1;
    pair(sv);
    CHECK(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0);
    CHECK_INT_EQ(mxc_sockmsg_send_cred(sv[0], "c", 1, getpid(), getuid(), getgid()), 1);
    char b;
    mxc_sockmsg_in in;
    CHECK_INT_EQ(mxc_sockmsg_recv(sv[1], &b, 1, 0, &in, 1), 1);
    CHECK(in.has_cred);
    CHECK_INT_EQ(in.cred_pid, getpid());
    CHECK_INT_EQ(in.nfds, 0);
    close(sv[0]), close(sv[1]);
}

static void tags(void)
{
    int sv[2], p[2];
    pair(sv);
    CHECK(pipe2(p, O_CLOEXEC) == 0);
    char tag = 0;
    int fd = 7;
    CHECK_INT_EQ(mxc_sockmsg_send_tag(sv[0], 'T', p[0]), 0);
    CHECK_INT_EQ(mxc_sockmsg_recv_tag(sv[1], &tag, &fd), 0);
    CHECK_INT_EQ(tag, 'T');
    CHECK(fd >= 0 && same_file(fd, p[0]));
    close(fd);
    CHECK_INT_EQ(mxc_sockmsg_send_tag(sv[0], 'G', -1), 0);
    CHECK_INT_EQ(mxc_sockmsg_recv_tag(sv[1], &tag, &fd), 0);
    CHECK_INT_EQ(tag, 'G');
    CHECK_INT_EQ(fd, -1);
    /* a longer message is not a tag */
    CHECK_INT_EQ(send(sv[0], "Ewhy", 4, 0), 4);
    CHECK_INT_EQ(mxc_sockmsg_recv_tag(sv[1], &tag, &fd), -EBADMSG);
    CHECK_INT_EQ(fd, -1);
    /* the peer gone */
    close(sv[0]);
    CHECK_INT_EQ(mxc_sockmsg_recv_tag(sv[1], &tag, &fd), -EPIPE);
    close(sv[1]), close(p[0]), close(p[1]);
}

static void typed(void)
{
    int sv[2], p[2];
    pair(sv);
    CHECK(pipe2(p, O_CLOEXEC) == 0);
    CHECK_INT_EQ(mxc_msg_send(sv[0], 5, EPERM, 42, "holder.mount", "cannot mount /x", &p[1], 1), 0);
    mxc_msg m;
    mxc_sockmsg_in in;
    CHECK_INT_EQ(mxc_msg_recv(sv[1], &m, 0, &in, 2), 0);
    CHECK_INT_EQ(m.kind, 5);
    CHECK_INT_EQ(m.err, EPERM);
    CHECK_INT_EQ(m.pid, 42);
    CHECK_STR_EQ(m.stage, "holder.mount");
    CHECK_STR_EQ(m.detail, "cannot mount /x");
    CHECK(in.nfds == 1 && same_file(in.fds[0], p[1]));
    mxc_sockmsg_in_close(&in);
    CHECK_INT_EQ(mxc_msg_send(sv[0], 1, 0, 0, NULL, NULL, NULL, 0), 0);
    CHECK_INT_EQ(mxc_msg_recv(sv[1], &m, 0, NULL, 0), 0);
    CHECK_STR_EQ(m.stage, "");
    /* a short one is not a message */
    CHECK_INT_EQ(send(sv[0], "K", 1, 0), 1);
    errno = 0;
    CHECK_INT_EQ(mxc_msg_recv(sv[1], &m, 0, &in, 1), -1);
    CHECK_INT_EQ(errno, EIO);
    /* nor a longer one */
    char big[sizeof(mxc_msg) + 8] = {0};
    CHECK_INT_EQ(send(sv[0], big, sizeof big, 0), (ssize_t)sizeof big);
    errno = 0;
    CHECK_INT_EQ(mxc_msg_recv(sv[1], &m, 0, NULL, 0), -1);
    CHECK_INT_EQ(errno, EMSGSIZE);
    close(sv[0]);
    errno = 0;
    CHECK_INT_EQ(mxc_msg_recv(sv[1], &m, 0, &in, 1), -1);
    CHECK_INT_EQ(errno, EPIPE);
    close(sv[1]), close(p[0]), close(p[1]);
}

static void texts(void)
{
    int sv[2];
    pair(sv);
    CHECK_INT_EQ(mxc_sockmsg_send_text(sv[0], 'h', "{\"status\": \"creating\"}"), 0);
    char *t = mxc_sockmsg_recv_text(sv[1], 'h', 64);
    CHECK_STR_EQ(t, "{\"status\": \"creating\"}");
    free(t);
    CHECK_INT_EQ(mxc_sockmsg_send_text(sv[0], 'P', ""), 0);
    t = mxc_sockmsg_recv_text(sv[1], 'P', 64);
    CHECK_STR_EQ(t, "");
    free(t);
    /* another tag, a text longer than max: NULL, the message consumed */
    CHECK_INT_EQ(mxc_sockmsg_send_text(sv[0], 'E', "why"), 0);
    CHECK(mxc_sockmsg_recv_text(sv[1], 'h', 64) == NULL);
    CHECK_INT_EQ(mxc_sockmsg_send_text(sv[0], 'h', "12345"), 0);
    CHECK(mxc_sockmsg_recv_text(sv[1], 'h', 4) == NULL);
    CHECK_INT_EQ(mxc_sockmsg_send_text(sv[0], 'h', "1234"), 0);
    t = mxc_sockmsg_recv_text(sv[1], 'h', 4);
    CHECK_STR_EQ(t, "1234");
    free(t);
    close(sv[0]);
    CHECK(mxc_sockmsg_recv_text(sv[1], 'h', 64) == NULL);
    close(sv[1]);
}

/* An error report: encoded and decoded whole, and every way it can be wrong refused. */
static void error_encoding(void)
{
    mxc_error e = {0}, d = {0};
    mxc_err_os(&e, MXC_E_POLICY_VALIDATION, "oci.init", EACCES, "fix it", "process.cwd %s", "/x");
    char buf[MXC_ERROR_WIRE_MAX];
    size_t n = mxc_error_encode('E', &e, buf, sizeof buf);
    CHECK(n == 1 + MXC_ERROR_WIRE_HEADER + strlen("oci.init") + strlen(e.message) + strlen("fix it"));
    CHECK_INT_EQ(mxc_error_decode('E', buf, n, &d), 0);
    CHECK_INT_EQ(d.code, MXC_E_POLICY_VALIDATION);
    CHECK_STR_EQ(d.message, e.message);
    CHECK_STR_EQ(d.operation, "oci.init");
    CHECK_INT_EQ(d.native, EACCES);
    CHECK_STR_EQ(d.remediation, "fix it");
    /* too small a buffer: nothing written */
    CHECK_INT_EQ(mxc_error_encode('E', &e, buf, n - 1), 0);
    /* the longest error fits the wire's bound */
    mxc_error big = {.code = MXC_E_BACKEND_ERROR};
    memset(big.message, 'm', sizeof big.message - 1);
    memset(big.operation, 'o', sizeof big.operation - 1);
    memset(big.remediation, 'r', sizeof big.remediation - 1);
    CHECK_INT_EQ(mxc_error_encode('E', &big, buf, sizeof buf), sizeof buf);
    CHECK_INT_EQ(mxc_error_decode('E', buf, sizeof buf, &d), 0);
    CHECK_INT_EQ(strlen(d.message), sizeof d.message - 1);
    /* truncated at every length, one byte too many, another tag: protocol errors */
    n = mxc_error_encode('E', &e, buf, sizeof buf);
    for (size_t k = 0; k < n; k++) {
        CHECK_INT_EQ(mxc_error_decode('E', buf, k, &d), -1);
        CHECK_INT_EQ(d.code, MXC_E_BACKEND_ERROR);
        CHECK_CONTAINS(d.message, "protocol error");
    }
    CHECK_INT_EQ(mxc_error_decode('E', buf, n + 1, &d), -1);
    CHECK_INT_EQ(mxc_error_decode('X', buf, n, &d), -1);
    /* a length past its field (oversize), a NUL inside a text, an unknown code, no message */
    char bad[sizeof buf];
    uint16_t len;
    memcpy(bad, buf, n);
    len = (uint16_t)sizeof e.operation; /* the header's operation length, at offset 1 + 8 */
    memcpy(bad + 9, &len, sizeof len);
    CHECK_INT_EQ(mxc_error_decode('E', bad, n, &d), -1);
    memcpy(bad, buf, n);
    bad[1 + MXC_ERROR_WIRE_HEADER + 2] = '\0';
    CHECK_INT_EQ(mxc_error_decode('E', bad, n, &d), -1);
    memcpy(bad, buf, n);
    uint32_t code = MXC_E__COUNT;
    memcpy(bad + 1, &code, sizeof code);
    CHECK_INT_EQ(mxc_error_decode('E', bad, n, &d), -1);
    code = MXC_E_NONE;
    memcpy(bad + 1, &code, sizeof code);
    CHECK_INT_EQ(mxc_error_decode('E', bad, n, &d), -1);
    mxc_error none = {.code = MXC_E_BACKEND_ERROR};
    n = mxc_error_encode('E', &none, buf, sizeof buf);
    CHECK_INT_EQ(mxc_error_decode('E', buf, n, &d), -1);
    mxc_error_clear(&e);
    mxc_error_clear(&d);
}

/* Error reports over the channel, beside the channel's other messages. */
static void error_channel(void)
{
    int sv[2];
    pair(sv);
    mxc_error e = {0}, d = {0};
    char msg[4];
    mxc_err_os(&e, MXC_E_BACKEND_ERROR, "oci.exec", ENOENT, NULL, "exec: \"%s\"", "/nope");
    CHECK_INT_EQ(mxc_error_send(sv[0], 'E', &e), 0);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), -1);
    CHECK_STR_EQ(d.message, e.message);
    CHECK_STR_EQ(d.operation, "oci.exec");
    CHECK_INT_EQ(d.native, ENOENT);
    /* another message: copied; one longer than the room: a protocol error */
    CHECK_INT_EQ(send(sv[0], "K", 1, 0), 1);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), 1);
    CHECK_INT_EQ(msg[0], 'K');
    CHECK_INT_EQ(send(sv[0], "P12345", 6, 0), 6);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), -1);
    CHECK_CONTAINS(d.message, "protocol error");
    /* a report longer than any error: a protocol error, the message consumed */
    char huge[MXC_ERROR_WIRE_MAX + 64];
    memset(huge, 'E', sizeof huge);
    CHECK_INT_EQ(send(sv[0], huge, sizeof huge, 0), (ssize_t)sizeof huge);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), -1);
    CHECK_CONTAINS(d.message, "protocol error");
    /* a short report */
    CHECK_INT_EQ(send(sv[0], "Ewhy", 4, 0), 4);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), -1);
    CHECK_CONTAINS(d.message, "protocol error");
    /* the end of the stream */
    close(sv[0]);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), 0);
    close(sv[1]);
    /* a peer gone with unread data (ECONNRESET): an error, not the end of the stream */
    pair(sv);
    CHECK_INT_EQ(send(sv[1], "S", 1, 0), 1);
    close(sv[0]);
    mxc_error_clear(&d);
    CHECK_INT_EQ(mxc_error_recv(sv[1], 'E', msg, sizeof msg, &d), -1);
    CHECK_INT_EQ(d.native, ECONNRESET);
    close(sv[1]);
    mxc_error_clear(&e);
    mxc_error_clear(&d);
}

int main(void)
{
    error_encoding();
    error_channel();
    texts();
    typed();
    payload_and_fds();
    credentials();
    tags();
    return CHECK_DONE();
}
