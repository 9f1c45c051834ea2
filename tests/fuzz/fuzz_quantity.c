/* fuzz_quantity.c — libFuzzer harness for the driver's strict quantity reader
 * (src/osdriver/quantity.c), with oracles: a refusal always says why; an accepted value
 * is at most 2^63-1; a quantity read as bytes is read as millicores to 1000 times it
 * (when that fits); a plain run of digits reads as strtoull does; the reader is
 * deterministic.  tests/fuzz/run.sh [SECONDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"

static void must(int cond, const char *what, const char *s)
{
    if (!cond) {
        fprintf(stderr, "oracle violated: %s (input \"%.200s\")\n", what, s);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64)
        return 0;
    char s[65];
    memcpy(s, data, size);
    s[size] = '\0';
    uint64_t b = 0, m = 0, again = 0;
    const char *why = NULL;
    int rb = osd_quantity_parse(s, OSD_QTY_BYTES, &b, &why);
    must(rb == 0 || (why && *why), "a refusal without a reason", s);
    must(rb < 0 || b <= (uint64_t)INT64_MAX, "a value beyond 2^63-1", s);
    why = NULL;
    int rm = osd_quantity_parse(s, OSD_QTY_CPU_MILLI, &m, &why);
    must(rm == 0 || (why && *why), "a refusal without a reason", s);
    if (rb == 0 && b <= (uint64_t)INT64_MAX / 1000)
        must(rm == 0 && m == b * 1000, "bytes and millicores disagree", s);
    must(osd_quantity_parse(s, OSD_QTY_BYTES, &again, &why) == rb && (rb < 0 || again == b), "not deterministic", s);
    if (size > 0 && size <= 18 && strspn(s, "0123456789") == size)
        must(rb == 0 && b == strtoull(s, NULL, 10), "digits read otherwise than strtoull", s);
    return 0;
}
