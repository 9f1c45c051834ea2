/* fuzz_request.c — libFuzzer harness: arbitrary bytes through the request
 * parser and the policy matrix (layers 1-5, all pure).  Besides memory and UB
 * errors (ASan/UBSan), it checks the invariants every caller relies on:
 * a failure always has a code in the closed set and a non-empty message, its
 * envelope renders as JSON, and parse/policy rejections never carry OS fields.
 *   tests/fuzz/run.sh [SECONDS] */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "netpolicy.h"
#include "policy.h"
#include "request.h"
#include "sandbox_id.h"

static void check_error(const mxc_error *e)
{
    if (e->code <= MXC_E_NONE || e->code >= MXC_E__COUNT)
        abort();
    if (e->message[0] == '\0')
        abort();
    if (e->operation[0] != '\0' || e->native != 0)
        abort(); /* pure layers never name an OS operation */
    char *text = mxc_error_envelope_text(e);
    if (!text)
        abort();
    json_error_t jerr;
    json_t *back = json_loads(text, 0, &jerr);
    if (!back || !json_is_string(json_object_get(json_object_get(back, "error"), "code")))
        abort();
    json_decref(back);
    free(text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    json_object_seed(1); /* deterministic hashing: reproducible runs */
    /* src/net's lowering under the policy check (the rest of the network layer is never reached
     * here: the engine's failing-closed table) */
    static mxc_net_ops ops;
    ops = *mxc_net_ops_get();
    ops.lower = mxc_net_policy_build;
    mxc_net_ops_set(&ops);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mxc_request r;
    mxc_error e = {0};
    if (mxc_request_parse((const char *)data, size, &r, &e) < 0) {
        check_error(&e);
        bool v1_codes = r.dialect == MXC_DIALECT_V1 && (e.code == MXC_E_MALFORMED_ID || e.code == MXC_E_BACKEND_UNAVAILABLE);
        if (e.code != MXC_E_MALFORMED_REQUEST && e.code != MXC_E_UNSUPPORTED_CONTAINMENT && !v1_codes)
            abort(); /* contract 1.0 routes ids (malformed_id) and refuses absent backends by their gate */
    } else {
        /* what the parser accepted is self-consistent */
        if (r.phase != MXC_PHASE_NONE && r.phase != MXC_PHASE_PROVISION && !r.sandbox_id)
            abort();
        if ((r.phase == MXC_PHASE_NONE || r.phase == MXC_PHASE_EXEC) && (!r.command_line || !r.command_line[0]))
            abort();
        if (mxc_policy_validate(&r, &e) < 0) {
            check_error(&e);
            mxc_code want = r.phase == MXC_PHASE_NONE ? MXC_E_BACKEND_ERROR : MXC_E_POLICY_VALIDATION;
            if (e.code != want)
                abort();
        }
        if (r.sandbox_id) {
            mxc_sandbox_id id;
            mxc_error ie = {0};
            if (mxc_sandbox_id_decode(r.sandbox_id, &id, &ie) < 0)
                check_error(&ie);
            mxc_error_clear(&ie);
        }
    }
    mxc_request_free(&r);
    mxc_error_clear(&e);
    return 0;
}
