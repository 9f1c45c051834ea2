/* image.c — see image.h. */
#include "image.h"

#include <stdio.h>
#include <string.h>

#include "run.h"

/* The layers of a held image: the storage driver's name, then its directories. */
static int layers(const char *podman, const char *ref, const char *mounted, char *lowers, size_t sz, mxc_error *e)
{
    const char *argv[] = {podman, "image", "inspect", "--format",
                          "{{.GraphDriver.Name}}|{{.GraphDriver.Data.UpperDir}}|{{.GraphDriver.Data.LowerDir}}", "--",
                          ref, NULL};
    osd_run_io io;
    int rc = osd_run(argv, -1, &io);
    if (rc != 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "podman image inspect %s failed: %s", ref, io.err);
    char *upper = strchr(io.out, '|'), *lower = upper ? strchr(upper + 1, '|') : NULL;
    if (!lower)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "podman image inspect %s: unexpected answer", ref);
    *upper++ = 0;
    *lower++ = 0;
    int n;
    if (!strcmp(io.out, "vfs"))
        n = snprintf(lowers, sz, "%s", mounted);
    else if (!strcmp(io.out, "overlay") && upper[0] == '/')
        n = lower[0] == '/' ? snprintf(lowers, sz, "%s:%s", upper, lower) : snprintf(lowers, sz, "%s", upper);
    else
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                       "image %s: Podman's storage driver %s is not one the mxc driver reads (overlay, vfs)", ref,
                       io.out);
    if (n < 0 || (size_t)n >= sz || strpbrk(lowers, ",\\\n"))
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "image %s: its layer paths do not fit an overlay's options",
                       ref);
    return 0;
}

bool osd_image_id_ok(const char *id)
{
    return strlen(id) == OSD_IMAGE_ID_LEN && strspn(id, "0123456789abcdef") == OSD_IMAGE_ID_LEN;
}

int osd_image_resolve(const char *podman, const char *ref, char *id, size_t sz, mxc_error *e)
{
    const char *argv[] = {podman, "image", "inspect", "--format", "{{.Id}}", "--", ref, NULL};
    osd_run_io io;
    if (osd_run(argv, -1, &io) != 0) {
        if (strstr(io.err, "image not known") || strstr(io.err, "no such image") || strstr(io.err, "unknown image"))
            return mxc_err(e, MXC_E_NOT_PROVISIONED,
                           "template.image %s is not in the host's image store (Podman's); the mxc driver pulls nothing: "
                           "put it there first (podman pull or podman load)",
                           ref);
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "podman image inspect %s failed: %s", ref, io.err);
    }
    if (!osd_image_id_ok(io.out) || sz <= OSD_IMAGE_ID_LEN)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "podman image inspect %s: its ID is not %d hex digits", ref,
                       OSD_IMAGE_ID_LEN);
    snprintf(id, sz, "%s", io.out);
    return 0;
}

int osd_image_hold(const char *podman, const char *id, const char *ref, char *lowers, size_t sz, mxc_error *e)
{
    if (!osd_image_id_ok(id))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "image %s: the recorded ID is not an image ID", ref);
    const char *argv[] = {podman, "image", "mount", "--", id, NULL};
    osd_run_io io;
    int rc = osd_run(argv, -1, &io);
    if (rc != 0) {
        if (strstr(io.err, "image not known") || strstr(io.err, "no such image") || strstr(io.err, "unknown image"))
            return mxc_err(e, MXC_E_NOT_PROVISIONED,
                           "template.image %s: its image (ID %.12s, resolved at create) is no longer in the host's "
                           "image store (Podman's); the mxc driver pulls nothing",
                           ref, id);
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "podman image mount %s failed: %s", ref, io.err);
    }
    if (io.out[0] != '/' || strchr(io.out, '\n')) {
        osd_image_release(podman, id);
        return mxc_err(e, MXC_E_BACKEND_ERROR, "podman image mount %s: unexpected answer", ref);
    }
    char mounted[sizeof io.out];
    snprintf(mounted, sizeof mounted, "%s", io.out);
    if (layers(podman, id, mounted, lowers, sz, e) < 0) {
        osd_image_release(podman, id);
        return -1;
    }
    return 0;
}

void osd_image_release(const char *podman, const char *id)
{
    const char *argv[] = {podman, "image", "unmount", "--", id, NULL};
    osd_run_io io;
    if (osd_run(argv, -1, &io) != 0)
        fprintf(stderr, "mxc-openshell-driver: podman image unmount %s: %s\n", id, io.err);
}
