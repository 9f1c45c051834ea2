/* helpers.c — see helpers.h. */
#include "helpers.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool beside(const char *file, const char *name, char *out, size_t sz)
{
    const char *slash = strrchr(file, '/');
    if (!slash || (size_t)(slash - file) + 2 + strlen(name) > sz)
        return false;
    snprintf(out, sz, "%.*s/%s", (int)(slash - file), file, name);
    return access(out, X_OK) == 0;
}

static char self_path[PATH_MAX];

void mxc_helper_set_self(const char *path)
{
    snprintf(self_path, sizeof self_path, "%s", path && path[0] == '/' ? path : "");
}

bool mxc_helper_path(const char *name, char *out, size_t sz)
{
    if (self_path[0] && beside(self_path, name, out, sz))
        return true;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        if (beside(self, name, out, sz))
            return true;
    }
    Dl_info info; /* an in-process caller: beside libmxc / libmxc_ffi */
    if (dladdr((void *)mxc_helper_path, &info) && info.dli_fname && beside(info.dli_fname, name, out, sz))
        return true;
    static const char *const INSTALLED[] = {"/usr/local/bin", "/usr/bin"};
    for (size_t i = 0; i < sizeof INSTALLED / sizeof INSTALLED[0]; i++)
        if ((size_t)snprintf(out, sz, "%s/%s", INSTALLED[i], name) < sz && access(out, X_OK) == 0)
            return true;
    return false;
}
