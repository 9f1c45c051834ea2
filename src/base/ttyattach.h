/* ttyattach.h — the caller's terminal while a workload's terminal is attached to it: the one
 * terminal relay's terminal side, for the engine's attached exec (src/lib/api.c, its bytes
 * relayed by mxc_exec_run) and mxc-oci's `run`/`exec -t` without --console-socket (src/oci/relay.c).
 * Owns: raw mode on the caller's terminal, put back on detach and on the signals that would end
 * the caller (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE: the terminal is restored, then the signal
 * does what it did before), and SIGWINCH: a readable descriptor the relay polls, then the caller's
 * size copied onto the workload's terminal.  One per process: handlers are process-wide.  Base: no
 * engine header. */
#ifndef MXC_TTYATTACH_H
#define MXC_TTYATTACH_H

#include <stdbool.h>

/* Which signals restore the terminal before they act: */
typedef enum {
    MXC_TTY_RESTORE_UNLESS_IGNORED, /* every one not ignored (a caller's handler then runs, once) */
    MXC_TTY_RESTORE_IF_DEFAULT,     /* only those at their default (a caller's handler, e.g. mxc-oci's
                                     * forwarding to the container, keeps the relay and raw mode) */
} mxc_tty_restore;

/* Attaches the caller's terminal fd: SIGWINCH watched, and when fd is a terminal, raw mode with
 * the restoring handlers.  Returns the descriptor readable after a SIGWINCH (-1: none). */
int mxc_ttyattach_begin(int fd, mxc_tty_restore restore);
/* After the SIGWINCH descriptor polled readable: drains it and copies the caller's size onto
 * the workload's terminal pty (a master or slave). */
void mxc_ttyattach_resize(int pty);
/* Restores the terminal and the signal dispositions begin replaced; safe without a begin. */
void mxc_ttyattach_end(void);

#endif
