/* netops.c — see net.h. */
#include "net.h"

#include "governed.h"
#include "netpolicy.h"
#include "resolver.h"
#include "stack.h"

static char *rules_now(const mxc_net_policy *np, int *err)
{
    return mxc_net_rules_now(np, NULL, err);
}

static const mxc_net_ops OPS = {
    .lower = mxc_net_policy_build,
    .require = mxc_net_require,
    .credential = mxc_governed_credential,
    .workload_env = mxc_governed_workload_env,
    .resolve = mxc_resolver_plan,
    .needs_stack = mxc_net_needs_stack,
    .after_maps = mxc_net_after_maps,
    .attach = mxc_net_attach,
    .remove_ca = mxc_governed_remove_ca,
    .rules_now = rules_now,
    .probe = mxc_net_probe,
};

void mxc_net_install(void)
{
    mxc_net_ops_set(&OPS);
}

/* a library that carries this object (libmxc.so, linked whole) has the network at load, so that
 * its in-process callers need no call of their own */
__attribute__((constructor)) static void install_at_load(void)
{
    mxc_net_install();
}
