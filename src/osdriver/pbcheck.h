/* pbcheck.h — what protoc-c's unpacking would hide, refused before it.
 * Owns: walking a message's wire form against its descriptor, to any depth (map entries and
 * google.protobuf.Struct values included), and refusing a string field that holds a NUL
 * byte: protoc-c hands strings on as C strings, so "a\0b" would silently become "a" (an
 * argument of the exact command, an environment value, an id); and a string that is not
 * well-formed UTF-8, which proto3 forbids and protoc-c 1.4 lets through.  Fields unknown to the
 * descriptor are skipped, as protobuf skips them.  A malformed wire form is left for the
 * unpacking to refuse.  Also refused: messages nested deeper than OSD_PB_MAX_DEPTH (protoc-c's
 * unpacking recurses without a bound, and google.protobuf.Struct nests without one: a deep
 * driver_config would exhaust the driver's stack).  Pure: no I/O. */
#ifndef MXC_OSD_PBCHECK_H
#define MXC_OSD_PBCHECK_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#define OSD_PB_MAX_DEPTH 64

enum { OSD_PB_OK = 0, OSD_PB_NUL = -1, OSD_PB_DEEP = -2, OSD_PB_UTF8 = -3 };

/* OSD_PB_OK, or a refusal with the field's dotted path ("sandbox.spec.command") in path. */
int osd_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *msg, size_t len, char *path, size_t pathsz);

#endif
