/* layer.c — see layer.h. */
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "quantity.h"
#include "run.h"

#define IMG "layer.img"
#define LAYER_DIR "layer"

int osd_layer_size_parse(const char *s, uint64_t *size, mxc_error *e)
{
    const char *why = NULL;
    if (!strcmp(s, "none")) {
        *size = 0;
        return 0;
    }
    if (osd_quantity_parse(s, OSD_QTY_BYTES, size, &why) < 0)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--layer-size %s: %s", s, why);
    if (*size < OSD_LAYER_MIN || *size > OSD_LAYER_MAX)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "--layer-size %s: must lie within 16Mi..16Ti (or be \"none\": "
                                                   "no cap)", s);
    return 0;
}

const char *osd_layer_unavailable(char *buf, size_t sz)
{
    _cleanup_fd_ int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0)
        snprintf(buf, sz, "loop devices are unavailable here (/dev/loop-control: %s), so no sandbox's writable "
                          "layer can be capped: creates are refused (--layer-size none runs them uncapped)",
                 strerror(errno));
    else if (access(OSD_MKE2FS, X_OK) < 0)
        snprintf(buf, sz, "%s cannot be run (%s; Debian's e2fsprogs), so no sandbox's writable layer can be "
                          "capped: creates are refused (--layer-size none runs them uncapped)",
                 OSD_MKE2FS, strerror(errno));
    else
        return NULL;
    return buf;
}

/* A free loop device configured over img (autoclear), its descriptor, its name in dev; -1
 * with *e.  Another process may take the free device first: then the next. */
static int attach(int img, char *dev, size_t sz, mxc_error *e)
{
    _cleanup_fd_ int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0)
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "loop.control", errno, NULL, "cannot open /dev/loop-control");
    int err = EBUSY;
    for (int tries = 0; tries < 16 && err == EBUSY; tries++) {
        int n = ioctl(ctl, LOOP_CTL_GET_FREE);
        if (n < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "loop.get_free", errno, NULL, "no free loop device");
        snprintf(dev, sz, "/dev/loop%d", n);
        int lfd = open(dev, O_RDWR | O_CLOEXEC);
        if (lfd < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "loop.open", errno, NULL, "cannot open %s", dev);
        struct loop_config c = {.fd = (unsigned)img, .info.lo_flags = LO_FLAGS_AUTOCLEAR};
        if (ioctl(lfd, LOOP_CONFIGURE, &c) == 0)
            return lfd;
        err = errno;
        close(lfd);
    }
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, "loop.configure", err, NULL, "cannot attach a loop device");
}

int osd_layer_mount(int wfd, mxc_error *e)
{
    _cleanup_fd_ int img = openat(wfd, IMG, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat w, l, is;
    if (img < 0 && errno == ENOENT)
        return 0; /* uncapped: a plain directory */
    if (img < 0 || fstat(img, &is) < 0 || !S_ISREG(is.st_mode))
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "layer.open", errno, NULL, "cannot open the layer's image");
    if (fstat(wfd, &w) < 0 || fstatat(wfd, LAYER_DIR, &l, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(l.st_mode))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the layer's mount point is gone");
    if (l.st_dev != w.st_dev)
        return 0; /* mounted already */
    char dev[64], at[64];
    _cleanup_fd_ int lfd = attach(img, dev, sizeof dev, e);
    if (lfd < 0)
        return -1;
    snprintf(at, sizeof at, "/proc/self/fd/%d/" LAYER_DIR, wfd);
    /* the mount holds the device now: with autoclear it is detached when the mount goes */
    if (mount(dev, at, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME, "noinit_itable") < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "layer.mount", errno, NULL, "cannot mount the layer's image (%s)",
                          dev);
    return 0;
}

/* wdir/layer.img: a sparse file of size bytes, formatted ext4. */
static int make_image(int wfd, const char *wdir, uint64_t size, mxc_error *e)
{
    char path[PATH_MAX + 64];
    _cleanup_fd_ int img = openat(wfd, IMG, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (img < 0 || ftruncate(img, (off_t)size) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "layer.image", errno, NULL, "cannot make the layer's image");
    if (snprintf(path, sizeof path, "%s/" IMG, wdir) >= (int)sizeof path)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the layer's image path is too long");
    const char *argv[] = {OSD_MKE2FS, "-t", "ext4", "-q", "-F", "-m", "0",
                          "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", path, NULL};
    osd_run_io io;
    if (osd_run(argv, -1, &io) != 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "mke2fs of the layer's image failed: %s", io.err);
    return 0;
}

int osd_layer_make(int wfd, const char *wdir, uint64_t size, mxc_error *e)
{
    if (mkdirat(wfd, LAYER_DIR, 0700) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "layer.mkdir", errno, NULL, "cannot make the layer's directory");
    if (size && (make_image(wfd, wdir, size, e) < 0 || osd_layer_mount(wfd, e) < 0))
        return -1;
    _cleanup_fd_ int lfd = openat(wfd, LAYER_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (lfd < 0 || fchmod(lfd, 0700) < 0 || mkdirat(lfd, "upper", 0755) < 0 || mkdirat(lfd, "work", 0700) < 0 ||
        mkdirat(lfd, "upper/sandbox", 0755) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "layer.mkdir", errno, NULL, "cannot make the layer's directories");
    return 0;
}

void osd_layer_unmount(const char *wdir)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/" LAYER_DIR, wdir);
    while (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
        ;
}
