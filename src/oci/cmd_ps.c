/* cmd_ps.c — `ps [--format table|json] ID [ps(1) options]`: the container's processes (pstable.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "lifecycle.h"
#include "pstable.h"

int oci_cmd_ps(oci_cli *cli, mxc_error *e)
{
    const char *format = "table", *id;
    oci_flag fl[] = {{"format", 'f', true, &format, NULL, NULL, NULL}};
    if (oci_cli_flags_id(cli, fl, 1, &id, e) < 0)
        return -1;
    if (strcmp(format, "table") && strcmp(format, "json"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "invalid format option");
    if (cli->i + 1 < cli->argc && strcmp(format, "table"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "ps: options for ps(1) go with --format table");
    json_t *l = oci_ps(cli->rootfd, id, e);
    if (!l)
        return -1;
    int rc = 0;
    if (!strcmp(format, "json")) {
        char *t = json_dumps(l, JSON_COMPACT);
        printf("%s\n", t ? t : "[]");
        free(t);
    } else if (oci_ps_table(l, cli->argv + cli->i + 1, (size_t)(cli->argc - cli->i - 1), e) < 0)
        rc = -1;
    json_decref(l);
    return rc;
}
