/* cmd_spec.c — `spec [--bundle DIR]`: a default config.json written into the bundle
 * (never over one that exists, never through a link at its name). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "fdio.h"
#include "lifecycle.h"

int oci_cmd_spec(oci_cli *cli, mxc_error *e)
{
    const char *bundle = ".", *rl = NULL;
    bool rless = false;
    oci_flag fl[] = {{"bundle", 'b', true, &bundle, NULL, NULL, NULL}, {"rootless", 0, false, &rl, &rless, NULL, NULL}};
    if ((cli->i = oci_parse_flags(cli->argc, cli->argv, cli->i, fl, 2, cli->name, e)) < 0)
        return -1;
    if (rless)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "spec --rootless: mxc-oci runs as root for now");
    int d = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = d < 0 ? -1 : openat(d, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (d >= 0)
        close(d);
    if (fd < 0)
        return errno == EEXIST
                   ? mxc_err(e, MXC_E_MALFORMED_REQUEST, "File config.json exists. Remove it first.")
                   : mxc_err(e, MXC_E_BACKEND_ERROR, "cannot write %s/config.json: %s", bundle, strerror(errno));
    json_t *j = oci_spec();
    int rc = mxc_json_dumpfd(j, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    close(fd);
    json_decref(j);
    return rc < 0 ? mxc_err(e, MXC_E_BACKEND_ERROR, "cannot write config.json") : 0;
}
