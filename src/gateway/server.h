/* server.h — the gateway's JSON API on a unix socket (libmicrohttpd).
 * Owns: the socket (made 0600 by its owner; a stale one replaced only when
 * nothing listens on it), the peer check (SO_PEERCRED: the gateway's own
 * uid, or root), the routes
 *   GET    /v1/health                 {"ok":true,"mock":bool,"backend":...}
 *   GET    /v1/sandboxes              {"sandboxes":[record...]}
 *   POST   /v1/sandboxes              create (driver.h) -> 201 record
 *   GET    /v1/sandboxes/NAME         record
 *   GET    /v1/sandboxes/NAME/logs    the workload's output (bytes, streamed: sblog.h)
 *   DELETE /v1/sandboxes/NAME         stop and remove -> {}
 * errors as {"error":{"message":...}} with 400/403/404/409/500, bodies
 * bounded (1 MiB), and serving until SIGTERM or SIGINT. */
#ifndef MXC_GATEWAY_SERVER_H
#define MXC_GATEWAY_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* The default socket: MXC_GATEWAY_SOCKET, else /run/mxc-gateway.sock as
 * root, <private dir>/mxc-gateway.sock otherwise ($XDG_RUNTIME_DIR or
 * another 0700 directory of the user's: mxc_private_dir in state.h; made
 * when make).  0, or -1 with *e. */
int gw_default_socket(bool make, char *out, size_t outsz, mxc_error *e);

/* systemd's socket activation (sd_listen_fds(3)'s protocol, read without
 * libsystemd): when LISTEN_PID is this process and LISTEN_FDS is 1, fd 3 —
 * checked to be a listening AF_UNIX stream socket — is the gateway's
 * socket; its path (getsockname) goes to out, and the LISTEN_* variables
 * are removed so that no child (mxc-exec, a workload) sees them.  1: fd 3
 * is taken; 0: not activated; -1 with *e: activated with something that
 * is not one unix listening socket (refused, never served). */
int gw_socket_activated(char *out, size_t outsz, mxc_error *e);

/* Serves until a stop signal; 0, or -1 with *e.  activated: the socket
 * is systemd's (fd 3, gw_socket_activated): neither made nor removed here. */
int gw_serve(const char *socket_path, bool activated, mxc_error *e);

#endif
