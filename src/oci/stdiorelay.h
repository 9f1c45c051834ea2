/* stdiorelay.h — a process without process.terminal never gets the terminal mxc-oci was given as
 * stdio (the operator's: read, settings, escape sequences, kept after mxc-oci returned).
 * Owns: which of mxc-oci's fds 0-2 are terminals, and for each what the process gets instead:
 * attached (a foreground `run`, `exec`) a pipe whose other end mxc-oci relays while it waits
 * (the terminal's input into the process's stdin, its stdout and stderr through the engine's
 * terminal filter, termfilter.h) and closes once the process ended, so that what the container
 * left running reads EOF and writes into a pipe without a reader; detached (`create`, `run -d`,
 * `exec -d`) /dev/null.  An fd that is no terminal (pipes and files, what containerd, Podman
 * and CRI give) passes straight through, unchanged, with no relay. */
#ifndef MXC_OCI_STDIORELAY_H
#define MXC_OCI_STDIORELAY_H

#include <stdbool.h>

#include "error.h"

typedef struct {
    int give[3];  /* what the process gets as fd i (close-on-exec here), -1: mxc-oci's own fd i */
    int near[3];  /* attached: mxc-oci's end of fd i's pipe (stdin's write end, the others' read ends) */
} oci_stdio;

#define OCI_STDIO_NONE {{-1, -1, -1}, {-1, -1, -1}}

/* For each of mxc-oci's fds 0-2 that is a terminal, a pipe (attached) or /dev/null (detached; a
 * warning when output is lost that way).  0, or -1 with e set. */
int oci_stdio_open(oci_stdio *s, bool attached, mxc_error *e);
/* In the new process, before anything of the container's: give[i] onto fd i (async-signal-safe). */
void oci_stdio_take(const oci_stdio *s);
/* In mxc-oci once the process has them: give[] closed. */
void oci_stdio_given(oci_stdio *s);
/* Whether there is anything to relay. */
bool oci_stdio_relays(const oci_stdio *s);
/* Relays until the process behind pidfd exits, then what its pipes held at that moment; then
 * every near end closed.  Signals go on being handled by the caller's handlers; SIGPIPE is
 * ignored meanwhile (a process that closed its stdin). */
void oci_stdio_relay(oci_stdio *s, int pidfd);
/* Everything still open closed (safe on OCI_STDIO_NONE). */
void oci_stdio_close(oci_stdio *s);

#endif
