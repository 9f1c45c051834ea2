/* test_app_id.c — appId rules: <= 256 code points, valid UTF-8, no control
 * characters (C0, DEL, C1); "" distinct from absent; null = absent.  Both the
 * validator directly and the provision request path (policy_validation). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "policy.h"
#include "request.h"
#include "sandbox_id.h"

static char *repeat(const char *unit, size_t count, size_t *len_out)
{
    size_t u = strlen(unit);
    char *s = malloc(u * count + 1);
    for (size_t i = 0; i < count; i++)
        memcpy(s + i * u, unit, u);
    s[u * count] = '\0';
    if (len_out)
        *len_out = u * count;
    return s;
}

static mxc_code validate(const char *s, size_t len)
{
    mxc_error e = {0};
    int rc = mxc_app_id_validate(s, len, &e);
    mxc_code c = rc == 0 ? MXC_E_NONE : e.code;
    if (rc != 0)
        CHECK(e.message[0] != '\0');
    mxc_error_clear(&e);
    return c;
}

static void test_lengths(void)
{
    const char *units[] = {"a", "\xc3\xa9" /* é */, "\xe2\x82\xac" /* € */, "\xf0\x9f\x98\x80" /* 😀 */};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t len;
        char *s = repeat(units[i], 256, &len);
        CHECK_MSG(validate(s, len) == MXC_E_NONE, "256 x unit %zu", i);
        free(s);
        s = repeat(units[i], 257, &len);
        CHECK_MSG(validate(s, len) == MXC_E_POLICY_VALIDATION, "257 x unit %zu", i);
        free(s);
        s = repeat(units[i], 1000, &len);
        CHECK_MSG(validate(s, len) == MXC_E_POLICY_VALIDATION, "1000 x unit %zu", i);
        free(s);
    }
    /* mixed widths: 255 ASCII + one 4-byte = 256 code points (259 bytes) */
    char *s = repeat("a", 255, NULL);
    size_t n = strlen(s);
    s = realloc(s, n + 5);
    memcpy(s + n, "\xf0\x9f\x98\x80", 5);
    CHECK_INT_EQ(validate(s, strlen(s)), MXC_E_NONE);
    free(s);
    CHECK_INT_EQ(validate("", 0), MXC_E_NONE);
    /* the length is the caller's: a NUL-free prefix of a longer buffer */
    CHECK_INT_EQ(validate("abc\x01", 3), MXC_E_NONE);
}

static void test_characters(void)
{
    const struct { const char *s; size_t len; mxc_code want; } T[] = {
        {"PFN:Contoso.App_8wekyb3d8bbwe", 29, MXC_E_NONE},
        {"any string / with: spaces & punctuation!", 40, MXC_E_NONE},
        {"\x7f", 1, MXC_E_POLICY_VALIDATION},                /* DEL */
        {"a\x7f" "b", 3, MXC_E_POLICY_VALIDATION},
        {"\xc2\x85", 2, MXC_E_POLICY_VALIDATION},            /* U+0085 NEL (C1) */
        {"\xc2\x80", 2, MXC_E_POLICY_VALIDATION},            /* U+0080 (C1 first) */
        {"\xc2\x9f", 2, MXC_E_POLICY_VALIDATION},            /* U+009F (C1 last) */
        {"\xc2\xa0", 2, MXC_E_NONE},                         /* U+00A0 is not a control */
        {"\x07", 1, MXC_E_POLICY_VALIDATION},                /* BEL */
        {"a\tb", 3, MXC_E_POLICY_VALIDATION},
        {"a\nb", 3, MXC_E_POLICY_VALIDATION},
        {"\x1f", 1, MXC_E_POLICY_VALIDATION},
        {" ", 1, MXC_E_NONE},
        {"a\0b", 3, MXC_E_POLICY_VALIDATION},                /* embedded NUL, counted by len */
        {"\0", 1, MXC_E_POLICY_VALIDATION},
        {"\xff", 1, MXC_E_POLICY_VALIDATION},                /* invalid UTF-8 */
        {"\x80", 1, MXC_E_POLICY_VALIDATION},                /* lone continuation */
        {"\xc0\x80", 2, MXC_E_POLICY_VALIDATION},            /* overlong NUL */
        {"\xc0\xaf", 2, MXC_E_POLICY_VALIDATION},            /* overlong '/' */
        {"\xe0\x80\xaf", 3, MXC_E_POLICY_VALIDATION},        /* overlong 3-byte */
        {"\xed\xa0\x80", 3, MXC_E_POLICY_VALIDATION},        /* surrogate U+D800 */
        {"\xf4\x90\x80\x80", 4, MXC_E_POLICY_VALIDATION},    /* > U+10FFFF */
        {"\xf8\x88\x80\x80\x80", 5, MXC_E_POLICY_VALIDATION},
        {"\xe2\x82", 2, MXC_E_POLICY_VALIDATION},            /* truncated */
        {"\xf4\x8f\xbf\xbf", 4, MXC_E_NONE},                 /* U+10FFFF */
        {"\xef\xbf\xbd", 3, MXC_E_NONE},                     /* U+FFFD */
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        CHECK_MSG(validate(T[i].s, T[i].len) == T[i].want, "case %zu", i);

    mxc_error e = {0};
    CHECK_INT_EQ(mxc_app_id_validate("ab\x07", 3, &e), -1);
    CHECK_CONTAINS(e.message, "U+0007");
    mxc_error_clear(&e);
}

/* Through the wire: provision request -> parse -> policy. */
static mxc_code provision_with(const char *app_json, mxc_request *keep)
{
    char buf[16384];
    snprintf(buf, sizeof buf,
             "{\"containment\":\"isolation_session\",\"phase\":\"provision\","
             "\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":%s}}}}",
             app_json);
    mxc_request r;
    mxc_error e = {0};
    mxc_code c = MXC_E_NONE;
    if (mxc_request_parse(buf, strlen(buf), &r, &e) < 0)
        c = e.code;
    else if (mxc_policy_validate(&r, &e) < 0)
        c = e.code;
    if (keep && c == MXC_E_NONE)
        *keep = r;
    else
        mxc_request_free(&r);
    mxc_error_clear(&e);
    return c;
}

static void test_request_path(void)
{
    mxc_request r;
    CHECK_INT_EQ(provision_with("\"\"", &r), MXC_E_NONE);
    CHECK(r.has_app_id);
    CHECK_INT_EQ(r.app_id_len, 0);
    CHECK_STR_EQ(r.app_id, "");
    mxc_request_free(&r);

    CHECK_INT_EQ(provision_with("null", &r), MXC_E_NONE);
    CHECK(!r.has_app_id);
    mxc_request_free(&r);

    CHECK_INT_EQ(provision_with("\"PFN:Contoso.App_8wekyb3d8bbwe\"", &r), MXC_E_NONE);
    CHECK(r.has_app_id);
    CHECK_STR_EQ(r.app_id, "PFN:Contoso.App_8wekyb3d8bbwe");
    mxc_request_free(&r);

    CHECK_INT_EQ(provision_with("\"\\u00e9\\u20ac\\ud83d\\ude00\"", &r), MXC_E_NONE);
    CHECK_INT_EQ(r.app_id_len, 9);
    mxc_request_free(&r);

    CHECK_INT_EQ(provision_with("5", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("true", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("[\"x\"]", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("{}", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("\"a\\u007fb\"", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("\"a\\u0085b\"", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("\"a\\u0007b\"", NULL), MXC_E_POLICY_VALIDATION);
    CHECK_INT_EQ(provision_with("\"a\\nb\"", NULL), MXC_E_POLICY_VALIDATION);
    /* NUL never reaches the validator on the wire: the JSON layer refuses it */
    CHECK_INT_EQ(provision_with("\"a\\u0000b\"", NULL), MXC_E_MALFORMED_REQUEST);
    /* an unpaired surrogate escape is not valid JSON text */
    CHECK_INT_EQ(provision_with("\"\\ud800\"", NULL), MXC_E_MALFORMED_REQUEST);

    const char *units[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    for (size_t i = 0; i < 3; i++) {
        for (size_t count = 256; count <= 257; count++) {
            char *s = repeat(units[i], count, NULL);
            char *q = malloc(strlen(s) + 3);
            sprintf(q, "\"%s\"", s);
            CHECK_MSG(provision_with(q, NULL) == (count == 256 ? MXC_E_NONE : MXC_E_POLICY_VALIDATION),
                      "wire appId %zu x unit %zu", count, i);
            free(q);
            free(s);
        }
    }
}

/* appId survives the sandboxId: "" distinct from absent. */
static void test_id_carries_app_id(void)
{
    const char *apps[] = {NULL, "", "x", "\xf0\x9f\x98\x80"};
    char wires[4][512];
    for (size_t i = 0; i < 4; i++) {
        mxc_sandbox_id id = {0}, out;
        snprintf(id.agent_name, sizeof id.agent_name, "mxc-app");
        if (apps[i]) {
            id.has_app_id = true;
            snprintf(id.app_id, sizeof id.app_id, "%s", apps[i]);
        }
        mxc_error e = {0};
        CHECK_INT_EQ(mxc_sandbox_id_encode(&id, wires[i], sizeof wires[i], &e), 0);
        CHECK_INT_EQ(mxc_sandbox_id_decode(wires[i], &out, &e), 0);
        CHECK_INT_EQ(out.has_app_id, apps[i] != NULL);
        if (apps[i])
            CHECK_STR_EQ(out.app_id, apps[i]);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(wires[i], wires[j]) != 0);
    }
}

int main(void)
{
    test_lengths();
    test_characters();
    test_request_path();
    test_id_carries_app_id();
    return CHECK_DONE();
}
