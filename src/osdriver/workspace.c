/* workspace.c — see workspace.h. */
#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "dirtree.h"
#include "spec.h"

/* STATE/workspaces, made when absent; -1 with *e. */
static int root(const osd_store *st, mxc_error *e)
{
    if (mkdirat(st->dirfd, "workspaces", 0700) < 0 && errno != EEXIST)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "workspace.mkdir", errno, NULL, "cannot make the workspaces directory");
    int fd = openat(st->dirfd, "workspaces", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        if (fd >= 0)
            close(fd);
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "the workspaces directory is not this user's own (mode 0700)");
    }
    return fd;
}

int osd_ws_ensure(const osd_store *st, const char *name, mxc_error *e)
{
    if (!osd_id_is_valid(name))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "workspace is %s", name[0] ? "malformed" : "empty");
    _cleanup_fd_ int fd = root(st, e);
    if (fd < 0)
        return -1;
    if (mkdirat(fd, name, 0700) < 0 && errno != EEXIST)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "workspace.mkdir", errno, NULL, "cannot make workspace %s", name);
    struct stat sb;
    if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "workspace %s is not a directory of the driver's", name);
    return 0;
}

int osd_ws_delete(const osd_store *st, const char *name, mxc_error *e)
{
    if (!osd_id_is_valid(name))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "workspace is %s", name[0] ? "malformed" : "empty");
    pb_sandbox **list;
    size_t n;
    if (osd_store_list(st, &list, &n, false, e) < 0)
        return -1;
    const char *user = NULL;
    for (size_t i = 0; i < n && !user; i++)
        if (!strcmp(list[i]->workspace, name))
            user = list[i]->id;
    int rc = user ? mxc_err(e, MXC_E_UNSUPPORTED_PHASE, "workspace %s still has sandbox %s: delete its sandboxes first",
                            name, user)
                  : 0;
    osd_store_free(list, n);
    if (rc < 0)
        return -1;
    _cleanup_fd_ int fd = root(st, e);
    if (fd < 0)
        return -1;
    int r = mxc_remove_tree_at(fd, name);
    return r < 0 ? mxc_err_os(e, MXC_E_BACKEND_ERROR, "workspace.remove", -r, NULL, "cannot remove workspace %s", name)
                 : 0;
}
