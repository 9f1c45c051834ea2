/* test_request_v1.c — contract 1.0's request layer (request_v1.c), pure:
 * the dialect choice by version, the typed schema (paths, null, required,
 * per-version fields and enum values), the semantic checks (CIDRs, ports,
 * the proxy URL, one backend section, the IsolationSession network rule),
 * the codes of absent backends and id prefixes, and the mapping onto the
 * engine's request (network posture, env, timeout, appId, the stored
 * policy). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "policy.h"
#include "request.h"
#include "net.h"

typedef struct {
    const char *json;
    mxc_code want;      /* MXC_E_NONE: parses */
    const char *needle; /* in the message, when refused */
} v1_case;

#define OS(extra) "{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"}" extra "}"
#define NET(n) OS(",\"network\":" n)
#define ALLOW_ALL "{\"egress\":{\"default\":\"allow\"},\"ingress\":{\"default\":\"allow\",\"hostLoopback\":\"allow\"}}"

static const v1_case CASES[] = {
    /* versions */
    {OS(""), MXC_E_NONE, NULL},
    {"{\"version\":\"0.9.0-alpha\",\"process\":{\"commandLine\":\"x\"}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.1.0-alpha\",\"process\":{\"commandLine\":\"x\"}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.1\",\"process\":{\"commandLine\":\"x\"}}", MXC_E_MALFORMED_REQUEST, "Registered versions"},
    {"{\"version\":\"1.2.0\",\"process\":{\"commandLine\":\"x\"}}", MXC_E_MALFORMED_REQUEST, "upgrade"},
    /* structure */
    {"{\"version\":\"1.0.0\"}", MXC_E_MALFORMED_REQUEST, "missing field `process`"},
    {"{\"version\":\"1.0.0\",\"process\":{}}", MXC_E_MALFORMED_REQUEST, "at `process`: missing field `commandLine`"},
    {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"\"}}", MXC_E_MALFORMED_REQUEST, "must not be empty"},
    {OS(",\"bogus\":1"), MXC_E_MALFORMED_REQUEST, "unknown field `bogus`, expected one of `$schema`"},
    {OS(",\"experimental\":{}"), MXC_E_MALFORMED_REQUEST, "unknown field `experimental`"},
    {OS(",\"containment\":null"), MXC_E_MALFORMED_REQUEST, "at `containment`: invalid type: null"},
    {OS(",\"lifecycle\":[]"), MXC_E_MALFORMED_REQUEST, "invalid type: sequence"},
    {OS(",\"_comment\":null"), MXC_E_NONE, NULL},
    {OS(",\"$schema\":5"), MXC_E_MALFORMED_REQUEST, "invalid type: integer"},
    {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\",\"env\":[\"A\",1]}}", MXC_E_MALFORMED_REQUEST,
     "at `process.env[1]`"},
    {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\",\"timeout\":-1}}", MXC_E_MALFORMED_REQUEST, "expected u32"},
    {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\",\"timeout\":4294967295}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\",\"timeout\":4294967296}}", MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\",\"timeout\":1.0}}", MXC_E_MALFORMED_REQUEST,
     "floating point"},
    {OS(",\"ui\":{\"clipboard\":\"some\"}"), MXC_E_MALFORMED_REQUEST, "unknown variant `some`"},
    /* empty filesystem paths and empty rule lists: the schema layer, as upstream */
    {OS(",\"filesystem\":{\"readonlyPaths\":[\"\"]}"), MXC_E_MALFORMED_REQUEST, "Filesystem path is empty"},
    {OS(",\"filesystem\":{\"deniedPaths\":[\"/tmp\",\" \"]}"), MXC_E_MALFORMED_REQUEST, "Filesystem path is empty"},
    {NET("{\"egress\":{\"default\":\"deny\",\"allow\":[{\"to\":[]}]}}"), MXC_E_MALFORMED_REQUEST,
     "at `network.egress.allow[0].to`: array must not be empty"},
    {NET("{\"egress\":{\"default\":\"allow\",\"deny\":[{\"ports\":[]}]}}"), MXC_E_MALFORMED_REQUEST,
     "at `network.egress.deny[0].ports`: array must not be empty"},
    /* per-version fields and values */
    {OS(",\"containment\":\"appcontainer\""), MXC_E_MALFORMED_REQUEST, "unknown variant `appcontainer`"},
    {"{\"version\":\"0.9.0-alpha\",\"containment\":\"appcontainer\",\"process\":{\"commandLine\":\"x\"}}",
     MXC_E_UNSUPPORTED_CONTAINMENT, "not available on Linux"},
    {OS(",\"containment\":\"hyperlight\""), MXC_E_MALFORMED_REQUEST, "unknown variant"},
    {"{\"version\":\"1.1.0-alpha\",\"containment\":\"hyperlight\",\"process\":{\"commandLine\":\"x\"}}",
     MXC_E_BACKEND_UNAVAILABLE, "experimental"},
    {"{\"version\":\"1.1.0-alpha\",\"containment\":\"vm\",\"process\":{\"commandLine\":\"x\"}}",
     MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {OS(",\"test\":{}"), MXC_E_MALFORMED_REQUEST, "unknown field `test`"},
    {"{\"version\":\"1.1.0-alpha\",\"test\":{\"message\":\"m\"},\"process\":{\"commandLine\":\"x\"}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"containment\":\"processcontainer\",\"processContainer\":{\"ui\":{\"systemSettings\":\"x\"}},"
     "\"process\":{\"commandLine\":\"x\"}}", MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {"{\"version\":\"1.1.0-alpha\",\"containment\":\"processcontainer\",\"processContainer\":{\"ui\":{\"systemSettings\":\"x\"}},"
     "\"process\":{\"commandLine\":\"x\"}}", MXC_E_MALFORMED_REQUEST, "unknown variant `x`"},
    /* backend sections */
    {OS(",\"lxc\":{\"distribution\":\"a\",\"release\":\"b\"}"), MXC_E_MALFORMED_REQUEST, "Multiple containment backends"},
    {OS(",\"containment\":\"lxc\",\"lxc\":{\"distribution\":\"a\"}"), MXC_E_MALFORMED_REQUEST, "missing field `release`"},
    {OS(",\"containment\":\"lxc\",\"lxc\":{\"distribution\":\"a\",\"release\":\"b\"}"), MXC_E_UNSUPPORTED_CONTAINMENT, "lxc"},
    {"{\"version\":\"0.9.0-alpha\",\"containment\":\"processcontainer\",\"processContainer\":{},\"appContainer\":{},"
     "\"process\":{\"commandLine\":\"x\"}}", MXC_E_MALFORMED_REQUEST, "alias"},
    /* network semantics */
    {NET("{}"), MXC_E_NONE, NULL},
    {NET("{\"egress\":{\"default\":\"deny\",\"allow\":[{\"to\":[{\"cidr\":\"10.0.0.0/8\",\"except\":[\"10.1.0.0/16\"]}],"
         "\"ports\":[{\"protocol\":\"tcp\",\"port\":80,\"endPort\":90}]}]}}"), MXC_E_NONE, NULL},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"10.0.0.1/8\"}]}]}}"), MXC_E_MALFORMED_REQUEST, "host part"},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"10.0.0.0/33\"}]}]}}"), MXC_E_MALFORMED_REQUEST, "too long"},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"2001:db8::/129\"}]}]}}"), MXC_E_MALFORMED_REQUEST, "too long"},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"2001:db8::/32\"}]}]}}"), MXC_E_NONE, NULL},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"10.0.0.0/8x\"}]}]}}"), MXC_E_MALFORMED_REQUEST, "length"},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"010.0.0.0/8\"}]}]}}"), MXC_E_MALFORMED_REQUEST, "address"},
    {NET("{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"10.0.0.0/\"}]}]}}"), MXC_E_MALFORMED_REQUEST, "length"},
    {NET("{\"egress\":{\"deny\":[{\"to\":[{\"cidr\":\"10.0.0.0/8\",\"except\":[\"x\"]}]}]}}"), MXC_E_MALFORMED_REQUEST,
     "deny[0].to[0].except[0]"},
    {NET("{\"egress\":{\"allow\":[{\"ports\":[{\"protocol\":\"icmp\",\"endPort\":2}]}]}}"), MXC_E_MALFORMED_REQUEST, "icmp"},
    {NET("{\"egress\":{\"allow\":[{\"ports\":[{\"endPort\":2}]}]}}"), MXC_E_MALFORMED_REQUEST, "endPort requires port"},
    {NET("{\"egress\":{\"allow\":[{\"ports\":[{\"port\":9,\"endPort\":2}]}]}}"), MXC_E_MALFORMED_REQUEST, "greater than"},
    {NET("{\"egress\":{\"allow\":[{\"ports\":[{\"port\":0}]}]}}"), MXC_E_MALFORMED_REQUEST, "integer `0`"},
    {NET("{\"allowOutbound\":true}"), MXC_E_MALFORMED_REQUEST, "unknown field `allowOutbound`"},
    /* runtimeConfig.networkProxy */
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"http://127.0.0.1:3128\"}"), MXC_E_NONE, NULL},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"HTTPS://localhost\"}"), MXC_E_NONE, NULL},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"http://[::1]:8080/\"}"), MXC_E_NONE, NULL},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"http://user@127.0.0.1:1\"}"), MXC_E_NONE, NULL},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"socks5://127.0.0.1:1\"}"), MXC_E_MALFORMED_REQUEST, "got 'socks5'"},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"http://127.0.0.10:1\"}"), MXC_E_MALFORMED_REQUEST, "localhost"},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"127.0.0.1:3128\"}"), MXC_E_MALFORMED_REQUEST, "invalid"},
    {OS(",\"runtimeConfig\":{\"networkProxy\":\"http://127.0.0.1:1\"},\"network\":{\"egress\":{\"default\":\"allow\"}}"),
     MXC_E_MALFORMED_REQUEST, "requires network.egress.default='deny'"},
    /* the IsolationSession rule, one-shot and provision */
    {OS(",\"containment\":\"isolation_session\""), MXC_E_MALFORMED_REQUEST, "IsolationSession requires"},
    {OS(",\"containment\":\"isolation_session\",\"network\":" ALLOW_ALL), MXC_E_NONE, NULL},
    {OS(",\"containment\":\"isolation_session\",\"network\":{\"egress\":{\"default\":\"deny\"}}"), MXC_E_MALFORMED_REQUEST,
     "IsolationSession requires"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\"}", MXC_E_MALFORMED_REQUEST,
     "missing field `network`"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",\"network\":" ALLOW_ALL "}",
     MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",\"network\":{\"egress\":"
     "{\"default\":\"deny\"}},\"filesystem\":{\"readonlyPaths\":[\"/usr\"]}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",\"network\":{\"ingress\":"
     "{\"default\":\"allow\"}}}", MXC_E_MALFORMED_REQUEST, "IsolationSession requires"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",\"network\":" ALLOW_ALL
     ",\"ui\":{}}", MXC_E_MALFORMED_REQUEST, "unknown field `ui`"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",\"network\":" ALLOW_ALL
     ",\"isolationSession\":{\"start\":{}}}", MXC_E_MALFORMED_REQUEST, "unknown field `start`"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"wslc\",\"wslc\":{\"provision\":{\"image\":\"a\"}}}",
     MXC_E_BACKEND_UNAVAILABLE, "WSLc"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"process\"}", MXC_E_MALFORMED_REQUEST,
     "Unsupported containment for provision"},
    {"{\"version\":\"1.0.0\",\"phase\":\"provision\"}", MXC_E_MALFORMED_REQUEST, "missing field `containment`"},
    {"{\"version\":\"1.1.0-alpha\",\"phase\":\"provision\",\"containment\":\"windows_sandbox\"}", MXC_E_BACKEND_UNAVAILABLE,
     "experimental"},
    /* the other phases */
    {"{\"version\":\"1.0.0\",\"phase\":\"start\",\"sandboxId\":\"iso:x\"}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"start\",\"sandboxId\":\"iso:x\",\"telemetry\":{\"enabled\":true}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"start\"}", MXC_E_MALFORMED_REQUEST, "missing field `sandboxId`"},
    {"{\"version\":\"1.0.0\",\"phase\":\"stop\",\"sandboxId\":\"iso:x\",\"process\":{\"commandLine\":\"x\"}}",
     MXC_E_MALFORMED_REQUEST, "unknown field `process`"},
    {"{\"version\":\"1.0.0\",\"phase\":\"deprovision\",\"sandboxId\":\"abc\"}", MXC_E_MALFORMED_ID, "<prefix>"},
    {"{\"version\":\"1.0.0\",\"phase\":\"deprovision\",\"sandboxId\":\":abc\"}", MXC_E_MALFORMED_ID, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"deprovision\",\"sandboxId\":\"zzz:abc\"}", MXC_E_UNSUPPORTED_CONTAINMENT, "zzz"},
    {"{\"version\":\"1.0.0\",\"phase\":\"deprovision\",\"sandboxId\":\"wslc:abc\"}", MXC_E_BACKEND_UNAVAILABLE, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"exec\",\"sandboxId\":\"iso:x\"}", MXC_E_MALFORMED_REQUEST, "missing field `process`"},
    {"{\"version\":\"1.0.0\",\"phase\":\"exec\",\"sandboxId\":\"iso:x\",\"process\":{\"commandLine\":\"x\"},"
     "\"network\":{},\"runtimeConfig\":{}}", MXC_E_NONE, NULL},
    {"{\"version\":\"1.0.0\",\"phase\":\"run\",\"sandboxId\":\"iso:x\"}", MXC_E_MALFORMED_REQUEST, "Unsupported phase"},
    {"{\"version\":\"1.0.0\",\"phase\":1,\"sandboxId\":\"iso:x\"}", MXC_E_MALFORMED_REQUEST, "invalid type"},
    {NULL, MXC_E_NONE, NULL},
};

static void test_cases(void)
{
    for (size_t i = 0; CASES[i].json; i++) {
        mxc_request r;
        mxc_error e = {0};
        int rc = mxc_request_parse(CASES[i].json, strlen(CASES[i].json), &r, &e);
        mxc_code got = rc == 0 ? MXC_E_NONE : e.code;
        CHECK_MSG(got == CASES[i].want, "[%zu] %s: got %s (%s), want %s", i, CASES[i].json, mxc_code_name(got), e.message,
                  mxc_code_name(CASES[i].want));
        if (rc == 0)
            CHECK_MSG(r.dialect == MXC_DIALECT_V1, "[%zu] not the 1.0 dialect", i);
        if (rc < 0 && CASES[i].needle)
            CHECK_MSG(strstr(e.message, CASES[i].needle) != NULL, "[%zu] %s: \"%s\" lacks \"%s\"", i, CASES[i].json,
                      e.message, CASES[i].needle);
        mxc_request_free(&r);
        mxc_error_clear(&e);
    }
}

static void test_legacy_still_legacy(void)
{
    static const char *const LEGACY[] = {
        "{\"process\":{\"commandLine\":\"x\"}}",
        "{\"version\":\"0.8.0\",\"process\":{\"commandLine\":\"x\"}}",
        "{\"version\":\"0.9.1-alpha\",\"process\":{\"commandLine\":\"x\"}}",
        "{\"version\":\"0.9.0\",\"process\":{\"commandLine\":\"x\"},\"experimental\":{}}",
    };
    for (size_t i = 0; i < sizeof LEGACY / sizeof LEGACY[0]; i++) {
        mxc_request r;
        mxc_error e = {0};
        CHECK_MSG(mxc_request_parse(LEGACY[i], strlen(LEGACY[i]), &r, &e) == 0, "%s: %s", LEGACY[i], e.message);
        CHECK(r.dialect == MXC_DIALECT_LEGACY);
        mxc_request_free(&r);
    }
}

static void test_experimental_option(void)
{
    const char *j = "{\"version\":\"1.1.0-alpha\",\"containment\":\"microvm\",\"process\":{\"commandLine\":\"x\"}}";
    mxc_request r;
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_request_parse_opts(j, strlen(j), MXC_PARSE_EXPERIMENTAL, &r, &e), -1);
    CHECK_INT_EQ(e.code, MXC_E_UNSUPPORTED_CONTAINMENT);
    mxc_request_free(&r);
    mxc_error_clear(&e);
}

static mxc_request parse_ok(const char *j)
{
    mxc_request r;
    mxc_error e = {0};
    CHECK_MSG(mxc_request_parse(j, strlen(j), &r, &e) == 0, "%s: %s", j, e.message);
    mxc_error_clear(&e);
    return r;
}

static void test_mapping(void)
{
    mxc_request r = parse_ok("{\"version\":\"1.0.0\",\"containment\":\"bubblewrap\",\"containerId\":\"c\","
                             "\"process\":{\"commandLine\":\"echo\",\"cwd\":\"/tmp\",\"env\":[\"A=1\"],"
                             "\"inheritDefaultEnv\":true,\"timeout\":5},\"telemetry\":{\"enabled\":false},"
                             "\"filesystem\":{\"readonlyPaths\":[\"/usr\"],\"deniedPaths\":[\"/etc/shadow\"]}}");
    CHECK(r.containment == MXC_CONT_PROCESS && r.phase == MXC_PHASE_NONE);
    CHECK_STR_EQ(r.command_line, "echo");
    CHECK_STR_EQ(r.cwd, "/tmp");
    CHECK(r.env_given && r.inherit_default_env && r.env.n == 1 && r.timeout_ms == 5);
    CHECK(r.has_telemetry && r.has_container_id && r.ro.n == 1 && r.denied.n == 1);
    CHECK(!r.has_network && r.net_v1 == MXC_NET_V1_BLOCK);
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_policy_validate(&r, &e), 0);
    mxc_request_free(&r);

    /* rules and partial allows are model 1 (src/net lowers them); ingress.default allow is refused */
    static const struct { const char *net; mxc_net_v1 want; bool refused; } P[] = {
        {"{}", MXC_NET_V1_BLOCK, false},
        {"{\"egress\":{}}", MXC_NET_V1_BLOCK, false},
        {"{\"egress\":{\"default\":\"deny\",\"allow\":[]}}", MXC_NET_V1_BLOCK, false},
        {"{\"ingress\":{\"default\":\"deny\",\"hostLoopback\":\"deny\"}}", MXC_NET_V1_BLOCK, false},
        {ALLOW_ALL, MXC_NET_V1_ALLOW_ALL, false},
        {"{\"egress\":{\"default\":\"allow\"}}", MXC_NET_V1_RULES, false},
        {"{\"egress\":{\"default\":\"allow\"},\"ingress\":{\"default\":\"allow\"}}", MXC_NET_V1_RULES, true},
        {"{\"egress\":{\"allow\":[{}]}}", MXC_NET_V1_RULES, false},
        {"{\"ingress\":{\"hostLoopback\":\"allow\"}}", MXC_NET_V1_RULES, true}, /* both ways or not at all */
        {"{\"egress\":{\"allow\":[{\"to\":[{\"cidr\":\"2001:db8::/32\"}]}]}}", MXC_NET_V1_RULES, true},
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        char j[512];
        snprintf(j, sizeof j, "{\"version\":\"1.0.0\",\"process\":{\"commandLine\":\"x\"},\"network\":%s}", P[i].net);
        r = parse_ok(j);
        CHECK_MSG(r.net_v1 == P[i].want, "%s -> %d, want %d", P[i].net, r.net_v1, P[i].want);
        CHECK(r.net_v1 != MXC_NET_V1_RULES || r.net_v1_what);
        int rc = mxc_policy_validate(&r, &e);
        CHECK_MSG((rc < 0) == P[i].refused, "%s: policy %d (%s)", P[i].net, rc, e.message);
        if (rc < 0)
            CHECK_INT_EQ(e.code, MXC_E_BACKEND_ERROR);
        mxc_error_clear(&e);
        mxc_request_free(&r);
    }

    /* the stored policy is in the engine's (legacy) shape */
    r = parse_ok("{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\",\"network\":" ALLOW_ALL
                 ",\"isolationSession\":{\"provision\":{\"appId\":\"\"}}}");
    CHECK(r.has_app_id && r.app_id && r.app_id_len == 0);
    json_t *pol = mxc_request_policy_json(&r);
    char *text = json_dumps(pol, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK_STR_EQ(text, "{\"network\":{\"allowLocalNetwork\":true,\"defaultPolicy\":\"allow\"}}");
    free(text);
    json_decref(pol);
    mxc_request_free(&r);
    r = parse_ok("{\"version\":\"1.0.0\",\"phase\":\"provision\",\"containment\":\"isolation_session\","
                 "\"network\":{\"egress\":{\"default\":\"deny\"}},\"filesystem\":{\"readonlyPaths\":[\"/usr\"]}}");
    pol = mxc_request_policy_json(&r);
    text = json_dumps(pol, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK_STR_EQ(text, "{\"filesystem\":{\"readonlyPaths\":[\"/usr\"]},\"network\":{\"defaultPolicy\":\"block\"}}");
    free(text);
    json_decref(pol);
    /* ... which the legacy parser reads back as the same posture */
    mxc_request back;
    pol = mxc_request_policy_json(&r);
    json_object_set_new(pol, "phase", json_string("provision"));
    json_object_set_new(pol, "containment", json_string("isolation_session"));
    text = json_dumps(pol, JSON_COMPACT);
    CHECK_INT_EQ(mxc_request_parse(text, strlen(text), &back, &e), 0);
    CHECK(back.has_network && !back.net_allow && back.ro.n == 1);
    mxc_request_free(&back);
    free(text);
    json_decref(pol);
    mxc_request_free(&r);
}

int main(void)
{
    mxc_net_install(); /* the network layer under the engine, as a front does (src/net/iface/net.h) */
    test_cases();
    test_legacy_still_legacy();
    test_experimental_option();
    test_mapping();
    return CHECK_DONE();
}
