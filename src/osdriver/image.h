/* image.h — a sandbox's image, from the host's local store (Podman's), never pulled.
 * Owns: the image held for a sandbox (`podman image mount -- REF` as root: a mount Podman
 * counts, so the image's layers stay while any sandbox holds it), the layers an overlay
 * lowerdir takes (the overlay driver's diff directories, top first, from `podman image
 * inspect`; the vfs driver's mounted directory itself: an overlay cannot itself be a
 * lower layer that mxc-oci idmaps), and the hold released (`podman image unmount`: Podman
 * unmounts when the last holder lets go).  An image absent from the store is refused
 * (MXC_E_NOT_PROVISIONED) naming it; any other storage driver is refused.  Podman runs with
 * the driver's environment (CONTAINERS_STORAGE_CONF and the like pick its store).  The name
 * is resolved to the image's ID once, at Create (`podman image inspect --format {{.Id}}`); the
 * caller records the ID, and every hold, inspection and release after goes by it, so a tag
 * moved to another image after Create never makes a Delete release another's hold. */
#ifndef MXC_OSD_IMAGE_H
#define MXC_OSD_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define OSD_IMAGE_ID_LEN 64 /* hex digits of a sha256 */

/* ref (a name) resolved to its image's ID (OSD_IMAGE_ID_LEN hex digits) into id[sz]: 0, or
 * -1 with *e (MXC_E_NOT_PROVISIONED when the store has no such image). */
int osd_image_resolve(const char *podman, const char *ref, char *id, size_t sz, mxc_error *e);
/* Whether id is OSD_IMAGE_ID_LEN lowercase hex digits (an ID a record may hold). */
bool osd_image_id_ok(const char *id);
/* The image id held (ref: its name, for messages); lowers (a lowerdir= value, colon-separated
 * absolute paths) into buf: 0, or -1 with *e (nothing held). */
int osd_image_hold(const char *podman, const char *id, const char *ref, char *lowers, size_t sz, mxc_error *e);
/* One hold of the image id released (errors said on stderr: nothing to undo). */
void osd_image_release(const char *podman, const char *id);

#endif
