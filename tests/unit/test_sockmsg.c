/* test_sockmsg.c — the one parent/child channel (src/base/sockmsg.h): a
 * payload with descriptors arrives whole, each descriptor close-on-exec; a
 * descriptor past the receiver's room is closed, never leaked; credentials
 * arrive as the sender's pid; the one-byte tag messages refuse a longer one
 * and tell the end of the stream. */
#include <errno.h>
#include <fcntl.h>
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

int main(void)
{
    texts();
    typed();
    payload_and_fds();
    credentials();
    tags();
    return CHECK_DONE();
}
