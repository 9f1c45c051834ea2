/* procs.h — processes named by pid and start time.
 * Owns: a process's start time (/proc/PID/stat field 22), which with its
 * pid names it for good (a reused pid has another start time), and
 * whether it is alive (a zombie is not), and its name (comm). */
#ifndef MXC_PROCS_H
#define MXC_PROCS_H

#include <stdbool.h>
#include <sys/types.h>

unsigned long long mxc_proc_start_time(pid_t pid);
bool mxc_pid_alive(pid_t pid, unsigned long long start_time);
/* Whether pid (of that start time) is alive and calls itself comm. */
bool mxc_pid_alive_as(pid_t pid, unsigned long long start_time, const char *comm);
/* Whether pid (of that start time) is dead and not yet reaped: a zombie. */
bool mxc_pid_unreaped(pid_t pid, unsigned long long start_time);

#endif
