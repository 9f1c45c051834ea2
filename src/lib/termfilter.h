/* termfilter.h — what a sandboxed workload's terminal output may do to the
 * person's terminal.
 * Owns: a streaming filter (state kept across chunks, bounded) that drops
 * the control sequences that act on the person's machine rather than on
 * the screen: OSC 52 (clipboard), window titles and their reports, colour
 * and font queries, DECRQSS and XTGETTCAP (DCS $q, +q), device attributes
 * and status reports (CSI c, CSI n, ESC Z, DECREQTPARM), window operations
 * (CSI t) — every query whose reply the terminal would type into the
 * workload's input, or into the person's shell once it is gone.  Parsed as
 * a terminal parses (C0 inside a sequence, CAN/SUB, C1 in 7-bit, UTF-8 and
 * raw 8-bit form: see termfilter.c), so no control byte smuggles one past.
 * Everything else passes byte for byte (C1 controls written in UTF-8 pass
 * in their 7-bit form).  Pure: no syscalls. */
#ifndef MXC_TERMFILTER_H
#define MXC_TERMFILTER_H

#include <stddef.h>

#include "iface/front.h" /* mxc_termfilter, MXC_TERMFILTER_SEQ_MAX: the gateway holds one */

void mxc_termfilter_init(mxc_termfilter *f);
/* Filters in[0..n) into out (at least n + MXC_TERMFILTER_SEQ_MAX bytes);
 * returns the bytes written.  A sequence cut by the chunk boundary is held
 * until its end arrives. */
size_t mxc_termfilter_run(mxc_termfilter *f, const unsigned char *in, size_t n, unsigned char *out);

#endif
