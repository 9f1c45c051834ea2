/* ocijson.h — reading the runtime spec's JSON where jansson's integer is
 * too narrow.
 * Owns: the one uint64 value the spec's callers send that does not fit
 * jansson's json_int_t (int64): RLIM_INFINITY, 18446744073709551615, as
 * runc reads it (Go's uint64).  The loader rewrites that exact literal
 * (outside strings) as a real, 18446744073709551615.0, which jansson
 * decodes to the double 2^64; nothing else changes, and any other integer
 * that does not fit still fails to parse, naming where.  oci_u64_of takes
 * an unsigned integer, or a real equal to 2^64 exactly as RLIM_INFINITY
 * (a saved config writes that real back as 1.8446744073709552e+19). */
#ifndef MXC_OCI_JSON_H
#define MXC_OCI_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* json_loadfd with RLIM_INFINITY readable (flags and je as jansson's). */
json_t *oci_json_loadfd(int fd, size_t flags, json_error_t *je);

/* The same over a buffer. */
json_t *oci_json_loadb(const char *text, size_t len, size_t flags, json_error_t *je);

/* v as an unsigned 64-bit value: a non-negative integer, or RLIM_INFINITY
 * (a real equal to 2^64).  false for anything else. */
bool oci_u64_of(const json_t *v, uint64_t *out);

#endif
