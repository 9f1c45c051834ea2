/* test_front.c — src/lib/iface/front.h, the engine interface of the fronts, against the module
 * headers it repeats: this file includes it with every one of them, so a prototype, a macro or
 * a type there that drifts from its module's fails the build (conflicting types, a macro
 * redefined).  Running it checks that the functions it lists are the engine's (it links each). */
#include "front.h"

#include "cgroup.h"
#include "exec.h"
#include "fresh.h"
#include "harden.h"
#include "hostpath.h"
#include "idrange.h"
#include "inventory.h"
#include "netplan.h"
#include "oneshot.h"
#include "plan.h"
#include "registry.h"
#include "request.h"
#include "run_v1.h"
#include "sandbox_id.h"
#include "session.h"
#include "state.h"
#include "termfilter.h"
#include "validate.h"

#include <stdio.h>

int main(void)
{
    /* every function front.h declares, by address: each must link from the engine's archives */
    const void *fns[] = {
        (const void *)mxc_validate, (const void *)mxc_sandbox_id_encode, (const void *)mxc_agent_name_is_safe,
        (const void *)mxc_b64std_decode, (const void *)mxc_debugf, (const void *)mxc_hostpath_resolve,
        (const void *)mxc_utf8_next, (const void *)mxc_net_section_parse, (const void *)mxc_net_section_free,
        (const void *)mxc_net_plan_build, (const void *)mxc_net_plan_env, (const void *)mxc_net_ops_get,
        (const void *)mxc_net_policy_free,
        (const void *)mxc_hostpath_open_log, (const void *)mxc_hostpath_open_read,
        (const void *)mxc_hostpath_check_grant, (const void *)mxc_hostpath_check_grant_against,
        (const void *)mxc_open_own_dir, (const void *)mxc_private_dir, (const void *)mxc_label_is_valid,
        (const void *)mxc_spawn_fresh, (const void *)mxc_session_phase_fresh,
        (const void *)mxc_oneshot_fresh, (const void *)mxc_backends_json, (const void *)mxc_termfilter_init,
        (const void *)mxc_termfilter_run, (const void *)mxc_landlock_abi, (const void *)mxc_seccomp_apply,
        (const void *)mxc_close_all_but, (const void *)mxc_reset_signals, (const void *)mxc_cgroup_v2_root,
        (const void *)mxc_cgroup_clone, (const void *)mxc_registry_range, (const void *)mxc_idrange_region,
        (const void *)mxc_idrange_claim, (const void *)mxc_idrange_host_use, (const void *)mxc_idrange_release,
        (const void *)mxc_idrange_release_dead, (const void *)mxc_idrange_release_owned,
        (const void *)mxc_idrange_set_cgroups, (const void *)mxc_idrange_set_owner, (const void *)mxc_idrange_join,
        (const void *)mxc_idrange_claim_at,
        /* the handles (libmxc_ffi's): a request, a one-shot, a started workload */
        (const void *)mxc_request_new, (const void *)mxc_request_delete, (const void *)mxc_request_parse,
        (const void *)mxc_request_is_v1, (const void *)mxc_request_is_exec, (const void *)mxc_request_in_session,
        (const void *)mxc_request_contract, (const void *)mxc_request_json, (const void *)mxc_request_set_pty_size,
        (const void *)mxc_request_policy_json, (const void *)mxc_session_phase, (const void *)mxc_session_exec_start,
        (const void *)mxc_oneshot_new, (const void *)mxc_oneshot_start, (const void *)mxc_oneshot_finish,
        (const void *)mxc_oneshot_delete, (const void *)mxc_oneshot_proc, (const void *)mxc_oneshot_pid1,
        (const void *)mxc_proc_new, (const void *)mxc_proc_delete, (const void *)mxc_exec_run,
        (const void *)mxc_exec_kill, (const void *)mxc_exec_close, (const void *)mxc_proc_workload,
        (const void *)mxc_proc_take_stdio, (const void *)mxc_proc_terminal, (const void *)mxc_proc_exit_code,
        (const void *)mxc_proc_timed_out, (const void *)mxc_exec_killer_take, (const void *)mxc_exec_killer_fire,
        (const void *)mxc_exec_killer_drop,
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!fns[i]) {
            fprintf(stderr, "test_front: function %zu of front.h is NULL\n", i);
            return 1;
        }
    printf("test_front: %zu functions of front.h agree with their modules\n", sizeof fns / sizeof fns[0]);
    return mxc_debug_fd < 0;
}
