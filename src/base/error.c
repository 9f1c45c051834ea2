/* error.c — see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *const CODE_NAMES[MXC_E__COUNT] = {
    [MXC_E_NONE] = "none",
    [MXC_E_MALFORMED_REQUEST] = "malformed_request",
    [MXC_E_UNSUPPORTED_CONTAINMENT] = "unsupported_containment",
    [MXC_E_UNSUPPORTED_PHASE] = "unsupported_phase",
    [MXC_E_BACKEND_UNAVAILABLE] = "backend_unavailable",
    [MXC_E_MALFORMED_ID] = "malformed_id",
    [MXC_E_STALE_ID] = "stale_id",
    [MXC_E_NOT_PROVISIONED] = "not_provisioned",
    [MXC_E_NOT_STARTED] = "not_started",
    [MXC_E_ALREADY_STARTED] = "already_started",
    [MXC_E_ALREADY_STOPPED] = "already_stopped",
    [MXC_E_POLICY_VALIDATION] = "policy_validation",
    [MXC_E_BACKEND_ERROR] = "backend_error",
};

const char *mxc_code_name(mxc_code c)
{
    return (c >= 0 && c < MXC_E__COUNT) ? CODE_NAMES[c] : "backend_error";
}

static void set_message(mxc_error *e, const char *fmt, va_list ap)
{
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    if (e->message[0] == '\0') /* message is never empty on the wire */
        snprintf(e->message, sizeof e->message, "%s", mxc_code_name(e->code));
}

int mxc_verr(mxc_error *e, mxc_code c, const char *fmt, va_list ap)
{
    if (!e)
        return -1;
    mxc_error_clear(e);
    e->code = c;
    set_message(e, fmt, ap);
    return -1;
}

int mxc_err(mxc_error *e, mxc_code c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mxc_verr(e, c, fmt, ap);
    va_end(ap);
    return -1;
}

int mxc_err_os(mxc_error *e, mxc_code c, const char *operation, int errnum, const char *remediation,
               const char *fmt, ...)
{
    if (!e)
        return -1;
    mxc_error_clear(e);
    e->code = c;
    e->native = errnum;
    snprintf(e->operation, sizeof e->operation, "%s", operation ? operation : "");
    snprintf(e->remediation, sizeof e->remediation, "%s", remediation ? remediation : "");
    va_list ap;
    va_start(ap, fmt);
    set_message(e, fmt, ap);
    va_end(ap);
    if (errnum) {
        size_t n = strlen(e->message);
        snprintf(e->message + n, sizeof e->message - n, ": %s", strerror(errnum));
    }
    return -1;
}

void mxc_err_set_remediation(mxc_error *e, const char *remediation)
{
    snprintf(e->remediation, sizeof e->remediation, "%s", remediation ? remediation : "");
}

void mxc_error_clear(mxc_error *e)
{
    if (!e)
        return;
    json_decref(e->details);
    memset(e, 0, sizeof *e);
}

/* A truncated message may end inside a UTF-8 sequence; never lose the field. */
static json_t *json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char safe[sizeof ((mxc_error *)0)->message];
    size_t i = 0;
    for (; s[i] && i + 1 < sizeof safe; i++)
        safe[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
    safe[i] = '\0';
    return json_string(safe);
}

json_t *mxc_error_envelope(const mxc_error *e)
{
    json_t *err = json_object();
    json_object_set_new(err, "code", json_string(mxc_code_name(e->code)));
    json_object_set_new(err, "message", json_text(e->message[0] ? e->message : mxc_code_name(e->code)));
    if (e->operation[0])
        json_object_set_new(err, "operation", json_string(e->operation));
    if (e->native) {
        char hex[24];
        snprintf(hex, sizeof hex, "0x%x", (unsigned)e->native);
        json_object_set_new(err, "nativeCode", json_string(hex));
    }
    if (e->remediation[0])
        json_object_set_new(err, "remediation", json_text(e->remediation));
    if (e->details)
        json_object_set(err, "details", e->details);
    json_t *env = json_object();
    json_object_set_new(env, "error", err);
    return env;
}

char *mxc_error_envelope_text(const mxc_error *e)
{
    json_t *env = mxc_error_envelope(e);
    char *s = json_dumps(env, JSON_COMPACT);
    json_decref(env);
    return s;
}

int mxc_error_from_envelope(json_t *env, mxc_error *e)
{
    json_t *err = json_object_get(env, "error");
    if (!json_is_object(err))
        return 0;
    const char *code = json_string_value(json_object_get(err, "code"));
    mxc_code c = MXC_E_BACKEND_ERROR;
    for (int i = 1; code && i < MXC_E__COUNT; i++)
        if (strcmp(code, CODE_NAMES[i]) == 0)
            c = (mxc_code)i;
    const char *msg = json_string_value(json_object_get(err, "message"));
    mxc_err(e, c, "%s", msg ? msg : mxc_code_name(c));
    const char *op = json_string_value(json_object_get(err, "operation"));
    if (op)
        snprintf(e->operation, sizeof e->operation, "%s", op);
    const char *native = json_string_value(json_object_get(err, "nativeCode"));
    if (native)
        e->native = (int)strtol(native, NULL, 16);
    const char *rem = json_string_value(json_object_get(err, "remediation"));
    if (rem)
        mxc_err_set_remediation(e, rem);
    json_t *details = json_object_get(err, "details");
    if (details) {
        json_decref(e->details);
        e->details = json_incref(details);
    }
    return -1;
}
