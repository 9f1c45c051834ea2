/* fuzz_oci_config.c — libFuzzer harness for mxc-oci's config.json reader
 * (src/oci/config.c) and its container-id rule (src/oci/store.c).
 * Oracles: never a crash, a leak or undefined behaviour; a refused config
 * says why (a message naming "config.json" and a code); an accepted one
 * holds what the guarantees need — pid and mount namespaces, no map onto
 * host id 0, capabilities within the allowed set, absolute mount
 * destinations, args when there is a process, idmapped mounts only binds
 * with no mapping onto host 0, tmpcopyup only on tmpfs, rlimits soft <=
 * hard (RLIM_INFINITY read through ocijson.c); an id that passes has no
 * '/' and is not "." or "..".
 *   tests/fuzz/run.sh [SECONDS] */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/oci/cgroup.h"
#include "../../src/oci/config.h"
#include "../../src/oci/ocijson.h"
#include "../../src/oci/store.h"

static void oracle(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "oracle violated: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *id = malloc(size + 1);
    if (!id)
        return 0;
    memcpy(id, data, size);
    id[size] = '\0';
    if (oci_valid_id(id))
        oracle(!strchr(id, '/') && strcmp(id, ".") && strcmp(id, "..") && strlen(id) <= OCI_ID_MAX,
               "a valid id is one directory name");
    free(id);
    json_t *doc = oci_json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!doc)
        return 0;
    oci_config c;
    mxc_error e = {0};
    int rc = oci_config_parse(doc, OCI_CGROUP_HOST, &c, &e);
    json_decref(doc);
    if (rc < 0) {
        oracle(e.code != MXC_E_NONE && strstr(e.message, "config.json") != NULL, "a refusal says why");
    } else {
        oracle((c.ns_flags & CLONE_NEWPID) && (c.ns_flags & CLONE_NEWNS), "pid and mount namespaces");
        for (size_t i = 0; i < c.nuidmap; i++)
            oracle(c.uidmap[i].hid != 0, "no uid map onto host 0");
        for (size_t i = 0; i < c.ngidmap; i++)
            oracle(c.gidmap[i].hid != 0, "no gid map onto host 0");
        uint64_t held = oci_caps_held();
        oracle(!((c.cap_bounding | c.cap_effective | c.cap_permitted | c.cap_inheritable | c.cap_ambient) & ~held),
               "capabilities within the held set (CAP_SETFCAP never)");
        for (size_t i = 0; i < c.nmounts; i++) {
            const oci_mount *m = &c.mounts[i];
            oracle(m->dest && m->dest[0] == '/', "absolute mount destinations");
            oracle(!m->idmap || m->kind == OCI_MNT_BIND, "only binds idmapped");
            oracle(!m->nuidmap == !m->ngidmap, "a mount's uid and gid mappings together");
            for (size_t k = 0; k < m->nuidmap + m->ngidmap; k++)
                oracle((k < m->nuidmap ? m->uidmap[k] : m->gidmap[k - m->nuidmap]).hid != 0,
                       "no mount mapping onto host 0");
            oracle(!m->tmpcopyup || (m->kind == OCI_MNT_FS && !strcmp(m->type, "tmpfs")), "tmpcopyup on tmpfs only");
        }
        for (size_t i = 0; i < c.nrlimits; i++)
            oracle(c.rlimits[i].soft <= c.rlimits[i].hard, "rlimits soft <= hard");
        oracle(!c.has_process || (c.nargs > 0 && c.args[0] && !c.args[c.nargs]), "args, NULL-terminated");
    }
    mxc_error_clear(&e);
    oci_config_free(&c);
    return 0;
}
