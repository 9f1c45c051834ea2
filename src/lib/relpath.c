/* relpath.c — see relpath.h. */
#include "relpath.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_blank(const char *p)
{
    for (; *p; p++)
        if (*p != ' ' && *p != '\t')
            return false;
    return true;
}

/* rel (relative, not blank) joined to the working directory into out. */
static int join(const char *what, const char *rel, char *out, size_t outsz, mxc_error *e)
{
    if (rel[0] == '~')
        return mxc_err(e, MXC_E_POLICY_VALIDATION,
                       "%s path \"%.200s\" starts with \"~\": a shell's home directory, which mxc does not expand",
                       what, rel);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || cwd[0] != '/')
        return mxc_err(e, MXC_E_POLICY_VALIDATION,
                       "%s path \"%.200s\" is relative and the caller's working directory cannot be named (%s)", what,
                       rel, strerror(errno ? errno : ENOENT));
    size_t n = strlen(cwd);
    if (n == 1)
        n = 0; /* "/" + rel, not "//" + rel */
    const char *seg = rel;
    while (*seg) {
        size_t len = strcspn(seg, "/");
        if (len == 2 && seg[0] == '.' && seg[1] == '.')
            return mxc_err(e, MXC_E_POLICY_VALIDATION,
                           "%s path \"%.200s\" is relative and climbs with \"..\": where it lands depends on "
                           "symlinks on the way; give the path absolute", what, rel);
        if (len && !(len == 1 && seg[0] == '.')) {
            if (n + 1 + len >= sizeof cwd)
                return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s path is longer than %d bytes once made absolute",
                               what, PATH_MAX);
            cwd[n++] = '/';
            memcpy(cwd + n, seg, len);
            n += len;
        }
        seg += len;
        while (*seg == '/')
            seg++;
    }
    if (n == 0)
        cwd[n++] = '/';
    cwd[n] = '\0';
    if (n >= outsz)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "%s path is too long once made absolute", what);
    memcpy(out, cwd, n + 1);
    return 0;
}

/* The string v, if relative, replaced in its JSON by its absolute form; *ptr follows it. */
static int fix(json_t *v, const char *what, const char **ptr, mxc_error *e)
{
    const char *s = json_string_value(v);
    if (!s || s[0] == '/' || is_blank(s))
        return 0; /* absolute or blank: policy.c judges it as given */
    char abs[PATH_MAX];
    if (join(what, s, abs, sizeof abs, e) < 0 || json_string_set(v, abs) < 0)
        return e->code ? -1 : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    *ptr = json_string_value(v);
    return 0;
}

int mxc_relpath_absolutize(mxc_request *r, mxc_error *e)
{
    if (r->dialect != MXC_DIALECT_V1)
        return 0;
    if (r->cwd && fix(json_object_get(json_object_get(r->root, "process"), "cwd"), "process.cwd", &r->cwd, e) < 0)
        return -1;
    const struct { const char *key, *what; mxc_strlist *l; } lists[] = {
        {"readwritePaths", "filesystem.readwritePaths", &r->rw},
        {"readonlyPaths", "filesystem.readonlyPaths", &r->ro},
        {"deniedPaths", "filesystem.deniedPaths", &r->denied}};
    json_t *fs = json_object_get(r->root, "filesystem");
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        json_t *arr = json_object_get(fs, lists[k].key);
        for (size_t i = 0; i < lists[k].l->n && i < json_array_size(arr); i++)
            if (fix(json_array_get(arr, i), lists[k].what, &lists[k].l->v[i], e) < 0)
                return -1;
    }
    return 0;
}
