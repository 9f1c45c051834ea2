/* policy.c — see policy.h. */
#include "policy.h"

#include <string.h>

#include "sandbox_id.h"

#define H MXC_DISP_HONORED
#define A MXC_DISP_ACCEPTED
#define I MXC_DISP_INHERITED
#define N MXC_DISP_NA
#define R MXC_DISP_REJECTED

/*                                                              one-shot prov start exec stop deprov */
const mxc_matrix_row MXC_MATRIX[MXC_F__COUNT] = {
    {MXC_F_FS_GRANTS, "filesystem.readwritePaths / readonlyPaths", {H, H, R, R, R, R},
     "filesystem policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_FS_DENIED, "filesystem.deniedPaths", {H, H, R, R, R, R},
     "filesystem policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_ABSENT, "network absent (= block: loopback only)", {H, H, I, I, I, I}, ""},
    {MXC_F_NET_BLOCK, "network.defaultPolicy block, no host rules", {H, H, R, R, R, R},
     "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_BLOCK_LOCAL, "network block + allowLocalNetwork true", {R, R, R, R, R, R},
     "allowLocalNetwork with a blocked network cannot be delivered: a blocked sandbox has its own empty "
     "network namespace and reaches no local network"},
    {MXC_F_NET_HOSTS,
     "network.allowedHosts / blockedHosts (governed egress, defaultPolicy block: own namespace, only mxc-proxy's "
     "listener on its loopback, by host name, with a per-sandbox credential)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_CREDENTIALS,
     "network.credentials (governed egress only: each secret read from the caller's secretEnv at one-shot run or "
     "session start, never stored; the workload sees placeholders, mxc-proxy substitutes them for their binding)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_ALLOW_ACK, "network allow + allowLocalNetwork true (canonical ack: host network)", {H, H, R, R, R, R},
     "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_ALLOW_NO_LOCAL,
     "network allow without allowLocalNetwork true (model 1: the internet through the userspace stack; local ranges "
     "and host loopback denied)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_ENFORCEMENT_MODE, "network.enforcementMode", {A, A, R, R, R, R},
     "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_DIRECTIONAL, "network.egress / ingress (schema 0.8; lowered as in contract 1.0: models 1 and 3)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_UI_LOCKDOWN, "ui disable true / clipboard none / injection false", {H, H, R, R, R, R},
     "ui policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_UI_GRANT, "ui granting display, clipboard or injection", {R, R, R, R, R, R},
     "no display, clipboard or input-injection channel exists inside the sandbox; a ui grant cannot be honored"},
    {MXC_F_LIFECYCLE_SECTION, "lifecycle (section)", {A, R, R, R, R, R},
     "lifecycle is not accepted on state-aware phases: the phases themselves are the lifecycle"},
    {MXC_F_DESTROY_TRUE, "lifecycle.destroyOnExit true", {H, R, R, R, R, R}, "lifecycle is not accepted on state-aware phases"},
    {MXC_F_DESTROY_FALSE, "lifecycle.destroyOnExit false", {R, R, R, R, R, R},
     "lifecycle.destroyOnExit false cannot be delivered: a one-shot sandbox is always torn down on return"},
    {MXC_F_PRESERVE_FALSE, "lifecycle.preservePolicy false", {H, R, R, R, R, R}, "lifecycle is not accepted on state-aware phases"},
    {MXC_F_PRESERVE_TRUE, "lifecycle.preservePolicy true", {R, R, R, R, R, R},
     "lifecycle.preservePolicy true cannot be delivered: nothing of a one-shot sandbox outlives it"},
    {MXC_F_FALLBACK, "fallback.allowDaclMutation", {N, N, N, N, N, N}, ""},
    {MXC_F_CONTAINER_ID, "containerId", {A, A, A, A, A, A}, ""},
    {MXC_F_PROCESS_COMMAND, "process.commandLine", {H, A, A, H, A, A}, ""},
    {MXC_F_PROCESS_OPTIONS, "process.cwd / env / timeout (contract 1.0: and inheritDefaultEnv)", {H, A, A, H, A, A}, ""},
    {MXC_F_APP_ID, "experimental.isolation_session.provision.appId", {A, H, N, N, N, N}, ""},
    {MXC_F_APP_ID_V1, "isolationSession.provision.appId (contract 1.0)", {R, H, R, R, R, R},
     "contract 1.0 takes isolationSession.provision only on an isolation_session provision"},
    {MXC_F_EXP_OWN_OTHER_PHASE, "experimental.<own backend>.<another phase>", {A, A, A, A, A, A}, ""},
    {MXC_F_STABLE_SECTION, "processContainer / appContainer / lxc / seatbelt / macos_sandbox", {R, R, R, R, R, R},
     "a stable section of another backend cannot configure this one"},
    {MXC_F_WSLC_SECTION, "wslc (section; contract 1.0)", {R, R, R, R, R, R},
     "the WSLc backend is not available in mxc for Linux, and a section of another backend cannot configure this one"},
    {MXC_F_FOREIGN_EXP_ONE, "one experimental.<another backend> section", {R, R, A, A, A, A},
     "an experimental section of another backend cannot configure this one"},
    {MXC_F_FOREIGN_EXP_MANY, "two or more experimental.<another backend> sections", {R, R, R, R, R, R},
     "more than one experimental section of other backends"},
    {MXC_F_RUNTIME_CONFIG, "runtimeConfig (non-empty; legacy schemas)", {R, R, R, R, R, R},
     "the legacy schemas define no runtimeConfig this backend can honor (contract 1.0's runtimeConfig.networkProxy is)"},
    {MXC_F_NET_PROXY,
     "network.proxy (legacy; url or localhost port, on a blocked network; model 2: only that loopback endpoint, proxy "
     "variables set, NO_PROXY cleared)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_V1_RULES,
     "network.egress rules or egress.default allow (contract 1.0; model 1: its own namespace, a route through the "
     "userspace stack, nftables rules; ingress.default allow and hostLoopback allow are refused outside all-allow)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_V1_BLOCK, "network blocked: egress.default deny or absent, ingress deny or absent, no rules (contract 1.0)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_NET_V1_ALLOW_ALL,
     "network all-allow: egress, ingress and hostLoopback allow, no rules (contract 1.0; the host network)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
    {MXC_F_TELEMETRY, "telemetry.enabled (contract 1.0)", {A, A, A, A, A, A}, ""},
    {MXC_F_NET_V1_PROXY,
     "runtimeConfig.networkProxy (contract 1.0; model 2: only that loopback endpoint, proxy variables set, NO_PROXY "
     "cleared)",
     {H, H, R, R, R, R}, "network policy is fixed at provision; it cannot be supplied on later phases"},
};

#undef H
#undef A
#undef I
#undef N
#undef R

static const char *const DISP_NAMES[] = {"honored", "accepted, no effect", "inherited", "n/a", "rejected"};

const char *mxc_disposition_name(mxc_disposition d)
{
    return DISP_NAMES[d];
}

mxc_surface mxc_surface_of(const mxc_request *r)
{
    switch (r->phase) {
    case MXC_PHASE_PROVISION: return MXC_SURF_PROVISION;
    case MXC_PHASE_START: return MXC_SURF_START;
    case MXC_PHASE_EXEC: return MXC_SURF_EXEC;
    case MXC_PHASE_STOP: return MXC_SURF_STOP;
    case MXC_PHASE_DEPROVISION: return MXC_SURF_DEPROVISION;
    default: return MXC_SURF_ONESHOT;
    }
}

/* Which features of the matrix the request expresses. */
static void collect_network(const mxc_request *r, bool *f)
{
    if (!r->has_network) {
        f[MXC_F_NET_ABSENT] = true;
        return;
    }
    if (r->dialect == MXC_DIALECT_V1) {
        f[r->net_v1 == MXC_NET_V1_ALLOW_ALL ? MXC_F_NET_V1_ALLOW_ALL
          : r->net_v1 == MXC_NET_V1_BLOCK   ? MXC_F_NET_V1_BLOCK
                                            : MXC_F_NET_V1_RULES] = true;
        return;
    }
    f[MXC_F_NET_PROXY] = r->net_proxy;
    if (r->net_directional) {
        f[MXC_F_NET_DIRECTIONAL] = true;
        return;
    }
    f[MXC_F_NET_ENFORCEMENT_MODE] = r->net_has_enforcement_mode;
    f[MXC_F_NET_CREDENTIALS] = r->net_credentials != NULL;
    if (r->allowed_hosts.n || r->blocked_hosts.n)
        f[MXC_F_NET_HOSTS] = true;
    else if (r->net_allow)
        f[r->net_allow_local == MXC_TRI_TRUE ? MXC_F_NET_ALLOW_ACK : MXC_F_NET_ALLOW_NO_LOCAL] = true;
    else
        f[r->net_allow_local == MXC_TRI_TRUE ? MXC_F_NET_BLOCK_LOCAL : MXC_F_NET_BLOCK] = true;
}

static void collect_ui(const mxc_request *r, bool *f)
{
    if (!r->has_ui)
        return;
    bool grant = r->ui_disable == MXC_TRI_FALSE || r->ui_injection == MXC_TRI_TRUE ||
                 (r->ui_clipboard && strcmp(r->ui_clipboard, "none") != 0);
    f[grant ? MXC_F_UI_GRANT : MXC_F_UI_LOCKDOWN] = true;
}

static void collect_experimental(const mxc_request *r, bool *f)
{
    if (!r->experimental)
        return;
    const char *own = r->containment == MXC_CONT_ISOLATION_SESSION || r->phase != MXC_PHASE_NONE
                          ? "isolation_session" : "process";
    size_t foreign = 0;
    const char *key;
    json_t *v;
    json_object_foreach(r->experimental, key, v) {
        if (strcmp(key, own) != 0) {
            foreign++;
            continue;
        }
        const char *phase_key;
        json_t *pv;
        if (json_is_object(v))
            json_object_foreach(v, phase_key, pv)
                if (strcmp(phase_key, mxc_phase_name(r->phase)) != 0)
                    f[MXC_F_EXP_OWN_OTHER_PHASE] = true;
    }
    if (foreign == 1)
        f[MXC_F_FOREIGN_EXP_ONE] = true;
    else if (foreign > 1)
        f[MXC_F_FOREIGN_EXP_MANY] = true;
}

static void collect(const mxc_request *r, bool *f)
{
    f[MXC_F_FS_GRANTS] = r->has_filesystem && (r->rw.n || r->ro.n || !r->denied.n);
    f[MXC_F_FS_DENIED] = r->denied.n > 0;
    collect_network(r, f);
    collect_ui(r, f);
    if (r->has_lifecycle) {
        f[MXC_F_LIFECYCLE_SECTION] = true;
        f[MXC_F_DESTROY_TRUE] = r->destroy_on_exit == MXC_TRI_TRUE;
        f[MXC_F_DESTROY_FALSE] = r->destroy_on_exit == MXC_TRI_FALSE;
        f[MXC_F_PRESERVE_TRUE] = r->preserve_policy == MXC_TRI_TRUE;
        f[MXC_F_PRESERVE_FALSE] = r->preserve_policy == MXC_TRI_FALSE;
    }
    f[MXC_F_FALLBACK] = r->has_fallback;
    f[MXC_F_CONTAINER_ID] = r->has_container_id;
    f[MXC_F_PROCESS_COMMAND] = r->command_line != NULL;
    f[MXC_F_PROCESS_OPTIONS] = r->cwd || r->env.n || r->timeout_ms;
    f[r->dialect == MXC_DIALECT_V1 ? MXC_F_APP_ID_V1 : MXC_F_APP_ID] = r->has_app_id;
    f[MXC_F_STABLE_SECTION] = r->stable_section != NULL;
    f[MXC_F_WSLC_SECTION] = r->has_wslc_section;
    f[MXC_F_RUNTIME_CONFIG] = r->has_runtime_config && r->dialect == MXC_DIALECT_LEGACY;
    f[MXC_F_NET_V1_PROXY] = r->dialect == MXC_DIALECT_V1 && r->network_proxy;
    f[MXC_F_TELEMETRY] = r->has_telemetry;
    f[MXC_F_PROCESS_OPTIONS] |= r->inherit_default_env;
    collect_experimental(r, f);
}

int mxc_policy_check_path(const char *what, const char *path, mxc_error *e)
{
    size_t n = strlen(path);
    bool blank = true;
    for (size_t i = 0; i < n; i++)
        if (path[i] != ' ' && path[i] != '\t')
            blank = false;
    if (blank)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s contains a blank path", what);
    if (path[0] != '/')
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s path \"%.200s\" is not absolute", what, path);
    if (n > 4000)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s path is longer than 4000 bytes", what);
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s path \"%.200s\" contains a control character", what, path);
    const char *seg = path + 1;
    for (;;) {
        const char *end = strchr(seg, '/');
        size_t len = end ? (size_t)(end - seg) : strlen(seg);
        bool last = !end;
        if ((len == 0 && !(last && seg == path + 1)) || (len == 1 && seg[0] == '.') ||
            (len == 2 && seg[0] == '.' && seg[1] == '.'))
            return mxc_err(e, MXC_E_POLICY_VALIDATION,
                           "%s path \"%.200s\" is not normalised (no \".\", \"..\", \"//\" or trailing \"/\")", what,
                           path);
        if (last)
            break;
        seg = end + 1;
    }
    if (n == 1)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s path \"/\" would grant the whole host", what);
    return 0;
}

static int check_paths(const mxc_request *r, mxc_error *e)
{
    const struct { const char *what; const mxc_strlist *l; } lists[] = {
        {"filesystem.readwritePaths", &r->rw}, {"filesystem.readonlyPaths", &r->ro},
        {"filesystem.deniedPaths", &r->denied}};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < lists[k].l->n; i++)
            if (mxc_policy_check_path(lists[k].what, lists[k].l->v[i], e) < 0)
                return -1;
    /* cwd "/" is a place to start, not a grant of the host */
    bool runs = r->phase == MXC_PHASE_NONE || r->phase == MXC_PHASE_EXEC;
    if (runs && r->cwd && strcmp(r->cwd, "/") != 0 && mxc_policy_check_path("process.cwd", r->cwd, e) < 0)
        return -1;
    return 0;
}

/* The features f of the matrix, judged on surface s: the first one rejected there refused. */
static int judge(const bool *f, mxc_surface s, mxc_phase phase, mxc_error *e)
{
    for (int i = 0; i < MXC_F__COUNT; i++) {
        const mxc_matrix_row *row = &MXC_MATRIX[i];
        if (f[row->feature] && row->disp[s] == MXC_DISP_REJECTED)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s is rejected on %s: %s", row->field,
                           s == MXC_SURF_ONESHOT ? "the one-shot surface" : mxc_phase_name(phase), row->why);
    }
    return 0;
}

/* src/net: the connectivity model the network asks for, or why it cannot be delivered (the path named) */
static int net_model_check(const mxc_net_section *s, mxc_error *e)
{
    mxc_net_policy np;
    if (mxc_net_ops_get()->lower(s, &np, e) < 0)
        return -1;
    mxc_net_policy_free(&np);
    return 0;
}

int mxc_policy_validate_network(const mxc_request *r, const mxc_net_section *s, mxc_error *e)
{
    bool f[MXC_F__COUNT] = {0};
    collect_network(r, f);
    return judge(f, MXC_SURF_ONESHOT, MXC_PHASE_NONE, e) < 0 ? -1 : net_model_check(s, e);
}

static int validate(const mxc_request *r, mxc_error *e)
{
    bool f[MXC_F__COUNT] = {0};
    collect(r, f);
    mxc_surface s = mxc_surface_of(r);
    if (judge(f, s, r->phase, e) < 0)
        return -1;
    if (s == MXC_SURF_ONESHOT || s == MXC_SURF_PROVISION) {
        mxc_net_section sec;
        mxc_request_net_section(r, &sec);
        int checked = net_model_check(&sec, e);
        mxc_net_section_free(&sec);
        if (checked < 0)
            return -1;
    }
    if (s == MXC_SURF_PROVISION && r->has_app_id) {
        if (!r->app_id)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "appId must be a string");
        if (mxc_app_id_validate(r->app_id, r->app_id_len, e) < 0)
            return -1;
    }
    if (s == MXC_SURF_ONESHOT || s == MXC_SURF_PROVISION || s == MXC_SURF_EXEC)
        return check_paths(r, e);
    return 0;
}

int mxc_policy_validate(const mxc_request *r, mxc_error *e)
{
    if (validate(r, e) == 0)
        return 0;
    if (r->phase == MXC_PHASE_NONE) /* one-shot has no typed policy code */
        e->code = MXC_E_BACKEND_ERROR;
    return -1;
}

void mxc_policy_print_matrix_markdown(FILE *out)
{
    fprintf(out, "| field | one-shot | provision | start | exec | stop | deprovision |\n");
    fprintf(out, "|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < MXC_F__COUNT; i++) {
        fprintf(out, "| %s |", MXC_MATRIX[i].field);
        for (int s = 0; s < MXC_SURF__COUNT; s++)
            fprintf(out, " %s |", mxc_disposition_name(MXC_MATRIX[i].disp[s]));
        fprintf(out, "\n");
    }
}
