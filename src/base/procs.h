/* procs.h — processes named by pid and start time.
 * Owns: a process's start time (/proc/PID/stat field 22), which with its
 * pid names it for good (a reused pid has another start time), and
 * whether it is alive (a zombie is not), and its name (comm); a pidfd of
 * it, checked after it is open (then it names that process for good);
 * and an OOM score adjustment (this process's own, or another's by its pidfd). */
#ifndef MXC_PROCS_H
#define MXC_PROCS_H

#include <stdbool.h>
#include <sys/types.h>

unsigned long long mxc_proc_start_time(pid_t pid);
bool mxc_pid_alive(pid_t pid, unsigned long long start_time);
/* Whether this process has one thread (/proc/self/stat's num_threads; false if unreadable): a
 * fork that skips glibc's fork handlers, or a child that mallocs without exec'ing, is safe only
 * then — no other thread can hold a libc lock the child would need. */
bool mxc_single_threaded(void);
/* Whether pid (of that start time) is alive and calls itself comm. */
bool mxc_pid_alive_as(pid_t pid, unsigned long long start_time, const char *comm);
/* Whether pid (of that start time) is dead and not yet reaped: a zombie. */
bool mxc_pid_unreaped(pid_t pid, unsigned long long start_time);

/* A close-on-exec pidfd of pid, alive with that start time once the pidfd
 * holds it: the fd, or -ESRCH (gone, or another process now), or -errno. */
int mxc_pidfd_of(pid_t pid, unsigned long long start_time);

/* Writes adj into /proc/self/oom_score_adj (inherited across fork and exec): 0, or -errno.
 * Lowering it needs CAP_SYS_RESOURCE over the host; the value so written is the process's floor,
 * which it cannot go below itself. */
int mxc_oom_score_adj_self(int adj);
/* The same for process pid, named by pidfd (checked after the open): 0, -ESRCH (gone), or -errno. */
int mxc_oom_score_adj_of(pid_t pid, int pidfd, int adj);

#endif
