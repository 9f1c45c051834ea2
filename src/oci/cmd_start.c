/* cmd_start.c — `start ID`: the container's process let run (lifecycle.h's oci_start). */
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_start(oci_cli *cli, mxc_error *e)
{
    const char *id;
    if (oci_cli_flags_id(cli, NULL, 0, &id, e) < 0)
        return -1;
    return oci_start(cli->rootfd, id, e) < 0 ? -1 : 0;
}
