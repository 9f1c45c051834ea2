/* ocijson.c — see ocijson.h. */
#include "ocijson.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"

#define U64_MAX_TEXT "18446744073709551615"
#define MAX_DOC (64u << 20) /* a config.json larger than this is not one */

static bool in_number(char ch)
{
    return (ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-';
}

/* text with every number token that is exactly U64_MAX_TEXT given ".0" (malloc'd). */
static char *rewrite(const char *text, size_t len, size_t *outlen)
{
    size_t n = 0;
    for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), U64_MAX_TEXT, strlen(U64_MAX_TEXT)));
         p += strlen(U64_MAX_TEXT))
        n++;
    char *out = malloc(len + 2 * n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    bool str = false, esc = false;
    for (size_t i = 0; i < len;) {
        char ch = text[i];
        if (str) {
            str = esc || ch != '"';
            esc = !esc && ch == '\\';
            out[o++] = text[i++];
            continue;
        }
        if (ch == '"') {
            str = true;
            out[o++] = text[i++];
            continue;
        }
        if (in_number(ch)) {
            size_t j = i;
            while (j < len && in_number(text[j]))
                j++;
            memcpy(out + o, text + i, j - i);
            o += j - i;
            if (j - i == strlen(U64_MAX_TEXT) && !memcmp(text + i, U64_MAX_TEXT, j - i)) {
                memcpy(out + o, ".0", 2);
                o += 2;
            }
            i = j;
            continue;
        }
        out[o++] = text[i++];
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

json_t *oci_json_loadfd(int fd, size_t flags, json_error_t *je)
{
    json_error_t local;
    if (!je)
        je = &local;
    size_t len = 0;
    char *text = mxc_read_whole(fd, (size_t)MAX_DOC + 1, &len);
    if (!text || len > MAX_DOC) {
        int err = text ? EFBIG : errno;
        free(text);
        memset(je, 0, sizeof *je);
        if (err == EFBIG)
            snprintf(je->text, sizeof je->text, "too large: larger than the limit of %u MiB", MAX_DOC >> 20);
        else
            snprintf(je->text, sizeof je->text, "cannot read it (%s)", strerror(err));
        return NULL;
    }
    json_t *j = oci_json_loadb(text, len, flags, je);
    free(text);
    return j;
}

json_t *oci_json_loadb(const char *text, size_t len, size_t flags, json_error_t *je)
{
    json_error_t local;
    if (!je)
        je = &local;
    size_t outlen = 0;
    char *doc = rewrite(text, len, &outlen);
    if (!doc) {
        memset(je, 0, sizeof *je);
        snprintf(je->text, sizeof je->text, "out of memory");
        return NULL;
    }
    json_t *j = json_loadb(doc, outlen, flags, je);
    free(doc);
    return j;
}

bool oci_u64_of(const json_t *v, uint64_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v) && json_real_value(v) == 18446744073709551616.0) {
        *out = UINT64_MAX;
        return true;
    }
    return false;
}
