/* tlsmint.c — see tlsmint.h.  OpenSSL 3 APIs only (EVP_PKEY_Q_keygen,
 * X509_add1_ext_i2d, no deprecated EC_KEY / RSA calls). */
#include "tlsmint.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALID_BEFORE_S 3600L          /* clocks a little behind still accept it */
#define VALID_FOR_S (7L * 24 * 3600)  /* the CA's lifetime; leaves end with it */
#define NAME_MAX_LEN 253

typedef struct {
    char name[NAME_MAX_LEN + 1];
    X509 *cert;
    unsigned long used;
} slot;

struct mxc_tlsmint {
    EVP_PKEY *ca_key, *leaf_key;
    X509 *ca;
    char *ca_pem;
    pthread_mutex_t lock;
    slot cache[MXC_TLSMINT_CACHE];
    unsigned long tick;
};

static int random_serial(X509 *x)
{
    unsigned char raw[16];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return -1;
    raw[0] &= 0x7f; /* positive */
    raw[0] |= 0x40; /* and 128 bits long, never shorter */
    BIGNUM *bn = BN_bin2bn(raw, sizeof raw, NULL);
    ASN1_INTEGER *ai = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
    int rc = ai && X509_set_serialNumber(x, ai) == 1 ? 0 : -1;
    ASN1_INTEGER_free(ai);
    BN_free(bn);
    return rc;
}

/* A string extension from OpenSSL's own vocabulary (constant text only:
 * nothing a request wrote goes through this parser). */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    int rc = ext && X509_add_ext(x, ext, -1) == 1 ? 0 : -1;
    X509_EXTENSION_free(ext);
    return rc;
}

/* The parts every certificate here shares: version 3, a serial, the
 * subject (CN), the issuer, the validity, the public key. */
static X509 *cert_base(const char *cn, X509 *issuer, EVP_PKEY *pub)
{
    X509 *x = X509_new();
    X509_NAME *subj = X509_NAME_new();
    bool ok = x && subj && X509_set_version(x, X509_VERSION_3) == 1 && random_serial(x) == 0 &&
              (!cn || X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0) == 1) &&
              X509_set_subject_name(x, subj) == 1 &&
              X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : subj) == 1 &&
              X509_gmtime_adj(X509_getm_notBefore(x), -VALID_BEFORE_S) &&
              (issuer ? X509_set1_notAfter(x, X509_get0_notAfter(issuer)) == 1
                      : X509_gmtime_adj(X509_getm_notAfter(x), VALID_FOR_S) != NULL) &&
              X509_set_pubkey(x, pub) == 1;
    X509_NAME_free(subj);
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static EVP_PKEY *p256(void)
{
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

mxc_tlsmint *mxc_tlsmint_new(const char *sandbox, mxc_error *err)
{
    mxc_tlsmint *m = calloc(1, sizeof *m);
    if (!m) {
        mxc_err(err, MXC_E_BACKEND_ERROR, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    char cn[64];
    snprintf(cn, sizeof cn, "mxc sandbox %.40s CA", sandbox && *sandbox ? sandbox : "-");
    BIO *mem = NULL;
    m->ca_key = p256();
    m->leaf_key = p256();
    if (!m->ca_key || !m->leaf_key || !(m->ca = cert_base(cn, NULL, m->ca_key)) ||
        add_ext(m->ca, m->ca, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
        add_ext(m->ca, m->ca, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
        add_ext(m->ca, m->ca, NID_subject_key_identifier, "hash") < 0 ||
        X509_sign(m->ca, m->ca_key, EVP_sha256()) <= 0 || !(mem = BIO_new(BIO_s_mem())) ||
        PEM_write_bio_X509(mem, m->ca) != 1)
        goto fail;
    char *p;
    long n = BIO_get_mem_data(mem, &p);
    if (n <= 0 || !(m->ca_pem = malloc((size_t)n + 1)))
        goto fail;
    memcpy(m->ca_pem, p, (size_t)n);
    m->ca_pem[n] = '\0';
    BIO_free(mem);
    return m;
fail:
    mxc_err(err, MXC_E_BACKEND_ERROR, "cannot make the sandbox's CA");
    BIO_free(mem);
    mxc_tlsmint_free(m);
    return NULL;
}

void mxc_tlsmint_free(mxc_tlsmint *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < MXC_TLSMINT_CACHE; i++)
        X509_free(m->cache[i].cert);
    EVP_PKEY_free(m->ca_key);
    EVP_PKEY_free(m->leaf_key);
    X509_free(m->ca);
    free(m->ca_pem);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

const char *mxc_tlsmint_ca_pem(const mxc_tlsmint *m)
{
    return m->ca_pem;
}

X509 *mxc_tlsmint_ca(const mxc_tlsmint *m)
{
    return m->ca;
}

EVP_PKEY *mxc_tlsmint_leaf_key(const mxc_tlsmint *m)
{
    return m->leaf_key;
}

/* The cache key: a lower-cased DNS name without its trailing dot, or the
 * literal; ip and iplen the address bytes for a literal.  false: neither. */
static bool normalise(const char *name, char *key, unsigned char ip[16], int *iplen)
{
    *iplen = 0;
    if (inet_pton(AF_INET, name, ip) == 1)
        *iplen = 4;
    else if (inet_pton(AF_INET6, name, ip) == 1)
        *iplen = 16;
    if (*iplen) {
        snprintf(key, NAME_MAX_LEN + 1, "%s", name);
        return strlen(name) <= NAME_MAX_LEN;
    }
    size_t n = strlen(name);
    if (n && name[n - 1] == '.')
        n--;
    if (n == 0 || n > NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_'))
            return false;
        key[i] = c >= 'A' && c <= 'Z' ? (char)(c | 0x20) : c;
    }
    key[n] = '\0';
    return true;
}

static int add_san(X509 *x, const char *key, const unsigned char *ip, int iplen)
{
    GENERAL_NAMES *gens = GENERAL_NAMES_new();
    GENERAL_NAME *g = GENERAL_NAME_new();
    ASN1_STRING *s = iplen ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new();
    bool ok = gens && g && s &&
              ASN1_STRING_set(s, iplen ? (const void *)ip : (const void *)key, iplen ? iplen : (int)strlen(key)) == 1;
    if (ok) {
        GENERAL_NAME_set0_value(g, iplen ? GEN_IPADD : GEN_DNS, s);
        s = NULL;
        ok = sk_GENERAL_NAME_push(gens, g) > 0;
        if (ok)
            g = NULL;
    }
    ok = ok && X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1;
    ASN1_STRING_free(s);
    GENERAL_NAME_free(g);
    GENERAL_NAMES_free(gens);
    return ok ? 0 : -1;
}

static X509 *mint(mxc_tlsmint *m, const char *key, const unsigned char *ip, int iplen)
{
    /* the CN only when it fits its 64-byte upper bound; clients go by the SAN */
    X509 *x = cert_base(strlen(key) <= 64 ? key : NULL, m->ca, m->leaf_key);
    if (!x || add_ext(x, m->ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        add_ext(x, m->ca, NID_key_usage, "critical,digitalSignature") < 0 ||
        add_ext(x, m->ca, NID_ext_key_usage, "serverAuth") < 0 ||
        add_ext(x, m->ca, NID_authority_key_identifier, "keyid:always") < 0 || add_san(x, key, ip, iplen) < 0 ||
        X509_sign(x, m->ca_key, EVP_sha256()) <= 0) {
        X509_free(x);
        return NULL;
    }
    return x;
}

X509 *mxc_tlsmint_leaf(mxc_tlsmint *m, const char *name)
{
    char key[NAME_MAX_LEN + 1];
    unsigned char ip[16];
    int iplen;
    if (!name || !normalise(name, key, ip, &iplen))
        return NULL;
    pthread_mutex_lock(&m->lock);
    slot *oldest = &m->cache[0];
    for (size_t i = 0; i < MXC_TLSMINT_CACHE; i++) {
        slot *s = &m->cache[i];
        if (s->cert && strcmp(s->name, key) == 0) {
            s->used = ++m->tick;
            X509_up_ref(s->cert);
            pthread_mutex_unlock(&m->lock);
            return s->cert;
        }
        if (!s->cert || (oldest->cert && s->used < oldest->used))
            oldest = s;
    }
    /* minted under the lock: a few milliseconds, and two threads never mint the same name twice */
    X509 *x = mint(m, key, ip, iplen);
    if (x) {
        X509_free(oldest->cert);
        snprintf(oldest->name, sizeof oldest->name, "%s", key);
        oldest->cert = x;
        oldest->used = ++m->tick;
        X509_up_ref(x);
    }
    pthread_mutex_unlock(&m->lock);
    return x;
}
