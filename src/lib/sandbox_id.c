/* sandbox_id.c — see sandbox_id.h. */
#include "sandbox_id.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char B64STD[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int sextet(const char *alphabet, char c)
{
    const char *p = c ? strchr(alphabet, c) : NULL;
    return p ? (int)(p - alphabet) : -1;
}

size_t mxc_b64url_encode(const unsigned char *in, size_t n, char *out, size_t outsz)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        size_t take = n - i < 3 ? n - i : 3;
        if (take > 1)
            v |= (uint32_t)in[i + 1] << 8;
        if (take > 2)
            v |= in[i + 2];
        size_t chars = take + 1;
        for (size_t k = 0; k < chars; k++) {
            if (o + 1 >= outsz)
                return 0;
            out[o++] = B64URL[(v >> (18 - 6 * k)) & 63];
        }
    }
    if (o >= outsz)
        return 0;
    out[o] = '\0';
    return o;
}

/* Decodes unpadded groups; rejects a lone trailing sextet and non-zero
 * trailing bits (RFC 4648 §3.5), so every byte string has one encoding. */
static long decode_groups(const char *alphabet, const char *in, size_t n, unsigned char *out, size_t outsz)
{
    if (n % 4 == 1)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        size_t chars = n - i < 4 ? n - i : 4;
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            int s = k < chars ? sextet(alphabet, in[i + k]) : 0;
            if (s < 0)
                return -1;
            v = (v << 6) | (uint32_t)s;
        }
        size_t bytes = chars - 1;
        if (bytes < 3 && (v & ((1u << (8 * (3 - bytes))) - 1)) != 0)
            return -1;
        for (size_t k = 0; k < bytes; k++) {
            if (o >= outsz)
                return -1;
            out[o++] = (unsigned char)(v >> (16 - 8 * k));
        }
    }
    return (long)o;
}

long mxc_b64url_decode(const char *in, size_t n, unsigned char *out, size_t outsz)
{
    return decode_groups(B64URL, in, n, out, outsz);
}

long mxc_b64std_decode(const char *in, size_t n, unsigned char *out, size_t outsz)
{
    if (n % 4 != 0)
        return -1;
    size_t pad = 0;
    while (pad < 2 && n > pad && in[n - 1 - pad] == '=')
        pad++;
    return decode_groups(B64STD, in, n - pad, out, outsz);
}

bool mxc_agent_name_is_safe(const char *name)
{
    size_t n = strlen(name);
    if (n < 5 || n >= MXC_AGENT_NAME_MAX || strncmp(name, "mxc-", 4) != 0)
        return false;
    for (size_t i = 4; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

size_t mxc_utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0)
        return 0;
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

int mxc_app_id_validate(const char *s, size_t len, mxc_error *e)
{
    size_t chars = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = mxc_utf8_next((const unsigned char *)s + i, len - i, &cp);
        if (!k)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "appId is not valid UTF-8");
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
            return mxc_err(e, MXC_E_POLICY_VALIDATION,
                           "appId contains a control character (U+%04X) at character %zu", cp, chars + 1);
        if (++chars > MXC_APP_ID_MAX_CHARS)
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "appId is longer than %d characters",
                           MXC_APP_ID_MAX_CHARS);
        i += k;
    }
    return 0;
}

int mxc_sandbox_id_encode(const mxc_sandbox_id *id, char *out, size_t outsz, mxc_error *e)
{
    /* Built by hand, not from a map, so key order is fixed: version,
     * agentUserName, appId. */
    if (!mxc_agent_name_is_safe(id->agent_name) ||
        (id->has_app_id && mxc_app_id_validate(id->app_id, strlen(id->app_id), e) < 0))
        return mxc_err(e, MXC_E_BACKEND_ERROR, "refusing to encode an invalid agent name or appId");
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(MXC_SANDBOX_ID_VERSION));
    json_object_set_new(o, "agentUserName", json_string(id->agent_name));
    if (id->has_app_id)
        json_object_set_new(o, "appId", json_string(id->app_id));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "cannot serialise the sandboxId payload");
    size_t plen = strlen(MXC_ISO_PREFIX ":");
    memcpy(out, MXC_ISO_PREFIX ":", plen < outsz ? plen : 0);
    size_t n = outsz > plen ? mxc_b64url_encode((const unsigned char *)text, strlen(text), out + plen, outsz - plen) : 0;
    free(text);
    if (!n)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "sandboxId does not fit its buffer");
    return 0;
}

static int decode_payload(json_t *o, mxc_sandbox_id *id, mxc_error *e)
{
    if (!json_is_object(o))
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId payload is not a JSON object");
    json_t *v = json_object_get(o, "version");
    if (!json_is_integer(v))
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId payload lacks an integer version");
    json_int_t ver = json_integer_value(v);
    if (ver > MXC_SANDBOX_ID_VERSION)
        return mxc_err(e, MXC_E_MALFORMED_ID,
                       "sandboxId was minted by a newer MXC (payload version %lld, this build understands up to %d); "
                       "upgrade MXC to use this sandbox",
                       (long long)ver, MXC_SANDBOX_ID_VERSION);
    if (ver < 1)
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId version %lld is not valid", (long long)ver);
    json_t *name = json_object_get(o, "agentUserName");
    if (!json_is_string(name))
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId payload lacks a string agentUserName");
    json_t *app = json_object_get(o, "appId");
    if (app && !json_is_string(app) && !json_is_null(app))
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId appId is not a string");
    const char *n = json_string_value(name);
    if (!mxc_agent_name_is_safe(n))
        return mxc_err(e, MXC_E_STALE_ID, "sandboxId names no sandbox of this host");
    snprintf(id->agent_name, sizeof id->agent_name, "%s", n);
    if (json_is_string(app)) {
        size_t alen = json_string_length(app);
        if (alen >= sizeof id->app_id || mxc_app_id_validate(json_string_value(app), alen, e) < 0)
            return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId carries an appId no provision could have accepted");
        memcpy(id->app_id, json_string_value(app), alen + 1);
        id->has_app_id = true;
    }
    return 0;
}

int mxc_sandbox_id_decode(const char *wire, mxc_sandbox_id *id, mxc_error *e)
{
    memset(id, 0, sizeof *id);
    const char *colon = strchr(wire, ':');
    if (!colon || colon == wire)
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId has no backend prefix (expected \"iso:...\")");
    size_t plen = (size_t)(colon - wire);
    if (plen != strlen(MXC_ISO_PREFIX) || strncmp(wire, MXC_ISO_PREFIX, plen) != 0)
        return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT,
                       "sandboxId prefix \"%.*s\" names a backend this build does not have",
                       (int)(plen > 32 ? 32 : plen), wire);
    const char *body = colon + 1;
    size_t blen = strlen(body);
    if (blen == 0 || blen > MXC_SANDBOX_ID_MAX)
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId body is empty or too long");
    unsigned char buf[MXC_SANDBOX_ID_MAX];
    long n = mxc_b64url_decode(body, blen, buf, sizeof buf - 1);
    if (n < 0)
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId body is not canonical base64url without padding");
    json_error_t jerr;
    json_t *o = json_loadb((const char *)buf, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        return mxc_err(e, MXC_E_MALFORMED_ID, "sandboxId payload is not valid UTF-8 JSON");
    int rc = decode_payload(o, id, e);
    json_decref(o);
    return rc;
}
