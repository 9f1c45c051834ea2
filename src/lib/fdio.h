/* fdio.h — whole texts through descriptors.
 * Owns: writing all of a buffer to a descriptor (a short write or EINTR is
 * continued, never mistaken for the end), and a text handed to another
 * process as a memfd (the exec spec to the holder, a request to a fresh
 * mxc-exec, a rule set to mxc-nft). */
#ifndef MXC_FDIO_H
#define MXC_FDIO_H

#include <stdbool.h>
#include <stddef.h>

/* All len bytes of buf to fd: true, or false (errno set) when a write failed. */
bool mxc_write_all(int fd, const void *buf, size_t len);
/* A close-on-exec memfd named `name` holding text, its offset at 0: the fd,
 * or -errno. */
int mxc_text_memfd(const char *name, const char *text);

#endif
