/* test_ffi_conv.c — libmxc_ffi's pure conventions (src/ffi/conv.c): process
 * output as lossy UTF-8 (invalid sequences, overlongs, surrogates and NUL
 * become U+FFFD, valid text is kept byte for byte), the UTF-8 gate on
 * requests, wire codes as status numbers, an engine error as an
 * MxcErrorDetail (NULL for what is not supplied), and the request gate's
 * answers that need no sandbox. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ffi_internal.h"

#define FFFD "\xEF\xBF\xBD"

static void lossy(const char *in, size_t n, const char *want)
{
    char *got = ffi_utf8_lossy(in, n);
    CHECK_MSG(got && strcmp(got, want) == 0, "lossy(%zu bytes) = \"%s\", want \"%s\"", n, got ? got : "(null)", want);
    free(got);
}

static void test_lossy(void)
{
    lossy("", 0, "");
    lossy("plain ascii\n", 12, "plain ascii\n");
    lossy("\xC3\xA9t\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80", 14, "\xC3\xA9t\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80");
    lossy("a\0b", 3, "a" FFFD "b");
    lossy("\xFF", 1, FFFD);
    lossy("x\xC3", 2, "x" FFFD);                 /* truncated */
    lossy("\xC0\xAF", 2, FFFD FFFD);             /* overlong */
    lossy("\xED\xA0\x80", 3, FFFD FFFD FFFD);    /* surrogate */
    lossy("\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD); /* beyond U+10FFFF */
    lossy("\xE2\x82", 2, FFFD FFFD);
    CHECK(ffi_utf8_valid("", 0));
    CHECK(ffi_utf8_valid("\xC3\xA9", 2));
    CHECK(!ffi_utf8_valid("\xC3", 1));
    CHECK(!ffi_utf8_valid("\x80", 1));
}

static void test_detail(void)
{
    mxc_error e = {0};
    mxc_err(&e, MXC_E_STALE_ID, "gone");
    CHECK_INT_EQ(ffi_status_of(&e), 6);
    MxcErrorDetail d;
    ffi_detail_fill(&d, &e);
    CHECK_STR_EQ(d.message_utf8, "gone");
    CHECK(d.operation_utf8 == NULL && d.native_code_utf8 == NULL && d.remediation_utf8 == NULL);
    mxc_error_detail_free(&d);
    mxc_err_os(&e, MXC_E_BACKEND_ERROR, "exec.setns", 1, "do this", "failed");
    CHECK_INT_EQ(ffi_status_of(&e), 12);
    ffi_detail_fill(&d, &e);
    CHECK_STR_EQ(d.operation_utf8, "exec.setns");
    CHECK_STR_EQ(d.native_code_utf8, "0x1");
    CHECK_STR_EQ(d.remediation_utf8, "do this");
    mxc_error_detail_free(&d);
    ffi_detail_fill(NULL, &e);
    mxc_error_clear(&e);
    /* every wire code is its number */
    for (int c = 1; c < MXC_E__COUNT; c++) {
        mxc_err(&e, (mxc_code)c, "x");
        CHECK_INT_EQ(ffi_status_of(&e), c);
        mxc_error_clear(&e);
    }
}

static void test_gate(void)
{
    static const struct { const char *json; int kind; int32_t want; } T[] = {
        {NULL, FFI_ONESHOT, MXC_STATUS_NULL_ARGUMENT},
        {"{\"version\":\"1.0.0\",\"a\":\"\xC3\"}", FFI_ONESHOT, MXC_STATUS_INVALID_UTF8},
        {"{\"process\":{\"commandLine\":\"x\"}}", FFI_ONESHOT, 1},
        {"not json", FFI_ONESHOT, 1},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"}}", FFI_ONESHOT, 0},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"}}", FFI_STATE_AWARE, 1},
        {"{\"version\":\"1.0.0\",\"phase\":\"start\",\"sandboxId\":\"abc\"}", FFI_ONESHOT, 1},
        {"{\"version\":\"1.0.0\",\"phase\":\"start\",\"sandboxId\":\"abc\"}", FFI_STATE_AWARE, 5},
        {"{\"version\":\"1.0.0\",\"containment\":\"wslc\",\"process\":{\"commandLine\":\"x\"}}", FFI_ONESHOT, 2},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"ui\":{\"injection\":true}}", FFI_ONESHOT, 12},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        mxc_request *r;
        mxc_error e = {0};
        int32_t st = ffi_accept(T[i].json, 0, T[i].kind, &r, &e);
        CHECK_MSG(st == T[i].want, "[%zu] %s: %d (%s), want %d", i, T[i].json ? T[i].json : "NULL", st, e.message,
                  T[i].want);
        CHECK(st == 0 || e.message[0]);
        mxc_request_delete(r);
        mxc_error_clear(&e);
    }
}

int main(void)
{
    test_lossy();
    test_detail();
    test_gate();
    return CHECK_DONE();
}
