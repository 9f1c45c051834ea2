/* hooks.c — the config's hooks: parsed, their binaries checked, a phase run.
 * See hooks.h; the rule and where each phase runs: docs/oci.md "Hooks". */
#include "hooks.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "front.h"

const char *const oci_hook_phase_name[OCI_HOOK_NPHASES] = {"prestart",       "createRuntime", "createContainer",
                                                           "startContainer", "poststart",     "poststop"};

static int bad(mxc_error *e, const char *phase, size_t i, const char *field, const char *want)
{
    return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: hooks.%s[%zu]%s%s must be %s", phase, i,
                   field[0] ? "." : "", field, want);
}

/* A NULL-terminated array of the strings of arr (NULL: absent), or NULL with e set. */
static const char **strings(json_t *arr, const char *phase, size_t i, const char *field, const char *first,
                            mxc_error *e)
{
    size_t n = arr ? json_array_size(arr) : 0;
    const char **v = calloc(n + 2, sizeof *v);
    if (!v) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        return NULL;
    }
    if (!arr && first)
        v[0] = first;
    for (size_t k = 0; k < n; k++) {
        json_t *s = json_array_get(arr, k);
        if (!json_is_string(s)) {
            free(v);
            bad(e, phase, i, field, "an array of strings");
            return NULL;
        }
        v[k] = json_string_value(s);
    }
    return v;
}

int oci_hooks_parse(json_t *config_doc, oci_hooks *h, mxc_error *e)
{
    memset(h, 0, sizeof *h);
    json_t *hooks = json_object_get(config_doc, "hooks");
    if (!hooks || json_is_null(hooks))
        return 0;
    if (!json_is_object(hooks))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: hooks must be an object");
    h->doc = json_incref(config_doc);
    for (int p = 0; p < OCI_HOOK_NPHASES; p++) {
        const char *name = oci_hook_phase_name[p];
        json_t *list = json_object_get(hooks, name);
        if (!list || json_is_null(list))
            continue;
        if (!json_is_array(list))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: hooks.%s must be an array", name);
        size_t n = json_array_size(list);
        if (!n)
            continue;
        if (!(h->hook[p] = calloc(n, sizeof *h->hook[p])))
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        for (size_t i = 0; i < n; i++) {
            oci_hook *k = &h->hook[p][h->n[p]++];
            k->fd = -1;
            json_t *o = json_array_get(list, i), *v;
            if (!json_is_object(o))
                return bad(e, name, i, "", "an object");
            v = json_object_get(o, "path");
            if (!json_is_string(v) || json_string_value(v)[0] != '/')
                return bad(e, name, i, "path", "an absolute path");
            k->path = json_string_value(v);
            v = json_object_get(o, "args");
            if (v && !json_is_array(v))
                return bad(e, name, i, "args", "an array of strings");
            if (!(k->args = strings(v, name, i, "args", k->path, e)))
                return -1;
            if (!k->args[0])
                return bad(e, name, i, "args", "an array of at least one string (argv[0])");
            v = json_object_get(o, "env");
            if (v && !json_is_array(v))
                return bad(e, name, i, "env", "an array of strings");
            if (!(k->env = strings(v, name, i, "env", NULL, e)))
                return -1;
            v = json_object_get(o, "timeout");
            if (v && !json_is_null(v)) {
                if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > INT_MAX / 1000)
                    return bad(e, name, i, "timeout", "a number of seconds greater than zero");
                k->timeout = (int)json_integer_value(v);
            }
        }
    }
    return 0;
}

void oci_hooks_free(oci_hooks *h)
{
    for (int p = 0; p < OCI_HOOK_NPHASES; p++) {
        for (size_t i = 0; i < h->n[p]; i++) {
            free(h->hook[p][i].args);
            free(h->hook[p][i].env);
            if (h->hook[p][i].fd >= 0)
                close(h->hook[p][i].fd);
        }
        free(h->hook[p]);
    }
    json_decref(h->doc);
    memset(h, 0, sizeof *h);
}

bool oci_hooks_host_side(const oci_hooks *h)
{
    for (int p = 0; p < OCI_HOOK_NPHASES; p++)
        if (p != OCI_HOOK_START_CONTAINER && h->n[p])
            return true;
    return false;
}

/* ---- the trust rule ---------------------------------------------------------------------- */

static bool denied(const struct stat *st, const struct stat *deny, size_t ndeny)
{
    for (size_t i = 0; i < ndeny; i++)
        if (st->st_dev == deny[i].st_dev && st->st_ino == deny[i].st_ino)
            return true;
    return false;
}

/* Root's, and nobody else may write it (group and others: a sticky directory is still
 * someone else's to create names in).  Rootless (rootless.h) the hooks run as the caller: root's
 * or the caller's, nobody else's. */
static bool roots_only(const struct stat *st)
{
    return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int oci_hook_open(const char *path, const struct stat *deny, size_t ndeny, mxc_error *e)
{
    char rest[PATH_MAX * 2], why[512] = "";
    if (path[0] != '/' || strlen(path) >= PATH_MAX)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "hook %s: the path must be absolute", path);
    snprintf(rest, sizeof rest, "%s", path);
    int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), links = 0, fd = -1;
    struct stat st;
    if (dir < 0 || fstat(dir, &st) < 0) {
        snprintf(why, sizeof why, "/: %s", strerror(errno));
        goto fail;
    }
    if (!roots_only(&st)) {
        snprintf(why, sizeof why, "/ is not root's alone");
        goto fail;
    }
    /* one component at a time, each opened on its parent's descriptor without following it: a
     * directory is checked before anything is looked up in it, a link is read from its own
     * descriptor (it lives in a directory only root can write) and spliced into what remains */
    char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p) {
            snprintf(why, sizeof why, "names a directory");
            goto fail;
        }
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        const char *name = p;
        bool last = !slash;
        int next = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 || fstat(next, &st) < 0) {
            snprintf(why, sizeof why, "%.255s: %s", name, strerror(errno));
            if (next >= 0)
                close(next);
            goto fail;
        }
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX], tail[PATH_MAX * 2];
            ssize_t n = readlinkat(next, "", target, sizeof target - 1);
            close(next);
            if (n <= 0 || ++links > 40) {
                snprintf(why, sizeof why, "%.255s: %s", name, n <= 0 ? strerror(errno) : "too many links");
                goto fail;
            }
            target[n] = '\0';
            snprintf(tail, sizeof tail, "%s%s%s", target, last ? "" : "/", last ? "" : slash + 1);
            if (strlen(tail) >= PATH_MAX) {
                snprintf(why, sizeof why, "%.255s: the path is too long", name);
                goto fail;
            }
            snprintf(rest, sizeof rest, "%s", tail);
            p = rest;
            if (target[0] == '/') {
                close(dir);
                if ((dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
                    snprintf(why, sizeof why, "/: %s", strerror(errno));
                    goto fail;
                }
            }
            continue;
        }
        if (denied(&st, deny, ndeny)) {
            close(next);
            snprintf(why, sizeof why, "%.255s is the bundle or the container's rootfs, or beneath it", name);
            goto fail;
        }
        if (!roots_only(&st)) {
            close(next);
            snprintf(why, sizeof why, "%.255s is not root's alone%s (owner %u, mode %04o)", name,
                     geteuid() ? " or yours" : "", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
            goto fail;
        }
        if (last) {
            if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
                close(next);
                snprintf(why, sizeof why, "%.255s is not an executable file", name);
                goto fail;
            }
            fd = next;
            break;
        }
        if (!S_ISDIR(st.st_mode)) {
            close(next);
            snprintf(why, sizeof why, "%.255s: %s", name, strerror(ENOTDIR));
            goto fail;
        }
        close(dir);
        dir = next;
        p = slash + 1;
    }
    close(dir);
    return fd;
fail:
    if (dir >= 0)
        close(dir);
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "hook %s: %s: refused (a hook runs with the runtime's privileges: its "
                   "binary must be root's, reached through directories only root can write, outside the bundle "
                   "and the rootfs)", path, why);
}

int oci_hooks_open(oci_hooks *h, oci_hook_phase p, const struct stat *deny, size_t ndeny, mxc_error *e)
{
    for (size_t i = 0; i < h->n[p]; i++) {
        oci_hook *k = &h->hook[p][i];
        if (k->fd >= 0)
            continue;
        if ((k->fd = oci_hook_open(k->path, deny, ndeny, e)) < 0) {
            char msg[sizeof e->message];
            snprintf(msg, sizeof msg, "%s", e->message);
            mxc_error_clear(e);
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: hooks.%s[%zu]: %s", oci_hook_phase_name[p], i,
                           msg);
        }
    }
    return 0;
}

/* ---- running ------------------------------------------------------------------------------- */

static int run_one(const oci_hook *k, const char *state, char *why, size_t whysz)
{
    int mfd = mxc_text_memfd("oci-state", state);
    if (mfd < 0) {
        snprintf(why, whysz, "the state for its stdin: %s", strerror(-mfd));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* its own session and process group: the timeout kills all of it */
        setsid();
        if (dup2(mfd, 0) < 0 || dup2(2, 1) < 0)
            _exit(127);
        int keep[] = {0, 1, 2, k->fd};
        mxc_close_all_but(keep, k->fd >= 0 ? 4 : 3);
        mxc_reset_signals();
        if (k->fd >= 0) {
            /* the descriptor that was checked, not the path again (a script's interpreter reads it
             * through /dev/fd, so it stays open across the exec) */
            fcntl(k->fd, F_SETFD, 0);
            syscall(SYS_execveat, k->fd, "", (char *const *)k->args, (char *const *)k->env, AT_EMPTY_PATH);
        } else {
            execve(k->path, (char *const *)k->args, (char *const *)k->env);
        }
        dprintf(2, "mxc-oci: hook %s: %s\n", k->path, strerror(errno));
        _exit(127);
    }
    int err = errno;
    close(mfd);
    if (pid < 0) {
        snprintf(why, whysz, "fork: %s", strerror(err));
        return -1;
    }
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0), status;
    bool timed_out = false, reaped = false;
    if (pfd < 0 && k->timeout) {
        /* no pidfd (an older kernel): look every 100 ms */
        for (long ms = 0;; ms += 100) {
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid || (r < 0 && errno != EINTR)) {
                reaped = r == pid;
                break;
            }
            if (ms >= k->timeout * 1000L) {
                timed_out = true;
                break;
            }
            poll(NULL, 0, 100);
        }
    }
    if (pfd >= 0) {
        struct pollfd pl = {pfd, POLLIN, 0};
        int r;
        while ((r = poll(&pl, 1, k->timeout ? k->timeout * 1000 : -1)) < 0 && errno == EINTR)
            ;
        timed_out = r == 0;
        close(pfd);
    }
    if (timed_out) {
        kill(-pid, SIGKILL); /* its session's group: what it started too */
        kill(pid, SIGKILL);
    }
    while (!reaped && waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, whysz, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (timed_out) {
        snprintf(why, whysz, "timed out after %d s (killed)", k->timeout);
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        snprintf(why, whysz, "exit status %d", WEXITSTATUS(status));
    else { /* Go's words, as runc reports it ("signal: bad system call") */
        const char *d = sigdescr_np(WTERMSIG(status));
        snprintf(why, whysz, "killed by signal %d (signal: %c%s)", WTERMSIG(status), d ? tolower((unsigned char)d[0]) : '?',
                 d ? d + 1 : "");
    }
    return -1;
}

int oci_hooks_run(const oci_hooks *h, oci_hook_phase p, const char *state, mxc_error *e)
{
    for (size_t i = 0; i < h->n[p]; i++) {
        char why[256];
        if (run_one(&h->hook[p][i], state, why, sizeof why) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "hooks.%s[%zu] %s: %s", oci_hook_phase_name[p], i,
                           h->hook[p][i].path, why);
    }
    return 0;
}
