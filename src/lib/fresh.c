/* fresh.c — see fresh.h. */
#include "fresh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "helpers.h"
#include "oneshot.h"
#include "session.h"

extern char **environ;

#define ANSWER_MAX (1u << 20)

pid_t mxc_spawn_fresh(const char *exe, char *const argv[], char *const envp[], const int *fds, int n, mxc_error *e)
{
    if (n > 8)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "fresh.spawn: %d descriptors, at most 8", n);
    /* copies above every target first: a source may sit on a lower target's number */
    int hi[8], rc = 0;
    for (int i = 0; i < n; i++) {
        hi[i] = fds[i] >= 0 ? fcntl(fds[i], F_DUPFD_CLOEXEC, n) : -1;
        if (fds[i] >= 0 && hi[i] < 0 && rc == 0)
            rc = errno;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int i = 0; i < n; i++)
        if (hi[i] >= 0)
            posix_spawn_file_actions_adddup2(&fa, hi[i], i);
        else
            posix_spawn_file_actions_addopen(&fa, i, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_addclosefrom_np(&fa, n); /* none of the caller's descriptors */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigfillset(&dfl);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    if (rc == 0)
        rc = posix_spawn(&pid, exe, &fa, &at, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    for (int i = 0; i < n; i++)
        if (hi[i] >= 0)
            close(hi[i]);
    if (rc != 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "fresh.spawn", rc, NULL, "cannot run %s", exe);
        return -1;
    }
    return pid;
}

static int reap(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

/* The answer a fresh mxc-exec wrote (fd from offset 0 to its end, at most
 * ANSWER_MAX), parsed; NULL when it is none. */
static json_t *answer_of(int fd)
{
    char *buf = malloc(ANSWER_MAX + 1);
    size_t len = 0;
    while (buf && len < ANSWER_MAX) {
        ssize_t got = read(fd, buf + len, ANSWER_MAX - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    json_t *j = buf ? json_loadb(buf, len, 0, NULL) : NULL;
    free(buf);
    return j;
}

/* An envelope that is no answer: the error it carries, else one that says
 * how the process ended. */
static int not_answered(json_t *env, const char *exe, int status, mxc_error *e)
{
    if (mxc_error_from_envelope(env, e) == 0)
        mxc_err(e, MXC_E_BACKEND_ERROR, "%s answered no envelope (%s %d)", exe,
                WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    json_decref(env);
    return -1;
}

/* The phase by a fresh mxc-exec (exe): 0 with *result, -1 with e. */
static int in_fresh_process(const char *exe, const char *request_json, bool experimental, json_t **result,
                            mxc_error *e)
{
    /* the request as a memfd, the child's stdin: no pipe to write while
     * the child may already be gone (no SIGPIPE in a caller whose signals
     * are its own), and no size limit */
    int in = mxc_text_memfd("mxc-request", request_json);
    int out[2] = {-1, -1};
    if (in < 0 || pipe2(out, O_CLOEXEC) < 0) {
        int err = in < 0 ? -in : errno;
        if (in >= 0)
            close(in);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fresh.pipe", err, NULL, "cannot pass the request to mxc-exec");
    }
    char *argv[] = {"mxc-exec", "--config", "-", experimental ? "--experimental" : NULL, NULL};
    int fds[] = {in, out[1], -1};
    pid_t pid = mxc_spawn_fresh(exe, argv, NULL, fds, 3, e);
    close(in);
    close(out[1]);
    if (pid < 0) {
        close(out[0]);
        return -1;
    }
    json_t *env = answer_of(out[0]);
    close(out[0]);
    int status = reap(pid);
    json_t *res = json_object_get(env, "result");
    if (res) {
        *result = json_incref(res);
        json_decref(env);
        return 0;
    }
    return not_answered(env, exe, status, e);
}

int mxc_session_phase_fresh(const mxc_request *r, const char *request_json, bool experimental, json_t **result,
                                 mxc_error *e)
{
    *result = NULL;
    char exe[PATH_MAX];
    if (r->phase == MXC_PHASE_START && mxc_helper_path("mxc-exec", exe, sizeof exe))
        return in_fresh_process(exe, request_json, experimental, result, e);
    return mxc_session_phase(r, result, e);
}

int mxc_oneshot_fresh(const mxc_request *r, const char *request_json, bool experimental, int in, int out,
                           int err, int *exit_code, bool *timed_out, mxc_error *e)
{
    char exe[PATH_MAX];
    if (!mxc_helper_path("mxc-exec", exe, sizeof exe))
        return mxc_oneshot_run_to_end(r, in, out, err, exit_code, timed_out, e);
    *exit_code = 255;
    *timed_out = false;
    /* the request and the report in memory files: nothing to pump while
     * the workload runs, and the report is read once the process is gone */
    int req = mxc_text_memfd("mxc-request", request_json);
    int rep = memfd_create("mxc-report", MFD_CLOEXEC);
    if (req < 0 || rep < 0) {
        int errnum = req < 0 ? -req : errno;
        if (req >= 0)
            close(req);
        if (rep >= 0)
            close(rep);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fresh.memfd", errnum, NULL, "cannot pass the request to mxc-exec");
    }
    char me[24];
    snprintf(me, sizeof me, "%d", (int)getpid());
    char *argv[] = {"mxc-exec", "--oneshot-reported", me, experimental ? "--experimental" : NULL, NULL};
    /* its own stdio is /dev/null: what it might say itself (a sanitizer's
     * warning) is not the workload's output */
    int fds[] = {-1, -1, -1, req, rep, in, out, err};
    pid_t pid = mxc_spawn_fresh(exe, argv, NULL, fds, 8, e);
    close(req);
    if (pid < 0) {
        close(rep);
        return -1;
    }
    int status = reap(pid);
    lseek(rep, 0, SEEK_SET);
    json_t *env = answer_of(rep);
    close(rep);
    json_t *code = json_object_get(env, "exitCode");
    if (json_is_integer(code)) {
        *exit_code = (int)json_integer_value(code);
        *timed_out = json_is_true(json_object_get(env, "timedOut"));
        json_decref(env);
        return 0;
    }
    return not_answered(env, exe, status, e);
}
