/* fresh.c — see fresh.h. */
#include "fresh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "helpers.h"
#include "session.h"

extern char **environ;

#define ANSWER_MAX (1u << 20)

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
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* none of the caller's descriptors */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigfillset(&dfl);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[5];
    int n = 0;
    argv[n++] = "mxc-exec";
    if (experimental)
        argv[n++] = "--experimental";
    argv[n++] = "--config";
    argv[n++] = "-";
    argv[n] = NULL;
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(in);
    close(out[1]);
    if (rc != 0) {
        close(out[0]);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "fresh.spawn", rc, NULL, "cannot run %s", exe);
    }
    char *buf = malloc(ANSWER_MAX + 1);
    size_t len = 0;
    while (buf && len < ANSWER_MAX) {
        ssize_t got = read(out[0], buf + len, ANSWER_MAX - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    json_t *env = buf ? json_loadb(buf, len, 0, NULL) : NULL;
    free(buf);
    json_t *res = json_object_get(env, "result");
    if (res) {
        *result = json_incref(res);
        json_decref(env);
        return 0;
    }
    if (mxc_error_from_envelope(env, e) == 0)
        mxc_err(e, MXC_E_BACKEND_ERROR, "%s answered no envelope (%s %d)", exe,
                WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    json_decref(env);
    return -1;
}

int mxc_session_phase_in_process(const mxc_request *r, const char *request_json, bool experimental, json_t **result,
                                 mxc_error *e)
{
    *result = NULL;
    char exe[PATH_MAX];
    if (r->phase == MXC_PHASE_START && mxc_helper_path("mxc-exec", exe, sizeof exe))
        return in_fresh_process(exe, request_json, experimental, result, e);
    return mxc_session_phase(r, result, e);
}
