/* cmd_delete.c — `delete [--force] ID`. */
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_delete(oci_cli *cli, mxc_error *e)
{
    bool force = false;
    const char *id;
    return oci_cli_switch_id(cli, "force", 'f', &force, &id, e) < 0 || oci_delete(cli->rootfd, id, force, e) < 0
               ? -1
               : 0;
}
