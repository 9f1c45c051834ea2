/* cmd_delete.c — `delete [--force] ID`. */
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_delete(oci_cli *cli, mxc_error *e)
{
    bool force = false;
    const char *id;
    oci_flag fl[] = {{"force", 'f', false, NULL, &force, NULL, NULL}};
    if (oci_cli_flags_id(cli, fl, 1, &id, e) < 0)
        return -1;
    return oci_delete(cli->rootfd, id, force, e) < 0 ? -1 : 0;
}
