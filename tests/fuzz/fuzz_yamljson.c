/* fuzz_yamljson.c — libFuzzer harness for mxc's YAML policy loading
 * (src/base/yamljson.c over libyaml).  Oracles: never a crash or a leak;
 * whatever is accepted is a JSON value that serializes and reloads to the
 * same value (no half-built tree escapes); a refusal always says why.
 *   tests/fuzz/run.sh [SECONDS]
 * (The anchor rule is covered by tests/integration/test_cli.py: a fuzzer
 * cannot tell an anchor from an '&' inside a scalar without a parser of its
 * own.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    mxc_error e = {0};
    json_t *j = mxc_yaml_load(f, &e);
    fclose(f);
    if (!j) {
        if (e.code == MXC_E_NONE || !e.message[0]) {
            fprintf(stderr, "oracle violated: a refusal without a reason\n");
            abort();
        }
        return 0;
    }
    /* an anchor (&) or alias (*) needs its character outside quotes: a
     * document without either character cannot hold one, so any accepted
     * document holding neither is trivially fine; one that was accepted
     * with them is checked by the round trip only (the character may sit
     * in a scalar) */
    char *text = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    json_t *back = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    if (!text || !back || !json_equal(j, back)) {
        fprintf(stderr, "oracle violated: the accepted value does not round-trip\n");
        abort();
    }
    free(text);
    json_decref(back);
    json_decref(j);
    return 0;
}
