/* session.c — see session.h. */
#include "session.h"
#include "fault.h"

#include <dirent.h>
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
#include "fdio.h"
#include "harden.h"
#include "procs.h"
#include "quota.h"
#include "registry.h"
#include "sandbox_id.h"
#include "state.h"

/* Rootless: without root every sandbox is the caller's own uid behind a
 * user namespace (docs/design-decisions.md, "Rootless"). */
static bool rootless(void)
{
    return geteuid() != 0;
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

/* fault injection (tests/faults): the phase has begun (a kill from here on
 * lands inside it) */
void mxc_session_fault_mark(void)
{
    const char *path = mxc_fault("PHASE_MARK");
    if (!path || path[0] != '/')
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        (void)!write(fd, "begin\n", 6);
        close(fd);
    }
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

/* The fields that name things outside the state file, checked against
 * their owners before anything acts on them (D4): the name is the
 * sandbox directory's, the workspace the one path provision makes for that
 * name, the uid the one this sandbox claimed (as root: in the reserved
 * range, claimed for exactly this directory; rootless: the caller's). */
static int check_owners(json_t *state, const char *name, const char *dir, mxc_error *e)
{
    const char *an = json_string_value(json_object_get(state, "agentUserName"));
    if (!an || strcmp(an, name) != 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"agentUserName\" is not the sandbox's "
                       "name %s", name);
    if (!mxc_workspace_is(name, json_string_value(json_object_get(state, "workspace"))))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"workspace\" is not the sandbox's "
                       "workspace (<workspace root>/%s)", name);
    if (json_is_true(json_object_get(state, "rootless")) != rootless())
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"rootless\" does not match the caller");
    long long uid = 0, gid = 0;
    if (state_int(state, "uid", 0, 4294967294ll, &uid, e) < 0 || state_int(state, "gid", 0, 4294967294ll, &gid, e) < 0)
        return -1;
    if (rootless()) {
        if (uid != (long long)geteuid() || gid != (long long)getegid())
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"uid\"/\"gid\" are not the "
                           "caller's (a rootless sandbox is its caller's uid)");
        return 0;
    }
    unsigned base, count;
    mxc_registry_range(&base, &count);
    if (uid < (long long)base || uid >= (long long)base + count || gid != uid)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"uid\" %lld / \"gid\" %lld lie "
                       "outside the reserved range (MXC_UID_BASE/MXC_UID_COUNT)", uid, gid);
    char num[24];
    snprintf(num, sizeof num, "%lld", uid);
    const char *sc = json_string_value(json_object_get(state, "claim"));
    if (!sc || strcmp(sc, num) != 0 || !mxc_registry_is_session_claim(sc, dir))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"uid\" %lld is not the uid claimed "
                       "for this sandbox", uid);
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
/* The plan a start runs (dir: the sandbox's state directory, where its proxy's records go). */
static int plan_from_state(json_t *state, bool use_view, const char *dir, mxc_plan *p, mxc_error *e)
{
    memset(p, 0, sizeof *p);
    long long uid = 0, gid = 0;
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
    /* governed egress: the proxy's records beside the state, root's alone (unless the caller names
     * a file: MXC_PROXY_AUDIT_FILE, plan.c); credentials: the CA's files in the workspace (bound at
     * the same path inside) */
    const char *ws = json_string_value(json_object_get(state, "workspace"));
    char audit[768];
    snprintf(audit, sizeof audit, "%s/proxy-audit.jsonl", dir);
    mxc_net_plan_opts net = {.sandbox = name, .audit_path = audit, .ca_base = ws && ws[0] == '/' ? ws : NULL};
    mxc_request r;
    int rc = text ? mxc_request_parse(text, strlen(text), &r, e) : -1;
    free(text);
    if (rc == 0)
        rc = mxc_plan_from_request(&r, &net, p, e);
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
    if (!ws || ws[0] != '/') {
        mxc_plan_free(p);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"workspace\" is missing");
    }
    p->workspace = strdup(ws);
    return 0;
}

/* ------------------------------------------------------------------------
 * provision: staged, then committed under its name in one rename */

static int provision(const mxc_request *r, json_t **result, mxc_error *e)
{
    if (mxc_landlock_require(e) < 0)
        return -1;
    mxc_sandbox_id id = {0};
    mxc_state st;
    mint_name(id.agent_name, sizeof id.agent_name);
    /* a workspace limit asked for is enforced or refused, never ignored */
    unsigned long long ws_max = 0;
    if (mxc_quota_requested(&ws_max, e) < 0)
        return -1;
    if (ws_max) {
        char wroot[512];
        if (mxc_workspace_root(wroot, sizeof wroot, e) < 0 || mxc_quota_require(wroot, e) < 0)
            return -1;
    }
    if (mxc_state_stage(id.agent_name, &st, e) < 0)
        return -1;
    mxc_session_fault_mark();
    bool rl = rootless();
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
    char ws[700], final[700];
    snprintf(final, sizeof final, "%s/%s", st.root, id.agent_name);
    char claim[MXC_CLAIM_NAME_MAX] = "";
    int rc = mxc_workspace_path(id.agent_name, ws, sizeof ws, e);
    /* The workspace: the agent's own, 0700; the caller (root) reaches it,
     * no other agent can.  Rootless it is the caller's like everything else.
     * Made before the claim, which records it as writable by the sandbox. */
    if (rc == 0 && (rc = mxc_state_note_workspace(&st, ws)) < 0)
        rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "provision.stage", -rc, NULL, "cannot write the sandbox state");
    if (rc == 0 && mkdir(ws, 0700) < 0)
        rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "provision.workspace", errno, NULL, "cannot create the workspace");
    bool made_ws = rc == 0;
    if (rc == 0) {
        /* As root the claim gives the sandbox its uid, host-wide (no other
         * state root hands it out); either way what the sandbox can write
         * is on record (fsview.h, hostpath.h). */
        mxc_claim c = {.kind = MXC_CLAIM_SESSION, .state_dir = final, .workspace = ws};
        for (size_t i = 0; i < r->rw.n && c.nwritable < MXC_REGISTRY_MAX_WRITABLE - 1; i++)
            c.writable[c.nwritable++] = r->rw.v[i];
        c.writable[c.nwritable++] = ws;
        rc = mxc_registry_claim(&c, &uid, claim, e);
    }
    if (rc == 0 && !rl) {
        gid = uid;
        if (chown(ws, uid, gid) < 0)
            rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "provision.workspace", errno, NULL,
                            "cannot give the workspace to the agent");
    }
    if (rc == 0 && ws_max) /* the sandbox's uid is its project id: unique host-wide, as its claim */
        rc = mxc_quota_apply(ws, uid, ws_max, e);
    if (rc == 0 && r->has_app_id) {
        id.has_app_id = true;
        memcpy(id.app_id, r->app_id, r->app_id_len + 1);
    }
    char sid[MXC_SANDBOX_ID_MAX + 8];
    if (rc == 0)
        rc = mxc_sandbox_id_encode(&id, sid, sizeof sid, e);
    if (rc == 0) {
        json_t *state = json_object();
        json_object_set_new(state, "agentUserName", json_string(id.agent_name));
        json_object_set_new(state, "uid", json_integer(uid));
        json_object_set_new(state, "gid", json_integer(gid));
        json_object_set_new(state, "rootless", json_boolean(rl));
        json_object_set_new(state, "claim", json_string(claim));
        json_object_set_new(state, "workspace", json_string(ws));
        if (ws_max) {
            json_object_set_new(state, "workspaceMax", json_integer((json_int_t)ws_max));
            json_object_set_new(state, "workspaceProject", json_integer(uid));
        }
        json_object_set_new(state, "policy", policy_of(r));
        rc = mxc_state_write(&st, state, e);
        json_decref(state);
    }
    /* its answer not yet delivered: if this process dies before it is, the
     * sweeper finishes the sandbox (nobody knows its id) */
    bool marked = false;
    if (rc == 0) {
        int mr = mxc_state_mark_unanswered(&st);
        if (mr < 0)
            rc = mxc_err_os(e, MXC_E_BACKEND_ERROR, "provision.mark", -mr, NULL, "cannot write the sandbox state");
        marked = mr == 0;
    }
    if (rc == 0)
        rc = mxc_state_commit(&st, e); /* from here on the sandbox exists */
    if (rc < 0 && marked)
        mxc_state_mark_answered(st.root, id.agent_name);
    if (rc == 0 && mxc_fault("KILL_AFTER_COMMIT")) /* fault injection (tests/faults) */
        kill(getpid(), SIGKILL);
    if (rc < 0) {
        /* only a claim this provision made (claim[] is empty when the claim
         * failed), and only while it names this sandbox */
        if (claim[0])
            mxc_registry_release_owned(claim, final);
        if (made_ws)
            mxc_state_remove_tree(ws);
        mxc_error ignored = {0};
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

/* ------------------------------------------------------------------------
 * an existing sandbox, damaged or not */

typedef struct {
    mxc_state st;
    json_t *state;          /* NULL: the state file is damaged (damage[] says how) */
    char damage[300];
    pid_t holder;
    unsigned long long holder_start;
    bool running;
    bool unreleased;        /* a holder its starter never released (the starter died): no session, and doomed */
    char death[64];         /* how a crashed holder ended ("" = no crash on record) */
    bool death_unknown;     /* its record names a dead holder, and nothing recorded how it ended */
} opened;

static void opened_close(opened *o)
{
    json_decref(o->state);
    o->state = NULL;
    mxc_state_unlock(&o->st);
}

static void finish_tomb(const char *tomb)
{
    mxc_session_finish(tomb, NULL);
}

/* The holder among the processes of the sandbox's cgroup (named after
 * the sandbox): the one called mxc-holder (or mxc-starting, not yet
 * released) whose parent is outside the cgroup (every other process there descends from it: it is PID 1 of the
 * sandbox's PID namespace, and the exec inits are its children). */
static bool holder_in_cgroup(const char *name, pid_t *pid, unsigned long long *start)
{
    mxc_cgroup cg;
    mxc_cgroup_open(name, &cg);
    const char *dir = cg.v2 ? cg.v2_dir : cg.pids_dir[0] ? cg.pids_dir : cg.memory_dir;
    if (!dir[0])
        return false;
    char path[700];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    pid_t in[4096];
    size_t n = 0;
    int p;
    while (n < sizeof in / sizeof in[0] && fscanf(f, "%d", &p) == 1)
        in[n++] = p;
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        char sp[64], buf[512];
        snprintf(sp, sizeof sp, "/proc/%d/stat", (int)in[i]);
        if (mxc_read_small_at(AT_FDCWD, sp, buf, sizeof buf) <= 0)
            continue;
        char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        char state;
        int ppid;
        if (!lp || !rp || (strncmp(lp, "(mxc-holder)", 12) != 0 && strncmp(lp, "(mxc-starting)", 14) != 0) || sscanf(rp + 1, " %c %d", &state, &ppid) != 2 ||
            state == 'Z')
            continue;
        bool parent_inside = false;
        for (size_t j = 0; j < n && !parent_inside; j++)
            parent_inside = in[j] == ppid;
        if (parent_inside)
            continue;
        *pid = in[i];
        *start = mxc_proc_start_time(in[i]);
        return *start != 0;
    }
    return false;
}

/* The holder, from the state file or (the state damaged, or holderPid
 * gone) from its record beside it, or (both gone) from its cgroup. */
static void find_holder(const char *dir, const char *name, json_t *state, pid_t *pid, unsigned long long *start)
{
    json_t *hp = json_object_get(state, "holderPid"), *hs = json_object_get(state, "holderStart");
    *pid = 0, *start = 0;
    if (json_is_integer(hp) && json_is_integer(hs) && json_integer_value(hp) > 0) {
        *pid = (pid_t)json_integer_value(hp);
        *start = (unsigned long long)json_integer_value(hs);
    }
    pid_t rp;
    unsigned long long rs;
    if ((*pid <= 0 || !mxc_pid_alive(*pid, *start)) && mxc_state_read_holder(dir, &rp, &rs))
        *pid = rp, *start = rs;
    if ((*pid <= 0 || !mxc_pid_alive(*pid, *start)) && holder_in_cgroup(name, &rp, &rs))
        *pid = rp, *start = rs;
}

static void remove_cgroup(const char *name);

/* Whether a provision of name is under way (a staging directory of a live maker). */
static bool being_provisioned(const char *root, const char *name)
{
    DIR *d = opendir(root);
    struct dirent *de;
    bool found = false;
    while (d && !found && (de = readdir(d))) {
        bool tomb, alive;
        char n[64];
        found = mxc_state_transient(de->d_name, &tomb, n, sizeof n, &alive) && !tomb && alive && !strcmp(n, name);
    }
    if (d)
        closedir(d);
    return found;
}

/* stale_id only for an id that has nothing left on the host: a sandbox
 * whose directory is gone (deleted under it) may still have a holder (in
 * its cgroup, named after it), a claim (naming its directory) and a
 * workspace.  They go before the answer. */
static void teardown_remnants(const char *name)
{
    char dir[700], ws[700], cws[700] = "", claim[MXC_CLAIM_NAME_MAX] = "";
    mxc_error ignored = {0};
    if (mxc_state_dir_of(name, dir, sizeof dir, &ignored) < 0) {
        mxc_error_clear(&ignored);
        return;
    }
    char root[700];
    snprintf(root, sizeof root, "%.*s", (int)(strrchr(dir, '/') - dir), dir);
    if (being_provisioned(root, name))
        return;
    remove_cgroup(name); /* the holder and everything in it */
    mxc_registry_find_session(dir, claim, cws, sizeof cws);
    if (mxc_workspace_path(name, ws, sizeof ws, &ignored) == 0)
        mxc_state_remove_tree(ws);
    mxc_error_clear(&ignored);
    const char *cb = strrchr(cws, '/');
    if (cb && !strcmp(cb + 1, name) && strcmp(cws, ws) != 0) /* made under another workspace root */
        mxc_state_remove_tree(cws);
    if (claim[0])
        mxc_registry_release_owned(claim, dir);
}

/* A holder that died and is not yet reaped: its monitor is recording how
 * it ended (it reaps only after, container.c), so what it records is
 * waited for — else a start killed a moment ago would read as a crash of
 * unknown cause.  Bounded: a monitor that never reaps (stopped, say)
 * leaves the cause unknown. */
static void await_reaping(pid_t holder, unsigned long long start)
{
    for (int i = 0; i < 5000 && mxc_pid_unreaped(holder, start); i++)
        usleep(i < 100 ? 100 : 1000);
}

static int open_sandbox(const mxc_request *r, opened *o, mxc_error *e)
{
    memset(o, 0, sizeof *o);
    o->st.lock_fd = -1;
    mxc_sandbox_id id;
    if (mxc_sandbox_id_decode(r->sandbox_id, &id, e) < 0)
        return -1;
    if (mxc_state_open_locked(id.agent_name, finish_tomb, &o->st, e) < 0) {
        if (e->code == MXC_E_STALE_ID)
            teardown_remnants(id.agent_name);
        return -1;
    }
    mxc_error why = {0};
    if (mxc_state_read(&o->st, &o->state, &why) < 0) {
        if (why.native == EPROTONOSUPPORT) { /* a newer mxc's sandbox: refused, never taken for damage */
            mxc_error_clear(e);
            *e = why;
            mxc_state_unlock(&o->st);
            return -1;
        }
        snprintf(o->damage, sizeof o->damage, "%.299s", why.message);
        mxc_error_clear(&why);
    }
    find_holder(o->st.dir, o->st.name, o->state, &o->holder, &o->holder_start);
    /* running: alive and released (container.c names it mxc-holder only then) */
    o->running = mxc_pid_alive_as(o->holder, o->holder_start, "mxc-holder");
    o->unreleased = !o->running && mxc_pid_alive(o->holder, o->holder_start);
    pid_t rp = 0;
    unsigned long long rs = 0;
    bool recorded = !o->running && !o->unreleased && mxc_state_read_holder(o->st.dir, &rp, &rs);
    /* Its monitor records how it ended only while its record names it (a
     * stop removes the record first): only then is there something to
     * wait for — a stopped session's state still names its dead holder,
     * a zombie for a moment after the stop. */
    if (recorded && rp == o->holder && rs == o->holder_start)
        await_reaping(o->holder, o->holder_start);
    bool died = !o->running && !o->unreleased && mxc_state_holder_death(o->st.dir, o->death, sizeof o->death);
    if (died && !strcmp(o->death, MXC_HOLDER_NEVER_RELEASED)) {
        o->death[0] = '\0'; /* a start killed before it released its holder: not started, no crash */
        o->unreleased = true;
    } else if (!o->running && !o->unreleased && !died) {
        o->death[0] = '\0';
        /* its record names a dead holder and nothing said how it ended (its
         * monitor died with it): a crash all the same, never "not started" */
        if (recorded) {
            snprintf(o->death, sizeof o->death, "cause unknown");
            o->death_unknown = true;
        }
    }
    return 0;
}

static int damaged(const opened *o, mxc_error *e)
{
    mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox's state is damaged (%s)", o->damage);
    mxc_err_set_remediation(e, "deprovision the sandbox (it tears down whatever is left of it) and provision a new one");
    return -1;
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

/* The sandbox's cgroup, and anything in it that slipped out of the PID
 * namespace's reach. */
static void remove_cgroup(const char *name)
{
    mxc_cgroup cg;
    mxc_cgroup_open(name, &cg);
    mxc_cgroup_kill_all(&cg);
    mxc_cgroup_remove(&cg);
}

/* Ends a session: the record goes first (so its monitor knows this is no
 * crash), then the holder, its cgroup and socket.  Correct after acting:
 * nothing here needs to write (a full disk cannot make a stopped session
 * look running). */
static int end_session(const char *dir, const char *name, pid_t holder, unsigned long long start, mxc_error *e)
{
    mxc_state_clear_holder(dir);
    if (holder > 0 && mxc_holder_kill(holder, start, e) < 0)
        return -1;
    remove_cgroup(name);
    char sock[760];
    snprintf(sock, sizeof sock, "%s/exec.sock", dir);
    unlink(sock);
    return 0;
}

/* ------------------------------------------------------------------------
 * the phases */

/* fault injection (tests/faults): the CLI dies at a named point of start */
static void fault_kill_in_start(const char *where)
{
    const char *v = mxc_fault("KILL_IN_START");
    if (v && !strcmp(v, where))
        kill(getpid(), SIGKILL);
}

typedef struct {
    opened *o;
    const mxc_plan *p;
} start_record;

/* The state of a started session, written while its holder builds the
 * view (container.h): the holder by pid and start time, the view as
 * resolved, what every exec's environment adds.  Its record (the
 * "holder" file, which its monitor and liveness go by) is written only
 * once the holder is ready: a state file naming a holder that never got
 * that far names a dead or unreleased process, which no phase takes for a
 * session. */
static int record_start(void *ctx, pid_t holder, unsigned long long start_time, mxc_error *e)
{
    start_record *r = ctx;
    opened *o = r->o;
    const mxc_plan *p = r->p;
    fault_kill_in_start("spawned");
    json_object_set_new(o->state, "holderPid", json_integer(holder));
    json_object_set_new(o->state, "holderStart", json_integer((json_int_t)start_time));
    json_object_set_new(o->state, "view", view_of(p));
    /* model 2 and governed egress: what every exec's proxy variables name
     * (governed: with this start's credential; the state is root's alone) */
    if (p->net.model == MXC_NETM_PROXY || p->net.model == MXC_NETM_GOVERNED)
        json_object_set_new(o->state, "networkProxy", json_string(p->net.proxy_url));
    else
        json_object_del(o->state, "networkProxy");
    /* credentials: what every exec's environment adds (placeholders, CA paths; never a secret) */
    json_error_t jerr;
    json_t *wenv = p->net.workload_env ? json_loads(p->net.workload_env, 0, &jerr) : NULL;
    if (json_is_array(wenv)) {
        json_object_set_new(o->state, "networkEnv", wenv);
    } else {
        json_decref(wenv);
        json_object_del(o->state, "networkEnv");
    }
    if (mxc_state_write(&o->st, o->state, e) < 0) {
        if (!e->code)
            mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.write", errno, NULL, "cannot record the session's holder");
        return -1;
    }
    /* its uid's claim made durable before anything of the session runs
     * (registry.h); rootless the uid is the caller's own: nothing to hand
     * out twice */
    const char *claim = json_string_value(json_object_get(o->state, "claim"));
    int err = claim && !rootless() ? mxc_registry_sync(claim) : 0;
    if (err < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.claim", -err, NULL, "cannot make the sandbox's uid claim durable");
    return 0;
}

static int start(opened *o, bool exiting, mxc_error *e)
{
    if (!o->state)
        return damaged(o, e);
    if (o->running)
        return mxc_err(e, MXC_E_ALREADY_STARTED, "the sandbox is already started; its session is unchanged");
    if (mxc_landlock_require(e) < 0)
        return -1;
    if (check_owners(o->state, o->st.name, o->st.dir, e) < 0)
        return -1;
    mxc_state_clear_holder(o->st.dir); /* a crashed holder's record: this start is its answer */
    /* a killed start's holder, waiting for a release that never comes: it
     * would go on its own, but not before this start finds it in the cgroup */
    if (o->unreleased && mxc_holder_kill(o->holder, o->holder_start, e) < 0)
        return -1;
    mxc_plan p;
    /* the view is resolved afresh from the policy at every start */
    if (plan_from_state(o->state, false, o->st.dir, &p, e) < 0)
        return -1;
    mxc_cgroup cg;
    mxc_holder h;
    start_record rec = {o, &p};
    mxc_holder_session hs = {.caller_exits = exiting,
                             .record = record_start,
                             .record_ctx = &rec,
                             .listen_fd = exec_listener(&o->st, e),
                             .dirfd = open(o->st.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    int rc = hs.listen_fd < 0 ? -1 : hs.dirfd < 0 ? mxc_err_os(e, MXC_E_BACKEND_ERROR, "session.open", errno, NULL,
                                                               "cannot open the sandbox directory")
                                                  : mxc_holder_spawn(&p, p.agent_name, &hs, NULL, &h, &cg, e);
    if (hs.listen_fd >= 0)
        close(hs.listen_fd); /* the holder's now */
    if (hs.dirfd >= 0)
        close(hs.dirfd);
    if (rc < 0) {
        mxc_plan_free(&p);
        if (hs.listen_fd >= 0)
            mxc_cgroup_remove(&cg); /* nothing lives in it: the holder never ran */
        return -1;
    }
    mxc_plan_free(&p);
    if (mxc_state_write_holder(&o->st, h.pid, h.start_time) < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.write", errno, NULL, "cannot record the session's holder");
        mxc_state_clear_holder(o->st.dir);
        close(h.ctl_fd); /* the holder exits on its own: it was never released */
        return -1;
    }
    fault_kill_in_start("recorded");
    return mxc_holder_release(&h, e);
}

static int stop(opened *o, json_t **result, mxc_error *e)
{
    const char *name = o->st.name;
    if (!o->running) {
        if (o->unreleased && end_session(o->st.dir, name, o->holder, o->holder_start, e) < 0)
            return -1; /* a killed start's: never a session, yet it goes now */
        if (!o->death[0])
            return mxc_err(e, MXC_E_ALREADY_STOPPED, "the sandbox is already stopped; its identity remains");
        /* the holder crashed: what it left goes now, and the caller hears how it ended */
        if (end_session(o->st.dir, name, 0, 0, e) < 0)
            return -1;
        if (o->death_unknown)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the session's holder died; cause unknown (nothing recorded how "
                           "it ended: its monitor died with it); what it left is cleaned up, start it again");
        *result = json_pack("{s:{s:s}}", "metadata", "holderDied", o->death);
        return 0;
    }
    if (end_session(o->st.dir, name, o->holder, o->holder_start, e) < 0)
        return -1;
    /* The state file is not rewritten: the holderPid it still names is a
     * dead process (liveness is pid + start time, and its record, removed
     * above, comes first), and the next start replaces it — a write here
     * cost 0.3-0.5 ms per stop on a disk-backed state root. */
    char record[760];
    snprintf(record, sizeof record, "%s/holder", o->st.dir);
    if (!o->state)
        *result = json_pack("{s:{s:s}}", "metadata", "damagedState", o->damage);
    else if (access(record, F_OK) == 0) /* e.g. a read-only state root */
        *result = json_pack("{s:{s:s}}", "metadata", "stateNotUpdated", "the holder record could not be removed");
    return 0;
}

/* Everything of a sandbox whose directory is at dir (a tombstone, or a
 * staging directory): holder, cgroup, claim, workspace, files. */
static void finish_locked(const char *dir, json_t *report);

void mxc_session_finish(const char *dir, json_t *report)
{
    int lock;
    if (mxc_state_lock_transient(dir, &lock) < 0)
        return; /* committed, or finished by someone else, meanwhile */
    finish_locked(dir, report);
    if (lock >= 0)
        close(lock);
}

static void finish_locked(const char *dir, json_t *report)
{
    bool tomb, alive;
    char name[64] = "";
    const char *base = strrchr(dir, '/');
    if (!base || !mxc_state_transient(base + 1, &tomb, name, sizeof name, &alive))
        return;
    char root[512];
    snprintf(root, sizeof root, "%.*s", (int)(base - dir), dir);
    char final[700];
    snprintf(final, sizeof final, "%s/%s", root, name);
    mxc_state st = {.lock_fd = -1};
    snprintf(st.root, sizeof st.root, "%s", root);
    snprintf(st.name, sizeof st.name, "%s", name);
    snprintf(st.dir, sizeof st.dir, "%s", dir);
    json_t *state = NULL;
    mxc_error ignored = {0};
    mxc_state_read(&st, &state, &ignored);
    mxc_error_clear(&ignored);
    pid_t holder;
    unsigned long long start;
    find_holder(dir, name, state, &holder, &start);
    bool was_running = mxc_pid_alive(holder, start);
    end_session(dir, name, was_running ? holder : 0, start, &ignored);
    mxc_error_clear(&ignored);
    char claim[MXC_CLAIM_NAME_MAX] = "", ws[700] = "";
    snprintf(claim, sizeof claim, "%s", json_string_value(json_object_get(state, "claim")) ?: "");
    snprintf(ws, sizeof ws, "%s", json_string_value(json_object_get(state, "workspace")) ?: "");
    struct stat fst;
    bool final_exists = lstat(final, &fst) == 0;
    if ((!claim[0] || !ws[0]) && !final_exists) { /* the state is damaged: the claim knows the rest */
        char wsc[700];
        if (mxc_registry_find_session(final, claim, wsc, sizeof wsc) && !ws[0])
            snprintf(ws, sizeof ws, "%s", wsc);
    }
    if (!ws[0])
        mxc_state_noted_workspace(dir, ws, sizeof ws); /* killed before the state was written */
    /* only ever the sandbox's own workspace: a state file naming another
     * path (damaged, or pointed at a decoy) gets nothing removed there */
    char own[700];
    if (mxc_workspace_path(name, own, sizeof own, &ignored) == 0) {
        long long pj = json_integer_value(json_object_get(state, "workspaceProject"));
        if (pj > 0)
            mxc_quota_clear(own, (unsigned)pj);
        mxc_state_remove_tree(own);
    }
    mxc_error_clear(&ignored);
    const char *wb = strrchr(ws, '/');
    if (ws[0] && strcmp(ws, own) != 0 && wb && !strcmp(wb + 1, name) && !strncmp(ws, "/", 1)) {
        /* made under another workspace root (the configuration changed): the
         * claim's record of it, written by provision, is trusted, a state
         * file's is not */
        char cn[MXC_CLAIM_NAME_MAX], cws[700];
        if (mxc_registry_find_session(final, cn, cws, sizeof cws) && !strcmp(cws, ws))
            mxc_state_remove_tree(ws);
    }
    char own_claim[MXC_CLAIM_NAME_MAX], wsc[700];
    if (claim[0] && mxc_registry_is_session_claim(claim, final)) {
        mxc_registry_release(claim); /* the state names it: written once the claim was whole, so no half-
                                      * written claim of this sandbox's can be left */
    } else {
        if (mxc_registry_find_session(final, own_claim, wsc, sizeof wsc)) /* the state named none, or another */
            mxc_registry_release_owned(own_claim, final);                 /* sandbox's (damaged): its own */
        mxc_registry_drop_unlinked(final); /* a maker killed while writing the claim */
    }
    json_decref(state);
    mxc_state_destroy(&st, &ignored);
    mxc_error_clear(&ignored);
    if (report)
        json_object_set_new(report, "tornDown", json_pack("{s:s, s:b}", "sandbox", name, "holderWasRunning", was_running));
}

/* A transaction: the name is retired first (a tombstone), so that no later
 * call can bring it back; then everything goes, whatever the state file
 * says or fails to say.  A crash in between leaves a tombstone that the
 * next call on the id, any phase's sweep, or --gc finishes. */
/* The directory cannot be retired (a read-only state root): everything
 * else goes — holder, cgroup, workspace, uid claim — and the answer says
 * precisely what is left; mxc-exec --gc removes the directory (a sandbox
 * directory without a claim) once the state root is writable. */
static int deprovision_in_place(opened *o, mxc_error *e)
{
    char why[200];
    snprintf(why, sizeof why, "%s", strerror(e->native ? e->native : EIO));
    mxc_error_clear(e);
    mxc_error ignored = {0};
    const char *name = o->st.name;
    end_session(o->st.dir, name, o->running ? o->holder : 0, o->holder_start, &ignored);
    mxc_error_clear(&ignored);
    bool ws_gone = true;
    char ws[700];
    if (mxc_workspace_path(name, ws, sizeof ws, &ignored) == 0) {
        long long pj = json_integer_value(json_object_get(o->state, "workspaceProject"));
        if (pj > 0)
            mxc_quota_clear(ws, (unsigned)pj);
        ws_gone = mxc_state_remove_tree(ws) == 0;
    }
    mxc_error_clear(&ignored);
    char claim[MXC_CLAIM_NAME_MAX] = "", cws[700];
    if (mxc_registry_find_session(o->st.dir, claim, cws, sizeof cws))
        mxc_registry_release_owned(claim, o->st.dir);
    mxc_err(e, MXC_E_BACKEND_ERROR, "deprovision incomplete: the sandbox directory %s could not be removed (%s); "
            "the holder is stopped, the cgroup, %sthe uid claim released", o->st.dir, why,
            ws_gone ? "the workspace and " : "");
    if (!ws_gone)
        snprintf(e->message + strlen(e->message), sizeof e->message - strlen(e->message),
                 "; the workspace %s could not be removed either", ws);
    mxc_err_set_remediation(e, "mxc-exec --gc removes what is left once the state root is writable again");
    e->details = json_pack("{s:[s], s:b}", "notRemoved", o->st.dir, "holderStopped", true);
    if (!ws_gone)
        json_array_append_new(json_object_get(e->details, "notRemoved"), json_string(ws));
    return -1;
}

static int deprovision(opened *o, json_t **result, mxc_error *e)
{
    if (mxc_state_entomb(&o->st, e) < 0)
        return deprovision_in_place(o, e);
    char tomb[700];
    snprintf(tomb, sizeof tomb, "%s", o->st.dir);
    json_t *report = json_object();
    finish_locked(tomb, report); /* under the lock taken at open, carried through the rename */
    mxc_state_unlock(&o->st); /* the tombstone, lock file and all, is gone */
    if (!o->state || o->death[0]) {
        json_t *md = json_object();
        if (!o->state)
            json_object_set_new(md, "damagedState", json_string(o->damage));
        if (o->death[0])
            json_object_set_new(md, "holderDied", json_string(o->death));
        *result = json_pack("{s:o}", "metadata", md);
    }
    json_decref(report);
    return 0;
}

/* The cheap sweep every phase does: transient directories of this state
 * root whose makers are dead (a crash mid-provision or mid-deprovision). */
static void sweep_root(void)
{
    char root[512];
    mxc_error ignored = {0};
    if (mxc_state_root(root, sizeof root, &ignored) < 0) {
        mxc_error_clear(&ignored);
        return;
    }
    DIR *d = opendir(root);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        bool tomb, alive;
        char name[64];
        if (mxc_state_unanswered(de->d_name, name, sizeof name, &alive) && !alive)
            mxc_session_reap_unanswered(root, de->d_name, true);
        if (!mxc_state_transient(de->d_name, &tomb, name, sizeof name, &alive) || alive)
            continue;
        char path[1000];
        snprintf(path, sizeof path, "%s/%s", root, de->d_name);
        mxc_session_finish(path, NULL);
    }
    if (d)
        closedir(d);
}

void mxc_session_answered(json_t *result)
{
    const char *name = json_string_value(json_object_get(json_object_get(result, "metadata"), "agentUserName"));
    char root[512];
    mxc_error ignored = {0};
    if (name && mxc_state_root(root, sizeof root, &ignored) == 0)
        mxc_state_mark_answered(root, name);
    mxc_error_clear(&ignored);
}

bool mxc_session_reap_unanswered(const char *root, const char *entry, bool act)
{
    char name[64];
    bool alive;
    if (!mxc_state_unanswered(entry, name, sizeof name, &alive) || alive)
        return false;
    if (!act)
        return true;
    char mark[1000];
    snprintf(mark, sizeof mark, "%s/%s", root, entry);
    mxc_state st;
    int rc = mxc_state_try_lock(root, name, &st);
    if (rc == -EWOULDBLOCK || rc == -EAGAIN)
        return true; /* a phase is on it (someone knows the id): left for later */
    if (rc == 0) {
        /* still unanswered under the lock: nobody has the id, nobody ever will */
        mxc_error ignored = {0};
        if (access(mark, F_OK) == 0 && mxc_state_entomb(&st, &ignored) == 0) {
            char tomb[700];
            snprintf(tomb, sizeof tomb, "%s", st.dir);
            finish_locked(tomb, NULL);
        }
        mxc_error_clear(&ignored);
        mxc_state_unlock(&st);
    }
    unlink(mark); /* the sandbox is gone, or was never committed (its staging directory is swept apart) */
    return true;
}

/* Whether the session at dir has a claim: first the one its state names (one file read), then, for a
 * state that names none or another's, every claim (a scan of the claim directory per session made
 * `mxc --gc` beside 1000 idle sessions read 10^6 claim files: 5 s). */
static bool claimed(const char *dir, char claim[MXC_CLAIM_NAME_MAX], char *ws, size_t wsz)
{
    char path[800];
    snprintf(path, sizeof path, "%s/state.json", dir);
    json_t *state = json_load_file(path, 0, NULL);
    const char *named = json_string_value(json_object_get(state, "claim"));
    bool mine = named && mxc_registry_is_session_claim(named, dir);
    json_decref(state);
    return mine || mxc_registry_find_session(dir, claim, ws, wsz);
}

bool mxc_session_reap_unclaimed(const char *root, const char *name, bool act)
{
    char dir[700], claim[MXC_CLAIM_NAME_MAX], ws[700];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    struct stat sb;
    if (lstat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode) || claimed(dir, claim, ws, sizeof ws))
        return false;
    if (!act)
        return true;
    mxc_state st;
    if (mxc_state_try_lock(root, name, &st) < 0)
        return true;
    mxc_error ignored = {0};
    /* re-checked under the lock: a claim is made before the directory is committed */
    if (!mxc_registry_find_session(dir, claim, ws, sizeof ws) && mxc_state_entomb(&st, &ignored) == 0) {
        char tomb[700];
        snprintf(tomb, sizeof tomb, "%s", st.dir);
        finish_locked(tomb, NULL);
    }
    mxc_error_clear(&ignored);
    mxc_state_unlock(&st);
    return true;
}

static int phase(const mxc_request *r, bool deliver, bool exiting, json_t **result, mxc_error *e)
{
    *result = NULL;
    sweep_root();
    if (r->phase == MXC_PHASE_PROVISION) {
        int rc = provision(r, result, e);
        if (rc == 0 && !deliver) /* in-process: returned is answered */
            mxc_session_answered(*result);
        return rc;
    }
    opened o;
    if (open_sandbox(r, &o, e) < 0)
        return -1;
    mxc_session_fault_mark();
    json_t *res = NULL;
    int rc;
    switch (r->phase) {
    case MXC_PHASE_START: rc = start(&o, exiting, e); break;
    case MXC_PHASE_STOP: rc = stop(&o, &res, e); break;
    case MXC_PHASE_DEPROVISION: rc = deprovision(&o, &res, e); break;
    default: rc = mxc_err(e, MXC_E_UNSUPPORTED_PHASE, "exec is not a non-exec phase");
    }
    opened_close(&o);
    if (rc == 0)
        *result = res ? res : json_object();
    else
        json_decref(res);
    return rc;
}

int mxc_session_phase(const mxc_request *r, json_t **result, mxc_error *e)
{
    return phase(r, false, false, result, e);
}

int mxc_session_phase_deliver(const mxc_request *r, bool exiting, json_t **result, mxc_error *e)
{
    return phase(r, true, exiting, result, e);
}

/* ------------------------------------------------------------------------
 * exec */

/* Why a holder would not take the exec: said precisely (the state read
 * only now, on this slow path). */
/* Why an exec found no holder to take it, said about the session as it is
 * now — unless the exec was judged against a holder (judged, judged_start;
 * 0 = none was running) that is no longer the one running: a stop and a
 * start (or a first start) raced it, nothing of it ran, and it is answered
 * about the holder it met: not_started. */
static int why_no_holder_of(const mxc_request *r, pid_t judged, unsigned long long judged_start, mxc_error *e)
{
    opened o;
    mxc_error why = {0};
    if (open_sandbox(r, &o, &why) < 0) {
        mxc_error_clear(e);
        *e = why;
        return -1;
    }
    int rc;
    if (!o.state)
        rc = damaged(&o, &why);
    else if (o.death_unknown)
        rc = mxc_err(&why, MXC_E_BACKEND_ERROR, "the session's holder died; cause unknown (nothing recorded how it "
                     "ended: its monitor died with it); stop the sandbox to clean up, then start it again");
    else if (o.death[0])
        rc = mxc_err(&why, MXC_E_BACKEND_ERROR, "the session's holder died (%s); stop the sandbox to clean up, then "
                     "start it again", o.death);
    else if (!o.running)
        rc = mxc_err(&why, MXC_E_NOT_STARTED, "the sandbox is provisioned but not started; call start first");
    else if (judged >= 0 && (o.holder != judged || o.holder_start != judged_start))
        rc = mxc_err(&why, MXC_E_NOT_STARTED, "the session was stopped or started while this exec was handed over "
                     "(it met %s); nothing of it ran: send it again", judged ? "a holder that has ended" : "no holder");
    else
        rc = 0; /* running, yet it refused: the first error stands */
    opened_close(&o);
    if (rc < 0) {
        mxc_error_clear(e);
        *e = why;
    } else {
        e->code = MXC_E_BACKEND_ERROR;
    }
    return -1;
}

static int why_no_holder(const mxc_request *r, mxc_error *e)
{
    return why_no_holder_of(r, -1, 0, e);
}

/* exec: straight to the holder's socket — no lock and no state file on the
 * way of a running session's exec (the holder serialises what must be: the
 * view's verification), only the workspace's path, read lock-free from the
 * state file (written whole, by rename). */
int mxc_session_exec_start(const mxc_request *r, bool pty, mxc_proc *proc, mxc_error *e)
{
    mxc_sandbox_id id;
    if (mxc_sandbox_id_decode(r->sandbox_id, &id, e) < 0)
        return -1;
    char dir[700];
    if (mxc_state_dir_of(id.agent_name, dir, sizeof dir, e) < 0)
        return -1;
    mxc_state st = {.lock_fd = -1};
    snprintf(st.dir, sizeof st.dir, "%s", dir);
    json_t *state = NULL;
    mxc_error ignored = {0};
    if (mxc_state_read(&st, &state, &ignored) < 0) {
        mxc_error_clear(&ignored);
        return why_no_holder(r, e);
    }
    /* what the environment needs of the plan: the agent and its workspace */
    mxc_plan *plan = calloc(1, sizeof *plan);
    const char *ws = json_string_value(json_object_get(state, "workspace"));
    if (plan && ws && !mxc_workspace_is(id.agent_name, ws)) {
        free(plan);
        json_decref(state);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the sandbox state is damaged: \"workspace\" is not the sandbox's "
                       "workspace");
    }
    if (!plan || !ws) {
        free(plan);
        json_decref(state);
        return why_no_holder(r, e);
    }
    snprintf(plan->agent_name, sizeof plan->agent_name, "%s", id.agent_name);
    plan->workspace = strdup(ws);
    /* model 2 or governed egress: what an exec needs of the plan start recorded */
    mxc_net_plan_restore(json_string_value(json_object_get(state, "networkProxy")),
                         json_object_get(state, "networkEnv"), &plan->net);
    json_decref(state);
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
        return why_no_holder(r, e);
    }
    /* the holder this exec is judged against: the one recorded as it is handed over (none: 0) */
    pid_t h0 = 0;
    unsigned long long hs0 = 0;
    if (!mxc_state_read_holder(dir, &h0, &hs0))
        h0 = 0, hs0 = 0;
    rc = mxc_exec_start(sock, &s, pty, proc, e);
    close(dirfd);
    mxc_exec_spec_free(&s);
    pid_t h;
    unsigned long long hs;
    /* no holder took it, or the holder went away under it (a stop or a
     * deprovision that won the race, or a stop and a start), or it met a
     * holder its killed start never released (alive, or a zombie its monitor
     * has not yet recorded, but never named mxc-holder): say which, about the
     * holder it was judged against */
    if (rc < 0 && (e->code == MXC_E_NOT_STARTED || !mxc_state_read_holder(dir, &h, &hs) ||
                   !mxc_pid_alive_as(h, hs, "mxc-holder") || h != h0 || hs != hs0))
        return why_no_holder_of(r, h0, hs0, e);
    return rc;
}

/* ------------------------------------------------------------------------
 * one-shot */

int mxc_session_oneshot(const mxc_request *r, int in, int out, int err, int *code, bool *timed_out, mxc_error *e)
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
        rc = start(&o, false, e); /* this process goes on: the monitor is no child of its */
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
    json_t *unused = NULL;
    if (open_sandbox(&sr, &o, &ignored) == 0) {
        char root[512];
        snprintf(root, sizeof root, "%s", o.st.root);
        deprovision(&o, &unused, &ignored);
        opened_close(&o);
        mxc_state_mark_answered(root, o.st.name); /* nothing of it is left to answer for */
    }
    json_decref(unused);
    mxc_error_clear(&ignored);
    json_decref(res);
    return rc;
}


/* ------------------------------------------------------------------------
 * what a person sees of a sandbox (inventory.h) */

/* A limit file's value as a number (-1: no such file; 0 for "max": none). */
static long long limit_of(const char *dir, const char *file)
{
    if (!dir[0])
        return -1;
    char path[700], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (mxc_read_small_at(AT_FDCWD, path, buf, sizeof buf) <= 0)
        return -1;
    return strncmp(buf, "max", 3) == 0 ? 0 : strtoll(buf, NULL, 10);
}

/* The sandbox's network helpers (pasta and its keeper, mxc-proxy: cgroup.h's MXC_CGROUP_HELPERS
 * child, made when one starts): "running", or "ended" while the sandbox runs — its network (or its
 * governed egress) is gone, and nothing restarts it — with how many of them its memory cgroup's OOM
 * killed (v1: the child's own count; v2: the child has no memory controller of its own: none shown).
 * NULL: no helper was ever started (no such child). */
static json_t *helpers_summary(const mxc_cgroup *cg)
{
    const char *base = cg->v2 ? cg->v2_dir : cg->pids_dir[0] ? cg->pids_dir : cg->memory_dir;
    char dir[600], mem[600];
    snprintf(dir, sizeof dir, "%s/" MXC_CGROUP_HELPERS, base);
    struct stat sb;
    if (!base[0] || stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        return NULL;
    pid_t one;
    int n = mxc_cgroup_pids(dir, &one, 1);
    json_t *out = json_pack("{s:s}", "state", n > 0 ? "running" : n == 0 ? "ended" : "unknown");
    unsigned long long kills = 0;
    snprintf(mem, sizeof mem, "%s/" MXC_CGROUP_HELPERS, cg->memory_dir);
    if (!cg->v2 && cg->memory_dir[0] && mxc_cgroup_read_key(mem, "memory.oom_control", "oom_kill", &kills) == 0)
        json_object_set_new(out, "oomKills", json_integer((json_int_t)kills));
    return out;
}

json_t *mxc_session_summary(const char *root, const char *name, bool full)
{
    if (!mxc_agent_name_is_safe(name))
        return NULL;
    mxc_state st = {.lock_fd = -1};
    snprintf(st.root, sizeof st.root, "%s", root);
    snprintf(st.name, sizeof st.name, "%s", name);
    snprintf(st.dir, sizeof st.dir, "%s/%s", root, name);
    struct stat sb;
    char lockp[760];
    snprintf(lockp, sizeof lockp, "%s/lock", st.dir);
    if (lstat(st.dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        return NULL;
    long long created = lstat(lockp, &sb) == 0 ? (long long)sb.st_mtime : 0;
    /* read without the sandbox's lock: the state file is replaced
     * atomically, and a listing must not wait behind a phase */
    json_t *state = NULL;
    mxc_error why = {0};
    char damage[300] = "";
    if (mxc_state_read(&st, &state, &why) < 0 || check_owners(state, name, st.dir, &why) < 0)
        snprintf(damage, sizeof damage, "%.299s", why.message[0] ? why.message : "unreadable");
    mxc_error_clear(&why);
    pid_t holder;
    unsigned long long hstart;
    find_holder(st.dir, name, state, &holder, &hstart);
    bool running = mxc_pid_alive_as(holder, hstart, "mxc-holder");
    bool starting = !running && mxc_pid_alive(holder, hstart);
    const char *status = damage[0] ? "damaged" : running ? "running" : starting ? "starting"
                       : json_object_get(state, "view") ? "stopped" : "provisioned";
    mxc_sandbox_id id = {0};
    snprintf(id.agent_name, sizeof id.agent_name, "%s", name);
    char sid[MXC_SANDBOX_ID_MAX] = "";
    mxc_error ignored = {0};
    mxc_sandbox_id_encode(&id, sid, sizeof sid, &ignored);
    mxc_error_clear(&ignored);
    json_t *out = json_pack("{s:s, s:s, s:s, s:I}", "agentName", name, "sandboxId", sid, "state", status, "created",
                            (json_int_t)created);
    if (damage[0])
        json_object_set_new(out, "damage", json_string(damage));
    json_t *v;
    if (json_is_integer(v = json_object_get(state, "uid")))
        json_object_set(out, "uid", v);
    if (json_is_string(v = json_object_get(state, "workspace")))
        json_object_set(out, "workspace", v);
    json_object_set_new(out, "rootless", json_boolean(json_is_true(json_object_get(state, "rootless"))));
    if (running) {
        json_object_set_new(out, "holderPid", json_integer(holder));
        mxc_cgroup cg;
        mxc_cgroup_open(name, &cg);
        long long pids = cg.v2 ? limit_of(cg.v2_dir, "pids.max") : limit_of(cg.pids_dir, "pids.max");
        long long mem = cg.v2 ? limit_of(cg.v2_dir, "memory.max") : limit_of(cg.memory_dir, "memory.limit_in_bytes");
        json_t *lim = json_object();
        if (pids >= 0)
            json_object_set_new(lim, "pids", json_integer(pids));
        if (mem >= 0)
            json_object_set_new(lim, "memoryBytes", json_integer(mem));
        json_object_set_new(out, "limits", lim);
        json_t *helpers = helpers_summary(&cg);
        if (helpers)
            json_object_set_new(out, "networkHelpers", helpers);
    }
    if (full && state) {
        if ((v = json_object_get(state, "policy")))
            json_object_set(out, "policy", v);
        if ((v = json_object_get(state, "view")))
            json_object_set(out, "view", v);
        const char *px = json_string_value(json_object_get(state, "networkProxy"));
        if (px) { /* a governed proxy's URL carries the sandbox's credential: never shown */
            const char *at = strchr(px, '@'), *sl = strstr(px, "://");
            char shown[600];
            if (at && sl && sl < at)
                snprintf(shown, sizeof shown, "%.*s***@%s", (int)(sl + 3 - px), px, at + 1);
            else
                snprintf(shown, sizeof shown, "%s", px);
            json_object_set_new(out, "networkProxy", json_string(shown));
        }
    }
    json_decref(state);
    return out;
}
