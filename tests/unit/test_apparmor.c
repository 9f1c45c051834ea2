/* test_apparmor.c — src/oci/apparmor.c against directories made here (this
 * kernel may have no AppArmor: the attribute path is reached through a
 * stand-in tree, the release binary has no switch for it):
 * - enabled only as runc says: securityfs's apparmor directory present and
 *   the module's parameter "Y";
 * - the exec attribute: attr/apparmor/exec first, attr/exec where it is
 *   missing, never through a link out of the tree; "exec PROFILE" in one
 *   write;
 * - profile names: control characters and overlong names refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apparmor.h"
#include "check.h"

static char base[] = "/tmp/mxc-test-apparmor-XXXXXX";

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    for (char *s = strchr(p + strlen(base) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK_MSG(fd >= 0, "%s", p);
    if (fd >= 0) {
        CHECK((size_t)write(fd, text, strlen(text)) == strlen(text));
        close(fd);
    }
}

static char *slurp(const char *rel)
{
    static char buf[8192];
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = 0;
    return buf;
}

static int dir_fd(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    mkdir(p, 0755);
    return open(p, O_PATH | O_DIRECTORY);
}

static void enabled(void)
{
    int r = dir_fd("r1");
    CHECK(!oci_apparmor_enabled(r)); /* nothing */
    put("r1/sys/module/apparmor/parameters/enabled", "Y\n");
    CHECK(!oci_apparmor_enabled(r)); /* no securityfs directory: runc says no */
    put("r1/sys/kernel/security/apparmor/profiles", "");
    CHECK(oci_apparmor_enabled(r));
    put("r1/sys/module/apparmor/parameters/enabled", "N\n");
    CHECK(!oci_apparmor_enabled(r));
    close(r);
}

static void attribute(void)
{
    /* the newer per-LSM attribute is preferred */
    int p = dir_fd("p1");
    put("p1/thread-self/attr/apparmor/exec", "");
    put("p1/thread-self/attr/exec", "");
    mxc_error e = {0};
    int fd = oci_apparmor_attr_open(p, "cri-containerd.apparmor.d", &e);
    CHECK(fd >= 0);
    CHECK_INT_EQ(oci_apparmor_exec_write(fd, "cri-containerd.apparmor.d", &e), 0);
    close(fd);
    CHECK_STR_EQ(slurp("p1/thread-self/attr/apparmor/exec"), "exec cri-containerd.apparmor.d");
    CHECK_STR_EQ(slurp("p1/thread-self/attr/exec"), "");
    close(p);
    /* before Linux 5.8: attr/exec */
    p = dir_fd("p2");
    put("p2/thread-self/attr/exec", "");
    fd = oci_apparmor_attr_open(p, "runtime-profile", &e);
    CHECK(fd >= 0);
    CHECK_INT_EQ(oci_apparmor_exec_write(fd, "runtime-profile", &e), 0);
    close(fd);
    CHECK_STR_EQ(slurp("p2/thread-self/attr/exec"), "exec runtime-profile");
    close(p);
    /* neither: the error, not a file made */
    p = dir_fd("p3");
    CHECK_INT_EQ(oci_apparmor_attr_open(p, "x", &e), -1);
    CHECK_INT_EQ(e.native, ENOENT);
    CHECK(strstr(e.message, "process.apparmorProfile \"x\": opening the AppArmor exec attribute") != NULL);
    /* a link out of the tree is never followed */
    char target[512], link[512];
    snprintf(target, sizeof target, "%s/outside", base);
    put("outside/attr/exec", "");
    snprintf(link, sizeof link, "%s/p3/thread-self", base);
    CHECK(symlink(target, link) == 0);
    CHECK_INT_EQ(oci_apparmor_attr_open(p, "x", &e), -1);
    CHECK_INT_EQ(e.native, EXDEV);
    CHECK_STR_EQ(slurp("outside/attr/exec"), "");
    close(p);
}

static void names(void)
{
    mxc_error e = {0};
    CHECK_INT_EQ(oci_apparmor_name_check("cri-containerd.apparmor.d", "f", &e), 0);
    CHECK_INT_EQ(oci_apparmor_name_check("", "f", &e), 0);
    CHECK_INT_EQ(oci_apparmor_name_check("a\nchangeprofile b", "process.apparmorProfile", &e), -1);
    CHECK_CONTAINS(e.message, "process.apparmorProfile");
    char *big = malloc(5000);
    memset(big, 'a', 4999);
    big[4999] = 0;
    mxc_error e2 = {0};
    CHECK_INT_EQ(oci_apparmor_name_check(big, "process.apparmorProfile", &e2), -1);
    free(big);
    /* usable: no profile always; a profile only where the kernel has AppArmor (this host's answer) */
    mxc_error e3 = {0};
    CHECK_INT_EQ(oci_apparmor_usable(NULL, "f", &e3), 0);
    CHECK_INT_EQ(oci_apparmor_usable("", "f", &e3), 0);
    int root = open("/", O_PATH | O_DIRECTORY);
    bool on = oci_apparmor_enabled(root);
    close(root);
    CHECK_INT_EQ(oci_apparmor_usable("x", "process.apparmorProfile", &e3), on ? 0 : -1);
    if (!on)
        CHECK_CONTAINS(e3.message, "process.apparmorProfile \"x\": this kernel has no AppArmor enabled");
}

int main(void)
{
    if (!mkdtemp(base))
        return 2;
    enabled();
    attribute();
    names();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", base);
    return CHECK_DONE();
}
