/* cgroup.c — see cgroup.h. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static const char *const V2_ROOTS[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};

static bool is_cgroup2(const char *path)
{
    struct statfs sf;
    return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static bool file_has_word(const char *path, const char *word)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char buf[512];
    bool found = false;
    while (!found && fscanf(f, "%511s", buf) == 1)
        found = strcmp(buf, word) == 0;
    fclose(f);
    return found;
}

/* What the host offers is probed once per process: every one-shot and
 * exec asks several times, and each probe is a handful of statfs/reads. */
static const char *const CONTROLLERS[] = {"pids", "memory", "cpu"};
#define NCONTROLLERS (sizeof CONTROLLERS / sizeof CONTROLLERS[0])
static struct {
    const char *v2_root;
    bool v1;
} detected[NCONTROLLERS];
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static void detect(void)
{
    bool root_is_v2 = is_cgroup2("/sys/fs/cgroup");
    for (size_t c = 0; c < NCONTROLLERS; c++) {
        for (size_t i = 0; !detected[c].v2_root && i < sizeof V2_ROOTS / sizeof V2_ROOTS[0]; i++) {
            char path[256];
            snprintf(path, sizeof path, "%s/cgroup.controllers", V2_ROOTS[i]);
            if (is_cgroup2(V2_ROOTS[i]) && file_has_word(path, CONTROLLERS[c]))
                detected[c].v2_root = V2_ROOTS[i];
        }
        char path[256];
        snprintf(path, sizeof path, "/sys/fs/cgroup/%s/cgroup.procs", CONTROLLERS[c]);
        detected[c].v1 = !root_is_v2 && access(path, W_OK) == 0;
    }
}

static size_t controller_index(const char *controller)
{
    for (size_t c = 0; c < NCONTROLLERS; c++)
        if (strcmp(CONTROLLERS[c], controller) == 0)
            return c;
    return 0;
}

static const char *v2_root_with(const char *controller)
{
    pthread_once(&detect_once, detect);
    return detected[controller_index(controller)].v2_root;
}

static bool v1_has(const char *controller)
{
    pthread_once(&detect_once, detect);
    return detected[controller_index(controller)].v1;
}

const char *mxc_cgroup_mode(const char *controller)
{
    if (v2_root_with(controller))
        return "v2";
    return v1_has(controller) ? "v1" : "none";
}

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int err = errno;
    close(fd);
    return n < 0 ? -err : 0;
}

static void dir_for(const char *controller, const char *name, char *out, size_t outsz)
{
    const char *root = v2_root_with(controller);
    if (root)
        snprintf(out, outsz, "%s/mxc-%s", root, name);
    else if (v1_has(controller))
        snprintf(out, outsz, "/sys/fs/cgroup/%s/mxc/%s", controller, name);
    else
        out[0] = '\0';
}

void mxc_cgroup_open(const char *name, mxc_cgroup *cg)
{
    memset(cg, 0, sizeof *cg);
    dir_for("pids", name, cg->pids_dir, sizeof cg->pids_dir);
    dir_for("memory", name, cg->memory_dir, sizeof cg->memory_dir);
    cg->v2 = v2_root_with("pids") != NULL;
}

static int make_dir(const char *dir)
{
    char parent[512];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = '\0';
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
            return -errno;
    }
    return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int mxc_cgroup_create(const char *name, uint64_t pids_max, uint64_t memory_max, mxc_cgroup *cg, mxc_error *e)
{
    mxc_cgroup_open(name, cg);
    char num[32];
    if (cg->pids_dir[0]) {
        int rc = make_dir(cg->pids_dir);
        snprintf(num, sizeof num, "%llu", (unsigned long long)pids_max);
        if (rc == 0)
            rc = write_text(cg->pids_dir, "pids.max", num);
        if (rc < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.pids", -rc, NULL, "cannot set up the pids cgroup %s",
                              cg->pids_dir);
    }
    if (cg->memory_dir[0]) {
        int rc = make_dir(cg->memory_dir);
        snprintf(num, sizeof num, "%llu", (unsigned long long)memory_max);
        bool v2 = v2_root_with("memory") != NULL;
        if (rc == 0)
            rc = write_text(cg->memory_dir, v2 ? "memory.max" : "memory.limit_in_bytes", num);
        if (rc == 0 && v2)
            rc = write_text(cg->memory_dir, "memory.swap.max", "0") == -ENOENT ? 0 : 0;
        if (rc == 0 && !v2) /* v1: keep swap out of it where the knob exists */
            (void)write_text(cg->memory_dir, "memory.memsw.limit_in_bytes", num);
        if (rc < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.memory", -rc, NULL,
                              "cannot set up the memory cgroup %s", cg->memory_dir);
    }
    return 0;
}

int mxc_cgroup_add(const mxc_cgroup *cg, pid_t pid, mxc_error *e)
{
    char num[32];
    snprintf(num, sizeof num, "%d", (int)pid);
    const char *dirs[] = {cg->pids_dir, cg->memory_dir};
    for (size_t i = 0; i < 2; i++) {
        if (!dirs[i][0] || (i == 1 && strcmp(dirs[0], dirs[1]) == 0))
            continue;
        int rc = write_text(dirs[i], "cgroup.procs", num);
        if (rc < 0)
            return mxc_err_os(e, MXC_E_BACKEND_ERROR, "cgroup.attach", -rc, NULL, "cannot move pid %d into %s",
                              (int)pid, dirs[i]);
    }
    return 0;
}

void mxc_cgroup_kill_all(const mxc_cgroup *cg)
{
    if (!cg->pids_dir[0])
        return;
    if (cg->v2 && write_text(cg->pids_dir, "cgroup.kill", "1") == 0)
        return;
    /* v1: no cgroup.kill; sweep until empty (bounded) */
    for (int round = 0; round < 50; round++) {
        char path[700];
        snprintf(path, sizeof path, "%s/cgroup.procs", cg->pids_dir);
        FILE *f = fopen(path, "re");
        if (!f)
            return;
        int pid, n = 0;
        while (fscanf(f, "%d", &pid) == 1) {
            kill(pid, SIGKILL);
            n++;
        }
        fclose(f);
        if (n == 0)
            return;
        usleep(2000);
    }
}

bool mxc_cgroup_child(const mxc_cgroup *parent, const char *leaf, mxc_cgroup *child)
{
    memset(child, 0, sizeof *child);
    if (!parent->pids_dir[0] || parent->v2) /* v2: no processes in inner nodes; the holder is in the parent */
        return false;
    int n = snprintf(child->pids_dir, sizeof child->pids_dir, "%s/%s", parent->pids_dir, leaf);
    if (n < 0 || (size_t)n >= sizeof child->pids_dir || mkdir(child->pids_dir, 0755) < 0) {
        child->pids_dir[0] = '\0';
        return false;
    }
    snprintf(child->memory_dir, sizeof child->memory_dir, "%s", parent->memory_dir);
    return true;
}

static void remove_dir(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s", dir);
    DIR *d = opendir(path);
    if (d) { /* per-exec children first */
        struct dirent *de;
        while ((de = readdir(d)))
            if (de->d_type == DT_DIR && strncmp(de->d_name, "exec-", 5) == 0) {
                char sub[1000];
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                rmdir(sub);
            }
        closedir(d);
    }
    for (int tries = 0; tries < 100 && rmdir(path) < 0 && errno == EBUSY; tries++)
        usleep(5000);
}

void mxc_cgroup_remove(const mxc_cgroup *cg)
{
    if (cg->pids_dir[0])
        remove_dir(cg->pids_dir);
    if (cg->memory_dir[0] && strcmp(cg->memory_dir, cg->pids_dir) != 0)
        remove_dir(cg->memory_dir);
}
