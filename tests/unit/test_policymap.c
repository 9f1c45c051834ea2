/* test_policymap.c — unit tests for src/gateway/policymap.c: an OpenShell
 * SandboxPolicy mapped to the runtime's request, every refusal spec 002 and
 * Linux require, and every allowed-host entry it makes accepted by
 * mxc-proxy's own host policy (hostpolicy.h). */
#include <stdlib.h>

#include "check.h"
#include "hostpolicy.h"
#include "policymap.h"

static mxc_error E;
#define WHY E.message

static mxc_gw_config conf(bool proxy, bool allow, bool local, mxc_gw_backend be)
{
    mxc_gw_config c = {.backend = be, .egress_proxy = proxy, .network_allow = allow, .allow_local_network = local};
    snprintf(c.exec_path, sizeof c.exec_path, "/usr/bin/mxc-exec");
    return c;
}

static json_t *map(const char *policy_json, mxc_gw_config c, const char *workdir)
{
    json_t *p = json_loads(policy_json, 0, NULL);
    CHECK_MSG(p != NULL, "bad test JSON: %s", policy_json);
    WHY[0] = '\0';
    json_t *out = mxc_gw_map_policy(p, &c, workdir, &E);
    json_decref(p);
    return out;
}

static void same(const char *policy, mxc_gw_config c, const char *workdir, const char *want_json)
{
    json_t *got = map(policy, c, workdir), *want = json_loads(want_json, 0, NULL);
    char *g = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK_MSG(got && json_equal(got, want), "%s\n -> %s (%s)\n want %s", policy, g ? g : "NULL", WHY, want_json);
    /* every allowed host is an entry mxc-proxy accepts */
    json_t *hosts = json_object_get(json_object_get(got, "network"), "allowedHosts");
    if (hosts) {
        const char *v[300];
        size_t n = 0, i;
        json_t *h;
        json_array_foreach(hosts, i, h) v[n++] = json_string_value(h);
        mxc_error he = {0};
        mxc_hostpolicy *hp = mxc_hostpolicy_new(v, n, NULL, 0, &he);
        CHECK_MSG(hp != NULL, "mxc-proxy refuses the mapped hosts: %s", he.message);
        mxc_hostpolicy_free(hp);
    }
    free(g);
    json_decref(got);
    json_decref(want);
}

static void refused(const char *policy, mxc_gw_config c, const char *workdir, const char *why)
{
    json_t *got = map(policy, c, workdir);
    CHECK_MSG(got == NULL, "accepted: %s", policy);
    CHECK_MSG(strstr(WHY, why) != NULL, "\"%s\" does not say \"%s\"", WHY, why);
    json_decref(got);
}

int main(void)
{
    mxc_gw_config plain = conf(false, false, false, MXC_GW_BACKEND_PROCESS);
    mxc_gw_config gov = conf(true, false, false, MXC_GW_BACKEND_PROCESS);
    mxc_gw_config sess = conf(false, false, false, MXC_GW_BACKEND_SESSION);

    same("{\"version\":1}", plain, NULL, "{\"network\":{\"defaultPolicy\":\"block\"}}");
    same("{\"version\":1,\"filesystem_policy\":{\"include_workdir\":true,\"read_only\":[\"/usr\",\"/etc\"],"
         "\"read_write\":[\"/tmp\"]},\"landlock\":{\"compatibility\":\"hard_requirement\"},"
         "\"process\":{\"run_as_user\":\"sandbox\",\"run_as_group\":\"sandbox\"}}",
         plain, "/work/demo",
         "{\"filesystem\":{\"readonlyPaths\":[\"/usr\",\"/etc\"],\"readwritePaths\":[\"/tmp\",\"/work/demo\"]},"
         "\"network\":{\"defaultPolicy\":\"block\"}}");
    same("{\"version\":1}", conf(false, true, false, MXC_GW_BACKEND_PROCESS), NULL,
         "{\"network\":{\"defaultPolicy\":\"allow\"}}");
    same("{\"version\":1}", conf(false, true, true, MXC_GW_BACKEND_PROCESS), NULL,
         "{\"network\":{\"defaultPolicy\":\"allow\",\"allowLocalNetwork\":true}}");
    same("{\"version\":1,\"network_policies\":{\"github\":{\"name\":\"GitHub\",\"endpoints\":["
         "{\"host\":\"api.github.com\",\"port\":443},{\"host\":\"**.githubusercontent.com\",\"ports\":[443,80]},"
         "{\"host\":\"2001:db8::1\",\"port\":8443},{\"host\":\"api.github.com\",\"port\":443,\"tls\":\"skip\"}],"
         "\"binaries\":[{\"path\":\"/usr/bin/git\"}]}}}",
         gov, NULL,
         "{\"network\":{\"defaultPolicy\":\"block\",\"allowedHosts\":[\"api.github.com:443\","
         "\"*.githubusercontent.com:443\",\"*.githubusercontent.com:80\",\"[2001:db8::1]:8443\"]}}");
    same("{\"version\":1,\"ui\":{\"allow_graphical_ui\":false,\"clipboard\":\"none\",\"allow_input_injection\":false}}",
         plain, NULL, "{\"network\":{\"defaultPolicy\":\"block\"}}");

    refused("{}", plain, NULL, "version must be 1");
    refused("{\"version\":2}", plain, NULL, "version must be 1");
    refused("[]", plain, NULL, "must be a mapping");
    refused("{\"version\":1,\"sandbox\":{}}", plain, NULL, "unknown field sandbox");
    refused("{\"version\":1,\"filesystem_policy\":{\"read_only\":[\"usr\"]}}", plain, NULL, "read_only[0] is not absolute");
    refused("{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"/tmp/../etc\"]}}", plain, NULL, ". or ..");
    refused("{\"version\":1,\"filesystem_policy\":{\"read_write\":[\"//\"]}}", plain, NULL, "whole filesystem");
    refused("{\"version\":1,\"filesystem_policy\":{\"read_only\":[1]}}", plain, NULL, "not a string");
    refused("{\"version\":1,\"filesystem_policy\":{\"writable\":[]}}", plain, NULL, "unknown field writable");
    refused("{\"version\":1,\"filesystem_policy\":{\"include_workdir\":true}}", plain, NULL, "is not given");
    refused("{\"version\":1,\"filesystem_policy\":{\"include_workdir\":true}}", plain, "rel/dir", "not absolute");
    refused("{\"version\":1,\"filesystem_policy\":{\"include_workdir\":\"yes\"}}", plain, NULL, "true or false");
    char many[8192] = "{\"version\":1,\"filesystem_policy\":{\"read_only\":[";
    for (int i = 0; i < 257; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s\"/p%d\"", i ? "," : "", i);
    strcat(many, "]}}");
    refused(many, plain, NULL, "more than 256 paths");
    refused("{\"version\":1,\"landlock\":{\"compatibility\":\"sometimes\"}}", plain, NULL, "best_effort or hard");
    refused("{\"version\":1,\"process\":{\"run_as_user\":\"1500\"}}", plain, NULL, "process.run_as_user");
    refused("{\"version\":1,\"process\":{\"run_as_group\":\"root\"}}", plain, NULL, "process.run_as_group");

    const char *rule = "{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"example.com\",\"port\":443}]}}}";
    refused(rule, plain, NULL, "need egress_proxy = true");
    refused(rule, sess, NULL, "need egress_proxy = true");
    refused("{\"version\":1}", conf(true, true, false, MXC_GW_BACKEND_PROCESS), NULL, "allow-all");
    refused("{\"version\":1,\"network_middlewares\":{}}", gov, NULL, "network_middlewares are refused");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"*.example.com\",\"port\":443}]}}}",
            gov, NULL, "one-label");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"*-ai.googleapis.com\",\"port\":443}]}}}",
            gov, NULL, "intra-label");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"**.com\",\"port\":443}]}}}",
            gov, NULL, "top-level domain");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"a.com\",\"port\":443,"
            "\"protocol\":\"rest\",\"access\":\"read-only\"}]}}}", gov, NULL, "HTTP inspection is not enforced");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"a.com\",\"port\":443,"
            "\"path\":\"/repos/**\"}]}}}", gov, NULL, "by HTTP path");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"a.com\",\"port\":443,"
            "\"allowed_ips\":[\"10.0.0.0/8\"]}]}}}", gov, NULL, "allowed_ips");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"a.com\"}]}}}", gov, NULL,
            "needs port or ports");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"a.com\",\"port\":70000}]}}}", gov, NULL,
            "1 to 65535");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[]}}}", gov, NULL, "at least one endpoint");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"\",\"port\":1}]}}}", gov, NULL,
            "needs a host");
    refused("{\"version\":1,\"network_policies\":{\"r\":{\"endpoints\":[{\"host\":\"a.com\",\"port\":1}],\"x\":1}}}",
            gov, NULL, "unknown field x");
    refused("{\"version\":1,\"ui\":{\"allow_graphical_ui\":true}}", plain, NULL, "cannot be granted");
    refused("{\"version\":1,\"ui\":{\"clipboard\":\"read\"}}", plain, NULL, "cannot be granted");
    refused("{\"version\":1,\"ui\":{\"clipboard\":\"sideways\"}}", plain, NULL, "none, read, write or all");
    refused("{\"version\":1,\"ui\":{\"allow_graphical_ui\":false}}", sess, NULL, "no ui section");
    return CHECK_DONE();
}
