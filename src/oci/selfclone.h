/* selfclone.h — mxc-oci runs the commands that start container processes from a sealed copy of
 * itself (runc's cloned binary).
 * Owns: re-executing mxc-oci, before it does anything else, from a memfd copy of its binary sealed
 * against every change.  A process mxc-oci starts in a container is mxc-oci until its execve, and at
 * that moment its /proc/self/exe is what the kernel follows for an image file's "#!/proc/self/exe"
 * (binfmt_script opens the interpreter in the old process's context; the magic-link check of the
 * executable's path cannot see it, and a swap of the interpreter by a sibling would race any check):
 * with the copy, what runs is a sealed anonymous file, never the host's binary, which a container's
 * root could otherwise hold by /proc/PID/exe and, where ownership allowed, overwrite
 * (CVE-2019-5736). */
#ifndef MXC_OCI_SELFCLONE_H
#define MXC_OCI_SELFCLONE_H

#include "error.h"

/* Already the sealed copy: 0 (the process named "mxc-oci" again).  Otherwise the copy is made and
 * exec'd with argv and the environment (this returns only on failure: -1 with *e set). */
int oci_selfclone(char **argv, mxc_error *e);

#endif
