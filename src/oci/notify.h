/* notify.h — a seccomp agent given the container's listener (linux.seccomp
 * listenerPath, SCMP_ACT_NOTIFY), as runc 1.1 does.
 * Owns: the runtime's side of the handover.  The container's process loads
 * the config's filter with SECCOMP_FILTER_FLAG_NEW_LISTENER (profile.h) and
 * sends the listener to mxc-oci on its init socket (tag OCI_MSG_LISTENER,
 * SCM_RIGHTS), closing its own; mxc-oci connects to listenerPath — a Unix
 * socket, by path, as the runtime in the runtime's namespaces, never from
 * inside the container: the agent is the operator's and so is the path —
 * and sends the container process state (the runtime spec's
 * ContainerProcessState: ociVersion, fds ["seccompFd"], pid, metadata,
 * state) with the listener in one message — the socket opened without
 * following its last component and connected through that descriptor —
 * then closes its copy: once the
 * agent is gone, a notified call fails with ENOSYS.  An agent whose socket
 * is served from inside the container (its user namespace; the listening
 * process named by its pidfd, never by a pid number) is refused: the
 * workload would answer its own profile's notifications.  create sends it
 * once (state "creating"), each exec again (state "running", pid the
 * exec'd process). */
#ifndef MXC_OCI_NOTIFY_H
#define MXC_OCI_NOTIFY_H

#include <jansson.h>
#include <sys/types.h>

#include "error.h"

#define OCI_MSG_LISTENER 'N' /* the container's process -> mxc-oci: + the seccomp listener */
#define OCI_MSG_LISTENER_OK 'n' /* mxc-oci -> an exec'd process: the agent has it, go on to execve */

/* seccomp: the config's linux.seccomp (listenerPath, listenerMetadata);
 * pid: the process whose filter it is; state: the container's state
 * (borrowed).  The agent must listen in mxc-oci's own user namespace
 * (the operator's: never a container's, this one's or another's), and is
 * given a bounded time to accept (a socket planted there that never
 * accepts cannot hold create or exec).  0, or -1 with *e (runc's words:
 * "failed to connect with seccomp agent ..."). */
int oci_notify_send(json_t *seccomp, int listener, pid_t pid, json_t *state, mxc_error *e);

#endif
