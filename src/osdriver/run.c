/* run.c — see run.h. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

extern char **environ;

/* What fd holds from its start, at most sz-1 bytes, NUL-terminated, trailing newlines cut. */
static void slurp(int fd, char *buf, size_t sz)
{
    ssize_t n = pread(fd, buf, sz - 1, 0);
    n = n < 0 ? 0 : n;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = 0;
}

int osd_run(const char *const argv[], int out_fd, osd_run_io *io)
{
    return osd_run_env(argv, out_fd, io, NULL, 0);
}

/* extra[0..n) then environ (the extras first: getenv finds the first), or environ itself
 * when there is none; NULL when out of memory. */
static char **env_with(char *const extra[], size_t n)
{
    if (!n)
        return environ;
    size_t k = 0;
    while (environ[k])
        k++;
    char **env = calloc(k + n + 1, sizeof *env);
    if (!env)
        return NULL;
    memcpy(env, extra, n * sizeof *env);
    memcpy(env + n, environ, k * sizeof *env);
    return env;
}

int osd_run_env(const char *const argv[], int out_fd, osd_run_io *io, char *const extra[], size_t n_extra)
{
    io->out[0] = io->err[0] = 0;
    _cleanup_fd_ int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    _cleanup_fd_ int out = out_fd >= 0 ? -1 : memfd_create("osd-out", MFD_CLOEXEC);
    _cleanup_fd_ int err = out_fd >= 0 ? -1 : memfd_create("osd-err", MFD_CLOEXEC);
    int o = out_fd >= 0 ? out_fd : out, e = out_fd >= 0 ? out_fd : err;
    if (null < 0 || o < 0 || e < 0) {
        snprintf(io->err, sizeof io->err, "cannot set up %s's stdio: %s", argv[0], strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, null, 0);
    posix_spawn_file_actions_adddup2(&fa, o, 1);
    posix_spawn_file_actions_adddup2(&fa, e, 2);
    pid_t pid;
    char **env = env_with(extra, n_extra);
    int rc = env ? posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, env) : ENOMEM;
    if (env != environ)
        free(env);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(io->err, sizeof io->err, "cannot run %s: %s", argv[0], strerror(rc));
        return -1;
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (out >= 0) {
        slurp(out, io->out, sizeof io->out);
        slurp(err, io->err, sizeof io->err);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
