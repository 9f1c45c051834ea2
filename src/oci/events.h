/* src/oci/events.h — `events`: a container's cgroup statistics and OOM
 * kills as JSON lines, runc's shape (docs/oci.md "events").
 *
 * Owns: reading the container's cgroup (cgroup.h's oci_cgroup, as create
 * saved it) into `{"type":"stats","id":ID,"data":{cpu, memory, pids}}`,
 * and `{"type":"oom","id":ID}` when its OOM-kill count grows.  Only reads:
 * nothing of the container's is changed. */
#ifndef MXC_OCI_EVENTS_H
#define MXC_OCI_EVENTS_H

#include <stdbool.h>

#include "error.h"

/* A Go duration as runc takes it ("5s", "100ms", "1m30s"): milliseconds, or -1. */
long oci_duration_ms(const char *s);

/* stats_once: one stats line, then return; else a stats line every
 * interval_ms and an oom line as it happens, until the container stops. */
int oci_events(int rootfd, const char *id, bool stats_once, long interval_ms, mxc_error *e);

#endif
