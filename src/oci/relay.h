/* relay.h — `run` of a terminal process without --console-socket: mxc-oci
 * keeps the pty master and relays it to its own stdio, as runc does.
 * Owns: whether the bundle asks for a terminal, a private listening console
 * socket (a 0700 directory of root's), receiving the master from the init
 * and sizing it like the caller's terminal (unless consoleSize did).  The
 * copy is the engine's one terminal relay (mxc_exec_relay_terminal). */
#ifndef MXC_OCI_RELAY_H
#define MXC_OCI_RELAY_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

typedef struct {
    int listen_fd;  /* -1 when no relay */
    int master;     /* -1 until received */
    char dir[64];   /* the private directory holding the socket */
    char path[96];  /* its socket: what create connects to */
} oci_relay;

/* Whether config.json of the bundle (NULL: ".") has process.terminal true;
 * create reads it again and decides (this only chooses to listen). */
bool oci_relay_wanted(const char *bundle);
/* Listens on a fresh socket; r->path is the --console-socket to pass to create. */
int oci_relay_open(oci_relay *r, mxc_error *e);
/* Accepts the init's connection and receives the master (a terminal, checked). */
int oci_relay_receive(oci_relay *r, mxc_error *e);
/* Relays stdin -> master and master -> stdout until the process behind
 * pidfd exits (then the master is drained): mxc_exec_relay_terminal, the
 * caller's terminal raw meanwhile, resized with it, restored after. */
void oci_relay_copy(oci_relay *r, int pidfd);
/* Closes and removes what open made (safe to call on a zeroed one after open failed). */
void oci_relay_close(oci_relay *r);

#endif
