/* src/oci/apparmor.h — process.apparmorProfile, applied as runc applies it
 * (libcontainer/apparmor: aa_change_onexec reimplemented).
 *
 * Owns: whether the kernel has AppArmor enabled (runc's test: the
 * securityfs directory exists and the module's "enabled" parameter reads
 * "Y"), the profile's name check, and the process's own AppArmor exec
 * attribute: opened beneath a procfs descriptor taken from the host's
 * /proc before anything of the container's is entered (never through a
 * /proc the container could have made: CVE-2019-16884), attr/apparmor/exec
 * with the older attr/exec as fallback, and the write "exec PROFILE" that
 * makes the kernel confine the process from its next execve.  Where the
 * kernel has no AppArmor, create and exec refuse the field naming it
 * (runc's write fails there too; a profile asked for is never dropped).
 */
#ifndef MXC_OCI_APPARMOR_H
#define MXC_OCI_APPARMOR_H

#include <stdbool.h>

#include "error.h"

/* runc's isEnabled, beneath root_fd (the host's "/"; a test's directory):
 * sys/kernel/security/apparmor exists and
 * sys/module/apparmor/parameters/enabled begins with 'Y'. */
bool oci_apparmor_enabled(int root_fd);

/* The profile's name: 1 to 4095 printable characters, no newline (0), or
 * -1 with e naming field. */
int oci_apparmor_name_check(const char *name, const char *field, mxc_error *e);

/* Create and exec, before anything runs: the profile (NULL or "": none)
 * can be applied on this kernel, or -1 with e naming field. */
int oci_apparmor_usable(const char *profile, const char *field, mxc_error *e);

/* The host's /proc as an O_PATH descriptor, checked to be procfs (EXDEV
 * when it is not); or -1 with e (backend_error, operation op, the errno). */
int oci_apparmor_proc(const char *op, mxc_error *e);

/* The calling thread's exec attribute, write-only, beneath proc_fd (a
 * procfs root; a test's directory): thread-self/attr/apparmor/exec, or
 * thread-self/attr/exec where the first does not exist; no mount crossed,
 * no magic link followed.  The descriptor, or -1 with e naming profile
 * (backend_error, operation "oci.init", the errno). */
int oci_apparmor_attr_open(int proc_fd, const char *profile, mxc_error *e);

/* "exec PROFILE" to attr_fd in one write: 0, or -1 with e as above. */
int oci_apparmor_exec_write(int attr_fd, const char *profile, mxc_error *e);

#endif
