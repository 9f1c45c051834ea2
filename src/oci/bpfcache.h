/* bpfcache.h — config seccomp profiles compiled once per state root.
 * Owns: <root>/@bpf/ (0700, root's; "@" is no container id, so list and
 * every command skip it), one file per profile holding the BPF program
 * libseccomp made of it, so that the next container with the same profile
 * (Podman and containerd send the same default profile every time) does
 * not compile it again (~10 ms of a ~17 ms create here).
 *
 * A hit needs the file's whole key equal to this profile's — the profile
 * dumped canonically (sorted keys, compact) with this binary's libseccomp
 * version — not only its name (a 64-bit FNV-1a of the key, to find the
 * file): a collision is a miss, never another profile's program. Only a
 * regular file owned by root, in a directory owned by root and closed to
 * others, reached by descriptor without following a symlink, is read; a
 * malformed one is a miss. An entry is written complete and synced under a
 * temporary name, then renamed, so it is never seen half written, even
 * after a crash. Failures to store are ignored (the program compiled is
 * used either way); at most 256 entries are kept. */
#ifndef MXC_OCI_BPFCACHE_H
#define MXC_OCI_BPFCACHE_H

#include "profile.h"

/* As oci_seccomp_compile, through the cache of the state root rootfd. */
int oci_seccomp_compile_cached(int rootfd, json_t *seccomp, oci_seccomp *out, mxc_error *e);

#endif
