/* resolver.c — see resolver.h.  resolv.conf(5): "nameserver ADDR" lines,
 * '#' or ';' comments; glibc reads the keyword at the line's start. */
#include "resolver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RESOLV_MAX 65536 /* bytes of a resolv.conf looked at */

bool mxc_resolver_pick(const char *text, char *out, size_t outsz, bool *loopback)
{
    if (loopback)
        *loopback = false;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, "nameserver", 10) != 0 || (l[10] != ' ' && l[10] != '\t'))
            continue;
        const char *a = l + 10;
        a += strspn(a, " \t");
        size_t n = strcspn(a, " \t\r\n#;%");
        char addr[INET_ADDRSTRLEN];
        struct in_addr in;
        if (n == 0 || n >= sizeof addr)
            continue;
        memcpy(addr, a, n), addr[n] = '\0';
        if (inet_pton(AF_INET, addr, &in) != 1)
            continue; /* IPv6, or not an address: the stack runs IPv4 only */
        unsigned first = ntohl(in.s_addr) >> 24;
        if (first == 127 || first == 0) {
            if (loopback)
                *loopback = true;
            continue;
        }
        if (!inet_ntop(AF_INET, &in, out, (socklen_t)outsz))
            continue;
        return true;
    }
    return false;
}

/* The file's text (bounded), or NULL. */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NULL;
    char *buf = malloc(RESOLV_MAX + 1);
    size_t n = 0;
    ssize_t r;
    while (buf && n < RESOLV_MAX && (r = read(fd, buf + n, RESOLV_MAX - n)) > 0)
        n += (size_t)r;
    close(fd);
    if (buf)
        buf[n] = '\0';
    return buf;
}

void mxc_resolver_plan(mxc_net_policy *np)
{
    np->dns[0] = np->dns_why[0] = '\0';
    if (np->model != MXC_NETM_DIRECT)
        return;
    bool loop = false, loop2 = false;
    char *etc = slurp(MXC_RESOLV_CONF);
    bool found = etc && mxc_resolver_pick(etc, np->dns, sizeof np->dns, &loop);
    free(etc);
    if (!found && loop) {
        char *resolved = slurp(MXC_RESOLV_RESOLVED);
        found = resolved && mxc_resolver_pick(resolved, np->dns, sizeof np->dns, &loop2);
        free(resolved);
    }
    if (found)
        return;
    np->dns[0] = '\0';
    snprintf(np->dns_why, sizeof np->dns_why, "%s",
             loop ? "the host's resolvers are host loopback (" MXC_RESOLV_CONF "), which the sandbox may not reach "
                    "(hostLoopback deny), and no other is known: no DNS forwarder; name a resolver that is not "
                    "host loopback in " MXC_RESOLV_CONF " to have one"
                  : "the host names no IPv4 resolver (" MXC_RESOLV_CONF "): no DNS forwarder");
}
