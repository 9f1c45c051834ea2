/* pstable.c — see pstable.h: ps(1)'s table of a container's processes. */
#include "pstable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The index of the PID column in ps(1)'s header, or -1. */
static int pid_column(const char *header)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", header);
    char *save, *w = strtok_r(buf, " \t", &save);
    for (int i = 0; w; i++, w = strtok_r(NULL, " \t", &save))
        if (!strcmp(w, "PID"))
            return i;
    return -1;
}

static long field(const char *line, int idx)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    char *save, *w = strtok_r(buf, " \t", &save);
    for (int i = 0; w && i < idx; i++)
        w = strtok_r(NULL, " \t", &save);
    char *end;
    long v = w ? strtol(w, &end, 10) : -1;
    return w && !*end ? v : -1;
}

int oci_ps_table(json_t *pids, char **opts, size_t nopts, mxc_error *e)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.ps", errno, NULL, "pipe");
    fflush(NULL);
    pid_t c = fork();
    if (c < 0) {
        close(p[0]);
        close(p[1]);
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.ps", errno, NULL, "fork");
    }
    if (c == 0) {
        char **argv = calloc(nopts + 3, sizeof *argv);
        size_t n = 0;
        if (!argv)
            _exit(127);
        argv[n++] = "ps";
        if (!nopts)
            argv[n++] = "-ef";
        for (size_t i = 0; i < nopts; i++)
            argv[n++] = opts[i];
        argv[n] = NULL;
        if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
            _exit(127);
        execvp("ps", argv);
        fprintf(stderr, "ps: %s\n", strerror(errno));
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    char *line = NULL, *all = NULL;
    size_t cap = 0, alen = 0;
    ssize_t len;
    int col = -2;
    FILE *mem = open_memstream(&all, &alen);
    while (f && mem && (len = getline(&line, &cap, f)) >= 0) {
        if (col == -2) { /* the header */
            col = pid_column(line);
            fputs(line, mem);
            continue;
        }
        long pid = col >= 0 ? field(line, col) : -1;
        size_t k;
        json_t *v;
        json_array_foreach(pids, k, v) if (json_integer_value(v) == pid) {
            fputs(line, mem);
            break;
        }
    }
    free(line);
    if (f)
        fclose(f);
    else
        close(p[0]);
    if (mem)
        fclose(mem);
    int ws = 0;
    while (waitpid(c, &ws, 0) < 0 && errno == EINTR)
        ;
    int rc = 0;
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "ps: %s", all && *all ? all : "failed");
    else if (col < 0)
        rc = mxc_err(e, MXC_E_BACKEND_ERROR, "couldn't find PID field in ps output");
    else
        fputs(all ? all : "", stdout);
    free(all);
    return rc;
}
