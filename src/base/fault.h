/* fault.h — fault injection points, compiled in only in a test build.
 * Owns: the one way code reads an MXC_FAULT_* variable.  With meson's
 * -Dfault_injection=true (run-tests.sh) mxc_fault("NAME") is
 * getenv("MXC_FAULT_NAME"); in every other build it is NULL and the name is
 * not even in the binary, so an installed, root-run mxc-exec or mxc-oci
 * cannot be steered by its environment (issue 35). */
#ifndef MXC_FAULT_H
#define MXC_FAULT_H

#include <stdlib.h>

#ifdef MXC_FAULT_INJECTION
#define mxc_fault(name) getenv("MXC_FAULT_" name)
#else
#define mxc_fault(name) ((const char *)NULL)
#endif

#endif
