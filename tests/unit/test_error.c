/* test_error.c — the error envelope and its inverse (mxc_error_from_envelope,
 * which reads what a fresh mxc-exec printed for an in-process caller):
 * every field survives the round trip, an unknown code is backend_error,
 * and what is no error envelope is left alone. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "error.h"

static void round_trip(mxc_code c, const char *op, int native, const char *rem, bool details)
{
    mxc_error a = {0}, b = {0};
    if (op)
        mxc_err_os(&a, c, op, native, rem, "it failed: %s", "here");
    else
        mxc_err(&a, c, "it failed: %s", "here");
    if (details)
        a.details = json_pack("{s:i}", "n", 7);
    json_t *env = mxc_error_envelope(&a);
    CHECK_INT_EQ(mxc_error_from_envelope(env, &b), -1);
    CHECK_INT_EQ(b.code, a.code);
    CHECK(strcmp(b.message, a.message) == 0);
    CHECK(strcmp(b.operation, a.operation) == 0);
    CHECK_INT_EQ(b.native, a.native);
    CHECK(strcmp(b.remediation, a.remediation) == 0);
    CHECK(details ? json_equal(b.details, a.details) : b.details == NULL);
    json_decref(env);
    mxc_error_clear(&a);
    mxc_error_clear(&b);
}

int main(void)
{
    for (int c = 1; c < MXC_E__COUNT; c++)
        round_trip((mxc_code)c, NULL, 0, NULL, false);
    round_trip(MXC_E_BACKEND_ERROR, "fsview.grants", ELOOP, NULL, false);
    round_trip(MXC_E_BACKEND_UNAVAILABLE, "net.rules", ENOENT, "install it", true);

    mxc_error e = {0};
    json_t *odd = json_pack("{s:{s:s}}", "error", "code", "no_such_code");
    CHECK_INT_EQ(mxc_error_from_envelope(odd, &e), -1);
    CHECK_INT_EQ(e.code, MXC_E_BACKEND_ERROR);
    CHECK(strcmp(e.message, "backend_error") == 0);
    json_decref(odd);
    mxc_error_clear(&e);

    json_t *ok = json_pack("{s:{}}", "result");
    e.code = MXC_E_STALE_ID;
    CHECK_INT_EQ(mxc_error_from_envelope(ok, &e), 0);
    CHECK_INT_EQ(mxc_error_from_envelope(NULL, &e), 0);
    CHECK_INT_EQ(e.code, MXC_E_STALE_ID); /* untouched */
    json_decref(ok);
    return CHECK_DONE();
}
