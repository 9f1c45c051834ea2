/* fuzz_sandbox_id.c — libFuzzer harness for the sandboxId codec, with a
 * round-trip oracle: whenever decode(s) succeeds, encode(decode(s)) must
 * decode to the very same value, and re-encoding that is a fixed point.
 * Also: base64url decode is canonical (decode then encode gives the input
 * back), and the padded standard decoder agrees with the url one.
 *   tests/fuzz/run.sh [SECONDS] */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sandbox_id.h"

static void must(int cond, const char *what, const char *wire)
{
    if (!cond) {
        fprintf(stderr, "oracle violated: %s (input \"%.200s\")\n", what, wire);
        abort();
    }
}

static int same_id(const mxc_sandbox_id *a, const mxc_sandbox_id *b)
{
    return strcmp(a->agent_name, b->agent_name) == 0 && a->has_app_id == b->has_app_id &&
           (!a->has_app_id || strcmp(a->app_id, b->app_id) == 0);
}

static void id_oracle(const char *wire)
{
    mxc_sandbox_id a, b;
    mxc_error e = {0};
    if (mxc_sandbox_id_decode(wire, &a, &e) < 0) {
        must(e.code == MXC_E_MALFORMED_ID || e.code == MXC_E_UNSUPPORTED_CONTAINMENT || e.code == MXC_E_STALE_ID,
             "decode failure has an unexpected code", wire);
        must(e.message[0] != '\0', "empty message", wire);
        mxc_error_clear(&e);
        return;
    }
    must(strncmp(wire, "iso:", 4) == 0, "decoded an id without the iso: prefix", wire);
    must(mxc_agent_name_is_safe(a.agent_name), "decoded an unsafe agent name", wire);
    char w1[MXC_SANDBOX_ID_MAX * 2], w2[MXC_SANDBOX_ID_MAX * 2];
    must(mxc_sandbox_id_encode(&a, w1, sizeof w1, &e) == 0, "re-encode failed", wire);
    must(mxc_sandbox_id_decode(w1, &b, &e) == 0, "re-encoded id does not decode", wire);
    must(same_id(&a, &b), "round trip changed the id", wire);
    must(mxc_sandbox_id_encode(&b, w2, sizeof w2, &e) == 0, "second re-encode failed", wire);
    must(strcmp(w1, w2) == 0, "encoding is not deterministic", wire);
    mxc_error_clear(&e);
}

static void b64_oracle(const char *s, size_t n)
{
    unsigned char raw[4096], raw2[4096];
    char enc[8192];
    if (n > 4096)
        return;
    long m = mxc_b64url_decode(s, n, raw, sizeof raw);
    if (m > 0) {
        size_t k = mxc_b64url_encode(raw, (size_t)m, enc, sizeof enc);
        must(k == n && memcmp(enc, s, n) == 0, "base64url decode is not canonical", s);
    }
    long ms = mxc_b64std_decode(s, n, raw2, sizeof raw2);
    if (ms >= 0) {
        /* translate to the url alphabet, drop padding: same bytes */
        char t[4096];
        size_t tn = 0;
        for (size_t i = 0; i < n; i++) {
            char c = s[i];
            if (c == '=')
                continue;
            t[tn++] = c == '+' ? '-' : c == '/' ? '_' : c;
        }
        long mu = mxc_b64url_decode(t, tn, raw, sizeof raw);
        must(mu == ms && memcmp(raw, raw2, (size_t)ms) == 0, "base64 std and url decoders disagree", s);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    json_object_seed(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    size_t n = strlen(s); /* an embedded NUL ends the wire string, as in C callers */

    id_oracle(s);
    /* the same bytes as a body behind the iso: prefix reach the payload
     * layer far more often than raw mutations do */
    char *p = malloc(n + 5);
    memcpy(p, "iso:", 4);
    memcpy(p + 4, s, n + 1);
    id_oracle(p);
    free(p);

    b64_oracle(s, n);

    mxc_error e = {0};
    if (mxc_app_id_validate((const char *)data, size, &e) < 0)
        must(e.code == MXC_E_POLICY_VALIDATION, "appId rejection with an unexpected code", s);
    mxc_error_clear(&e);
    (void)mxc_agent_name_is_safe(s);
    free(s);
    return 0;
}
