/* test_resolver.c — unit tests for src/net/resolver.c: which resolver model
 * 1's DNS forwarder may relay to (issue 27 finding 9) — the first IPv4
 * nameserver that is not host loopback; comments, IPv6, zone suffixes and
 * junk skipped; host loopback (127/8, 0/8) noted, never chosen. */
#include <string.h>

#include "check.h"
#include "resolver.h"

static const char *pick(const char *text, bool *loop)
{
    static char out[16];
    return mxc_resolver_pick(text, out, sizeof out, loop) ? out : NULL;
}

int main(void)
{
    bool loop = false;
    CHECK_STR_EQ(pick("nameserver 192.0.2.53\n", &loop), "192.0.2.53");
    CHECK(!loop);
    /* systemd-resolved's stub, dnsmasq, Docker's embedded DNS, 0.0.0.0: never */
    static const char *const local[] = {"nameserver 127.0.0.53\n", "nameserver 127.0.0.1\n", "nameserver 127.0.0.11",
                                        "nameserver 0.0.0.0\n", "nameserver\t127.1.2.3 # cache\n"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++) {
        CHECK_MSG(pick(local[i], &loop) == NULL && loop, "%s", local[i]);
    }
    /* the first that is not loopback, past loopback ones */
    CHECK_STR_EQ(pick("# generated\nsearch example.test\nnameserver 127.0.0.53\noptions edns0 trust-ad\n"
                      "nameserver 198.51.100.53\nnameserver 203.0.113.53\n", &loop),
                 "198.51.100.53");
    CHECK(loop);
    /* IPv6 (the stack runs IPv4 only), comments, a zone, junk, a keyword not at the line's start */
    CHECK(pick("nameserver 2001:db8::53\nnameserver fe80::1%eth0\n#nameserver 192.0.2.1\n;nameserver 192.0.2.2\n"
               " nameserver 192.0.2.3\nnameservers 192.0.2.4\nnameserver 192.0.2\nnameserver 999.1.1.1\n"
               "nameserver\n",
               &loop) == NULL);
    CHECK(!loop);
    CHECK_STR_EQ(pick("nameserver 2001:db8::53\nnameserver 192.0.2.9 # second\n", NULL), "192.0.2.9");
    CHECK_STR_EQ(pick("nameserver 192.0.2.10\r\n", NULL), "192.0.2.10");
    CHECK(pick("", &loop) == NULL && !loop);
    /* not a dotted quad as inet_pton reads it: never a number a resolver would take otherwise */
    CHECK(pick("nameserver 0x7f.1\nnameserver 2130706433\n", &loop) == NULL);

    /* the plan: other models have no forwarder, and say nothing */
    mxc_net_policy np = {.model = MXC_NETM_PROXY};
    mxc_resolver_plan(&np);
    CHECK(np.dns[0] == '\0' && np.dns_why[0] == '\0');
    return CHECK_DONE();
}
