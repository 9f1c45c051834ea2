/* inventory.c — see inventory.h. */
#include "inventory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxc.h"
#include "registry.h"
#include "sandbox_id.h"
#include "session.h"
#include "state.h"

#define NAMES_DIR ".names"
#define NAME_MAX_LEN 64

bool mxc_label_is_valid(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
            return false;
    }
    return true;
}

bool mxc_name_is_valid(const char *name)
{
    return mxc_label_is_valid(name, NAME_MAX_LEN) && !mxc_agent_name_is_safe(name);
}

static char *envelope_error(mxc_error *e)
{
    char *s = mxc_error_envelope_text(e);
    mxc_error_clear(e);
    return s;
}

static char *envelope_result(json_t *result)
{
    json_t *env = json_pack("{s:o}", "result", result);
    char *s = json_dumps(env, JSON_COMPACT);
    json_decref(env);
    return s;
}

/* The state root's .names directory, opened (made when make). */
static int names_dir(bool make, mxc_error *e)
{
    char root[512];
    if (mxc_state_root(root, sizeof root, e) < 0)
        return -1;
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "names.open", errno, NULL, "cannot open the state root");
    if (make && mkdirat(rfd, NAMES_DIR, 0700) < 0 && errno != EEXIST) {
        int err = errno;
        close(rfd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "names.mkdir", err, NULL, "cannot make the names directory");
    }
    int fd = openat(rfd, NAMES_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    close(rfd);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "names.open", err, NULL, "cannot open the names directory");
    return fd;
}

/* The id a name file holds ("" when none or unreadable). */
static void read_name(int dfd, const char *name, char *id, size_t idsz)
{
    id[0] = '\0';
    /* a link, a FIFO or anything not a regular file planted here names nothing */
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        fd = -1;
    }
    ssize_t n = fd < 0 ? -1 : read(fd, id, idsz - 1);
    if (fd >= 0)
        close(fd);
    id[n > 0 ? n : 0] = '\0';
    id[strcspn(id, "\n")] = '\0';
}

/* Whether the sandbox an id names still exists (its directory). */
static bool id_exists(const char *id)
{
    mxc_sandbox_id sid;
    mxc_error e = {0};
    char dir[700];
    struct stat sb;
    bool ok = mxc_sandbox_id_decode(id, &sid, &e) == 0 && mxc_state_dir_of(sid.agent_name, dir, sizeof dir, &e) == 0 &&
              lstat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
    mxc_error_clear(&e);
    return ok;
}

int mxc_name_bind(const char *name, const char *sandbox_id, char **error_json)
{
    mxc_error e = {0};
    *error_json = NULL;
    if (!mxc_name_is_valid(name)) {
        mxc_err(&e, MXC_E_MALFORMED_REQUEST, "the name %s is not usable: 1 to 64 of [A-Za-z0-9_.-], starting with a "
                "letter or digit, and not an agent name (mxc-...)", name ? name : "(none)");
        *error_json = envelope_error(&e);
        return -1;
    }
    int dfd = names_dir(true, &e);
    if (dfd < 0) {
        *error_json = envelope_error(&e);
        return -1;
    }
    int lfd = openat(dfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
        mxc_err_os(&e, MXC_E_BACKEND_ERROR, "names.lock", errno, NULL, "cannot lock the names directory");
        goto fail;
    }
    char cur[MXC_SANDBOX_ID_MAX];
    read_name(dfd, name, cur, sizeof cur);
    if (cur[0] && (!sandbox_id || strcmp(cur, sandbox_id) != 0) && id_exists(cur)) {
        mxc_err(&e, MXC_E_POLICY_VALIDATION, "the name %s is taken (by %s)", name, cur);
        mxc_err_set_remediation(&e, "choose another name, or remove that sandbox first (mxc rm NAME)");
        goto fail;
    }
    if (sandbox_id) {
        char tmp[NAME_MAX_LEN + 32];
        snprintf(tmp, sizeof tmp, ".new.%s.%d", name, (int)getpid());
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        size_t len = strlen(sandbox_id);
        bool ok = fd >= 0 && write(fd, sandbox_id, len) == (ssize_t)len && fsync(fd) == 0;
        if (fd >= 0)
            close(fd);
        if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
            mxc_err_os(&e, MXC_E_BACKEND_ERROR, "names.write", errno, NULL, "cannot record the name %s", name);
            unlinkat(dfd, tmp, 0);
            goto fail;
        }
    }
    close(lfd);
    close(dfd);
    return 0;
fail:
    if (lfd >= 0)
        close(lfd);
    close(dfd);
    *error_json = envelope_error(&e);
    return -1;
}

char *mxc_name_lookup(const char *name)
{
    if (!mxc_name_is_valid(name))
        return NULL;
    mxc_error e = {0};
    int dfd = names_dir(false, &e);
    mxc_error_clear(&e);
    if (dfd < 0)
        return NULL;
    char id[MXC_SANDBOX_ID_MAX];
    read_name(dfd, name, id, sizeof id);
    close(dfd);
    return id[0] && id_exists(id) ? strdup(id) : NULL;
}

void mxc_name_unbind(const char *name, const char *sandbox_id)
{
    if (!mxc_name_is_valid(name))
        return;
    mxc_error e = {0};
    int dfd = names_dir(false, &e);
    mxc_error_clear(&e);
    if (dfd < 0)
        return;
    int lfd = openat(dfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lfd >= 0 && flock(lfd, LOCK_EX) == 0) {
        char cur[MXC_SANDBOX_ID_MAX];
        read_name(dfd, name, cur, sizeof cur);
        if (cur[0] && (!sandbox_id || !strcmp(cur, sandbox_id))) /* never another sandbox's name */
            unlinkat(dfd, name, 0);
    }
    if (lfd >= 0)
        close(lfd);
    close(dfd);
}

/* The name bound to each live sandbox, as {id: name}. */
static json_t *names_by_id(void)
{
    json_t *m = json_object();
    mxc_error e = {0};
    int dfd = names_dir(false, &e);
    mxc_error_clear(&e);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return m;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!mxc_name_is_valid(de->d_name))
            continue;
        char id[MXC_SANDBOX_ID_MAX];
        read_name(dirfd(d), de->d_name, id, sizeof id);
        if (id[0] && id_exists(id))
            json_object_set_new(m, id, json_string(de->d_name));
    }
    closedir(d);
    return m;
}

static int by_created(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "created"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "created"));
    return x < y ? -1 : x > y;
}

char *mxc_list_json(void)
{
    mxc_error e = {0};
    char root[512];
    if (mxc_state_root(root, sizeof root, &e) < 0)
        return envelope_error(&e);
    json_t *names = names_by_id();
    json_t *items[4096];
    size_t n = 0;
    DIR *d = opendir(root);
    struct dirent *de;
    while (d && n < sizeof items / sizeof items[0] && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue; /* transient directories and the names */
        json_t *s = mxc_session_summary(root, de->d_name, false);
        if (!s)
            continue;
        json_object_set_new(s, "kind", json_string("session"));
        json_t *nm = json_object_get(names, json_string_value(json_object_get(s, "sandboxId")));
        if (nm)
            json_object_set(s, "name", nm);
        items[n++] = s;
    }
    if (d)
        closedir(d);
    json_decref(names);
    qsort(items, n, sizeof items[0], by_created);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, items[i]);
    /* the one-shots running now, host-wide as root (their claims) */
    size_t k;
    json_t *o;
    json_t *shots = mxc_registry_oneshots();
    json_array_foreach(shots, k, o) {
        json_object_set_new(o, "kind", json_string("one-shot"));
        json_object_set_new(o, "state", json_string("running"));
        json_array_append(arr, o);
    }
    json_decref(shots);
    return envelope_result(json_pack("{s:s, s:o}", "stateRoot", root, "sandboxes", arr));
}

char *mxc_inspect_json(const char *sandbox_id)
{
    mxc_error e = {0};
    mxc_sandbox_id sid;
    char root[512];
    if (mxc_sandbox_id_decode(sandbox_id ? sandbox_id : "", &sid, &e) < 0 || mxc_state_root(root, sizeof root, &e) < 0)
        return envelope_error(&e);
    json_t *s = mxc_session_summary(root, sid.agent_name, true);
    if (!s) {
        mxc_err(&e, MXC_E_STALE_ID, "no sandbox %s on this host (state root %s)", sid.agent_name, root);
        return envelope_error(&e);
    }
    json_t *names = names_by_id();
    json_t *nm = json_object_get(names, sandbox_id);
    if (nm)
        json_object_set(s, "name", nm);
    json_decref(names);
    return envelope_result(s);
}
