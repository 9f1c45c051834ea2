/* test_auditlog.c — unit tests for src/proxy/auditlog.c: the rate budgets
 * (refusals and allowed traffic apart, refilled with time), the size cap
 * (the file's size as found counts, room kept for the last two records),
 * and that everything dropped is counted and said — with a clock the test
 * drives. */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auditlog.h"
#include "check.h"

static int FD;

static char *contents(void)
{
    struct stat st;
    fstat(FD, &st);
    char *buf = calloc(1, (size_t)st.st_size + 1);
    (void)!pread(FD, buf, (size_t)st.st_size, 0);
    return buf;
}

static long long file_size(void)
{
    struct stat st;
    fstat(FD, &st);
    return (long long)st.st_size;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static long long sum_of(const char *hay, const char *key)
{
    long long n = 0;
    for (const char *p = hay; (p = strstr(p, key)); p += strlen(key))
        n += atoll(p + strlen(key));
    return n;
}

static bool rec(mxc_auditlog *l, const char *disp, uint64_t t)
{
    static const char LINE[] = "{\"class_uid\":4002,\"disposition\":\"x\"}\n";
    return mxc_auditlog_write(l, disp, LINE, sizeof LINE - 1, t);
}

static void rates(void)
{
    FD = memfd_create("audit", 0);
    mxc_auditlog_limits lim = {.max_bytes = 1 << 20, .denied_per_sec = 2, .denied_burst = 3, .allowed_per_sec = 1,
                               .allowed_burst = 1};
    mxc_auditlog *l = mxc_auditlog_new(FD, "s\"1", &lim, 0);
    int written = 0;
    for (int i = 0; i < 5; i++)
        written += rec(l, i % 2 ? "auth-failed" : "denied", 0);
    CHECK_INT_EQ(written, 3);                 /* the burst */
    CHECK(rec(l, "allowed", 0));              /* its own budget: a flood of refusals costs it nothing */
    CHECK(!rec(l, "allowed", 10));
    mxc_auditlog_tick(l, 999);                /* not yet a second since the start */
    char *c = contents();
    CHECK_INT_EQ(count(c, "mxc-proxy-audit-dropped"), 0);
    free(c);
    mxc_auditlog_tick(l, 1000);
    c = contents();
    CHECK_INT_EQ(count(c, "mxc-proxy-audit-dropped"), 1);
    CHECK_INT_EQ(sum_of(c, "\"records\":"), 3);
    CHECK_INT_EQ(sum_of(c, "\"allowed\":"), 1);
    CHECK_INT_EQ(sum_of(c, "\"auth-failed\":"), 1);
    CHECK_INT_EQ(sum_of(c, "\"denied\":"), 1);
    CHECK_CONTAINS(c, "\"sandbox\":\"s\\\"1\"");  /* escaped */
    CHECK_CONTAINS(c, "\"class_uid\":2004");
    free(c);
    mxc_auditlog_tick(l, 1500); /* nothing new dropped: no summary */
    /* refilled at 2 a second since the last take (t=0), up to the burst */
    for (int i = 0; i < 3; i++)
        CHECK(rec(l, "denied", 1500));
    CHECK(!rec(l, "denied", 1500));
    CHECK(rec(l, "allowed", 1500));
    mxc_auditlog_tick(l, 1999); /* under a second since the last summary */
    c = contents();
    CHECK_INT_EQ(count(c, "mxc-proxy-audit-dropped"), 1);
    free(c);
    mxc_auditlog_finish(l, 2000); /* the end says the rest */
    c = contents();
    CHECK_INT_EQ(count(c, "mxc-proxy-audit-dropped"), 2);
    CHECK_INT_EQ(sum_of(c, "\"records\":"), 4);
    CHECK_INT_EQ(count(c, "\"cause\":\"rate\""), 2);
    CHECK_INT_EQ(count(c, "\"class_uid\":4002"), 3 + 1 + 3 + 1);
    free(c);
    mxc_auditlog_free(l);
    close(FD);
}

static void size_cap(void)
{
    FD = memfd_create("audit", 0);
    char big[512];
    memset(big, 'a', sizeof big);
    big[sizeof big - 1] = '\n';
    CHECK(write(FD, big, sizeof big) == (ssize_t)sizeof big); /* what someone wrote before: it counts */
    mxc_auditlog_limits lim = {.max_bytes = 8192, .denied_per_sec = 1000, .denied_burst = 1000,
                               .allowed_per_sec = 1000, .allowed_burst = 1000};
    mxc_auditlog *l = mxc_auditlog_new(FD, "s", &lim, 0);
    int written = 0, n = 0;
    for (; n < 40; n++)
        written += mxc_auditlog_write(l, n % 3 ? "denied" : "allowed", big, sizeof big, 0);
    CHECK_INT_EQ(written, (8192 - AUDITLOG_RESERVE - 512) / 512);
    char *c = contents();
    CHECK_INT_EQ(count(c, "mxc-proxy-audit-full"), 1);
    free(c);
    mxc_auditlog_tick(l, 5000); /* full: no rate summaries any more */
    mxc_auditlog_finish(l, 5000);
    CHECK(file_size() <= 8192);
    c = contents();
    CHECK_INT_EQ(count(c, "mxc-proxy-audit-dropped"), 1);
    CHECK_CONTAINS(c, "\"cause\":\"size\"");
    CHECK_INT_EQ(sum_of(c, "\"records\":"), n - written);
    free(c);
    mxc_auditlog_free(l);
    close(FD);

    /* a file already at its cap: nothing more, not even a notice */
    FD = memfd_create("audit", 0);
    for (int i = 0; i < 16; i++)
        CHECK(write(FD, big, sizeof big) == (ssize_t)sizeof big);
    l = mxc_auditlog_new(FD, "s", &lim, 0);
    CHECK(!mxc_auditlog_write(l, "denied", big, 10, 0));
    mxc_auditlog_finish(l, 0);
    CHECK_INT_EQ(file_size(), 8192);
    mxc_auditlog_free(l);
    close(FD);

    /* no sink: nothing written, nothing breaks */
    CHECK(!mxc_auditlog_write(NULL, "denied", big, 10, 0));
    mxc_auditlog_tick(NULL, 0);
    mxc_auditlog_finish(NULL, 0);
}

int main(void)
{
    rates();
    size_cap();
    return CHECK_DONE();
}
