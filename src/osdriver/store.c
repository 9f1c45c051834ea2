/* store.c — see store.h. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdio.h"
#include "front.h"
#include "spec.h"

#define MAX_RECORD (1u << 20)
#define MAX_RECORDS 4096

int osd_store_open(osd_store *st, const char *dir, mxc_error *e)
{
    st->dirfd = st->sbfd = -1;
    st->dirfd = mxc_open_own_dir(dir, 077);
    if (st->dirfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "state.open", errno,
                          "give a directory of this user's alone (mode 0700), not a link",
                          "the state directory %s is not this user's own directory", dir);
    /* one driver per state directory: a second one's sweep would tear down the first's creates */
    if (flock(st->dirfd, LOCK_EX | LOCK_NB) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "state.lock", errno, NULL,
                          "another mxc-openshell-driver serves the state directory %s", dir);
    if (mkdirat(st->dirfd, "sandboxes", 0700) < 0 && errno != EEXIST)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot make %s/sandboxes", dir);
    st->sbfd = openat(st->dirfd, "sandboxes", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (st->sbfd < 0 || fstat(st->sbfd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 077))
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "state.open", errno ? errno : EPERM, NULL,
                          "%s/sandboxes is not this user's own directory", dir);
    return 0;
}

void osd_store_close(osd_store *st)
{
    if (st->sbfd >= 0)
        close(st->sbfd);
    if (st->dirfd >= 0)
        close(st->dirfd);
    st->dirfd = st->sbfd = -1;
}

/* The record named id, unpacked with its spec dropped; NULL (and a line on stderr) when it
 * is not one. */
static pb_sandbox *read_record(int sbfd, const char *id, bool keep_spec)
{
    _cleanup_fd_ int fd = openat(sbfd, id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (size_t)st.st_size > MAX_RECORD) {
        if (fd >= 0 || errno != ENOENT)
            fprintf(stderr, "mxc-openshell-driver: sandboxes/%s is not a record of ours; skipped\n", id);
        return NULL;
    }
    size_t len = 0;
    char *buf = mxc_read_whole(fd, MAX_RECORD, &len);
    pb_sandbox *sb = buf ? openshell__compute__v1__driver_sandbox__unpack(NULL, len, (const uint8_t *)buf) : NULL;
    free(buf);
    if (!sb || strcmp(sb->id, id)) {
        fprintf(stderr, "mxc-openshell-driver: sandboxes/%s does not parse as its sandbox; skipped\n", id);
        if (sb)
            openshell__compute__v1__driver_sandbox__free_unpacked(sb, NULL);
        return NULL;
    }
    if (sb->spec && !keep_spec) {
        openshell__compute__v1__driver_sandbox_spec__free_unpacked(sb->spec, NULL);
        sb->spec = NULL;
    }
    return sb;
}

int osd_store_get(const osd_store *st, const char *id, pb_sandbox **out, mxc_error *e)
{
    *out = NULL;
    if (!osd_id_is_valid(id))
        return 0;
    *out = read_record(st->sbfd, id, false);
    return *out != NULL;
}

int osd_store_load(const osd_store *st, const char *id, pb_sandbox **out)
{
    *out = osd_id_is_valid(id) ? read_record(st->sbfd, id, true) : NULL;
    return *out != NULL;
}

int osd_store_put(const osd_store *st, const pb_sandbox *sb, mxc_error *e)
{
    size_t n = protobuf_c_message_get_packed_size(&sb->base);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory writing the record of %s", sb->id);
    n = protobuf_c_message_pack(&sb->base, buf);
    char tmp[160];
    snprintf(tmp, sizeof tmp, ".%s.new", sb->id); /* a dot file: never read as a record */
    int rc = mxc_replace_at(st->sbfd, sb->id, tmp, buf, n, 0600);
    free(buf);
    if (rc < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.write", -rc, NULL, "cannot write the record of %s", sb->id);
    return 0;
}

void osd_store_remove(const osd_store *st, const char *id)
{
    if (osd_id_is_valid(id) && unlinkat(st->sbfd, id, 0) < 0 && errno != ENOENT)
        fprintf(stderr, "mxc-openshell-driver: cannot remove sandboxes/%s: %s\n", id, strerror(errno));
}

int osd_store_list(const osd_store *st, pb_sandbox ***out, size_t *n, bool keep_spec, mxc_error *e)
{
    *out = NULL;
    *n = 0;
    int fd = openat(st->sbfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.list", errno, NULL, "cannot read the sandboxes directory");
    }
    pb_sandbox **list = calloc(MAX_RECORDS, sizeof *list);
    struct dirent *de;
    while (list && *n < MAX_RECORDS && (de = readdir(d))) {
        if (de->d_name[0] == '.' || !osd_id_is_valid(de->d_name))
            continue;
        pb_sandbox *sb = read_record(st->sbfd, de->d_name, keep_spec);
        if (sb)
            list[(*n)++] = sb;
    }
    closedir(d);
    if (!list)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory listing sandboxes");
    *out = list;
    return 0;
}

void osd_store_free(pb_sandbox **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        openshell__compute__v1__driver_sandbox__free_unpacked(list[i], NULL);
    free(list);
}
