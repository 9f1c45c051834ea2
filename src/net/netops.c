/* netops.c — see net.h: the engine's table, and this host's own destinations behind a handle. */
#include "net.h"

#include <errno.h>
#include <stdlib.h>

#include "governed.h"
#include "netpolicy.h"
#include "netpool.h"
#include "resolver.h"
#include "stack.h"
#include "thishost.h"

struct mxc_net_own {
    mxc_thishost v4;
};

mxc_net_own *mxc_net_own_read(int *err)
{
    mxc_net_own *own = calloc(1, sizeof *own);
    int rc = own ? mxc_thishost_read(&own->v4) : -ENOMEM;
    if (rc < 0) {
        mxc_net_own_free(own);
        *err = rc;
        return NULL;
    }
    return own;
}

bool mxc_net_own_has(const mxc_net_own *own, uint32_t addr)
{
    return own && mxc_thishost_has(&own->v4, addr);
}

void mxc_net_own_free(mxc_net_own *own)
{
    if (own) {
        mxc_thishost_free(&own->v4);
        free(own);
    }
}

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
    .pool_claim = mxc_netpool_claim,
    .pool_refill = mxc_netpool_refill,
    .pool_sweep = mxc_netpool_sweep,
    .pool_release = mxc_netpool_release,
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
