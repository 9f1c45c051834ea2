/* cmds.h — mxc-oci's commands, one file each (src/oci/cmd_*.c), and the
 * command-line helpers they share (main.c).
 * Owns: the handler signature and the table main.c dispatches on.  A handler
 * reads its flags and arguments from cli (argv[cli->i] is its first), does its
 * work, and returns the exit status (>= 0, its output printed), or -1 with e
 * set: main prints e's message one way (runc's error line, and the log) and
 * exits with cli->fail_status (1 unless the handler set another). */
#ifndef MXC_OCI_CMDS_H
#define MXC_OCI_CMDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef struct {
    int argc;
    char **argv;
    int i;              /* the first argument after the command's name */
    const char *name;   /* the command as given */
    int rootfd;         /* the store (--root); -1 for a command that needs none */
    bool systemd;       /* --systemd-cgroup, or --cgroup-manager systemd */
    int cgroup;         /* --cgroup-manager: the backend a new container's cgroup is given (cgroup.h) */
    int fail_status;    /* the exit status of a -1 return (1; exec's own failure 255) */
} oci_cli;

typedef int (*oci_cmd_fn)(oci_cli *cli, mxc_error *e);

typedef struct {
    const char *name;
    oci_cmd_fn run;
    bool store;         /* runs as root over the store (--root opened, --preserve-fds judged first) */
    bool sealed;        /* starts processes in a container: runs from a sealed copy (selfclone.h) */
    const char *help;
} oci_cmd;

/* The table (main.c), ended by a {NULL} entry. */
extern const oci_cmd oci_cmds[];

/* A flag as urfave/cli (runc's parser) takes it. */
typedef struct {
    const char *name;   /* long */
    char shortname;     /* 0: none */
    bool value;         /* takes a value */
    const char **str;
    bool *set;
    const char **list;  /* a repeatable flag: each value appended (list has room for argc) */
    size_t *nlist;
} oci_flag;

/* -x, --name, -name, --name=V, --name V from argv[i]; they end at the first argument or "--".
 * The index of the first argument, or -1 with e set (cmd names the command in the message). */
int oci_parse_flags(int argc, char **argv, int i, const oci_flag *fl, size_t n, const char *cmd, mxc_error *e);
/* cli's flags, then its one container id into *id: 0, or -1 with e set. */
int oci_cli_flags_id(oci_cli *cli, const oci_flag *fl, size_t n, const char **id, mxc_error *e);
/* cli's one switch (--name, -shortname), then its one container id: 0, or -1 with e set. */
int oci_cli_switch_id(oci_cli *cli, const char *name, char shortname, bool *set, const char **id, mxc_error *e);
/* the container id at argv[i], or -1 with runc's "requires exactly 1 argument(s)" */
int oci_one_id(const oci_cli *cli, const char **id, mxc_error *e);
/* --preserve-fds N: its number, -1 when not a decimal count from 0 to 1000 */
int oci_count_of(const char *s);
/* --preserve-fds given something oci_count_of refuses: -1 with e saying why */
int oci_bad_count(const char *s, mxc_error *e);
void oci_print_json(json_t *j);

int oci_cmd_create(oci_cli *cli, mxc_error *e);     /* cmd_create.c */
int oci_cmd_run(oci_cli *cli, mxc_error *e);        /* cmd_create.c: create's flags and more */
int oci_cmd_start(oci_cli *cli, mxc_error *e);      /* cmd_start.c */
int oci_cmd_state(oci_cli *cli, mxc_error *e);      /* cmd_state.c */
int oci_cmd_kill(oci_cli *cli, mxc_error *e);       /* cmd_kill.c */
int oci_cmd_delete(oci_cli *cli, mxc_error *e);     /* cmd_delete.c */
int oci_cmd_pause(oci_cli *cli, mxc_error *e);      /* cmd_pause.c: pause and resume */
int oci_cmd_update(oci_cli *cli, mxc_error *e);     /* cmd_update.c */
int oci_cmd_events(oci_cli *cli, mxc_error *e);     /* cmd_events.c */
int oci_cmd_exec(oci_cli *cli, mxc_error *e);       /* cmd_exec.c */
int oci_cmd_ps(oci_cli *cli, mxc_error *e);         /* cmd_ps.c */
int oci_cmd_list(oci_cli *cli, mxc_error *e);       /* cmd_list.c */
int oci_cmd_spec(oci_cli *cli, mxc_error *e);       /* cmd_spec.c */
int oci_cmd_features(oci_cli *cli, mxc_error *e);   /* cmd_features.c */
int oci_cmd_later(oci_cli *cli, mxc_error *e);      /* cmd_features.c: checkpoint, restore (not yet) */

#endif
