/* test_credbind.c — unit tests for src/proxy/credbind.c: the placeholder
 * rule (substituted only for its binding: host, port, path prefix,
 * revision), malformed / unknown placeholders, path tricks against a
 * prefix, secrets that could inject a header refused, bounds. */
#include <stdlib.h>

#include "check.h"
#include "credbind.h"

static mxc_credset *S;
static const char *REASON, *USED;

static mxc_span sp(const char *s)
{
    return (mxc_span){s, strlen(s)};
}

/* The substituted value, or NULL (REASON set); static storage. */
static const char *sub(const char *host, unsigned port, const char *path, const char *value)
{
    static char buf[256];
    char *out;
    size_t n;
    if (mxc_credset_substitute(S, host, port, sp(path), sp(value), &out, &n, &USED, &REASON) < 0)
        return NULL;
    snprintf(buf, sizeof buf, "%.*s", (int)n, out);
    free(out);
    return buf;
}

int main(void)
{
    mxc_error E = {0};
    const char *err = E.message;
    S = mxc_credset_new();
    CHECK(mxc_credset_add(S, "github", 3, "API.Example.test.", 443, "/repos/", "ghp_SECRET", &E) == 0);
    CHECK(mxc_credset_add(S, "other", 1, "other.test", 443, NULL, "OTHERSECRET", &E) == 0);
    CHECK(mxc_credset_add(S, "ip", 1, "198.51.100.7", 8443, "", "IPSECRET", &E) == 0);
    CHECK_INT_EQ(mxc_credset_count(S), 3);

    /* bad entries: the message names the field, never the secret */
    CHECK(mxc_credset_add(S, "bad name", 1, "a.test", 443, NULL, "x", &E) < 0);
    CHECK_CONTAINS(err, "credentials[3].name");
    CHECK(mxc_credset_add(S, "n", 1, "a b", 443, NULL, "x", &E) < 0);
    CHECK_CONTAINS(err, ".host");
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 0, NULL, "x", &E) < 0);
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 443, "repos", "x", &E) < 0);
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 443, NULL, "", &E) < 0);
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 443, NULL, "TOP\r\nX-Injected: 1", &E) < 0);
    CHECK(strstr(err, "TOP") == NULL);
    CHECK(mxc_credset_add(S, "github", 4, "a.test", 443, NULL, "x", &E) < 0);
    CHECK_CONTAINS(err, "twice");
    CHECK(mxc_credset_add(S, "github", 3, "a.test", 443, NULL, "another-secret", &E) < 0);
    CHECK_CONTAINS(err, "twice");
    CHECK_INT_EQ(mxc_credset_count(S), 3);

    char key[300];
    CHECK(mxc_cred_host_key("API.example.TEST.", key, sizeof key) && !strcmp(key, "api.example.test"));
    CHECK(mxc_cred_host_key("2001:DB8:0::1", key, sizeof key) && !strcmp(key, "2001:db8::1"));
    CHECK(mxc_credset_binds(S, "api.example.test", 443));
    CHECK(!mxc_credset_binds(S, "api.example.test", 8443));
    CHECK(!mxc_credset_binds(S, "x.api.example.test", 443));
    CHECK(mxc_credset_binds(S, "198.51.100.7", 8443));

    /* the bound endpoint */
    CHECK_STR_EQ(sub("api.example.test", 443, "/repos/x", "Bearer mxc:cred:github:3"), "Bearer ghp_SECRET");
    CHECK_STR_EQ(USED, "github");
    CHECK_STR_EQ(sub("api.example.test", 443, "/repos/x", "a mxc:cred:github:3 b mxc:cred:github:3"),
                 "a ghp_SECRET b ghp_SECRET");
    CHECK_STR_EQ(sub("api.example.test", 443, "/anything", "no placeholder"), "no placeholder");
    CHECK(USED == NULL);
    CHECK_STR_EQ(sub("other.test", 443, "/", "token mxc:cred:other:1"), "token OTHERSECRET");
    CHECK_STR_EQ(sub("198.51.100.7", 8443, "/", "mxc:cred:ip:1"), "IPSECRET");

    /* everywhere else: refused, with the reason */
    static const struct {
        const char *host;
        unsigned port;
        const char *path, *value, *reason;
    } NO[] = {
        {"api.example.test", 443, "/repos/x", "mxc:cred:github:2", "credential-revision"},
        {"api.example.test", 443, "/repos/x", "mxc:cred:github:33", "credential-revision"},
        {"api.example.test", 443, "/repos/x", "mxc:cred:nobody:1", "credential-unknown"},
        {"api.example.test", 443, "/repos/x", "mxc:cred:other:1", "credential-not-bound"},
        {"evil.test", 443, "/repos/x", "mxc:cred:github:3", "credential-not-bound"},
        {"api.example.test", 8443, "/repos/x", "mxc:cred:github:3", "credential-not-bound"},
        {"api.example.test", 443, "/user", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/../user", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/./x", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%2e%2e/user", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/a%2Fb", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/a\\..\\b", "mxc:cred:github:3", "credential-path"},
        /* issue 27 finding 7: what a servlet container, a proxy that decodes twice or a
         * Windows origin resolves outside the prefix */
        {"api.example.test", 443, "/repos/..;/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/..;/..;/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/..;jsessionid=1/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/.;/x", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/x/..;", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/..%3b/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%2e%2e;/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%252e%252e/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%252E%252E%252Fadmin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%25252e%25252e/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%2525252e./admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%%32%65%%32%65/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/x%252f..%252fadmin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/a%252fb", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%5c..%5cadmin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%255c..%255cadmin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%c0%ae%c0%ae/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%e0%80%ae%e0%80%ae/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/%u002e%u002e/admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/x%00/../admin", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/x%0d%0a", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/x/..", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/.", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/.../x", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/..../x", "mxc:cred:github:3", "credential-path"},
        {"api.example.test", 443, "/repos/x", "MXC:CRED:github:3", "credential-malformed"},
        {"api.example.test", 443, "/repos/x", "mxc:cred:github", "credential-malformed"},
        {"api.example.test", 443, "/repos/x", "mxc:cred:github:", "credential-malformed"},
        {"api.example.test", 443, "/repos/x", "mxc:cred::3", "credential-malformed"},
        {"api.example.test", 443, "/repos/x", "ok mxc:cred:github:3 then mxc:cred:other:1", "credential-not-bound"},
    };
    for (size_t i = 0; i < sizeof NO / sizeof NO[0]; i++) {
        CHECK_MSG(sub(NO[i].host, NO[i].port, NO[i].path, NO[i].value) == NULL, "%s", NO[i].value);
        CHECK_MSG(REASON && !strcmp(REASON, NO[i].reason), "%s %s: %s", NO[i].path, NO[i].value, REASON ? REASON : "-");
    }
    /* a query may hold dots: only the path part is judged */
    CHECK_STR_EQ(sub("api.example.test", 443, "/repos/x?q=../..", "mxc:cred:github:3"), "ghp_SECRET");
    /* what stays inside: names with dots, a literal '%' (once encoded), UTF-8, parameters */
    static const char *const YES[] = {"/repos/a.b/..c/d..", "/repos/v1.2/x.json", "/repos/100%25",
                                      "/repos/caf%C3%A9", "/repos/x;v=1/y", "/repos/%41%42", "/repos//x",
                                      "/repos/x?q=%2e%2e/%2f"};
    for (size_t i = 0; i < sizeof YES / sizeof YES[0]; i++)
        CHECK_MSG(sub("api.example.test", 443, YES[i], "mxc:cred:github:3") != NULL, "%s: %s", YES[i],
                  REASON ? REASON : "-");
    /* a prefix is itself a plain path */
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 443, "/a/../b/", "x", &E) < 0);
    CHECK_CONTAINS(err, "pathPrefix");
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 443, "/a/%2e%2e/", "x", &E) < 0);
    CHECK(mxc_credset_add(S, "n", 1, "a.test", 443, "/a/..;/", "x", &E) < 0);
    CHECK_INT_EQ(mxc_credset_count(S), 3);

    CHECK(mxc_cred_mentioned("x: MxC:CrEd:a:1", 15));
    CHECK(!mxc_cred_mentioned("x: mxc:cre", 10));

    /* the bound */
    mxc_credset *many = mxc_credset_new();
    for (int i = 0; i < MXC_CRED_MAX; i++) {
        char n[16];
        snprintf(n, sizeof n, "c%d", i);
        CHECK(mxc_credset_add(many, n, 1, "a.test", 443, NULL, "s", &E) == 0);
    }
    CHECK(mxc_credset_add(many, "one-more", 1, "a.test", 443, NULL, "s", &E) < 0);
    mxc_credset_free(many);
    mxc_credset_free(S);
    /* one credential, several bindings (a provider's endpoints): the one placeholder works at
     * each, and nowhere else; a miss says the closest reason */
    mxc_credset *P = mxc_credset_new();
    CHECK(mxc_credset_add(P, "gh", 2, "api.example.test", 443, NULL, "PSECRET", &E) == 0);
    CHECK(mxc_credset_add(P, "gh", 2, "uploads.example.test", 443, "/up/", "PSECRET", &E) == 0);
    mxc_credset *keep = S;
    S = P;
    CHECK_STR_EQ(sub("api.example.test", 443, "/x", "mxc:cred:gh:2"), "PSECRET");
    CHECK_STR_EQ(sub("uploads.example.test", 443, "/up/f", "mxc:cred:gh:2"), "PSECRET");
    CHECK(sub("uploads.example.test", 443, "/other", "mxc:cred:gh:2") == NULL && !strcmp(REASON, "credential-path"));
    CHECK(sub("third.example.test", 443, "/", "mxc:cred:gh:2") == NULL && !strcmp(REASON, "credential-not-bound"));
    CHECK(sub("api.example.test", 443, "/", "mxc:cred:gh:1") == NULL && !strcmp(REASON, "credential-revision"));
    CHECK(sub("api.example.test", 443, "/", "mxc:cred:nope:2") == NULL && !strcmp(REASON, "credential-unknown"));
    S = keep;
    mxc_credset_free(P);
    return CHECK_DONE();
}
