/* session.c — see session.h. */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "harden.h"
#include "registry.h"
#include "sandbox_id.h"
#include "state.h"

/* Rootless: without root every sandbox is the caller's own uid behind a
 * user namespace (docs/design-decisions.md, "Rootless"). */
static bool rootless(void)
{
    return geteuid() != 0;
}

static int require_host(mxc_error *e)
{
    if (mxc_landlock_abi() < MXC_LANDLOCK_ABI_NEEDED) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "this kernel's Landlock ABI is %d; mxc needs %d or newer",
                mxc_landlock_abi(), MXC_LANDLOCK_ABI_NEEDED);
        mxc_err_set_remediation(e, "boot a kernel >= 6.2 with Landlock enabled (lsm=landlock,...)");
        return -1;
    }
    return 0;
}

static void mint_name(char *out, size_t outsz)
{
    static const char cs[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char rnd[12];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        memset(rnd, 0, sizeof rnd);
    char tail[13];
    for (size_t i = 0; i < 12; i++)
        tail[i] = cs[rnd[i] % 36];
    tail[12] = '\0';
    snprintf(out, outsz, "mxc-%s", tail);
}

/* The policy part of the provision request, kept for the session's life. */
static json_t *policy_of(const mxc_request *r)
{
    return mxc_request_policy_json(r); /* in the engine's shape, whatever the dialect */
}

/* An integer field of the state in [lo, hi]; a missing or out-of-range
 * one fails closed (a state file that lost "uid" must never run a holder
 * as host root). */
static int state_int(json_t *state, const char *key, long long lo, long long hi, long long *out, mxc_error *e)
{
    json_t *v = json_object_get(state, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"%s\" is missing or out of range", key);
    *out = json_integer_value(v);
    return 0;
}

/* The grants as the view resolved them when the session started (paths
 * with symlinks resolved, and what each entry is): exec hardens and
 * verifies against exactly what is mounted. */
static json_t *view_of(const mxc_plan *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->ngrants; i++) {
        const mxc_grant *g = &p->grants[i];
        json_array_append_new(a, json_pack("{s:s, s:i, s:b, s:b, s:b, s:b}", "path", g->path, "mode", (int)g->mode,
                                           "present", g->present, "dir", g->is_dir, "link", g->on_link, "covers",
                                           g->covers));
    }
    return a;
}

static int view_from(json_t *view, mxc_plan *p, mxc_error *e)
{
    for (size_t i = 0; i < p->ngrants; i++)
        free(p->grants[i].path);
    p->ngrants = 0;
    size_t i;
    json_t *g;
    json_array_foreach(view, i, g) {
        const char *path = json_string_value(json_object_get(g, "path"));
        json_int_t mode = json_integer_value(json_object_get(g, "mode"));
        if (!path || path[0] != '/' || mode < MXC_GRANT_RW || mode > MXC_GRANT_DENIED || p->ngrants >= MXC_MAX_GRANTS)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: a view entry is malformed");
        p->grants[p->ngrants++] = (mxc_grant){.path = strdup(path), .mode = (mxc_grant_mode)mode,
                                              .present = json_is_true(json_object_get(g, "present")),
                                              .is_dir = json_is_true(json_object_get(g, "dir")),
                                              .on_link = json_is_true(json_object_get(g, "link")),
                                              .covers = json_is_true(json_object_get(g, "covers"))};
    }
    return 0;
}

/* Rebuilds the plan of a provisioned sandbox from its state; use_view: the
 * grants as resolved at start (exec), else from the policy (start). */
static int plan_from_state(json_t *state, const char *dir, bool use_view, mxc_plan *p, mxc_error *e)
{
    memset(p, 0, sizeof *p);
    long long uid, gid;
    const char *name = json_string_value(json_object_get(state, "agentUserName"));
    if (state_int(state, "uid", 1, 4294967294ll, &uid, e) < 0 || state_int(state, "gid", 1, 4294967294ll, &gid, e) < 0)
        return -1;
    if (!name || !*name || strlen(name) >= sizeof p->agent_name)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"agentUserName\" is missing");
    json_t *req = json_deep_copy(json_object_get(state, "policy"));
    if (!json_is_object(req)) {
        json_decref(req);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"policy\" is missing");
    }
    json_object_set_new(req, "containment", json_string("isolation_session"));
    json_object_set_new(req, "phase", json_string("provision"));
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    mxc_request r;
    int rc = text ? mxc_request_parse(text, strlen(text), &r, e) : -1;
    free(text);
    if (rc == 0)
        rc = mxc_plan_from_request(&r, p, e);
    mxc_request_free(&r);
    if (rc < 0)
        return -1;
    json_t *view = json_object_get(state, "view");
    if (use_view && json_is_array(view) && view_from(view, p, e) < 0) {
        mxc_plan_free(p);
        return -1;
    }
    p->uid = (uid_t)uid;
    p->gid = (gid_t)gid;
    p->rootless = json_is_true(json_object_get(state, "rootless"));
    snprintf(p->agent_name, sizeof p->agent_name, "%s", name);
    char ws[700];
    snprintf(ws, sizeof ws, "%s/workspace", dir);
    p->workspace = strdup(ws);
    return 0;
}

static int provision(const mxc_request *r, json_t **result, mxc_error *e)
{
    if (require_host(e) < 0)
        return -1;
    mxc_sandbox_id id = {0};
    mxc_state st;
    mint_name(id.agent_name, sizeof id.agent_name);
    if (mxc_state_create_locked(id.agent_name, &st, e) < 0)
        return -1;
    bool rl = rootless();
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
    char ws[700];
    snprintf(ws, sizeof ws, "%s/workspace", st.dir);
    /* The workspace: the agent's own, 0700; the caller (root) reaches it,
     * no other agent can.  Rootless it is the caller's like everything else.
     * Made before the claim, which records it as writable by the sandbox. */
    if (mkdir(ws, 0700) < 0) {
        int err = errno;
        mxc_error ignored = {0};
        mxc_state_destroy(&st, &ignored);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "provision.workspace", err, NULL, "cannot create the workspace");
    }
    /* As root the claim gives the sandbox its uid, host-wide (no other
     * state root hands it out); either way what the sandbox can write is
     * on record (fsview.h, hostpath.h). */
    mxc_claim c = {.kind = MXC_CLAIM_SESSION, .state_dir = st.dir};
    for (size_t i = 0; i < r->rw.n && c.nwritable < MXC_REGISTRY_MAX_WRITABLE - 1; i++)
        c.writable[c.nwritable++] = r->rw.v[i];
    c.writable[c.nwritable++] = ws;
    char claim[MXC_CLAIM_NAME_MAX];
    if (mxc_registry_claim(&c, &uid, claim, e) < 0) {
        mxc_error ignored = {0};
        mxc_state_destroy(&st, &ignored);
        return -1;
    }
    if (!rl) {
        gid = uid;
        if (chown(ws, uid, gid) < 0) {
            int err = errno;
            mxc_error ignored = {0};
            mxc_registry_release(claim);
            mxc_state_destroy(&st, &ignored);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "provision.workspace", err, NULL, "cannot give the workspace to the agent");
        }
    }
    if (r->has_app_id) {
        id.has_app_id = true;
        memcpy(id.app_id, r->app_id, r->app_id_len + 1);
    }
    char sid[MXC_SANDBOX_ID_MAX + 8];
    json_t *state = json_object();
    json_object_set_new(state, "agentUserName", json_string(id.agent_name));
    json_object_set_new(state, "uid", json_integer(uid));
    json_object_set_new(state, "gid", json_integer(gid));
    json_object_set_new(state, "rootless", json_boolean(rl));
    json_object_set_new(state, "claim", json_string(claim));
    json_object_set_new(state, "policy", policy_of(r));
    int rc = mxc_sandbox_id_encode(&id, sid, sizeof sid, e);
    if (rc == 0)
        rc = mxc_state_write(&st, state, e);
    json_decref(state);
    if (rc < 0) {
        mxc_error ignored = {0};
        mxc_registry_release(claim);
        mxc_state_destroy(&st, &ignored);
        return -1;
    }
    mxc_state_unlock(&st);
    char uidtext[16];
    snprintf(uidtext, sizeof uidtext, "%u", uid);
    *result = json_pack("{s:s, s:{s:s, s:s, s:s}}", "sandboxId", sid, "metadata", "agentUserName", id.agent_name,
                        "agentUserSid", uidtext, "ephemeralWorkspacePath", ws);
    if (rl) /* said, not pretended: the sandbox is the caller's own uid */
        json_object_set_new(json_object_get(*result, "metadata"), "rootless", json_true());
    return 0;
}

typedef struct {
    mxc_state st;
    json_t *state;
    pid_t holder;
    unsigned long long holder_start;
    bool running;
} opened;

static void opened_close(opened *o)
{
    json_decref(o->state);
    o->state = NULL;
    mxc_state_unlock(&o->st);
}

static int open_sandbox(const mxc_request *r, opened *o, mxc_error *e)
{
    memset(o, 0, sizeof *o);
    o->st.lock_fd = -1;
    mxc_sandbox_id id;
    if (mxc_sandbox_id_decode(r->sandbox_id, &id, e) < 0)
        return -1;
    if (mxc_state_open_locked(id.agent_name, &o->st, e) < 0)
        return -1;
    if (mxc_state_read(&o->st, &o->state, e) < 0) {
        mxc_state_unlock(&o->st);
        return -1;
    }
    o->holder = (pid_t)json_integer_value(json_object_get(o->state, "holderPid"));
    o->holder_start = (unsigned long long)json_integer_value(json_object_get(o->state, "holderStart"));
    o->running = mxc_holder_alive(o->holder, o->holder_start);
    return 0;
}

/* The sandbox directory's exec socket, by a short path that works
 * whatever the length of the state root's (sun_path holds 107 bytes). */
static int exec_sock_path(const char *dir, int *dirfd, char *out, size_t outsz)
{
    *dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*dirfd < 0)
        return -errno;
    snprintf(out, outsz, "/proc/self/fd/%d/exec.sock", *dirfd);
    return 0;
}

/* The socket on which the holder takes exec requests, in the sandbox's
 * directory (0700: only the caller's side reaches it; the sandbox never
 * sees the host's state root). */
static int exec_listener(const mxc_state *st, mxc_error *e)
{
    int dirfd;
    char path[80];
    if (exec_sock_path(st->dir, &dirfd, path, sizeof path) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.socket", errno, NULL, "cannot open the sandbox directory");
    unlinkat(dirfd, "exec.sock", 0); /* a dead holder's */
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int rc = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 128) < 0 ? -errno : 0;
    close(dirfd);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.socket", -rc, NULL, "cannot make the session's exec socket");
    }
    return fd;
}

static int start(opened *o, mxc_error *e)
{
    if (o->running)
        return mxc_err(e, MXC_E_ALREADY_STARTED, "the sandbox is already started; its session is unchanged");
    if (require_host(e) < 0)
        return -1;
    mxc_plan p;
    /* the view is resolved afresh from the policy at every start */
    if (plan_from_state(o->state, o->st.dir, false, &p, e) < 0)
        return -1;
    mxc_cgroup cg;
    mxc_holder h;
    int listen_fd = exec_listener(&o->st, e);
    int rc = listen_fd < 0 ? -1 : mxc_holder_spawn(&p, p.agent_name, true, NULL, listen_fd, &h, &cg, e);
    if (listen_fd >= 0)
        close(listen_fd); /* the holder's now */
    if (rc < 0) {
        mxc_plan_free(&p);
        if (listen_fd >= 0)
            mxc_cgroup_remove(&cg); /* nothing lives in it: the holder never ran */
        return -1;
    }
    json_object_set_new(o->state, "holderPid", json_integer(h.pid));
    json_object_set_new(o->state, "holderStart", json_integer((json_int_t)h.start_time));
    json_object_set_new(o->state, "view", view_of(&p));
    mxc_plan_free(&p);
    if (mxc_state_write(&o->st, o->state, e) < 0) {
        close(h.ctl_fd); /* the holder exits on its own */
        return -1;
    }
    return mxc_holder_release(&h, e);
}

/* The sandbox's cgroup, and anything in it that slipped out of the PID
 * namespace's reach. */
static void remove_cgroup(const opened *o)
{
    mxc_cgroup cg;
    mxc_cgroup_open(json_string_value(json_object_get(o->state, "agentUserName")), &cg);
    mxc_cgroup_kill_all(&cg);
    mxc_cgroup_remove(&cg);
}

static int stop_holder(opened *o, mxc_error *e)
{
    if (mxc_holder_kill(o->holder, o->holder_start, e) < 0)
        return -1;
    char sock[700];
    snprintf(sock, sizeof sock, "%s/exec.sock", o->st.dir);
    unlink(sock);
    remove_cgroup(o);
    json_object_del(o->state, "holderPid");
    json_object_del(o->state, "holderStart");
    return mxc_state_write(&o->st, o->state, e);
}

static int stop(opened *o, mxc_error *e)
{
    if (!o->running)
        return mxc_err(e, MXC_E_ALREADY_STOPPED, "the sandbox is already stopped; its identity remains");
    return stop_holder(o, e);
}

static int deprovision(opened *o, mxc_error *e)
{
    if (o->running && stop_holder(o, e) < 0)
        return -1;
    if (!o->running) /* a start killed half-way may have left its cgroup */
        remove_cgroup(o);
    char claim[MXC_CLAIM_NAME_MAX + 1] = "", dir[600];
    snprintf(claim, sizeof claim, "%s", json_string_value(json_object_get(o->state, "claim")) ?: "");
    snprintf(dir, sizeof dir, "%s", o->st.dir);
    if (mxc_state_destroy(&o->st, e) < 0)
        return -1;
    mxc_registry_release_owned(claim, dir); /* only a claim that names this sandbox */
    return 0;
}

int mxc_session_phase(const mxc_request *r, json_t **result, mxc_error *e)
{
    *result = NULL;
    if (r->phase == MXC_PHASE_PROVISION)
        return provision(r, result, e);
    opened o;
    if (open_sandbox(r, &o, e) < 0)
        return -1;
    int rc;
    switch (r->phase) {
    case MXC_PHASE_START: rc = start(&o, e); break;
    case MXC_PHASE_STOP: rc = stop(&o, e); break;
    case MXC_PHASE_DEPROVISION: rc = deprovision(&o, e); break;
    default: rc = mxc_err(e, MXC_E_UNSUPPORTED_PHASE, "exec is not a non-exec phase");
    }
    opened_close(&o);
    if (rc == 0)
        *result = json_object();
    return rc;
}

/* exec: straight to the holder's socket — no lock, no state file on the
 * way of a running session's exec (the holder serialises what must be:
 * the view's verification).  Only a refused connection looks at the state,
 * for the precise answer. */
int mxc_session_exec_start(const mxc_request *r, bool pty, mxc_proc *proc, mxc_error *e)
{
    mxc_sandbox_id id;
    if (mxc_sandbox_id_decode(r->sandbox_id, &id, e) < 0)
        return -1;
    char root[512], dir[600];
    if (mxc_state_root(root, sizeof root, e) < 0)
        return -1;
    snprintf(dir, sizeof dir, "%s/%s", root, id.agent_name);
    /* what the environment needs of the plan: the agent and its workspace */
    mxc_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    snprintf(plan->agent_name, sizeof plan->agent_name, "%s", id.agent_name);
    char ws[700];
    snprintf(ws, sizeof ws, "%s/workspace", dir);
    plan->workspace = strdup(ws);
    mxc_exec_spec s;
    int rc = mxc_exec_spec_build(r, plan, &s, e);
    if (rc == 0 && pty) { /* attached: the terminal type is the caller's (process.env still wins) */
        const char *term = getenv("TERM");
        char kv[128];
        snprintf(kv, sizeof kv, "TERM=%.100s", term && *term ? term : "xterm-256color");
        bool given = false;
        for (size_t i = 0; i < r->env.n; i++)
            given |= strncmp(r->env.v[i], "TERM=", 5) == 0;
        if (!given && mxc_exec_spec_setenv(&s, kv) < 0) {
            mxc_exec_spec_free(&s);
            rc = mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory building the environment");
        }
    }
    mxc_plan_free(plan);
    free(plan);
    if (rc < 0)
        return -1;
    int dirfd;
    char sock[80];
    if (exec_sock_path(dir, &dirfd, sock, sizeof sock) < 0) {
        mxc_exec_spec_free(&s);
        opened o;
        if (open_sandbox(r, &o, e) < 0) /* stale_id, most likely */
            return -1;
        opened_close(&o);
        return mxc_err(e, MXC_E_NOT_STARTED, "the sandbox is provisioned but not started; call start first");
    }
    rc = mxc_exec_start(sock, &s, pty, proc, e);
    close(dirfd);
    mxc_exec_spec_free(&s);
    if (rc < 0 && e->code == MXC_E_NOT_STARTED) {
        /* no holder took it: say precisely why */
        mxc_error why = {0};
        opened o;
        if (open_sandbox(r, &o, &why) < 0) {
            mxc_error_clear(e);
            *e = why;
            return -1;
        }
        bool running = o.running;
        opened_close(&o);
        if (!running) {
            mxc_error_clear(e);
            return mxc_err(e, MXC_E_NOT_STARTED, "the sandbox is provisioned but not started; call start first");
        }
        e->code = MXC_E_BACKEND_ERROR; /* running, yet it refused: say what failed */
    }
    return rc;
}

/* When the caller exits right after the one-shot (the CLI), the wait for
 * the kernel's teardown of PID 1 — its namespaces, ~0.3 ms here — moves
 * off the caller's path: this detached process waits for PID 1 and then
 * removes the (by then empty) cgroup.  It holds none of the caller's fds
 * (a shell reading our stdout sees EOF when we exit) and sits in its own
 * session (the terminal's ^C does not reach it).  It also cleans up after
 * a caller killed with SIGKILL, whose PID 1 dies by PDEATHSIG, and then
 * releases the run's uid claim. */
static int spawn_cleaner(pid_t pid1, const mxc_cgroup *cg, const char *claim)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid1, 0);
    if (pfd < 0)
        return -1;
    pid_t c = fork();
    if (c == 0) {
        setsid();
        int keep[] = {pfd};
        mxc_close_all_but(keep, 1);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0)
            dup2(null, 0), dup2(null, 1), dup2(null, 2);
        struct pollfd w = {.fd = pfd, .events = POLLIN};
        while (poll(&w, 1, -1) < 0 && errno == EINTR)
            ;
        mxc_cgroup_kill_all(cg);
        mxc_cgroup_remove(cg);
        /* PID 1 has exited: its namespace, and every process of the sandbox, is gone */
        mxc_registry_release(claim);
        _exit(0);
    }
    close(pfd);
    return c > 0 ? 0 : -1;
}

/* The process backend: PID 1 forks the workload itself, so it is born in
 * every namespace and in the cgroup — no joiner, no setns, no migration.
 * caller_exits (the CLI): return on PID 1's status report and leave the
 * teardown to a detached cleaner. */
static int oneshot_process(const mxc_request *r, bool caller_exits, int in, int out, int err, int *code,
                           bool *timed_out, mxc_error *e)
{
    mxc_oneshot os;
    if (mxc_oneshot_start(r, false, 0, 0, &os, e) < 0)
        return -1;
    bool early = caller_exits && os.direct && spawn_cleaner(os.pid1, &os.cg, os.claim) == 0;
    if (early)
        os.claim[0] = '\0'; /* the cleaner releases it once PID 1 is gone, whatever happens here */
    os.proc.oneshot.detach = early;
    mxc_exec_run(&os.proc, in, out, err, e);
    *code = os.proc.exit_code;
    *timed_out = os.proc.timed_out;
    if (early && os.proc.reported) { /* PID 1 is tearing down; the cleaner finishes */
        mxc_exec_close(&os.proc);
        if (os.pid1_ctl >= 0)
            close(os.pid1_ctl);
        mxc_exec_spec_free(&os.spec);
        mxc_plan_free(os.plan);
        free(os.plan);
        return 0;
    }
    mxc_oneshot_finish(&os); /* no report: PID 1 died some other way; clean up here */
    return 0;
}

/* isolation_session one-shot: the whole lifecycle in one call. */
static int oneshot_session(const mxc_request *r, int in, int out, int err, int *code, bool *timed_out, mxc_error *e)
{
    json_t *res = NULL;
    mxc_request pr = *r;
    pr.phase = MXC_PHASE_PROVISION;
    pr.has_app_id = false;
    if (provision(&pr, &res, e) < 0)
        return -1;
    mxc_request sr = *r;
    sr.sandbox_id = json_string_value(json_object_get(res, "sandboxId"));
    opened o;
    int rc = open_sandbox(&sr, &o, e);
    if (rc == 0) {
        rc = start(&o, e);
        opened_close(&o);
    }
    mxc_proc proc;
    if (rc == 0)
        rc = mxc_session_exec_start(&sr, false, &proc, e);
    if (rc == 0) {
        mxc_exec_run(&proc, in, out, err, e);
        *code = proc.exit_code;
        *timed_out = proc.timed_out;
        mxc_exec_close(&proc);
    }
    mxc_error ignored = {0};
    if (open_sandbox(&sr, &o, &ignored) == 0) {
        deprovision(&o, &ignored);
        opened_close(&o);
    }
    json_decref(res);
    return rc;
}

int mxc_oneshot_run(const mxc_request *r, bool caller_exits, int in, int out, int err, int *exit_code, bool *timed_out,
                    mxc_error *e)
{
    *timed_out = false;
    *exit_code = 255;
    if (r->containment == MXC_CONT_ISOLATION_SESSION)
        return oneshot_session(r, in, out, err, exit_code, timed_out, e);
    return oneshot_process(r, caller_exits, in, out, err, exit_code, timed_out, e);
}

/* The process backend for an in-process caller that drives the workload
 * itself (libmxc_ffi's spawn): the same steps as oneshot_process up to the
 * running workload, and the teardown separately in mxc_oneshot_finish. */
int mxc_oneshot_start(const mxc_request *r, bool pty, unsigned short rows, unsigned short cols, mxc_oneshot *os,
                      mxc_error *e)
{
    static _Atomic unsigned long serial;
    memset(os, 0, sizeof *os);
    os->pid1_ctl = -1;
    os->proc.in_fd = os->proc.out_fd = os->proc.err_fd = os->proc.ctl_fd = -1;
    os->proc.oneshot.child_pidfd = os->proc.oneshot.pid1_pidfd = os->proc.oneshot.report_fd = -1;
    if (r->containment != MXC_CONT_PROCESS)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "a running one-shot handle is served for containment process");
    if (require_host(e) < 0)
        return -1;
    os->plan = calloc(1, sizeof *os->plan);
    if (!os->plan)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    if (mxc_plan_from_request(r, os->plan, e) < 0) {
        free(os->plan);
        os->plan = NULL;
        return -1;
    }
    os->plan->uid = geteuid();
    os->plan->gid = getegid();
    os->plan->rootless = rootless();
    snprintf(os->plan->agent_name, sizeof os->plan->agent_name, "agent");
    /* As root a one-shot is never host root either: it gets a uid of its
     * own for the run, claimed host-wide like a session's (and, rootless
     * too, what it can write is on record). */
    mxc_claim c = {.kind = MXC_CLAIM_ONESHOT};
    for (size_t i = 0; i < os->plan->ngrants && c.nwritable < MXC_REGISTRY_MAX_WRITABLE; i++)
        if (os->plan->grants[i].mode == MXC_GRANT_RW)
            c.writable[c.nwritable++] = os->plan->grants[i].path;
    unsigned uid = 0;
    if (mxc_registry_claim(&c, &uid, os->claim, e) < 0) {
        mxc_plan_free(os->plan);
        free(os->plan);
        os->plan = NULL;
        return -1;
    }
    if (!os->plan->rootless)
        os->plan->uid = os->plan->gid = uid;
    char cgname[64]; /* one process may run many at once */
    snprintf(cgname, sizeof cgname, "oneshot-%d-%lu", (int)getpid(), ++serial);
    mxc_cgroup_open(cgname, &os->cg);
    mxc_exec_child child = {-1, -1, -1, -1};
    bool prepared = false;
    int rc = mxc_exec_spec_build(r, os->plan, &os->spec, e);
    if (rc == 0)
        prepared = (rc = mxc_exec_prepare(pty, os->spec.timeout_ms, &os->proc, &child, e)) == 0;
    if (rc == 0 && pty) { /* PID 1 makes it from the sandbox's own devpts and sends us the master */
        os->spec.pty = true;
        os->spec.pty_rows = rows;
        os->spec.pty_cols = cols;
    }
    mxc_holder h = {.ctl_fd = -1};
    if (rc == 0) {
        mxc_first_exec fx = {.spec = &os->spec, .child = &child};
        rc = mxc_holder_spawn(os->plan, cgname, false, &fx, -1, &h, &os->cg, e);
    }
    os->pid1 = h.pid > 0 ? h.pid : 0;
    os->pid1_start = h.start_time;
    os->pid1_ctl = h.ctl_fd;
    os->direct = rc == 0 && h.first_child == h.pid;
    if (rc == 0) {
        rc = mxc_exec_adopt(&os->proc, &child, h.first_child, h.pid, e);
    } else if (prepared) {
        mxc_exec_child_close(&child);
        mxc_exec_close(&os->proc);
    }
    if (rc < 0) {
        mxc_oneshot_finish(os);
        return -1;
    }
    os->proc.oneshot.report_fd = h.ctl_fd;
    return 0;
}

void mxc_oneshot_finish(mxc_oneshot *os)
{
    mxc_exec_close(&os->proc);
    if (os->pid1 > 0) {
        mxc_error ignored = {0};
        mxc_holder_kill(os->pid1, os->pid1_start, &ignored);
        os->pid1 = 0;
    }
    if (os->pid1_ctl >= 0)
        close(os->pid1_ctl);
    os->pid1_ctl = -1;
    if (os->plan) {
        mxc_cgroup_kill_all(&os->cg);
        mxc_cgroup_remove(&os->cg);
        mxc_exec_spec_free(&os->spec);
        mxc_plan_free(os->plan);
        free(os->plan);
        os->plan = NULL;
    }
    if (os->claim[0]) /* every process of the sandbox is gone */
        mxc_registry_release(os->claim);
    os->claim[0] = '\0';
}

json_t *mxc_plan_describe(const mxc_request *r, mxc_error *e)
{
    mxc_plan p;
    if (mxc_plan_from_request(r, &p, e) < 0)
        return NULL;
    json_t *grants = json_array();
    static const char *const modes[] = {"readwrite", "readonly", "denied"};
    for (size_t i = 0; i < p.ngrants; i++)
        json_array_append_new(grants, json_pack("{s:s, s:s}", "path", p.grants[i].path, "mode", modes[p.grants[i].mode]));
    json_t *cpu = p.cpu_quota_us ? json_real((double)p.cpu_quota_us / MXC_CGROUP_CPU_PERIOD_US) : json_null();
    json_t *plan = json_pack("{s:s, s:s, s:o, s:[s,s,s,s,s,s,s], s:I, s:I, s:o}", "containment",
                             r->containment == MXC_CONT_ISOLATION_SESSION ? "isolation_session" : "process",
                             "network", p.host_network ? "host (unrestricted, acknowledged)" : "own namespace, loopback only",
                             "grants", grants, "namespaces", "user", "mount", "pid", "ipc", "uts", "cgroup",
                             p.host_network ? "-" : "net", "pidsMax", (json_int_t)p.pids_max, "memoryMax",
                             (json_int_t)p.memory_max, "cpuMax", cpu);
    mxc_plan_free(&p);
    return plan;
}
