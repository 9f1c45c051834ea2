/* fuzz_pbcheck.c — libFuzzer harness for mxc-openshell-driver's wire check
 * (src/osdriver/pbcheck.c) ahead of protoc-c's unpacking, over the pinned contract's
 * ValidateSandboxCreateRequest (the deepest request: DriverSandbox, its spec, maps and
 * google.protobuf.Struct).  Oracles: a wire form the check passes unpacks without a fault
 * (ASan: no unbounded recursion, no overflow) or is refused by the unpacking; what unpacks
 * packs again to a wire form the check passes too (no string it let through grows a NUL or
 * stops being UTF-8, no nesting grows).  run.sh generates the C from proto/openshell. */
#include <stdio.h>
#include <stdlib.h>

#include "compute_driver.pb-c.h"
#include "pbcheck.h"

#define REQ openshell__compute__v1__validate_sandbox_create_request

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[256];
    const ProtobufCMessageDescriptor *d = &openshell__compute__v1__validate_sandbox_create_request__descriptor;
    if (osd_pb_check(d, data, size, path, sizeof path) != OSD_PB_OK)
        return 0;
    Openshell__Compute__V1__ValidateSandboxCreateRequest *r =
        openshell__compute__v1__validate_sandbox_create_request__unpack(NULL, size, data);
    if (!r)
        return 0;
    size_t n = openshell__compute__v1__validate_sandbox_create_request__get_packed_size(r);
    uint8_t *buf = malloc(n ? n : 1);
    if (buf) {
        openshell__compute__v1__validate_sandbox_create_request__pack(r, buf);
        if (osd_pb_check(d, buf, n, path, sizeof path) != OSD_PB_OK) {
            fprintf(stderr, "oracle violated: a repacked request fails the check at %s\n", path);
            abort();
        }
    }
    free(buf);
    openshell__compute__v1__validate_sandbox_create_request__free_unpacked(r, NULL);
    return 0;
}
