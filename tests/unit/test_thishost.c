/* test_thishost.c — src/net/thishost.c's pure parts: the list of this
 * host's IPv4 destinations kept merged (no prefix inside another) and
 * sorted, containment, and the nft commands that make the rule set's set
 * hold it.  The dump itself (RTM_GETROUTE) is read once: loopback is
 * always there. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "thishost.h"

int main(void)
{
    mxc_thishost t = {0};
    CHECK(mxc_thishost_add(&t, 0xC000024D, 32) == 0); /* 192.0.2.77 */
    CHECK(mxc_thishost_add(&t, 0x7F000001, 32) == 0); /* 127.0.0.1 */
    CHECK(mxc_thishost_add(&t, 0x7F000000, 8) == 0);  /* 127/8 swallows 127.0.0.1 */
    CHECK(mxc_thishost_add(&t, 0x7F000035, 32) == 0); /* and later ones inside it */
    CHECK(mxc_thishost_add(&t, 0xC00002FF, 24) == 0); /* 192.0.2.0/24 (host part cleared) swallows .77 */
    CHECK(mxc_thishost_add(&t, 0x0A000001, 32) == 0); /* 10.0.0.1 */
    CHECK(mxc_thishost_add(&t, 0x0A000002, 32) == 0); /* 10.0.0.2: adjacent, kept apart */
    CHECK(t.n == 4);
    char *s = mxc_thishost_script(&t, true);
    CHECK_STR_EQ(s, "flush set inet mxc thishost\n"
                    "add element inet mxc thishost { 10.0.0.1/32, 10.0.0.2/32, 127.0.0.0/8, 192.0.2.0/24 }\n");
    free(s);
    CHECK(mxc_thishost_has(&t, 0x7F7F7F7F) && mxc_thishost_has(&t, 0xC0000201) && mxc_thishost_has(&t, 0x0A000002));
    CHECK(!mxc_thishost_has(&t, 0x0A000003) && !mxc_thishost_has(&t, 0xC0000301) && !mxc_thishost_has(&t, 0));
    mxc_thishost u = {0};
    CHECK(mxc_thishost_add(&u, 0xC0000200, 24) == 0 && mxc_thishost_add(&u, 0x7F000000, 8) == 0 &&
          mxc_thishost_add(&u, 0x0A000002, 32) == 0);
    CHECK(!mxc_thishost_equal(&t, &u));
    CHECK(mxc_thishost_add(&u, 0x0A000001, 32) == 0 && mxc_thishost_equal(&t, &u));
    mxc_thishost_free(&u);
    /* an empty list only flushes */
    s = mxc_thishost_script(&u, true);
    CHECK_STR_EQ(s, "flush set inet mxc thishost\n");
    free(s);
    /* into a set made in the same script: no flush (an empty one: nothing) */
    s = mxc_thishost_script(&u, false);
    CHECK_STR_EQ(s, "");
    free(s);
    s = mxc_thishost_script(&t, false);
    CHECK_STR_EQ(s, "add element inet mxc thishost { 10.0.0.1/32, 10.0.0.2/32, 127.0.0.0/8, 192.0.2.0/24 }\n");
    free(s);
    /* 0.0.0.0/0 (a local default route) covers everything */
    CHECK(mxc_thishost_add(&t, 0x01020304, 0) == 0 && t.n == 1 && mxc_thishost_has(&t, 0x08080808));
    mxc_thishost_free(&t);
    /* the kernel's own answer: loopback is this host */
    CHECK(mxc_thishost_read(&t) == 0 && mxc_thishost_has(&t, 0x7F000001));
    mxc_thishost_free(&t);
    return CHECK_DONE();
}
