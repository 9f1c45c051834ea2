/* cmd_kill.c — `kill [--all] ID [SIGNAL]` (SIGTERM unless named). */
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_kill(oci_cli *cli, mxc_error *e)
{
    bool all = false;
    const char *id;
    if (oci_cli_switch_id(cli, "all", 'a', &all, &id, e) < 0)
        return -1;
    const char *s = cli->i + 1 < cli->argc ? cli->argv[cli->i + 1] : "SIGTERM";
    int sig = oci_signal(s);
    if (sig < 0)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "unknown signal \"%s\"", s);
    return oci_kill(cli->rootfd, id, sig, all, e) < 0 ? -1 : 0;
}
