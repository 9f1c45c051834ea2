/* rootops.c — see rootops.h. */
#include "rootops.h"
#include "cgroup.h"
#include "tmpcopy.h"

#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mxc_setup_op *add(oci_setup_ops *o, mxc_setup_kind kind, const char *target, const char *label)
{
    mxc_setup_op *op = &o->op[o->n++];
    *op = mxc_setup_op_at(kind, target, 0);
    snprintf(op->label, sizeof op->label, "%s", label);
    return op;
}

static bool is_fs(const oci_mount *m, const char *type)
{
    return m->kind == OCI_MNT_FS && !strcmp(m->type, type);
}

/* OCI-only: tmpcopyup, what the rootfs has at the destination copied into the tmpfs. */
static int copy_up(const mxc_setup_op *op, int target, int tree, mxc_error *e)
{
    mxc_error why = {0};
    if (oci_tmpcopyup(target, tree, &why) < 0) {
        oci_init_err(e, "%s (tmpfs at %s): tmpcopyup: %s", op->label, op->target, why.message);
        mxc_error_clear(&why);
        return -1;
    }
    return 0;
}

/* OCI-only: a cgroup mount, the container's own view, read-only (cgroup.h). */
static int run_cgroup(const mxc_setup_op *op, int root_fd, mxc_error *e)
{
    const oci_config *c = op->ctx;
    mxc_error why = {0};
    if (oci_cgroup_mount(root_fd, op->target, c->ns_flags & CLONE_NEWCGROUP, mxc_resolve_in_root, &why) < 0) {
        oci_init_err(e, "%s (%s at %s): %s", op->label, op->fstype, op->target, why.message);
        mxc_error_clear(&why);
        return -1;
    }
    return 0;
}

/* The config's mounts in order; a read-only tmpfs (a "ro" /dev) is made read-write, and read-only
 * at the end: the mounts and devices beneath it need their targets made first (runc does the same). */
static void lower_mounts(const oci_config *c, const int *binds, oci_setup_ops *o, oci_setup_ops *later)
{
    for (size_t i = 0; i < c->nmounts; i++) {
        const oci_mount *m = &c->mounts[i];
        char label[32];
        snprintf(label, sizeof label, "mounts[%zu]", i);
        bool parent = m->kind == OCI_MNT_BIND || m->by_parent;
        bool cg = is_fs(m, "cgroup") || is_fs(m, "cgroup2");
        mxc_setup_op *op = add(o, cg ? MXC_OP_CUSTOM : parent ? MXC_OP_ATTACH : MXC_OP_FRESHFS, m->dest, label);
        op->fstype = m->type, op->source = m->source, op->fsopt = m->fsopt, op->nfsopt = m->nfsopt;
        op->attrs = m->attr_set, op->src = parent && !cg ? binds[i] : -1;
        op->run = cg ? run_cgroup : NULL, op->ctx = c, op->fill = m->tmpcopyup ? copy_up : NULL;
        if (is_fs(m, "proc") || is_fs(m, "sysfs"))
            op->flags |= MXC_OPF_NOLINK;
        if (is_fs(m, "tmpfs") && (m->attr_set & MOUNT_ATTR_RDONLY)) {
            op->attrs &= ~(uint64_t)MOUNT_ATTR_RDONLY;
            add(later, MXC_OP_RDONLY, m->dest, label);
        }
        o->have_proc |= is_fs(m, "proc"); /* only at /proc (config.c) */
    }
}

/* The default devices (the host's nodes: a user namespace cannot mknod), linux.devices beyond them
 * (checked by the parent, devices.h), /dev's links (none without a /dev). */
static void lower_devices(const oci_config *c, const int *devs, const int *xdevs, oci_setup_ops *o)
{
    o->n += mxc_setup_dev_nodes(o->op + o->n, devs);
    for (size_t i = 0; i < c->nxdev; i++)
        add(o, MXC_OP_DEVICE, c->xdev[i].path, "linux.devices")->src = xdevs[i];
    o->n += mxc_setup_dev_links(o->op + o->n);
}

/* sysctls (namespaced only, checked by config.c) before /proc is made read-only; the masks and
 * read-only paths: the engine's /proc rules (setupops.h), then the config's; absent: nothing to do. */
static void lower_paths(const oci_config *c, oci_setup_ops *o)
{
    for (size_t i = 0; i < c->nsysctl; i++) {
        if (!(c->ns_flags & oci_sysctl_ns(c->sysctl[i][0])))
            continue; /* a pod's namespace, joined by path: mxc-oci wrote it there (lifecycle.c) */
        mxc_setup_op *op = add(o, MXC_OP_SYSCTL, c->sysctl[i][0], "linux.sysctl");
        op->text = c->sysctl[i][1], op->flags = o->have_proc ? 0 : MXC_OPF_NOPROC;
    }
    const uint64_t ro = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC; /* as runc's */
    if (o->have_proc)
        o->n += mxc_setup_proc_rules(o->op + o->n, "maskedPaths", "readonlyPaths");
    for (size_t i = 0; i < c->nmasked; i++)
        add(o, MXC_OP_MASK, c->masked[i], "maskedPaths")->flags = MXC_OPF_OPTIONAL;
    for (size_t i = 0; i < c->nreadonly; i++) {
        mxc_setup_op *op = add(o, MXC_OP_READONLY, c->readonly[i], "readonlyPaths");
        op->flags = MXC_OPF_OPTIONAL, op->attrs = ro;
    }
}

int oci_setup_lower(const oci_config *c, const int *binds, const int *devs, const int *xdevs, oci_setup_ops *out,
                    mxc_error *e)
{
    size_t cap = c->nmounts + MXC_DEV_NNODES + c->nxdev + MXC_DEV_NLINKS + c->nsysctl + MXC_PROC_NRULES +
                 c->nmasked + c->nreadonly;
    oci_setup_ops later = {.op = calloc(c->nmounts + 1, sizeof *later.op)};
    *out = (oci_setup_ops){.op = calloc(cap + c->nmounts + 1, sizeof *out->op)};
    if (!out->op || !later.op) {
        free(later.op);
        oci_setup_free(out);
        return oci_init_err(e, "out of memory");
    }
    lower_mounts(c, binds, out, &later);
    lower_devices(c, devs, xdevs, out);
    lower_paths(c, out);
    memcpy(out->op + out->n, later.op, later.n * sizeof *later.op);
    out->n += later.n;
    free(later.op);
    return 0;
}

void oci_setup_free(oci_setup_ops *ops)
{
    free(ops->op);
    *ops = (oci_setup_ops){0};
}
