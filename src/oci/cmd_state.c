/* cmd_state.c — `state ID`: the container's state document, printed as runc prints it. */
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_state(oci_cli *cli, mxc_error *e)
{
    const char *id;
    if (oci_cli_flags_id(cli, NULL, 0, &id, e) < 0)
        return -1;
    json_t *j = oci_query(cli->rootfd, id, e);
    if (!j)
        return -1;
    oci_print_json(j);
    json_decref(j);
    return 0;
}
