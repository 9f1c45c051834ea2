/* store.c — see store.h. */
#include "store.h"
#include "rootless.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dirtree.h"
#include "fdio.h"
#include "procs.h"

#define STATE_FILE "state.json"

bool oci_valid_id(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > OCI_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
        return false;
    return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-.") == n;
}

const char *oci_status_name(oci_status s)
{
    return s == OCI_CREATED ? "created" : s == OCI_RUNNING ? "running" : "stopped";
}

void oci_now(char *out, size_t outsz)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, outsz, "%s.%09ldZ", day, ts.tv_nsec);
}

/* A directory of root's, 0700, never through a symlink. */
static int own_dir(int at, const char *name, bool make, mxc_error *e, const char *what)
{
    if (make && mkdirat(at, name, 0700) < 0 && errno != EEXIST)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.root", errno, NULL, "cannot make %s %s", what, name);
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.root", errno, NULL, "cannot open %s %s", what, name);
    return fd;
}

int oci_store_root(const char *root, mxc_error *e)
{
    if (!root || root[0] != '/')
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--root must be an absolute path");
    /* the parents (made 0711 when absent) are walked by descriptor too */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", root);
    int cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *save, *comp = strtok_r(path, "/", &save);
    while (cur >= 0 && comp) {
        char *next = strtok_r(NULL, "/", &save);
        if (!strcmp(comp, "..") || !strcmp(comp, ".")) {
            close(cur);
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--root %s: no . or .. components", root);
        }
        if (next && mkdirat(cur, comp, 0711) < 0 && errno != EEXIST) {
            int err = errno;
            close(cur);
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.root", err, NULL, "cannot make %s", comp);
        }
        int fd = next ? openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC) : own_dir(cur, comp, true, e, "the root");
        close(cur);
        if (fd < 0)
            return e->code ? -1 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.root", errno, NULL, "cannot open %s", root);
        cur = fd;
        comp = next;
    }
    struct stat st;
    /* made 0700; an existing one may be readable by others (runc accepts the 0755 of a
     * `mkdir -p`), never writable by them: each container's own directory is 0700 */
    if (cur < 0 || fstat(cur, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        if (cur >= 0)
            close(cur);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "--root %s is not a directory of this user's writable only by it",
                       root);
    }
    return cur;
}

int oci_store_make(int rootfd, const char *id, mxc_error *e)
{
    if (mkdirat(rootfd, id, 0700) < 0)
        return errno == EEXIST ? mxc_err(e, MXC_E_MALFORMED_ID, "container with id exists: %s", id)
                               : mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mkdir", errno, NULL, "cannot make the "
                                            "container's directory");
    return own_dir(rootfd, id, false, e, "the container directory");
}

int oci_store_open(int rootfd, const char *id, mxc_error *e)
{
    int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? mxc_err(e, MXC_E_STALE_ID, "container does not exist")
                               : mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.open", errno, NULL, "cannot open the "
                                            "container %s", id);
    return fd;
}

void oci_store_remove(int rootfd, const char *id)
{
    (void)mxc_remove_tree_at(rootfd, id);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

json_t *oci_store_ids(int rootfd)
{
    json_t *out = json_array();
    int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *de;
    while (out && d && (de = readdir(d))) {
        struct stat st;
        if (oci_valid_id(de->d_name) && fstatat(rootfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(st.st_mode))
            json_array_append_new(out, json_string(de->d_name));
    }
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    size_t n = out ? json_array_size(out) : 0;
    json_t **v = n ? malloc(n * sizeof *v) : NULL;
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_incref(json_array_get(out, i));
    if (v) {
        qsort(v, n, sizeof *v, by_name);
        json_array_clear(out);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(out, v[i]);
        free(v);
    }
    return out ? out : json_array();
}

json_t *oci_state_partial(const char *id)
{
    return json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s}", "ociVersion", OCI_SPEC_VERSION, "id", id, "pid",
                     (json_int_t)0, "status", "stopped", "bundle", "", "rootfs", "", "created", "", "owner", oci_rootless_owner());
}

int oci_state_write(int dirfd, const oci_state *s, mxc_error *e)
{
    json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s}", "ociVersion", s->oci_version, "id", s->id,
                          "pid", (json_int_t)s->pid, "start", (json_int_t)s->start, "bundle", s->bundle, "rootfs",
                          s->rootfs, "created", s->created, "claim", s->claim, "owner", oci_rootless_owner());
    if (j && s->annotations)
        json_object_set(j, "annotations", s->annotations);
    int rc = mxc_json_replace_at_unsynced(dirfd, STATE_FILE, NULL, j); /* what a crash ends: fdio.h */
    json_decref(j);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.state", -rc, NULL, "cannot write state.json");
    return 0;
}

int oci_state_read(int dirfd, const char *id, oci_state *s, mxc_error *e)
{
    memset(s, 0, sizeof *s);
    int fd = openat(dirfd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_t *j = fd >= 0 ? mxc_json_loadfd(fd, 0, NULL) : NULL;
    if (fd >= 0)
        close(fd);
    if (!j) /* not yet written (a create under way) or damaged */
        return mxc_err(e, MXC_E_STALE_ID, "container does not exist");
    snprintf(s->id, sizeof s->id, "%s", id);
    s->pid = (pid_t)json_integer_value(json_object_get(j, "pid"));
    s->start = (unsigned long long)json_integer_value(json_object_get(j, "start"));
    snprintf(s->bundle, sizeof s->bundle, "%s", json_string_value(json_object_get(j, "bundle")) ?: "");
    snprintf(s->rootfs, sizeof s->rootfs, "%s", json_string_value(json_object_get(j, "rootfs")) ?: "");
    snprintf(s->created, sizeof s->created, "%s", json_string_value(json_object_get(j, "created")) ?: "");
    snprintf(s->claim, sizeof s->claim, "%s", json_string_value(json_object_get(j, "claim")) ?: "");
    snprintf(s->oci_version, sizeof s->oci_version, "%s", json_string_value(json_object_get(j, "ociVersion")) ?: "");
    json_t *a = json_object_get(j, "annotations");
    s->annotations = json_is_object(a) ? json_incref(a) : NULL;
    json_decref(j);
    return 0;
}

void oci_state_free(oci_state *s)
{
    json_decref(s->annotations);
    s->annotations = NULL;
}

oci_status oci_state_status(int dirfd, const oci_state *s)
{
    if (s->pid <= 0 || !mxc_pid_alive(s->pid, s->start))
        return OCI_STOPPED;
    return faccessat(dirfd, OCI_FIFO, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ? OCI_CREATED : OCI_RUNNING;
}

json_t *oci_state_json(const oci_state *s, oci_status st)
{
    json_t *j = json_pack("{s:s, s:s, s:s}", "ociVersion", OCI_SPEC_VERSION, "id", s->id, "status",
                          oci_status_name(st));
    if (st != OCI_STOPPED)
        json_object_set_new(j, "pid", json_integer(s->pid));
    else
        json_object_set_new(j, "pid", json_integer(0));
    json_object_set_new(j, "bundle", json_string(s->bundle));
    json_object_set_new(j, "rootfs", json_string(s->rootfs));
    json_object_set_new(j, "created", json_string(s->created));
    json_object_set_new(j, "owner", json_string(oci_rootless_owner()));
    json_object_set_new(j, "annotations", s->annotations ? json_incref(s->annotations) : json_object());
    return j;
}
