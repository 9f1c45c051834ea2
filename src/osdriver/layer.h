/* layer.h — a sandbox's writable layer on a file system of its own, capped.
 * Owns: STATE/work/ID/layer.img, a sparse file of the cap's size (--layer-size) formatted
 * ext4 (mke2fs -t ext4 -q -F -m 0 -E lazy_itable_init=1,lazy_journal_init=1,nodiscard: no
 * block written beyond the metadata, the journal kept so a host crash leaves a consistent
 * layer), attached to a loop device of its own (LOOP_CTL_GET_FREE then LOOP_CONFIGURE with
 * LO_FLAGS_AUTOCLEAR: the device is detached by the kernel with its last mount, so no path
 * leaves one attached) and mounted nosuid,nodev,noatime,noinit_itable at STATE/work/ID/layer;
 * the overlay's upper (layer/upper) and work (layer/work) directories live in it.  A sandbox
 * writing past its cap gets ENOSPC in its own file system, never on the state's (review of
 * issue 37, (a)).  With no cap (--layer-size none, the operator's explicit choice)
 * STATE/work/ID/layer is a plain directory on the state's file system, as before.  Mount,
 * unmount by path under the driver's own 0700 state directory. */
#ifndef MXC_OSD_LAYER_H
#define MXC_OSD_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define OSD_LAYER_DEFAULT (10ULL << 30) /* 10 GiB, sparse */
#define OSD_LAYER_MIN (16ULL << 20)
#define OSD_LAYER_MAX (16ULL << 40)
#define OSD_MKE2FS "/usr/sbin/mke2fs"

/* --layer-size: a byte quantity ("10Gi", "512Mi") within OSD_LAYER_MIN..MAX, or "none" (0:
 * uncapped).  0, or -1 with *e. */
int osd_layer_size_parse(const char *s, uint64_t *size, mxc_error *e);
/* Whether capped layers can be made on this host: NULL, or why not (in buf): no
 * /dev/loop-control to open read-write, or no OSD_MKE2FS. */
const char *osd_layer_unavailable(char *buf, size_t sz);
/* layer/ made in the sandbox's work directory wfd (its absolute path wdir): with size, the
 * image made, formatted and mounted there; then upper/, upper/sandbox/ and work/ in it.
 * 0, or -1 with *e (what was made is the caller's teardown's: osd_layer_unmount, then the
 * directory's removal). */
int osd_layer_make(int wfd, const char *wdir, uint64_t size, mxc_error *e);
/* layer.img mounted at layer/ again when it is not (a host reboot took the mount).  No image:
 * an uncapped layer, nothing to do.  0, or -1 with *e. */
int osd_layer_mount(int wfd, mxc_error *e);
/* layer/ under the absolute wdir unmounted (the loop device goes with it). */
void osd_layer_unmount(const char *wdir);

#endif
