/* run.h — the driver's child processes: mxc-oci and podman, run as their caller.
 * Owns: one program run by its absolute path with an exact argv (never a shell), its
 * stdin /dev/null, its stdout captured (bounded) or handed a descriptor (a container's
 * log, which the container keeps), its stderr captured (bounded, for the refusal's
 * message), no descriptor of the driver's leaking into it (everything opened here is
 * CLOEXEC), and its exit status waited for.  The driver's single thread waits: a call that
 * runs children (Create, Stop, Start, Delete) holds the loop for their time. */
#ifndef MXC_OSD_RUN_H
#define MXC_OSD_RUN_H

#include <stddef.h>

typedef struct {
    char out[4096]; /* stdout (when out_fd < 0), NUL-terminated, truncated */
    char err[1024]; /* stderr, the last line's text kept whole when it fits */
} osd_run_io;

/* argv[0] the absolute path; out_fd >= 0: the child's stdout and stderr go there instead
 * (io->out and io->err empty).  The exit status (0-255), 128+signal, or -1 (it could not
 * be run: io->err says why). */
int osd_run(const char *const argv[], int out_fd, osd_run_io *io);
/* The same with extra "NAME=VALUE" entries ahead of the driver's environment (a provider's
 * secret for mxc-oci create: in that child's environment alone, never its argv). */
int osd_run_env(const char *const argv[], int out_fd, osd_run_io *io, char *const extra[], size_t n_extra);

#endif
