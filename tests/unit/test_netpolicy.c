/* test_netpolicy.c — src/net/netpolicy.c: the model each network shape
 * becomes, the rule set it lowers to (order: host loopback, deny, allow,
 * default), and the refusals with their JSON path.  Pure: no root. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net.h"
#include "netpolicy.h"
#include "request.h"

static int build(const char *json, mxc_net_policy *np, mxc_error *e)
{
    mxc_request r;
    mxc_error pe = {0};
    CHECK_MSG(mxc_request_parse(json, strlen(json), &r, &pe) == 0, "%s: %s", json, pe.message);
    mxc_error_clear(&pe);
    mxc_net_section sec;
    mxc_request_net_section(&r, &sec);
    int rc = mxc_net_policy_build(&sec, np, e);
    mxc_net_section_free(&sec);
    mxc_request_free(&r);
    return rc;
}

#define V1(net) "{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"network\":" net "}"
#define V08(net) "{\"version\":\"0.8.0\",\"process\":{\"commandLine\":\"x\"},\"network\":" net "}"

static void test_models(void)
{
    static const struct { const char *json; mxc_net_model want; } M[] = {
        {"{\"process\":{\"commandLine\":\"x\"}}", MXC_NETM_NONE},
        {V1("{\"egress\":{\"default\":\"deny\"}}"), MXC_NETM_NONE},
        {V08("{\"egress\":{\"default\":\"deny\"},\"ingress\":{\"default\":\"deny\"}}"), MXC_NETM_NONE},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"block\"}}", MXC_NETM_NONE},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true}}",
         MXC_NETM_HOST},
        {V1("{\"egress\":{\"default\":\"allow\"},\"ingress\":{\"default\":\"allow\",\"hostLoopback\":\"allow\"}}"),
         MXC_NETM_HOST},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"allow\"}}", MXC_NETM_DIRECT},
        {V1("{\"egress\":{\"default\":\"allow\"}}"), MXC_NETM_DIRECT},
        {V08("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"192.0.2.0/24\"}]}]}}"), MXC_NETM_DIRECT},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"runtimeConfig\":{\"networkProxy\":"
         "\"http://127.0.0.1:3128\"}}", MXC_NETM_PROXY},
    };
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
        mxc_net_policy np;
        mxc_error e = {0};
        CHECK_MSG(build(M[i].json, &np, &e) == 0, "%s: %s", M[i].json, e.message);
        CHECK_MSG(np.model == M[i].want, "%s -> %d, want %d", M[i].json, np.model, M[i].want);
        CHECK((np.ruleset != NULL) == (np.model == MXC_NETM_DIRECT || np.model == MXC_NETM_PROXY));
        mxc_net_policy_free(&np);
        mxc_error_clear(&e);
    }
}

static void test_lowering_order(void)
{
    mxc_net_policy np;
    mxc_error e = {0};
    CHECK(build(V1("{\"egress\":{\"default\":\"deny\",\"allow\":[{\"to\":[{\"cidr\":\"198.51.100.0/24\",\"except\":"
                   "[\"198.51.100.9/32\"]}],\"ports\":[{\"protocol\":\"tcp\",\"port\":80,\"endPort\":90}]}],"
                   "\"deny\":[{\"to\":[{\"cidr\":\"198.51.100.66/32\"}]}]}}"),
                &np, &e) == 0);
    const char *s = np.ruleset;
    const char *gw = strstr(s, "ip daddr 10.0.2.2 reject"), *deny = strstr(s, "198.51.100.66/32 reject"),
               *allow = strstr(s, "ip daddr 198.51.100.0/24 ip daddr != { 198.51.100.9/32 } meta l4proto tcp th dport "
                                  "80-90 accept"),
               *dflt = strstr(s, "    reject\n  }\n}\n");
    CHECK_MSG(gw && deny && allow && dflt && gw < deny && deny < allow && allow < dflt, "%s", s);
    CHECK(strstr(s, "meta nfproto ipv6 reject") != NULL);
    mxc_net_policy_free(&np);
    /* this host (issue 27): its set; loopback ahead of every rule; the
     * reject after the denies and the allows of exactly one address, before
     * every broader allow and the default */
    CHECK(build(V1("{\"egress\":{\"default\":\"allow\",\"allow\":[{\"to\":[{\"cidr\":\"0.0.0.0/0\"},"
                   "{\"cidr\":\"192.0.2.77/32\"}],\"ports\":[{\"protocol\":\"tcp\",\"port\":80}]},"
                   "{\"ports\":[{\"protocol\":\"udp\",\"port\":53}]}],"
                   "\"deny\":[{\"to\":[{\"cidr\":\"192.0.2.77/32\"}],\"ports\":[{\"protocol\":\"tcp\",\"port\":81}]}]}}"),
                &np, &e) == 0);
    s = np.ruleset;
    const char *set = strstr(s, "  set thishost {\n    type ipv4_addr\n    flags interval\n  }\n"),
               *lo = strstr(s, "ip daddr { 0.0.0.0/8, 127.0.0.0/8 } reject"),
               *d81 = strstr(s, "192.0.2.77/32 meta l4proto tcp th dport 81 reject"),
               *named = strstr(s, "192.0.2.77/32 meta l4proto tcp th dport 80 accept"),
               *self = strstr(s, "    ip daddr @thishost reject\n"),
               *wide = strstr(s, "0.0.0.0/0 meta l4proto tcp th dport 80 accept"),
               *any53 = strstr(s, "meta nfproto ipv4 meta l4proto udp th dport 53 accept"),
               *last = strstr(s, "    accept\n  }\n}\n");
    CHECK_MSG(set && lo && d81 && named && self && wide && any53 && last && lo < d81 && d81 < named &&
                  named < self && self < wide && self < any53 && wide < last && any53 < last,
              "%s", s);
    mxc_net_policy_free(&np);
    /* the legacy allow: the set's reject too, ahead of its local ranges */
    CHECK(build("{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"allow\"}}", &np, &e) == 0);
    CHECK_MSG(strstr(np.ruleset, "set thishost") && strstr(np.ruleset, "ip daddr @thishost reject") &&
                  strstr(np.ruleset, "ip daddr @thishost reject") < strstr(np.ruleset, "ip daddr 10.0.0.0/8 reject"),
              "%s", np.ruleset);
    mxc_net_policy_free(&np);
    /* hostLoopback allow outside all-allow: refused (it would have to hold both ways) */
    CHECK(build(V1("{\"egress\":{\"default\":\"allow\"},\"ingress\":{\"hostLoopback\":\"allow\"}}"), &np, &e) < 0);
    CHECK(strstr(e.message, "hostLoopback") != NULL);
    mxc_error_clear(&e);
    /* model 2: only the proxy port on the gateway */
    CHECK(build("{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"runtimeConfig\":{\"networkProxy\":"
                "\"https://localhost:8443/p\"}}",
                &np, &e) == 0);
    CHECK_STR_EQ(np.proxy_url, "https://10.0.2.2:8443/");
    CHECK(strstr(np.ruleset, "ip daddr 10.0.2.2 tcp dport 8443 accept") != NULL);
    mxc_net_policy_free(&np);
    mxc_error_clear(&e);
    /* the legacy network.proxy: the same endpoint, from url or a localhost port */
    CHECK(build("{\"process\":{\"commandLine\":\"x\"},\"network\":{\"proxy\":{\"localhost\":3128}}}", &np, &e) == 0);
    CHECK(np.model == MXC_NETM_PROXY);
    CHECK_STR_EQ(np.proxy_url, "http://10.0.2.2:3128/");
    mxc_net_policy_free(&np);
    CHECK(build("{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"block\",\"proxy\":{\"url\":"
                "\"HTTPS://localhost:8443\"}}}",
                &np, &e) == 0);
    CHECK_STR_EQ(np.proxy_url, "https://10.0.2.2:8443/");
    mxc_net_policy_free(&np);
}

static void test_refusals(void)
{
    static const struct { const char *json; const char *needle; } R[] = {
        {V1("{\"ingress\":{\"default\":\"allow\"}}"), "network.ingress.default allow"},
        {V1("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"2001:db8::/32\"}]}]}}"), "network.egress.allow[0].to[0].cidr is IPv6"},
        {V08("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"example.com\"}]}]}}"), "network.egress.allow[0].to[0].cidr \"example.com\" is a hostname"},
        {V08("{\"egress\":{\"deny\":[{\"to\":[{\"cidr\":\"10.0.0.1/8\"}]}]}}"), "non-zero host part"},
        {V08("{\"egress\":{\"allow\":[{\"ports\":[{\"protocol\":\"icmp\",\"port\":1}]}]}}"), "protocol='icmp'"},
        {V08("{\"egress\":{\"allow\":[{\"ports\":[{\"port\":9,\"endPort\":8}]}]}}"), "endPort must be greater"},
        {V08("{\"egress\":{\"allow\":[{\"to\":[]}]}}"), "non-empty"},
        {V08("{\"egress\":{\"defaultPolicy\":\"block\"}}"), "unknown field `defaultPolicy`"},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"runtimeConfig\":{\"networkProxy\":"
         "\"http://127.0.0.1\"}}", "port explicitly"},
        {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"runtimeConfig\":{\"networkProxy\":"
         "\"http://[::1]:3128\"}}", "IPv4 only"},
        /* the legacy network.proxy */
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"allow\",\"proxy\":{\"localhost\":1}}}",
         "requires defaultPolicy block"},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"proxy\":{\"builtinTestServer\":true}}}",
         "network.proxy.builtinTestServer"},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"proxy\":{}}}", "exactly one of url or localhost"},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"proxy\":{\"localhost\":0}}}",
         "network.proxy.localhost must be a port"},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"proxy\":{\"url\":\"http://192.0.2.1:3128\"}}}",
         "network.proxy.url must name a proxy on this host's loopback"},
        {"{\"process\":{\"commandLine\":\"x\"},\"network\":{\"proxy\":{\"url\":\"ftp://127.0.0.1:21\"}}}",
         "network.proxy.url must be an http:// or https:// URL"},
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
        mxc_net_policy np;
        mxc_error e = {0};
        CHECK_MSG(build(R[i].json, &np, &e) < 0, "%s accepted", R[i].json);
        CHECK_MSG(e.code == MXC_E_POLICY_VALIDATION && strstr(e.message, R[i].needle), "%s: %s",
                  R[i].json, e.message);
        mxc_error_clear(&e);
    }
}

/* network.credentials: governed egress only; each entry's shape, with its path */
#define CRED_NET(extra, cred)                                                                                      \
    "{\"process\":{\"commandLine\":\"x\"},\"network\":{" extra "\"credentials\":[" cred "]}}"
#define GOOD_CRED "{\"name\":\"gh\",\"revision\":3,\"host\":\"api.example.com\",\"port\":443,\"secretEnv\":\"GH\"}"

static void test_credentials(void)
{
    mxc_net_policy np;
    mxc_error e = {0};
    CHECK(build(CRED_NET("\"allowedHosts\":[\"api.example.com\"],", GOOD_CRED), &np, &e) == 0);
    CHECK(np.model == MXC_NETM_GOVERNED && np.creds && np.ncreds == 1 && !strcmp(np.creds[0].secret_env, "GH"));
    CHECK(np.ncreds == 1 && !strcmp(np.creds[0].name, "gh") && np.creds[0].revision == 3 &&
          !strcmp(np.creds[0].host, "api.example.com") && np.creds[0].port == 443 && !np.creds[0].path_prefix &&
          !np.creds[0].env);
    mxc_net_policy_free(&np);
    static const struct { const char *json, *msg; } BAD[] = {
        {CRED_NET("", GOOD_CRED), "network.credentials needs governed egress"},
        {CRED_NET("\"defaultPolicy\":\"allow\",\"allowedHosts\":[\"a.com\"],", GOOD_CRED),
         "network.credentials needs governed egress"},
        {CRED_NET("\"allowedHosts\":[\"a.com\"],", "{\"name\":\"g h\",\"revision\":1,\"host\":\"a.com\",\"port\":443,"
                  "\"secretEnv\":\"GH\"}"), "network.credentials[0].name"},
        {CRED_NET("\"allowedHosts\":[\"a.com\"],", GOOD_CRED ",{\"name\":\"x\",\"revision\":-1,\"host\":\"a.com\","
                  "\"port\":443,\"secretEnv\":\"GH\"}"), "network.credentials[1].revision"},
        {CRED_NET("\"allowedHosts\":[\"a.com\"],", "{\"name\":\"x\",\"revision\":1,\"host\":\"a.com\",\"port\":0,"
                  "\"secretEnv\":\"GH\"}"), "network.credentials[0].port"},
        {CRED_NET("\"allowedHosts\":[\"a.com\"],", "{\"name\":\"x\",\"revision\":1,\"host\":\"a.com\",\"port\":1,"
                  "\"secretEnv\":\"G-H\"}"), "network.credentials[0].secretEnv"},
        {CRED_NET("\"allowedHosts\":[\"a.com\"],", "{\"name\":\"x\",\"revision\":1,\"host\":\"a.com\",\"port\":1,"
                  "\"secretEnv\":\"GH\",\"secret\":\"inline\"}"), "network.credentials[0].secret is not a known field"},
        {CRED_NET("\"allowedHosts\":[\"a.com\"],", "{\"name\":\"x\",\"revision\":1,\"host\":\"a.com\",\"port\":1,"
                  "\"secretEnv\":\"GH\",\"pathPrefix\":\"repos\"}"), "network.credentials[0].pathPrefix"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        mxc_error_clear(&e);
        CHECK_MSG(build(BAD[i].json, &np, &e) < 0, "%s", BAD[i].json);
        CHECK_MSG(e.code == MXC_E_POLICY_VALIDATION && strstr(e.message, BAD[i].msg), "%s: %s", BAD[i].json, e.message);
        mxc_net_policy_free(&np);
    }
    mxc_error_clear(&e);
}

/* mxc-oci's road (an io.mxc.network annotation: the section alone, mxc_net_section_parse) and the
 * wire's (the same section inside a request) give the same model and rules, and refuse alike. */
static void test_section_alone_is_the_wire_s(void)
{
    static const char *const NETS[] = {
        "{\"defaultPolicy\":\"allow\"}",
        "{\"defaultPolicy\":\"block\",\"allowedHosts\":[\"example.com\"],\"blockedHosts\":[\"x.example.com\"]}",
        "{\"egress\":{\"default\":\"deny\",\"allow\":[{\"to\":[{\"cidr\":\"192.0.2.0/24\"}]}]}}",
        "{\"defaultPolicy\":\"block\",\"proxy\":{\"localhost\":3128}}",
    };
    for (size_t i = 0; i < sizeof NETS / sizeof NETS[0]; i++) {
        char wire[512];
        snprintf(wire, sizeof wire, "{\"version\":\"0.9.0\",\"process\":{\"commandLine\":\"x\"},\"network\":%s}", NETS[i]);
        mxc_net_policy a, b;
        mxc_error e = {0};
        CHECK_MSG(build(wire, &a, &e) == 0, "%s: %s", wire, e.message);
        json_t *n = json_loads(NETS[i], 0, NULL);
        mxc_net_section s;
        CHECK_MSG(mxc_net_section_parse(n, &s, &e) == 0, "%s: %s", NETS[i], e.message);
        CHECK(mxc_net_policy_build(&s, &b, &e) == 0);
        CHECK_INT_EQ(a.model, b.model);
        CHECK((a.ruleset == NULL) == (b.ruleset == NULL));
        CHECK(!a.ruleset || !strcmp(a.ruleset, b.ruleset));
        CHECK((a.hosts == NULL) == (b.hosts == NULL));
        CHECK(!a.hosts || !strcmp(a.hosts, b.hosts));
        mxc_net_section_free(&s);
        json_decref(n);
        mxc_net_policy_free(&a);
        mxc_net_policy_free(&b);
        mxc_error_clear(&e);
    }
    static const struct { const char *net, *want; } BAD[] = {
        {"{\"nosuch\":1}", "unknown field network.nosuch"},
        {"{\"allowedHosts\":\"example.com\"}", "network.allowedHosts must be"},
        {"{\"defaultPolicy\":\"block\",\"allowLocalNetwork\":true}", "rejected on the one-shot surface"},
        {"{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"example.com\"}]}]}}", "is a hostname"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        json_t *n = json_loads(BAD[i].net, 0, NULL);
        mxc_net_section s;
        mxc_error e = {0};
        CHECK_MSG(mxc_net_section_parse(n, &s, &e) < 0, "%s accepted", BAD[i].net);
        CHECK_MSG(strstr(e.message, BAD[i].want) != NULL, "%s: %s", BAD[i].net, e.message);
        json_decref(n);
        mxc_error_clear(&e);
    }
}

/* Before a front installs the network layer (or without one), the engine's own table fails closed: no network is
 * planned (model 3), any other refused; nothing is attached. */
static void test_no_network_layer_fails_closed(void)
{
    mxc_net_ops_set(NULL); /* this binary carries src/net: its constructor installed it at load */
    const mxc_net_ops *none = mxc_net_ops_get();
    mxc_net_section absent = {0}, present = {.present = true, .allow = true};
    mxc_net_policy np;
    mxc_error e = {0};
    CHECK(none->lower(&absent, &np, &e) == 0 && np.model == MXC_NETM_NONE);
    CHECK(none->attach(&np, NULL, 1, &e) == 0 && !none->needs_stack(&np));
    CHECK(none->lower(&present, &np, &e) < 0 && e.code == MXC_E_BACKEND_UNAVAILABLE);
    mxc_error_clear(&e);
    np.model = MXC_NETM_DIRECT;
    CHECK(none->attach(&np, NULL, 1, &e) < 0 && e.code == MXC_E_BACKEND_UNAVAILABLE);
    mxc_error_clear(&e);
    mxc_net_install();
    CHECK(mxc_net_ops_get() != none && mxc_net_ops_get()->lower == mxc_net_policy_build);
}

int main(void)
{
    test_no_network_layer_fails_closed(); /* first: then installs the network layer */
    test_section_alone_is_the_wire_s();
    test_credentials();
    test_models();
    test_lowering_order();
    test_refusals();
    return CHECK_DONE();
}
