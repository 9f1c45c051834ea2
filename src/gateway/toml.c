/* toml.c — see toml.h. */
#include "toml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_HEADER = 1, T_DOTTED = 2, T_INLINE = 4 }; /* how a table came to be */

typedef struct {
    json_t *obj;
    unsigned how;
} table_mark;

typedef struct {
    const char *p, *end;
    unsigned line;
    mxc_error *e;
    bool failed;
    table_mark *marks;
    size_t nmarks, capmarks;
} parser;

static bool fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    char what[sizeof ps->e->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    mxc_err(ps->e, MXC_E_MALFORMED_REQUEST, "line %u: %s", ps->line, what);
    return false;
}

static unsigned mark_of(parser *ps, json_t *obj)
{
    for (size_t i = 0; i < ps->nmarks; i++)
        if (ps->marks[i].obj == obj)
            return ps->marks[i].how;
    return 0;
}

static bool mark(parser *ps, json_t *obj, unsigned how)
{
    for (size_t i = 0; i < ps->nmarks; i++)
        if (ps->marks[i].obj == obj) {
            ps->marks[i].how |= how;
            return true;
        }
    if (ps->nmarks == ps->capmarks) {
        size_t cap = ps->capmarks ? ps->capmarks * 2 : 16;
        table_mark *m = realloc(ps->marks, cap * sizeof *m);
        if (!m)
            return fail(ps, "out of memory");
        ps->marks = m, ps->capmarks = cap;
    }
    ps->marks[ps->nmarks++] = (table_mark){obj, how};
    return true;
}

static bool at_end(const parser *ps) { return ps->p >= ps->end; }
static char peek(const parser *ps) { return at_end(ps) ? '\0' : *ps->p; }

static void skip_ws(parser *ps)
{
    while (!at_end(ps) && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* A comment (if any) up to, not including, the newline. */
static bool skip_comment(parser *ps)
{
    if (peek(ps) != '#')
        return true;
    for (ps->p++; !at_end(ps) && *ps->p != '\n'; ps->p++) {
        unsigned char c = (unsigned char)*ps->p;
        if ((c < 0x20 && c != '\t' && !(c == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n')) || c == 0x7f)
            return fail(ps, "a control character in a comment");
    }
    return true;
}

/* The end of a line: optional blanks and comment, then a newline or the end. */
static bool end_of_line(parser *ps)
{
    skip_ws(ps);
    if (!skip_comment(ps))
        return false;
    if (at_end(ps))
        return true;
    if (*ps->p == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n')
        ps->p++;
    if (*ps->p != '\n')
        return fail(ps, "unexpected '%c' after the value", *ps->p);
    ps->p++;
    ps->line++;
    return true;
}

/* Blanks, comments and newlines (inside arrays). */
static bool skip_ws_nl(parser *ps)
{
    for (;;) {
        skip_ws(ps);
        if (!skip_comment(ps))
            return false;
        if (peek(ps) == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n')
            ps->p++;
        if (peek(ps) != '\n')
            return true;
        ps->p++;
        ps->line++;
    }
}

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static bool put(parser *ps, sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *g = realloc(b->s, cap);
        if (!g)
            return fail(ps, "out of memory");
        b->s = g, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return true;
}

static bool put_utf8(parser *ps, sbuf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return fail(ps, "\\u%04X is not a Unicode scalar value", cp);
    if (cp < 0x80)
        u[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    return put(ps, b, u, n);
}

/* A basic ("...") or literal ('...') string, single-line; the text into b. */
static bool string(parser *ps, sbuf *b)
{
    char q = *ps->p;
    if (ps->end - ps->p >= 3 && ps->p[1] == q && ps->p[2] == q)
        return fail(ps, "multi-line strings are not supported here");
    ps->p++;
    if (!put(ps, b, "", 0))
        return false;
    for (;;) {
        if (at_end(ps) || *ps->p == '\n' || *ps->p == '\r')
            return fail(ps, "an unterminated string");
        unsigned char c = (unsigned char)*ps->p;
        if (c == (unsigned char)q) {
            ps->p++;
            return true;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return fail(ps, "a control character in a string (escape it)");
        if (c != '\\' || q == '\'') {
            if (!put(ps, b, ps->p++, 1))
                return false;
            continue;
        }
        ps->p++;
        char e = peek(ps);
        const char *rep = e == 'b' ? "\b" : e == 't' ? "\t" : e == 'n' ? "\n" : e == 'f' ? "\f" : e == 'r' ? "\r"
                        : e == '"' ? "\"" : e == '\\' ? "\\" : NULL;
        if (rep) {
            ps->p++;
            if (!put(ps, b, rep, 1))
                return false;
            continue;
        }
        if (e != 'u' && e != 'U')
            return fail(ps, "an unknown escape \\%c", e ? e : '0');
        int digits = e == 'u' ? 4 : 8;
        ps->p++;
        uint32_t cp = 0;
        for (int i = 0; i < digits; i++, ps->p++) {
            char h = peek(ps);
            int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (v < 0)
                return fail(ps, "\\%c needs %d hexadecimal digits", e, digits);
            cp = cp << 4 | (uint32_t)v;
        }
        if (cp == 0) /* every consumer is C: a NUL would cut the value short */
            return fail(ps, "a NUL character (\\u0000) in a string is not accepted");
        if (!put_utf8(ps, b, cp))
            return false;
    }
}

static bool is_bare(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* One key segment (bare or quoted) into b. */
static bool key_segment(parser *ps, sbuf *b)
{
    b->n = 0;
    char c = peek(ps);
    if (c == '"' || c == '\'')
        return string(ps, b);
    const char *s = ps->p;
    while (!at_end(ps) && is_bare(*ps->p))
        ps->p++;
    if (ps->p == s)
        return fail(ps, c ? "a key cannot start with '%c'" : "a key is missing%c", c);
    return put(ps, b, s, (size_t)(ps->p - s));
}

#define MAX_SEGMENTS 32

typedef struct {
    char *seg[MAX_SEGMENTS];
    size_t n;
} keypath;

static void keypath_free(keypath *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->seg[i]);
    k->n = 0;
}

/* A dotted key: segments separated by '.', blanks allowed around the dots.
 * On failure nothing stays allocated. */
static bool key(parser *ps, keypath *k)
{
    k->n = 0;
    for (;;) {
        sbuf b = {0};
        skip_ws(ps);
        bool ok = key_segment(ps, &b);
        if (ok && k->n == MAX_SEGMENTS)
            ok = fail(ps, "a key with more than %d parts", MAX_SEGMENTS);
        if (ok && strlen(b.s) != b.n)
            ok = fail(ps, "a key with a NUL character");
        if (!ok) {
            free(b.s);
            keypath_free(k);
            return false;
        }
        k->seg[k->n++] = b.s;
        skip_ws(ps);
        if (peek(ps) != '.')
            return true;
        ps->p++;
    }
}

static json_t *value(parser *ps, int depth);

static bool set_key(parser *ps, json_t *tbl, const keypath *k, json_t *v);

static json_t *inline_table(parser *ps, int depth)
{
    ps->p++; /* { */
    json_t *t = json_object();
    if (!mark(ps, t, T_INLINE)) {
        json_decref(t);
        return NULL;
    }
    skip_ws(ps);
    if (peek(ps) == '}') {
        ps->p++;
        return t;
    }
    for (;;) {
        keypath k;
        if (!key(ps, &k)) {
            json_decref(t);
            return NULL;
        }
        skip_ws(ps);
        if (peek(ps) != '=') {
            keypath_free(&k);
            json_decref(t);
            fail(ps, "expected '=' after the key");
            return NULL;
        }
        ps->p++;
        skip_ws(ps);
        json_t *v = value(ps, depth + 1);
        bool ok = v && set_key(ps, t, &k, v);
        keypath_free(&k);
        if (!ok) {
            json_decref(t);
            return NULL;
        }
        skip_ws(ps);
        char c = peek(ps);
        ps->p++;
        if (c == '}')
            return t;
        if (c != ',') {
            json_decref(t);
            fail(ps, "an inline table continues with ',' or ends with '}' on its line");
            return NULL;
        }
        skip_ws(ps);
    }
}

static json_t *array(parser *ps, int depth)
{
    ps->p++; /* [ */
    json_t *a = json_array();
    for (;;) {
        if (!skip_ws_nl(ps)) {
            json_decref(a);
            return NULL;
        }
        if (peek(ps) == ']') {
            ps->p++;
            return a;
        }
        json_t *v = value(ps, depth + 1);
        if (!v) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, v);
        if (!skip_ws_nl(ps)) {
            json_decref(a);
            return NULL;
        }
        char c = peek(ps);
        if (c == ']') {
            ps->p++;
            return a;
        }
        if (c != ',') {
            json_decref(a);
            fail(ps, "an array continues with ',' or ends with ']'");
            return NULL;
        }
        ps->p++;
    }
}

static json_t *integer(parser *ps)
{
    const char *s = ps->p;
    char digits[32];
    size_t n = 0;
    if (*ps->p == '+' || *ps->p == '-')
        digits[n++] = *ps->p++;
    if (peek(ps) == '0' && ps->p + 1 < ps->end && strchr("xob", ps->p[1]))
        return fail(ps, "hexadecimal, octal and binary integers are not supported here"), NULL;
    const char *first = ps->p;
    bool prev_digit = false;
    while (!at_end(ps) && ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '_')) {
        if (*ps->p == '_') {
            if (!prev_digit || ps->p + 1 >= ps->end || ps->p[1] < '0' || ps->p[1] > '9')
                return fail(ps, "'_' belongs between two digits"), NULL;
            prev_digit = false;
        } else {
            if (n >= sizeof digits - 1)
                return fail(ps, "an integer out of range"), NULL;
            digits[n++] = *ps->p;
            prev_digit = true;
        }
        ps->p++;
    }
    digits[n] = '\0';
    if (ps->p == first)
        return fail(ps, "a value was expected, found '%.*s'", (int)(ps->p - s + 1), s), NULL;
    if (*first == '0' && ps->p - first > 1)
        return fail(ps, "an integer with a leading zero"), NULL;
    char c = peek(ps);
    if (c == '.' || c == 'e' || c == 'E' || c == ':' || c == '-' || c == 'T')
        return fail(ps, "floats, dates and times are not supported here"), NULL;
    if (is_bare(c))
        return fail(ps, "a malformed number"), NULL;
    errno = 0;
    long long v = strtoll(digits, NULL, 10);
    if (errno == ERANGE)
        return fail(ps, "an integer out of range"), NULL;
    return json_integer(v);
}

static bool word(parser *ps, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, w, n) &&
           ((size_t)(ps->end - ps->p) == n || !is_bare(ps->p[n]));
}

static json_t *value(parser *ps, int depth)
{
    if (depth > MXC_TOML_MAX_DEPTH)
        return fail(ps, "nested deeper than %d levels", MXC_TOML_MAX_DEPTH), NULL;
    char c = peek(ps);
    if (c == '"' || c == '\'') {
        sbuf b = {0};
        json_t *s = string(ps, &b) ? json_stringn(b.s, b.n) : NULL;
        if (!s && !ps->failed)
            fail(ps, "a string that is not valid UTF-8");
        free(b.s);
        return s;
    }
    if (c == '[')
        return array(ps, depth);
    if (c == '{')
        return inline_table(ps, depth);
    if (word(ps, "true"))
        return ps->p += 4, json_true();
    if (word(ps, "false"))
        return ps->p += 5, json_false();
    if (word(ps, "inf") || word(ps, "nan") || word(ps, "+inf") || word(ps, "-inf") || word(ps, "+nan") ||
        word(ps, "-nan"))
        return fail(ps, "floats are not supported here"), NULL;
    if (c == '+' || c == '-' || (c >= '0' && c <= '9'))
        return integer(ps);
    return fail(ps, c ? "a value was expected, found '%c'" : "a value was expected%c", c), NULL;
}

/* tbl.k = v: intermediate tables made (or extended) as dotted-key tables. */
static bool set_key(parser *ps, json_t *tbl, const keypath *k, json_t *v)
{
    for (size_t i = 0; i + 1 < k->n; i++) {
        json_t *next = json_object_get(tbl, k->seg[i]);
        if (!next) {
            next = json_object();
            json_object_set_new(tbl, k->seg[i], next);
            if (!mark(ps, next, T_DOTTED))
                break;
        } else if (!json_is_object(next) || (mark_of(ps, next) & (T_INLINE | T_HEADER)) ||
                   !(mark_of(ps, next) & T_DOTTED)) {
            json_decref(v);
            return fail(ps, "the key %s is already defined", k->seg[i]);
        }
        tbl = next;
    }
    if (ps->failed) {
        json_decref(v);
        return false;
    }
    const char *last = k->seg[k->n - 1];
    if (json_object_get(tbl, last)) {
        json_decref(v);
        return fail(ps, "the key %s is defined twice", last);
    }
    json_object_set_new(tbl, last, v);
    return true;
}

/* [a.b.c]: the table to fill next. */
static json_t *header(parser *ps, json_t *root)
{
    ps->p++; /* [ */
    if (peek(ps) == '[')
        return fail(ps, "arrays of tables ([[...]]) are not supported here"), NULL;
    keypath k;
    if (!key(ps, &k))
        return NULL;
    json_t *t = root;
    for (size_t i = 0; i < k.n && t; i++) {
        json_t *next = json_object_get(t, k.seg[i]);
        unsigned how = next ? mark_of(ps, next) : 0;
        if (!next) {
            next = json_object();
            json_object_set_new(t, k.seg[i], next);
            if (!mark(ps, next, 0))
                next = NULL;
        } else if (!json_is_object(next) || (how & T_INLINE)) {
            fail(ps, "%s is already a value, not a table", k.seg[i]);
            next = NULL;
        } else if (i + 1 == k.n && (how & (T_HEADER | T_DOTTED))) {
            fail(ps, "the table [%s] is defined twice", k.seg[i]);
            next = NULL;
        }
        t = next;
    }
    if (t && !mark(ps, t, T_HEADER))
        t = NULL;
    keypath_free(&k);
    if (!t)
        return NULL;
    skip_ws(ps);
    if (peek(ps) != ']')
        return fail(ps, "a table header ends with ']'"), NULL;
    ps->p++;
    return end_of_line(ps) ? t : NULL;
}

json_t *mxc_toml_parse(const char *text, size_t len, mxc_error *e)
{
    parser ps = {.p = text, .end = text + len, .line = 1, .e = e};
    if (len > MXC_TOML_MAX_BYTES) {
        fail(&ps, "the document is larger than %u bytes", MXC_TOML_MAX_BYTES);
        return NULL;
    }
    if (memchr(text, '\0', len)) {
        fail(&ps, "the document holds a NUL byte");
        return NULL;
    }
    json_t *root = json_object(), *cur = root;
    while (!ps.failed && !at_end(&ps)) {
        if (!skip_ws_nl(&ps) || at_end(&ps))
            break;
        if (peek(&ps) == '[') {
            cur = header(&ps, root);
            continue;
        }
        keypath k;
        if (!key(&ps, &k))
            break;
        skip_ws(&ps);
        if (peek(&ps) != '=') {
            keypath_free(&k);
            fail(&ps, "expected '=' after the key");
            break;
        }
        ps.p++;
        skip_ws(&ps);
        json_t *v = value(&ps, 1);
        bool ok = v && set_key(&ps, cur, &k, v) && end_of_line(&ps);
        keypath_free(&k);
        if (!ok)
            break;
    }
    free(ps.marks);
    if (ps.failed) {
        json_decref(root);
        return NULL;
    }
    return root;
}
