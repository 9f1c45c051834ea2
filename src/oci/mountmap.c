/* mountmap.c — see mountmap.h. */
#include "mountmap.h"
#include "userns.h"
#include "mounttree.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether host ids [lo, lo+n) all lie on the host side of maps. */
static bool owned(const oci_idmap *maps, size_t nmaps, unsigned long long lo, unsigned long long n)
{
    unsigned long long cur = lo, end = lo + n;
    while (cur < end) {
        size_t k = 0;
        while (k < nmaps && !(maps[k].hid <= cur && cur < (unsigned long long)maps[k].hid + maps[k].n))
            k++;
        if (k == nmaps)
            return false;
        cur = (unsigned long long)maps[k].hid + maps[k].n;
    }
    return true;
}

static void maps_of(const oci_config *c, const oci_mount *m, bool gid, const oci_idmap **out, size_t *n)
{
    bool own = m->nuidmap > 0;
    *out = gid ? (own ? m->gidmap : c->gidmap) : (own ? m->uidmap : c->uidmap);
    *n = gid ? (own ? m->ngidmap : c->ngidmap) : (own ? m->nuidmap : c->nuidmap);
}

int oci_mountmap_check(const oci_config *c, mxc_error *e)
{
    for (size_t i = 0; i < c->nmounts; i++) {
        const oci_mount *m = &c->mounts[i];
        if (!m->idmap)
            continue;
        for (int gid = 0; gid < 2; gid++) {
            const oci_idmap *maps, *mine = gid ? c->gidmap : c->uidmap;
            size_t n, nmine = gid ? c->ngidmap : c->nuidmap;
            maps_of(c, m, gid, &maps, &n);
            for (size_t k = 0; k < n; k++) {
                const char *what = gid ? "gid" : "uid";
                char field[96];
                if (m->nuidmap)
                    snprintf(field, sizeof field, "mounts[%zu].%sMappings[%zu]", i, what, k);
                else
                    snprintf(field, sizeof field, "mounts[%zu] (idmap with the container's own %s maps)", i, what);
                bool disk = owned(mine, nmine, maps[k].cid, maps[k].n), host = owned(mine, nmine, maps[k].hid,
                                                                                       maps[k].n);
                if (!disk || !host)
                    return mxc_err(e, MXC_E_POLICY_VALIDATION,
                                   "config.json: %s: the container would %s %s %u..%u, which it does not own "
                                   "(its host %ss are those its user namespace maps onto, from %u): refused",
                                   field, !disk ? "write as the disk's" : "show files as host", what,
                                   !disk ? maps[k].cid : maps[k].hid,
                                   (unsigned)((!disk ? maps[k].cid : maps[k].hid) + maps[k].n - 1), what,
                                   nmine ? mine[0].hid : 0);
            }
        }
    }
    return 0;
}

/* The config's ranges as src/base/userns.h's (at most OCI_MAX_IDMAPS). */
static size_t ranges_of(const oci_idmap *m, size_t n, mxc_idmap_range *r)
{
    n = n > OCI_MAX_IDMAPS ? OCI_MAX_IDMAPS : n;
    for (size_t i = 0; i < n; i++)
        r[i] = (mxc_idmap_range){m[i].cid, m[i].hid, m[i].n};
    return n;
}

int oci_write_idmap(pid_t pid, const char *file, const oci_idmap *m, size_t n)
{
    mxc_idmap_range r[OCI_MAX_IDMAPS];
    return mxc_userns_write_map(pid, !strcmp(file, "gid_map"), r, ranges_of(m, n, r));
}

/* A user namespace with these maps (userns.h): its descriptor, or -errno. */
static int userns_of(const oci_idmap *u, size_t nu, const oci_idmap *g, size_t ng)
{
    mxc_idmap_range ur[OCI_MAX_IDMAPS], gr[OCI_MAX_IDMAPS];
    return mxc_userns_open(ur, ranges_of(u, nu, ur), gr, ranges_of(g, ng, gr));
}

int oci_mountmap_tree(int src, const oci_config *c, size_t idx, mxc_error *e)
{
    const oci_mount *m = &c->mounts[idx];
    const oci_idmap *u, *g;
    size_t nu, ng;
    maps_of(c, m, false, &u, &nu);
    maps_of(c, m, true, &g, &ng);
    int userns = userns_of(u, nu, g, ng);
    if (userns < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mount", -userns, NULL,
                          "mounts[%zu]: the idmapped mount's user namespace", idx);
    /* the flags on the whole tree as the mount says; the idmapping on its top only unless "ridmap" */
    mxc_tree_attr flags = {.set = m->attr_set, .clr = m->attr_clr, .propagation = MS_PRIVATE,
                           .recursive = m->recursive};
    mxc_tree_attr idm = {.idmap = true, .userns_fd = userns, .recursive = m->idmap == 2 && m->recursive};
    int tree = mxc_tree_clone(src, "", &flags), err = tree < 0 ? -tree : -mxc_tree_setattr(tree, &idm);
    close(userns);
    if (err) {
        if (tree >= 0)
            close(tree);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mount", err, NULL,
                          err == EINVAL ? "mounts[%zu].source %s: its filesystem cannot be mounted idmapped"
                                        : "mounts[%zu].source %s: an idmapped mount", idx, m->source);
    }
    return tree;
}
