/* tlsmint.h — owns: one sandbox's TLS interception authority, in memory
 * only.  A CA made at start (EC P-256, self-signed X509v3, basicConstraints
 * CA:TRUE critical, keyUsage keyCertSign|cRLSign, subject "mxc sandbox
 * <name> CA", valid from an hour ago for 7 days, random 128-bit serial)
 * whose private key never leaves this process's memory (nothing here
 * writes a file), its certificate as PEM for the workload's trust stores,
 * and leaf certificates minted on demand for a host name or an IP literal
 * (SAN DNS or IP, EKU serverAuth, one P-256 key shared by every leaf of
 * this authority, valid no longer than the CA), kept in a bounded cache by
 * name.  Thread-safe: minting may run on several interception threads. */
#ifndef MXC_PROXY_TLSMINT_H
#define MXC_PROXY_TLSMINT_H

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stddef.h>

#include "error.h"

#define MXC_TLSMINT_CACHE 64 /* leaves kept; the least recently used goes first */

typedef struct mxc_tlsmint mxc_tlsmint;

/* NULL on failure (err says why). sandbox: the name in the CA's subject. */
mxc_tlsmint *mxc_tlsmint_new(const char *sandbox, mxc_error *err);
/* Frees everything, the keys included (OpenSSL clears key material). */
void mxc_tlsmint_free(mxc_tlsmint *m);

/* The CA certificate, PEM, NUL-terminated; owned by m. */
const char *mxc_tlsmint_ca_pem(const mxc_tlsmint *m);
/* The CA certificate itself (borrowed), for verification by tests. */
X509 *mxc_tlsmint_ca(const mxc_tlsmint *m);
/* The key every leaf certifies (borrowed). */
EVP_PKEY *mxc_tlsmint_leaf_key(const mxc_tlsmint *m);

/* A leaf for name — a DNS name of [A-Za-z0-9.-_] (at most 253 bytes, one
 * trailing dot ignored, case folded) or an IPv4/IPv6 literal (IPv6 without
 * brackets) — signed by the CA: a new reference the caller X509_free()s,
 * or NULL for a name of another shape or an OpenSSL failure. */
X509 *mxc_tlsmint_leaf(mxc_tlsmint *m, const char *name);

#endif
