/* cmd_features.c — `features` (what this runtime supports, runc's document) and the
 * commands mxc-oci names but does not do yet (checkpoint, restore). */
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_features(oci_cli *cli, mxc_error *e)
{
    (void)cli, (void)e;
    json_t *j = oci_features();
    oci_print_json(j);
    json_decref(j);
    return 0;
}

int oci_cmd_later(oci_cli *cli, mxc_error *e)
{
    return mxc_err(e, MXC_E_UNSUPPORTED_PHASE, "%s is not supported by mxc-oci yet", cli->name);
}
