/* test_policy.c — the honor matrix, exercised row by row on every surface:
 * for each MXC_MATRIX row, a request expressing exactly that feature on each
 * of one-shot / provision / start / exec / stop / deprovision must be
 * rejected iff the table says MXC_DISP_REJECTED (one-shot: backend_error;
 * state-aware: policy_validation).  Plus path and structural rules. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "policy.h"
#include "request.h"
#include "sandbox_id.h"
#include "net.h"

static char ID[256];

static const char *const SURF_NAME[MXC_SURF__COUNT] = {"one-shot", "provision", "start", "exec", "stop",
                                                       "deprovision"};

/* A valid minimal request for the surface, as a JSON object; v1: in
 * contract 1.0 (version required, a provision names its network). */
static json_t *base_request(mxc_surface s, bool v1)
{
    if (v1) {
        json_t *r;
        switch (s) {
        case MXC_SURF_ONESHOT: r = json_pack("{s:{s:s}}", "process", "commandLine", "true"); break;
        case MXC_SURF_PROVISION:
            r = json_pack("{s:s,s:s,s:{s:{s:s}}}", "containment", "isolation_session", "phase", "provision", "network",
                          "egress", "default", "deny");
            break;
        case MXC_SURF_EXEC:
            r = json_pack("{s:s,s:s,s:{s:s}}", "phase", "exec", "sandboxId", ID, "process", "commandLine", "true");
            break;
        default: r = json_pack("{s:s,s:s}", "phase", SURF_NAME[s], "sandboxId", ID);
        }
        json_object_set_new(r, "version", json_string("1.0.0"));
        return r;
    }
    switch (s) {
    case MXC_SURF_ONESHOT: return json_pack("{s:{s:s}}", "process", "commandLine", "true");
    case MXC_SURF_PROVISION: return json_pack("{s:s,s:s}", "containment", "isolation_session", "phase", "provision");
    case MXC_SURF_EXEC:
        return json_pack("{s:s,s:s,s:{s:s}}", "phase", "exec", "sandboxId", ID, "process", "commandLine", "true");
    default: return json_pack("{s:s,s:s}", "phase", SURF_NAME[s], "sandboxId", ID);
    }
}

/* Objects merge key by key, recursively; anything else replaces. */
static void merge(json_t *dst, json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach(src, k, v) {
        json_t *d = json_object_get(dst, k);
        if (json_is_object(d) && json_is_object(v))
            merge(d, v);
        else
            json_object_set(dst, k, v);
    }
}

typedef struct {
    mxc_code parse_code;  /* NONE when parsing succeeded */
    mxc_code policy_code; /* NONE when accepted */
    char msg[1024];
    char text[4096];
} outcome;

static void run_in(mxc_surface s, const char *fragment, bool v1, outcome *out)
{
    memset(out, 0, sizeof *out);
    json_t *req = base_request(s, v1);
    json_error_t jerr;
    json_t *frag = json_loads(fragment, JSON_REJECT_DUPLICATES, &jerr);
    if (!frag) {
        fprintf(stderr, "bad fragment in the test: %s: %s\n", fragment, jerr.text);
        abort();
    }
    merge(req, frag);
    json_decref(frag);
    char *text = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(req);
    snprintf(out->text, sizeof out->text, "%s", text);
    mxc_request r;
    mxc_error e = {0};
    if (mxc_request_parse(text, strlen(text), &r, &e) < 0) {
        out->parse_code = e.code;
    } else if (mxc_policy_validate(&r, &e) < 0) {
        out->policy_code = e.code;
        CHECK_MSG(e.message[0] != '\0', "empty policy message for %s", text);
        CHECK_MSG(e.operation[0] == '\0' && e.native == 0, "policy rejection with an OS operation: %s", text);
    }
    snprintf(out->msg, sizeof out->msg, "%s", e.message);
    mxc_request_free(&r);
    mxc_error_clear(&e);
    free(text);
}

static void run(mxc_surface s, const char *fragment, outcome *out)
{
    run_in(s, fragment, false, out);
}

/* ---- one or more fragments per matrix feature ------------------------------ */

typedef struct {
    mxc_feature feature;
    const char *frag;          /* used on every surface unless overridden */
    const char *frag_oneshot;  /* one-shot override, or NULL */
    const char *frag_provision;/* provision override, or NULL */
    bool names_row;            /* a rejection names this row's field (no companion feature rejected first) */
    bool v1;                   /* a contract-1.0 request (base_request's v1 form) */
    bool early_ok;             /* where the table rejects, the request layer may refuse it first (malformed_request):
                                  contract 1.0's schema has no such field on that phase, or a stricter rule */
} variant;

/* Trailing flags left out are false. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const variant VARIANTS[] = {
    {MXC_F_FS_GRANTS, "{\"filesystem\":{\"readwritePaths\":[\"/tmp/x\"],\"readonlyPaths\":[\"/usr\"]}}", NULL, NULL, true},
    {MXC_F_FS_GRANTS, "{\"filesystem\":{\"readonlyPaths\":[\"/usr/lib\"]}}", NULL, NULL, true},
    {MXC_F_FS_GRANTS, "{\"filesystem\":{}}", NULL, NULL, true},
    {MXC_F_FS_DENIED, "{\"filesystem\":{\"deniedPaths\":[\"/etc/shadow\"]}}", NULL, NULL, true},
    {MXC_F_NET_ABSENT, "{}", NULL, NULL, true},
    {MXC_F_NET_BLOCK, "{\"network\":{\"defaultPolicy\":\"block\"}}", NULL, NULL, true},
    {MXC_F_NET_BLOCK, "{\"network\":{}}", NULL, NULL, true},
    {MXC_F_NET_BLOCK, "{\"network\":{\"defaultPolicy\":\"block\",\"allowLocalNetwork\":false}}", NULL, NULL, true},
    {MXC_F_NET_BLOCK_LOCAL, "{\"network\":{\"defaultPolicy\":\"block\",\"allowLocalNetwork\":true}}", NULL, NULL, true},
    {MXC_F_NET_BLOCK_LOCAL, "{\"network\":{\"allowLocalNetwork\":true}}", NULL, NULL, true},
    {MXC_F_NET_HOSTS, "{\"network\":{\"defaultPolicy\":\"block\",\"allowedHosts\":[\"example.com\"]}}", NULL, NULL, true},
    {MXC_F_NET_HOSTS,
     "{\"network\":{\"defaultPolicy\":\"block\",\"allowedHosts\":[\"*.example.com\"],\"blockedHosts\":[\"10.0.0.0/8\"]}}",
     NULL, NULL, true},
    {MXC_F_NET_CREDENTIALS,
     "{\"network\":{\"defaultPolicy\":\"block\",\"allowedHosts\":[\"api.example.com\"],\"credentials\":[{\"name\":"
     "\"gh\",\"revision\":1,\"host\":\"api.example.com\",\"port\":443,\"secretEnv\":\"GH\"}]}}",
     NULL, NULL, false},
    {MXC_F_NET_ALLOW_ACK, "{\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true}}", NULL, NULL, true},
    {MXC_F_NET_ALLOW_NO_LOCAL, "{\"network\":{\"defaultPolicy\":\"allow\"}}", NULL, NULL, true},
    {MXC_F_NET_ALLOW_NO_LOCAL, "{\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":false}}", NULL, NULL, true},
    /* enforcementMode always comes with a network posture; pick ones whose
     * rows have the same rejection pattern (NET_BLOCK, NET_ALLOW_ACK) */
    {MXC_F_NET_ENFORCEMENT_MODE, "{\"network\":{\"enforcementMode\":\"firewall\"}}", NULL, NULL, false},
    {MXC_F_NET_ENFORCEMENT_MODE,
     "{\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true,\"enforcementMode\":\"both\"}}", NULL, NULL, false},
    {MXC_F_NET_ENFORCEMENT_MODE, "{\"network\":{\"defaultPolicy\":\"block\",\"enforcementMode\":\"capabilities\"}}", NULL,
     NULL, false},
    {MXC_F_NET_DIRECTIONAL, "{\"version\":\"0.8.0\",\"network\":{\"egress\":{\"default\":\"deny\"}}}", NULL, NULL, true},
    {MXC_F_NET_DIRECTIONAL, "{\"version\":\"0.9.0\",\"network\":{\"ingress\":{}}}", NULL, NULL, true},
    {MXC_F_UI_LOCKDOWN, "{\"ui\":{\"disable\":true,\"clipboard\":\"none\",\"injection\":false}}", NULL, NULL, true},
    {MXC_F_UI_LOCKDOWN, "{\"ui\":{\"disable\":true}}", NULL, NULL, true},
    {MXC_F_UI_LOCKDOWN, "{\"ui\":{}}", NULL, NULL, true},
    {MXC_F_UI_GRANT, "{\"ui\":{\"disable\":false}}", NULL, NULL, true},
    {MXC_F_UI_GRANT, "{\"ui\":{\"clipboard\":\"read\"}}", NULL, NULL, true},
    {MXC_F_UI_GRANT, "{\"ui\":{\"clipboard\":\"write\"}}", NULL, NULL, true},
    {MXC_F_UI_GRANT, "{\"ui\":{\"clipboard\":\"all\"}}", NULL, NULL, true},
    {MXC_F_UI_GRANT, "{\"ui\":{\"disable\":true,\"injection\":true}}", NULL, NULL, true},
    {MXC_F_LIFECYCLE_SECTION, "{\"lifecycle\":{}}", NULL, NULL, true},
    /* a lifecycle value also expresses the section: on state-aware the
     * section row (first in the table) is what rejects */
    {MXC_F_DESTROY_TRUE, "{\"lifecycle\":{\"destroyOnExit\":true}}", NULL, NULL, false},
    {MXC_F_DESTROY_FALSE, "{\"lifecycle\":{\"destroyOnExit\":false}}", NULL, NULL, false},
    {MXC_F_PRESERVE_FALSE, "{\"lifecycle\":{\"preservePolicy\":false}}", NULL, NULL, false},
    {MXC_F_PRESERVE_TRUE, "{\"lifecycle\":{\"preservePolicy\":true}}", NULL, NULL, false},
    {MXC_F_FALLBACK, "{\"fallback\":{\"allowDaclMutation\":true}}", NULL, NULL, true},
    {MXC_F_FALLBACK, "{\"fallback\":{\"allowDaclMutation\":false}}", NULL, NULL, true},
    {MXC_F_FALLBACK, "{\"fallback\":{}}", NULL, NULL, true},
    {MXC_F_CONTAINER_ID, "{\"containerId\":\"my-box\"}", NULL, NULL, true},
    {MXC_F_PROCESS_COMMAND, "{\"process\":{\"commandLine\":\"echo hi\"}}", NULL, NULL, true},
    {MXC_F_PROCESS_OPTIONS, "{\"process\":{\"cwd\":\"/tmp\",\"env\":[\"A=B\",\"C=d=e\",\"NOEQ\"],\"timeout\":1000}}", NULL,
     NULL, true},
    {MXC_F_PROCESS_OPTIONS, "{\"process\":{\"timeout\":1}}", NULL, NULL, true},
    /* the isolation_session backend's own config: on one-shot it is ours only
     * with containment isolation_session (otherwise it is a foreign section) */
    {MXC_F_APP_ID, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"PFN:Contoso.App_8wekyb3d8bbwe\"}}}}",
     "{\"containment\":\"isolation_session\",\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"x\"}}}}",
     NULL, true},
    {MXC_F_APP_ID, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"\"}}}}",
     "{\"containment\":\"isolation_session\",\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"\"}}}}",
     NULL, true},
    {MXC_F_EXP_OWN_OTHER_PHASE, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"x\"}}}}",
     "{\"containment\":\"isolation_session\",\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"x\"}}}}",
     "{\"experimental\":{\"isolation_session\":{\"start\":{\"whatever\":1}}}}", true},
    {MXC_F_EXP_OWN_OTHER_PHASE, "{\"experimental\":{\"isolation_session\":{\"deprovision\":{}}}}",
     "{\"containment\":\"isolation_session\",\"experimental\":{\"isolation_session\":{\"exec\":{}}}}",
     "{\"experimental\":{\"isolation_session\":{\"exec\":[1,2]}}}", true},
    {MXC_F_STABLE_SECTION, "{\"processContainer\":{}}", NULL, NULL, true},
    {MXC_F_STABLE_SECTION, "{\"appContainer\":{\"x\":1}}", NULL, NULL, true},
    {MXC_F_STABLE_SECTION, "{\"lxc\":{}}", NULL, NULL, true},
    {MXC_F_STABLE_SECTION, "{\"seatbelt\":{}}", NULL, NULL, true},
    {MXC_F_STABLE_SECTION, "{\"macos_sandbox\":{}}", NULL, NULL, true},
    /* contract 1.0's schema refuses a wslc section before the matrix (malformed_request, early_ok) */
    {MXC_F_WSLC_SECTION, "{\"wslc\":{\"image\":\"alpine:latest\"}}", NULL, NULL, true, true, true},
    /* contract 1.0's appId: only where the schema has it (an isolation_session provision) */
    {MXC_F_APP_ID_V1, "{\"isolationSession\":{\"provision\":{\"appId\":\"PFN:Contoso.App_8wekyb3d8bbwe\"}}}", NULL,
     NULL, true, true, true},
    {MXC_F_FOREIGN_EXP_ONE, "{\"experimental\":{\"wslc\":{\"x\":1}}}", NULL, NULL, true},
    {MXC_F_FOREIGN_EXP_ONE, "{\"experimental\":{\"windows_sandbox\":null}}", NULL, NULL, true},
    {MXC_F_FOREIGN_EXP_MANY, "{\"experimental\":{\"wslc\":{},\"microvm\":{}}}", NULL, NULL, true},
    {MXC_F_FOREIGN_EXP_MANY, "{\"experimental\":{\"a\":1,\"b\":2,\"c\":3,\"isolation_session\":{}}}", NULL, NULL, true},
    {MXC_F_RUNTIME_CONFIG, "{\"runtimeConfig\":{\"image\":\"x\"}}", NULL, NULL, true},
    {MXC_F_NET_V1_PROXY, "{\"runtimeConfig\":{\"networkProxy\":\"http://127.0.0.1:3128\"}}", NULL, NULL, true, true, true},
    /* legacy network.proxy: model 2 on a blocked network (the block posture it implies rejects first on
     * later phases) */
    {MXC_F_NET_PROXY, "{\"network\":{\"proxy\":{\"url\":\"http://127.0.0.1:3128\"}}}", NULL, NULL, false},
    {MXC_F_NET_PROXY, "{\"network\":{\"defaultPolicy\":\"block\",\"proxy\":{\"localhost\":3128}}}", NULL, NULL,
     false},
    {MXC_F_NET_V1_RULES, "{\"network\":{\"egress\":{\"default\":\"allow\"}}}", NULL, NULL, true, true, true},
    {MXC_F_NET_V1_RULES,
     "{\"network\":{\"egress\":{\"default\":\"deny\",\"allow\":[{\"to\":[{\"cidr\":\"10.0.0.0/8\"}]}]}}}", NULL,
     NULL, true, true, true},
    {MXC_F_NET_V1_RULES, "{\"network\":{\"egress\":{\"default\":\"allow\"}}}", NULL, NULL, true, true, true},
    {MXC_F_TELEMETRY, "{\"telemetry\":{\"enabled\":true}}", NULL, NULL, true, true},
    {MXC_F_TELEMETRY, "{\"telemetry\":{}}", NULL, NULL, true, true},
    {MXC_F_NET_V1_BLOCK, "{\"network\":{\"egress\":{\"default\":\"deny\"},\"ingress\":{\"default\":\"deny\"}}}", NULL,
     NULL, true, true, true},
    {MXC_F_NET_V1_BLOCK, "{\"network\":{}}", NULL, NULL, true, true, true},
    {MXC_F_NET_V1_ALLOW_ALL,
     "{\"network\":{\"egress\":{\"default\":\"allow\"},\"ingress\":{\"default\":\"allow\",\"hostLoopback\":\"allow\"}}}",
     NULL, NULL, true, true, true},
    {MXC_F_PROCESS_OPTIONS, "{\"process\":{\"inheritDefaultEnv\":true}}", NULL, NULL, true, true, true},
};
#pragma GCC diagnostic pop

static void test_matrix_is_indexed(void)
{
    for (int i = 0; i < MXC_F__COUNT; i++) {
        CHECK_MSG(MXC_MATRIX[i].feature == (mxc_feature)i, "MXC_MATRIX[%d].feature = %d", i, MXC_MATRIX[i].feature);
        CHECK_MSG(MXC_MATRIX[i].field && MXC_MATRIX[i].field[0], "row %d has no field name", i);
        bool any_rejected = false;
        for (int s = 0; s < MXC_SURF__COUNT; s++) {
            CHECK(MXC_MATRIX[i].disp[s] >= MXC_DISP_HONORED && MXC_MATRIX[i].disp[s] <= MXC_DISP_REJECTED);
            any_rejected |= MXC_MATRIX[i].disp[s] == MXC_DISP_REJECTED;
        }
        if (any_rejected)
            CHECK_MSG(MXC_MATRIX[i].why && MXC_MATRIX[i].why[0], "row %s rejects without a reason", MXC_MATRIX[i].field);
    }
    /* every feature has at least one variant */
    for (int f = 0; f < MXC_F__COUNT; f++) {
        int n = 0;
        for (size_t v = 0; v < sizeof VARIANTS / sizeof VARIANTS[0]; v++)
            n += VARIANTS[v].feature == (mxc_feature)f;
        CHECK_MSG(n > 0, "no test variant for matrix row %s", MXC_MATRIX[f].field);
    }
}

static int g_cells;

static void test_matrix(void)
{
    for (size_t v = 0; v < sizeof VARIANTS / sizeof VARIANTS[0]; v++) {
        const variant *var = &VARIANTS[v];
        const mxc_matrix_row *row = &MXC_MATRIX[var->feature];
        for (int s = 0; s < MXC_SURF__COUNT; s++) {
            const char *frag = var->frag;
            if (s == MXC_SURF_ONESHOT && var->frag_oneshot)
                frag = var->frag_oneshot;
            if (s == MXC_SURF_PROVISION && var->frag_provision)
                frag = var->frag_provision;
            outcome o;
            run_in((mxc_surface)s, frag, var->v1, &o);
            g_cells++;
            if (var->early_ok && o.parse_code == MXC_E_MALFORMED_REQUEST &&
                (row->disp[s] == MXC_DISP_REJECTED || s == MXC_SURF_START || s == MXC_SURF_STOP ||
                 s == MXC_SURF_DEPROVISION || (s == MXC_SURF_PROVISION && row->feature == MXC_F_PROCESS_OPTIONS)))
                continue;
            CHECK_MSG(o.parse_code == MXC_E_NONE, "[%s on %s] request does not parse (%s): %s", row->field,
                      SURF_NAME[s], mxc_code_name(o.parse_code), o.msg);
            if (o.parse_code != MXC_E_NONE)
                continue;
            bool want_reject = row->disp[s] == MXC_DISP_REJECTED;
            mxc_code want = !want_reject ? MXC_E_NONE
                            : s == MXC_SURF_ONESHOT ? MXC_E_BACKEND_ERROR
                                                    : MXC_E_POLICY_VALIDATION;
            CHECK_MSG(o.policy_code == want, "[%s on %s, table: %s] %s -> %s (%s), want %s", row->field, SURF_NAME[s],
                      mxc_disposition_name(row->disp[s]), o.text, mxc_code_name(o.policy_code), o.msg,
                      mxc_code_name(want));
            if (want_reject && o.policy_code == want) {
                CHECK_CONTAINS(o.msg, "rejected");
                CHECK_CONTAINS(o.msg, s == MXC_SURF_ONESHOT ? "one-shot" : SURF_NAME[s]);
                if (var->names_row) {
                    CHECK_CONTAINS(o.msg, row->field);
                    CHECK_CONTAINS(o.msg, row->why);
                }
            }
        }
    }
}

/* ---- path rules ------------------------------------------------------------ */

static void test_paths(void)
{
    static const char *const BAD[] = {
        "relative/x", "x", "./x", "../x", "~/x", "", " ", "\t", "/a/../b", "/a/..", "/..", "/a//b", "//a", "/a/./b",
        "/a/.", "/.", "/a/", "/tmp/x/", "/", "/a\tb", "/a\nb", "/a\177b", "/a\x01",
    };
    static const char *const GOOD[] = {"/tmp/x", "/a", "/a/b/c", "/...", "/a/...b", "/.hidden", "/a/.b/..c", "/a b",
                                       "/\xc3\xa9t\xc3\xa9", "/a-b_c.d"};
    static const char *const LISTS[] = {"readwritePaths", "readonlyPaths", "deniedPaths"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        mxc_error e = {0};
        CHECK_MSG(mxc_policy_check_path("filesystem.readonlyPaths", BAD[i], &e) == -1, "path \"%s\" accepted", BAD[i]);
        CHECK_INT_EQ(e.code, MXC_E_POLICY_VALIDATION);
        CHECK_CONTAINS(e.message, "filesystem.readonlyPaths");
        mxc_error_clear(&e);
        /* via requests, on both surfaces that take paths, every list */
        for (size_t l = 0; l < 3; l++) {
            json_t *frag = json_pack("{s:{s:[s]}}", "filesystem", LISTS[l], BAD[i]);
            char *ftext = json_dumps(frag, JSON_COMPACT);
            json_decref(frag);
            for (int s = MXC_SURF_ONESHOT; s <= MXC_SURF_PROVISION; s++) {
                outcome o;
                run((mxc_surface)s, ftext, &o);
                mxc_code want = s == MXC_SURF_ONESHOT ? MXC_E_BACKEND_ERROR : MXC_E_POLICY_VALIDATION;
                CHECK_MSG(o.parse_code == MXC_E_NONE && o.policy_code == want, "%s on %s -> %s/%s (%s)", o.text,
                          SURF_NAME[s], mxc_code_name(o.parse_code), mxc_code_name(o.policy_code), o.msg);
                CHECK_CONTAINS(o.msg, LISTS[l]);
                bool printable = BAD[i][0] != '\0';
                for (const char *c = BAD[i]; *c; c++)
                    printable &= (unsigned char)*c >= 0x20 && *c != 0x7f && *c != ' ';
                if (printable)
                    CHECK_CONTAINS(o.msg, BAD[i]);
            }
            free(ftext);
        }
    }
    for (size_t i = 0; i < sizeof GOOD / sizeof GOOD[0]; i++) {
        mxc_error e = {0};
        CHECK_MSG(mxc_policy_check_path("filesystem.readonlyPaths", GOOD[i], &e) == 0, "path \"%s\" rejected: %s",
                  GOOD[i], e.message);
        for (size_t l = 0; l < 3; l++) {
            json_t *frag = json_pack("{s:{s:[s]}}", "filesystem", LISTS[l], GOOD[i]);
            char *ftext = json_dumps(frag, JSON_COMPACT);
            json_decref(frag);
            for (int s = MXC_SURF_ONESHOT; s <= MXC_SURF_PROVISION; s++) {
                outcome o;
                run((mxc_surface)s, ftext, &o);
                CHECK_MSG(o.parse_code == MXC_E_NONE && o.policy_code == MXC_E_NONE, "%s on %s -> %s", o.text,
                          SURF_NAME[s], o.msg);
            }
            free(ftext);
        }
    }
    /* a long path is bounded */
    char *lp = malloc(4100);
    lp[0] = '/';
    memset(lp + 1, 'a', 4098);
    lp[4099] = '\0';
    mxc_error e = {0};
    CHECK_INT_EQ(mxc_policy_check_path("x", lp, &e), -1);
    free(lp);
    mxc_error_clear(&e);

    /* one bad entry among good ones is found, in any list position */
    outcome o;
    run(MXC_SURF_PROVISION, "{\"filesystem\":{\"readwritePaths\":[\"/tmp/a\"],\"readonlyPaths\":[\"/usr\",\"/a/../etc\"]}}",
        &o);
    CHECK_INT_EQ(o.policy_code, MXC_E_POLICY_VALIDATION);
    CHECK_CONTAINS(o.msg, "/a/../etc");
    CHECK_CONTAINS(o.msg, "readonlyPaths");

    /* process.cwd: checked where a process runs (one-shot, exec) */
    run(MXC_SURF_ONESHOT, "{\"process\":{\"cwd\":\"tmp\"}}", &o);
    CHECK_INT_EQ(o.policy_code, MXC_E_BACKEND_ERROR);
    CHECK_CONTAINS(o.msg, "process.cwd");
    run(MXC_SURF_EXEC, "{\"process\":{\"cwd\":\"/a/./b\"}}", &o);
    CHECK_INT_EQ(o.policy_code, MXC_E_POLICY_VALIDATION);
    CHECK_CONTAINS(o.msg, "/a/./b");
    run(MXC_SURF_EXEC, "{\"process\":{\"cwd\":\"/tmp/x\"}}", &o);
    CHECK_INT_EQ(o.policy_code, MXC_E_NONE);
    run(MXC_SURF_ONESHOT, "{\"process\":{\"cwd\":\"/tmp/x\"}}", &o);
    CHECK_INT_EQ(o.policy_code, MXC_E_NONE);
    /* ... and accepted-and-ignored where nothing runs */
    for (int s = MXC_SURF_PROVISION; s < MXC_SURF__COUNT; s++) {
        if (s == MXC_SURF_EXEC)
            continue;
        run((mxc_surface)s, "{\"process\":{\"commandLine\":\"x\",\"cwd\":\"relative\"}}", &o);
        CHECK_MSG(o.parse_code == MXC_E_NONE && o.policy_code == MXC_E_NONE, "cwd on %s: %s", SURF_NAME[s], o.msg);
    }
}

/* ---- structural rules ------------------------------------------------------ */

typedef struct {
    mxc_surface s;
    const char *frag;
    mxc_code want;
} struct_case;

static void test_structural(void)
{
    const struct_case T[] = {
        /* lone foreign experimental key tolerated on non-provision phases, two rejected */
        {MXC_SURF_START, "{\"experimental\":{\"wslc\":{\"x\":1}}}", MXC_E_NONE},
        {MXC_SURF_START, "{\"experimental\":{\"wslc\":{},\"windows_sandbox\":{}}}", MXC_E_POLICY_VALIDATION},
        {MXC_SURF_EXEC, "{\"experimental\":{\"wslc\":{}}}", MXC_E_NONE},
        {MXC_SURF_STOP, "{\"experimental\":{\"wslc\":{},\"microvm\":{}}}", MXC_E_POLICY_VALIDATION},
        {MXC_SURF_DEPROVISION, "{\"experimental\":{\"hyperlight\":1}}", MXC_E_NONE},
        {MXC_SURF_PROVISION, "{\"experimental\":{\"wslc\":{}}}", MXC_E_POLICY_VALIDATION},
        {MXC_SURF_ONESHOT, "{\"experimental\":{\"wslc\":{}}}", MXC_E_BACKEND_ERROR},
        /* own key plus one foreign is still "one foreign" */
        {MXC_SURF_START, "{\"experimental\":{\"isolation_session\":{\"start\":{}},\"wslc\":{}}}", MXC_E_NONE},
        {MXC_SURF_START, "{\"experimental\":{}}", MXC_E_NONE},
        /* mis-slotted own payloads: accepted and ignored */
        {MXC_SURF_START, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"x\"}}}}", MXC_E_NONE},
        {MXC_SURF_START, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":5}}}}", MXC_E_NONE},
        {MXC_SURF_EXEC, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"a\\u0007\"}}}}", MXC_E_NONE},
        {MXC_SURF_PROVISION, "{\"experimental\":{\"isolation_session\":{\"start\":{},\"provision\":{}}}}", MXC_E_NONE},
        {MXC_SURF_ONESHOT,
         "{\"containment\":\"isolation_session\",\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"a\\u0007\"}}}}",
         MXC_E_NONE},
        /* appId honored at provision only, and validated there */
        {MXC_SURF_PROVISION, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":\"a\\u0007\"}}}}",
         MXC_E_POLICY_VALIDATION},
        {MXC_SURF_PROVISION, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":7}}}}",
         MXC_E_POLICY_VALIDATION},
        {MXC_SURF_PROVISION, "{\"experimental\":{\"isolation_session\":{\"provision\":{\"appId\":null}}}}", MXC_E_NONE},
        /* lifecycle by value on one-shot, by section on state-aware */
        {MXC_SURF_ONESHOT, "{\"lifecycle\":{\"destroyOnExit\":true,\"preservePolicy\":false}}", MXC_E_NONE},
        {MXC_SURF_ONESHOT, "{\"lifecycle\":{\"destroyOnExit\":true,\"preservePolicy\":true}}", MXC_E_BACKEND_ERROR},
        {MXC_SURF_ONESHOT, "{\"lifecycle\":{\"destroyOnExit\":false,\"preservePolicy\":false}}", MXC_E_BACKEND_ERROR},
        {MXC_SURF_PROVISION, "{\"lifecycle\":{}}", MXC_E_POLICY_VALIDATION},
        {MXC_SURF_STOP, "{\"lifecycle\":{\"destroyOnExit\":true}}", MXC_E_POLICY_VALIDATION},
        /* empty runtimeConfig expresses nothing */
        {MXC_SURF_ONESHOT, "{\"runtimeConfig\":{}}", MXC_E_NONE},
        {MXC_SURF_START, "{\"runtimeConfig\":{}}", MXC_E_NONE},
        /* network absent on later phases is inherited; supplied is rejected */
        {MXC_SURF_EXEC, "{\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true}}", MXC_E_POLICY_VALIDATION},
        {MXC_SURF_EXEC, "{\"network\":{}}", MXC_E_POLICY_VALIDATION},
        {MXC_SURF_PROVISION, "{\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true}}", MXC_E_NONE},
        /* denied path below a granted one: both honored at provision, rejected later */
        {MXC_SURF_PROVISION, "{\"filesystem\":{\"readwritePaths\":[\"/srv\"],\"deniedPaths\":[\"/srv/secret\"]}}", MXC_E_NONE},
        {MXC_SURF_START, "{\"filesystem\":{\"deniedPaths\":[\"/srv/secret\"]}}", MXC_E_POLICY_VALIDATION},
        /* a kitchen-sink one-shot that is entirely honorable */
        {MXC_SURF_ONESHOT,
         "{\"version\":\"0.7.0\",\"$schema\":\"s\",\"_comment\":\"c\",\"containment\":\"process\",\"containerId\":\"c\","
         "\"process\":{\"commandLine\":\"true\",\"cwd\":\"/tmp\",\"env\":[\"A=1\"],\"timeout\":10},"
         "\"filesystem\":{\"readwritePaths\":[\"/tmp/w\"],\"readonlyPaths\":[\"/usr\"],\"deniedPaths\":[\"/usr/secret\"]},"
         "\"network\":{\"defaultPolicy\":\"block\",\"enforcementMode\":\"both\"},"
         "\"ui\":{\"disable\":true,\"clipboard\":\"none\",\"injection\":false},"
         "\"lifecycle\":{\"destroyOnExit\":true,\"preservePolicy\":false},\"fallback\":{\"allowDaclMutation\":true},"
         "\"runtimeConfig\":{},\"experimental\":{\"process\":{\"anything\":1}}}",
         MXC_E_NONE},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        outcome o;
        run(T[i].s, T[i].frag, &o);
        CHECK_MSG(o.parse_code == MXC_E_NONE && o.policy_code == T[i].want, "structural[%zu] %s -> %s/%s (%s), want %s",
                  i, o.text, mxc_code_name(o.parse_code), mxc_code_name(o.policy_code), o.msg,
                  mxc_code_name(T[i].want));
    }
}

static void test_misc(void)
{
    /* surface of each base request */
    for (int s = 0; s < MXC_SURF__COUNT; s++) {
        json_t *req = base_request((mxc_surface)s, false);
        char *text = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        mxc_request r;
        mxc_error e = {0};
        CHECK_INT_EQ(mxc_request_parse(text, strlen(text), &r, &e), 0);
        CHECK_INT_EQ(mxc_surface_of(&r), s);
        CHECK_INT_EQ(mxc_policy_validate(&r, &e), 0);
        mxc_request_free(&r);
        mxc_error_clear(&e);
        free(text);
    }
    CHECK_STR_EQ(mxc_disposition_name(MXC_DISP_REJECTED), "rejected");
    CHECK_STR_EQ(mxc_disposition_name(MXC_DISP_HONORED), "honored");
    CHECK_STR_EQ(mxc_disposition_name(MXC_DISP_INHERITED), "inherited");
    CHECK_STR_EQ(mxc_disposition_name(MXC_DISP_NA), "n/a");

    /* the markdown rendering is the same table: one line per row, plus 2 */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mxc_policy_print_matrix_markdown(f);
    fclose(f);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    CHECK_INT_EQ(lines, MXC_F__COUNT + 2);
    for (int i = 0; i < MXC_F__COUNT; i++)
        CHECK_CONTAINS(buf, MXC_MATRIX[i].field);
    free(buf);
}

int main(void)
{
    mxc_net_install(); /* the network layer under the engine, as a front does (src/net/iface/net.h) */
    mxc_sandbox_id id = {0};
    snprintf(id.agent_name, sizeof id.agent_name, "mxc-test1");
    mxc_error e = {0};
    if (mxc_sandbox_id_encode(&id, ID, sizeof ID, &e) < 0) {
        fprintf(stderr, "cannot encode the test id: %s\n", e.message);
        return 1;
    }
    test_matrix_is_indexed();
    test_matrix();
    test_paths();
    test_structural();
    test_misc();
    fprintf(stderr, "test_policy: %d matrix cells (%zu variants x %d surfaces) over %d rows\n", g_cells,
            sizeof VARIANTS / sizeof VARIANTS[0], MXC_SURF__COUNT, MXC_F__COUNT);
    return CHECK_DONE();
}
