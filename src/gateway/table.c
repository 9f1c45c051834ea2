/* table.c — see table.h. */
#include "table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inventory.h"
#include "state.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *table; /* name -> record */
static char dir[512];

const char *gw_table_dir(void) { return dir; }

bool gw_name_ok(const char *name) { return mxc_label_is_valid(name, 63); }

static void write_record(const char *name, json_t *rec)
{
    char d[700], tmp[760], path[760];
    snprintf(d, sizeof d, "%s/%s", dir, name);
    mkdir(d, 0700);
    snprintf(tmp, sizeof tmp, "%s/.record.json.tmp", d);
    snprintf(path, sizeof path, "%s/record.json", d);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    size_t len = text ? strlen(text) : 0;
    bool ok = text && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    free(text);
    close(fd);
    if (ok)
        rename(tmp, path);
    else
        unlink(tmp);
}

int gw_table_open(char *why, size_t whysz)
{
    const char *env = getenv("MXC_GATEWAY_STATE"), *xdg = getenv("XDG_RUNTIME_DIR");
    if (env && env[0] == '/')
        snprintf(dir, sizeof dir, "%s", env);
    else if (geteuid() == 0)
        snprintf(dir, sizeof dir, "/var/lib/mxc/gateway");
    else if (xdg && xdg[0] == '/')
        snprintf(dir, sizeof dir, "%s/mxc-gateway", xdg);
    else
        snprintf(dir, sizeof dir, "/tmp/mxc-gateway-%u", (unsigned)geteuid());
    struct stat st;
    if (mxc_mkdir_p(dir, 0700) < 0 || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077)) {
        snprintf(why, whysz, "the gateway state directory %s is unusable (it must be a 0700 directory of ours)", dir);
        return -1;
    }
    char lock[600];
    snprintf(lock, sizeof lock, "%s/gateway.lock", dir);
    int lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(why, whysz, "another gateway serves the state directory %s", dir);
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    /* held for the process's life (never closed) */
    table = json_object();
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!gw_name_ok(de->d_name))
            continue;
        char path[800];
        snprintf(path, sizeof path, "%s/%s/record.json", dir, de->d_name);
        json_t *rec = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
        const char *nm = json_string_value(json_object_get(rec, "name"));
        if (json_is_object(rec) && nm && !strcmp(nm, de->d_name))
            json_object_set_new(table, de->d_name, rec);
        else
            json_decref(rec);
    }
    if (d)
        closedir(d);
    return 0;
}

int gw_table_insert(const char *name, json_t *rec, char *why, size_t whysz)
{
    pthread_mutex_lock(&mu);
    int rc = 0;
    if (json_object_get(table, name)) {
        snprintf(why, whysz, "a sandbox named %s exists (delete it first)", name);
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
    char d[700], p[760];
    snprintf(d, sizeof d, "%s/%s", dir, name);
    const char *files[] = {"record.json", "log", ".record.json.tmp", "proxy-audit.jsonl"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", d, files[i]);
        unlink(p);
    }
    rmdir(d);
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

int gw_table_log_path(const char *name, char *out, size_t outsz)
{
    char d[700];
    snprintf(d, sizeof d, "%s/%s", dir, name);
    if (mkdir(d, 0700) < 0 && errno != EEXIST)
        return -1;
    snprintf(out, outsz, "%s/log", d);
    return 0;
}
