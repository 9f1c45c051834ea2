/* yamljson.h — a YAML document as JSON, for `mxc --policy FILE.yaml`.
 * Owns: the conversion only (libyaml's document loader does the parsing):
 * mappings -> objects (string keys, duplicates refused), sequences ->
 * arrays, plain scalars true/false/null and integers typed, everything
 * else (and every quoted scalar) a string.  Anchors and aliases are
 * refused (a bounded policy needs no references).  No policy meaning. */
#ifndef MXC_BASE_YAMLJSON_H
#define MXC_BASE_YAMLJSON_H

#include <jansson.h>
#include <stdio.h>

/* The document in f as JSON, or NULL with why[] said. */
json_t *mxc_yaml_load(FILE *f, char *why, size_t whysz);

#endif
