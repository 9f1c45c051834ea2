/* drvcfg.h — template.driver_config (a google.protobuf.Struct) as mxc's policy document.
 * Owns: the Struct turned into the JSON document mxc-gateway's policy mapper reads
 * (src/gateway/policymap.h, the OpenShell policy component both fronts use: layers.json
 * "openshell_policy"): null, booleans, strings, lists and mappings as they are, a number as
 * an integer when it is a whole one within 2^53 (protobuf's Struct has doubles only; the
 * mapper wants integers: version, ports), else a real; a non-finite number or a Value with
 * no kind refused by its path.  Duplicate keys cannot occur (a map).  Depth is bounded
 * before (pbcheck.h).  Pure: no I/O. */
#ifndef MXC_OSD_DRVCFG_H
#define MXC_OSD_DRVCFG_H

#include <jansson.h>

#include "error.h"
#include "osdpb.h"

/* A new JSON object, or NULL with *e (MXC_E_MALFORMED_REQUEST) naming the path. */
json_t *osd_driver_config_json(const Google__Protobuf__Struct *s, mxc_error *e);

#endif
