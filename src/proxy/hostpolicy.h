/* hostpolicy.h — owns: the egress host policy mxc-proxy enforces (legacy
 * network.allowedHosts / blockedHosts, the gateway's network_policies):
 * parsing its entries, normalising a requested host, and deciding a
 * request by name and then by every address it resolves to.  Pure: no I/O
 * (the caller resolves names), no global state.
 *
 * Entries: an exact host name (`example.com`), a wildcard `*.example.com`
 * (every subdomain at any depth, not the apex), an IPv4 or IPv6 literal
 * (IPv6 bare or in brackets), an IPv4 or IPv6 CIDR (`10.0.0.0/8`,
 * `2001:db8::/32`, host bits zero), each with an optional `:port`
 * (IPv6 only as `[addr]:port`); without a port an entry covers ports 80 and
 * 443 only.  Names are compared ASCII-case-insensitively with one trailing
 * dot removed and IDNs as punycode (libidn2, IDNA2008 with TR46
 * non-transitional mapping), on entries and requests alike.
 *
 * A request's host may be a name or an IP literal in any form a resolver
 * would accept (inet_aton's decimal `2852039166`, hex `0xA9FEA9FE`, octal
 * `0251.0376.0251.0376`, short `169.254.43518` / `127.1`, IPv6 incl.
 * IPv4-mapped): literals are decided as addresses, never as names.
 *
 * Blocked outranks allowed, including a blocked CIDR over an allowed name's
 * resolved address.  A special address — loopback, unspecified, link-local
 * (incl. 169.254.169.254), private (10/8, 172.16/12, 192.168/16, fc00::/7),
 * CGNAT 100.64/10, multicast, broadcast, 0/8, 240/4, and IPv6 forms that
 * embed an IPv4 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4
 * 2002::/16, Teredo 2001::/32) judged by the embedded address too — is
 * refused unless an allowed literal or CIDR entry covers it explicitly
 * (an allowed *name* never makes a special address reachable: DNS
 * rebinding).
 *
 * This host itself (the rule model 1 keeps for host loopback, issue 27):
 * a host-local address — 127/8, 0/8, ::1, ::, and the IPv6 forms
 * embedding 127/8 or 0/8 — is admitted only by an allowed entry that
 * *names* host loopback: an IPv4 literal or CIDR lying inside 127.0.0.0/8
 * or 0.0.0.0/8 (`127.0.0.1:5432`, `127.0.0.0/8`), or an IPv6 literal of
 * exactly that address (`[::1]:5432`).  A wider CIDR that merely covers it
 * (`0.0.0.0/0`, the `/1` halves, `126.0.0.0/7`, `::/0`) does not.  And
 * at dial time (check_dial) an address the host's kernel would deliver
 * locally — any address of the host's own interfaces, which the proxy
 * dials from the host's namespace — is admitted only by an allowed literal
 * of exactly that address (`/32`, `/128`, or none), with the port. */
#ifndef MXC_PROXY_HOSTPOLICY_H
#define MXC_PROXY_HOSTPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "error.h"

typedef struct mxc_hostpolicy mxc_hostpolicy;

/* NULL on a bad entry, with err = "<allowed|blocked>[i]: why". */
mxc_hostpolicy *mxc_hostpolicy_new(const char *const *allowed, size_t nallowed, const char *const *blocked,
                                   size_t nblocked, mxc_error *err);
void mxc_hostpolicy_free(mxc_hostpolicy *hp);

typedef enum {
    MXC_HP_DENY = 0,
    MXC_HP_ALLOW_NAME, /* a name an entry allows: resolve it, then every address through check_addr */
    MXC_HP_ALLOW_ADDR, /* an IP literal that is allowed: connect to *literal */
} mxc_hp_verdict;

/* The first decision, before any DNS lookup.  host as the request wrote it
 * (httphead's host), port 1..65535.  On ALLOW_NAME canon holds the
 * normalised name to resolve; on ALLOW_ADDR literal holds the address (port
 * set).  On DENY *reason is a short static token for the 403 reason header:
 * "bad-host", "blocked", "not-allowed", "port-not-allowed",
 * "special-address". */
mxc_hp_verdict mxc_hostpolicy_check_name(const mxc_hostpolicy *hp, const char *host, unsigned port, char *canon,
                                         size_t csz, struct sockaddr_storage *literal, const char **reason);

/* The second decision, for every address an ALLOW_NAME request resolves to
 * (the proxy connects only to addresses that pass, and refuses the request
 * when any fails).  true: may connect; false: *reason ("blocked",
 * "special-address"). */
bool mxc_hostpolicy_check_addr(const mxc_hostpolicy *hp, const struct sockaddr *addr, const char **reason);

/* The last decision, for the address about to be dialled (a literal the
 * first decision allowed, or one check_addr passed): check_addr, and when
 * local (the caller's route lookup: this host's kernel would deliver addr
 * to this host — one of its own addresses) only an allowed literal of
 * exactly addr, with the port, admits it.  *reason "blocked" or
 * "special-address". */
bool mxc_hostpolicy_check_dial(const mxc_hostpolicy *hp, const struct sockaddr *addr, bool local, const char **reason);

#endif
