/* test_toml.c — unit tests for src/gateway/toml.c (the strict TOML reader)
 * and src/gateway/config.c ([openshell.drivers.mxc]): what TOML accepts,
 * what it refuses (and that we refuse it too, naming the line), what we
 * refuse as unsupported rather than misread, and every config key's rule;
 * a provider's token read from its token_file (its first line; none from a
 * link, an empty file or one too long to be a token). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "toml.h"

static mxc_error E;
#define ERR E.message

static json_t *ok(const char *text)
{
    ERR[0] = '\0';
    json_t *j = mxc_toml_parse(text, strlen(text), &E);
    CHECK_MSG(j != NULL, "refused: %s\n--- %s", ERR, text);
    return j;
}

static void bad(const char *text, const char *why)
{
    ERR[0] = '\0';
    json_t *j = mxc_toml_parse(text, strlen(text), &E);
    CHECK_MSG(j == NULL, "accepted:\n--- %s", text);
    CHECK_MSG(strstr(ERR, why) != NULL, "\"%s\" does not say \"%s\"", ERR, why);
    json_decref(j);
}

static void same(const char *text, const char *json)
{
    json_t *j = ok(text), *want = json_loads(json, 0, NULL);
    CHECK_MSG(j && want && json_equal(j, want), "%s\n!= %s", j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : "-", json);
    json_decref(j);
    json_decref(want);
}

static void toml_cases(void)
{
    same("", "{}");
    same("# only a comment\n\n", "{}");
    same("a = 1\nb = -2\nc = +3\nd = 1_000\ne = 0", "{\"a\":1,\"b\":-2,\"c\":3,\"d\":1000,\"e\":0}");
    same("t = true\nf = false # trailing comment\n", "{\"t\":true,\"f\":false}");
    same("s = \"a\\tb\\\"c\\\\d\\u00e9\\U0001F600\"", "{\"s\":\"a\\tb\\\"c\\\\d\\u00e9\\ud83d\\ude00\"}");
    same("s = 'C:\\path\\no\\escape'", "{\"s\":\"C:\\\\path\\\\no\\\\escape\"}");
    same("[openshell.drivers.mxc]\nx = 1\n[openshell.other]\ny = 2",
         "{\"openshell\":{\"drivers\":{\"mxc\":{\"x\":1}},\"other\":{\"y\":2}}}");
    same("[a.b]\nx=1\n[a]\ny=2", "{\"a\":{\"b\":{\"x\":1},\"y\":2}}");
    same("a.b.c = 1\na.b.d = 2\n\"quoted key\" = 3\n'lit' = 4", "{\"a\":{\"b\":{\"c\":1,\"d\":2}},\"quoted key\":3,\"lit\":4}");
    same("[ a . \"b c\" ]\nk = 1", "{\"a\":{\"b c\":{\"k\":1}}}");
    same("arr = [ 1, 2,\n  # comment\n  3, ]\nempty = []\nnested = [[1], ['x']]",
         "{\"arr\":[1,2,3],\"empty\":[],\"nested\":[[1],[\"x\"]]}");
    same("it = { a = 1, b.c = \"x\" }\nnone = {}", "{\"it\":{\"a\":1,\"b\":{\"c\":\"x\"}},\"none\":{}}");
    same("[f]\napple.color = 'red'\n[f.apple.texture]\nsmooth = true",
         "{\"f\":{\"apple\":{\"color\":\"red\",\"texture\":{\"smooth\":true}}}}");
    same("a = 1\r\nb = 2\r\n", "{\"a\":1,\"b\":2}");
    same("max = 9223372036854775807\nmin = -9223372036854775808",
         "{\"max\":9223372036854775807,\"min\":-9223372036854775808}");

    bad("a = 1\na = 2", "line 2: the key a is defined twice");
    bad("[t]\n[t]", "line 2: the table [t] is defined twice");
    bad("a.b = 1\n[a]", "defined twice");
    bad("[f]\napple.color = 1\n[f.apple]", "defined twice");
    bad("a = 1\n[a]", "already a value");
    bad("a = {x = 1}\n[a.y]", "already a value");
    bad("a = {x = 1}\na.y = 2", "already defined");
    bad("a = \"x", "unterminated");
    bad("a = \"x\ny\"", "unterminated");
    bad("a = \"\\q\"", "unknown escape");
    bad("a = \"/usr/bin/x\\u0000y\"", "NUL character");
    bad("a = \"x\\U00000000\"", "NUL character");
    bad("a = \"\\uD800\"", "not a Unicode scalar value");
    bad("a = \"\\u12\"", "hexadecimal digits");
    bad("a = \"\x01\"", "control character");
    bad("# \x01\n", "control character in a comment");
    bad("a = \"\"\"multi\"\"\"", "multi-line strings");
    bad("a = '''multi'''", "multi-line strings");
    bad("a = 1.5", "floats");
    bad("a = 1e3", "floats");
    bad("a = inf", "floats");
    bad("a = 1979-05-27", "dates");
    bad("a = 0x1F", "hexadecimal");
    bad("a = 012", "leading zero");
    bad("a = 1__0", "'_'");
    bad("a = _1", "value was expected");
    bad("a = 99999999999999999999", "out of range");
    bad("[[arr]]\nx=1", "arrays of tables");
    bad("a = 1 b = 2", "after the value");
    bad("a 1", "expected '='");
    bad("= 1", "key cannot start");
    bad("a = ", "value was expected");
    bad("a = [1, 2", "ends with ']'");
    bad("a = {x = 1,}", "cannot start");
    bad("a = {x = 1\n}", "inline table");
    bad("a = \"\xff\"", "UTF-8");
    bad("[a", "ends with ']'");
    bad("a = tru", "value was expected");
    char deep[200] = "a = ";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    bad(deep, "deeper");
    json_t *j = mxc_toml_parse("a = 1\0b = 2", 11, &E);
    CHECK(j == NULL && strstr(ERR, "NUL"));
}

static const char *BASE = "[openshell.drivers.mxc]\nmxc_exec_path = \"/usr/local/bin/mxc-exec\"\n";

/* Parses BASE + extra; a success's providers are kept in LAST (freed by the next call). */
static mxc_gw_config LAST;

static int cfg(const char *extra, mxc_gw_config *c)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", BASE, extra);
    ERR[0] = '\0';
    mxc_gw_config_free(&LAST);
    int rc = mxc_gw_config_parse(text, strlen(text), c, &E);
    LAST.providers = c->providers;
    return rc;
}

static int parse_text(const char *text, mxc_gw_config *c)
{
    mxc_gw_config_free(&LAST);
    int rc = mxc_gw_config_parse(text, strlen(text), c, &E);
    LAST.providers = c->providers;
    return rc;
}

static void cfg_bad(const char *extra, const char *why)
{
    mxc_gw_config c;
    CHECK_MSG(cfg(extra, &c) < 0, "accepted: %s", extra);
    CHECK_MSG(strstr(ERR, why) != NULL, "\"%s\" does not say \"%s\"", ERR, why);
}

static void config_cases(void)
{
    mxc_gw_config c;
    CHECK_INT_EQ(cfg("", &c), 0);
    CHECK_STR_EQ(c.exec_path, "/usr/local/bin/mxc-exec");
    CHECK(c.backend == MXC_GW_BACKEND_PROCESS && !c.egress_proxy && !c.minimal_env && !c.audit);
    CHECK_INT_EQ(cfg("backend = \"isolation_session\"\npc_minimal_env = true\netw_audit = true\n", &c), 0);
    CHECK(c.backend == MXC_GW_BACKEND_SESSION && c.minimal_env && c.audit);
    CHECK_INT_EQ(cfg("backend = \"process_container\"\negress_proxy = true\negress_proxy_addr = \"127.0.0.1:3128\"\n"
                     "default_configuration_id = \"composable\"\npc_capabilities = []\npc_relay_spawner_path = \"\"\n"
                     "pc_relay_target_port = 0\npc_least_privilege = true\ndebug = true\n", &c), 0);
    CHECK(c.egress_proxy && c.proxy_port == 3128 && !strcmp(c.proxy_ip, "127.0.0.1") && c.debug);
    const char *spec = "[openshell.drivers.mxc]\nwxc_exec_path = \"/opt/mxc/mxc-exec\"\n";
    CHECK_INT_EQ(parse_text(spec, &c), 0);
    CHECK_STR_EQ(c.exec_path, "/opt/mxc/mxc-exec");

    const char *none = "[openshell.drivers.mxc]\nbackend = \"process\"\n";
    CHECK(parse_text(none, &c) < 0 && strstr(ERR, "mxc_exec_path is required"));
    const char *rel = "[openshell.drivers.mxc]\nmxc_exec_path = \"mxc-exec\"\n";
    CHECK(parse_text(rel, &c) < 0 && strstr(ERR, "absolute"));
    const char *dotrel = "[openshell.drivers.mxc]\nwxc_exec_path = \"./bin/mxc-exec\"\n";
    CHECK(parse_text(dotrel, &c) < 0 && strstr(ERR, "absolute"));
    const char *other = "[openshell.drivers.other]\nx = 1\n";
    CHECK(parse_text(other, &c) < 0 && strstr(ERR, "no [openshell.drivers.mxc]"));
    cfg_bad("wxc_exec_path = \"/x\"\n", "not both");
    cfg_bad("frobnicate = 1\n", "unknown key frobnicate");
    cfg_bad("debug = \"yes\"\n", "debug must be true or false");
    cfg_bad("backend = \"vm\"\n", "backend must be");
    cfg_bad("egress_proxy_addr = \"0.0.0.0:3128\"\n", "loopback");
    cfg_bad("egress_proxy_addr = \"10.0.0.1:3128\"\n", "loopback");
    cfg_bad("egress_proxy_addr = \"127.0.0.1\"\n", "loopback");
    cfg_bad("egress_proxy_addr = \"127.0.0.1:70000\"\n", "loopback");
    cfg_bad("egress_proxy_addr = \"localhost:3128\"\n", "loopback");
    cfg_bad("backend = \"isolation_session\"\negress_proxy = true\n", "requires backend");
    cfg_bad("pc_capabilities = [\"S-1-15-3-1\"]\n", "Windows capability");
    cfg_bad("pc_relay_target_port = 8080\n", "relay spawner");
    cfg_bad("default_configuration_id = \"other\"\n", "composable");
    cfg_bad("x = \n", "not valid TOML: line 3");

    /* providers */
    CHECK_INT_EQ(cfg("[mxc.providers.github]\ntoken_env = \"GH_TOKEN\"\nenv = \"GITHUB_TOKEN\"\nrevision = 3\n"
                     "endpoints = [\"api.github.com:443\", \"uploads.github.com:443/repos/\", \"[2001:db8::1]:8443\"]\n"
                     "[mxc.providers.file]\ntoken_file = \"/etc/mxc/t\"\nenv = \"T\"\nendpoints = [\"x.example:443\"]\n"
                     "expires_at = \"2027-01-01\"\n", &c), 0);
    json_t *want = json_loads("{\"github\":{\"env\":\"GITHUB_TOKEN\",\"revision\":3,\"token_env\":\"GH_TOKEN\","
                              "\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443},{\"host\":\"uploads.github.com\","
                              "\"port\":443,\"pathPrefix\":\"/repos/\"},{\"host\":\"2001:db8::1\",\"port\":8443}]},"
                              "\"file\":{\"env\":\"T\",\"revision\":1,\"token_file\":\"/etc/mxc/t\",\"expires\":true,"
                              "\"endpoints\":[{\"host\":\"x.example\",\"port\":443}]}}", 0, NULL);
    CHECK_MSG(json_equal(c.providers, want), "%s", json_dumps(c.providers, JSON_COMPACT));
    json_decref(want);
    CHECK_INT_EQ(json_object_size(c.providers), 2);
    const char *P = "[mxc.providers.p]\nenv = \"E\"\nendpoints = [\"a.example:443\"]\n";
    char t[600];
    snprintf(t, sizeof t, "%s", P);
    cfg_bad(t, "exactly one of token_env");
    snprintf(t, sizeof t, "%stoken_env = \"A\"\ntoken_file = \"/f\"\n", P);
    cfg_bad(t, "exactly one of token_env");
    snprintf(t, sizeof t, "%stoken_file = \"rel\"\n", P);
    cfg_bad(t, "exactly one of token_env");
    snprintf(t, sizeof t, "%stoken_env = \"A\"\nsecret = \"x\"\n", P);
    cfg_bad(t, "unknown key secret");
    snprintf(t, sizeof t, "%stoken_env = \"A\"\nrevision = 0\n", P);
    cfg_bad(t, "revision");
    cfg_bad("[mxc.providers.p]\ntoken_env = \"A\"\nenv = \"E\"\nendpoints = [\"a.example\"]\n", "endpoints[0]");
    cfg_bad("[mxc.providers.p]\ntoken_env = \"A\"\nenv = \"E\"\nendpoints = [\"*.a.example:443\"]\n", "endpoints[0]");
    cfg_bad("[mxc.providers.p]\ntoken_env = \"A\"\nenv = \"E\"\nendpoints = []\n", "needs endpoints");
    cfg_bad("[mxc.providers.p]\ntoken_env = \"A\"\nenv = \"1E\"\nendpoints = [\"a:1\"]\n", "env must name");
    cfg_bad("[mxc.providers.\"a b\"]\ntoken_env = \"A\"\nenv = \"E\"\nendpoints = [\"a:1\"]\n", "named by");
    mxc_gw_config_free(&LAST);
}

/* the token mxc_gw_provider_token reads from a token_file holding text (len bytes; a link to
 * such a file when link), or NULL */
static char *token_of(const char *text, size_t len, bool link)
{
    char dir[] = "/tmp/mxc-toml-XXXXXX", file[64], path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(file, sizeof file, "%s/t", dir);
    snprintf(path, sizeof path, "%s/%s", dir, link ? "l" : "t");
    FILE *f = fopen(file, "w");
    CHECK(f && fwrite(text, 1, len, f) == len && fclose(f) == 0);
    CHECK(!link || symlink(file, path) == 0);
    json_t *p = json_pack("{s:s}", "token_file", path);
    char *t = mxc_gw_provider_token(p);
    json_decref(p);
    unlink(path), unlink(file), rmdir(dir);
    return t;
}

static void token_cases(void)
{
    char *t = token_of("s3cret\r\nsecond line\n", 20, false);
    CHECK(t && !strcmp(t, "s3cret"));
    free(t);
    CHECK(token_of("s3cret\n", 7, true) == NULL); /* never through a link */
    CHECK(token_of("", 0, false) == NULL);
    CHECK(token_of("\n", 1, false) == NULL);
    char big[8192];
    memset(big, 'a', sizeof big);
    CHECK(token_of(big, sizeof big, false) == NULL); /* 8192 bytes: too long */
    t = token_of(big, sizeof big - 1, false);
    CHECK(t && strlen(t) == sizeof big - 1);
    free(t);
    json_t *p = json_pack("{s:s}", "token_file", "/nonexistent/mxc-token");
    CHECK(mxc_gw_provider_token(p) == NULL);
    json_decref(p);
}

int main(void)
{
    toml_cases();
    config_cases();
    token_cases();
    return CHECK_DONE();
}
