/* fuzz_toml.c — libFuzzer harness for the gateway's TOML reader and host
 * configuration (src/gateway/toml.c, config.c).  Oracles: never a crash,
 * a leak or undefined behaviour; an accepted document is a JSON object
 * that serializes; a refusal always names its line; the configuration
 * reader over the same bytes either accepts with an absolute executor path
 * and (when set) a loopback proxy address, or says why.
 *   tests/fuzz/run.sh [SECONDS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "toml.h"

static void oracle(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "oracle violated: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mxc_error te = {0};
    json_t *j = mxc_toml_parse((const char *)data, size, &te);
    if (j) {
        oracle(json_is_object(j), "an accepted document is an object");
        char *s = json_dumps(j, JSON_COMPACT);
        oracle(s != NULL, "an accepted document serializes");
        /* and reloads to the same value: no NUL or other value a C consumer would misread */
        json_t *back = s ? json_loads(s, 0, NULL) : NULL;
        oracle(back && json_equal(j, back), "an accepted document round-trips");
        json_decref(back);
        free(s);
        json_decref(j);
    } else {
        oracle(strncmp(te.message, "line ", 5) == 0, "a refusal names its line");
    }
    mxc_gw_config c;
    mxc_error ce = {0};
    if (mxc_gw_config_parse((const char *)data, size, &c, &ce) == 0) {
        oracle(c.exec_path[0] == '/', "the executor path is absolute");
        oracle(!c.proxy_ip[0] || strncmp(c.proxy_ip, "127.", 4) == 0, "the proxy seed is loopback");
        oracle(json_is_object(c.providers), "providers are a table");
        mxc_gw_config_free(&c);
    } else {
        oracle(ce.code != MXC_E_NONE && ce.message[0] != '\0', "a refused configuration says why");
    }
    return 0;
}
