/* selfclone.c — see selfclone.h. */
#include "selfclone.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "helpers.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

#define SELF_ENV "MXC_OCI_SELF_EXE" /* the copied file's path, from the copier to the copy */
#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

static bool is_clone(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    if (fd >= 0)
        close(fd);
    return seals >= 0 && (seals & SEALS) == SEALS;
}

long long oci_elf_exec_size(const unsigned char *head, size_t len, long long size)
{
    Elf64_Ehdr eh;
    if (len < sizeof eh || size < (long long)sizeof eh)
        return size;
    memcpy(&eh, head, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM ||
        eh.e_phoff > len || (len - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
        return size; /* not what this build makes, or its table past what was read: the whole file */
    unsigned long long end = eh.e_phoff + (unsigned long long)eh.e_phnum * sizeof(Elf64_Phdr);
    if (end < eh.e_ehsize)
        end = eh.e_ehsize;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, head + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_offset > (unsigned long long)size || ph.p_filesz > (unsigned long long)size - ph.p_offset)
            return size; /* a segment past the file's end: the kernel's to refuse, on the whole file */
        if (ph.p_offset + ph.p_filesz > end)
            end = ph.p_offset + ph.p_filesz;
    }
    return (long long)end;
}

/* The part of the binary at src that exec reads (oci_elf_exec_size) into mfd; where that is less
 * than the file, its ELF header says it has no section headers (they, the symbols and the debug
 * information are not copied: no tool is to read past the end).  0 or -errno. */
static int copy_loaded(int src, int mfd)
{
    unsigned char head[4096];
    struct stat st;
    ssize_t got = fstat(src, &st) < 0 ? -1 : pread(src, head, sizeof head, 0);
    if (got < 0)
        return -errno;
    long long size = oci_elf_exec_size(head, (size_t)got, st.st_size);
    int rc = mxc_copy_size(src, mfd, size);
    if (rc < 0 || size == st.st_size)
        return rc;
    Elf64_Ehdr eh;
    memcpy(&eh, head, sizeof eh);
    eh.e_shoff = 0;
    eh.e_shnum = 0;
    eh.e_shstrndx = SHN_UNDEF;
    return pwrite(mfd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh ? 0 : -EIO;
}

int oci_selfclone(char **argv, mxc_error *e)
{
#ifdef RUNNING_ON_VALGRIND
    if (RUNNING_ON_VALGRIND) /* scripts/valgrind-oci.sh: valgrind cannot exec a memfd; never a production path */
        return 0;
#endif
    if (is_clone()) {
        prctl(PR_SET_NAME, "mxc-oci", 0, 0, 0); /* exec'd by descriptor, it was named by the fd's number */
        mxc_helper_set_self(getenv(SELF_ENV));  /* mxc-proxy and the rest beside the file copied */
        unsetenv(SELF_ENV);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = '\0';
    if (setenv(SELF_ENV, self, 1) < 0) /* always ours: a value the caller gave is replaced */
        return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.selfclone", errno, NULL, "setenv");
    int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int mfd = memfd_create("mxc-oci", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int err = src < 0 || mfd < 0 ? errno : -copy_loaded(src, mfd);
    if (!err && fcntl(mfd, F_ADD_SEALS, SEALS) < 0)
        err = errno;
    if (src >= 0)
        close(src);
    if (!err) {
        syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
        err = errno;
    }
    if (mfd >= 0)
        close(mfd);
    return mxc_err_os(e, MXC_E_BACKEND_ERROR, "oci.selfclone", err, NULL,
                      "cannot run from a sealed copy of mxc-oci (a process it starts in a container must never "
                      "have the host's binary as /proc/self/exe)");
}
