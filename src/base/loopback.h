/* loopback.h — bringing the loopback device of the caller's network namespace up.
 * Owns: the one SIOCGIFFLAGS/SIOCSIFFLAGS pair that every fresh network namespace mxc makes (a
 * sandbox's, a pool entry's, an mxc-oci container's) needs before anything binds 127.0.0.1. */
#ifndef MXC_LOOPBACK_H
#define MXC_LOOPBACK_H

/* "lo" of the current network namespace up and running: 0, or -errno. */
int mxc_loopback_up(void);

#endif
