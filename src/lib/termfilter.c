/* termfilter.c — see termfilter.h.
 * Sequences (ECMA-48 / xterm): ESC [ params intermediates final (CSI);
 * ESC ] payload BEL|ST (OSC); ESC P ... ST (DCS); ESC _ / ^ / X ... ST
 * (APC, PM, SOS); ESC intermediates final (the rest).
 *
 * The parser follows the DEC/ECMA-48 model a terminal uses (vt100.net's
 * "A parser for DEC's ANSI-compatible video terminals"), so that what it
 * judges is what the terminal will act on:
 *  - a C0 control inside ESC/CSI is executed and the sequence goes on
 *    (so ESC [ CR 6 n is still a CSI 6 n); inside OSC and a DCS header C0
 *    is ignored (so ESC ] 5 CR 2 ; is still OSC 52); inside a passed DCS it
 *    is passed;
 *  - CAN and SUB abort any sequence; ESC restarts one;
 *  - the C1 controls in UTF-8 (U+0080..U+009F, C2 80..C2 9F) are their 7-bit
 *    forms ESC 0x40..0x5f and judged as those (C2 9B is CSI, C2 9D OSC, C2 90
 *    DCS), and a raw 8-bit C1 byte that is not part of a UTF-8 character is
 *    dropped, together with the sequence it introduces;
 *  - a character of 0x80 or above inside ESC or CSI ends it: what was held
 *    is dropped, never emitted (the terminal saw none of it).
 * Bytes are first grouped into UTF-8 characters (held across chunks, at most
 * 3 bytes), then run through the sequence states. */
#include "termfilter.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    S_TEXT = 0,
    S_ESC,        /* after ESC */
    S_ESC_INTER,  /* ESC and intermediates: waits for the final byte */
    S_ESC_IGN,    /* ESC and too many intermediates: discarded until the final byte */
    S_CSI,
    S_CSI_IGN,    /* a CSI too long, or introduced by a raw 8-bit C1: discarded until its final byte */
    S_OSC,        /* held until BEL or ST */
    S_OSC_ESC,    /* ESC inside an OSC: ST, or the OSC is cut */
    S_STR,        /* DCS introducer: held until decided */
    S_STR_ESC,
    S_PASS,       /* a DCS found harmless (sixel): streamed until ST */
    S_PASS_ESC,
    S_DROP,       /* a string found harmful (DCS, APC, PM, SOS): discarded until its end */
    S_DROP_ESC,
    S_DROP_OSC,   /* an OSC too long: discarded until BEL or ST */
    S_DROP_OSC_ESC,
};

#define ESC 0x1b
#define BEL 0x07
#define CAN 0x18
#define SUB 0x1a
#define HOLD_MAX (MXC_TERMFILTER_SEQ_MAX - 4) /* room for a UTF-8 character held beside */

enum { U_BYTE, U_CHAR, U_RAWC1 }; /* an ASCII byte; a character >= 0x80 (or an invalid byte); a raw C1 */

void mxc_termfilter_init(mxc_termfilter *f)
{
    f->state = S_TEXT;
    f->len = 0;
    f->dropped = 0;
    f->u8len = 0;
    f->u8need = 0;
}

static void hold(mxc_termfilter *f, unsigned char c)
{
    f->seq[f->len++] = c;
}

static size_t emit_held(mxc_termfilter *f, unsigned char *out)
{
    memcpy(out, f->seq, f->len);
    size_t n = f->len;
    f->len = 0;
    return n;
}

static void drop_held(mxc_termfilter *f)
{
    if (f->len)
        f->dropped++;
    f->len = 0;
}

/* CSI: params at seq[2..], final is the last byte. */
static bool csi_harmful(const mxc_termfilter *f)
{
    unsigned char final = f->seq[f->len - 1];
    bool has_dollar = memchr(f->seq + 2, '$', f->len - 3) != NULL;
    unsigned char lead = f->len > 3 ? f->seq[2] : 0; /* a private prefix: ? > = < */
    switch (final) {
    case 'c': /* DA1, DA2, DA3 */
    case 'n': /* DSR: status, cursor position */
    case 't': /* window operations, their reports */
    case 'x': /* DECREQTPARM */
        return true;
    case 'p': /* DECRQM (CSI Ps $ p, CSI ? Ps $ p) */
        return has_dollar;
    case 'q': /* XTVERSION (CSI > q) */
        return lead == '>';
    case 'u': /* the keyboard protocol's query (CSI ? u) */
        return lead == '?';
    default:
        return false;
    }
}

/* OSC payload at seq[2..end): allowed are colour, hyperlink and shell
 * integration sets, never a query ('?'), never the clipboard or a title. */
static bool osc_harmful(const mxc_termfilter *f, size_t end)
{
    const unsigned char *p = f->seq + 2;
    size_t n = end - 2;
    char num[8];
    size_t k = 0;
    while (k < n && k < sizeof num - 1 && p[k] >= '0' && p[k] <= '9') {
        num[k] = (char)p[k];
        k++;
    }
    num[k] = '\0';
    if (!k || (k < n && p[k] != ';'))
        return true;
    if (memchr(p, '?', n))
        return true;
    static const int allowed[] = {4, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 104,
                                  110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 133, 633};
    int v = atoi(num);
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (allowed[i] == v)
            return false;
    return true;
}

/* A DCS introducer decided: sixel graphics (DCS [params] q) stream through,
 * everything else (DECRQSS $q, XTGETTCAP +q, tmux passthrough, ...) is
 * dropped.  Returns 1 pass, 0 drop, -1 undecided yet. */
static int dcs_decision(const mxc_termfilter *f)
{
    for (size_t i = 2; i < f->len; i++) {
        unsigned char c = f->seq[i];
        if ((c >= '0' && c <= '9') || c == ';')
            continue;
        return c == 'q' ? 1 : 0;
    }
    return -1;
}

/* The steps below take one unit in the state they are named for and return
 * the bytes they wrote to out, or AGAIN: the unit is to be looked at again
 * in the state the step left (such a step wrote nothing). */
#define AGAIN SIZE_MAX

/* A raw 8-bit C1: what is held goes, and what it introduces. */
static size_t raw_c1(mxc_termfilter *f, unsigned char c)
{
    drop_held(f);
    f->state = c == 0x9b ? S_CSI_IGN
             : c == 0x9d ? S_DROP_OSC
             : (c == 0x90 || c == 0x98 || c == 0x9e || c == 0x9f) ? S_DROP
             : S_TEXT;
    f->dropped++;
    return 0;
}

/* A character >= 0x80 (or a byte that is no part of one: ulen 1). */
static size_t char_unit(mxc_termfilter *f, const unsigned char *u, size_t ulen, unsigned char *out)
{
    switch (f->state) {
    case S_TEXT:
    case S_PASS:
        memcpy(out, u, ulen);
        return ulen;
    case S_OSC:
        /* a byte that is no part of a well-formed character (ulen 1):
         * a lenient terminal may decode it (C0 BF as '?'), so the
         * string is not passed at all */
        if (ulen > 1 && f->len + ulen <= HOLD_MAX) {
            memcpy(f->seq + f->len, u, ulen);
            f->len += ulen;
        } else {
            drop_held(f);
            f->state = S_DROP_OSC;
        }
        return 0;
    case S_STR:
        drop_held(f);
        f->state = S_DROP;
        return 0;
    case S_DROP:
    case S_DROP_OSC:
        return 0;
    case S_OSC_ESC:
    case S_STR_ESC:
    case S_PASS_ESC:
    case S_DROP_ESC:
    case S_DROP_OSC_ESC: /* the ESC cut the string */
        drop_held(f);
        hold(f, ESC);
        f->state = S_ESC;
        return AGAIN;
    default: /* ESC, CSI: not a sequence after all; the terminal saw none of it */
        drop_held(f);
        f->state = S_TEXT;
        return AGAIN;
    }
}

/* A printable byte (0x20..0x7e) after ESC. */
static size_t esc_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    hold(f, c);
    if (c == '[') {
        f->state = S_CSI;
    } else if (c == ']') {
        f->state = S_OSC;
    } else if (c == 'P') {
        f->state = S_STR;
    } else if (c == '_' || c == '^' || c == 'X') { /* APC, PM, SOS */
        drop_held(f);
        f->state = S_DROP;
    } else if (c == 'Z') { /* DECID: a device attributes query */
        drop_held(f);
        f->state = S_TEXT;
    } else if (c <= 0x2f) {
        f->state = S_ESC_INTER;
    } else {
        f->state = S_TEXT;
        return emit_held(f, out);
    }
    return 0;
}

/* A printable byte after ESC and intermediates. */
static size_t esc_inter_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    size_t o = 0;
    int st = f->state;
    if (c >= 0x30) {
        if (st == S_ESC_INTER) {
            hold(f, c);
            o = emit_held(f, out);
        }
        f->state = S_TEXT;
    } else if (st == S_ESC_INTER && f->len < 16) {
        hold(f, c);
    } else {
        drop_held(f);
        f->state = S_ESC_IGN;
    }
    return o;
}

/* A printable byte inside a CSI. */
static size_t csi_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    size_t o = 0;
    if (c >= 0x40) {
        hold(f, c);
        if (csi_harmful(f))
            drop_held(f);
        else
            o = emit_held(f, out);
        f->state = S_TEXT;
    } else if (f->len < HOLD_MAX - 1) {
        hold(f, c);
    } else { /* absurdly long: not a sequence worth keeping */
        drop_held(f);
        f->state = S_CSI_IGN;
    }
    return o;
}

/* A byte in ESC, ESC intermediates or a CSI (kept or discarded). */
static size_t seq_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    if (c == ESC) { /* restarts: what was held is dropped */
        drop_held(f);
        hold(f, ESC);
        f->state = S_ESC;
        return 0;
    }
    if (c < 0x20) { /* executed; the sequence goes on */
        out[0] = c;
        return 1;
    }
    if (c == 0x7f)
        return 0; /* ignored */
    switch (f->state) {
    case S_ESC:
        return esc_byte(f, c, out);
    case S_ESC_INTER:
    case S_ESC_IGN:
        return esc_inter_byte(f, c, out);
    case S_CSI:
        return csi_byte(f, c, out);
    default: /* S_CSI_IGN */
        if (c >= 0x40)
            f->state = S_TEXT;
        return 0;
    }
}

/* An OSC held whole and ended by term (BEL or ST): passed with its end,
 * or dropped when harmful. */
static size_t osc_end(mxc_termfilter *f, const char *term, size_t tlen, unsigned char *out)
{
    size_t o = 0;
    if (!osc_harmful(f, f->len)) {
        o = emit_held(f, out);
        memcpy(out + o, term, tlen);
        o += tlen;
    } else {
        drop_held(f);
    }
    f->state = S_TEXT;
    return o;
}

/* A byte other than ESC inside an OSC (held, or discarded when too long). */
static size_t osc_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    int st = f->state;
    if (c == BEL && st == S_OSC)
        return osc_end(f, "\a", 1, out);
    if (c == BEL) { /* the end of one discarded */
        drop_held(f);
        f->state = S_TEXT;
        return 0;
    }
    if (c < 0x20)
        return 0; /* ignored, as the terminal ignores it */
    if (st == S_OSC && f->len < HOLD_MAX) {
        hold(f, c);
    } else if (st == S_OSC) {
        drop_held(f);
        f->state = S_DROP_OSC;
    }
    return 0;
}

/* A byte other than ESC inside a DCS introducer, a passed DCS or a dropped
 * string. */
static size_t str_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    if (f->state == S_PASS) {
        out[0] = c;
        return 1;
    }
    if (f->state == S_DROP || c < 0x20 || c == 0x7f)
        return 0;
    hold(f, c);
    int d = dcs_decision(f);
    if (d == 1) {
        f->state = S_PASS;
        return emit_held(f, out);
    }
    if (d == 0 || f->len >= HOLD_MAX) {
        drop_held(f);
        f->state = S_DROP;
    }
    return 0;
}

/* A byte after an ESC inside a string: ST ends it, anything else cuts it. */
static size_t string_esc_byte(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    int st = f->state;
    if (c != '\\') {
        drop_held(f);
        hold(f, ESC);
        f->state = S_ESC;
        return AGAIN;
    }
    if (st == S_OSC_ESC)
        return osc_end(f, "\x1b\\", 2, out);
    size_t o = 0;
    if (st == S_PASS_ESC)
        out[o++] = ESC, out[o++] = '\\';
    else
        drop_held(f);
    f->state = S_TEXT;
    return o;
}

/* Each string state's state after an ESC inside it. */
static const int ESC_IN_STRING[] = {[S_OSC] = S_OSC_ESC, [S_DROP_OSC] = S_DROP_OSC_ESC, [S_STR] = S_STR_ESC,
                                    [S_PASS] = S_PASS_ESC, [S_DROP] = S_DROP_ESC};

/* An ASCII byte. */
static size_t byte_unit(mxc_termfilter *f, unsigned char c, unsigned char *out)
{
    if (c == CAN || c == SUB) { /* aborts any sequence; executed */
        drop_held(f);
        f->state = S_TEXT;
        out[0] = c;
        return 1;
    }
    switch (f->state) {
    case S_TEXT:
        if (c != ESC) {
            out[0] = c;
            return 1;
        }
        hold(f, c);
        f->state = S_ESC;
        return 0;
    case S_ESC:
    case S_ESC_INTER:
    case S_ESC_IGN:
    case S_CSI:
    case S_CSI_IGN:
        return seq_byte(f, c, out);
    case S_OSC:
    case S_DROP_OSC:
    case S_STR:
    case S_PASS:
    case S_DROP:
        if (c == ESC) { /* ST or a cut: the next byte says */
            f->state = ESC_IN_STRING[f->state];
            return 0;
        }
        return f->state == S_OSC || f->state == S_DROP_OSC ? osc_byte(f, c, out) : str_byte(f, c, out);
    default:
        return string_esc_byte(f, c, out);
    }
}

/* One unit through the sequence states; returns the bytes written. */
static size_t unit(mxc_termfilter *f, int kind, const unsigned char *u, size_t ulen, unsigned char *out)
{
    if (kind == U_RAWC1)
        return raw_c1(f, u[0]);
    for (;;) {
        size_t o = kind == U_CHAR ? char_unit(f, u, ulen, out) : byte_unit(f, u[0], out);
        if (o != AGAIN)
            return o;
    }
}

static size_t stray(mxc_termfilter *f, unsigned char b, unsigned char *out)
{
    return unit(f, b >= 0x80 && b <= 0x9f ? U_RAWC1 : b < 0x80 ? U_BYTE : U_CHAR, &b, 1, out);
}

size_t mxc_termfilter_run(mxc_termfilter *f, const unsigned char *in, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = in[i];
        if (f->u8len) { /* inside a UTF-8 character */
            unsigned char lead = f->u8[0], lo = 0x80, hi = 0xbf;
            if (f->u8len == 1) {
                if (lead == 0xe0)
                    lo = 0xa0;
                else if (lead == 0xed)
                    hi = 0x9f;
                else if (lead == 0xf0)
                    lo = 0x90;
                else if (lead == 0xf4)
                    hi = 0x8f;
            }
            if (lead == 0xc2 && b >= 0x80 && b <= 0x9f) { /* U+0080..U+009F: a C1 control, as ESC Fe */
                f->u8len = 0;
                unsigned char esc = ESC, fe = (unsigned char)(b - 0x40);
                o += unit(f, U_BYTE, &esc, 1, out + o);
                o += unit(f, U_BYTE, &fe, 1, out + o);
                continue;
            }
            if (b >= lo && b <= hi) {
                f->u8[f->u8len++] = b;
                if (f->u8len == f->u8need) {
                    f->u8len = 0;
                    o += unit(f, U_CHAR, f->u8, f->u8need, out + o);
                }
                continue;
            }
            /* not a character after all: the lead is a byte of its own, what followed it strays */
            unsigned char held[4];
            size_t k = f->u8len;
            memcpy(held, f->u8, k);
            f->u8len = 0;
            o += unit(f, U_CHAR, held, 1, out + o);
            for (size_t j = 1; j < k; j++)
                o += stray(f, held[j], out + o);
        }
        if (b >= 0xc2 && b <= 0xf4) {
            f->u8[0] = b;
            f->u8len = 1;
            f->u8need = b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
        } else {
            o += stray(f, b, out + o);
        }
    }
    return o;
}
