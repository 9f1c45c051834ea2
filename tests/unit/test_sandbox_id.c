/* test_sandbox_id.c — the iso: sandboxId codec, the agent-name charset and
 * the base64 codecs (url/nopad for ids, std/padded for --config-base64). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sandbox_id.h"

/* An encoder independent of the one under test, so that ids with arbitrary
 * payloads (malformed on purpose) can be built. */
static void b64url(const char *in, size_t n, char *out)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned b0 = (unsigned char)in[i];
        unsigned b1 = i + 1 < n ? (unsigned char)in[i + 1] : 0;
        unsigned b2 = i + 2 < n ? (unsigned char)in[i + 2] : 0;
        out[o++] = A[b0 >> 2];
        out[o++] = A[((b0 & 3) << 4) | (b1 >> 4)];
        if (i + 1 < n)
            out[o++] = A[((b1 & 15) << 2) | (b2 >> 6)];
        if (i + 2 < n)
            out[o++] = A[b2 & 63];
    }
    out[o] = '\0';
}

/* "iso:" + b64url(payload) into a static buffer. */
static const char *iso_of(const char *payload, size_t n)
{
    static char buf[8192];
    memcpy(buf, "iso:", 4);
    b64url(payload, n, buf + 4);
    return buf;
}

static const char *iso(const char *payload)
{
    return iso_of(payload, strlen(payload));
}

static mxc_code decode_code(const char *wire, mxc_error *e)
{
    mxc_sandbox_id id;
    mxc_error_clear(e);
    if (mxc_sandbox_id_decode(wire, &id, e) == 0)
        return MXC_E_NONE;
    return e->code;
}

/* ---- encode / decode round trip ---------------------------------------- */

static void roundtrip(const char *name, const char *app /* NULL = absent */)
{
    mxc_sandbox_id in, out;
    memset(&in, 0, sizeof in);
    snprintf(in.agent_name, sizeof in.agent_name, "%s", name);
    if (app) {
        in.has_app_id = true;
        snprintf(in.app_id, sizeof in.app_id, "%s", app);
    }
    char wire[MXC_SANDBOX_ID_MAX + 8], again[MXC_SANDBOX_ID_MAX + 8];
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_sandbox_id_encode(&in, wire, sizeof wire, &e), 0);
    CHECK(strncmp(wire, "iso:", 4) == 0);
    for (const char *c = wire + 4; *c; c++)
        CHECK_MSG((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                      *c == '_',
                  "char 0x%02x outside base64url", (unsigned char)*c);
    CHECK_INT_EQ(mxc_sandbox_id_decode(wire, &out, &e), 0);
    CHECK_STR_EQ(out.agent_name, name);
    CHECK_INT_EQ(out.has_app_id, app != NULL);
    if (app)
        CHECK_STR_EQ(out.app_id, app);
    /* determinism */
    CHECK_INT_EQ(mxc_sandbox_id_encode(&in, again, sizeof again, &e), 0);
    CHECK_STR_EQ(wire, again);
    /* re-encoding the decoded value gives the same id */
    CHECK_INT_EQ(mxc_sandbox_id_encode(&out, again, sizeof again, &e), 0);
    CHECK_STR_EQ(wire, again);
}

static void test_roundtrip(void)
{
    roundtrip("mxc-abc123", NULL);
    roundtrip("mxc-abc123", "");
    roundtrip("mxc-abc123", "PFN:Contoso.App_8wekyb3d8bbwe");
    roundtrip("mxc-0", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* é € 😀 */
    roundtrip("mxc-0", "quote\" back\\slash / colon:");
    {
        /* an appId no provision accepts is never encoded */
        mxc_sandbox_id bad = {0};
        char w[256];
        mxc_error be = {0};
        snprintf(bad.agent_name, sizeof bad.agent_name, "mxc-0");
        bad.has_app_id = true;
        snprintf(bad.app_id, sizeof bad.app_id, "tab\t");
        CHECK(mxc_sandbox_id_encode(&bad, w, sizeof w, &be) < 0);
        mxc_error_clear(&be);
    }
    roundtrip("mxc-abcdefghijklmnopqrstuvwxyz0", "x"); /* 31 bytes: the longest safe name */

    /* "" and absent are distinct ids */
    mxc_sandbox_id a = {0}, b = {0};
    snprintf(a.agent_name, sizeof a.agent_name, "mxc-x");
    b = a;
    b.has_app_id = true;
    char wa[256], wb[256];
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_sandbox_id_encode(&a, wa, sizeof wa, &e), 0);
    CHECK_INT_EQ(mxc_sandbox_id_encode(&b, wb, sizeof wb, &e), 0);
    CHECK(strcmp(wa, wb) != 0);

    /* appId null in the payload is absent */
    mxc_sandbox_id out;
    CHECK_INT_EQ(mxc_sandbox_id_decode(iso("{\"version\":1,\"agentUserName\":\"mxc-x\",\"appId\":null}"), &out, &e), 0);
    CHECK(!out.has_app_id);

    /* the longest appId (256 four-byte characters = 1024 bytes) round-trips */
    char *big = malloc(1025);
    for (int i = 0; i < 256; i++)
        memcpy(big + 4 * i, "\xf0\x9f\x98\x80", 4);
    big[1024] = '\0';
    roundtrip("mxc-big", big);
    free(big);

    /* too small a buffer is an error, not an overflow */
    char tiny[8];
    CHECK_INT_EQ(mxc_sandbox_id_encode(&a, tiny, sizeof tiny, &e), -1);
    CHECK_INT_EQ(e.code, MXC_E_BACKEND_ERROR);
    CHECK_INT_EQ(mxc_sandbox_id_encode(&a, tiny, 3, &e), -1);
    mxc_error_clear(&e);
}

/* The exact payload: key order version, agentUserName, appId; compact. */
static void test_payload_shape(void)
{
    const struct { const char *name, *app, *payload; } T[] = {
        {"mxc-a", NULL, "{\"version\":1,\"agentUserName\":\"mxc-a\"}"},
        {"mxc-a", "", "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":\"\"}"},
        {"mxc-a1", "x", "{\"version\":1,\"agentUserName\":\"mxc-a1\",\"appId\":\"x\"}"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        mxc_sandbox_id id = {0};
        snprintf(id.agent_name, sizeof id.agent_name, "%s", T[i].name);
        if (T[i].app) {
            id.has_app_id = true;
            snprintf(id.app_id, sizeof id.app_id, "%s", T[i].app);
        }
        char wire[512];
        mxc_error e = {0};
        CHECK_INT_EQ(mxc_sandbox_id_encode(&id, wire, sizeof wire, &e), 0);
        CHECK_STR_EQ(wire, iso(T[i].payload));
        unsigned char raw[512];
        long n = mxc_b64url_decode(wire + 4, strlen(wire + 4), raw, sizeof raw);
        CHECK(n > 0);
        if (n > 0) {
            raw[n] = '\0';
            CHECK_STR_EQ((const char *)raw, T[i].payload);
        }
    }
}

/* ---- malformed ids ------------------------------------------------------- */

static void test_malformed(void)
{
    char long_body[MXC_SANDBOX_ID_MAX + 16];
    memcpy(long_body, "iso:", 4);
    memset(long_body + 4, 'A', MXC_SANDBOX_ID_MAX + 4);
    long_body[MXC_SANDBOX_ID_MAX + 8] = '\0';

    static const char *const RAW[] = {
        "",
        "noColonAtAll",
        ":abc",
        ":",
        "iso:",
        "iso:e30=",            /* "{}" with padding */
        "iso:eyJ2ZXJzaW9uIjoxfQ==",
        "iso:A",               /* length % 4 == 1 */
        "iso:AAAAA",
        "iso:ab+c",
        "iso:ab/c",
        "iso:ab=c",
        "iso:ab c",
        "iso:abc\n",
        "iso:\tabc",
        "iso:%2F",
        "iso:%2Fabc",
        "iso:abc:def",
        "iso:e31",             /* "{}" with a non-zero trailing bit */
        "iso:\xc3\xa9",
    };
    mxc_error e = {0};
    for (size_t i = 0; i < sizeof RAW / sizeof RAW[0]; i++)
        CHECK_MSG(decode_code(RAW[i], &e) == MXC_E_MALFORMED_ID, "raw case %zu \"%s\" -> %s", i, RAW[i],
                  mxc_code_name(e.code));
    CHECK_INT_EQ(decode_code(long_body, &e), MXC_E_MALFORMED_ID);

    static const char *const PAYLOADS[] = {
        "hello",
        "",
        "[1,2]",
        "[{\"version\":1,\"agentUserName\":\"mxc-a\"}]",
        "\"mxc-a\"",
        "1",
        "null",
        "{}",
        "{\"agentUserName\":\"mxc-a\"}",                          /* missing version */
        "{\"version\":\"1\",\"agentUserName\":\"mxc-a\"}",        /* version as string */
        "{\"version\":1.0,\"agentUserName\":\"mxc-a\"}",          /* version as real */
        "{\"version\":true,\"agentUserName\":\"mxc-a\"}",
        "{\"version\":null,\"agentUserName\":\"mxc-a\"}",
        "{\"version\":0,\"agentUserName\":\"mxc-a\"}",
        "{\"version\":-1,\"agentUserName\":\"mxc-a\"}",
        "{\"version\":1}",                                        /* missing agentUserName */
        "{\"version\":1,\"agentUserName\":5}",
        "{\"version\":1,\"agentUserName\":null}",
        "{\"version\":1,\"agentUserName\":[\"mxc-a\"]}",
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":5}",
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":true}",
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":[]}",
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":{}}",
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"agentUserName\":\"mxc-b\"}", /* duplicate */
        "{\"version\":1,\"agentUserName\":\"mxc-a\"} trailing",
        "{\"version\":1,\"agentUserName\":\"mxc-a\"}{}",
        "{\"version\":1,\"agentUserName\":\"mxc-a\\u0000\"}",      /* NUL inside */
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":\"a\\u0000b\"}",
        "{\"version\":1,\"agentUserName\":\"mxc-\xff\"}",          /* invalid UTF-8 */
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":\"\xc0\xaf\"}", /* overlong */
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":\"\xed\xa0\x80\"}", /* surrogate */
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":\"\xe2\x82\"}", /* truncated */
        "{\"version\":1,\"agentUserName\":\"mxc-a\"",              /* unterminated */
        "\xef\xbb\xbf{\"version\":1,\"agentUserName\":\"mxc-a\"}", /* BOM */
    };
    for (size_t i = 0; i < sizeof PAYLOADS / sizeof PAYLOADS[0]; i++) {
        mxc_code c = decode_code(iso(PAYLOADS[i]), &e);
        CHECK_MSG(c == MXC_E_MALFORMED_ID, "payload case %zu '%s' -> %s (%s)", i, PAYLOADS[i], mxc_code_name(c),
                  e.message);
        if (c != MXC_E_NONE)
            CHECK(e.message[0] != '\0');
    }

    /* appId longer than the id buffer */
    char *p = malloc(2000);
    int n = snprintf(p, 2000, "{\"version\":1,\"agentUserName\":\"mxc-a\",\"appId\":\"");
    memset(p + n, 'a', 1025);
    snprintf(p + n + 1025, 2000 - (size_t)n - 1025, "\"}");
    CHECK_INT_EQ(decode_code(iso(p), &e), MXC_E_MALFORMED_ID);
    free(p);

    /* non-canonical trailing bits on a real payload: flip the lowest bit of
     * the last sextet of an encoding whose last group is partial */
    const char *good = "{\"version\":1,\"agentUserName\":\"mxc-ab\"}";
    CHECK(strlen(good) % 3 != 0);
    char wire[256];
    snprintf(wire, sizeof wire, "%s", iso(good));
    CHECK_INT_EQ(decode_code(wire, &e), MXC_E_NONE);
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *last = wire + strlen(wire) - 1;
    *last = A[(strchr(A, *last) - A) ^ 1];
    CHECK_INT_EQ(decode_code(wire, &e), MXC_E_MALFORMED_ID);
    mxc_error_clear(&e);
}

static void test_version_gate(void)
{
    mxc_error e = {0};
    const char *newer[] = {
        "{\"version\":2,\"agentUserName\":\"mxc-a\"}",
        "{\"version\":99999999999,\"agentUserName\":\"mxc-a\"}",
        "{\"version\":2,\"agentUserName\":\"something/else\",\"newKey\":[1]}",
    };
    for (size_t i = 0; i < sizeof newer / sizeof newer[0]; i++) {
        CHECK_INT_EQ(decode_code(iso(newer[i]), &e), MXC_E_MALFORMED_ID);
        CHECK_CONTAINS(e.message, "upgrade");
        /* the SDK's tests match these words */
        CHECK_CONTAINS(e.message, "newer MXC");
    }
    /* version 0 is malformed but not an upgrade */
    CHECK_INT_EQ(decode_code(iso("{\"version\":0,\"agentUserName\":\"mxc-a\"}"), &e), MXC_E_MALFORMED_ID);
    CHECK(strstr(e.message, "upgrade") == NULL);
    CHECK(strstr(e.message, "newer MXC") == NULL);

    /* unknown keys are ignored (additive evolution) */
    const char *extra[] = {
        "{\"version\":1,\"agentUserName\":\"mxc-a\",\"future\":{\"x\":[1,2]}}",
        "{\"future\":null,\"agentUserName\":\"mxc-a\",\"version\":1}",
        "{\"appId\":\"z\",\"agentUserName\":\"mxc-a\",\"version\":1,\"v2\":\"\"}",
        " {\"version\":1 , \"agentUserName\":\"mxc-a\"} ",
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        mxc_sandbox_id id;
        CHECK_MSG(mxc_sandbox_id_decode(iso(extra[i]), &id, &e) == 0, "extra case %zu: %s", i, e.message);
        CHECK_STR_EQ(id.agent_name, "mxc-a");
    }
    mxc_error_clear(&e);
}

static void test_prefix(void)
{
    mxc_error e = {0};
    const char *unsupported[] = {"xyz:abc", "wsb:abc", "wslc:e30", "ISO:e30", "iso2:abc", "isolation_session:x",
                                 "xyz:", "x:abc=+/"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
        CHECK_MSG(decode_code(unsupported[i], &e) == MXC_E_UNSUPPORTED_CONTAINMENT, "%s -> %s", unsupported[i],
                  mxc_code_name(e.code));
    /* a very long prefix is still unsupported, message bounded */
    char lp[600];
    memset(lp, 'p', 500);
    snprintf(lp + 500, sizeof lp - 500, ":abc");
    CHECK_INT_EQ(decode_code(lp, &e), MXC_E_UNSUPPORTED_CONTAINMENT);
    CHECK(strlen(e.message) < 200);
    mxc_error_clear(&e);
}

static void test_stale_names(void)
{
    mxc_error e = {0};
    const char *names[] = {
        "",        "root",          "/",          "..",          "mxc-../../etc", "../mxc-a", "mxc-a/b",
        "mxc-",    "mxc-A",         "MXC-a",      "mxc-a b",     "mxc-a\\nb",     "mxc_a",    "mxc-a.b",
        "mxc-a-b", "mxc-\\u00e9",   "mxc-abcdefghijklmnopqrstuvwxyz01", /* 32 bytes: too long */
        "xmxc-a",  " mxc-a",        "mxc-a ",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char payload[256];
        snprintf(payload, sizeof payload, "{\"version\":1,\"agentUserName\":\"%s\"}", names[i]);
        mxc_code c = decode_code(iso(payload), &e);
        CHECK_MSG(c == MXC_E_STALE_ID, "name \"%s\" -> %s", names[i], mxc_code_name(c));
    }

    const struct { const char *name; bool safe; } S[] = {
        {"mxc-a", true}, {"mxc-0", true}, {"mxc-abc123", true}, {"mxc-abcdefghijklmnopqrstuvwxyz0", true},
        {"mxc-abcdefghijklmnopqrstuvwxyz01", false}, {"mxc-", false}, {"mxc", false}, {"", false},
        {"mxc-a/", false}, {"mxc-..", false}, {"mxc-A", false}, {"nxc-a", false}, {"mxc-\xc3\xa9", false},
    };
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        CHECK_MSG(mxc_agent_name_is_safe(S[i].name) == S[i].safe, "is_safe(\"%s\")", S[i].name);
    mxc_error_clear(&e);
}

/* ---- base64 codecs -------------------------------------------------------- */

static void test_b64std(void)
{
    const struct { const char *in; const char *out; } OK[] = {
        {"", ""},         {"Zg==", "f"},         {"Zm8=", "fo"},         {"Zm9v", "foo"},
        {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"}, {"+/8=", "\xfb\xff"},
        {"//79", "\xff\xfe\xfd"},
    };
    for (size_t i = 0; i < sizeof OK / sizeof OK[0]; i++) {
        unsigned char buf[64];
        long n = mxc_b64std_decode(OK[i].in, strlen(OK[i].in), buf, sizeof buf);
        CHECK_MSG(n == (long)strlen(OK[i].out), "b64std(\"%s\") = %ld", OK[i].in, n);
        if (n >= 0)
            CHECK_MSG(memcmp(buf, OK[i].out, (size_t)n) == 0, "b64std(\"%s\") bytes", OK[i].in);
    }
    const char *BAD[] = {
        "Zg",       /* padding required */
        "Zm8",      "Zg=",  "Zg===", "Z===", "====", "=", "==", "Zh==", /* non-canonical */
        "Zm9=",     /* non-canonical */
        "Zg==Zg==", /* padding in the middle */
        "Zm=v",     "Zm-v", "Zm_v", "Zm9v\n", " Zm9v", "Zm9v====", "Zm9vY===", "Zm 9", "Zm9\xc3",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        unsigned char buf[64];
        CHECK_MSG(mxc_b64std_decode(BAD[i], strlen(BAD[i]), buf, sizeof buf) == -1, "b64std(\"%s\") accepted",
                  BAD[i]);
    }
    /* output bound respected */
    unsigned char small[2];
    CHECK_INT_EQ(mxc_b64std_decode("Zm9v", 4, small, sizeof small), -1);
    CHECK_INT_EQ(mxc_b64std_decode("Zm8=", 4, small, sizeof small), 2);
}

static void test_b64url(void)
{
    const struct { const char *raw; const char *enc; } V[] = {
        {"", ""}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"}, {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"},
        {"foobar", "Zm9vYmFy"}, {"\xfb\xff", "-_8"}, {"\xff\xfe\xfd", "__79"},
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        char out[64];
        size_t n = mxc_b64url_encode((const unsigned char *)V[i].raw, strlen(V[i].raw), out, sizeof out);
        CHECK_INT_EQ(n, strlen(V[i].enc));
        CHECK_STR_EQ(out, V[i].enc);
        unsigned char back[64];
        long m = mxc_b64url_decode(V[i].enc, strlen(V[i].enc), back, sizeof back);
        CHECK_INT_EQ(m, (long)strlen(V[i].raw));
        if (m > 0)
            CHECK(memcmp(back, V[i].raw, (size_t)m) == 0);
    }
    const char *BAD[] = {"Zg==", "Zg=", "+/8", "Z", "Zm9vY", "Zh", "Zm9", "Zm 9", "Zm9v\n", "a=bc"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        unsigned char buf[64];
        CHECK_MSG(mxc_b64url_decode(BAD[i], strlen(BAD[i]), buf, sizeof buf) == -1, "b64url(\"%s\") accepted",
                  BAD[i]);
    }
    /* every byte string has exactly one accepted encoding: all 2-char and
     * 3-char bodies, decoded then re-encoded, give themselves back */
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    int bad = 0;
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++)
            for (int c = -1; c < 64; c++) {
                char in[4] = {A[a], A[b], c >= 0 ? A[c] : '\0', '\0'};
                unsigned char raw[4];
                long n = mxc_b64url_decode(in, strlen(in), raw, sizeof raw);
                if (n < 0)
                    continue;
                char re[8];
                mxc_b64url_encode(raw, (size_t)n, re, sizeof re);
                if (strcmp(re, in) != 0)
                    bad++;
            }
    CHECK_INT_EQ(bad, 0);
    /* bounded output */
    char small[3];
    CHECK_INT_EQ(mxc_b64url_encode((const unsigned char *)"foo", 3, small, sizeof small), 0);
    unsigned char one[1];
    CHECK_INT_EQ(mxc_b64url_decode("Zm8", 3, one, sizeof one), -1);
}

int main(void)
{
    test_roundtrip();
    test_payload_shape();
    test_malformed();
    test_version_gate();
    test_prefix();
    test_stale_names();
    test_b64std();
    test_b64url();
    return CHECK_DONE();
}
