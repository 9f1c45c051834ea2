/* gateway.c — see gateway.h. */
#include "gateway.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENDPOINTS_ENV "MXC_OCI_ALLOW_NODE_LOCAL_ENDPOINTS"

static int bad(mxc_error *e, const char *url, const char *why)
{
    return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "--gateway-endpoint \"%.200s\": %s", url, why);
}

/* "1".."65535", decimal digits alone, no leading zero: the port, else 0. */
static unsigned port_of(const char *s, size_t n)
{
    if (n == 0 || n > 5 || s[0] == '0' || strspn(s, "0123456789") < n)
        return 0;
    unsigned long v = strtoul(s, NULL, 10);
    return v <= 65535 ? (unsigned)v : 0;
}

int osd_gateway_parse(const char *url, osd_gateway *gw, mxc_error *e)
{
    unsigned port = 0;
    const char *h;
    if (!strncmp(url, "http://", 7))
        h = url + 7, port = 80;
    else if (!strncmp(url, "https://", 8))
        h = url + 8, port = 443;
    else
        return bad(e, url, "not an http:// or https:// URL");
    size_t hl, at;
    char host[256];
    if (*h == '[') {
        hl = strcspn(h, "]");
        if (!h[hl] || hl - 1 >= sizeof host)
            return bad(e, url, "an IPv6 address without its ]");
        snprintf(host, sizeof host, "%.*s", (int)(hl - 1), h + 1);
        unsigned char a[16];
        if (inet_pton(AF_INET6, host, a) != 1)
            return bad(e, url, "not an IPv6 address in the brackets");
        at = hl + 1, gw->literal = true;
    } else {
        hl = strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
        if (hl == 0 || hl >= 254)
            return bad(e, url, "no host name or address (letters, digits, dots, dashes)");
        snprintf(host, sizeof host, "%.*s", (int)hl, h);
        unsigned char a[4];
        gw->literal = strspn(host, "0123456789.") == hl;
        if (gw->literal && inet_pton(AF_INET, host, a) != 1)
            return bad(e, url, "an IPv4 address must be a dotted quad");
        at = hl;
    }
    if (h[at] == ':') {
        size_t pl = strcspn(h + at + 1, "/");
        if (!(port = port_of(h + at + 1, pl)))
            return bad(e, url, "the port is not 1-65535");
        at += 1 + pl;
    }
    if (h[at] && h[at] != '/')
        return bad(e, url, "something after the host that is not :PORT or a path");
    snprintf(gw->entry, sizeof gw->entry, "%s%s%s:%u", *h == '[' ? "[" : "", host, *h == '[' ? "]" : "", port);
    return 0;
}

int osd_gateway_allow(const osd_gateway *gw, mxc_error *e)
{
    if (!gw->literal)
        return 0;
    const char *was = getenv(ENDPOINTS_ENV);
    char *v = NULL;
    if (asprintf(&v, "%s%s%s", was && *was ? was : "", was && *was ? "," : "", gw->entry) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    int rc = setenv(ENDPOINTS_ENV, v, 1);
    free(v);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "setenv", errno, NULL, ENDPOINTS_ENV);
    return 0;
}
