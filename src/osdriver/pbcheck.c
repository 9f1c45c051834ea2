/* pbcheck.c — see pbcheck.h. */
#include "pbcheck.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "front.h"


/* A varint at *p (advanced); false when the wire form ends inside it or it is too long. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* Well-formed UTF-8, scalar by scalar (the engine's reader: front.h). */
static bool utf8_ok(const uint8_t *s, size_t n)
{
    uint32_t cp;
    for (size_t i = 0, k; i < n; i += k)
        if (!(k = mxc_utf8_next(s + i, n - i, &cp)))
            return false;
    return true;
}

static int walk(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end, char *path, size_t pathsz,
                size_t at, int depth)
{
    while (p < end) {
        uint64_t key, n;
        if (!varint(&p, end, &key))
            return OSD_PB_OK; /* malformed: the unpacking refuses it */
        unsigned wt = key & 7;
        const ProtobufCFieldDescriptor *f = d ? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3)) : NULL;
        if (wt == 0 && !varint(&p, end, &n))
            return OSD_PB_OK;
        if (wt == 1 || wt == 5) {
            size_t w = wt == 1 ? 8 : 4;
            if ((size_t)(end - p) < w)
                return OSD_PB_OK;
            p += w;
        }
        if (wt == 3 || wt == 4 || wt > 5)
            return OSD_PB_OK;
        if (wt != 2)
            continue;
        if (!varint(&p, end, &n) || n > (uint64_t)(end - p))
            return OSD_PB_OK;
        const uint8_t *val = p;
        p += n;
        if (!f)
            continue;
        int w = snprintf(path + at, pathsz - at, "%s%s", at ? "." : "", f->name);
        size_t next = w < 0 || (size_t)w >= pathsz - at ? pathsz - 1 : at + (size_t)w;
        if (f->type == PROTOBUF_C_TYPE_STRING && memchr(val, 0, n))
            return OSD_PB_NUL;
        if (f->type == PROTOBUF_C_TYPE_STRING && !utf8_ok(val, n))
            return OSD_PB_UTF8;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth == OSD_PB_MAX_DEPTH)
            return OSD_PB_DEEP;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            int rc = walk(f->descriptor, val, val + n, path, pathsz, next, depth + 1);
            if (rc != OSD_PB_OK)
                return rc;
        }
        path[at] = '\0';
    }
    return OSD_PB_OK;
}

int osd_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *msg, size_t len, char *path, size_t pathsz)
{
    path[0] = '\0';
    return walk(d, msg, msg + len, path, pathsz, 0, 0);
}
