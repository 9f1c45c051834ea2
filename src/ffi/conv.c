/* conv.c — libmxc_ffi's conventions: wire codes as status numbers, the
 * engine's error as an MxcErrorDetail, the request gate, and process output
 * as lossy UTF-8 strings.  Pure except for reading captured output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "ffi_internal.h"
#include "front.h"

int32_t ffi_status_of(const mxc_error *e)
{
    return e->code == MXC_E_NONE ? MXC_STATUS_INTERNAL : (int32_t)e->code; /* mxc_code is numbered as the wire's */
}

void ffi_detail_reset(MxcErrorDetail *d)
{
    if (d)
        memset(d, 0, sizeof *d);
}

void ffi_detail_fill(MxcErrorDetail *d, const mxc_error *e)
{
    if (!d)
        return;
    ffi_detail_reset(d);
    d->message_utf8 = strdup(e->message[0] ? e->message : mxc_code_name(e->code));
    if (e->operation[0])
        d->operation_utf8 = strdup(e->operation);
    if (e->native) {
        char hex[16];
        snprintf(hex, sizeof hex, "0x%x", (unsigned)e->native);
        d->native_code_utf8 = strdup(hex);
    }
    if (e->remediation[0])
        d->remediation_utf8 = strdup(e->remediation);
}

int32_t ffi_fail(mxc_error *e, mxc_code code, const char *message)
{
    mxc_err(e, code, "%s", message);
    return (int32_t)code;
}

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0: the engine's decoder. */
static size_t seq_len(const unsigned char *s, size_t n)
{
    uint32_t cp;
    return mxc_utf8_next(s, n, &cp);
}

bool ffi_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = seq_len(u + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

char *ffi_utf8_lossy(const char *s, size_t n)
{
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(n * 3 + 1); /* a bad byte (1) becomes U+FFFD (3) */
    if (!out)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] ? seq_len(u + i, n - i) : 0;
        if (!k) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, u + i, k);
        o += k;
        i += k;
    }
    out[o] = '\0';
    return out;
}

char *ffi_read_all_lossy(int fd)
{
    if (lseek(fd, 0, SEEK_SET) < 0)
        return NULL;
    size_t n = 0;
    char *buf = mxc_read_all(fd, SIZE_MAX, &n);
    if (!buf)
        return NULL;
    char *s = ffi_utf8_lossy(buf, n);
    free(buf);
    return s;
}

int32_t ffi_accept(const char *json, int32_t experimental, int kind, mxc_request **rp, mxc_error *e)
{
    *rp = NULL;
    if (!json) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "request JSON pointer is null");
        return MXC_STATUS_NULL_ARGUMENT;
    }
    size_t len = strlen(json);
    if (!ffi_utf8_valid(json, len)) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "request JSON is not UTF-8");
        return MXC_STATUS_INVALID_UTF8;
    }
    mxc_request *r = *rp = mxc_request_new();
    if (!r)
        return ffi_fail(e, MXC_E_BACKEND_ERROR, "out of memory");
    int rc = mxc_validate(json, len, experimental ? MXC_VALIDATE_EXPERIMENTAL : 0, r, e);
    if (!mxc_request_is_v1(r)) {
        mxc_error_clear(e);
        return ffi_fail(e, MXC_E_MALFORMED_REQUEST,
                        "Invalid version declaration: this library takes contract versions 0.9.0-alpha, 1.0.0 and "
                        "1.1.0-alpha (a \"version\" field is required)");
    }
    /* the request's kind is known from its "phase" before anything else is */
    bool state_aware = json_object_get(mxc_request_json(r), "phase") != NULL;
    if (kind == FFI_ONESHOT && state_aware) {
        mxc_error_clear(e);
        return ffi_fail(e, MXC_E_MALFORMED_REQUEST,
                        "expected a one-shot request; lifecycle requests use the state-aware JSON entry points");
    }
    if (kind == FFI_STATE_AWARE && !state_aware) {
        mxc_error_clear(e);
        return ffi_fail(e, MXC_E_MALFORMED_REQUEST,
                        "expected a state-aware lifecycle request (with a 'phase' field), got a one-shot config");
    }
    return rc < 0 ? ffi_status_of(e) : 0;
}
