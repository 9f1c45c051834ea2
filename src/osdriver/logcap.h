/* logcap.h — a sandbox's supervisor log, capped.
 * Owns: the keeper between a sandbox's stdout and stderr (a pipe, given to mxc-oci create as
 * the container's stdio) and its log file STATE/work/ID/log: a process of its own (forked
 * twice: init's child, in a session of its own, so it outlives a driver restart as the
 * sandbox does, and leaves no zombie to the driver), holding only the pipe's read end, the
 * log (O_APPEND) and a "done" pipe.  It copies what arrives; when the log would grow past
 * OSD_LOG_MAX it truncates it to nothing and writes a marker line first, so one sandbox's
 * output never holds more than OSD_LOG_MAX bytes of the state's file system (review of issue
 * 37, (a)), and the writer never sees an error.  It ends at the pipe's end of file (every
 * process of the sandbox gone); the driver's end of the done pipe then reads end of file. */
#ifndef MXC_OSD_LOGCAP_H
#define MXC_OSD_LOGCAP_H

#include <stdbool.h>

#include "error.h"

#define OSD_LOG_MAX (8LL << 20) /* bytes */

/* A keeper started for the log open at lfd: *wr the pipe's write end (the container's stdio),
 * *done the read end that reads end of file once the keeper has ended.  Both CLOEXEC, the
 * caller's.  0, or -1 with *e. */
int osd_log_keeper(int lfd, int *wr, int *done, mxc_error *e);
/* Whether the keeper behind done ended within ms (everything it was sent is then written). */
bool osd_log_keeper_ended(int done, int ms);

#endif
