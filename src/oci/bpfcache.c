/* bpfcache.c — see bpfcache.h. */
#include "bpfcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"

#define CACHE_DIR "@bpf"
#define CACHE_MAX 256
#define MAGIC "mxc-oci-bpf 1\n"

/* The key: the format, this libseccomp's version (its syscall tables decide the program), the
 * profile canonically dumped.  NULL when it cannot be made. */
static char *key_of(json_t *sc)
{
    char *prof = json_dumps(sc, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    const struct scmp_version *v = seccomp_version();
    char *key = NULL;
    if (prof && v && asprintf(&key, "%slibseccomp %u.%u.%u\n%s", MAGIC, v->major, v->minor, v->micro, prof) < 0)
        key = NULL;
    free(prof);
    return key;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The cache directory of rootfd: root's, closed to others; -1 when absent (made if make) or not so. */
static int cache_dir(int rootfd, bool make)
{
    int d = openat(rootfd, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0 && errno == ENOENT && make && mkdirat(rootfd, CACHE_DIR, 0700) == 0)
        d = openat(rootfd, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (d >= 0 && (fstat(d, &st) < 0 || st.st_uid != 0 || (st.st_mode & 077))) {
        close(d);
        d = -1;
    }
    return d;
}

/* An entry: key "\n" log(0|1) "\n" then the program.  true when name holds key's program. */
static bool lookup(int dir, const char *name, const char *key, oci_seccomp *out)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    size_t klen = strlen(key);
    if (fd < 0)
        return false;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 077) &&
              st.st_size > (off_t)(klen + 3) && st.st_size <= (off_t)(klen + 3 + BPF_MAXINSNS * sizeof(struct sock_filter));
    char *buf = ok ? malloc((size_t)st.st_size) : NULL;
    ok = buf && pread(fd, buf, (size_t)st.st_size, 0) == st.st_size;
    close(fd);
    size_t plen = ok ? (size_t)st.st_size - klen - 3 : 0;
    ok = ok && !memcmp(buf, key, klen) && buf[klen] == '\n' && (buf[klen + 1] == '0' || buf[klen + 1] == '1') &&
         buf[klen + 2] == '\n' && plen > 0 && plen % sizeof(struct sock_filter) == 0;
    if (ok && (out->insns = malloc(plen))) {
        memcpy(out->insns, buf + klen + 3, plen);
        out->len = (unsigned short)(plen / sizeof(struct sock_filter));
        out->log = buf[klen + 1] == '1';
    } else {
        ok = false;
    }
    free(buf);
    return ok;
}

static bool full(int dir)
{
    int fd = dup(dir);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return true;
    }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < CACHE_MAX)
        n += de->d_name[0] != '.';
    closedir(d);
    return n >= CACHE_MAX;
}

static void store(int dir, const char *name, const char *key, const oci_seccomp *s)
{
    if (full(dir))
        return;
    size_t klen = strlen(key), plen = s->len * sizeof(struct sock_filter);
    char *buf = malloc(klen + 3 + plen), tmp[64];
    if (!buf)
        return;
    memcpy(buf, key, klen);
    memcpy(buf + klen, (char[3]){'\n', s->log ? '1' : '0', '\n'}, 3);
    memcpy(buf + klen + 3, s->insns, plen);
    snprintf(tmp, sizeof tmp, ".new-%d", (int)getpid());
    (void)mxc_replace_at(dir, name, tmp, buf, klen + 3 + plen, 0600);
    free(buf);
}

int oci_seccomp_compile_cached(int rootfd, json_t *sc, oci_seccomp *out, mxc_error *e)
{
    memset(out, 0, sizeof *out);
    char *key = sc && !json_is_null(sc) ? key_of(sc) : NULL;
    int dir = key ? cache_dir(rootfd, false) : -1;
    char name[32];
    snprintf(name, sizeof name, "%016llx", key ? (unsigned long long)fnv1a(key) : 0ull);
    if (dir >= 0 && lookup(dir, name, key, out)) {
        close(dir);
        free(key);
        return 0;
    }
    int rc = oci_seccomp_compile(sc, out, e);
    if (rc == 0 && key && out->insns && (dir >= 0 || (dir = cache_dir(rootfd, true)) >= 0))
        store(dir, name, key, out);
    if (dir >= 0)
        close(dir);
    free(key);
    return rc;
}
