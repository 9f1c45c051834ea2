/* cninet.c — see cninet.h. */
#include "cninet.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>


/* Ahead of either rule set, in the same transaction: what a previous applier (dead with its
 * container; the namespace outlives it) left, of either model, goes — the pod gets one rule set. */
#define REPLACE_HEAD                                                                                   \
    "table inet " OCI_CNINET_TABLE "\n"                                                                \
    "delete table inet " OCI_CNINET_TABLE "\n"                                                         \
    "table inet " MXC_NET_TABLE "\n"                                                                   \
    "delete table inet " MXC_NET_TABLE "\n"
static const char REPLACE[] = REPLACE_HEAD;

/* That, then nothing in or out but loopback, in both families (inet); forwarding too. */
static const char REPLACE_LOOPBACK_ONLY[] = REPLACE_HEAD
    "table inet " OCI_CNINET_TABLE " {\n"
    "  chain input {\n"
    "    type filter hook input priority filter; policy drop;\n"
    "    iifname \"lo\" accept\n"
    "  }\n"
    "  chain forward {\n"
    "    type filter hook forward priority filter; policy drop;\n"
    "  }\n"
    "  chain output {\n"
    "    type filter hook output priority filter; policy drop;\n"
    "    oifname \"lo\" accept\n"
    "  }\n"
    "}\n";

static int refuse(mxc_error *e, const char *why)
{
    return mxc_err(e, MXC_E_POLICY_VALIDATION, "annotations: io.mxc.network: %s", why);
}

/* 1: the namespace at path is owned by this process's user namespace; 0 another; -1 unknown. */
static int owned_here(const char *path)
{
    int nfd = open(path, O_RDONLY | O_CLOEXEC);
    int ufd = nfd >= 0 ? ioctl(nfd, NS_GET_USERNS) : -1;
    struct stat owner, self;
    int rc = ufd >= 0 && fstat(ufd, &owner) == 0 && stat("/proc/self/ns/user", &self) == 0
                 ? owner.st_ino == self.st_ino && owner.st_dev == self.st_dev
                 : -1;
    if (ufd >= 0)
        close(ufd);
    if (nfd >= 0)
        close(nfd);
    return rc;
}

int oci_cninet_check(const oci_config *c, const char *path, mxc_net_model model, mxc_error *e)
{
    const char *type = json_string_value(json_object_get(c->annotations, OCI_CRI_CONTAINER_TYPE));
    const char *crio = json_string_value(json_object_get(c->annotations, OCI_CRIO_CONTAINER_TYPE));
    if ((type && strcmp(type, "sandbox") != 0) || (crio && strcmp(crio, "sandbox") != 0))
        return refuse(e, "no container of the pod applied it to the network namespace this container joins "
                         "(linux.namespaces network path): the pod's sandbox container applies it, an app "
                         "container (" OCI_CRI_CONTAINER_TYPE " or " OCI_CRIO_CONTAINER_TYPE " \"container\") never "
                         "does");
    if (model == MXC_NETM_PROXY)
        return refuse(e, "runtimeConfig.networkProxy (a proxy on the host's loopback) needs the userspace stack of a "
                         "network namespace of the container's own: not on one it joins by path");
    int own = owned_here(path);
    if (own != 1)
        return refuse(e, own < 0 ? "cannot tell who owns the network namespace this container joins"
                                 : "the network namespace this container joins is owned by another user namespace, "
                                   "whose root could remove the rules: a policy is applied only to one owned by "
                                   "mxc-oci's");
    return 0;
}

int oci_cninet_attach(const mxc_net_policy *np, const char *path, pid_t init, mxc_error *e)
{
    /* the namespace the init is in, and it is the one the config named */
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/ns/net", (int)init);
    int nsfd = open(p, O_RDONLY | O_CLOEXEC);
    struct stat in, named, self;
    if (nsfd < 0 || fstat(nsfd, &in) < 0 || stat(path, &named) < 0 || stat("/proc/self/ns/net", &self) < 0 ||
        in.st_ino != named.st_ino || in.st_dev != named.st_dev || (in.st_ino == self.st_ino && in.st_dev == self.st_dev)) {
        int err = errno;
        if (nsfd >= 0)
            close(nsfd);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.cninet", err, NULL,
                          "the init is not in the network namespace %s", path);
    }
    /* model 1: the plan's rule set, this host's destinations in it followed while the init lives
     * (loopback only when they cannot be); else loopback only */
    int rc = np->model == MXC_NETM_DIRECT ? mxc_net_rules_followed(np, nsfd, init, REPLACE, REPLACE_LOOPBACK_ONLY, e)
                                          : mxc_net_rules_into(nsfd, REPLACE_LOOPBACK_ONLY, e);
    close(nsfd);
    if (rc == 0 && np->model == MXC_NETM_GOVERNED)
        rc = mxc_governed_attach(np, NULL, init, e);
    return rc;
}
