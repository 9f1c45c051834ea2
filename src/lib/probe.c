/* probe.c — see probe.h. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "harden.h"
#include "helperbounds.h"
#include "procs.h"
#include "quota.h"
#include "state.h"
#include "sweep.h"

static long read_long(const char *path)
{
    FILE *f = fopen(path, "re");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* Whether the helpers' OOM score can be lowered here (helperbounds.h): tried in a child, which
 * exits at once, so this process keeps its own. */
static json_t *helpers_oom_probe(void)
{
    pid_t c = fork();
    if (c == 0)
        _exit(mxc_oom_score_adj_self(MXC_HELPER_OOM_SCORE_ADJ) == 0 ? 0 : 1);
    int status = 1;
    while (c > 0 && waitpid(c, &status, 0) < 0 && errno == EINTR)
        ;
    bool ok = c > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return json_pack("{s:i, s:b, s:s}", "value", MXC_HELPER_OOM_SCORE_ADJ, "inEffect", ok, "meaning",
                     ok ? "mxc-proxy, pasta and its keeper run below the workload: the sandbox's OOM takes the "
                          "workload first, a helper only when nothing else is left"
                        : "cannot be lowered here (no CAP_SYS_RESOURCE over the host): the helpers keep their "
                          "caller's score, and a sandbox that runs out of memory may lose its network to its OOM");
}

/* What bounds the host-side network helpers a workload drives. */
static json_t *helpers_probe(void)
{
    bool any = mxc_cgroup_available("pids") || mxc_cgroup_available("memory") || mxc_cgroup_available("cpu");
    char how[400] = "none: no cgroup controller for mxc here; mxc-proxy and pasta are bounded only by their own "
                    "limits below";
    if (any)
        snprintf(how, sizeof how, "a child (" MXC_CGROUP_HELPERS ") of each sandbox's cgroup: the sandbox's limits "
                 "(pids %s, memory %s, cpu %s when MXC_CPU_MAX is set) count mxc-proxy and pasta too",
                 mxc_cgroup_mode("pids"), mxc_cgroup_mode("memory"), mxc_cgroup_mode("cpu"));
    return json_pack("{s:s, s:{s:i, s:s, s:I, s:s, s:s, s:{s:I, s:s, s:i, s:i, s:i, s:i, s:s}}, s:{s:i}, s:o}",
                     "cgroup", how, "mxc-proxy", "maxConnections", MXC_PROXY_MAX_CONNECTIONS, "setting",
                     "MXC_PROXY_MAX_CONNECTIONS", "openFiles",
                     (json_int_t)MXC_PROXY_MAX_CONNECTIONS * MXC_PROXY_NOFILE_PER_CONN + MXC_PROXY_NOFILE_FIXED,
                     "openFilesRule", "8 per connection + 64, soft and hard, whatever its caller's",
                     "atTheCap", "the oldest connection without a complete head is shed (503), else the newcomer; out "
                     "of descriptors the same, then accepting rests until one closes or 200 ms pass",
                     "audit", "maxBytes", (json_int_t)MXC_PROXY_AUDIT_MAX_BYTES, "setting", "MXC_PROXY_AUDIT_MAX_BYTES",
                     "refusalsPerSecond", MXC_PROXY_AUDIT_DENIED_PER_SEC, "refusalsBurst", MXC_PROXY_AUDIT_DENIED_BURST,
                     "allowedPerSecond", MXC_PROXY_AUDIT_ALLOWED_PER_SEC, "allowedBurst", MXC_PROXY_AUDIT_ALLOWED_BURST,
                     "dropped", "counted by disposition and said: mxc-proxy-audit-dropped (OCSF 2004) at most once a "
                     "second and at the proxy's end, mxc-proxy-audit-full at the cap",
                     "pasta", "openFiles", MXC_NET_STACK_NOFILE, "oomScoreAdj", helpers_oom_probe());
}

json_t *mxc_probe(void)
{
    struct utsname u;
    uname(&u);
    int abi = mxc_landlock_abi();
    long max_userns = read_long("/proc/sys/user/max_user_namespaces");
    bool seccomp_ok = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
    json_t *cg = json_object();
    const char *ctrl[] = {"pids", "memory", "cpu"};
    for (size_t i = 0; i < 3; i++)
        json_object_set_new(cg, ctrl[i], json_string(mxc_cgroup_mode(ctrl[i])));
    bool root = geteuid() == 0;
    bool ready = abi >= MXC_LANDLOCK_ABI_NEEDED && max_userns > 0 && seccomp_ok;
    bool no_pids = !mxc_cgroup_available("pids");
    bool no_mem = !mxc_cgroup_available("memory");
    char fallback[800];
    snprintf(fallback, sizeof fallback, "%s%s%s", no_pids ? "processes: RLIMIT_NPROC per sandbox" : "",
             no_pids && no_mem ? "; " : "",
             no_mem ? "memory: RLIMIT_AS per process (its whole address space: private, shared and stack "
                      "mappings), not per sandbox (each of its processes may reach it); what no rlimit counts is "
                      "refused: memfd_create (EPERM), SysV shmget/msgget/semget (ENOSYS); POSIX message queues "
                      "within RLIMIT_MSGQUEUE (at most 800 KiB); /tmp and /dev/shm sized within the bound; kernel "
                      "memory (pipe and socket buffers, page tables) is not bounded" : "");
    json_t *rootless = json_pack("{s:b, s:s}", "active", !root, "identity",
                                 root ? "a dedicated host uid per sandbox (MXC_UID_BASE/MXC_UID_COUNT)"
                                      : "the caller's own uid behind a user namespace, for every sandbox");
    json_t *out = json_pack("{s:{s:s, s:s, s:s, s:b, s:o, s:{s:i, s:i, s:b}, s:{s:b, s:I, s:b}, s:b, s:o, s:s, "
                            "s:{s:b, s:b}}}",
                            "result", "kernel", u.release, "machine", u.machine, "mxcVersion", "0.1.0", "root", root,
                            "rootless", rootless, "landlock", "abi", abi, "needed", MXC_LANDLOCK_ABI_NEEDED, "ok",
                            abi >= MXC_LANDLOCK_ABI_NEEDED, "namespaces", "user", max_userns > 0, "maxUserNamespaces",
                            (json_int_t)max_userns, "net", true, "seccomp", seccomp_ok, "cgroups", cg,
                            "resourceFallback",
                            "the PID namespace is always the kill-all; limits are applied where a controller is listed",
                            "backends", "process", ready, "isolation_session", ready);
    if (out && fallback[0])
        json_object_set_new(json_object_get(out, "result"), "rlimitFallback", json_string(fallback));
    if (out) /* src/net: what this host can enforce for network models 1 and 2 */
        json_object_set_new(json_object_get(out, "result"), "networkModels", mxc_net_ops_get()->probe());
    if (out)
        json_object_set_new(json_object_get(out, "result"), "networkHelpers", helpers_probe());
    mxc_error e = {0};
    char wsroot[512], why[400];
    if (out && mxc_workspace_root_path(wsroot, sizeof wsroot)) { /* the workspace size limit (quota.h) */
        bool ok = mxc_quota_available(wsroot, why, sizeof why);
        json_object_set_new(json_object_get(out, "result"), "workspaceLimit",
                            json_pack("{s:b, s:s, s:s}", "available", ok, ok ? "how" : "reason", why, "setting",
                                      "MXC_WORKSPACE_MAX"));
    }
    json_t *left = mxc_sweep(false, &e); /* what mxc-exec --gc would reclaim */
    if (out && left)
        json_object_set_new(json_object_get(out, "result"), "leftovers", left);
    else
        json_decref(left);
    mxc_error_clear(&e);
    return out;
}
