/* quantity.h — OpenShell's resource quantities ("500m", "2", "256Mi", "4Gi"), read strictly.
 * Owns: the one grammar the driver accepts for DriverResourceRequirements (a subset of
 * Kubernetes' quantity: digits, an optional fraction, one suffix), and the conversion to
 * whole millicores (cpu) or whole bytes (memory) with every overflow refused.  Refused,
 * each by name: an empty text, a sign, an exponent ("1e3"), spaces, an unknown suffix, a
 * value that is not a whole number of the target unit ("0.5m" cpu, "1.5" bytes), and a
 * value beyond 2^63.  Pure: no I/O (unit test: tests/unit/test_quantity.c; fuzz:
 * tests/fuzz/fuzz_quantity.c). */
#ifndef MXC_OSD_QUANTITY_H
#define MXC_OSD_QUANTITY_H

#include <stdint.h>

typedef enum { OSD_QTY_CPU_MILLI, OSD_QTY_BYTES } osd_qty_unit;

/* 0 with *out, or -1 with *why a constant sentence saying what is wrong ("has a sign"). */
int osd_quantity_parse(const char *s, osd_qty_unit unit, uint64_t *out, const char **why);

#endif
