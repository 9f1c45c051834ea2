/* probe.h — what this host can enforce, as a JSON report (--probe).
 * Owns: detection only (kernel, Landlock ABI, namespaces, seccomp, cgroup
 * controllers); never changes the host. */
#ifndef MXC_PROBE_H
#define MXC_PROBE_H
#include <jansson.h>
json_t *mxc_probe(void);
#endif
