/* termfilter.c — see termfilter.h.
 * Sequences (ECMA-48 / xterm): ESC [ params intermediates final (CSI);
 * ESC ] payload BEL|ST (OSC); ESC P ... ST (DCS); ESC _ / ^ / X ... ST
 * (APC, PM, SOS); ESC intermediates final (the rest).  8-bit C1 controls
 * are not interpreted: in UTF-8 output those bytes belong to characters. */
#include "termfilter.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum {
    S_TEXT = 0,
    S_ESC,        /* after ESC */
    S_ESC_INTER,  /* ESC and intermediates: waits for the final byte */
    S_CSI,
    S_OSC,        /* held until BEL or ST */
    S_OSC_ESC,    /* ESC inside an OSC: ST, or the OSC is cut */
    S_STR,        /* DCS introducer, APC, PM, SOS: held until decided */
    S_STR_ESC,
    S_PASS,       /* a DCS found harmless (sixel): streamed until ST */
    S_PASS_ESC,
    S_DROP,       /* a string found harmful or too long: discarded until its end */
    S_DROP_ESC,
    S_DROP_OSC,   /* an OSC too long: discarded until BEL or ST */
    S_DROP_OSC_ESC,
};

#define ESC 0x1b
#define BEL 0x07

void mxc_termfilter_init(mxc_termfilter *f)
{
    f->state = S_TEXT;
    f->len = 0;
    f->dropped = 0;
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
    f->len = 0;
    f->dropped++;
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

size_t mxc_termfilter_run(mxc_termfilter *f, const unsigned char *in, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = in[i];
        switch (f->state) {
        case S_TEXT:
            if (c == ESC) {
                hold(f, c);
                f->state = S_ESC;
            } else {
                out[o++] = c;
            }
            break;
        case S_ESC:
            if (c == ESC)
                break; /* ESC ESC: the first is cancelled, the second starts over, as a terminal reads it */
            hold(f, c);
            if (c == '[') {
                f->state = S_CSI;
            } else if (c == ']') {
                f->state = S_OSC;
            } else if (c == 'P' || c == '_' || c == '^' || c == 'X') {
                f->state = c == 'P' ? S_STR : S_DROP;
                if (c != 'P')
                    drop_held(f);
            } else if (c == 'Z') { /* DECID: a device attributes query */
                drop_held(f);
                f->state = S_TEXT;
            } else if (c >= 0x20 && c <= 0x2f) {
                f->state = S_ESC_INTER;
            } else {
                o += emit_held(f, out + o);
                f->state = S_TEXT;
            }
            break;
        case S_ESC_INTER:
            if (c >= 0x30 && c <= 0x7e) {
                hold(f, c);
                o += emit_held(f, out + o);
                f->state = S_TEXT;
            } else if (c >= 0x20 && c <= 0x2f && f->len < MXC_TERMFILTER_SEQ_MAX) {
                hold(f, c);
            } else { /* not such an escape after all: what we held is text, this byte starts over */
                o += emit_held(f, out + o);
                f->state = S_TEXT;
                i--;
            }
            break;
        case S_CSI:
            if (c >= 0x40 && c <= 0x7e) {
                hold(f, c);
                if (csi_harmful(f))
                    drop_held(f);
                else
                    o += emit_held(f, out + o);
                f->state = S_TEXT;
            } else if (c >= 0x20 && c <= 0x3f && f->len < MXC_TERMFILTER_SEQ_MAX - 1) {
                hold(f, c);
            } else if (c >= 0x20 && c <= 0x3f) { /* absurdly long: not a sequence worth keeping */
                drop_held(f);
                f->state = S_TEXT;
            } else { /* not a CSI after all: what we held is text, this byte starts over */
                o += emit_held(f, out + o);
                f->state = S_TEXT;
                i--;
            }
            break;
        case S_OSC:
            if (c == BEL) {
                if (osc_harmful(f, f->len)) {
                    drop_held(f);
                } else {
                    o += emit_held(f, out + o);
                    out[o++] = c;
                }
                f->state = S_TEXT;
            } else if (c == ESC) {
                f->state = S_OSC_ESC;
            } else if (f->len < MXC_TERMFILTER_SEQ_MAX - 2) {
                hold(f, c);
            } else {
                drop_held(f);
                f->state = S_DROP_OSC;
            }
            break;
        case S_OSC_ESC:
            if (c == '\\') {
                if (osc_harmful(f, f->len)) {
                    drop_held(f);
                } else {
                    o += emit_held(f, out + o);
                    out[o++] = ESC, out[o++] = '\\';
                }
                f->state = S_TEXT;
            } else { /* the OSC was cut by a new sequence: it is dropped, the ESC starts over */
                drop_held(f);
                hold(f, ESC);
                f->state = S_ESC;
                i--;
            }
            break;
        case S_STR: {
            if (c == ESC) {
                f->state = S_STR_ESC;
                break;
            }
            hold(f, c);
            int d = dcs_decision(f);
            if (d == 1) {
                o += emit_held(f, out + o);
                f->state = S_PASS;
            } else if (d == 0 || f->len == MXC_TERMFILTER_SEQ_MAX) {
                drop_held(f);
                f->state = S_DROP;
            }
            break;
        }
        case S_STR_ESC: /* an ESC before the introducer was decided: it ends (or cuts) the DCS */
            drop_held(f);
            if (c == '\\') {
                f->state = S_TEXT;
            } else {
                hold(f, ESC);
                f->state = S_ESC;
                i--;
            }
            break;
        case S_PASS:
            if (c == ESC)
                f->state = S_PASS_ESC; /* held back until we know whether it ends the string */
            else
                out[o++] = c;
            break;
        case S_PASS_ESC:
            if (c == '\\') {
                out[o++] = ESC, out[o++] = c;
                f->state = S_TEXT;
            } else { /* the ESC starts a sequence of its own: look at it afresh */
                hold(f, ESC);
                f->state = S_ESC;
                i--;
            }
            break;
        case S_DROP:
            if (c == ESC)
                f->state = S_DROP_ESC;
            break;
        case S_DROP_ESC:
            if (c == '\\') {
                f->state = S_TEXT;
            } else {
                hold(f, ESC);
                f->state = S_ESC;
                i--;
            }
            break;
        case S_DROP_OSC:
            if (c == BEL)
                f->state = S_TEXT;
            else if (c == ESC)
                f->state = S_DROP_OSC_ESC;
            break;
        case S_DROP_OSC_ESC:
            if (c == '\\') {
                f->state = S_TEXT;
            } else {
                hold(f, ESC);
                f->state = S_ESC;
                i--;
            }
            break;
        }
    }
    return o;
}
