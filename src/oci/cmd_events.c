/* cmd_events.c — `events [--stats] [--interval D] ID` (events.h). */
#include "cmds.h"
#include "events.h"

int oci_cmd_events(oci_cli *cli, mxc_error *e)
{
    bool stats = false;
    const char *interval = "5s", *id;
    oci_flag fl[] = {{"stats", 0, false, NULL, &stats, NULL, NULL}, {"interval", 0, true, &interval, NULL, NULL, NULL}};
    if (oci_cli_flags_id(cli, fl, 2, &id, e) < 0)
        return -1;
    long ms = oci_duration_ms(interval);
    if (ms <= 0)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "events: invalid --interval %s", interval);
    return oci_events(cli->rootfd, id, stats, ms, e) < 0 ? -1 : 0;
}
