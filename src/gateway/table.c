/* table.c — see table.h. */
#include "table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "front.h"

#define KEY_LEN 32
#define RECORD_MAX (1u << 20)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *table; /* name -> record */
static char dir[512];
static int dfd = -1; /* the state directory, held open */
static unsigned char rec_key[KEY_LEN];

const char *gw_table_dir(void) { return dir; }

/* the state directory's own files are no sandbox's names */
bool gw_name_ok(const char *name)
{
    return mxc_label_is_valid(name, 63) && strcmp(name, "gateway.lock") && strcmp(name, "gateway.key");
}

/* A directory, file or key of ours alone: the gateway's uid, no group or
 * other permission. */
static bool ours(const struct stat *st) { return st->st_uid == geteuid() && !(st->st_mode & 077); }

int gw_table_dirfd(const char *name)
{
    if (!gw_name_ok(name) || dfd < 0)
        return -1;
    if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
        return -1;
    int d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (d >= 0 && (fstat(d, &st) < 0 || !ours(&st))) {
        close(d);
        return -1;
    }
    return d;
}

int gw_table_file_path(const char *name, const char *file, char *out, size_t outsz)
{
    int d = gw_table_dirfd(name);
    if (d < 0)
        return -1;
    close(d);
    snprintf(out, outsz, "%s/%s/%s", dir, name, file);
    return 0;
}

/* The record's mac: HMAC-SHA256 over "mxc-gateway-record-1", the name and
 * the record without its mac (compact, keys sorted), as hex. */
static bool mac_of(const char *name, const json_t *rec, char hex[2 * EVP_MAX_MD_SIZE + 1])
{
    json_t *copy = json_deep_copy(rec);
    json_object_del(copy, "mac");
    char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(copy);
    if (!text)
        return false;
    size_t nl = strlen(name), tl = strlen(text), len = 21 + nl + 1 + tl;
    unsigned char *msg = malloc(len);
    if (!msg) {
        free(text);
        return false;
    }
    memcpy(msg, "mxc-gateway-record-1", 21); /* with its NUL: the fields cannot run together */
    memcpy(msg + 21, name, nl + 1);
    memcpy(msg + 22 + nl, text, tl);
    free(text);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    bool ok = HMAC(EVP_sha256(), rec_key, KEY_LEN, msg, len, md, &mdlen) != NULL;
    free(msg);
    for (unsigned i = 0; ok && i < mdlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return ok;
}

static void write_record(const char *name, json_t *rec)
{
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    int d = gw_table_dirfd(name);
    if (d < 0 || !mac_of(name, rec, hex)) {
        if (d >= 0)
            close(d);
        return;
    }
    json_t *disk = json_deep_copy(rec);
    json_object_set_new(disk, "mac", json_string(hex));
    char *text = json_dumps(disk, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(disk);
    unlinkat(d, ".record.json.tmp", 0);
    int fd = openat(d, ".record.json.tmp", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && text && mxc_write_all(fd, text, strlen(text)) && fsync(fd) == 0;
    free(text);
    if (fd >= 0)
        close(fd);
    if (!ok || renameat(d, ".record.json.tmp", d, "record.json") < 0)
        unlinkat(d, ".record.json.tmp", 0);
    close(d);
}

/* name's record as this gateway wrote it, or NULL (*e says why, unless there is none). */
static json_t *load_record(const char *name, mxc_error *e)
{
    int d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0)
        return NULL; /* not a directory: no record */
    struct stat ds, st;
    json_t *rec = NULL;
    char *buf = NULL;
    int fd = -1;
    if (fstat(d, &ds) < 0 || !ours(&ds))
        mxc_err(e, MXC_E_BACKEND_ERROR, "its directory is not the gateway's own (0700, uid %u)", (unsigned)geteuid());
    else if ((fd = openat(d, "record.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0) {
        if (errno != ENOENT) /* none: no record, nothing to say */
            mxc_err(e, MXC_E_BACKEND_ERROR, "it cannot be opened as a file (a link?)");
    }
    else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || !ours(&st) || st.st_size > RECORD_MAX)
        mxc_err(e, MXC_E_BACKEND_ERROR,
                "it is not a regular file of the gateway's uid, mode 0600, one link, at most 1 MiB");
    else if (!(buf = malloc((size_t)st.st_size + 1)) || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
        mxc_err(e, MXC_E_BACKEND_ERROR, "it cannot be read");
    else if (!(rec = json_loadb(buf, (size_t)st.st_size, JSON_REJECT_DUPLICATES, NULL)) || !json_is_object(rec))
        mxc_err(e, MXC_E_BACKEND_ERROR, "it is not a JSON object");
    else {
        char hex[2 * EVP_MAX_MD_SIZE + 1];
        const char *mac = json_string_value(json_object_get(rec, "mac"));
        const char *nm = json_string_value(json_object_get(rec, "name"));
        if (!nm || strcmp(nm, name))
            mxc_err(e, MXC_E_BACKEND_ERROR, "it names another sandbox");
        else if (!mac || !mac_of(name, rec, hex) || strlen(mac) != strlen(hex) || CRYPTO_memcmp(mac, hex, strlen(hex)))
            mxc_err(e, MXC_E_BACKEND_ERROR, "its integrity check fails: this gateway did not write it");
        else {
            json_object_del(rec, "mac");
            free(buf);
            close(fd);
            close(d);
            return rec;
        }
    }
    json_decref(rec);
    free(buf);
    if (fd >= 0)
        close(fd);
    close(d);
    return NULL;
}

/* The record key: made once (32 random bytes, 0600), else read and checked. */
static int load_key(mxc_error *e)
{
    int fd = openat(dfd, "gateway.key", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        unsigned char k[KEY_LEN];
        if (getrandom(k, sizeof k, 0) != (ssize_t)sizeof k)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "no randomness for the record key"), -1;
        int w = openat(dfd, ".gateway.key.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        bool ok = w >= 0 && mxc_write_all(w, k, sizeof k) && fsync(w) == 0;
        if (w >= 0)
            close(w);
        explicit_bzero(k, sizeof k);
        /* never replacing a key another start made meanwhile (we hold the lock: none) */
        if (!ok || renameat2(dfd, ".gateway.key.tmp", dfd, "gateway.key", RENAME_NOREPLACE) < 0) {
            unlinkat(dfd, ".gateway.key.tmp", 0);
            return mxc_err(e, MXC_E_BACKEND_ERROR, "the record key %s/gateway.key cannot be made", dir), -1;
        }
        fd = openat(dfd, "gateway.key", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    }
    struct stat st;
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && ours(&st) &&
              st.st_size == KEY_LEN && pread(fd, rec_key, KEY_LEN, 0) == KEY_LEN;
    if (fd >= 0)
        close(fd);
    if (!ok)
        mxc_err(e, MXC_E_BACKEND_ERROR,
                "the record key %s/gateway.key is not a 0600 file of %d bytes of the gateway's uid "
                "(remove it: records it signed are then no longer trusted)", dir, KEY_LEN);
    return ok ? 0 : -1;
}

int gw_table_open(mxc_error *e)
{
    const char *env = getenv("MXC_GATEWAY_STATE");
    if (env && env[0] == '/') {
        snprintf(dir, sizeof dir, "%s", env);
    } else if (geteuid() == 0) {
        snprintf(dir, sizeof dir, "/var/lib/mxc/gateway");
    } else {
        char priv[480];
        if (mxc_private_dir(true, priv, sizeof priv, e) < 0)
            return -1;
        snprintf(dir, sizeof dir, "%s/mxc-gateway", priv);
    }
    if ((dfd = mxc_open_own_dir(dir, 077)) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR,
                "the gateway state directory %s is unusable (it must be a 0700 directory of ours)", dir);
        return -1;
    }
    int lfd = openat(dfd, "gateway.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "another gateway serves the state directory %s", dir);
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    /* held for the process's life (never closed) */
    if (load_key(e) < 0)
        return -1;
    table = json_object();
    int scan = dup(dfd);
    DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!gw_name_ok(de->d_name))
            continue;
        mxc_error re = {0};
        json_t *rec = load_record(de->d_name, &re);
        if (rec)
            json_object_set_new(table, de->d_name, rec);
        else if (re.code != MXC_E_NONE)
            fprintf(stderr, "mxc-gateway: warning: %s/%s/record.json is ignored: %s; nothing it names is acted on\n",
                    dir, de->d_name, re.message);
        mxc_error_clear(&re);
    }
    if (d)
        closedir(d);
    else if (scan >= 0)
        close(scan);
    return 0;
}

int gw_table_insert(const char *name, json_t *rec, mxc_error *e)
{
    pthread_mutex_lock(&mu);
    int rc = 0;
    if (json_object_get(table, name)) {
        mxc_err(e, MXC_E_BACKEND_ERROR, "a sandbox named %s exists (delete it first)", name);
        json_decref(rec);
        rc = -1;
    } else {
        json_object_set_new(table, name, rec);
        write_record(name, rec);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

json_t *gw_table_get(const char *name)
{
    pthread_mutex_lock(&mu);
    json_t *r = json_deep_copy(json_object_get(table, name));
    pthread_mutex_unlock(&mu);
    return r;
}

void gw_table_set(const char *name, const char *key, json_t *value)
{
    pthread_mutex_lock(&mu);
    json_t *rec = json_object_get(table, name);
    if (rec) {
        if (value)
            json_object_set_new(rec, key, value);
        else
            json_object_del(rec, key);
        write_record(name, rec);
    } else {
        json_decref(value);
    }
    pthread_mutex_unlock(&mu);
}

void gw_table_remove(const char *name)
{
    pthread_mutex_lock(&mu);
    json_object_del(table, name);
    int d = gw_name_ok(name) ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    const char *files[] = {"record.json", "log", "log.1", ".record.json.tmp", "proxy-audit.jsonl"};
    for (size_t i = 0; d >= 0 && i < sizeof files / sizeof files[0]; i++)
        unlinkat(d, files[i], 0);
    if (d >= 0)
        close(d);
    unlinkat(dfd, name, AT_REMOVEDIR);
    pthread_mutex_unlock(&mu);
}

static int by_created(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "created"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "created"));
    return x < y ? -1 : x > y;
}

json_t *gw_table_list(void)
{
    pthread_mutex_lock(&mu);
    size_t n = json_object_size(table), k = 0;
    json_t **v = calloc(n ? n : 1, sizeof *v);
    const char *key;
    json_t *rec;
    json_object_foreach(table, key, rec) v[k++] = json_deep_copy(rec);
    pthread_mutex_unlock(&mu);
    qsort(v, k, sizeof *v, by_created);
    json_t *arr = json_array();
    for (size_t i = 0; i < k; i++)
        json_array_append_new(arr, v[i]);
    free(v);
    return arr;
}
