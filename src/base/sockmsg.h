/* sockmsg.h — messages with descriptors over a Unix socket: the one channel
 * between a parent and its child (the holder's start protocol, an exec's
 * connection, the OCI init's, the governed proxy's listener).
 * Owns: one sendmsg/recvmsg of a payload with up to MXC_SOCKMSG_MAX_FDS
 * descriptors (SCM_RIGHTS) or a process's credentials (SCM_CREDENTIALS);
 * on receipt every control message is checked (level, type, length), each
 * descriptor arrives close-on-exec, and one nobody has room for is closed,
 * never leaked.  A protocol is a payload with a tag of its own enum: the
 * engine's start and exec channels send one typed message (mxc_msg: tag,
 * errno, pid, where and why); the smallest, a one-byte tag and at most one
 * descriptor (the OCI init's, the governed proxy's listener), is here
 * whole too, and so is a child's failure: an mxc_error itself (code,
 * message, operation, errno, remediation) after the channel's failure tag,
 * every length checked on receipt. */
#ifndef MXC_SOCKMSG_H
#define MXC_SOCKMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define MXC_SOCKMSG_MAX_FDS 4

/* What arrived beside a payload. */
typedef struct {
    int fds[MXC_SOCKMSG_MAX_FDS]; /* the first nfds are open (close-on-exec), the rest -1 */
    size_t nfds;
    size_t dropped;   /* descriptors past the room given, closed */
    bool truncated;   /* MSG_CTRUNC: the kernel dropped control data */
    bool long_payload; /* MSG_TRUNC: the payload was longer than the buffer (the rest is gone) */
    bool has_cred;    /* cred_pid below is the sender's (SCM_CREDENTIALS) */
    pid_t cred_pid;
} mxc_sockmsg_in;

/* len bytes of buf and nfds (at most MXC_SOCKMSG_MAX_FDS) descriptors in
 * one message (MSG_NOSIGNAL; EINTR retried): what sendmsg returned (-1,
 * errno set, on failure). */
ssize_t mxc_sockmsg_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds);
/* The same with the process pid, uid, gid as credentials instead of fds
 * (the kernel translates the pid into the receiver's namespace). */
ssize_t mxc_sockmsg_send_cred(int sock, const void *buf, size_t len, pid_t pid, uid_t uid, gid_t gid);
/* One message into buf (at most len bytes; flags for recvmsg, to which
 * MSG_CMSG_CLOEXEC is added; EINTR retried): what recvmsg returned.  What
 * came with it lands in *in, at most `room` descriptors (<= MAX_FDS) kept;
 * with in NULL every descriptor received is closed. */
ssize_t mxc_sockmsg_recv(int sock, void *buf, size_t len, int flags, mxc_sockmsg_in *in, size_t room);
/* Closes the descriptors of *in that the caller did not take (set to -1). */
void mxc_sockmsg_in_close(mxc_sockmsg_in *in);

/* The typed message: kind is a tag of the channel's own enum. */
typedef struct {
    int kind;
    int err;          /* an errno, or the channel's number (an exit code) */
    pid_t pid;
    char stage[64];   /* where it failed */
    char detail[256]; /* why, in words */
} mxc_msg;

/* One typed message (stage and detail NULL: empty) with nfds descriptors:
 * 0, or -1 (errno set; EIO when the kernel took less). */
int mxc_msg_send(int sock, int kind, int err, pid_t pid, const char *stage, const char *detail, const int *fds,
                 size_t nfds);
/* One typed message into *m, what came with it into *in as
 * mxc_sockmsg_recv says: 0 when a whole one came, else -1 (errno set; EIO
 * for a short one, EMSGSIZE for a longer one, EPIPE at the end of the
 * stream). */
int mxc_msg_recv(int sock, mxc_msg *m, int flags, mxc_sockmsg_in *in, size_t room);

/* A one-byte message: tag, with fd when fd >= 0.  0, or -errno (-EIO when
 * the kernel took less). */
int mxc_sockmsg_send_tag(int sock, char tag, int fd);
/* One one-byte message: its tag in *tag, a descriptor passed with it in *fd
 * (-1 when none; a second one is closed).  0, or -errno (-EBADMSG when the
 * message was not one byte, -EPIPE at the end of the stream). */
int mxc_sockmsg_recv_tag(int sock, char *tag, int *fd);

/* A one-byte tag and a text (without its NUL) in one message: 0, or -errno
 * (-EMSGSIZE when the kernel took less). */
int mxc_sockmsg_send_text(int sock, char tag, const char *text);
/* One message of that kind with this tag and at most max bytes of text:
 * the text (malloc'd, NUL-terminated), or NULL when none came, another tag
 * came, or a longer text (its whole message is consumed either way). */
char *mxc_sockmsg_recv_text(int sock, char tag, size_t max);

/* ---- a child's failure to its parent: the mxc_error itself ----
 * One message: the channel's failure tag, a fixed header (code, errno, the
 * lengths of the operation, the message and the remediation), then those
 * texts without their NULs (the details stay with the sender).  On receipt
 * every length is checked against its field: a short, long or malformed
 * report is itself a protocol error. */
#define MXC_ERROR_WIRE_HEADER 16
#define MXC_ERROR_WIRE_MAX /* the longest report: its three texts at their longest, without their NULs */       \
    (1 + MXC_ERROR_WIRE_HEADER + sizeof((mxc_error *)0)->operation + sizeof((mxc_error *)0)->message +        \
     sizeof((mxc_error *)0)->remediation - 3)

/* e after tag into buf: the bytes written, 0 when len is too small. */
size_t mxc_error_encode(char tag, const mxc_error *e, void *buf, size_t len);
/* The n bytes of such a message into *e: 0, or -1 with *e a protocol
 * error (backend_error) when they are not one well-formed report. */
int mxc_error_decode(char tag, const void *buf, size_t n, mxc_error *e);
/* e after tag in one message: 0, or -errno (-EMSGSIZE when the kernel took less). */
int mxc_error_send(int sock, char tag, const mxc_error *e);
/* One message of a channel whose failures are tag-prefixed reports
 * (descriptors sent with it are closed): any other message is copied into
 * buf (at most len bytes) and its length returned; 0 at the end of the
 * stream (the peer closed it, nothing unread); -1 with *e the report that
 * came, a protocol error for a malformed report or a message longer than
 * len, or the failed recv (a peer gone with unread data: ECONNRESET). */
ssize_t mxc_error_recv(int sock, char tag, void *buf, size_t len, mxc_error *e);
/* The same, a descriptor that came with a message other than a report
 * kept in *fd (-1 when none came; a second one is closed). */
ssize_t mxc_error_recv_fd(int sock, char tag, void *buf, size_t len, int *fd, mxc_error *e);

#endif
