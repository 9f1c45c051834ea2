/* yamljson.h — a YAML document as JSON, for `mxc --policy FILE.yaml`.
 * Owns: the conversion only (libyaml's document loader does the parsing):
 * mappings -> objects (string keys, duplicates refused), sequences ->
 * arrays, plain scalars true/false/null and integers typed, everything
 * else (and every quoted scalar) a string.  Anchors and aliases are
 * refused (a bounded policy needs no references).  No policy meaning. */
#ifndef MXC_CLI_YAMLJSON_H
#define MXC_CLI_YAMLJSON_H

#include <jansson.h>
#include <stdio.h>

#include "error.h"

/* The document in f as JSON, or NULL with *e said. */
json_t *mxc_yaml_load(FILE *f, mxc_error *e);

#endif
