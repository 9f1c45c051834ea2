/* check.h — a minimal assertion kit for the mxc unit tests.
 * Every CHECK counts; a failing one prints file:line and the expression (plus
 * an optional formatted note) and the binary exits non-zero at CHECK_DONE(). */
#ifndef MXC_TEST_CHECK_H
#define MXC_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_total;
static int check_failed;

#define CHECK_MSG(cond, ...)                                                    \
    do {                                                                        \
        check_total++;                                                          \
        if (!(cond)) {                                                          \
            check_failed++;                                                     \
            fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

#define CHECK(cond) CHECK_MSG(cond, "%s", "")

#define CHECK_INT_EQ(a, b)                                                      \
    do {                                                                        \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);        \
        CHECK_MSG(check_a_ == check_b_, "%lld != %lld", check_a_, check_b_);   \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                      \
    do {                                                                        \
        const char *check_sa_ = (a), *check_sb_ = (b);                         \
        CHECK_MSG(check_sa_ && check_sb_ && strcmp(check_sa_, check_sb_) == 0, \
                  "\"%s\" != \"%s\"", check_sa_ ? check_sa_ : "(null)",         \
                  check_sb_ ? check_sb_ : "(null)");                            \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                             \
    do {                                                                        \
        const char *check_h_ = (hay), *check_n_ = (needle);                    \
        CHECK_MSG(check_h_ && strstr(check_h_, check_n_) != NULL,               \
                  "\"%s\" does not contain \"%s\"", check_h_ ? check_h_ : "(null)", \
                  check_n_);                                                    \
    } while (0)

/* Ends main(): prints a summary and yields the exit status. */
#define CHECK_DONE()                                                            \
    (fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, check_total,      \
             check_failed),                                                     \
     check_failed ? 1 : 0)

#endif
