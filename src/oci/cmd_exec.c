/* cmd_exec.c — `exec [flags] ID [ARGS...]`: a process of its own in the container
 * (lifecycle.h's oci_exec).  runc's statuses: 255 when exec itself fails, else the process's. */
#include <stdlib.h>

#include "cleanup.h"
#include "cmds.h"
#include "lifecycle.h"

int oci_cmd_exec(oci_cli *cli, mxc_error *e)
{
    oci_exec_opts o = {0};
    const char *preserve = NULL, *label = NULL, *cgroup = NULL, *id;
    size_t room = (size_t)cli->argc + 1;
    _cleanup_free_ const char **env = calloc(room, sizeof *env);
    _cleanup_free_ const char **gids = calloc(room, sizeof *gids);
    _cleanup_free_ const char **caps = calloc(room, sizeof *caps);
    oci_flag fl[] = {
        {"process", 'p', true, &o.process_file, NULL, NULL, NULL}, {"cwd", 0, true, &o.cwd, NULL, NULL, NULL},
        {"user", 'u', true, &o.user, NULL, NULL, NULL}, {"pid-file", 0, true, &o.pid_file, NULL, NULL, NULL},
        {"env", 'e', true, NULL, NULL, env, &o.nenv}, {"additional-gids", 'g', true, NULL, NULL, gids, &o.ngids},
        {"cap", 'c', true, NULL, NULL, caps, &o.ncaps}, {"tty", 't', false, NULL, &o.tty, NULL, NULL},
        {"detach", 'd', false, NULL, &o.detach, NULL, NULL},
        {"no-new-privs", 0, false, NULL, &o.no_new_privs, NULL, NULL},
        {"console-socket", 0, true, &o.console, NULL, NULL, NULL},
        {"preserve-fds", 0, true, &preserve, NULL, NULL, NULL},
        {"process-label", 0, true, &label, NULL, NULL, NULL},
        {"apparmor", 0, true, &o.apparmor, NULL, NULL, NULL},
        {"cgroup", 0, true, &cgroup, NULL, NULL, NULL},
        {"ignore-paused", 0, false, NULL, &o.ignore_paused, NULL, NULL},
    };
    o.env = env, o.gids = gids, o.caps = caps;
    if (!env || !gids || !caps)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    if (oci_cli_flags_id(cli, fl, sizeof fl / sizeof fl[0], &id, e) < 0)
        return -1;
    if ((label && *label) || (cgroup && *cgroup))
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                       "exec --process-label/--cgroup are not supported by mxc-oci yet");
    if (preserve && oci_count_of(preserve) < 0)
        return oci_bad_count(preserve, e);
    o.preserve = oci_count_of(preserve);
    o.args = cli->argv + cli->i + 1;
    o.nargs = (size_t)(cli->argc - cli->i - 1);
    int status;
    cli->fail_status = 255;
    return oci_exec(cli->rootfd, id, &o, &status, e) < 0 ? -1 : status;
}
