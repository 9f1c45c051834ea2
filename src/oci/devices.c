/* src/oci/devices.c — linux.devices beyond the six defaults (see devices.h). */
#include "devices.h"
#include "mounttree.h"
#include "setupops.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Character devices a container may be given: each is an interface to a
 * kernel service of the container's own (its FUSE mounts, its network
 * namespace's tun devices, its own virtual machines, GPU compute through a
 * render node) and reads or writes nothing of the host's.  The mem-class
 * defaults are allowed at another path too. */
static const struct { unsigned major, minor_lo, minor_hi; const char *what; } allowed[] = {
    {1, 3, 3, "null"}, {1, 5, 5, "zero"}, {1, 7, 7, "full"}, {1, 8, 8, "random"}, {1, 9, 9, "urandom"},
    {5, 0, 0, "tty"},
    {10, 229, 229, "fuse"},
    {10, 200, 200, "net/tun"},
    {10, 232, 232, "kvm"},
    {226, 128, 255, "a GPU render node"},
};

/* Why a character device is refused: the known ones by name, the rest as not allowlisted. */
static const char *why_refused(unsigned major, unsigned minor)
{
    static const struct { unsigned major, minor_lo, minor_hi; const char *why; } known[] = {
        {1, 1, 1, "/dev/mem: the host's physical memory"},
        {1, 2, 2, "/dev/kmem: the host kernel's memory"},
        {1, 4, 4, "/dev/port: the host's I/O ports"},
        {1, 11, 11, "/dev/kmsg: the host kernel's log"},
        {1, 12, 12, "/dev/oldmem: the host's crashed kernel's memory"},
        {4, 64, 255, "a serial port (ttyS*): the host's hardware"},
        {4, 0, 63, "a virtual console (tty0..63): the host's console"},
        {7, 0, 255, "a virtual console memory (vcs*): the host's screen"},
        {10, 231, 231, "/dev/snapshot: the host's hibernation image"},
        {10, 236, 236, "/dev/mapper/control: the host's device mapper"},
        {10, 237, 237, "/dev/loop-control: the host's loop devices"},
        {10, 227, 227, "/dev/mcelog: the host's machine checks"},
        {21, 0, 0xfffff, "a SCSI generic node (sg*): raw commands to a host disk"},
        {202, 0, 0xfffff, "/dev/cpu/*/msr: the host CPU's model-specific registers"},
        {203, 0, 0xfffff, "/dev/cpu/*/cpuid"},
        {226, 0, 127, "a GPU card node (dri/card*): the host's display (a render node, 226:128-255, is allowed)"},
        {10, 0, 255, "a misc device not on the allowlist"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (major == known[i].major && minor >= known[i].minor_lo && minor <= known[i].minor_hi)
            return known[i].why;
    return "not on the allowlist of devices that give a container nothing of the host's (fuse, net/tun, kvm, "
           "GPU render nodes, null, zero, full, random, urandom, tty)";
}

static const char *allowed_what(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (major == allowed[i].major && minor >= allowed[i].minor_lo && minor <= allowed[i].minor_hi)
            return allowed[i].what;
    return NULL;
}

/* One of the default nodes (setupops.h) at its own path with its own numbers. */
static bool is_default(const char *path, unsigned major, unsigned minor)
{
    const char *what = allowed_what(major, minor);
    return what && !strncmp(path, "/dev/", 5) && !strcmp(path + 5, what) &&
           OCI_FIND(mxc_dev_nodes, what) < MXC_DEV_NNODES;
}

/* an optional non-negative integer; -1 absent, -2 malformed */
static long opt_uint(json_t *d, const char *key, long max)
{
    json_t *v = json_object_get(d, key);
    if (!v || json_is_null(v))
        return -1;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        return -2;
    return (long)json_integer_value(v);
}

int oci_device_parse(json_t *d, const char *field, oci_config *c, mxc_error *e)
{
    const char *path = json_string_value(json_object_get(d, "path"));
    const char *type = json_string_value(json_object_get(d, "type"));
    if (!path || !type)
        return oci_config_bad(e, field, "an object with a path and a type");
    json_t *jmaj = json_object_get(d, "major"), *jmin = json_object_get(d, "minor");
    bool numbered = json_is_integer(jmaj) && json_is_integer(jmin) && json_integer_value(jmaj) >= 0 &&
                    json_integer_value(jmin) >= 0 && json_integer_value(jmaj) < (1 << 12) &&
                    json_integer_value(jmin) < (1 << 20);
    unsigned major = numbered ? (unsigned)json_integer_value(jmaj) : 0;
    unsigned minor = numbered ? (unsigned)json_integer_value(jmin) : 0;
    if (strcmp(type, "c") != 0 && strcmp(type, "u") != 0 && strcmp(type, "b") != 0 && strcmp(type, "p") != 0)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: %s.type must be c, u, b or p", field);
    if (!strcmp(type, "b") || !strcmp(type, "u"))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s: %.100s (%s) is refused: raw block devices "
                       "are never given to a container (%u:%u: the host's disks)", field, path, type, major, minor);
    if (!strcmp(type, "p"))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s: %.100s: a fifo node is refused (make it in the "
                       "container: mkfifo needs no privilege)", field, path);
    if (!numbered)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: %s must have a major and a minor number", field);
    if (is_default(path, major, minor))
        return 0;
    /* /dev/ptmx is the container's own devpts's (the /dev/ptmx -> pts/ptmx link every container gets):
     * a new pty there is the container's, never the host's */
    if (!strcmp(path, "/dev/ptmx") && major == 5 && minor == 2)
        return 0;
    const char *what = allowed_what(major, minor);
    if (!what)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s: %.100s (c %u:%u) is refused: %s", field, path,
                       major, minor, why_refused(major, minor));
    size_t n = strlen(path);
    if (strncmp(path, "/dev/", 5) != 0 || n > 200 || strstr(path, "/../") || strstr(path, "/./") ||
        strstr(path, "//") || path[n - 1] == '/' || !strcmp(path + n - 3, "/..") || !strcmp(path + n - 2, "/."))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s: %.100s: a device's path must be a plain path "
                       "under /dev/ (the host's node of that path is bound)", field, path);
    long mode = opt_uint(d, "fileMode", 0177777), uid = opt_uint(d, "uid", 0xffffffffL),
         gid = opt_uint(d, "gid", 0xffffffffL);
    if (mode == -2 || uid == -2 || gid == -2)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: %s: fileMode, uid and gid must be non-negative "
                       "integers", field);
    for (size_t i = 0; i < c->nxdev; i++)
        if (!strcmp(c->xdev[i].path, path))
            return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: %s: %.100s is listed twice", field, path);
    if (c->nxdev == sizeof c->xdev / sizeof c->xdev[0])
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.devices: at most 16 devices beyond the "
                       "defaults");
    c->xdev[c->nxdev].path = path;
    c->xdev[c->nxdev].major = major;
    c->xdev[c->nxdev].minor = minor;
    c->xdev[c->nxdev].mode = mode;
    c->xdev[c->nxdev].uid = uid;
    c->xdev[c->nxdev].gid = gid;
    c->nxdev++;
    return 1;
}

/* Does a rule (type a or c, major/minor absent or -1 = any) match a character device? */
static bool rule_matches(json_t *r, unsigned major, unsigned minor)
{
    const char *t = json_string_value(json_object_get(r, "type"));
    if (t && strcmp(t, "a") != 0 && strcmp(t, "c") != 0)
        return false;
    json_t *ma = json_object_get(r, "major"), *mi = json_object_get(r, "minor");
    if (json_is_integer(ma) && json_integer_value(ma) != -1 && json_integer_value(ma) != (json_int_t)major)
        return false;
    if (json_is_integer(mi) && json_integer_value(mi) != -1 && json_integer_value(mi) != (json_int_t)minor)
        return false;
    return true;
}

int oci_device_rules(json_t *rules, const oci_config *c, mxc_error *e)
{
    if (!json_is_array(rules))
        return 0;
    for (size_t k = 0; k < c->nxdev; k++) {
        /* evaluated in order as the devices cgroup does, the last matching rule wins for each access;
         * no rule: allowed (the spec's default) */
        bool r = true, w = true;
        size_t i;
        json_t *rule;
        json_array_foreach(rules, i, rule) {
            if (!rule_matches(rule, c->xdev[k].major, c->xdev[k].minor))
                continue;
            bool allow = json_is_true(json_object_get(rule, "allow"));
            const char *acc = json_string_value(json_object_get(rule, "access"));
            if (!acc || !*acc)
                acc = "rwm";
            if (strchr(acc, 'r'))
                r = allow;
            if (strchr(acc, 'w'))
                w = allow;
        }
        if (!r || !w)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.resources.devices denies %s %s (c %u:%u), "
                           "which linux.devices gives: refused (mxc-oci makes no devices cgroup, a given node is "
                           "usable; leave it out of linux.devices)", c->xdev[k].path, !r && !w ? "read and write" : !r ? "read" : "write",
                           c->xdev[k].major, c->xdev[k].minor);
    }
    return 0;
}

/* The host's node at fd (a tree or an O_PATH of it) checked against linux.devices[i]: 0, or -1 with
 * *e set (fd closed then). */
static int device_check(const oci_config *c, size_t i, int tree, mxc_error *e)
{
    const char *path = c->xdev[i].path;
    struct stat st;
    const char *bad = NULL;
    char why[160];
    if (fstat(tree, &st) < 0 || !S_ISCHR(st.st_mode))
        bad = "is not a character device";
    else if (major(st.st_rdev) != c->xdev[i].major || minor(st.st_rdev) != c->xdev[i].minor) {
        snprintf(why, sizeof why, "is %u:%u, not %u:%u", major(st.st_rdev), minor(st.st_rdev), c->xdev[i].major,
                 c->xdev[i].minor);
        bad = why;
    } else if (!allowed_what(major(st.st_rdev), minor(st.st_rdev)))
        bad = "is not on the allowlist"; /* unreachable: the numbers were checked at parse time */
    else if (c->xdev[i].mode >= 0 && ((unsigned long)c->xdev[i].mode & 07777) != (st.st_mode & 07777)) {
        snprintf(why, sizeof why, "has mode %04o, not fileMode %04lo (a host node is never chmodded)",
                 st.st_mode & 07777, (unsigned long)c->xdev[i].mode & 07777);
        bad = why;
    } else if ((c->xdev[i].uid >= 0 && (uid_t)c->xdev[i].uid != st.st_uid) ||
               (c->xdev[i].gid >= 0 && (gid_t)c->xdev[i].gid != st.st_gid)) {
        snprintf(why, sizeof why, "is owned by %u:%u, not the config's uid/gid (a host node is never chowned)",
                 st.st_uid, st.st_gid);
        bad = why;
    }
    if (bad) {
        close(tree);
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.devices %s: the host's node %s: refused", path,
                       bad);
    }
    return 0;
}

int oci_device_src(const oci_config *c, size_t i, mxc_error *e)
{
    int fd = open(c->xdev[i].path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return mxc_err_os(e, MXC_E_POLICY_VALIDATION, "oci.device", errno, NULL,
                          "linux.devices %s: the host's node of that path (a container's device is the host's node, "
                          "bound: a user namespace cannot mknod)", c->xdev[i].path);
    return device_check(c, i, fd, e) < 0 ? -1 : fd;
}

int oci_device_tree(const oci_config *c, size_t i, mxc_error *e)
{
    const char *path = c->xdev[i].path;
    /* the node itself, never a link at its name; what is bound is what is checked */
    int tree = mxc_tree_open(AT_FDCWD, path, false, true);
    if (tree < 0)
        return mxc_err_os(e, MXC_E_POLICY_VALIDATION, "oci.device", -tree, NULL,
                          "linux.devices %s: the host's node of that path (a container's device is the host's node, "
                          "bound: a user namespace cannot mknod)", path);
    if (device_check(c, i, tree, e) < 0)
        return -1;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, .propagation = MS_PRIVATE};
    if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
        int err = errno;
        close(tree);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.device", err, NULL, "linux.devices %s", path);
    }
    return tree;
}
