/* fuzz_termfilter.c — libFuzzer harness for the terminal output filter.
 * Oracles: the output never exceeds the input (the bound the caller
 * allocates); the same input in any two chunkings gives the same output; and
 * a reference terminal — a tiny state machine of its own, written apart from
 * the filter after the DEC/ECMA-48 parser model (vt100.net), and lax where a
 * terminal might be: C0 executed inside ESC/CSI, ignored inside OSC and a DCS
 * header, CAN/SUB abort, ESC restarts, C1 controls as raw bytes and as UTF-8
 * (overlong forms decoded too), an OSC judged even when it is cut — reading
 * the filter's output never acts on one of: OSC 52 (clipboard), OSC 0/1/2
 * (titles), an OSC query ('?'), CSI c / > c / = c (device attributes),
 * CSI 5n / 6n (status reports), CSI 11/13/14/18/19/20/21 t (window reports),
 * DECREQTPARM (CSI x), ESC Z (DECID), DCS $q (DECRQSS) or +q (XTGETTCAP).
 *   tests/fuzz/run.sh [SECONDS]
 * Built without libFuzzer (-DMXC_FUZZ_STANDALONE), main() runs the harness
 * over each file named, or the built-in attacks when none is. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "termfilter.h"

static size_t run(const uint8_t *data, size_t size, size_t chunk, unsigned char *out)
{
    static mxc_termfilter f;
    mxc_termfilter_init(&f);
    size_t o = 0;
    for (size_t i = 0; i < size; i += chunk) {
        size_t k = size - i < chunk ? size - i : chunk;
        o += mxc_termfilter_run(&f, data + i, k, out + o);
    }
    return o;
}

/* ---- the reference terminal ------------------------------------------- */

enum { G, E, EI, C, O, D, DP, IGN }; /* ground, esc, esc+inter, csi, osc, dcs header, dcs body, sos/pm/apc */

typedef struct {
    int st;
    char buf[64]; /* a CSI's params and intermediates, an OSC's start, a DCS header */
    size_t n;
    const char *hit; /* what acted, if anything */
} ref;

static void put(ref *r, unsigned c)
{
    if (c >= 0x80) /* a non-ASCII character is no parameter: never (char)0x13f == '?' */
        c = '_';
    if (r->n < sizeof r->buf - 1)
        r->buf[r->n++] = (char)c, r->buf[r->n] = '\0';
}

static void osc_end(ref *r)
{
    int num = atoi(r->buf);
    size_t digits = strspn(r->buf, "0123456789");
    if (digits && (num == 52 || num == 0 || num == 1 || num == 2))
        r->hit = "OSC 52 or a title";
    else if (strchr(r->buf, '?'))
        r->hit = "an OSC query";
}

static void csi_end(ref *r, unsigned final)
{
    const char *p = r->buf;
    char lead = (*p == '?' || *p == '>' || *p == '=' || *p == '<') ? *p++ : 0;
    int first = atoi(p);
    if (final == 'c')
        r->hit = "CSI c (device attributes)";
    else if (final == 'n' && (first == 5 || first == 6))
        r->hit = "CSI 5n/6n (status report)";
    else if (final == 't' && !lead && (first == 11 || first == 13 || first == 14 || (first >= 18 && first <= 21)))
        r->hit = "CSI t (window report)";
    else if (final == 'x' && !lead && strchr(p, '$') == NULL)
        r->hit = "CSI x (DECREQTPARM)";
}

static void leave(ref *r) /* any way out of a string: an OSC is acted on even when cut */
{
    if (r->st == O)
        osc_end(r);
}

static void to(ref *r, int st)
{
    r->st = st;
    r->n = 0;
    r->buf[0] = '\0';
}

static void ref_cp(ref *r, unsigned c)
{
    if (c == 0x18 || c == 0x1a) {
        leave(r);
        to(r, G);
        return;
    }
    if (c == 0x1b) {
        leave(r);
        to(r, E);
        return;
    }
    if (c >= 0x80 && c <= 0x9f) { /* C1: ESC Fe */
        ref_cp(r, 0x1b);
        ref_cp(r, c - 0x40);
        return;
    }
    switch (r->st) {
    case G:
        return;
    case E:
        if (c < 0x20 || c == 0x7f)
            return;
        if (c == '[')
            to(r, C);
        else if (c == ']')
            to(r, O);
        else if (c == 'P')
            to(r, D);
        else if (c == 'X' || c == '^' || c == '_')
            to(r, IGN);
        else if (c == 'Z')
            r->hit = "ESC Z (DECID)", to(r, G);
        else if (c >= 0x20 && c <= 0x2f)
            to(r, EI);
        else
            to(r, G);
        return;
    case EI:
        if (c >= 0x30 && c <= 0x7e)
            to(r, G);
        return;
    case C:
        if (c >= 0x40 && c <= 0x7e) {
            csi_end(r, c);
            to(r, G);
        } else if (c >= 0x20 && c <= 0x3f) {
            put(r, c);
        } /* C0 executed, DEL and the rest ignored: the CSI goes on */
        return;
    case O:
        if (c == 0x07) {
            osc_end(r);
            to(r, G);
        } else if (c >= 0x20) {
            put(r, c);
        }
        return;
    case D:
        if (c >= 0x20 && c <= 0x3f) {
            put(r, c);
        } else if (c >= 0x40 && c <= 0x7e) {
            if (c == 'q' && (strchr(r->buf, '$') || strchr(r->buf, '+')))
                r->hit = "DCS $q/+q (DECRQSS, XTGETTCAP)";
            to(r, DP);
        }
        return;
    default: /* DP, IGN: until ST */
        return;
    }
}

/* Lax UTF-8: any lead with its continuations, overlong forms included. */
static const char *reference_terminal(const unsigned char *s, size_t n)
{
    ref r = {.st = G};
    for (size_t i = 0; i < n && !r.hit;) {
        unsigned b = s[i], need = b >= 0xf0 && b <= 0xf7 ? 3 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xc0 && b <= 0xdf ? 1 : 0;
        unsigned cp = need == 3 ? b & 7 : need == 2 ? b & 15 : need == 1 ? b & 31 : b;
        size_t k = 1;
        while (k <= need && i + k < n && (s[i + k] & 0xc0) == 0x80)
            cp = cp << 6 | (s[i + k] & 0x3f), k++;
        if (k <= need) /* not a whole character: the byte alone */
            cp = b, k = 1;
        ref_cp(&r, cp);
        i += k;
    }
    return r.hit;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    size_t chunk = (size_t)data[0] % 17 + 1;
    data++, size--;
    unsigned char *a = malloc(size + MXC_TERMFILTER_SEQ_MAX + 8), *b = malloc(size + MXC_TERMFILTER_SEQ_MAX + 8);
    size_t na = run(data, size, size ? size : 1, a), nb = run(data, size, chunk, b);
    if (na != nb || memcmp(a, b, na) != 0) {
        fprintf(stderr, "oracle violated: chunking %zu changed the output\n", chunk);
        abort();
    }
    if (na > size) {
        fprintf(stderr, "oracle violated: output longer than input\n");
        abort();
    }
    const char *hit = reference_terminal(a, na);
    if (hit) {
        fprintf(stderr, "oracle violated: the reference terminal acted on %s\n", hit);
        abort();
    }
    free(a);
    free(b);
    return 0;
}

#ifdef MXC_FUZZ_STANDALONE
/* The attacks of the second audit (issue 10), and a check that the reference
 * terminal does see them in the unfiltered text. */
static const char *const attacks[] = {
    "\033\r]52;c;eA==\007", "\033[\r6n", "\033[\rc", "\033]5\r2;c;eA==\007", "\xc2\x9d" "52;c;eA==\007",
    "\xc2\x9b" "6n", "\xc2\x90$qm\xc2\x9c", "\x9b" "c", "\x9d" "0;t\007", "\033P\r$qm\033\\", "\033[>\nc",
    "\033[2\r1t", "\xe0\x82\x9b" "6n", "\033]52;c;eA==\030",
};

int main(int argc, char **argv)
{
    int bad = 0;
    for (size_t i = 0; argc < 2 && i < sizeof attacks / sizeof attacks[0]; i++) {
        const unsigned char *s = (const unsigned char *)attacks[i];
        if (!reference_terminal(s, strlen(attacks[i]))) {
            fprintf(stderr, "the reference terminal misses attack %zu\n", i);
            bad = 1;
        }
        unsigned char in[256];
        in[0] = 3;
        memcpy(in + 1, s, strlen(attacks[i]));
        LLVMFuzzerTestOneInput(in, strlen(attacks[i]) + 1);
    }
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp)
            continue;
        static unsigned char buf[65537];
        size_t n = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        LLVMFuzzerTestOneInput(buf, n);
    }
    return bad;
}
#endif
