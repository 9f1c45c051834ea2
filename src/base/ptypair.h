/* ptypair.h — a pseudo-terminal pair of a devpts instance, by descriptor.
 * Owns: opening a devpts instance's ptmx beneath a directory (no symlink,
 * no magic link on the way) and checking that it is devpts's, unlocking
 * it, sizing it, and its peer taken from the master (TIOCGPTPEER: never
 * by a /dev/pts/N path something else could have replaced). */
#ifndef MXC_PTYPAIR_H
#define MXC_PTYPAIR_H

typedef enum {
    MXC_PTY_OPEN = 1,   /* opening ptmx */
    MXC_PTY_NOT_DEVPTS, /* what was opened is not a devpts's (-ENOTTY) */
    MXC_PTY_UNLOCK,
    MXC_PTY_SIZE,
    MXC_PTY_PEER,       /* the peer, or its number */
} mxc_pty_step;

typedef struct {
    int master, slave; /* close-on-exec, O_NOCTTY */
    unsigned index;    /* the slave is /dev/pts/<index> of that instance */
} mxc_pty;

/* The pair of the ptmx at path beneath dirfd (AT_FDCWD: the working
 * directory), sized rows x cols unless both are 0: 0, or -errno with
 * *failed the step that failed (nothing left open). */
int mxc_pty_open(int dirfd, const char *path, unsigned short rows, unsigned short cols, mxc_pty *pty,
                 mxc_pty_step *failed);

#endif
