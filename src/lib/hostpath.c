/* hostpath.c — see hostpath.h. */
#include "hostpath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "netplan.h"
#include "registry.h"
#include "state.h"
#include "wroots.h"

static int dup_fd(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* A refusal of mxc_hostpath_resolve: *e says what (the message as it has
 * always read, no errno text appended; native err); returns -err. */
static int refuse(mxc_error *e, mxc_code c, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(mxc_error *e, mxc_code c, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mxc_verr(e, c, fmt, ap);
    va_end(ap);
    if (e)
        e->native = err;
    return -err;
}

/* A system call of mxc_hostpath_resolve failed with err: *e names path
 * (the errno's text is the caller's to add, as for every refusal). */
static int failed(mxc_error *e, int err, const char *path)
{
    return refuse(e, MXC_E_BACKEND_ERROR, err, "cannot resolve %.200s", path);
}

int mxc_hostpath_resolve(const mxc_hostpath_rules *rv, const char *path, bool follow_final, char *out, size_t outsz,
                         int *fd, int *dir, mxc_error *e)
{
    char rest[8192];
    int links = 0;
    snprintf(rest, sizeof rest, "%s", path);
    *fd = *dir = -1;
    int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return failed(e, errno, path);
    snprintf(out, outsz, "/");
    char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char comp[256];
        size_t len = strcspn(p, "/");
        if (len >= sizeof comp) {
            close(cur);
            return refuse(e, MXC_E_POLICY_VALIDATION, ENAMETOOLONG, "a component of %.200s is too long", path);
        }
        memcpy(comp, p, len);
        comp[len] = '\0';
        p += len;
        while (*p == '/')
            p++;
        bool final = !*p;
        if (!strcmp(comp, "."))
            continue;
        size_t olen = strlen(out);
        if (!strcmp(comp, "..")) { /* only ever from a symlink's target: policy paths are normalised */
            int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (up < 0) {
                int err = errno;
                close(cur);
                return failed(e, err, path);
            }
            close(cur);
            cur = up;
            char *slash = strrchr(out, '/');
            if (slash && slash != out)
                *slash = '\0';
            else
                snprintf(out, outsz, "/");
            continue;
        }
        int nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0) {
            int err = errno;
            snprintf(out + olen, outsz - olen, "%s%s%s%s", olen > 1 ? "/" : "", comp, *p ? "/" : "", p);
            if (err == ENOENT) {
                *dir = cur;
                return -ENOENT;
            }
            close(cur);
            return refuse(e, MXC_E_BACKEND_ERROR, err, "cannot open %.200s", out);
        }
        struct stat st;
        struct statfs sf;
        if (fstat(nfd, &st) < 0 || fstatfs(nfd, &sf) < 0) {
            int err = errno;
            close(nfd), close(cur);
            return failed(e, err, path);
        }
        if (sf.f_type == PROC_SUPER_MAGIC) {
            close(nfd), close(cur);
            return refuse(e, MXC_E_POLICY_VALIDATION, EINVAL,
                          "%.200s lies in /proc: the sandbox has its own /proc, which no grant reaches", path);
        }
        if (S_ISLNK(st.st_mode) && (!final || follow_final)) {
            char target[4096];
            ssize_t n = readlinkat(nfd, "", target, sizeof target - 1);
            int err = errno;
            close(nfd);
            if (n < 0 || ++links > 40 || n == 0) {
                close(cur);
                return refuse(e, MXC_E_POLICY_VALIDATION, n < 0 ? err : ELOOP,
                              "%.200s: too many symlinks, or one that cannot be read", path);
            }
            target[n] = '\0';
            if (mxc_registry_inside_writable(cur, rv->own, rv->nown, rv->claims)) {
                close(cur);
                return refuse(e, MXC_E_POLICY_VALIDATION, ELOOP,
                              "%.200s goes through the symlink %.150s%s%.100s, which lies in a directory that this "
                              "or another live sandbox can write", path, out, olen > 1 ? "/" : "", comp);
            }
            if (rv->on_link) {
                char at[4200];
                snprintf(at, sizeof at, "%s%s%s", out, olen > 1 ? "/" : "", comp);
                rv->on_link(rv->ctx, at, target);
            }
            char next[8192];
            snprintf(next, sizeof next, "%s/%s", target, p);
            snprintf(rest, sizeof rest, "%s", next);
            p = rest;
            if (target[0] == '/') {
                close(cur);
                if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                    return failed(e, errno, path);
                snprintf(out, outsz, "/");
            }
            continue;
        }
        if (!final && !S_ISDIR(st.st_mode)) {
            close(nfd), close(cur);
            return refuse(e, MXC_E_POLICY_VALIDATION, ENOTDIR, "%.200s: a component is not a directory", path);
        }
        snprintf(out + olen, outsz - olen, "%s%s", olen > 1 ? "/" : "", comp);
        if (final) {
            *fd = nfd;
            *dir = cur;
            return 0;
        }
        close(cur);
        cur = nfd;
    }
    /* the path was "/" (or resolved to it) */
    *fd = cur;
    *dir = dup_fd(cur);
    return 0;
}


/* The directory of path, resolved by the rules with every live sandbox's
 * writable area counting; name points into path. */
/* path made absolute against the cwd (getcwd gives the physical path: no
 * link in it) into abs, and its last component in *name (pointing into
 * path); -EISDIR when path names no file. */
static int absolute_and_name(const char *path, char *abs, size_t abssz, const char **name)
{
    if (path[0] == '/') {
        snprintf(abs, abssz, "%s", path);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            return -errno;
        snprintf(abs, abssz, "%s/%s", cwd, path);
    }
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    if (!**name || !strcmp(*name, ".") || !strcmp(*name, ".."))
        return -EISDIR;
    return 0;
}

static int parent_of(const char *path, const char **name, mxc_error *why)
{
    char abs[4200];
    int arc = absolute_and_name(path, abs, sizeof abs, name);
    if (arc < 0)
        return arc;
    char *aslash = strrchr(abs, '/');
    char parent[4200];
    snprintf(parent, sizeof parent, "%.*s", aslash == abs ? 1 : (int)(aslash - abs), abs);
    mxc_hostpath_rules rules = {.claims = true};
    char out[4200];
    int fd, dir;
    int rc = mxc_hostpath_resolve(&rules, parent, true, out, sizeof out, &fd, &dir, why);
    if (dir >= 0)
        close(dir);
    return rc < 0 ? rc : fd;
}

static int open_in(int dir, const char *name, int flags, const char *path, const char *what, const char *op,
                   mxc_error *e)
{
    int fd = openat(dir, name, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    int err = errno;
    close(dir);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, op, err, NULL, "cannot open %s %.200s%s", what, path,
                          err == ELOOP ? " (it is a symlink)" : "");
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, op, EINVAL, NULL, "%s %.200s is not a regular file",
                          what, path);
    }
    return fd;
}

/* The directory of a log path, walked one component at a time from "/"
 * with no symlink followed anywhere (O_PATH|O_NOFOLLOW, each component
 * checked): whether a link was planted by a sandbox that has since ended,
 * or by one whose grants are claimed only after the log is opened, cannot
 * be told from the live claims, so no link is taken at all.  Returns an
 * O_PATH fd of the directory; -errno with *why set otherwise. */
static int log_parent(const char *path, const char **name, mxc_error *why)
{
    char abs[4200];
    int arc = absolute_and_name(path, abs, sizeof abs, name);
    if (arc < 0)
        return arc;
    *strrchr(abs, '/') = '\0';
    int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return -errno;
    char walked[4200] = "";
    for (char *p = abs, *comp; cur >= 0 && (comp = strsep(&p, "/"));) {
        if (!*comp || !strcmp(comp, "."))
            continue;
        size_t wl = strlen(walked);
        snprintf(walked + wl, sizeof walked - wl, "/%s", comp);
        int nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        close(cur);
        cur = -1;
        struct stat st;
        struct statfs sf;
        if (nfd < 0 || fstat(nfd, &st) < 0 || fstatfs(nfd, &sf) < 0) {
            err = nfd < 0 ? err : errno;
            if (nfd >= 0)
                close(nfd);
            return refuse(why, MXC_E_BACKEND_ERROR, err, "cannot open its directory %.200s: %s", walked, strerror(err));
        }
        if (S_ISLNK(st.st_mode)) {
            close(nfd);
            return refuse(why, MXC_E_POLICY_VALIDATION, ELOOP, "%.200s is a symlink: no component of a log path may "
                          "be a symlink (one could have been planted by a sandbox)", walked);
        }
        if (!S_ISDIR(st.st_mode)) {
            close(nfd);
            return refuse(why, MXC_E_POLICY_VALIDATION, ENOTDIR, "%.200s is not a directory", walked);
        }
        if (sf.f_type == PROC_SUPER_MAGIC) {
            close(nfd);
            return refuse(why, MXC_E_POLICY_VALIDATION, EINVAL, "%.200s lies in /proc", walked);
        }
        cur = nfd;
    }
    return cur;
}

int mxc_hostpath_open_log(const char *path, mxc_error *e)
{
    const char *name;
    mxc_error why = {0};
    int dir = path ? log_parent(path, &name, &why) : -EINVAL;
    if (dir < 0) {
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "log.open", -dir, NULL, "cannot use --log-file %.200s: %s",
                   path ? path : "", why.message[0] ? why.message : "its directory cannot be resolved");
        mxc_err_set_remediation(e, -dir == ELOOP ? "give --log-file as a path with no symlink in it (its physical "
                                                  "path, e.g. from realpath), outside every sandbox's grants"
                                                : "give --log-file in an existing directory");
        return -1;
    }
    if (mxc_registry_inside_writable(dir, NULL, 0, true)) {
        close(dir);
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "log.open", EACCES, NULL,
                   "--log-file %.200s lies inside a directory that a live sandbox can write", path);
        mxc_err_set_remediation(e, "write the log outside every sandbox's workspace and read-write grants");
        return -1;
    }
    int fd = open_in(dir, name, O_WRONLY | O_CREAT | O_APPEND, path, "--log-file", "log.open", e);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_nlink > 1) { /* a hard link a sandbox made to another file */
        close(fd);
        mxc_err_os(e, MXC_E_BACKEND_ERROR, "log.open", EMLINK, NULL,
                   "--log-file %.200s has %lu hard links: it may be another file under a planted name", path,
                   (unsigned long)st.st_nlink);
        mxc_err_set_remediation(e, "give --log-file a file of its own (one link), or a new name");
        return -1;
    }
    return fd;
}

int mxc_hostpath_open_read(const char *path, mxc_error *e)
{
    const char *name;
    mxc_error why = {0};
    int dir = parent_of(path, &name, &why);
    if (dir < 0)
        return mxc_err_os(e, MXC_E_MALFORMED_REQUEST, "hostpath.open", -dir, NULL, "cannot read %.200s: %s", path,
                          why.message[0] ? why.message : "its directory cannot be resolved");
    return open_in(dir, name, O_RDONLY, path, "the request file", "hostpath.open", e);
}

/* Whether the object of fd is dir or lies below it, by walking up from fd
 * ("..", device and inode compared: no path string is trusted). */
static bool at_or_below(int fd, const struct stat *dir)
{
    int cur = dup_fd(fd);
    for (int depth = 0; cur >= 0 && depth < 4096; depth++) {
        struct stat st, up;
        if (fstat(cur, &st) < 0)
            break;
        if (st.st_dev == dir->st_dev && st.st_ino == dir->st_ino) {
            close(cur);
            return true;
        }
        int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0 || fstat(parent, &up) < 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
            if (parent >= 0)
                close(parent);
            break;
        }
        close(cur);
        cur = parent;
    }
    if (cur >= 0)
        close(cur);
    return false;
}

int mxc_hostpath_check_grant_against(const char *path, const char *what, const mxc_hostpath_owned *own, size_t nown,
                                     const char *remedy, mxc_error *e)
{
    int g = open(path, O_PATH | O_CLOEXEC); /* as the grant will be reached: links followed */
    if (g < 0)
        return 0; /* nothing there to cover (fsview says what it makes of a missing path) */
    struct stat gst;
    int rc = fstat(g, &gst);
    for (size_t i = 0; rc == 0 && i < nown; i++) {
        if (!own[i].path || !own[i].path[0])
            continue;
        int o = open(own[i].path, O_PATH | O_CLOEXEC);
        struct stat ost;
        if (o < 0 || fstat(o, &ost) < 0) {
            if (o >= 0)
                close(o);
            continue;
        }
        bool covers, inside;
        if (S_ISDIR(ost.st_mode)) {
            covers = at_or_below(o, &gst);
            inside = own[i].inside_too && at_or_below(g, &ost);
        } else { /* a file (a socket, a key): the grant is it, or a directory above it */
            inside = gst.st_dev == ost.st_dev && gst.st_ino == ost.st_ino;
            char parent[4096];
            snprintf(parent, sizeof parent, "%s", own[i].path);
            char *slash = strrchr(parent, '/');
            if (slash)
                *(slash == parent ? slash + 1 : slash) = '\0';
            int p = slash ? open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
            covers = inside || (p >= 0 && at_or_below(p, &gst));
            if (p >= 0)
                close(p);
        }
        close(o);
        if (covers || inside) {
            close(g);
            mxc_err(e, MXC_E_POLICY_VALIDATION, "the %s grant %.200s %s %s (%.200s): a sandbox must not reach "
                    "the state of mxc and of other sandboxes", what, path, covers ? "covers" : "lies inside",
                    own[i].name, own[i].path);
            mxc_err_set_remediation(e, remedy);
            return -1;
        }
    }
    close(g);
    return 0;
}

bool mxc_hostpath_within(int obj, int parent, const char *root)
{
    int r = open(root, O_PATH | O_CLOEXEC);
    struct stat rst, ost;
    bool in = r >= 0 && fstat(r, &rst) == 0 && fstat(obj, &ost) == 0 &&
              ((ost.st_dev == rst.st_dev && ost.st_ino == rst.st_ino) ||
               (S_ISDIR(rst.st_mode) && at_or_below(S_ISDIR(ost.st_mode) ? obj : parent, &rst)));
    if (r >= 0)
        close(r);
    return in;
}

int mxc_hostpath_check_grant(const char *path, const char *what, mxc_error *e)
{
    char state[512] = "", claims[512] = "", ws[512] = "";
    const char *sd = getenv("MXC_STATE_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
    /* where state.c and registry.c put them (none is made here) */
    if (sd && sd[0] == '/')
        snprintf(state, sizeof state, "%s", sd);
    else if (geteuid() == 0)
        snprintf(state, sizeof state, "/run/mxc");
    else if (xdg && xdg[0] == '/')
        snprintf(state, sizeof state, "%s/mxc", xdg);
    if (mxc_claims_dir(false, claims, sizeof claims) < 0)
        claims[0] = '\0';
    char index[600] = "";
    if (mxc_wroots_path(index, sizeof index) < 0)
        index[0] = '\0';
    if (!mxc_workspace_root_path(ws, sizeof ws))
        ws[0] = '\0';
    const mxc_hostpath_owned own[] = {
        {state, "mxc's state root", true}, {claims, "mxc's claims directory", true},
        {index, "mxc's index of writable roots", true}, {ws, "the workspace root", false},
        {MXC_NETPOOL_DIR, "mxc's pool of network namespaces", true}};
    return mxc_hostpath_check_grant_against(path, what, own, sizeof own / sizeof own[0],
                                            "grant a directory that neither contains nor lies inside mxc's state "
                                            "root, claims directory, network namespace pool or workspace root "
                                            "(MXC_STATE_DIR, MXC_WORKSPACE_ROOT move them)", e);
}
