/* test_request.c — the request parser: JSON bounds, exact types, unknown
 * keys with their JSON path, the version gate, mode rules and containment. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "request.h"
#include "sandbox_id.h"

static char ID[256]; /* a valid iso: id, substituted for @ID@ */

static char *subst_id(const char *json)
{
    size_t n = strlen(json) + 1;
    for (const char *p = json; (p = strstr(p, "@ID@")); p += 4)
        n += strlen(ID);
    char *out = malloc(n), *o = out;
    for (const char *p = json; *p;) {
        if (strncmp(p, "@ID@", 4) == 0) {
            o = stpcpy(o, ID);
            p += 4;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* Parses buf[0..len); returns the code (NONE on success), message copied. */
static mxc_code parse_len(const char *buf, size_t len, char *msg, size_t msgsz)
{
    mxc_request r;
    mxc_error e = {0};
    int rc = mxc_request_parse(buf, len, &r, &e);
    mxc_code c = rc == 0 ? MXC_E_NONE : e.code;
    if (rc != 0) {
        CHECK_MSG(e.message[0] != '\0', "empty message for %.80s", buf);
        CHECK_MSG(e.operation[0] == '\0' && e.native == 0, "parse rejection with an OS operation: %s", e.message);
    }
    if (msg)
        snprintf(msg, msgsz, "%s", rc == 0 ? "" : e.message);
    mxc_request_free(&r);
    mxc_error_clear(&e);
    return c;
}

static mxc_code parse(const char *json, char *msg, size_t msgsz)
{
    char *j = subst_id(json);
    mxc_code c = parse_len(j, strlen(j), msg, msgsz);
    free(j);
    return c;
}

typedef struct {
    const char *json;
    mxc_code want;
    const char *msg_has; /* NULL: don't care */
} req_case;

#define OS(top) "{\"process\":{\"commandLine\":\"true\"}" top "}"
#define OSP(proc) "{\"process\":{\"commandLine\":\"true\"" proc "}}"
#define EXEC "\"phase\":\"exec\",\"sandboxId\":\"@ID@\",\"process\":{\"commandLine\":\"true\"}"

static const req_case MALFORMED[] = {
    /* unknown keys, named by JSON path */
    {"{\"process\":{\"commandLine\":\"true\"},\"foo\":1}", MXC_E_MALFORMED_REQUEST, "foo"},
    {"{\"process\":{\"commandLine\":\"true\",\"foo\":1}}", MXC_E_MALFORMED_REQUEST, "process.foo"},
    {OS(",\"filesystem\":{\"readPaths\":[]}"), MXC_E_MALFORMED_REQUEST, "filesystem.readPaths"},
    {OS(",\"network\":{\"defaultpolicy\":\"allow\"}"), MXC_E_MALFORMED_REQUEST, "network.defaultpolicy"},
    {OS(",\"ui\":{\"display\":true}"), MXC_E_MALFORMED_REQUEST, "ui.display"},
    {OS(",\"lifecycle\":{\"keep\":true}"), MXC_E_MALFORMED_REQUEST, "lifecycle.keep"},
    {OS(",\"fallback\":{\"x\":true}"), MXC_E_MALFORMED_REQUEST, "fallback.x"},
    {OS(",\"Process\":{}"), MXC_E_MALFORMED_REQUEST, "Process"},
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\",\"sandboxID\":\"x\"}", MXC_E_MALFORMED_REQUEST, "sandboxID"},
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\",\"policy\":{}}", MXC_E_MALFORMED_REQUEST, "policy"},
    /* wrong types, named by path */
    {"{\"process\":{\"commandLine\":5}}", MXC_E_MALFORMED_REQUEST, "process.commandLine"},
    {"{\"process\":{\"commandLine\":[\"true\"]}}", MXC_E_MALFORMED_REQUEST, "process.commandLine"},
    {"{\"process\":{\"commandLine\":null}}", MXC_E_MALFORMED_REQUEST, "process.commandLine"},
    {OSP(",\"cwd\":1"), MXC_E_MALFORMED_REQUEST, "process.cwd"},
    {OSP(",\"env\":\"A=B\""), MXC_E_MALFORMED_REQUEST, "process.env"},
    {OSP(",\"env\":[1]"), MXC_E_MALFORMED_REQUEST, "process.env"},
    {OSP(",\"env\":{\"A\":\"B\"}"), MXC_E_MALFORMED_REQUEST, "process.env"},
    {OSP(",\"timeout\":\"5\""), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":-1"), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":1.5"), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":1.0"), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":true"), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":null"), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":4294967296"), MXC_E_MALFORMED_REQUEST, "process.timeout"},
    {OSP(",\"timeout\":1e400"), MXC_E_MALFORMED_REQUEST, NULL},
    {OSP(",\"timeout\":18446744073709551616"), MXC_E_MALFORMED_REQUEST, NULL},
    {OSP(",\"timeout\":9223372036854775808"), MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":[]}", MXC_E_MALFORMED_REQUEST, "process"},
    {"{\"process\":\"true\"}", MXC_E_MALFORMED_REQUEST, "process"},
    {OS(",\"filesystem\":{\"readonlyPaths\":\"/usr\"}"), MXC_E_MALFORMED_REQUEST, "filesystem.readonlyPaths"},
    {OS(",\"filesystem\":{\"deniedPaths\":[null]}"), MXC_E_MALFORMED_REQUEST, "filesystem.deniedPaths"},
    {OS(",\"filesystem\":[]"), MXC_E_MALFORMED_REQUEST, "filesystem"},
    {OS(",\"network\":{\"allowLocalNetwork\":\"yes\"}"), MXC_E_MALFORMED_REQUEST, "network.allowLocalNetwork"},
    {OS(",\"network\":{\"defaultPolicy\":false}"), MXC_E_MALFORMED_REQUEST, "network.defaultPolicy"},
    {OS(",\"network\":{\"allowedHosts\":\"a.com\"}"), MXC_E_MALFORMED_REQUEST, "network.allowedHosts"},
    {OS(",\"network\":{\"enforcementMode\":\"strict\"}"), MXC_E_MALFORMED_REQUEST, "enforcementMode"},
    {OS(",\"ui\":{\"disable\":1}"), MXC_E_MALFORMED_REQUEST, "ui.disable"},
    {OS(",\"ui\":{\"clipboard\":\"everything\"}"), MXC_E_MALFORMED_REQUEST, "ui.clipboard"},
    {OS(",\"lifecycle\":{\"destroyOnExit\":\"true\"}"), MXC_E_MALFORMED_REQUEST, "lifecycle.destroyOnExit"},
    {OS(",\"fallback\":{\"allowDaclMutation\":0}"), MXC_E_MALFORMED_REQUEST, "fallback.allowDaclMutation"},
    {OS(",\"experimental\":[]"), MXC_E_MALFORMED_REQUEST, "experimental"},
    {OS(",\"experimental\":null"), MXC_E_MALFORMED_REQUEST, "experimental"},
    {OS(",\"runtimeConfig\":1"), MXC_E_MALFORMED_REQUEST, "runtimeConfig"},
    {OS(",\"lxc\":true"), MXC_E_MALFORMED_REQUEST, "lxc"},
    {OS(",\"containerId\":7"), MXC_E_MALFORMED_REQUEST, "containerId"},
    {OS(",\"version\":0.8"), MXC_E_MALFORMED_REQUEST, "version"},
    {OS(",\"$schema\":1"), MXC_E_MALFORMED_REQUEST, "$schema"},
    {OS(",\"containment\":true"), MXC_E_MALFORMED_REQUEST, "containment"},
    {"{\"phase\":1,\"sandboxId\":\"@ID@\"}", MXC_E_MALFORMED_REQUEST, "phase"},
    {"{\"phase\":\"start\",\"sandboxId\":5}", MXC_E_MALFORMED_REQUEST, "sandboxId"},
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\",\"correlationVector\":{}}", MXC_E_MALFORMED_REQUEST,
     "correlationVector"},
    /* NUL, duplicates, trailing garbage, top-level shape */
    {"{\"process\":{\"commandLine\":\"tr\\u0000ue\"}}", MXC_E_MALFORMED_REQUEST, NULL},
    {OSP(",\"env\":[\"A=\\u0000\"]"), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"experimental\":{\"x\\u0000\":1}"), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"_comment\":\"\\u0000\""), MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\"},\"process\":{\"commandLine\":\"false\"}}", MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\",\"commandLine\":\"false\"}}", MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"experimental\":{\"a\":1,\"a\":2}"), MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\"}} x", MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\"}}{}", MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\"}},", MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\"},}", MXC_E_MALFORMED_REQUEST, NULL},
    {"{\"process\":{\"commandLine\":\"true\"}", MXC_E_MALFORMED_REQUEST, NULL},
    {"{'process':{}}", MXC_E_MALFORMED_REQUEST, NULL},
    {"[]", MXC_E_MALFORMED_REQUEST, "object"},
    {"[{\"process\":{\"commandLine\":\"true\"}}]", MXC_E_MALFORMED_REQUEST, "object"},
    {"\"process\"", MXC_E_MALFORMED_REQUEST, NULL},
    {"null", MXC_E_MALFORMED_REQUEST, NULL},
    {"42", MXC_E_MALFORMED_REQUEST, NULL},
    {"", MXC_E_MALFORMED_REQUEST, NULL},
    {"   ", MXC_E_MALFORMED_REQUEST, NULL},
    {"{}", MXC_E_MALFORMED_REQUEST, "commandLine"},
    /* mode rules */
    {"{\"phase\":\"provision\"}", MXC_E_MALFORMED_REQUEST, "containment"},
    {"{\"phase\":\"provision\",\"containment\":\"isolation_session\",\"sandboxId\":\"@ID@\"}", MXC_E_MALFORMED_REQUEST,
     "sandboxId"},
    {"{\"phase\":\"start\"}", MXC_E_MALFORMED_REQUEST, "sandboxId"},
    {"{\"phase\":\"exec\",\"process\":{\"commandLine\":\"true\"}}", MXC_E_MALFORMED_REQUEST, "sandboxId"},
    {"{\"phase\":\"stop\"}", MXC_E_MALFORMED_REQUEST, "sandboxId"},
    {"{\"phase\":\"deprovision\"}", MXC_E_MALFORMED_REQUEST, "sandboxId"},
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\",\"containment\":\"isolation_session\"}", MXC_E_MALFORMED_REQUEST,
     "containment"},
    {"{" EXEC ",\"containment\":\"isolation_session\"}", MXC_E_MALFORMED_REQUEST, "containment"},
    {"{\"phase\":\"stop\",\"sandboxId\":\"@ID@\",\"containment\":\"wslc\"}", MXC_E_MALFORMED_REQUEST, "containment"},
    {"{\"phase\":\"exec\",\"sandboxId\":\"@ID@\"}", MXC_E_MALFORMED_REQUEST, "commandLine"},
    {"{\"phase\":\"exec\",\"sandboxId\":\"@ID@\",\"process\":{}}", MXC_E_MALFORMED_REQUEST, "commandLine"},
    {"{\"phase\":\"exec\",\"sandboxId\":\"@ID@\",\"process\":{\"commandLine\":\"\"}}", MXC_E_MALFORMED_REQUEST,
     "commandLine"},
    {"{\"process\":{}}", MXC_E_MALFORMED_REQUEST, "commandLine"},
    {"{\"process\":{\"commandLine\":\"\"}}", MXC_E_MALFORMED_REQUEST, "commandLine"},
    {"{\"process\":{\"cwd\":\"/tmp\"}}", MXC_E_MALFORMED_REQUEST, "commandLine"},
    {OS(",\"sandboxId\":\"@ID@\""), MXC_E_MALFORMED_REQUEST, "sandboxId"},
    {OS(",\"correlationVector\":\"abc.1\""), MXC_E_MALFORMED_REQUEST, "correlationVector"},
    {"{\"phase\":\"Start\",\"sandboxId\":\"@ID@\"}", MXC_E_MALFORMED_REQUEST, "phase"},
    {"{\"phase\":\"\",\"sandboxId\":\"@ID@\"}", MXC_E_MALFORMED_REQUEST, "phase"},
    {"{\"phase\":\"run\",\"sandboxId\":\"@ID@\"}", MXC_E_MALFORMED_REQUEST, "phase"},
    /* network shape */
    /* network.proxy: an object of url / localhost / builtinTestServer (model 2 or refused: src/net) */
    {OS(",\"network\":{\"proxy\":null}"), MXC_E_MALFORMED_REQUEST, "network.proxy"},
    {OS(",\"network\":{\"proxy\":{\"host\":\"x\"}}"), MXC_E_MALFORMED_REQUEST, "network.proxy.host"},
    {OS(",\"network\":{\"proxy\":{\"url\":5}}"), MXC_E_MALFORMED_REQUEST, "network.proxy.url"},
    {OS(",\"version\":\"0.8.0\",\"network\":{\"egress\":{},\"defaultPolicy\":\"block\"}"), MXC_E_MALFORMED_REQUEST,
     "mixes"},
    {OS(",\"version\":\"0.8.0\",\"network\":{\"ingress\":{},\"allowedHosts\":[]}"), MXC_E_MALFORMED_REQUEST,
     "mixes"},
    {OS(",\"network\":{\"egress\":{}}"), MXC_E_MALFORMED_REQUEST, "0.8"},
    {OS(",\"version\":\"0.7.0\",\"network\":{\"ingress\":{}}"), MXC_E_MALFORMED_REQUEST, "0.8"},
    {OS(",\"version\":\"0.8.0\",\"network\":{\"egress\":[]}"), MXC_E_MALFORMED_REQUEST, "network.egress"},
    /* version gate */
    {OS(",\"version\":\"0.5.0\""), MXC_E_MALFORMED_REQUEST, "0.5.0"},
    {OS(",\"version\":\"0.5.9\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.0.1\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"abc\""), MXC_E_MALFORMED_REQUEST, "abc"},
    {OS(",\"version\":\"0.8\""), MXC_E_MALFORMED_REQUEST, "0.8"},
    {OS(",\"version\":\"0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.0-\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.0+\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.0.1\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.0 \""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\" 0.8.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"v0.8.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"00.8.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.08.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.00\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"-0.8.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.-8.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.8.x\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"0.99999999999.0\""), MXC_E_MALFORMED_REQUEST, NULL},
    {OS(",\"version\":\"1.2.0\""), MXC_E_MALFORMED_REQUEST, "upgrade"},
    {OS(",\"version\":\"1.0.0-rc.1\""), MXC_E_MALFORMED_REQUEST, "upgrade"},
    {OS(",\"version\":\"0.10.0\""), MXC_E_MALFORMED_REQUEST, "upgrade"},
    {OS(",\"version\":\"2.3.4\""), MXC_E_MALFORMED_REQUEST, "upgrade"},
    /* bounded list sizes */
    {NULL, 0, NULL},
};

static const req_case UNSUPPORTED[] = {
    {"{\"phase\":\"provision\",\"containment\":\"wslc\"}", MXC_E_UNSUPPORTED_CONTAINMENT, "wslc"},
    {"{\"phase\":\"provision\",\"containment\":\"process\"}", MXC_E_UNSUPPORTED_CONTAINMENT, "process"},
    {"{\"phase\":\"provision\",\"containment\":\"bubblewrap\"}", MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {"{\"phase\":\"provision\",\"containment\":\"\"}", MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {"{\"phase\":\"provision\",\"containment\":\"Isolation_Session\"}", MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {OS(",\"containment\":\"bubblewrap\""), MXC_E_UNSUPPORTED_CONTAINMENT, "bubblewrap"},
    {OS(",\"containment\":\"lxc\""), MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {OS(",\"containment\":\"processcontainer\""), MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {OS(",\"containment\":\"seatbelt\""), MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {OS(",\"containment\":\"microvm\""), MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {OS(",\"containment\":\"windows_sandbox\""), MXC_E_UNSUPPORTED_CONTAINMENT, NULL},
    {NULL, 0, NULL},
};

static const req_case VALID[] = {
    {"{\"process\":{\"commandLine\":\"true\"}}", MXC_E_NONE, NULL},
    {OS(",\"$schema\":\"https://example.com/mxc.schema.json\""), MXC_E_NONE, NULL},
    {OS(",\"_comment\":\"free text\""), MXC_E_NONE, NULL},
    {OS(",\"_comment\":{\"any\":[1,{\"thing\":null}]}"), MXC_E_NONE, NULL},
    {OS(",\"containment\":\"process\""), MXC_E_NONE, NULL},
    {OS(",\"containment\":\"isolation_session\""), MXC_E_NONE, NULL},
    {OS(",\"containerId\":\"box-1\""), MXC_E_NONE, NULL},
    {OS(",\"experimental\":{}"), MXC_E_NONE, NULL},
    {OS(",\"experimental\":{\"anything\":{\"deep\":[1,2,{\"x\":null}],\"n\":1.5e300},\"b\":true}"), MXC_E_NONE, NULL},
    {OS(",\"runtimeConfig\":{}"), MXC_E_NONE, NULL},
    {OS(",\"lxc\":{\"anything\":1}"), MXC_E_NONE, NULL}, /* shape is the other backend's; policy rejects */
    {OS(",\"appContainer\":{}"), MXC_E_NONE, NULL},
    {OS(",\"macos_sandbox\":{}"), MXC_E_NONE, NULL},
    {"{\"process\":{\"commandLine\":\"true\",\"cwd\":\"/tmp\",\"env\":[\"A=B\",\"NOEQ\",\"C=d=e\"],\"timeout\":0}}",
     MXC_E_NONE, NULL},
    {OSP(",\"timeout\":4294967295"), MXC_E_NONE, NULL},
    {OSP(",\"env\":[]"), MXC_E_NONE, NULL},
    {OS(",\"filesystem\":{}"), MXC_E_NONE, NULL},
    {OS(",\"filesystem\":{\"readwritePaths\":[\"/tmp/x\"],\"readonlyPaths\":[],\"deniedPaths\":[\"/etc\"]}"),
     MXC_E_NONE, NULL},
    {OS(",\"network\":{}"), MXC_E_NONE, NULL},
    {OS(",\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true,\"enforcementMode\":\"both\"}"),
     MXC_E_NONE, NULL},
    {OS(",\"network\":{\"defaultPolicy\":\"block\",\"allowedHosts\":[\"a.com\"],\"blockedHosts\":[\"10.0.0.0/8\"]}"),
     MXC_E_NONE, NULL},
    {OS(",\"ui\":{\"disable\":true,\"clipboard\":\"none\",\"injection\":false}"), MXC_E_NONE, NULL},
    {OS(",\"lifecycle\":{\"destroyOnExit\":true,\"preservePolicy\":false}"), MXC_E_NONE, NULL},
    {OS(",\"fallback\":{\"allowDaclMutation\":true}"), MXC_E_NONE, NULL},
    /* versions */
    {OS(",\"version\":\"0.6.0\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.7.0\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.8.0\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.9.1\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.9.999\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.8.0-beta\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.8.0-beta.2+build.5\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.6.0+meta\""), MXC_E_NONE, NULL},
    {OS(",\"version\":\"0.8.0\",\"network\":{\"egress\":{\"defaultPolicy\":\"block\"},\"ingress\":{}}"), MXC_E_NONE,
     NULL},
    {OS(",\"version\":\"0.9.0\",\"network\":{\"ingress\":{\"x\":1}}"), MXC_E_NONE, NULL},
    /* every phase */
    {"{\"phase\":\"provision\",\"containment\":\"isolation_session\"}", MXC_E_NONE, NULL},
    {"{\"phase\":\"provision\",\"containment\":\"isolation_session\",\"correlationVector\":\"cv.1\","
     "\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"PFN:x\"}}}}",
     MXC_E_NONE, NULL},
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\"}", MXC_E_NONE, NULL},
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\",\"correlationVector\":\"abc.0\"}", MXC_E_NONE, NULL},
    {"{" EXEC "}", MXC_E_NONE, NULL},
    {"{" EXEC ",\"correlationVector\":\"x\",\"$schema\":\"s\",\"_comment\":\"c\"}", MXC_E_NONE, NULL},
    {"{\"phase\":\"stop\",\"sandboxId\":\"@ID@\"}", MXC_E_NONE, NULL},
    {"{\"phase\":\"deprovision\",\"sandboxId\":\"@ID@\"}", MXC_E_NONE, NULL},
    /* the request layer does not decode the id (that's a later layer) */
    {"{\"phase\":\"stop\",\"sandboxId\":\"xyz:whatever\"}", MXC_E_NONE, NULL},
    /* process on non-exec phases is accepted (and ignored) */
    {"{\"phase\":\"start\",\"sandboxId\":\"@ID@\",\"process\":{\"commandLine\":\"x\"}}", MXC_E_NONE, NULL},
    {"{\"phase\":\"stop\",\"sandboxId\":\"@ID@\",\"process\":{\"commandLine\":\"\"}}", MXC_E_NONE, NULL},
    {" \n\t{\"process\":{\"commandLine\":\"true\"}}\n ", MXC_E_NONE, NULL},
    {"{\"process\":{\"commandLine\":\"\\u00e9\\ud83d\\ude00 \\\"q\\\"\"}}", MXC_E_NONE, NULL},
    {NULL, 0, NULL},
};

static void run_table(const char *name, const req_case *t)
{
    for (size_t i = 0; t[i].json; i++) {
        char msg[1024];
        mxc_code c = parse(t[i].json, msg, sizeof msg);
        CHECK_MSG(c == t[i].want, "%s[%zu] %s: got %s (%s), want %s", name, i, t[i].json, mxc_code_name(c), msg,
                  mxc_code_name(t[i].want));
        if (t[i].msg_has && c == t[i].want)
            CHECK_MSG(strstr(msg, t[i].msg_has) != NULL, "%s[%zu] %s: message \"%s\" lacks \"%s\"", name, i,
                      t[i].json, msg, t[i].msg_has);
    }
}

static char *nested(int depth, int total_len_pad)
{
    /* {"process":{"commandLine":"true"},"experimental":{"a":{"a":...{}...}}}
     * root = depth 1, experimental = depth 2, so depth-2 more "a" objects. */
    size_t cap = (size_t)depth * 8 + 128 + (size_t)total_len_pad;
    char *s = malloc(cap), *o = s;
    o = stpcpy(o, "{\"process\":{\"commandLine\":\"true\"},\"experimental\":");
    for (int i = 2; i < depth; i++)
        o = stpcpy(o, "{\"a\":");
    o = stpcpy(o, "{}");
    for (int i = 2; i < depth; i++)
        *o++ = '}';
    *o++ = '}';
    *o = '\0';
    return s;
}

static void test_bounds(void)
{
    char msg[1024];
    char *s = nested(32, 0);
    CHECK_MSG(parse_len(s, strlen(s), msg, sizeof msg) == MXC_E_NONE, "depth 32: %s", msg);
    free(s);
    s = nested(33, 0);
    CHECK_INT_EQ(parse_len(s, strlen(s), msg, sizeof msg), MXC_E_MALFORMED_REQUEST);
    CHECK_CONTAINS(msg, "deep");
    free(s);
    s = nested(100000, 0);
    CHECK_INT_EQ(parse_len(s, strlen(s), msg, sizeof msg), MXC_E_MALFORMED_REQUEST);
    free(s);
    /* arrays count too */
    const char *arr = OS(",\"experimental\":{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}");
    CHECK_INT_EQ(parse_len(arr, strlen(arr), msg, sizeof msg), MXC_E_MALFORMED_REQUEST);
    /* brackets inside strings don't count */
    char str[512];
    snprintf(str, sizeof str, OS(",\"_comment\":\"%s\""),
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
    CHECK_MSG(parse_len(str, strlen(str), msg, sizeof msg) == MXC_E_NONE, "brackets in string: %s", msg);

    /* size: exactly 1 MiB parses, one byte more does not */
    const char *base = "{\"process\":{\"commandLine\":\"true\"}}";
    size_t lim = MXC_REQUEST_MAX_BYTES;
    char *big = malloc(lim + 2);
    memset(big, ' ', lim + 1);
    memcpy(big, base, strlen(base));
    big[lim + 1] = '\0';
    CHECK_INT_EQ(parse_len(big, lim, msg, sizeof msg), MXC_E_NONE);
    CHECK_INT_EQ(parse_len(big, lim + 1, msg, sizeof msg), MXC_E_MALFORMED_REQUEST);
    CHECK_CONTAINS(msg, "limit");
    free(big);

    /* raw bytes: embedded NUL, invalid UTF-8, lone surrogate escape */
    const char nul[] = "{\"process\":{\"commandLine\":\"tr\0ue\"}}";
    CHECK_INT_EQ(parse_len(nul, sizeof nul - 1, msg, sizeof msg), MXC_E_MALFORMED_REQUEST);
    const char trail_nul[] = "{\"process\":{\"commandLine\":\"true\"}}\0";
    CHECK_INT_EQ(parse_len(trail_nul, sizeof trail_nul - 1, msg, sizeof msg), MXC_E_MALFORMED_REQUEST);
    const char *bad_utf8[] = {
        "{\"process\":{\"commandLine\":\"\xff\"}}",
        "{\"process\":{\"commandLine\":\"\xc0\xaf\"}}",
        "{\"process\":{\"commandLine\":\"\xed\xa0\x80\"}}",
        "{\"process\":{\"commandLine\":\"\\ud800\"}}",
        "{\"process\":{\"commandLine\":\"\x01\"}}",
        "\xef\xbb\xbf{\"process\":{\"commandLine\":\"true\"}}",
    };
    for (size_t i = 0; i < sizeof bad_utf8 / sizeof bad_utf8[0]; i++)
        CHECK_MSG(parse_len(bad_utf8[i], strlen(bad_utf8[i]), msg, sizeof msg) == MXC_E_MALFORMED_REQUEST,
                  "bad bytes %zu", i);

    /* list bound: 256 entries ok, 257 not */
    for (int n = 256; n <= 257; n++) {
        size_t cap = (size_t)n * 8 + 128;
        char *l = malloc(cap), *o = l;
        o = stpcpy(o, "{\"process\":{\"commandLine\":\"true\",\"env\":[");
        for (int i = 0; i < n; i++)
            o = stpcpy(o, i ? ",\"A=1\"" : "\"A=1\"");
        stpcpy(o, "]}}");
        mxc_code c = parse_len(l, strlen(l), msg, sizeof msg);
        CHECK_INT_EQ(c, n == 256 ? MXC_E_NONE : MXC_E_MALFORMED_REQUEST);
        if (c)
            CHECK_CONTAINS(msg, "process.env");
        free(l);
    }
}

/* Fields land where policy.c will read them. */
static void test_extraction(void)
{
    char *j = subst_id(
        "{\"phase\":\"exec\",\"sandboxId\":\"@ID@\",\"containerId\":\"c\","
        "\"process\":{\"commandLine\":\"echo hi\",\"cwd\":\"/work\",\"env\":[\"A=1\",\"B=2\"],\"timeout\":1500}}");
    mxc_request r;
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_request_parse(j, strlen(j), &r, &e), 0);
    CHECK_INT_EQ(r.phase, MXC_PHASE_EXEC);
    CHECK_STR_EQ(r.sandbox_id, ID);
    CHECK(!r.has_containment);
    CHECK(r.has_process);
    CHECK_STR_EQ(r.command_line, "echo hi");
    CHECK_STR_EQ(r.cwd, "/work");
    CHECK_INT_EQ(r.env.n, 2);
    if (r.env.n == 2) {
        CHECK_STR_EQ(r.env.v[0], "A=1");
        CHECK_STR_EQ(r.env.v[1], "B=2");
    }
    CHECK_INT_EQ(r.timeout_ms, 1500);
    CHECK(r.has_container_id);
    CHECK(!r.has_network && !r.has_filesystem && !r.has_ui && !r.has_lifecycle);
    mxc_request_free(&r);
    free(j);

    const char *one = "{\"containment\":\"isolation_session\",\"process\":{\"commandLine\":\"x\",\"timeout\":4294967295},"
                      "\"filesystem\":{\"readwritePaths\":[\"/a\"],\"readonlyPaths\":[\"/b\",\"/c\"],\"deniedPaths\":[]},"
                      "\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true,\"enforcementMode\":\"firewall\","
                      "\"allowedHosts\":[\"h\"],\"blockedHosts\":[\"i\",\"j\"]},"
                      "\"ui\":{\"disable\":false,\"clipboard\":\"read\"},"
                      "\"lifecycle\":{\"destroyOnExit\":false},\"fallback\":{},\"runtimeConfig\":{\"k\":1},"
                      "\"seatbelt\":{},\"experimental\":{\"z\":1}}";
    CHECK_INT_EQ(mxc_request_parse(one, strlen(one), &r, &e), 0);
    CHECK_INT_EQ(r.phase, MXC_PHASE_NONE);
    CHECK(r.has_containment);
    CHECK_INT_EQ(r.containment, MXC_CONT_ISOLATION_SESSION);
    CHECK_STR_EQ(r.containment_name, "isolation_session");
    CHECK_INT_EQ(r.timeout_ms, 4294967295u);
    CHECK(r.has_filesystem);
    CHECK_INT_EQ(r.rw.n, 1);
    CHECK_INT_EQ(r.ro.n, 2);
    CHECK_INT_EQ(r.denied.n, 0);
    CHECK(r.has_network && !r.net_directional && r.net_allow && r.net_has_default_policy);
    CHECK(r.net_has_enforcement_mode);
    CHECK_INT_EQ(r.net_allow_local, MXC_TRI_TRUE);
    CHECK_INT_EQ(r.allowed_hosts.n, 1);
    CHECK_INT_EQ(r.blocked_hosts.n, 2);
    CHECK(r.has_ui);
    CHECK_INT_EQ(r.ui_disable, MXC_TRI_FALSE);
    CHECK_INT_EQ(r.ui_injection, MXC_TRI_ABSENT);
    CHECK_STR_EQ(r.ui_clipboard, "read");
    CHECK(r.has_lifecycle);
    CHECK_INT_EQ(r.destroy_on_exit, MXC_TRI_FALSE);
    CHECK_INT_EQ(r.preserve_policy, MXC_TRI_ABSENT);
    CHECK(r.has_fallback);
    CHECK(r.has_runtime_config);
    CHECK_STR_EQ(r.stable_section, "seatbelt");
    CHECK(r.experimental != NULL);
    CHECK(!r.has_app_id);
    mxc_request_free(&r);

    const char *dflt = "{\"process\":{\"commandLine\":\"x\"},\"network\":{\"defaultPolicy\":\"block\"}}";
    CHECK_INT_EQ(mxc_request_parse(dflt, strlen(dflt), &r, &e), 0);
    CHECK(!r.has_containment);
    CHECK_INT_EQ(r.containment, MXC_CONT_PROCESS);
    CHECK(r.has_network && !r.net_allow && r.net_has_default_policy && !r.net_has_enforcement_mode);
    CHECK_INT_EQ(r.net_allow_local, MXC_TRI_ABSENT);
    CHECK_INT_EQ(r.timeout_ms, 0);
    mxc_request_free(&r);

    const char *dir = "{\"version\":\"0.8.0\",\"process\":{\"commandLine\":\"x\"},\"network\":{\"egress\":{}}}";
    CHECK_INT_EQ(mxc_request_parse(dir, strlen(dir), &r, &e), 0);
    CHECK(r.has_network && r.net_directional);
    mxc_request_free(&r);

    /* phase names */
    CHECK_STR_EQ(mxc_phase_name(MXC_PHASE_NONE), "one-shot");
    CHECK_STR_EQ(mxc_phase_name(MXC_PHASE_PROVISION), "provision");
    CHECK_STR_EQ(mxc_phase_name(MXC_PHASE_START), "start");
    CHECK_STR_EQ(mxc_phase_name(MXC_PHASE_EXEC), "exec");
    CHECK_STR_EQ(mxc_phase_name(MXC_PHASE_STOP), "stop");
    CHECK_STR_EQ(mxc_phase_name(MXC_PHASE_DEPROVISION), "deprovision");

    /* a failed parse leaves a request that mxc_request_free handles, twice */
    const char *bad = "{\"process\":{\"commandLine\":\"x\",\"env\":[\"A=1\"]},\"network\":{\"defaultPolicy\":1}}";
    CHECK_INT_EQ(mxc_request_parse(bad, strlen(bad), &r, &e), -1);
    mxc_request_free(&r);
    mxc_request_free(&r);
    mxc_request_free(NULL);
    mxc_error_clear(&e);
}

/* Unsupported containment carries a remediation; parse errors carry none. */
static void test_error_fields(void)
{
    const char *j = "{\"phase\":\"provision\",\"containment\":\"wslc\"}";
    mxc_request r;
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_request_parse(j, strlen(j), &r, &e), -1);
    CHECK_INT_EQ(e.code, MXC_E_UNSUPPORTED_CONTAINMENT);
    CHECK(e.remediation[0] != '\0');
    CHECK_CONTAINS(e.remediation, "isolation_session");
    mxc_request_free(&r);
    char *env = mxc_error_envelope_text(&e);
    CHECK_CONTAINS(env, "\"code\":\"unsupported_containment\"");
    CHECK_CONTAINS(env, "\"remediation\"");
    CHECK(strstr(env, "nativeCode") == NULL);
    free(env);
    mxc_error_clear(&e);

    j = "{\"process\":{\"commandLine\":\"x\"},\"bogus\":1}";
    CHECK_INT_EQ(mxc_request_parse(j, strlen(j), &r, &e), -1);
    CHECK(e.remediation[0] == '\0');
    env = mxc_error_envelope_text(&e);
    CHECK_CONTAINS(env, "{\"error\":{\"code\":\"malformed_request\",\"message\":\"");
    CHECK_CONTAINS(env, "bogus");
    free(env);
    mxc_request_free(&r);
    mxc_error_clear(&e);

    /* all 12 wire codes have their names */
    const char *names[] = {"malformed_request", "unsupported_containment", "unsupported_phase",
                           "backend_unavailable", "malformed_id", "stale_id", "not_provisioned", "not_started",
                           "already_started", "already_stopped", "policy_validation", "backend_error"};
    for (int c = MXC_E_MALFORMED_REQUEST; c < MXC_E__COUNT; c++)
        CHECK_STR_EQ(mxc_code_name((mxc_code)c), names[c - 1]);
}

int main(void)
{
    mxc_sandbox_id id = {0};
    snprintf(id.agent_name, sizeof id.agent_name, "mxc-test1");
    mxc_error e = {0};
    if (mxc_sandbox_id_encode(&id, ID, sizeof ID, &e) < 0) {
        fprintf(stderr, "cannot encode the test id: %s\n", e.message);
        return 1;
    }
    run_table("malformed", MALFORMED);
    run_table("unsupported", UNSUPPORTED);
    run_table("valid", VALID);
    test_bounds();
    test_extraction();
    test_error_fields();
    return CHECK_DONE();
}
