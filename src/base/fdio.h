/* fdio.h — whole texts through descriptors.
 * Owns: writing all of a buffer to a descriptor and reading one to its end
 * (a short write or read and EINTR are continued, never mistaken for the
 * end), and a text handed to another process as a memfd (the exec spec
 * to the holder, a request to a fresh mxc-exec, a rule set to mxc-nft); a
 * JSON document read or written whole (jansson's json_loadfd makes one
 * read(2) per byte and json_dumpfd one write(2) per token: ~1500 system
 * calls for an OCI config.json). */
#ifndef MXC_FDIO_H
#define MXC_FDIO_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* All len bytes of buf to fd: true, or false (errno set) when a write failed. */
bool mxc_write_all(int fd, const void *buf, size_t len);
/* What fd holds from its offset to its end, or its first max bytes when it
 * holds more (max SIZE_MAX: no bound), read whole: a malloc'd buffer with a
 * NUL after the *len bytes read, or NULL when memory ran out.  A read error
 * ends the text as the end of the file does. */
char *mxc_read_all(int fd, size_t max, size_t *len);
/* A close-on-exec memfd named `name` holding text, its offset at 0: the fd,
 * or -errno. */
int mxc_text_memfd(const char *name, const char *text);

/* json_loadfd's result and errors, the text read whole from fd first. */
json_t *mxc_json_loadfd(int fd, size_t flags, json_error_t *error);
/* json_dumpfd's: the document dumped into memory, then written whole; 0, or
 * -1 (errno set). */
int mxc_json_dumpfd(const json_t *json, int fd, size_t flags);

#endif
