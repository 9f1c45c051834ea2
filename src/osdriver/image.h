/* image.h — a sandbox's image, from the host's local store (Podman's), never pulled.
 * Owns: the image held for a sandbox (`podman image mount -- REF` as root: a mount Podman
 * counts, so the image's layers stay while any sandbox holds it), the layers an overlay
 * lowerdir takes (the overlay driver's diff directories, top first, from `podman image
 * inspect`; the vfs driver's mounted directory itself: an overlay cannot itself be a
 * lower layer that mxc-oci idmaps), and the hold released (`podman image unmount`: Podman
 * unmounts when the last holder lets go).  An image absent from the store is refused
 * (MXC_E_NOT_PROVISIONED) naming it; any other storage driver is refused.  Podman runs with
 * the driver's environment (CONTAINERS_STORAGE_CONF and the like pick its store). */
#ifndef MXC_OSD_IMAGE_H
#define MXC_OSD_IMAGE_H

#include <stddef.h>

#include "error.h"

/* ref held; lowers (a lowerdir= value, colon-separated absolute paths) into buf: 0, or -1
 * with *e (nothing held). */
int osd_image_hold(const char *podman, const char *ref, char *lowers, size_t sz, mxc_error *e);
/* One hold of ref released (errors said on stderr: nothing to undo). */
void osd_image_release(const char *podman, const char *ref);

#endif
