/* cmd_spec.c — `spec [--bundle DIR]`: a default config.json written into the bundle
 * (never over one that exists, never through a link at its name). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "fdio.h"
#include "lifecycle.h"

/* The template as a rootless container can run it: the /sys/fs/cgroup mount and linux.resources
 * dropped (runc's spec --rootless drops the resources too). */
static void spec_rootless(json_t *j)
{
    json_t *mounts = json_object_get(j, "mounts");
    for (size_t i = json_array_size(mounts); i-- > 0;) {
        const char *t = json_string_value(json_object_get(json_array_get(mounts, i), "type"));
        if (t && !strcmp(t, "cgroup"))
            json_array_remove(mounts, i);
    }
    json_object_del(json_object_get(j, "linux"), "resources");
}

int oci_cmd_spec(oci_cli *cli, mxc_error *e)
{
    const char *bundle = ".", *rl = NULL;
    bool rless = false;
    oci_flag fl[] = {{"bundle", 'b', true, &bundle, NULL, NULL, NULL}, {"rootless", 0, false, &rl, &rless, NULL, NULL}};
    if ((cli->i = oci_parse_flags(cli->argc, cli->argv, cli->i, fl, 2, cli->name, e)) < 0)
        return -1;
    int d = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = d < 0 ? -1 : openat(d, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (d >= 0)
        close(d);
    if (fd < 0)
        return errno == EEXIST
                   ? mxc_err(e, MXC_E_MALFORMED_REQUEST, "File config.json exists. Remove it first.")
                   : mxc_err(e, MXC_E_BACKEND_ERROR, "cannot write %s/config.json: %s", bundle, strerror(errno));
    json_t *j = oci_spec();
    if (rless) /* rootless (rootless.h): no cgroup of its own here, so no cgroup mount and no limits */
        spec_rootless(j);
    int rc = mxc_json_dumpfd(j, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    close(fd);
    json_decref(j);
    return rc < 0 ? mxc_err(e, MXC_E_BACKEND_ERROR, "cannot write config.json") : 0;
}
