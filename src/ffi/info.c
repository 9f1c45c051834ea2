/* info.c — the library's version, what this host offers (backends,
 * platform support), the string and error-detail frees, and the telemetry
 * consent entry points, answered truthfully: mxc collects no telemetry, so
 * there is nothing to consent to, withdraw or prompt for. */
#include <stdlib.h>
#include <string.h>

#include "ffi_internal.h"
#include "front.h"

#define MXC_FFI_VERSION "1.0.1" /* the upstream ABI this library implements */

FFI_EXPORT const char *mxc_version(void)
{
    return MXC_FFI_VERSION;
}

FFI_EXPORT void mxc_string_free(char *s)
{
    free(s);
}

FFI_EXPORT void mxc_error_detail_free(MxcErrorDetail *d)
{
    if (!d)
        return;
    free(d->message_utf8);
    free(d->operation_utf8);
    free(d->native_code_utf8);
    free(d->remediation_utf8);
    memset(d, 0, sizeof *d);
}

FFI_EXPORT char *mxc_available_backends_json(void)
{
    json_t *a = mxc_backends_json();
    char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

FFI_EXPORT char *mxc_platform_support_json(void)
{
    json_t *b = mxc_backends_json();
    json_t *o = json_pack("{s:b, s:n, s:[s], s:{s:s, s:O}}", "isSupported", 1, "reason", "availableMethods",
                          "bubblewrap", "bubblewrapNetwork", "proxyEnforcement", "unsupported", "warnings",
                          json_object_get(json_array_get(b, 0), "warnings"));
    json_decref(b);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static int32_t answer(char **out, const char *text)
{
    if (!out)
        return MXC_STATUS_NULL_ARGUMENT;
    *out = strdup(text);
    return *out ? 0 : MXC_STATUS_INTERNAL;
}

#define NA_STATUS "\"effectiveState\":\"not-applicable\",\"policy\":\"not-applicable\",\"reason\":\"not-applicable\"," \
                  "\"storedState\":\"not-applicable\""

FFI_EXPORT int32_t mxc_telemetry_get_consent(char **out_utf8)
{
    return answer(out_utf8, "not-applicable");
}

FFI_EXPORT int32_t mxc_telemetry_get_policy(char **out_utf8)
{
    return answer(out_utf8, "not-applicable");
}

FFI_EXPORT int32_t mxc_telemetry_get_consent_status(char **out_utf8)
{
    return answer(out_utf8, "{" NA_STATUS "}");
}

FFI_EXPORT int32_t mxc_telemetry_withdraw_consent(char **out_utf8)
{
    return answer(out_utf8, "{" NA_STATUS ",\"result\":\"notApplicable\"}");
}

FFI_EXPORT int32_t mxc_telemetry_request_consent(const char *locale_utf8,
                                                 int32_t (*presenter)(const char *prompt_json, void *ctx),
                                                 void *context, char **out_utf8)
{
    (void)locale_utf8;
    (void)context;
    if (!presenter || !out_utf8)
        return MXC_STATUS_NULL_ARGUMENT; /* the presenter is never called: there is nothing to ask */
    return answer(out_utf8, "{" NA_STATUS ",\"result\":\"notApplicable\"}");
}

FFI_EXPORT int32_t mxc_telemetry_needs_consent_prompt(int32_t *out_needs_prompt)
{
    if (!out_needs_prompt)
        return MXC_STATUS_NULL_ARGUMENT;
    *out_needs_prompt = 0;
    return 0;
}
