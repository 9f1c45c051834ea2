/* selfclone.h — mxc-oci runs the commands that start container processes from a sealed copy of
 * itself (runc's cloned binary).
 * Owns: re-executing mxc-oci, before it does anything else, from a memfd copy of its binary sealed
 * against every change.  A process mxc-oci starts in a container is mxc-oci until its execve, and at
 * that moment its /proc/self/exe is what the kernel follows for an image file's "#!/proc/self/exe"
 * (binfmt_script opens the interpreter in the old process's context; the magic-link check of the
 * executable's path cannot see it, and a swap of the interpreter by a sibling would race any check):
 * with the copy, what runs is a sealed anonymous file, never the host's binary, which a container's
 * root could otherwise hold by /proc/PID/exe and, where ownership allowed, overwrite
 * (CVE-2019-5736).  The copy is what exec needs of the binary, not its symbols and debug
 * information (oci_elf_exec_size). */
#ifndef MXC_OCI_SELFCLONE_H
#define MXC_OCI_SELFCLONE_H

#include <stddef.h>

#include "error.h"

/* How many bytes of the ELF file whose first len bytes are head (size in all) exec needs: up to
 * the end of its headers and of the last segment a program header names (PT_LOAD and the rest).
 * The copy is that much (the symbols and debug information after it stay behind: a debug build's
 * 2.9 MB are 1.5 MB); size where head is not a 64-bit ELF of this machine's byte order, its
 * program headers lie past len, or a segment past size. */
long long oci_elf_exec_size(const unsigned char *head, size_t len, long long size);

/* Already the sealed copy: 0 (the process named "mxc-oci" again).  Otherwise the copy is made and
 * exec'd with argv and the environment (this returns only on failure: -1 with *e set). */
int oci_selfclone(char **argv, mxc_error *e);

#endif
