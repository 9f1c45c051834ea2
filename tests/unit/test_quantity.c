/* test_quantity.c — src/osdriver/quantity.c: OpenShell's resource quantities, read strictly. */
#include <stdint.h>

#include "check.h"
#include "quantity.h"

static void accepts(const char *s, osd_qty_unit u, uint64_t want)
{
    uint64_t v = 0;
    const char *why = "";
    CHECK_MSG(osd_quantity_parse(s, u, &v, &why) == 0 && v == want, "%s: got %llu (%s), want %llu", s,
              (unsigned long long)v, why, (unsigned long long)want);
}

static void refuses(const char *s, osd_qty_unit u, const char *reason)
{
    uint64_t v = 0;
    const char *why = "";
    CHECK_MSG(osd_quantity_parse(s, u, &v, &why) == -1 && strstr(why, reason), "%s: why \"%s\", want \"%s\"", s, why,
              reason);
}

int main(void)
{
    /* cpu, in millicores */
    accepts("500m", OSD_QTY_CPU_MILLI, 500);
    accepts("2", OSD_QTY_CPU_MILLI, 2000);
    accepts("0.5", OSD_QTY_CPU_MILLI, 500);
    accepts("1.25", OSD_QTY_CPU_MILLI, 1250);
    accepts("0.001", OSD_QTY_CPU_MILLI, 1);
    accepts("0", OSD_QTY_CPU_MILLI, 0);
    accepts("1k", OSD_QTY_CPU_MILLI, 1000000);
    refuses("0.0005", OSD_QTY_CPU_MILLI, "finer than a millicore");
    refuses("1.5m", OSD_QTY_CPU_MILLI, "finer than a millicore");
    /* memory, in bytes */
    accepts("256Mi", OSD_QTY_BYTES, 256ull << 20);
    accepts("4Gi", OSD_QTY_BYTES, 4ull << 30);
    accepts("1.5Gi", OSD_QTY_BYTES, 3ull << 29);
    accepts("1G", OSD_QTY_BYTES, 1000000000ull);
    accepts("128974848", OSD_QTY_BYTES, 128974848ull);
    accepts("7Ei", OSD_QTY_BYTES, 7ull << 60);
    accepts("9223372036854775807", OSD_QTY_BYTES, 9223372036854775807ull);
    refuses("8Ei", OSD_QTY_BYTES, "too large");
    refuses("9223372036854775808", OSD_QTY_BYTES, "too large");
    refuses("99999999999999999999E", OSD_QTY_BYTES, "too large");
    refuses("100m", OSD_QTY_BYTES, "less than a byte's unit");
    refuses("1.5", OSD_QTY_BYTES, "not a whole number of bytes");
    refuses("0.1Ki", OSD_QTY_BYTES, "not a whole number of bytes");
    /* the grammar */
    refuses("", OSD_QTY_BYTES, "is empty");
    refuses("-1", OSD_QTY_BYTES, "has a sign");
    refuses("+1", OSD_QTY_CPU_MILLI, "has a sign");
    refuses("1e3", OSD_QTY_BYTES, "has an exponent");
    refuses("1E3", OSD_QTY_CPU_MILLI, "has an exponent");
    refuses(" 1", OSD_QTY_BYTES, "does not start with a digit");
    refuses("1 ", OSD_QTY_BYTES, "has white space");
    refuses(".5", OSD_QTY_CPU_MILLI, "does not start with a digit");
    refuses("1.", OSD_QTY_CPU_MILLI, "no digit after its decimal point");
    refuses("1..2", OSD_QTY_CPU_MILLI, "no digit after its decimal point");
    refuses("1.2.3", OSD_QTY_CPU_MILLI, "unknown suffix");
    refuses("1gi", OSD_QTY_BYTES, "unknown suffix");
    refuses("1KiB", OSD_QTY_BYTES, "unknown suffix");
    refuses("1Mi ", OSD_QTY_BYTES, "unknown suffix");
    refuses("123456789012345678901", OSD_QTY_BYTES, "more than 20 digits");
    return CHECK_DONE();
}
