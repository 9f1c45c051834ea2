/* quantity.c — see quantity.h. */
#include "quantity.h"

#include <stdbool.h>
#include <string.h>

#define MAX_DIGITS 20 /* 10^20 < 2^67: with a 2^60 suffix still inside 128 bits */
#define MAX_VALUE ((uint64_t)INT64_MAX)

typedef struct {
    const char *name;
    int pow10;    /* the decimal suffixes */
    int pow1024;  /* the binary ones */
} suffix;

static const suffix SUFFIXES[] = {
    {"", 0, 0},   {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
    {"P", 15, 0}, {"E", 18, 0},  {"Ki", 0, 1},  {"Mi", 0, 2},  {"Gi", 0, 3},  {"Ti", 0, 4},
    {"Pi", 0, 5}, {"Ei", 0, 6},
};

static const suffix *find_suffix(const char *s)
{
    for (size_t i = 0; i < sizeof SUFFIXES / sizeof SUFFIXES[0]; i++)
        if (!strcmp(SUFFIXES[i].name, s))
            return &SUFFIXES[i];
    return NULL;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The digits of s (a fraction's too) as one integer, the fraction's length into *frac and
 * where the suffix starts into *end; -1 with *why. */
static int read_number(const char *s, unsigned __int128 *v, int *frac, const char **end, const char **why)
{
    size_t ndig = 0;
    bool dot = false;
    *v = 0;
    *frac = 0;
    const char *p = s;
    for (;; p++) {
        if (*p == '.' && !dot) {
            dot = true;
            if (!is_digit(p[1]))
                return *why = "has no digit after its decimal point", -1;
            continue;
        }
        if (!is_digit(*p))
            break;
        if (++ndig > MAX_DIGITS)
            return *why = "has more than 20 digits", -1;
        *v = *v * 10 + (unsigned)(*p - '0');
        *frac += dot;
    }
    if (ndig == 0)
        return *why = "does not start with a digit", -1;
    *end = p;
    return 0;
}

static const char *suffix_problem(char c)
{
    if (c == '+' || c == '-')
        return "has a sign";
    if (c == 'e' || c == 'E')
        return "has an exponent (write it with a suffix: 1k, 1Mi)";
    if (c == ' ' || c == '\t' || c == '\n')
        return "has white space";
    return "has an unknown suffix (known: m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei)";
}

int osd_quantity_parse(const char *s, osd_qty_unit unit, uint64_t *out, const char **why)
{
    if (!s || !*s)
        return *why = "is empty", -1;
    if (s[0] == '+' || s[0] == '-')
        return *why = "has a sign", -1;
    if (!is_digit(s[0]))
        return *why = "does not start with a digit", -1;
    unsigned __int128 v;
    int frac;
    const char *end;
    if (read_number(s, &v, &frac, &end, why) < 0)
        return -1;
    const suffix *sx = find_suffix(end);
    if (!sx)
        return *why = suffix_problem(*end), -1;
    if (unit == OSD_QTY_BYTES && sx->pow10 < 0)
        return *why = "is less than a byte's unit (\"m\" is a thousandth)", -1;
    for (int i = 0; i < sx->pow1024; i++)
        v *= 1024; /* < 10^20 * 2^60 < 2^127 */
    int pow10 = sx->pow10 + (unit == OSD_QTY_CPU_MILLI ? 3 : 0) - frac;
    for (; pow10 > 0; pow10--) {
        if (v > (unsigned __int128)MAX_VALUE * 1024)
            return *why = "is too large", -1;
        v *= 10;
    }
    for (; pow10 < 0; pow10++) {
        if (v % 10)
            return *why = unit == OSD_QTY_CPU_MILLI ? "is finer than a millicore" : "is not a whole number of bytes", -1;
        v /= 10;
    }
    if (v > MAX_VALUE)
        return *why = "is too large", -1;
    *out = (uint64_t)v;
    return 0;
}
