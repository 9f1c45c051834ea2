/* cmd_create.c — `create` and `run` (they share their flags; run's three more:
 * --detach, --keep, --no-subreaper), over lifecycle.h's oci_create / oci_run. */
#include "cmds.h"
#include "lifecycle.h"

static int create_or_run(oci_cli *cli, bool run, mxc_error *e)
{
    const char *bundle = ".", *pid_file = NULL, *console = NULL, *preserve = NULL, *id = NULL;
    bool no_pivot = false, no_keyring = false, detach = false, keep = false, no_subreaper = false;
    oci_flag fl[] = {
        {"bundle", 'b', true, &bundle, NULL, NULL, NULL}, {"pid-file", 0, true, &pid_file, NULL, NULL, NULL},
        {"console-socket", 0, true, &console, NULL, NULL, NULL},
        {"preserve-fds", 0, true, &preserve, NULL, NULL, NULL},
        {"no-pivot", 0, false, NULL, &no_pivot, NULL, NULL},
        {"no-new-keyring", 0, false, NULL, &no_keyring, NULL, NULL},
        {"detach", 'd', false, NULL, &detach, NULL, NULL}, {"keep", 0, false, NULL, &keep, NULL, NULL},
        {"no-subreaper", 0, false, NULL, &no_subreaper, NULL, NULL},
    };
    /* no_pivot: pivot_root always (stricter); no_new_keyring: no keyring is ever made (keyctl is refused) */
    if (oci_cli_flags_id(cli, fl, run ? 9 : 6, &id, e) < 0)
        return -1;
    if (cli->systemd) /* runc's wording; systemd is not what manages cgroups on this host (see docs/oci.md) */
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                       "systemd cgroup flag passed, but systemd support for managing cgroups is not available");
    if (preserve && oci_count_of(preserve) < 0)
        return oci_bad_count(preserve, e);
    int n = oci_count_of(preserve), status;
    if (!run)
        return oci_create(cli->rootfd, id, bundle, pid_file, console, n, cli->cgroup, false, NULL, NULL, e) < 0
                   ? -1 : 0;
    return oci_run(cli->rootfd, id, bundle, pid_file, console, n, cli->cgroup, detach, keep, &status, e) < 0 ? -1
                                                                                                             : status;
}

int oci_cmd_create(oci_cli *cli, mxc_error *e)
{
    return create_or_run(cli, false, e);
}

int oci_cmd_run(oci_cli *cli, mxc_error *e)
{
    return create_or_run(cli, true, e);
}
