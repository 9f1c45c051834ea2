/* run_v1.h — a contract-1.0 one-shot on the command line (see run_v1.c). */
#ifndef MXC_RUN_V1_H
#define MXC_RUN_V1_H

#include "error.h"
#include "mxc.h"
#include "request.h"

/* A request (r: as far as it was parsed) refused before anything ran;
 * returns the exit status. */
int mxc_v1_report_refusal(const mxc_request *r, const mxc_error *e, unsigned flags, int out, int err);
/* Runs a one-shot's workload with the caller's streams (api.c's: on the
 * caller's terminal or on pipes); 0 with *code and *timed_out, or -1 with e. */
typedef int mxc_v1_runner(mxc_request *r, unsigned flags, int in, int out, int err, int *code, bool *timed_out,
                          mxc_error *e);
/* A validated one-shot: runs it by run (or, with MXC_RUN_DRY_RUN, reports
 * the dry run); returns the exit status. */
int mxc_v1_run_oneshot(mxc_request *r, unsigned flags, int in, int out, int err, mxc_v1_runner *run);

/* The backends this host offers (contract 1.0's discovery, shared by
 * lxc-exec --available-backends and libmxc_ffi): new reference. */
json_t *mxc_backends_json(void);

#endif
