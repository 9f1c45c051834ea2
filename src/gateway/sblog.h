/* sblog.h — a gateway sandbox's log: what its workload (and the driver's
 * mxc-exec) prints, bounded, and read back as a stream.
 * Owns: <state>/<name>/log and log.1 (opened by descriptor, never through a
 * link), the caps — GW_LOG_MAX bytes per file and two files: a full log is
 * renamed to log.1 and a new one begun, the older log.1 discarded; at most
 * GW_LOG_RATE bytes a second sustained (a burst of GW_LOG_MAX), what comes
 * faster dropped — and the lines that say what was dropped or discarded
 * ("[mxc-gateway] ..."; never silently), with the counts in the sandbox's
 * record (logDroppedBytes, logDiscardedBytes); the pump that moves the
 * driver's pipe into the log while its writer lives; and the reader that
 * streams log.1 then log as they were when it opened them (bounded memory
 * whatever their size).  MXC_GATEWAY_LOG_MAX and MXC_GATEWAY_LOG_RATE may
 * lower the caps (tests), never raise them. */
#ifndef MXC_GATEWAY_SBLOG_H
#define MXC_GATEWAY_SBLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GW_LOG_MAX (8u << 20)  /* bytes per file; log + log.1 */
#define GW_LOG_RATE (1u << 20) /* bytes a second, sustained */

/* Reads the tuning knobs; once, before serving. */
void gw_log_init(void);
size_t gw_log_max(void);
size_t gw_log_rate(void);

typedef struct gw_log gw_log;
/* name's log, for appending under the caps: NULL when its directory or
 * file cannot be opened safely. */
gw_log *gw_log_open(const char *name);
void gw_log_write(gw_log *l, const void *buf, size_t n);
/* Says what was dropped (force: now; else at most once a second) and
 * keeps the record's counts current. */
void gw_log_flush(gw_log *l, bool force);
/* Flushes and closes. */
void gw_log_close(gw_log *l);
/* Moves what fd yields into l until its end, or until pidfd (the writer)
 * has ended and what it left in the pipe is read. */
void gw_log_pump(gw_log *l, int fd, int pidfd);

typedef struct gw_log_reader gw_log_reader;
/* log.1 then log as they are now (*total bytes); NULL when there is no log. */
gw_log_reader *gw_log_reader_open(const char *name, uint64_t *total);
/* Up to max bytes at pos (0..total, in order); 0 at the end, -1 on error. */
ssize_t gw_log_reader_read(gw_log_reader *r, uint64_t pos, char *buf, size_t max);
void gw_log_reader_close(gw_log_reader *r);

#endif
