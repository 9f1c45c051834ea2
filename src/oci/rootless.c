/* rootless.c — mxc-oci run by a non-root caller (rootless.h). */
#include "rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdio.h"
#include "front.h"
#include "mountmap.h"
#include "userns.h"

#define SUBID_MAX 16
#define NEWMAP_MAX (2 * OCI_MAX_IDMAPS * 3 + 4)

typedef struct {
    unsigned start, n;
} subrange;

/* The initial user namespace maps every id onto itself: "0 0 4294967295" alone. */
bool oci_rootless_nested(void)
{
    static int nested = -1;
    if (nested < 0) {
        mxc_idmap_range r[2];
        size_t n = mxc_userns_read_map(getpid(), false, r, 2);
        nested = !(n == 1 && r[0].inside == 0 && r[0].outside == 0 && r[0].count == 4294967295U);
    }
    return nested;
}

bool oci_rootless(void)
{
    return geteuid() != 0 || oci_rootless_nested();
}

int oci_rootless_root(char *buf, size_t sz, mxc_error *e)
{
    char dir[512];
    if (mxc_private_dir(true, dir, sizeof dir, e) < 0) /* the engine's: the caller's own 0700 (state.h) */
        return -1;
    if ((size_t)snprintf(buf, sz, "%s/mxc-oci", dir) >= sz)
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "rootless: the private directory %s is too long", dir);
    return 0;
}

/* /etc/subuid or /etc/subgid, read by descriptor: root's file, writable by root alone; the caller's
 * ranges (its name's or its number's lines).  The count, or -1 with *e set. */
static int read_subids(const char *file, uid_t id, const char *name, subrange *out, mxc_error *e)
{
    int fd _cleanup_fd_ = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootless", errno, NULL, "%s", file);
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "rootless: %s is not a regular file of root's writable only by it: "
                       "its ranges are not trusted", file);
    FILE *f = fdopen(fd, "r");
    if (!f)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.rootless", errno, NULL, "%s", file);
    fd = -1;
    char line[512], num[16];
    snprintf(num, sizeof num, "%u", (unsigned)id);
    int n = 0;
    while (n < SUBID_MAX && fgets(line, sizeof line, f)) {
        char *save, *who = strtok_r(line, ":", &save), *s = strtok_r(NULL, ":", &save), *c = strtok_r(NULL, ":\n", &save);
        if (!who || !s || !c || (strcmp(who, num) && (!name || strcmp(who, name))))
            continue;
        char *end1, *end2;
        unsigned long a = strtoul(s, &end1, 10), b = strtoul(c, &end2, 10);
        if (*end1 || *end2 || !b || a > 0xffffffffUL || b > 0xffffffffUL - a)
            continue;
        out[n++] = (subrange){(unsigned)a, (unsigned)b};
    }
    fclose(f);
    return n;
}

/* The caller's name from /etc/passwd (a static binary has no NSS): buf, or NULL. */
static const char *caller_name(uid_t uid, char *buf, size_t sz)
{
    FILE *f = fopen("/etc/passwd", "re");
    char line[1024];
    const char *found = NULL;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *save, *name = strtok_r(line, ":", &save), *pw = strtok_r(NULL, ":", &save), *id = strtok_r(NULL, ":", &save);
        char *end;
        if (name && pw && id && strtoul(id, &end, 10) == uid && !*end && strlen(name) < sz)
            found = strcpy(buf, name);
    }
    if (f)
        fclose(f);
    return found;
}

const char *oci_rootless_owner(void)
{
    static char name[256];
    if (!name[0] && !caller_name(geteuid(), name, sizeof name))
        snprintf(name, sizeof name, "%u", (unsigned)geteuid());
    return name;
}

/* The caller's subordinate ranges of uids (gid false) or gids: lines of its name or its uid. */
static int caller_subids(bool gid, subrange *out, mxc_error *e)
{
    uid_t uid = getuid();
    char buf[256];
    return read_subids(gid ? "/etc/subgid" : "/etc/subuid", uid, caller_name(uid, buf, sizeof buf), out, e);
}

/* A map range the caller owns: its own id alone, or inside one of its subordinate ranges. */
static bool owned(const oci_idmap *m, unsigned self, const subrange *sub, int nsub)
{
    if (m->n == 1 && m->hid == self)
        return true;
    for (int i = 0; i < nsub; i++)
        if (m->hid >= sub[i].start && (unsigned long long)m->hid + m->n <= (unsigned long long)sub[i].start + sub[i].n)
            return true;
    return false;
}

static int maps_of(bool gid, oci_idmap *map, size_t *nmap, bool given, mxc_error *e)
{
    subrange sub[SUBID_MAX];
    int nsub = caller_subids(gid, sub, e);
    if (nsub < 0)
        return -1;
    unsigned self = gid ? (unsigned)getgid() : (unsigned)getuid();
    const char *field = gid ? "linux.gidMappings" : "linux.uidMappings";
    if (!given) {
        map[0] = (oci_idmap){0, self, 1};
        *nmap = 1;
        if (nsub > 0)
            map[(*nmap)++] = (oci_idmap){1, sub[0].start, sub[0].n < 65536 ? sub[0].n : 65536};
        return 0;
    }
    for (size_t i = 0; i < *nmap; i++)
        if (!owned(&map[i], self, sub, nsub))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s[%zu]: host ids %u..%llu are neither yours "
                           "(%s %u) nor in your subordinate range (%s): refused (rootless, a container has only "
                           "the caller's ids; ask root to add a range there)", field, i, map[i].hid,
                           (unsigned long long)map[i].hid + map[i].n - 1, gid ? "gid" : "uid", self,
                           gid ? "/etc/subgid" : "/etc/subuid");
    return 0;
}

/* Root of a user namespace not the host's (rootless Podman's): the ids are those this namespace
 * maps, all the caller's; the container's own namespace maps them onto themselves by default,
 * or as the config asks within them.  The maps written by us (we hold CAP_SETUID over them). */
static int nested_maps(bool gid, oci_idmap *map, size_t *nmap, bool given, mxc_error *e)
{
    mxc_idmap_range own[OCI_MAX_IDMAPS];
    size_t nown = mxc_userns_read_map(getpid(), gid, own, OCI_MAX_IDMAPS);
    subrange sub[OCI_MAX_IDMAPS];
    for (size_t i = 0; i < nown; i++)
        sub[i] = (subrange){own[i].inside, own[i].count};
    const char *field = gid ? "linux.gidMappings" : "linux.uidMappings";
    if (!given) {
        for (size_t i = 0; i < nown; i++)
            map[i] = (oci_idmap){own[i].inside, own[i].inside, own[i].count};
        *nmap = nown;
        return nown ? 0 : mxc_err(e, MXC_E_BACKEND_ERROR, "rootless: this user namespace maps no %s",
                                  gid ? "gid" : "uid");
    }
    for (size_t i = 0; i < *nmap; i++)
        if (!owned(&map[i], (unsigned)-1, sub, (int)nown))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s[%zu]: ids %u..%llu are not mapped in the "
                           "user namespace mxc-oci runs in (rootless: a container has only the caller's ids)", field,
                           i, map[i].hid, (unsigned long long)map[i].hid + map[i].n - 1);
    return 0;
}

/* A user namespace mxc-oci runs in as root that maps host root (systemd's PrivateUsers=, `unshare -r`
 * by root) is no rootless caller's: its containers would hold host uid 0 (review of issue 36).
 * Refused when a range of its maps reaches its parent's id 0, or when "/" (host root's) shows as a
 * mapped owner rather than the overflow id (host root mapped at any depth). */
static int nested_maps_host_root(mxc_error *e)
{
    for (int gid = 0; gid <= 1; gid++) {
        mxc_idmap_range r[OCI_MAX_IDMAPS];
        size_t n = mxc_userns_read_map(getpid(), gid, r, OCI_MAX_IDMAPS);
        for (size_t i = 0; i < n; i++)
            if (r[i].outside == 0)
                return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "rootless: the user namespace mxc-oci runs in maps "
                               "its parent's %s 0 (host root): its containers would be host root; run mxc-oci as host "
                               "root, or as an unprivileged user", gid ? "gid" : "uid");
    }
    struct stat st;
    char buf[16] = "";
    if (mxc_read_small_at(AT_FDCWD, "/proc/sys/kernel/overflowuid", buf, sizeof buf) <= 0 || stat("/", &st) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "rootless: cannot tell whether host root is mapped here");
    if (st.st_uid != (uid_t)strtoul(buf, NULL, 10))
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "rootless: host root's \"/\" is owned by uid %u in the user "
                       "namespace mxc-oci runs in (host root is mapped here): its containers could be host root; run "
                       "mxc-oci as host root, or as an unprivileged user", (unsigned)st.st_uid);
    return 0;
}

int oci_rootless_maps(oci_config *c, mxc_error *e)
{
    if (oci_rootless_nested())
        return nested_maps_host_root(e) < 0 || nested_maps(false, c->uidmap, &c->nuidmap, c->user_ns, e) < 0 ||
                       nested_maps(true, c->gidmap, &c->ngidmap, c->user_ns, e) < 0
                   ? -1
                   : 0;
    return maps_of(false, c->uidmap, &c->nuidmap, c->user_ns, e) < 0 ||
                   maps_of(true, c->gidmap, &c->ngidmap, c->user_ns, e) < 0
               ? -1
               : 0;
}

/* linux.resources: only devices (mxc-oci makes no devices cgroup in either mode: a container's
 * nodes are the default ones and linux.devices, each the host's node bound; devices.h checks the
 * rules against them) */
static int check_resources(const oci_config *c, mxc_error *e)
{
    const char *key;
    json_t *v;
    json_object_foreach(c->resources, key, v) {
        if (strcmp(key, "devices") && !json_is_null(v) && !(json_is_object(v) && !json_object_size(v)))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.resources.%s: refused rootless: no cgroup "
                           "is delegated to this user here (cgroup v2 delegation: later), so the limit could not be "
                           "enforced; drop it, or run as root", key);
    }
    return 0;
}

int oci_rootless_check(const oci_config *c, mxc_error *e)
{
    for (size_t i = 0; i < c->nmounts; i++)
        if (c->mounts[i].idmap)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: mounts[%zu] (%s): an idmapped mount is refused "
                           "rootless: a user cannot idmap a mount (the bind shows its files as they are; chown them "
                           "into your subordinate range instead)", i, c->mounts[i].dest);
    if (c->njoin || c->join_user)
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.namespaces: a namespace joined by path is "
                       "not supported rootless yet: let the container make its own, or run as root");
    const char *key;
    json_t *v;
    json_object_foreach(c->annotations, key, v)
        if (!strncmp(key, "io.mxc.", 7))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "annotations: %s: refused rootless: the network policy is "
                           "applied by host root (mxc-proxy, nftables); run as root", key);
    return check_resources(c, e);
}

/* helper (newuidmap or newgidmap) checked by descriptor: a regular file of root's, writable by
 * root alone; run through that descriptor, with no environment. */
static int run_newmap(const char *helper, pid_t pid, const oci_idmap *m, size_t n, mxc_error *e)
{
    int fd _cleanup_fd_ = open(helper, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "oci.rootless", errno, "install the uidmap package",
                          "rootless: %s", helper);
    if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "rootless: %s is not a file of root's writable only by it: not run",
                       helper);
    char args[NEWMAP_MAX][16];
    char *argv[NEWMAP_MAX + 1];
    size_t k = 0;
    argv[k] = (char *)helper;
    snprintf(args[++k], sizeof args[0], "%d", (int)pid);
    for (size_t i = 0; i < n; i++) {
        snprintf(args[++k], sizeof args[0], "%u", m[i].cid);
        snprintf(args[++k], sizeof args[0], "%u", m[i].hid);
        snprintf(args[++k], sizeof args[0], "%u", m[i].n);
    }
    for (size_t i = 1; i <= k; i++)
        argv[i] = args[i];
    argv[k + 1] = NULL;
    char *env[] = {NULL};
    pid_t p = fork();
    if (p == 0) {
        execveat(fd, "", argv, env, AT_EMPTY_PATH);
        _exit(127);
    }
    int status = 0;
    while (p > 0 && waitpid(p, &status, 0) < 0 && errno == EINTR)
        ;
    if (p < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "rootless: %s failed (status %d): the maps are not within your "
                       "subordinate ranges, or it cannot run", helper, p < 0 ? -1 : status);
    return 0;
}

int oci_rootless_write_maps(pid_t pid, const oci_config *c, mxc_error *e)
{
    int r;
    if (oci_rootless_nested() && ((r = oci_write_idmap(pid, "uid_map", c->uidmap, c->nuidmap)) < 0 ||
                                  (r = oci_write_idmap(pid, "gid_map", c->gidmap, c->ngidmap)) < 0))
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.idmap", -r, NULL, "rootless: writing the container's maps");
    if (oci_rootless_nested())
        return 0;
    return run_newmap("/usr/bin/newuidmap", pid, c->uidmap, c->nuidmap, e) < 0 ||
                   run_newmap("/usr/bin/newgidmap", pid, c->gidmap, c->ngidmap, e) < 0
               ? -1
               : 0;
}
