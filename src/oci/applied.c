/* applied.c — see applied.h. */
#include "applied.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void (*oci_applied_logger)(const char *msg);

/* What the container's network is, and the policy in force there: *network a new reference (NULL:
 * none), *source as applied.h says. */
static void what_applied(const oci_mxcnet *m, int rootfd, const oci_config *c, json_t **network, char *source,
                         size_t sz)
{
    const char *joined = NULL;
    for (size_t i = 0; i < c->njoin; i++)
        if (c->join[i].flag == CLONE_NEWNET)
            joined = c->join[i].path;
    *network = NULL;
    if (m->network) {
        *network = json_incref(m->network);
        if (!m->apply)
            snprintf(source, sz, "pod:%s", m->applier);
        else
            snprintf(source, sz, "%s", m->cni[0] ? "cni" : "self");
        return;
    }
    char applier[256];
    if (m->host_net)
        snprintf(source, sz, "none:host-network");
    else if (!joined)
        snprintf(source, sz, "none:own-netns");
    else if (oci_mxcnet_applier(rootfd, joined, NULL, applier, sizeof applier, network) == 0)
        snprintf(source, sz, "pod:%s", applier); /* a member with no annotation: the pod's policy holds */
    else
        snprintf(source, sz, "none:joined-netns");
}

int oci_applied_record(oci_mxcnet *m, int rootfd, const char *id, oci_config *c, mxc_error *e)
{
    json_t *network;
    char source[300];
    what_applied(m, rootfd, c, &network, source, sizeof source);
    char *text = network ? json_dumps(network, JSON_COMPACT | JSON_SORT_KEYS) : strdup("none");
    json_decref(network);
    if (!text)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    const char *version = network ? "1" : "none";
    m->applied = json_pack("{s:s, s:s, s:s}", OCI_APPLIED_PREFIX "network", text, OCI_APPLIED_PREFIX "version",
                           version, OCI_APPLIED_PREFIX "source", source);
    size_t ml = strlen(text) + strlen(id) + strlen(source) + 160;
    m->applied_msg = malloc(ml);
    if (m->applied_msg)
        snprintf(m->applied_msg, ml, "container %s: io.mxc.applied: version %s, source %s, network %s", id, version,
                 source, text);
    free(text);
    if (!m->applied || !m->applied_msg)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    if (!c->annotations) {
        json_t *a = json_object();
        if (!a || json_object_set_new(c->doc, "annotations", a) < 0)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
        c->annotations = a;
    }
    if (json_object_update(c->annotations, m->applied) < 0)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory");
    return 0;
}

void oci_applied_log(const oci_mxcnet *m)
{
    if (oci_applied_logger && m->applied_msg)
        oci_applied_logger(m->applied_msg);
}
