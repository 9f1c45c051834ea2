/* thishost.h — owns: which IPv4 destinations this host's kernel delivers
 * to itself, for model 1's rules (issue 27: host loopback and the host's
 * own addresses never, unless the policy names them).  pasta dials from
 * the caller's (the host's) network namespace, so a sandbox address the
 * kernel there routes as `local` — an address of any interface, 127/8,
 * an AnyIP range — is a host service, not the network.  Asked of the
 * kernel by one RTM_GETROUTE dump of the caller's namespace: every route
 * of type local in any table (what `ip route show table all type local`
 * lists), IPv4 only (the stack runs IPv4 only).  Kept merged (no prefix
 * inside another) and sorted, and rendered as the elements of the rule
 * set's `thishost` set (netpolicy.h), which the rules reject ahead of
 * every allow that is not exactly one address.  Needs no privilege. */
#ifndef MXC_NET_THISHOST_H
#define MXC_NET_THISHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MXC_THISHOST_SET "thishost"

typedef struct {
    uint32_t addr; /* host byte order, host part zero */
    unsigned len;  /* 0..32 */
} mxc_prefix4;

typedef struct {
    mxc_prefix4 *p; /* owned; sorted by addr, none inside another */
    size_t n, cap;
} mxc_thishost;

/* Pure: adds a.b.c.d/len (the host part is cleared), keeping the list
 * merged and sorted.  0, or -1 out of memory. */
int mxc_thishost_add(mxc_thishost *t, uint32_t addr, unsigned len);
/* Pure: whether addr (host byte order) lies in one of the prefixes. */
bool mxc_thishost_has(const mxc_thishost *t, uint32_t addr);
/* Pure: the nft commands that make the table's set hold exactly t:
 * "flush set inet mxc thishost\nadd element inet mxc thishost { ... }\n"
 * (replace: flush first, to replace what a refresh finds, in the same
 * transaction; an empty t then only flushes).  Without replace, only the
 * "add element" (the set made in the same script, empty: a flush there
 * costs a commit ~14 ms on this kernel, an element removed and added in one
 * transaction of an interval set).  Owned text, or NULL out of memory. */
char *mxc_thishost_script(const mxc_thishost *t, bool replace);
/* Pure: whether two lists hold the same prefixes. */
bool mxc_thishost_equal(const mxc_thishost *a, const mxc_thishost *b);
void mxc_thishost_free(mxc_thishost *t);

/* The caller's namespace, asked now: 0, or -errno (the caller fails
 * closed: a sandbox whose rules cannot name this host does not run). */
int mxc_thishost_read(mxc_thishost *t);

#endif
