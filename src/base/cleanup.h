/* cleanup.h — scope-bound release for gcc and clang (__attribute__((cleanup))).
 * Owns: the small helpers a variable names to be released when it goes out of
 * scope (an fd closed, a heap block freed), so that a function returns early
 * without a `goto out` chain.  A variable handed on is taken with mxc_take_fd /
 * mxc_take_ptr, which leave the variable empty.  Base: no engine header. */
#ifndef MXC_CLEANUP_H
#define MXC_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>

static inline void mxc_closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}

static inline void mxc_freep(void *p)
{
    free(*(void **)p);
}

/* int fd _cleanup_fd_ = -1;  char *s _cleanup_free_ = NULL; */
#define _cleanup_fd_ __attribute__((cleanup(mxc_closep)))
#define _cleanup_free_ __attribute__((cleanup(mxc_freep)))

static inline int mxc_take_fd(int *fd)
{
    int r = *fd;
    *fd = -1;
    return r;
}

static inline void *mxc_take_ptr(void *p)
{
    void *r = *(void **)p;
    *(void **)p = NULL;
    return r;
}

#endif
