/* cmd_pause.c — `pause ID` and `resume ID`: the container's cgroup frozen or thawed (cgroup.h). */
#include <string.h>

#include "cgroup.h"
#include "cmds.h"

int oci_cmd_pause(oci_cli *cli, mxc_error *e)
{
    const char *id;
    if (oci_cli_flags_id(cli, NULL, 0, &id, e) < 0)
        return -1;
    return oci_pause(cli->rootfd, id, !strcmp(cli->name, "pause"), e) < 0 ? -1 : 0;
}
