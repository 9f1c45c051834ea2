/* localroute.c — see localroute.h.  rtnetlink(7): an RTM_GETROUTE request
 * with RTA_DST and no NLM_F_DUMP answers the one route the kernel would
 * use for that destination (what `ip route get` prints); its rtm_type is
 * RTN_LOCAL for this host's own addresses. */
#include "localroute.h"

#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const unsigned char MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int mxc_dest_is_local(const struct sockaddr *a)
{
    struct {
        struct nlmsghdr n;
        struct rtmsg r;
        char attr[RTA_SPACE(16)];
    } req;
    memset(&req, 0, sizeof req);
    const void *dst;
    size_t len;
    if (a && a->sa_family == AF_INET) {
        dst = &((const struct sockaddr_in *)a)->sin_addr, len = 4;
        req.r.rtm_family = AF_INET;
    } else if (a && a->sa_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr;
        bool mapped = memcmp(b, MAPPED, 12) == 0;
        dst = mapped ? b + 12 : b, len = mapped ? 4 : 16;
        req.r.rtm_family = mapped ? AF_INET : AF_INET6;
    } else {
        return -1;
    }
    req.r.rtm_dst_len = (unsigned char)(len * 8);
    struct rtattr *ra = (struct rtattr *)req.attr;
    ra->rta_type = RTA_DST;
    ra->rta_len = (unsigned short)RTA_LENGTH(len);
    memcpy(RTA_DATA(ra), dst, len);
    req.n.nlmsg_len = (unsigned)(NLMSG_LENGTH(sizeof req.r) + RTA_SPACE(len));
    req.n.nlmsg_type = RTM_GETROUTE;
    req.n.nlmsg_flags = NLM_F_REQUEST;
    req.n.nlmsg_seq = 1;

    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -1;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int rc = -1;
    if (sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) ==
        (ssize_t)req.n.nlmsg_len) {
        /* rtnetlink answers within the send: the reply is queued already */
        union {
            struct nlmsghdr n;
            char b[4096];
        } buf;
        ssize_t got;
        while ((got = recv(fd, &buf, sizeof buf, MSG_DONTWAIT)) < 0 && errno == EINTR)
            ;
        struct nlmsghdr *h = &buf.n;
        if (got > 0 && NLMSG_OK(h, (size_t)got) && h->nlmsg_seq == 1) {
            if (h->nlmsg_type == RTM_NEWROUTE && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct rtmsg)))
                rc = ((struct rtmsg *)NLMSG_DATA(h))->rtm_type == RTN_LOCAL;
            else if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                /* no route (ENETUNREACH, EHOSTUNREACH...): nowhere, so not here either */
                rc = ((struct nlmsgerr *)NLMSG_DATA(h))->error < 0 ? 0 : -1;
        }
    }
    close(fd);
    return rc;
}
