/* test_exec_abi — the in-process C ABI against a real session (root).
 * Streaming, waiter outcomes (Exited, TimedOut sticky), terminator results,
 * attached mode under a pty this test creates, its one-at-a-time rule, and
 * that an earlier exec cannot reach a later attached exec's terminal.
 * Prints "N passed, N failed". */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mxc.h"

static int passed, failed;
#define EXPECT(cond, ...)                                                                \
    do {                                                                                 \
        if (cond) {                                                                      \
            passed++;                                                                    \
        } else {                                                                         \
            failed++;                                                                    \
            fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

static char sid[4096];

static char *phase(const char *ph)
{
    char req[4300];
    snprintf(req, sizeof req, "{\"phase\":\"%s\",\"sandboxId\":\"%s\"}", ph, sid);
    char *resp = NULL;
    mxc_state_aware(req, &resp);
    return resp;
}

static void exec_req(char *out, size_t n, const char *cmd, unsigned timeout)
{
    snprintf(out, n, "{\"phase\":\"exec\",\"sandboxId\":\"%s\",\"process\":{\"commandLine\":\"%s\",\"timeout\":%u}}", sid,
             cmd, timeout);
}

/* Starts an exec of cmd; NULL (with the failure counted) when refused. */
static mxc_exec_handle *start_exec(const char *cmd, unsigned timeout)
{
    char req[4600];
    exec_req(req, sizeof req, cmd, timeout);
    mxc_exec_handle *h = NULL;
    char *err = NULL;
    EXPECT(mxc_state_aware_exec(req, &h, &err) == 0, "%s", err ? err : "");
    mxc_free(err);
    return h;
}

static size_t read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(fd, buf + got, n - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    return got;
}

static void test_streaming_and_exit(void)
{
    mxc_exec_handle *h = start_exec("read x; echo got:$x; echo err >&2; exit 5", 0);
    if (!h)
        return;
    EXPECT(write(mxc_exec_stdin_fd(h), "hello\n", 6) == 6, "write stdin");
    mxc_exec_close_stdin(h);
    char out[256], errb[256];
    read_all(mxc_exec_stdout_fd(h), out, sizeof out);
    read_all(mxc_exec_stderr_fd(h), errb, sizeof errb);
    EXPECT(strcmp(out, "got:hello\n") == 0, "stdout %s", out);
    EXPECT(strcmp(errb, "err\n") == 0, "stderr %s", errb);
    mxc_exec_outcome o;
    EXPECT(mxc_exec_wait(h, &o) == 0 && o.kind == MXC_EXEC_EXITED && o.exit_code == 5, "kind %d code %d", o.kind,
           o.exit_code);
    EXPECT(mxc_exec_terminate(h) == 0, "terminate after a confirmed exit succeeds without acting");
    mxc_exec_handle_free(h);
}

static void test_timeout_sticky(void)
{
    mxc_exec_handle *h = start_exec("trap '' TERM; sleep 30", 300);
    if (!h)
        return;
    mxc_exec_outcome o;
    EXPECT(mxc_exec_wait(h, &o) == 0 && o.kind == MXC_EXEC_TIMED_OUT, "kind %d", o.kind);
    EXPECT(mxc_exec_wait(h, &o) == 0 && o.kind == MXC_EXEC_TIMED_OUT, "a spent deadline stays spent");
    mxc_exec_handle_free(h);
}

static void test_terminator_kills(void)
{
    mxc_exec_handle *h = start_exec("sleep 30", 0);
    if (!h)
        return;
    EXPECT(mxc_exec_terminate(h) == 0, "kill accepted");
    mxc_exec_outcome o;
    EXPECT(mxc_exec_wait(h, &o) == 0 && o.kind == MXC_EXEC_EXITED && o.exit_code == 128 + SIGKILL, "code %d",
           o.exit_code);
    mxc_exec_handle_free(h);
}

static void test_attached_needs_terminals(void)
{
    char req[4600];
    exec_req(req, sizeof req, "true", 0);
    char *err = NULL;
    int saved = dup(0);
    int null = open("/dev/null", 0);
    dup2(null, 0);
    int rc = mxc_state_aware_exec_attached(req, &err);
    dup2(saved, 0);
    close(saved), close(null);
    EXPECT(rc == -1 && err && strstr(err, "terminal"), "%s", err ? err : "(none)");
    mxc_free(err);
}

static void test_attached_under_pty(void)
{
    int master;
    pid_t child = forkpty(&master, NULL, NULL, NULL);
    if (child == 0) {
        char req[4600];
        /* the pty is the sandbox's own: its slave is a device the workload can name */
        exec_req(req, sizeof req,
                 "test -t 0 && test -t 1 && env | grep -q ^TERM= && t=$(tty) && test -c $t && "
                 "echo on-a-tty:$t; exit 3", 0);
        char *err = NULL;
        int rc = mxc_state_aware_exec_attached(req, &err);
        if (rc < 0 && err)
            fprintf(stderr, "%s\n", err);
        _exit(rc < 0 ? 100 : rc);
    }
    char buf[4096];
    size_t got = 0;
    for (;;) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (poll(&p, 1, 20000) <= 0)
            break;
        ssize_t r = read(master, buf + got, sizeof buf - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %d", status);
    EXPECT(strstr(buf, "on-a-tty:/dev/pts/") != NULL, "output %s", buf);
    close(master);
}

static void *attached_sleeper(void *arg)
{
    (void)arg;
    char req[4600];
    exec_req(req, sizeof req, "sleep 2", 0);
    char *err = NULL;
    mxc_state_aware_exec_attached(req, &err);
    mxc_free(err);
    return NULL;
}

/* Only one attached exec at a time per process. */
static void test_attached_one_at_a_time(void)
{
    int master;
    pid_t child = forkpty(&master, NULL, NULL, NULL);
    if (child == 0) {
        pthread_t t;
        pthread_create(&t, NULL, attached_sleeper, NULL);
        usleep(700 * 1000);
        char req[4600];
        exec_req(req, sizeof req, "true", 0);
        char *err = NULL;
        int rc = mxc_state_aware_exec_attached(req, &err);
        bool refused = rc == -1 && err && strstr(err, "another attached exec");
        pthread_join(t, NULL);
        _exit(refused ? 0 : 1);
    }
    char buf[1024];
    for (;;) { /* drain the pty so the child never blocks on output */
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (poll(&p, 1, 20000) <= 0 || read(master, buf, sizeof buf) <= 0)
            break;
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "second concurrent attached call not refused (%d)", status);
    close(master);
}

/* A terminal per exec, on the in-process attached path too: exec 1 leaves a prober that opens
 * every /dev/pts/N it can (a fake prompt written, a record kept) and beats a heartbeat; exec 2
 * is attached to a pty made here and sees the heartbeat move (the prober ran beside it), while
 * nothing of the prober reaches exec 2's terminal, and the prober never opened it. */
static void test_attached_takeover(void)
{
    mxc_exec_handle *h = start_exec("(i=0; while [ $i -lt 300 ]; do for t in /dev/pts/[0-9]*; do [ -e $t ] && "
                                    "{ printf 'Password: ' > $t && echo opened $t >> $HOME/takeover; }; done; "
                                    "i=$((i+1)); echo $i > $HOME/beat; sleep 0.05; done) </dev/null >/dev/null 2>&1 &",
                                    0);
    if (!h)
        return;
    char out[4096];
    read_all(mxc_exec_stdout_fd(h), out, sizeof out);
    mxc_exec_outcome o;
    EXPECT(mxc_exec_wait(h, &o) == 0 && o.kind == MXC_EXEC_EXITED && o.exit_code == 0, "exec 1: %d", o.exit_code);
    mxc_exec_handle_free(h);
    int master;
    pid_t child = forkpty(&master, NULL, NULL, NULL);
    if (child == 0) {
        char req[4600];
        exec_req(req, sizeof req,
                 "tty; a=$(cat $HOME/beat); sleep 1; b=$(cat $HOME/beat); "
                 "[ ${a:-0} -gt 0 ] && [ ${a:-0} != ${b:-0} ] && echo prober-alive; sleep 1; echo done-here", 0);
        char *err = NULL;
        int rc = mxc_state_aware_exec_attached(req, &err);
        if (rc < 0 && err)
            fprintf(stderr, "%s\n", err);
        _exit(rc < 0 ? 100 : rc);
    }
    char buf[8192];
    size_t got = 0;
    for (;;) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (got + 1 >= sizeof buf || poll(&p, 1, 20000) <= 0)
            break;
        ssize_t r = read(master, buf + got, sizeof buf - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    int status = 0;
    waitpid(child, &status, 0);
    close(master);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exec 2 status %d: %s", status, buf);
    EXPECT(strstr(buf, "/dev/pts/") && strstr(buf, "done-here"), "exec 2's screen: %s", buf);
    EXPECT(strstr(buf, "prober-alive") != NULL, "exec 1's prober was not running beside exec 2: %s", buf);
    EXPECT(strstr(buf, "Password") == NULL, "exec 1 wrote on exec 2's terminal: %s", buf);
    h = start_exec("sleep 1; cat $HOME/takeover 2>/dev/null; true", 0);
    if (!h)
        return;
    read_all(mxc_exec_stdout_fd(h), out, sizeof out);
    mxc_exec_wait(h, &o);
    mxc_exec_handle_free(h);
    EXPECT(strstr(out, "opened") == NULL, "exec 1 opened a later exec's terminal: %s", out);
}

int main(void)
{
    char *resp = NULL;
    int rc = mxc_state_aware("{\"containment\":\"isolation_session\",\"phase\":\"provision\"}", &resp);
    char *p = resp ? strstr(resp, "\"sandboxId\":\"") : NULL;
    if (rc != 0 || !p) {
        printf("provision failed: %s\n0 passed, 1 failed\n", resp ? resp : "");
        return 1;
    }
    p += strlen("\"sandboxId\":\"");
    snprintf(sid, sizeof sid, "%.*s", (int)strcspn(p, "\""), p);
    mxc_free(resp);
    resp = phase("start");
    EXPECT(resp && strcmp(resp, "{\"result\":{}}") == 0, "%s", resp ? resp : "");
    mxc_free(resp);
    resp = NULL;
    EXPECT(mxc_state_aware("{\"phase\":\"exec\",\"sandboxId\":\"iso:x\",\"process\":{\"commandLine\":\"true\"}}", &resp) == -1,
           "exec through mxc_state_aware is refused");
    mxc_free(resp);
    test_streaming_and_exit();
    test_timeout_sticky();
    test_terminator_kills();
    test_attached_needs_terminals();
    test_attached_under_pty();
    test_attached_one_at_a_time();
    test_attached_takeover();
    mxc_free(phase("deprovision"));
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
