/* test_tlsmint.c — unit tests for src/proxy/tlsmint.c: the CA's shape, a
 * leaf for a name and for an IP literal verified against the CA with
 * X509_verify_cert (purpose sslserver, the host / IP checked), the cache,
 * names of other shapes refused, two authorities differing. */
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include "check.h"
#include "tlsmint.h"

/* 1 when leaf verifies against ca alone for host (or ip). */
static int verify(X509 *ca, X509 *leaf, const char *host, const char *ip)
{
    X509_STORE *st = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok = st && ctx && X509_STORE_add_cert(st, ca) == 1 && X509_STORE_CTX_init(ctx, st, leaf, NULL) == 1;
    if (ok) {
        X509_VERIFY_PARAM *p = X509_STORE_CTX_get0_param(ctx);
        X509_VERIFY_PARAM_set_purpose(p, X509_PURPOSE_SSL_SERVER);
        if (host)
            X509_VERIFY_PARAM_set1_host(p, host, 0);
        if (ip)
            X509_VERIFY_PARAM_set1_ip_asc(p, ip);
        ok = X509_verify_cert(ctx) == 1;
        if (!ok)
            fprintf(stderr, "verify: %s\n", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    }
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(st);
    return ok;
}

int main(void)
{
    mxc_error E = {0};
    mxc_tlsmint *m = mxc_tlsmint_new("sb-1", &E);
    CHECK_MSG(m != NULL, "%s", E.message);
    if (!m)
        return CHECK_DONE();
    X509 *ca = mxc_tlsmint_ca(m);
    const char *pem = mxc_tlsmint_ca_pem(m);
    CHECK_CONTAINS(pem, "-----BEGIN CERTIFICATE-----");
    CHECK(strstr(pem, "PRIVATE KEY") == NULL);
    char cn[128] = "";
    X509_NAME_get_text_by_NID(X509_get_subject_name(ca), NID_commonName, cn, sizeof cn);
    CHECK_STR_EQ(cn, "mxc sandbox sb-1 CA");
    CHECK(X509_check_ca(ca) >= 1);
    int crit = -1;
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(ca, NID_basic_constraints, &crit, NULL);
    CHECK(bc && bc->ca && crit == 1);
    BASIC_CONSTRAINTS_free(bc);
    CHECK((X509_get_key_usage(ca) & (KU_KEY_CERT_SIGN | KU_CRL_SIGN)) == (KU_KEY_CERT_SIGN | KU_CRL_SIGN));
    const ASN1_INTEGER *serial = X509_get0_serialNumber(ca);
    CHECK(serial && serial->length == 16);
    EVP_PKEY *pub = X509_get0_pubkey(ca);
    CHECK(pub && EVP_PKEY_is_a(pub, "EC") && EVP_PKEY_get_bits(pub) == 256);
    int days = 0, secs = 0;
    CHECK(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(ca), X509_get0_notAfter(ca)) == 1);
    CHECK(days == 7 && secs == 3600);

    /* a name: verifies for it, not for another */
    X509 *leaf = mxc_tlsmint_leaf(m, "API.Example.test.");
    CHECK(leaf != NULL);
    CHECK(leaf && verify(ca, leaf, "api.example.test", NULL));
    CHECK(leaf && !verify(ca, leaf, "other.example.test", NULL));
    CHECK(leaf && (X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER));
    CHECK(leaf && X509_check_ca(leaf) == 0);
    /* the cache: the same certificate again */
    X509 *again = mxc_tlsmint_leaf(m, "api.example.test");
    CHECK(again == leaf);
    X509_free(again);
    X509_free(leaf);

    /* IP literals */
    X509 *v4 = mxc_tlsmint_leaf(m, "198.51.100.7");
    CHECK(v4 && verify(ca, v4, NULL, "198.51.100.7"));
    CHECK(v4 && !verify(ca, v4, NULL, "198.51.100.8"));
    X509_free(v4);
    X509 *v6 = mxc_tlsmint_leaf(m, "2001:db8::1");
    CHECK(v6 && verify(ca, v6, NULL, "2001:db8::1"));
    X509_free(v6);

    /* shapes that are neither */
    CHECK(mxc_tlsmint_leaf(m, "") == NULL);
    CHECK(mxc_tlsmint_leaf(m, "a,DNS:evil.test") == NULL);
    CHECK(mxc_tlsmint_leaf(m, "a b") == NULL);
    CHECK(mxc_tlsmint_leaf(m, NULL) == NULL);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(mxc_tlsmint_leaf(m, longname) == NULL);
    /* a long but valid name: no CN, the SAN still carries it */
    char name100[101];
    memset(name100, 'b', 100);
    name100[60] = '.';
    name100[100] = '\0';
    X509 *lng = mxc_tlsmint_leaf(m, name100);
    CHECK(lng && verify(ca, lng, name100, NULL));
    X509_free(lng);

    /* the cache stays bounded and keeps working past its size */
    for (int i = 0; i < MXC_TLSMINT_CACHE * 2 + 3; i++) {
        char n[64];
        snprintf(n, sizeof n, "h%d.example.test", i);
        X509 *x = mxc_tlsmint_leaf(m, n);
        CHECK(x && verify(ca, x, n, NULL));
        X509_free(x);
    }

    /* another authority: another CA, and its leaves do not verify against ours */
    mxc_tlsmint *m2 = mxc_tlsmint_new("sb-2", &E);
    CHECK(m2 && strcmp(mxc_tlsmint_ca_pem(m2), pem) != 0);
    X509 *foreign = m2 ? mxc_tlsmint_leaf(m2, "api.example.test") : NULL;
    CHECK(foreign && !verify(ca, foreign, "api.example.test", NULL));
    X509_free(foreign);
    mxc_tlsmint_free(m2);
    mxc_tlsmint_free(m);
    return CHECK_DONE();
}
