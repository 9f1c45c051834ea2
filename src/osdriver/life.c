/* life.c — see life.h. */
#include "life.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "cleanup.h"
#include "dirtree.h"
#include "drvcfg.h"
#include "fdio.h"
#include "front.h"
#include "image.h"
#include "layer.h"
#include "logcap.h"
#include "providers.h"
#include "run.h"
#include "userns.h"

#define IMAGE_COND "mxc.io/image"
#define STOP_GRACE_MS 10000 /* SIGTERM's grace before SIGKILL (the loop waits meanwhile) */

/* MXC_OCI_REFUSED_BIND_SOURCES (added to what the operator set) names the state directory and
 * the socket: mxc-oci refuses a bind source that is, covers or lies inside either as it resolves
 * it (by descriptor), so a grant swapped for a link between grants_ok's check and mxc-oci's bind
 * (review of issue 37, (b)) reaches nothing of the driver's or another sandbox's. */
static int refuse_in_oci(const osd_rt *rt, mxc_error *e)
{
    char sock[PATH_MAX + 2] = "", cwd[PATH_MAX];
    if (rt->socket && rt->socket[0] != '/' && !getcwd(cwd, sizeof cwd))
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "getcwd", errno, NULL, "cannot make --socket absolute");
    if (rt->socket && snprintf(sock, sizeof sock, "%s%s%s", rt->socket[0] == '/' ? "" : cwd,
                               rt->socket[0] == '/' ? "" : "/", rt->socket) >= (int)sizeof sock)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "--socket is too long");
    if (strchr(rt->state, ':') || strchr(sock, ':'))
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "--state-dir and --socket must hold no ':' (mxc-oci is told "
                                                     "them as a ':'-separated list, MXC_OCI_REFUSED_BIND_SOURCES)");
    const char *was = getenv("MXC_OCI_REFUSED_BIND_SOURCES");
    char *v = NULL;
    if (asprintf(&v, "%s%s%s%s%s", was && *was ? was : "", was && *was ? ":" : "", rt->state, sock[0] ? ":" : "",
                 sock) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    int rc = setenv("MXC_OCI_REFUSED_BIND_SOURCES", v, 1);
    free(v);
    return rc < 0 ? mxc_err_os(e, MXC_E_BACKEND_ERROR, "setenv", errno, NULL, "MXC_OCI_REFUSED_BIND_SOURCES") : 0;
}

/* MXC_OCI_BIND_ROOTS names the --grant-root directories and the supervisor (the one bind the
 * driver adds outside its bundle): mxc-oci refuses a bind source that, as it resolves it (by
 * descriptor), lies outside them all, so a grant made a link after grants_ok's check by path
 * (a window of an image's resolution and hold at Create) reaches nothing else of the host. */
static int roots_in_oci(const osd_rt *rt, mxc_error *e)
{
    char v[(PATH_MAX + 1) * 17] = "";
    size_t n = 0;
    for (size_t i = 0; i <= rt->ngrant_roots; i++) {
        const char *p = i < rt->ngrant_roots ? rt->grant_roots[i] : rt->supervisor;
        if (!p)
            continue;
        if (strchr(p, ':'))
            return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "--grant-root and --supervisor must hold no ':' (mxc-oci is "
                                                         "told them as a ':'-separated list, MXC_OCI_BIND_ROOTS)");
        int w = snprintf(v + n, sizeof v - n, "%s%s", n ? ":" : "", p);
        if (w < 0 || (size_t)w >= sizeof v - n)
            return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "--grant-root: too long a list");
        n += (size_t)w;
    }
    return setenv("MXC_OCI_BIND_ROOTS", v, 1) < 0
               ? mxc_err_os(e, MXC_E_BACKEND_ERROR, "setenv", errno, NULL, "MXC_OCI_BIND_ROOTS")
               : 0;
}

int osd_rt_open(osd_rt *rt, const osd_store *st, const char *state_dir, mxc_error *e)
{
    rt->runfd = rt->workfd = -1;
    if (!realpath(state_dir, rt->state))
        return mxc_err_os(e, MXC_E_BACKEND_UNAVAILABLE, "state.path", errno, NULL, "cannot resolve %s", state_dir);
    snprintf(rt->oci_root, sizeof rt->oci_root, "%s/oci", rt->state);
    if (refuse_in_oci(rt, e) < 0 || roots_in_oci(rt, e) < 0)
        return -1;
    const char *names[] = {"oci", "run", "work"};
    int *fds[] = {NULL, &rt->runfd, &rt->workfd};
    for (int i = 0; i < 3; i++) {
        if (mkdirat(st->dirfd, names[i], 0700) < 0 && errno != EEXIST)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "state.mkdir", errno, NULL, "cannot make %s/%s", rt->state,
                              names[i]);
        int fd = openat(st->dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 077)) {
            if (fd >= 0)
                close(fd);
            return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "%s/%s is not this user's own directory (mode 0700)",
                           rt->state, names[i]);
        }
        if (fds[i])
            *fds[i] = fd;
        else
            close(fd);
    }
    return 0;
}

void osd_rt_close(osd_rt *rt)
{
    if (rt->runfd >= 0)
        close(rt->runfd);
    if (rt->workfd >= 0)
        close(rt->workfd);
    rt->runfd = rt->workfd = -1;
}

/* ---- the record's phase ---- */

/* The phase; *held the image the sandbox holds (the ID its mxc.io/image condition's message
 * records; a record written before IDs were: the template's name), or NULL: none held. */
static const char *phase_of(const pb_sandbox *sb, const char **held)
{
    const char *phase = "";
    *held = NULL;
    for (size_t i = 0; sb->status && i < sb->status->n_conditions; i++) {
        const Openshell__Compute__V1__DriverCondition *c = sb->status->conditions[i];
        if (!strcmp(c->type, "Ready"))
            phase = c->reason;
        else if (!strcmp(c->type, IMAGE_COND) && !strcmp(c->status, "True"))
            *held = osd_image_id_ok(c->message) ? c->message
                    : sb->spec && sb->spec->template_ ? sb->spec->template_->image
                                                      : NULL;
    }
    return phase;
}

static void now_rfc3339(char *buf, size_t sz)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sz, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* sb recorded with the phase (the Ready condition's reason) and the image it holds (its ID, in
 * the mxc.io/image condition's message; NULL: none). */
static int put_phase(const osd_store *st, pb_sandbox *sb, const char *phase, const char *held, mxc_error *e)
{
    char when[32];
    now_rfc3339(when, sizeof when);
    Openshell__Compute__V1__DriverCondition ready = OPENSHELL__COMPUTE__V1__DRIVER_CONDITION__INIT,
                                            img = OPENSHELL__COMPUTE__V1__DRIVER_CONDITION__INIT;
    ready.type = "Ready";
    ready.status = !strcmp(phase, "Running") ? "True" : "False";
    ready.reason = (char *)phase;
    ready.last_transition_time = when;
    img.type = IMAGE_COND;
    img.status = held ? "True" : "False";
    img.reason = held ? "Held" : "NotHeld";
    img.message = held ? (char *)held : "";
    Openshell__Compute__V1__DriverCondition *conds[] = {&ready, &img};
    pb_status status = OPENSHELL__COMPUTE__V1__DRIVER_SANDBOX_STATUS__INIT;
    status.sandbox_name = sb->name;
    status.instance_id = sb->id;
    status.conditions = conds;
    status.n_conditions = 2;
    pb_status *was = sb->status;
    sb->status = &status;
    int rc = osd_store_put(st, sb, e);
    sb->status = was;
    return rc;
}

/* ---- mxc-oci ---- */

static int oci(const osd_rt *rt, const char *verb, const char *a, const char *b, const char *c, int out_fd,
               osd_run_io *io)
{
    const char *argv[] = {rt->mxc_oci, "--root", rt->oci_root, verb, a, b, c, NULL};
    return osd_run(argv, out_fd, io);
}

/* mxc-oci state's status of id ("running", "created", "stopped"), or "absent"; *pid its init. */
static void oci_status(const osd_rt *rt, const char *id, char *buf, size_t sz, long *pid)
{
    osd_run_io io;
    snprintf(buf, sz, "absent");
    *pid = 0;
    if (oci(rt, "state", id, NULL, NULL, -1, &io) != 0)
        return;
    json_t *j = json_loads(io.out, 0, NULL);
    const char *s = json_string_value(json_object_get(j, "status"));
    if (s)
        snprintf(buf, sz, "%s", s);
    *pid = (long)json_integer_value(json_object_get(j, "pid"));
    json_decref(j);
}

/* ---- the bundle ---- */

/* The host id that ns 0 maps to in /proc/PID/{uid,gid}_map, or -1. */
static long mapped_root(long pid, bool gid)
{
    mxc_idmap_range r[1];
    return mxc_userns_read_map((pid_t)pid, gid, r, 1) == 1 && r[0].inside == 0 && r[0].count > 0 ? (long)r[0].outside
                                                                                                  : -1;
}

/* The token (if any) given to the sandbox's root as mapped: the init of a created container. */
static int give_token(const osd_rt *rt, const char *id, mxc_error *e)
{
    char path[PATH_MAX], status[32];
    snprintf(path, sizeof path, "%s/token", id);
    _cleanup_fd_ int fd = openat(rt->runfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "token.open", errno, NULL, "cannot open %s's token", id);
    long pid;
    oci_status(rt, id, status, sizeof status, &pid);
    long uid = pid > 0 ? mapped_root(pid, false) : -1, gid = pid > 0 ? mapped_root(pid, true) : -1;
    if (uid <= 0 || gid <= 0 || fchown(fd, (uid_t)uid, (gid_t)gid) < 0 || fchmod(fd, 0400) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot give %s's token to its root (mapped %ld:%ld)", id, uid, gid);
    return 0;
}

/* mxc-oci create of the bundle run/ID, its stdio to lfd, with the secrets of sb's providers
 * (driver_config's "providers", providers.h) in its environment alone: read now, wiped after.
 * The exit status, or -1 with *e (a secret that cannot be read). */
static int oci_create(const osd_rt *rt, const pb_sandbox *sb, const char *bundle, int lfd, mxc_error *e)
{
    const pb_template *t = sb->spec && sb->spec->template_ ? sb->spec->template_ : NULL;
    json_t *doc = t && t->driver_config && t->driver_config->n_fields ? osd_driver_config_json(t->driver_config, e)
                                                                       : NULL;
    char *kv[OSD_MAX_PROVIDERS];
    size_t n = 0;
    int rc = osd_providers_secrets(json_object_get(doc, "providers"), rt->cfg, kv, &n, e);
    json_decref(doc);
    if (rc < 0)
        return -1;
    const char *argv[] = {rt->mxc_oci, "--root", rt->oci_root, "create", "--bundle", bundle, sb->id, NULL};
    osd_run_io io;
    rc = osd_run_env(argv, lfd, &io, kv, n);
    osd_providers_wipe(kv, n);
    return rc;
}

/* What the failed create appended to the log from offset at (never an earlier run's: the
 * workload wrote those; from the start when the cap truncated it meanwhile), its control
 * bytes made '?' (review of issue 37: the workload's bytes, escapes included, reached the
 * gateway's error). */
static void create_said(const osd_rt *rt, const char *log, off_t at, char *why, size_t sz)
{
    _cleanup_fd_ int r = openat(rt->workfd, log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat now;
    if (r >= 0 && fstat(r, &now) == 0 && now.st_size < at)
        at = 0;
    ssize_t n = r < 0 ? 0 : pread(r, why, sz - 1, at);
    why[n > 0 ? n : 0] = 0;
    for (size_t k = strlen(why); k > 0 && why[k - 1] == '\n'; k--)
        why[k - 1] = 0;
    for (char *c = why; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = *c == '\n' ? ' ' : '?';
}

/* mxc-oci create then start of the bundle run/ID, its stdio through a keeper that caps the
 * log work/ID/log (logcap.h). */
static int launch(const osd_rt *rt, const pb_sandbox *sb, mxc_error *e)
{
    const char *id = sb->id;
    char bundle[PATH_MAX + 200], log[PATH_MAX];
    snprintf(bundle, sizeof bundle, "%s/run/%s", rt->state, id);
    snprintf(log, sizeof log, "%s/log", id);
    _cleanup_fd_ int lfd = openat(rt->workfd, log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    osd_run_io io;
    if (lfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "log.open", errno, NULL, "cannot open %s's log", id);
    oci(rt, "delete", "--force", id, NULL, -1, &io); /* what a stop or crash left */
    struct stat before;
    if (fstat(lfd, &before) < 0)
        before.st_size = 0;
    _cleanup_fd_ int wr = -1;
    _cleanup_fd_ int done = -1;
    if (osd_log_keeper(lfd, &wr, &done, e) < 0)
        return -1;
    int crc = oci_create(rt, sb, bundle, wr, e);
    close(wr);
    wr = -1; /* the container's now: the keeper ends with the sandbox's last process */
    if (crc != 0) {
        char why[512] = "";
        if (crc > 0) {
            osd_log_keeper_ended(done, 3000); /* then all it was sent is written */
            create_said(rt, log, before.st_size, why, sizeof why);
        }
        return crc < 0 ? -1 : mxc_err(e, MXC_E_BACKEND_ERROR, "mxc-oci create %s failed: %s", id, why);
    }
    if (give_token(rt, id, e) < 0 || oci(rt, "start", id, NULL, NULL, -1, &io) != 0) {
        if (!e->message[0])
            mxc_err(e, MXC_E_BACKEND_ERROR, "mxc-oci start %s failed: %s", id, io.err);
        oci(rt, "delete", "--force", id, NULL, -1, &io);
        return -1;
    }
    return 0;
}

/* run/ID/config.json: mxc-oci spec's, made the sandbox's (bundle.h). */
static int write_config(const osd_rt *rt, int bfd, const char *bundle, pb_sandbox *sb, const json_t *fragment,
                        const osd_limits *lim, mxc_error *e)
{
    osd_run_io io;
    if (oci(rt, "spec", "--bundle", bundle, NULL, -1, &io) != 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "mxc-oci spec failed: %s", io.err);
    _cleanup_fd_ int cfd = openat(bfd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_t *cfg = cfd < 0 ? NULL : json_loadfd(cfd, 0, NULL);
    if (!cfg)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot read the config.json mxc-oci spec wrote");
    char tok[PATH_MAX + 256];
    snprintf(tok, sizeof tok, "%.*s/token", PATH_MAX + 200, bundle);
    osd_bundle_in in = {rt->supervisor, sb->spec->sandbox_token[0] ? tok : NULL, rt->endpoint,
                        rt->gateway ? rt->gateway->entry : NULL};
    int rc = osd_bundle_config(cfg, sb, fragment, lim, &in, e);
    if (rc == 0 && mxc_json_replace_at(bfd, "config.json", NULL, cfg) < 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "cannot write %s/config.json", bundle);
    json_decref(cfg);
    return rc;
}

/* bfd's rootfs: an overlay of lowers under work/ID/layer/upper (layer.h; a sandbox made before
 * layers were: work/ID/upper). */
static int mount_rootfs(const osd_rt *rt, int bfd, const char *id, const char *lowers, mxc_error *e)
{
    char opts[8192], p[PATH_MAX];
    snprintf(p, sizeof p, "%s/layer", id);
    const char *in = faccessat(rt->workfd, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ? "/layer" : "";
    int n = snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s/work/%s%s/upper,workdir=%s/work/%s%s/work", lowers,
                     rt->state, id, in, rt->state, id, in);
    snprintf(p, sizeof p, "/proc/self/fd/%d/rootfs", bfd);
    if (n < 0 || (size_t)n >= sizeof opts || mount("overlay", p, "overlay", MS_NODEV | MS_NOSUID, opts) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "rootfs.mount", errno, NULL, "cannot mount %s's rootfs overlay", id);
    return 0;
}

/* The rootfs of a recorded sandbox mounted again when it is not (a host reboot takes the
 * mount and Podman's hold): the image held again, the same upper layer. */
static int remount(const osd_rt *rt, const pb_sandbox *sb, mxc_error *e)
{
    _cleanup_fd_ int bfd = openat(rt->runfd, sb->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    _cleanup_fd_ int r = bfd < 0 ? -1 : openat(bfd, "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct statfs fs;
    if (r < 0 || fstatfs(r, &fs) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "rootfs.open", errno, NULL, "%s's bundle is gone", sb->id);
    if (fs.f_type == OVERLAYFS_SUPER_MAGIC)
        return 0;
    const char *image = sb->spec && sb->spec->template_ ? sb->spec->template_->image : "", *held;
    char lowers[4096], id[OSD_IMAGE_ID_LEN + 1];
    phase_of(sb, &held);
    if (held && osd_image_id_ok(held))
        snprintf(id, sizeof id, "%s", held); /* the image of the create, whatever the name names now */
    else if (osd_image_resolve(rt->podman, image, id, sizeof id, e) < 0) /* a record from before IDs */
        return -1;
    _cleanup_fd_ int wfd = openat(rt->workfd, sb->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wfd < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "layer.open", errno, NULL, "%s's layer is gone", sb->id);
    if (osd_layer_mount(wfd, e) < 0) /* the layer first: the overlay's upper is in it */
        return -1;
    if (osd_image_hold(rt->podman, id, image, lowers, sizeof lowers, e) < 0)
        return -1;
    if (mount_rootfs(rt, bfd, sb->id, lowers, e) < 0) {
        osd_image_release(rt->podman, id);
        return -1;
    }
    return 0;
}

/* run/ID (the token, rootfs: an overlay of lowers under work/ID/layer/upper, config.json);
 * work/ID/layer (layer.h). */
static int make_bundle(const osd_rt *rt, pb_sandbox *sb, const json_t *fragment, const osd_limits *lim,
                       const char *lowers, mxc_error *e)
{
    const char *id = sb->id;
    char bundle[PATH_MAX + 200], wdir[PATH_MAX + 200];
    if (mkdirat(rt->runfd, id, 0700) < 0 || mkdirat(rt->workfd, id, 0700) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "bundle.mkdir", errno, NULL, "cannot make %s's directories", id);
    _cleanup_fd_ int bfd = openat(rt->runfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    _cleanup_fd_ int wfd = openat(rt->workfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (bfd < 0 || wfd < 0 || mkdirat(bfd, "rootfs", 0755) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "bundle.mkdir", errno, NULL, "cannot make %s's directories", id);
    snprintf(wdir, sizeof wdir, "%s/work/%s", rt->state, id);
    if (osd_layer_make(wfd, wdir, rt->layer_size, e) < 0)
        return -1;
    const char *tok = sb->spec->sandbox_token;
    if (tok[0] && mxc_replace_at(bfd, "token", NULL, tok, strlen(tok), 0400) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "token.write", errno, NULL, "cannot write %s's token", id);
    if (mount_rootfs(rt, bfd, id, lowers, e) < 0)
        return -1;
    snprintf(bundle, sizeof bundle, "%s/run/%s", rt->state, id);
    return write_config(rt, bfd, bundle, sb, fragment, lim, e);
}

/* Everything of id gone: the container, the rootfs mount, the layer's mount and loop device,
 * the image's hold (image_ref: its ID, NULL: none), the bundle, the layer and its image; the
 * record is the caller's. */
static void teardown(const osd_rt *rt, const char *id, const char *image_ref)
{
    osd_run_io io;
    char p[PATH_MAX + 64];
    oci(rt, "delete", "--force", id, NULL, -1, &io);
    snprintf(p, sizeof p, "%s/run/%s/rootfs", rt->state, id);
    while (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
        ;
    snprintf(p, sizeof p, "%s/work/%s", rt->state, id);
    osd_layer_unmount(p); /* its loop device goes with it (autoclear) */
    if (image_ref)
        osd_image_release(rt->podman, image_ref);
    int r1 = mxc_remove_tree_at(rt->runfd, id), r2 = mxc_remove_tree_at(rt->workfd, id);
    if (r1 < 0 || r2 < 0)
        fprintf(stderr, "mxc-openshell-driver: cannot remove all of %s: %s\n", id, strerror(r1 < 0 ? -r1 : -r2));
}

/* A grant inside one of the operator's --grant-root directories: path resolved as the kernel
 * will (a link followed only where no live sandbox can write; a missing tail taken as written
 * after the deepest existing directory), its canonical form compared component-wise. */
static int inside_roots(const osd_rt *rt, const char *path, const char *what, mxc_error *e)
{
    if (rt->ngrant_roots == 0) {
        mxc_err(e, MXC_E_POLICY_VALIDATION,
                "template.driver_config: policy refused: filesystem_policy grants %s %s, and this driver grants no "
                "host path (its operator names none with --grant-root)",
                what, path);
        mxc_err_set_remediation(e, "start the driver with --grant-root DIR for each host directory its sandboxes "
                                   "may be granted");
        return -1;
    }
    const mxc_hostpath_rules rules = {.claims = true};
    char canon[PATH_MAX];
    int fd = -1, dir = -1;
    mxc_error ge = {0};
    int rc = mxc_hostpath_resolve(&rules, path, true, canon, sizeof canon, &fd, &dir, &ge);
    if (fd >= 0)
        close(fd);
    if (dir >= 0)
        close(dir);
    if (rc < 0 && rc != -ENOENT) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "template.driver_config: policy refused: %s", ge.message);
        mxc_error_clear(&ge);
        return -1;
    }
    for (size_t i = 0; i < rt->ngrant_roots; i++) {
        const char *r = rt->grant_roots[i];
        size_t n = strlen(r);
        if (!strcmp(r, "/") || (!strncmp(canon, r, n) && (canon[n] == '\0' || canon[n] == '/')))
            return 0;
    }
    mxc_err(e, MXC_E_POLICY_VALIDATION,
            "template.driver_config: policy refused: filesystem_policy grants %s %s (%s on this host), outside every "
            "--grant-root of this driver",
            what, path, canon);
    mxc_err_set_remediation(e, "grant a path inside a directory the driver's --grant-root names");
    return -1;
}

/* No grant reaches the driver's machinery: its socket, its state directory (records, bundles,
 * tokens, upper layers), nor mxc's own state (mxc_hostpath_check_grant_against, by descriptor),
 * and each lies inside a --grant-root. */
int osd_sbx_grants_ok(const osd_rt *rt, const json_t *fragment, mxc_error *e)
{
    const mxc_hostpath_owned own[] = {{rt->state, "the driver's state directory", true},
                                      {rt->socket, "the driver's socket", true}};
    static const char *const LISTS[][2] = {{"readwritePaths", "read-write"}, {"readonlyPaths", "read-only"}};
    json_t *fs = fragment ? json_object_get(fragment, "filesystem") : NULL;
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(fs, LISTS[l][0]), i, p) {
            mxc_error ge = {0};
            const char *path = json_string_value(p);
            if (inside_roots(rt, path, LISTS[l][1], e) < 0)
                return -1;
            if (mxc_hostpath_check_grant(path, LISTS[l][1], &ge) < 0 ||
                mxc_hostpath_check_grant_against(path, LISTS[l][1], own, rt->socket ? 2 : 1,
                                                 "grant a directory that neither contains nor lies inside the driver's "
                                                 "state directory or socket",
                                                 &ge) < 0) {
                mxc_err(e, MXC_E_POLICY_VALIDATION, "template.driver_config: policy refused: %s", ge.message);
                mxc_error_clear(&ge);
                return -1;
            }
        }
    }
    return 0;
}

int osd_sbx_create(const osd_rt *rt, const osd_store *st, pb_sandbox *sb, const json_t *fragment,
                   const osd_limits *lim, mxc_error *e)
{
    const char *image = sb->spec->template_->image;
    char lowers[4096], iid[OSD_IMAGE_ID_LEN + 1];
    if (rt->layer_refused)
        return mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "%s", rt->layer_refused);
    if (osd_sbx_grants_ok(rt, fragment, e) < 0)
        return -1;
    if (put_phase(st, sb, "Creating", NULL, e) < 0) /* first: a crash from here on is swept */
        return -1;
    /* the name resolved once: held, recorded and released by ID (a tag moved later changes nothing) */
    if (osd_image_resolve(rt->podman, image, iid, sizeof iid, e) < 0 ||
        osd_image_hold(rt->podman, iid, image, lowers, sizeof lowers, e) < 0) {
        osd_store_remove(st, sb->id);
        return -1;
    }
    if (put_phase(st, sb, "Creating", iid, e) < 0 || make_bundle(rt, sb, fragment, lim, lowers, e) < 0 ||
        launch(rt, sb, e) < 0 || put_phase(st, sb, "Running", iid, e) < 0) {
        teardown(rt, sb->id, iid);
        osd_store_remove(st, sb->id);
        return -1;
    }
    return 0;
}

/* mxc-oci kill ID SIG, then up to ms for the init to be gone: whether it is (status: what
 * mxc-oci state said last). */
static bool ended(const osd_rt *rt, const char *id, const char *sig, int ms, char *status, size_t sz)
{
    osd_run_io io;
    long pid;
    oci(rt, "kill", id, sig, NULL, -1, &io);
    for (int waited = 0;; waited += 50) {
        oci_status(rt, id, status, sz, &pid);
        if (strcmp(status, "running") && strcmp(status, "created"))
            return true;
        if (waited >= ms)
            return false;
        usleep(50000);
    }
}

int osd_sbx_stop(const osd_rt *rt, const osd_store *st, const char *id, mxc_error *e)
{
    pb_sandbox *sb;
    if (!osd_store_load(st, id, &sb))
        return 0;
    osd_run_io io;
    const char *held;
    phase_of(sb, &held);
    char status[32];
    if (!ended(rt, id, "TERM", STOP_GRACE_MS, status, sizeof status)) /* the supervisor's own shutdown first */
        ended(rt, id, "KILL", 5000, status, sizeof status);
    int rc = oci(rt, "delete", "--force", id, NULL, -1, &io) == 0 || !strcmp(status, "absent")
                 ? put_phase(st, sb, "Stopped", held, e)
                 : mxc_err(e, MXC_E_BACKEND_ERROR, "mxc-oci delete %s failed: %s", id, io.err);
    openshell__compute__v1__driver_sandbox__free_unpacked(sb, NULL);
    return rc < 0 ? -1 : 1;
}

/* A Start runs the bundle again, and mxc-oci resolves its grants anew: they are judged again as
 * at Create, or a grant's path that leads elsewhere by now (a link planted where a sandbox could
 * write, that sandbox stopped or deleted since, so that no live one can write it) would be bound
 * wherever it leads, outside every --grant-root (review of this session's changes). */
static int grants_still_ok(const osd_rt *rt, const pb_sandbox *sb, mxc_error *e)
{
    osd_judge j = {rt->cfg, true};
    osd_limits lim;
    json_t *fragment = NULL;
    int rc = osd_spec_check(sb, &j, &lim, &fragment, e) < 0 || osd_sbx_grants_ok(rt, fragment, e) < 0 ? -1 : 0;
    json_decref(fragment);
    return rc;
}

int osd_sbx_start(const osd_rt *rt, const osd_store *st, const char *id, mxc_error *e)
{
    pb_sandbox *sb;
    if (!osd_store_load(st, id, &sb))
        return 0;
    const char *held;
    const char *phase = phase_of(sb, &held);
    char status[32];
    long pid;
    oci_status(rt, id, status, sizeof status, &pid);
    int rc = 0;
    if (!strcmp(phase, "Creating"))
        rc = mxc_err(e, MXC_E_UNSUPPORTED_PHASE, "sandbox %s is still being created", id);
    else if (strcmp(status, "running")) /* stopped, or exited on its own: again from the same bundle */
        rc = grants_still_ok(rt, sb, e) < 0 || remount(rt, sb, e) < 0 || launch(rt, sb, e) < 0 ||
                     put_phase(st, sb, "Running", held, e) < 0
                 ? -1
                 : 0;
    openshell__compute__v1__driver_sandbox__free_unpacked(sb, NULL);
    return rc < 0 ? -1 : 1;
}

int osd_sbx_delete(const osd_rt *rt, const osd_store *st, const char *id)
{
    pb_sandbox *sb;
    if (!osd_store_load(st, id, &sb))
        return 0;
    const char *held;
    phase_of(sb, &held);
    teardown(rt, id, held);
    osd_store_remove(st, id);
    openshell__compute__v1__driver_sandbox__free_unpacked(sb, NULL);
    return 1;
}

static void set_str(char **field, const char *v)
{
    if (*field && *field != protobuf_c_empty_string)
        free(*field);
    *field = strdup(v);
}

void osd_sbx_observe(const osd_rt *rt, pb_sandbox *sb)
{
    for (size_t i = 0; sb->status && i < sb->status->n_conditions; i++) {
        Openshell__Compute__V1__DriverCondition *c = sb->status->conditions[i];
        if (strcmp(c->type, "Ready") || strcmp(c->reason, "Running"))
            continue;
        char status[32];
        long pid;
        oci_status(rt, sb->id, status, sizeof status, &pid);
        if (!strcmp(status, "running"))
            return;
        char msg[128];
        snprintf(msg, sizeof msg, "the sandbox's init is gone (mxc-oci state: %s): it exited or was killed", status);
        set_str(&c->status, "False");
        set_str(&c->reason, "Exited");
        set_str(&c->message, msg);
    }
}

void osd_sbx_sweep(const osd_rt *rt, const osd_store *st)
{
    pb_sandbox **list;
    size_t n;
    mxc_error e = {0};
    if (osd_store_list(st, &list, &n, true, &e) < 0) {
        fprintf(stderr, "mxc-openshell-driver: sweep: %s\n", e.message);
        mxc_error_clear(&e);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *held;
        if (strcmp(phase_of(list[i], &held), "Creating"))
            continue;
        fprintf(stderr, "mxc-openshell-driver: %s was left half-created: torn down\n", list[i]->id);
        teardown(rt, list[i]->id, held);
        osd_store_remove(st, list[i]->id);
    }
    osd_store_free(list, n);
}
