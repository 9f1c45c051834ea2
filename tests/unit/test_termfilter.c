/* test_termfilter.c — the terminal output filter: what is dropped, what
 * passes, and that a chunk boundary anywhere changes nothing. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "termfilter.h"

static char *filt(const char *in, size_t chunk)
{
    static unsigned char out[1 << 16];
    static mxc_termfilter f;
    mxc_termfilter_init(&f);
    size_t n = strlen(in), o = 0;
    for (size_t i = 0; i < n; i += chunk) {
        size_t k = n - i < chunk ? n - i : chunk;
        o += mxc_termfilter_run(&f, (const unsigned char *)in + i, k, out + o);
    }
    out[o] = '\0';
    return (char *)out;
}

static void same_for_every_chunking(const char *in, const char *want)
{
    for (size_t chunk = 1; chunk <= strlen(in) + 1; chunk++) {
        char *got = filt(in, chunk);
        CHECK_MSG(strcmp(got, want) == 0, "chunk %zu: in \"%s\" got \"%s\" want \"%s\"", chunk, in, got, want);
    }
}

int main(void)
{
    /* passes */
    same_for_every_chunking("plain text\r\n", "plain text\r\n");
    same_for_every_chunking("\033[1;31mred\033[0m", "\033[1;31mred\033[0m");
    same_for_every_chunking("\033[2J\033[H\033[?25l\033[?1049h", "\033[2J\033[H\033[?25l\033[?1049h");
    same_for_every_chunking("\033(B\0337\0338\033=", "\033(B\0337\0338\033=");
    same_for_every_chunking("\033]8;;https://example.org\033\\link\033]8;;\033\\",
                            "\033]8;;https://example.org\033\\link\033]8;;\033\\");
    same_for_every_chunking("\033]11;#000000\007", "\033]11;#000000\007");
    same_for_every_chunking("\033]133;A\007$ ", "\033]133;A\007$ ");
    same_for_every_chunking("\033Pq#0;2;0;0;0#0~~\033\\", "\033Pq#0;2;0;0;0#0~~\033\\"); /* sixel */
    same_for_every_chunking("\xc3\xa9t\xc3\xa9 \xe2\x9b\x94", "\xc3\xa9t\xc3\xa9 \xe2\x9b\x94"); /* UTF-8 */
    /* dropped: what acts on the person's machine */
    same_for_every_chunking("a\033]52;c;cGF5bG9hZA==\007b", "ab");             /* clipboard */
    same_for_every_chunking("a\033]52;c;cGF5bG9hZA==\033\\b", "ab");
    same_for_every_chunking("a\033]0;fake title\007b\033]2;t\033\\c", "abc"); /* titles */
    same_for_every_chunking("a\033[21tb\033[20tc\033[8;1;1td", "abcd");       /* title reports, window ops */
    same_for_every_chunking("a\033P$qm\033\\b", "ab");                        /* DECRQSS */
    same_for_every_chunking("a\033P+q544e\033\\b", "ab");                     /* XTGETTCAP */
    /* tmux passthrough: a terminal reads the doubled ESC as cutting the DCS and the OSC
     * after it as real — so that OSC is judged (and dropped); the stray ST is harmless */
    same_for_every_chunking("a\033Ptmux;\033\033]52;c;x\007\033\\b", "a\033\\b");
    same_for_every_chunking("a\033[cb\033[>cc\033[=cd\033Ze", "abcde");       /* device attributes */
    same_for_every_chunking("a\033[6nb\033[5nc\033[?6nd", "abcd");            /* status reports */
    same_for_every_chunking("a\033]10;?\007b\033]4;1;?\033\\c", "abc");       /* colour queries */
    same_for_every_chunking("a\033[>qb\033[?1$pc\033[?ud\033[xe", "abcde");   /* XTVERSION, DECRQM, ... */
    same_for_every_chunking("a\033_Ga=q;\033\\b\033^pm\033\\c", "abc");       /* APC, PM */
    same_for_every_chunking("a\033]1337;File=x\007b\033]9;notify\007c", "abc");
    /* an OSC cut by another sequence: the OSC goes, the next one is judged alone */
    same_for_every_chunking("a\033]52;c;x\033[1mb", "a\033[1mb");
    /* a C0 control inside a sequence is executed and the sequence goes on (DEC/ECMA-48): it
     * smuggles nothing past the filter (issue 10, second audit) */
    same_for_every_chunking("a\033\r]52;c;cGF5bG9hZA==\007b", "a\rb");
    same_for_every_chunking("a\033[\r6nb", "a\rb");
    same_for_every_chunking("a\033[\rcb\033[>\nc", "a\rb\n");
    same_for_every_chunking("a\033[2\b1tb", "a\bb");
    same_for_every_chunking("a\033]5\r2;c;x\007b\033]\n0;title\007c", "abc"); /* C0 inside an OSC: ignored */
    same_for_every_chunking("a\033P\r$qm\033\\b", "ab");
    same_for_every_chunking("a\033[1\r;31mb", "a\r\033[1;31mb"); /* harmless ones still pass */
    same_for_every_chunking("a\033(\tBb", "a\t\033(Bb");
    /* CAN and SUB abort; ESC restarts */
    same_for_every_chunking("a\033]52;c;x\030b", "a\030b");
    same_for_every_chunking("a\033[6\032nb", "a\032nb");
    same_for_every_chunking("a\033P$q\030m\033\\b", "a\030m\033\\b");
    same_for_every_chunking("a\033[6\033[1mb", "a\033[1mb");
    /* C1 controls in UTF-8 (U+0080..U+009F) are their 7-bit forms, judged as those */
    same_for_every_chunking("a\xc2\x9d" "52;c;cGF5bG9hZA==\xc2\x9c" "b", "ab");
    same_for_every_chunking("a\xc2\x9d" "52;c;x\007b", "ab");
    same_for_every_chunking("a\xc2\x9d" "0;title\007b", "ab");
    same_for_every_chunking("a\xc2\x9b" "6nb\xc2\x9b" "cc\xc2\x9b" ">cd\xc2\x9b" "21te", "abcde");
    same_for_every_chunking("a\xc2\x90$qm\xc2\x9c" "b", "ab");
    same_for_every_chunking("a\xc2\x9a" "b", "ab"); /* DECID */
    same_for_every_chunking("a\xc2\x9b" "1mb", "a\033[1mb");
    same_for_every_chunking("a\033]8;;x\xc2\x9c" "b", "a\033]8;;x\033\\b");
    /* a raw 8-bit C1 byte (not part of a UTF-8 character) goes, with what it introduces */
    same_for_every_chunking("a\x9b" "6nb\x9b" "cc\x9b" "1md", "abcd");
    same_for_every_chunking("a\x9d" "52;c;x\007b\x9d" "0;t\x9c" "c", "abc");
    same_for_every_chunking("a\x90$qm\x9c" "b\x9a" "c", "abc");
    same_for_every_chunking("a\033]8;;x\x9c" "b", "ab");
    /* UTF-8 whose continuation bytes look like C1 stays text, in text and inside strings */
    same_for_every_chunking("\xe2\x9b\x94 \xe2\x9d\x8c \xf0\x9f\x90\x9b", "\xe2\x9b\x94 \xe2\x9d\x8c \xf0\x9f\x90\x9b");
    same_for_every_chunking("\033]8;;https://x/\xe2\x9b\x94\033\\l\033]8;;\033\\",
                            "\033]8;;https://x/\xe2\x9b\x94\033\\l\033]8;;\033\\");
    /* broken UTF-8: the lead is a byte of its own; a C1-looking byte after it strays (raw C1) */
    same_for_every_chunking("a\xe2\x9b" "6nb", "a\xe2" "b");
    same_for_every_chunking("a\xc0\x9b" "6nb", "a\xc0" "b"); /* overlong ESC [ */
    same_for_every_chunking("a\xe0\x80\x9b" "6nb", "a\xe0" "b");
    /* a non-ASCII character inside ESC or CSI ends it, and none of it reaches the terminal */
    same_for_every_chunking("a\033[\xc3\xa9" "6nb", "a\xc3\xa9" "6nb");
    /* bounded: an endless OSC is dropped whole, what follows its end survives */
    size_t big = 3 * MXC_TERMFILTER_SEQ_MAX;
    char *s = malloc(big + 64);
    strcpy(s, "x\033]8;;");
    memset(s + strlen(s), 'A', big);
    strcpy(s + 6 + big, "\007y");
    CHECK_STR_EQ(filt(s, 4096), "xy");
    free(s);
    return CHECK_DONE();
}
