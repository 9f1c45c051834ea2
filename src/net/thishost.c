/* thishost.c — see thishost.h.  rtnetlink(7): an RTM_GETROUTE request with
 * NLM_F_DUMP and no filter answers every route of every table, in
 * multi-part messages ended by NLMSG_DONE; rtm_type RTN_LOCAL marks a
 * destination delivered to this host (the kernel adds one for each
 * interface address in table local; `ip route add local P` adds AnyIP
 * ranges, in any table a policy rule may consult — all are taken). */
#include "thishost.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint32_t mask(unsigned len)
{
    return len == 0 ? 0 : ~0u << (32 - len);
}

static bool covers(const mxc_prefix4 *p, uint32_t addr, unsigned len)
{
    return p->len <= len && (addr & mask(p->len)) == p->addr;
}

int mxc_thishost_add(mxc_thishost *t, uint32_t addr, unsigned len)
{
    if (len > 32)
        len = 32;
    addr &= mask(len);
    for (size_t i = 0; i < t->n; i++)
        if (covers(&t->p[i], addr, len))
            return 0;
    /* drop the ones the new prefix covers (prefixes nest or are disjoint) */
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!covers(&(mxc_prefix4){addr, len}, t->p[i].addr, t->p[i].len))
            t->p[k++] = t->p[i];
    t->n = k;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        mxc_prefix4 *g = realloc(t->p, cap * sizeof *g);
        if (!g)
            return -1;
        t->p = g, t->cap = cap;
    }
    size_t at = 0;
    while (at < t->n && t->p[at].addr < addr)
        at++;
    memmove(t->p + at + 1, t->p + at, (t->n - at) * sizeof *t->p);
    t->p[at] = (mxc_prefix4){addr, len};
    t->n++;
    return 0;
}

bool mxc_thishost_has(const mxc_thishost *t, uint32_t addr)
{
    for (size_t i = 0; i < t->n; i++)
        if (covers(&t->p[i], addr, 32))
            return true;
    return false;
}

bool mxc_thishost_equal(const mxc_thishost *a, const mxc_thishost *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (a->p[i].addr != b->p[i].addr || a->p[i].len != b->p[i].len)
            return false;
    return true;
}

char *mxc_thishost_script(const mxc_thishost *t, bool replace)
{
    static const char FLUSH[] = "flush set inet mxc " MXC_THISHOST_SET "\n",
                      ADD[] = "add element inet mxc " MXC_THISHOST_SET " { ";
    size_t cap = sizeof FLUSH + sizeof ADD + t->n * 20 + 4;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t n = (size_t)snprintf(s, cap, "%s", replace ? FLUSH : "");
    if (t->n)
        n += (size_t)snprintf(s + n, cap - n, "%s", ADD);
    for (size_t i = 0; i < t->n; i++) {
        struct in_addr in = {.s_addr = htonl(t->p[i].addr)};
        char a[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &in, a, sizeof a);
        n += (size_t)snprintf(s + n, cap - n, i ? ", %s/%u" : "%s/%u", a, t->p[i].len);
    }
    if (t->n)
        snprintf(s + n, cap - n, " }\n");
    return s;
}

void mxc_thishost_free(mxc_thishost *t)
{
    free(t->p);
    t->p = NULL;
    t->n = t->cap = 0;
}

/* One route message: a local IPv4 one goes into t.  0, or -1 (memory). */
static int take(mxc_thishost *t, const struct nlmsghdr *h)
{
    const struct rtmsg *r = NLMSG_DATA(h);
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof *r) || r->rtm_family != AF_INET || r->rtm_type != RTN_LOCAL ||
        r->rtm_dst_len > 32)
        return 0;
    uint32_t dst = 0; /* no RTA_DST: the default prefix */
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *r));
    for (const struct rtattr *a = RTM_RTA(r); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
        if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == 4) {
            memcpy(&dst, RTA_DATA(a), 4);
            dst = ntohl(dst);
        }
    return mxc_thishost_add(t, dst, r->rtm_dst_len);
}

int mxc_thishost_read(mxc_thishost *t)
{
    struct {
        struct nlmsghdr n;
        struct rtmsg r;
    } req = {.n = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)), .nlmsg_type = RTM_GETROUTE,
                   .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1},
             .r = {.rtm_family = AF_INET}};
    t->n = 0;
    enum { BUFSZ = 32768 };
    char *buf = malloc(BUFSZ); /* malloc's alignment suits nlmsghdr; not static: callers may be threaded */
    int fd = buf ? socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE) : -1;
    if (fd < 0) {
        int err = buf ? errno : ENOMEM;
        free(buf);
        return -err;
    }
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int rc = -EIO;
    if (sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) != (ssize_t)req.n.nlmsg_len) {
        rc = -errno;
        goto out;
    }
    for (;;) {
        ssize_t got = recv(fd, buf, BUFSZ, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            rc = got < 0 ? -errno : -EIO;
            goto out;
        }
        size_t left = (size_t)got;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
            if (h->nlmsg_seq != 1)
                continue;
            if (h->nlmsg_type == NLMSG_DONE) {
                rc = 0;
                goto out;
            }
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *er = NLMSG_DATA(h);
                rc = h->nlmsg_len >= NLMSG_LENGTH(sizeof *er) && er->error < 0 ? er->error : -EIO;
                goto out;
            }
            if (h->nlmsg_type == RTM_NEWROUTE && take(t, h) < 0) {
                rc = -ENOMEM;
                goto out;
            }
        }
    }
out:
    close(fd);
    free(buf);
    return rc;
}
