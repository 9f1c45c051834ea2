/* oneshot.c — see oneshot.h. */
#include "oneshot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "harden.h"
#include "procs.h"
#include "registry.h"
#include "session.h"

/* When the caller exits right after the one-shot (the CLI), the wait for
 * the kernel's teardown of PID 1 — its namespaces, ~0.3 ms here — moves
 * off the caller's path: this detached process waits for PID 1 and then
 * removes the (by then empty) cgroup.  It holds none of the caller's fds
 * (a shell reading our stdout sees EOF when we exit) and sits in its own
 * session (the terminal's ^C does not reach it).  It also cleans up after
 * a caller killed with SIGKILL, whose PID 1 dies by PDEATHSIG, and then
 * releases the run's uid claim. */
static int spawn_cleaner(pid_t pid1, const mxc_cgroup *cg, const char *claim, const mxc_net_policy *np)
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
        mxc_net_ops_get()->remove_ca(np); /* credentials: the run's CA files in its grant */
        /* PID 1 has exited: its namespace, and every process of the sandbox, is gone */
        mxc_registry_release(claim);
        /* src/net: model 1's pool topped up again, now that the run is over (no-op unless root,
         * model 1, pool on): never beside the run's own start */
        mxc_net_ops_get()->pool_refill(np);
        _exit(0);
    }
    close(pfd);
    return c > 0 ? 0 : -1;
}

int mxc_oneshot_detach_cleanup(mxc_oneshot *os)
{
    if (!os->direct || spawn_cleaner(os->pid1, &os->cg, os->claim, &os->plan->net) < 0)
        return -1;
    os->claim[0] = '\0'; /* the cleaner's now */
    return 0;
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
    /* the cleaner releases the claim once PID 1 is gone, whatever happens here */
    bool early = caller_exits && mxc_oneshot_detach_cleanup(&os) == 0;
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

int mxc_oneshot_run(const mxc_request *r, bool caller_exits, int in, int out, int err, int *exit_code, bool *timed_out,
                    mxc_error *e)
{
    *timed_out = false;
    *exit_code = 255;
    mxc_session_fault_mark();
    if (r->containment == MXC_CONT_ISOLATION_SESSION)
        return mxc_session_oneshot(r, in, out, err, exit_code, timed_out, e);
    return oneshot_process(r, caller_exits, in, out, err, exit_code, timed_out, e);
}

int mxc_oneshot_run_to_end(const mxc_request *r, int in, int out, int err, int *exit_code, bool *timed_out,
                           mxc_error *e)
{
    *exit_code = 255;
    *timed_out = false;
    if (r->containment != MXC_CONT_PROCESS)
        return mxc_oneshot_run(r, false, in, out, err, exit_code, timed_out, e);
    mxc_oneshot os;
    if (mxc_oneshot_start(r, false, 0, 0, &os, e) < 0)
        return -1;
    mxc_exec_run(&os.proc, in, out, err, e);
    *exit_code = os.proc.exit_code;
    *timed_out = os.proc.timed_out;
    mxc_oneshot_finish(&os);
    mxc_error_clear(e); /* the workload ran: its outcome is the answer */
    return 0;
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
    if (mxc_landlock_require(e) < 0)
        return -1;
    os->plan = calloc(1, sizeof *os->plan);
    if (!os->plan)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    if (mxc_plan_from_request(r, NULL, os->plan, e) < 0) {
        free(os->plan);
        os->plan = NULL;
        return -1;
    }
    os->plan->uid = geteuid();
    os->plan->gid = getegid();
    os->plan->rootless = geteuid() != 0;
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
    char cgname[64]; /* one process may run many at once; --gc owns it by this process's pid and start time */
    unsigned long long me = mxc_proc_start_time(getpid());
    if (me) /* else the pid-only form: owned while the pid lives (sweep.c) */
        snprintf(cgname, sizeof cgname, "oneshot-%d-%llu-%lu", (int)getpid(), me, ++serial);
    else
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
        rc = mxc_holder_spawn(os->plan, cgname, NULL, &fx, &h, &os->cg, e);
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
        mxc_net_ops_get()->remove_ca(&os->plan->net);
        if (os->direct) /* model 1's pool topped up again, the run over (as the cleaner does) */
            mxc_net_ops_get()->pool_refill(&os->plan->net);
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
    if (mxc_plan_from_request(r, NULL, &p, e) < 0)
        return NULL;
    json_t *grants = json_array();
    static const char *const modes[] = {"readwrite", "readonly", "denied"};
    for (size_t i = 0; i < p.ngrants; i++)
        json_array_append_new(grants, json_pack("{s:s, s:s}", "path", p.grants[i].path, "mode", modes[p.grants[i].mode]));
    json_t *cpu = p.cpu_quota_us ? json_real((double)p.cpu_quota_us / MXC_CGROUP_CPU_PERIOD_US) : json_null();
    json_t *plan = json_pack("{s:s, s:s, s:o, s:[s,s,s,s,s,s,s], s:I, s:I, s:o}", "containment",
                             r->containment == MXC_CONT_ISOLATION_SESSION ? "isolation_session" : "process",
                             "network", mxc_net_model_name(p.net.model),
                             "grants", grants, "namespaces", "user", "mount", "pid", "ipc", "uts", "cgroup",
                             p.host_network ? "-" : "net", "pidsMax", (json_int_t)p.pids_max, "memoryMax",
                             (json_int_t)p.memory_max, "cpuMax", cpu);
    if (plan && p.net.ruleset) { /* src/net: the nftables rule set the sandbox's namespace would get, with
                                    model 1's set of this host's destinations as they are now */
        int err = 0;
        char *rules = mxc_net_ops_get()->rules_now(&p.net, &err);
        json_object_set_new(plan, "networkRules", json_string(rules ? rules : p.net.ruleset));
        if (!rules)
            json_object_set_new(plan, "networkThisHost", json_sprintf("cannot be listed: %s", strerror(-err)));
        free(rules);
    }
    if (plan && p.net.model == MXC_NETM_DIRECT) /* the DNS forwarder and where it relays (src/net/resolver.h) */
        json_object_set_new(plan, "networkDns",
                            p.net.dns[0] ? json_pack("{s:s, s:s}", "forwarder", MXC_NET_DNS, "upstream", p.net.dns)
                                         : json_pack("{s:n, s:s}", "forwarder", "reason", p.net.dns_why));
    if (plan && p.net.model == MXC_NETM_PROXY)
        json_object_set_new(plan, "networkProxy", json_string(p.net.proxy_url));
    if (plan && p.net.model == MXC_NETM_GOVERNED) { /* the credential is the run's: never printed */
        json_object_set_new(plan, "networkProxy", json_string(MXC_GOVERNED_URL_HEAD "***@" MXC_GOVERNED_ADDR
                                                              ":" MXC_GOVERNED_PORT_TEXT "/"));
        json_object_set_new(plan, "governedHosts", json_loads(p.net.hosts, 0, NULL));
    }
    mxc_plan_free(&p);
    return plan;
}

/* ---- the handle behind a pointer, as a front holds it ---- */

mxc_oneshot *mxc_oneshot_new(void)
{
    return calloc(1, sizeof(mxc_oneshot));
}

void mxc_oneshot_delete(mxc_oneshot *os)
{
    free(os);
}

mxc_proc *mxc_oneshot_proc(mxc_oneshot *os)
{
    return &os->proc;
}

pid_t mxc_oneshot_pid1(const mxc_oneshot *os)
{
    return os->pid1;
}
