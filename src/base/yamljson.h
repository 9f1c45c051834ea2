/* yamljson.h — a YAML document as JSON, for `mxc --policy FILE.yaml`.
 * Owns: the conversion only (libyaml's document loader does the parsing):
 * mappings -> objects (string keys, duplicates refused), sequences ->
 * arrays, plain scalars true/false/null and integers typed, everything
 * else (and every quoted scalar) a string.  Anchors and aliases are
 * refused (a bounded policy needs no references); and a policy file read
 * as YAML or as JSON by the same rules for both fronts that take one (mxc
 * --policy, mxc-gateway sandbox create --policy).  No policy meaning. */
#ifndef MXC_BASE_YAMLJSON_H
#define MXC_BASE_YAMLJSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "error.h"

/* The document in f as JSON, or NULL with *e said. */
json_t *mxc_yaml_load(FILE *f, mxc_error *e);
/* The document in f, YAML when yaml, else JSON (duplicate keys refused);
 * NULL with *e said ("line N: ..."). */
json_t *mxc_doc_load(FILE *f, bool yaml, mxc_error *e);

#endif
