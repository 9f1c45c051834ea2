/* osdpb.h — the pinned contract's generated C (proto/openshell, protoc-c at build time)
 * under short names.  Owns nothing else. */
#ifndef MXC_OSD_OSDPB_H
#define MXC_OSD_OSDPB_H

#include "compute_driver.pb-c.h"

typedef Openshell__Compute__V1__DriverSandbox pb_sandbox;
typedef Openshell__Compute__V1__DriverSandboxSpec pb_spec;
typedef Openshell__Compute__V1__DriverSandboxTemplate pb_template;
typedef Openshell__Compute__V1__DriverResourceRequirements pb_resources;
typedef Openshell__Compute__V1__DriverSandboxStatus pb_status;

#endif
