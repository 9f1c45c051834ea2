/* mxcnet.c — see mxcnet.h. */
#include "mxcnet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applied.h"
#include "cninet.h"
#include "net.h"
#include "nodelocal.h"
#include "store.h"

/* "annotations: KEY: " before the engine's message (its code and remediation kept). */
static int named(mxc_error *e, const char *key)
{
    char prefix[96];
    int pl = snprintf(prefix, sizeof prefix, "annotations: %s: ", key);
    size_t ml = strlen(e->message), room = sizeof e->message - 1 - (size_t)pl;
    if (ml > room)
        ml = room;
    memmove(e->message + pl, e->message, ml);
    memcpy(e->message, prefix, (size_t)pl);
    e->message[pl + ml] = '\0';
    return -1;
}

static int refuse(mxc_error *e, const char *key, const char *why)
{
    mxc_err(e, MXC_E_POLICY_VALIDATION, "annotations: %s %s", key, why);
    return -1;
}

/* The annotation's section, checked as the engine checks a one-shot's network (request.h: the
 * same code as the wire's, with no request around it); every refusal a policy_validation. */
static int section(json_t *network, mxc_net_section *s, mxc_error *e)
{
    mxc_net_install(); /* src/net under the engine (net.h): mxc-oci plans a network here only */
    if (mxc_net_section_parse(network, s, e) == 0)
        return 0;
    e->code = MXC_E_POLICY_VALIDATION;
    return -1;
}

int oci_mxcnet_applier(int rootfd, const char *path, const json_t *want, char *applier, size_t sz, json_t **got)
{
    struct stat ns;
    if (stat(path, &ns) < 0)
        return 1;
    int dfd = dup(rootfd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return 1;
    }
    rewinddir(d); /* the descriptor's offset is shared with rootfd's other readers */
    struct dirent *de;
    int found = 1;
    while (found && (de = readdir(d))) {
        if (!oci_valid_id(de->d_name))
            continue;
        mxc_error se = {0};
        int dirfd = oci_store_open(rootfd, de->d_name, &se);
        if (dirfd < 0) {
            mxc_error_clear(&se);
            continue;
        }
        oci_state s;
        if (oci_state_read(dirfd, de->d_name, &s, &se) < 0) {
            mxc_error_clear(&se);
            close(dirfd);
            continue;
        }
        char p[64];
        struct stat its;
        snprintf(p, sizeof p, "/proc/%d/ns/net", (int)s.pid);
        if (oci_state_status(dirfd, &s) != OCI_STOPPED && stat(p, &its) == 0 && its.st_ino == ns.st_ino &&
            its.st_dev == ns.st_dev) {
            found = 2;
            int f = openat(dirfd, OCI_MXC_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            json_error_t je;
            json_t *rec = f >= 0 ? json_loadfd(f, 0, &je) : NULL;
            if (f >= 0)
                close(f);
            json_t *net = json_object_get(rec, "network");
            if (json_is_true(json_object_get(rec, "applied")) && json_is_object(net) && (!want || json_equal(net, want))) {
                snprintf(applier, sz, "%s", de->d_name);
                if (got)
                    *got = json_incref(net);
                found = 0;
            }
            json_decref(rec);
        }
        oci_state_free(&s);
        close(dirfd);
    }
    closedir(d);
    return found;
}

int oci_mxcnet_check(int rootfd, const oci_config *c, bool host_net, oci_mxcnet *m, mxc_error *e)
{
    memset(m, 0, sizeof *m);
    m->host_net = host_net;
    const char *key, *version = NULL, *network = NULL;
    json_t *v;
    bool any = false;
    json_object_foreach(c->annotations, key, v) {
        if (strncmp(key, OCI_MXC_PREFIX, strlen(OCI_MXC_PREFIX)) != 0)
            continue;
        any = true;
        if (strcmp(key, OCI_MXC_VERSION) == 0)
            version = json_string_value(v);
        else if (strcmp(key, OCI_MXC_NETWORK) == 0)
            network = json_string_value(v);
        else if (strncmp(key, OCI_APPLIED_PREFIX, strlen(OCI_APPLIED_PREFIX)) == 0)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "annotations: %.200s is mxc-oci's record of the policy it "
                           "applied (written at create, shown by state): a config cannot carry it, refused", key);
        else
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "annotations: %.200s is not an mxc annotation (mxc reads "
                           OCI_MXC_VERSION " and " OCI_MXC_NETWORK "): refused, never ignored", key);
    }
    if (!any)
        return 0;
    if (!version || strcmp(version, "1") != 0)
        return refuse(e, OCI_MXC_VERSION, version ? "must be \"1\" (this mxc reads version 1 of the io.mxc.* "
                                                    "annotations)"
                                                  : "is missing: io.mxc.* annotations say their version (\"1\")");
    if (!network)
        return 0;
    json_error_t je;
    m->network = json_loads(network, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(m->network)) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "annotations: " OCI_MXC_NETWORK " is not a JSON object (the wire "
                "contract's network section): %.200s", m->network ? "another JSON value" : je.text);
        oci_mxcnet_free(m);
        return -1;
    }
    mxc_net_section sec;
    mxc_net_policy np;
    if (section(m->network, &sec, e) < 0) {
        oci_mxcnet_free(m);
        return named(e, OCI_MXC_NETWORK);
    }
    const mxc_net_ops *net = mxc_net_ops_get(); /* src/net under the engine (netplan.h) */
    int rc = net->lower(&sec, &np, e);
    mxc_net_model model = np.model;
    if (rc == 0 && np.model == MXC_NETM_HOST) {
        mxc_err(e, MXC_E_POLICY_VALIDATION, "asks for the host network (unrestricted): a container's network is "
                "its config's linux.namespaces; a policy is for a network namespace of its own");
        rc = -1;
    }
    if (rc == 0) /* what the node's operator did not open (nodelocal.h) */
        rc = oci_nodelocal_check(&sec, m->network, np.model, e);
    if (rc == 0)
        rc = net->require(&np, geteuid() != 0, e);
    mxc_net_policy_free(&np); /* a check only: create plans it again once its directory exists */
    mxc_net_section_free(&sec);
    if (rc < 0) {
        oci_mxcnet_free(m);
        return named(e, OCI_MXC_NETWORK);
    }
    if (host_net) {
        oci_mxcnet_free(m);
        return refuse(e, OCI_MXC_NETWORK, "needs a network namespace of the container's own (linux.namespaces "
                      "network): the host's network cannot carry a policy");
    }
    const char *joined = NULL;
    for (size_t i = 0; i < c->njoin; i++)
        if (c->join[i].flag == CLONE_NEWNET)
            joined = c->join[i].path;
    if (!joined) {
        m->apply = true;
        return 0;
    }
    /* a pod's member: the namespace's maker applied it; never applied twice, never another one */
    int f = oci_mxcnet_applier(rootfd, joined, m->network, m->applier, sizeof m->applier, NULL);
    if (f == 1) {
        /* nobody of this root is in it: a pod's namespace made by CNI, its sandbox container first (cninet.h) */
        if (oci_cninet_check(c, joined, model, e) < 0) {
            oci_mxcnet_free(m);
            return -1;
        }
        m->apply = true;
        snprintf(m->cni, sizeof m->cni, "%s", joined);
        return 0;
    }
    if (f != 0) {
        oci_mxcnet_free(m);
        return refuse(e, OCI_MXC_NETWORK, "differs from the policy applied to the network namespace this container "
                      "joins (linux.namespaces network path), or none was: a policy is applied once, by the "
                      "container that makes the namespace, and a member carries the same one or none");
    }
    return 0;
}

/* process.env in c->doc: each "K=V" of env replaces K's entry or is added; c->env rebuilt on it. */
static int set_env(json_t *proc, const json_t *env)
{
    json_t *arr = json_object_get(proc, "env");
    if (!json_is_array(arr)) {
        arr = json_array();
        if (!arr || json_object_set_new(proc, "env", arr) < 0)
            return -1;
    }
    size_t i, j;
    json_t *kv, *old;
    json_array_foreach(env, i, kv) {
        const char *s = json_string_value(kv);
        size_t klen = strcspn(s, "=");
        bool done = false;
        json_array_foreach(arr, j, old) {
            const char *o = json_string_value(old);
            if (o && strncmp(o, s, klen) == 0 && o[klen] == '=') {
                json_array_set(arr, j, kv);
                done = true;
            }
        }
        if (!done && json_array_append(arr, kv) < 0)
            return -1;
    }
    return 0;
}

static int env_into_config(oci_config *c, const json_t *env, mxc_error *e)
{
    json_t *proc = json_object_get(c->doc, "process"), *arr;
    if (set_env(proc, env) < 0 || !json_is_array(arr = json_object_get(proc, "env")))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    const char **list = calloc(json_array_size(arr) + 1, sizeof *list);
    if (!list)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    size_t i;
    json_t *kv;
    json_array_foreach(arr, i, kv)
        list[i] = json_string_value(kv);
    free(c->env);
    c->env = list;
    c->nenv = json_array_size(arr);
    return 0;
}

static int read_record(int dirfd, json_t **rec)
{
    int f = openat(dirfd, OCI_MXC_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (f < 0)
        return errno == ENOENT ? 0 : -1;
    json_error_t je;
    *rec = json_loadfd(f, 0, &je);
    close(f);
    return *rec ? 0 : -1;
}

int oci_mxcnet_prepare(oci_mxcnet *m, int dir_fd, const char *dir_path, const char *id, oci_config *c,
                       mxc_error *e)
{
    if (!m->network)
        return 0;
    bool creds = json_object_get(m->network, "credentials") != NULL;
    if (m->apply) {
        char ca[PATH_MAX] = "";
        if (creds) {
            snprintf(ca, sizeof ca, "%s/" OCI_MXC_CA_DIR, dir_path);
            if (mkdirat(dir_fd, OCI_MXC_CA_DIR, 0755) < 0 || fchmodat(dir_fd, OCI_MXC_CA_DIR, 0755, 0) < 0)
                return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mxcnet", errno, NULL, "cannot make %s", ca);
        }
        /* the engine's network plan, whole: the proxy's records name the container and go beside
         * its state unless the caller names a file (MXC_PROXY_AUDIT_FILE, as for any sandbox); the
         * CA files are written on the host under ca, their paths as the container sees them */
        char audit[PATH_MAX];
        bool audit_fits = snprintf(audit, sizeof audit, "%s/" OCI_MXC_AUDIT, dir_path) < (int)sizeof audit;
        mxc_net_plan_opts o = {.sandbox = id, .audit_path = audit_fits ? audit : NULL,
                               .ca_base = creds ? ca : NULL, .ca_seen = OCI_MXC_CA_INSIDE};
        mxc_net_section sec;
        if (section(m->network, &sec, e) < 0)
            return named(e, OCI_MXC_NETWORK);
        m->plan = calloc(1, sizeof *m->plan);
        int rc = m->plan ? mxc_net_plan_build(&sec, &o, m->plan, e) : mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        mxc_net_section_free(&sec);
        if (rc < 0) {
            free(m->plan);
            m->plan = NULL;
            return named(e, OCI_MXC_NETWORK);
        }
        if (m->plan->creds)
            snprintf(m->ca_src, sizeof m->ca_src, "%s", ca);
        if (!(m->env = mxc_net_plan_env(m->plan)))
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    } else {
        /* a member of the pod: the applier's environment (its proxy's credential) and CA */
        int rootfd = -1;
        char root[PATH_MAX];
        snprintf(root, sizeof root, "%s", dir_path);
        char *slash = strrchr(root, '/');
        if (slash)
            *slash = '\0';
        rootfd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        mxc_error se = {0};
        int afd = rootfd >= 0 ? oci_store_open(rootfd, m->applier, &se) : -1;
        mxc_error_clear(&se);
        if (rootfd >= 0)
            close(rootfd);
        json_t *rec = NULL;
        if (afd < 0 || read_record(afd, &rec) < 0 || !rec) {
            if (afd >= 0)
                close(afd);
            json_decref(rec);
            return refuse(e, OCI_MXC_NETWORK, "the container that applied it to the joined network namespace went "
                          "away");
        }
        close(afd);
        m->env = json_incref(json_object_get(rec, "env"));
        json_decref(rec);
        if (!json_is_array(m->env))
            return refuse(e, OCI_MXC_NETWORK, "the record of the container that applied it is damaged");
        if (creds && snprintf(m->ca_src, sizeof m->ca_src, "%s/%s/" OCI_MXC_CA_DIR, root, m->applier) >=
                         (int)sizeof m->ca_src)
            return refuse(e, OCI_MXC_NETWORK, "the state root's path is too long");
    }
    if (env_into_config(c, m->env, e) < 0)
        return -1;
    if (m->ca_src[0]) {
        oci_mount *grown = realloc(c->mounts, (c->nmounts + 2) * sizeof *grown);
        if (!grown)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        c->mounts = grown;
        c->mounts[c->nmounts++] = (oci_mount){
            .dest = OCI_MXC_CA_INSIDE, .source = m->ca_src, .kind = OCI_MNT_BIND,
            .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
        memset(&c->mounts[c->nmounts], 0, sizeof c->mounts[0]);
    }
    json_t *rec = json_pack("{s:b, s:O, s:O}", "applied", m->apply, "network", m->network, "env", m->env);
    char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    json_decref(rec);
    int fd = text ? openat(dir_fd, OCI_MXC_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    size_t len = text ? strlen(text) : 0;
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (text) {
        explicit_bzero(text, len); /* the proxy's credential */
        free(text);
    }
    return ok ? 0 : mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.mxcnet", errno, NULL, "cannot write " OCI_MXC_FILE);
}

int oci_mxcnet_attach(oci_mxcnet *m, pid_t init, mxc_error *e)
{
    if (m->apply && m->plan &&
        (m->cni[0] ? oci_cninet_attach(m->plan, m->cni, init, e) < 0 : mxc_net_attach(m->plan, NULL, init, e) < 0))
        return named(e, OCI_MXC_NETWORK);
    oci_applied_log(m); /* in force from here: the operator's line (applied.h) */
    return 0;
}

void oci_mxcnet_wipe_secrets(const oci_mxcnet *m)
{
    extern char **environ;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(m->network, "credentials"), i, c) {
        const char *name = json_string_value(json_object_get(c, "secretEnv"));
        size_t n = name ? strlen(name) : 0;
        /* every entry of that name, not only getenv's first (an envp may hold a name twice) */
        for (char **v = environ; n && v && *v; v++)
            if (!strncmp(*v, name, n) && (*v)[n] == '=')
                explicit_bzero(*v + n + 1, strlen(*v + n + 1));
    }
}

void oci_mxcnet_free(oci_mxcnet *m)
{
    json_decref(m->network);
    json_decref(m->env);
    json_decref(m->applied);
    free(m->applied_msg);
    if (m->plan) {
        mxc_net_policy_free(m->plan);
        free(m->plan);
    }
    memset(m, 0, sizeof *m);
}

int oci_mxcnet_exec_env(int dir_fd, json_t *proc, mxc_error *e)
{
    json_t *rec = NULL;
    if (read_record(dir_fd, &rec) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "the container's " OCI_MXC_FILE " cannot be read");
    int rc = 0;
    json_t *env = json_object_get(rec, "env");
    if (json_is_array(env) && set_env(proc, env) < 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    json_decref(rec);
    return rc;
}
