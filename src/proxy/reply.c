/* reply.c — see reply.h. */
#include "reply.h"

#include <stdio.h>

static const char *status_text(int status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 407: return "Proxy Authentication Required";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Gateway Timeout";
    }
}

size_t mxc_reply_format(char *out, size_t sz, int status, const char *reason)
{
    int n = snprintf(out, sz, "HTTP/1.1 %d %s\r\n%s%s%s%sConnection: close\r\nContent-Length: 0\r\n\r\n", status,
                     status_text(status), status == 407 ? "Proxy-Authenticate: Basic realm=\"mxc\"\r\n" : "",
                     reason ? "X-Mxc-Deny-Reason: " : "", reason ? reason : "", reason ? "\r\n" : "");
    return n < 0 ? 0 : (size_t)n < sz ? (size_t)n : sz - 1;
}
