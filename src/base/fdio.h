/* fdio.h — whole texts through descriptors.
 * Owns: writing all of a buffer to a descriptor and reading one to its end
 * (a short write or read and EINTR are continued, never mistaken for the
 * end); a short file (a /proc or cgroup file, a small record) read at a
 * directory descriptor into the caller's buffer; a text handed to another
 * process as a memfd (the exec spec to the holder, a request to a fresh
 * mxc-exec, a rule set to mxc-nft); a JSON document read or written whole
 * (jansson's json_loadfd makes one read(2) per byte and json_dumpfd one
 * write(2) per token: ~1500 system calls for an OCI config.json); a file in
 * a directory replaced whole (written aside, synced, renamed over it: a kill
 * or a full disk never leaves half a record). */
#ifndef MXC_FDIO_H
#define MXC_FDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* All len bytes of buf to fd: true, or false (errno set) when a write failed. */
bool mxc_write_all(int fd, const void *buf, size_t len);
/* As mxc_write_all, but an fd whose open file description is O_NONBLOCK (a terminal another
 * program sharing it left so) is waited for (poll) where it would fail with EAGAIN: a relay's
 * output is never cut short (nor a sequence its filter let through cut in two). */
bool mxc_write_all_wait(int fd, const void *buf, size_t len);
/* What fd holds from its offset to its end, or its first max bytes when it
 * holds more (max SIZE_MAX: no bound), read whole: a malloc'd buffer with a
 * NUL after the *len bytes read, or NULL when memory ran out.  A read error
 * ends the text as the end of the file does. */
char *mxc_read_all(int fd, size_t max, size_t *len);
/* The same, but a read error is one: NULL, errno set (ENOMEM when memory
 * ran out). */
char *mxc_read_whole(int fd, size_t max, size_t *len);
/* A short file's text, as the kernel gives one (/proc, cgroupfs) or a record holds: path at
 * dirfd (AT_FDCWD: as open(2) takes it; never through a link at its last component), read in
 * one read(2) (EINTR continued) into buf, its first size-1 bytes at most, a NUL after them: how
 * many bytes were read (0: the file is empty), or -errno (open or read failed; buf then
 * untouched).  size is at least 1. */
ssize_t mxc_read_small_at(int dirfd, const char *path, char *buf, size_t size);
/* The next size bytes of in (a regular file) copied to out in the kernel
 * (sendfile): 0, or -errno (-EIO when in ends sooner). */
int mxc_copy_size(int in, int out, long long size);
/* The path fd names, as /proc/self/fd reads it back, into out: true, or
 * false with out "" when it cannot be read (or does not fit). */
bool mxc_fd_path(int fd, char *out, size_t outsz);
/* A close-on-exec memfd named `name` holding text, its offset at 0: the fd,
 * or -errno. */
int mxc_text_memfd(const char *name, const char *text);

/* json_loadfd's result and errors, the text read whole from fd first. */
json_t *mxc_json_loadfd(int fd, size_t flags, json_error_t *error);
/* json_dumpfd's: the document dumped into memory, then written whole; 0, or
 * -1 (errno set). */
int mxc_json_dumpfd(const json_t *json, int fd, size_t flags);

/* name in dirfd replaced by len bytes of buf, whole or not at all: written
 * to tmp beside it (NULL: "<name>.new"; a file several processes may write
 * at once names its own), made with mode (less the umask), never through a
 * link, synced, renamed over name.  0, or -errno (ENOSPC: a full disk), the
 * temporary removed. */
int mxc_replace_at(int dirfd, const char *name, const char *tmp, const void *buf, size_t len, mode_t mode);
/* The same for a JSON document, dumped compact, mode 0600 (-ENOMEM when it
 * cannot be dumped). */
int mxc_json_replace_at(int dirfd, const char *name, const char *tmp, const json_t *json);
/* Both without the sync: for a file that describes only what a crash of the
 * machine ends with it (a live container's state, its pid file, its
 * cgroups).  The rename alone already keeps every reader from a half file;
 * the sync only adds that the bytes survive a crash (on ext4, ~0.3-1 ms and
 * a slower unlink of the then allocated file), and after one the file may
 * read empty, which its reader takes as no record. */
int mxc_replace_at_unsynced(int dirfd, const char *name, const char *tmp, const void *buf, size_t len, mode_t mode);
int mxc_json_replace_at_unsynced(int dirfd, const char *name, const char *tmp, const json_t *json);

#endif
