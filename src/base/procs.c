/* procs.c — see procs.h. */
#include "procs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"

/* State (field 3) and start time (field 22) from one read of
 * /proc/PID/stat; comm (field 2) may hold spaces and parentheses, so the
 * fields are counted from the last ')'.  Thread-safe (no strtok). */
static int read_stat(pid_t pid, char *state, unsigned long long *start, char *comm, size_t commsz)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (mxc_read_small_at(AT_FDCWD, path, buf, sizeof buf) <= 0)
        return -1;
    const char *p = strrchr(buf, ')'), *l = strchr(buf, '(');
    if (!p || p[1] != ' ' || !l || l > p)
        return -1;
    if (comm)
        snprintf(comm, commsz, "%.*s", (int)(p - l - 1), l + 1);
    p += 2;
    *state = *p;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    *start = strtoull(p, NULL, 10);
    return 0;
}

unsigned long long mxc_proc_start_time(pid_t pid)
{
    char state;
    unsigned long long start;
    return pid > 0 && read_stat(pid, &state, &start, NULL, 0) == 0 ? start : 0;
}

bool mxc_pid_alive(pid_t pid, unsigned long long start_time)
{
    char state;
    unsigned long long start;
    if (pid <= 0 || read_stat(pid, &state, &start, NULL, 0) < 0 || start == 0 || start != start_time)
        return false;
    return state != 'Z' && state != 'X';
}

bool mxc_pid_alive_as(pid_t pid, unsigned long long start_time, const char *comm)
{
    char state, name[64];
    unsigned long long start;
    if (pid <= 0 || read_stat(pid, &state, &start, name, sizeof name) < 0 || start == 0 || start != start_time)
        return false;
    return state != 'Z' && state != 'X' && strcmp(name, comm) == 0;
}

bool mxc_pid_unreaped(pid_t pid, unsigned long long start_time)
{
    char state;
    unsigned long long start;
    if (pid <= 0 || read_stat(pid, &state, &start, NULL, 0) < 0 || start == 0 || start != start_time)
        return false;
    return state == 'Z' || state == 'X';
}

int mxc_pidfd_of(pid_t pid, unsigned long long start_time)
{
    int fd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (fd < 0)
        return pid > 0 ? -errno : -ESRCH;
    if (!mxc_pid_alive(pid, start_time)) { /* the pidfd pins the process: a reused pid shows here */
        close(fd);
        return -ESRCH;
    }
    return fd;
}

bool mxc_single_threaded(void)
{
    char buf[1024];
    if (mxc_read_small_at(AT_FDCWD, "/proc/self/stat", buf, sizeof buf) <= 0)
        return false;
    const char *q = strrchr(buf, ')');
    int field = 2;
    for (; q && *q; q++)
        if (*q == ' ' && ++field == 20)
            return strtol(q + 1, NULL, 10) == 1;
    return false;
}

/* adj written through fd (an oom_score_adj file), which is then closed: 0, or -errno */
static int oom_write(int fd, int adj)
{
    if (fd < 0)
        return -errno;
    char v[16];
    int n = snprintf(v, sizeof v, "%d", adj);
    int rc = write(fd, v, (size_t)n) == n ? 0 : -errno;
    close(fd);
    return rc;
}

int mxc_oom_score_adj_self(int adj)
{
    return oom_write(open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC), adj);
}

int mxc_oom_score_adj_of(pid_t pid, int pidfd, int adj)
{
    char path[48];
    snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)pid);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    /* opened while pidfd's process lives: the file is that process's (its pid was not reused) */
    if (fd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
        close(fd);
        return -ESRCH;
    }
    return oom_write(fd, adj);
}
