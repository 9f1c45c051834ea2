/* applied.c — see applied.h. */
#include "applied.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void (*oci_applied_logger)(const char *msg);

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void block(uint32_t h[8], const uint8_t *b)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[i] + w[i];
        uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

void oci_sha256(const void *p, size_t len, uint8_t out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *b = p;
    size_t n = len;
    for (; n >= 64; n -= 64, b += 64)
        block(h, b);
    uint8_t tail[128] = {0};
    memcpy(tail, b, n);
    tail[n] = 0x80;
    size_t tl = n < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t o = 0; o < tl; o += 64)
        block(h, tail + o);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

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
    uint8_t d[32];
    char hex[65];
    oci_sha256(text, strlen(text), d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    const char *version = network ? "1" : "none";
    m->applied = json_pack("{s:s, s:s, s:s, s:s}", OCI_APPLIED_PREFIX "network", text, OCI_APPLIED_PREFIX "sha256",
                           hex, OCI_APPLIED_PREFIX "version", version, OCI_APPLIED_PREFIX "source", source);
    size_t ml = strlen(text) + strlen(id) + strlen(source) + 160;
    m->applied_msg = malloc(ml);
    if (m->applied_msg)
        snprintf(m->applied_msg, ml, "container %s: io.mxc.applied: version %s, source %s, sha256 %s, network %s", id,
                 version, source, hex, text);
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
