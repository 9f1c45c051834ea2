/* stubs.c — what the fuzz harnesses link but never reach: src/oci/rootless.c (its rootless test and
 * owner name are config.c's and store.c's) calls these only on paths that make containers.  Each
 * aborts, so a harness that reached one would fail loudly instead of acting on the host. */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>

#include "error.h"
#include "mountmap.h"

int oci_write_idmap(pid_t pid, const char *file, const oci_idmap *m, size_t n)
{
    (void)pid, (void)file, (void)m, (void)n;
    abort();
}

int mxc_private_dir(bool make, char *out, size_t outsz, mxc_error *e)
{
    (void)make, (void)out, (void)outsz, (void)e;
    abort();
}
