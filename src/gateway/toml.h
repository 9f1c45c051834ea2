/* toml.h — a small strict TOML reader for the gateway's host configuration.
 * Owns: parsing one TOML document into a JSON tree (jansson): tables and
 * dotted table headers -> nested objects, bare/quoted keys (dotted keys
 * too), basic strings with TOML's escapes, literal strings, decimal
 * integers (optional sign, '_' between digits), booleans, arrays of those
 * (trailing comma, newlines and comments allowed inside), inline tables,
 * comments.  Strict where TOML is: a key defined twice, a table header
 * repeated, a value redefining a table (or the reverse), an unknown escape,
 * a control character, an unterminated string, a bare newline inside a
 * basic string, a number with a leading zero or overflow — all refused
 * with the line.  Not supported, and refused as such (never misread):
 * arrays of tables ([[x]]), multi-line strings, floats, dates and times,
 * hexadecimal/octal/binary integers.  Debian 12 packages no TOML library
 * for C; docs/design-decisions.md says why this one is written and how it
 * is fuzzed (tests/fuzz/fuzz_toml.c). */
#ifndef MXC_GATEWAY_TOML_H
#define MXC_GATEWAY_TOML_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define MXC_TOML_MAX_BYTES (1u << 20) /* a host configuration, not a database */
#define MXC_TOML_MAX_DEPTH 32

/* The document as a JSON object, or NULL with *e saying what and on
 * which line. */
json_t *mxc_toml_parse(const char *text, size_t len, mxc_error *e);

#endif
