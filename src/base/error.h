/* error.h — the one error type of libmxc.
 * Owns: the closed set of 12 wire error codes, building an error where the
 * failure happens (code, message, operation, errno, remediation, details),
 * and rendering it as the wire envelope.  Never logs. */
#ifndef MXC_ERROR_H
#define MXC_ERROR_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>

typedef enum {
    MXC_E_NONE = 0,
    MXC_E_MALFORMED_REQUEST,
    MXC_E_UNSUPPORTED_CONTAINMENT,
    MXC_E_UNSUPPORTED_PHASE,
    MXC_E_BACKEND_UNAVAILABLE,
    MXC_E_MALFORMED_ID,
    MXC_E_STALE_ID,
    MXC_E_NOT_PROVISIONED,
    MXC_E_NOT_STARTED,
    MXC_E_ALREADY_STARTED,
    MXC_E_ALREADY_STOPPED,
    MXC_E_POLICY_VALIDATION,
    MXC_E_BACKEND_ERROR,
    MXC_E__COUNT
} mxc_code;

typedef struct mxc_error {
    mxc_code code;
    char message[768];
    char operation[96];   /* "" = absent */
    int native;           /* errno; 0 = absent */
    char remediation[320];/* "" = absent */
    json_t *details;      /* owned; NULL = absent */
} mxc_error;

const char *mxc_code_name(mxc_code c);

/* Both return -1 so that callers can `return mxc_err(...)`. */
int mxc_err(mxc_error *e, mxc_code c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mxc_err_os(mxc_error *e, mxc_code c, const char *operation, int errnum, const char *remediation,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* mxc_err's va_list form, for a caller's own printf-like refusal helper. */
int mxc_verr(mxc_error *e, mxc_code c, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
void mxc_err_set_remediation(mxc_error *e, const char *remediation);
void mxc_error_clear(mxc_error *e);

/* {"error":{...}}; new reference. */
json_t *mxc_error_envelope(const mxc_error *e);
/* Compact one-line JSON text of the envelope (malloc'd). */
char *mxc_error_envelope_text(const mxc_error *e);
/* The inverse of mxc_error_envelope for an envelope another mxc process
 * printed: {"error":{...}} into *e (an unknown code is backend_error, a
 * missing message the code's name); -1, or 0 when env is no error
 * envelope (e untouched). */
int mxc_error_from_envelope(json_t *env, mxc_error *e);

#endif
