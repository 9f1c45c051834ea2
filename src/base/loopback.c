/* loopback.c — see loopback.h */
#include "loopback.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int mxc_loopback_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = 0;
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        rc = -errno;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (rc == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        rc = -errno;
    close(s);
    return rc;
}
