/* test_selfclone.c — src/oci/selfclone.c's copy size (oci_elf_exec_size): the bytes exec needs
 * of an ELF file, from headers made here and from this test's own binary:
 * - the end of the last segment a program header names, the headers' own end at least;
 * - the whole file for anything else: not ELF, 32-bit, a program header table past what was
 *   read, a segment past the file's end;
 * - this binary's copy is executable: that many bytes, section headers zeroed, run by execveat. */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "selfclone.h"

static unsigned char head[4096];

static void make(int nph, const unsigned long long (*seg)[2])
{
    memset(head, 0, sizeof head);
    Elf64_Ehdr eh = {.e_type = ET_DYN, .e_phoff = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr),
                     .e_phnum = (Elf64_Half)nph, .e_ehsize = sizeof(Elf64_Ehdr), .e_shoff = 900000,
                     .e_shnum = 30, .e_shentsize = sizeof(Elf64_Shdr)};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
    memcpy(head, &eh, sizeof eh);
    for (int i = 0; i < nph; i++) {
        Elf64_Phdr ph = {.p_type = i ? PT_NOTE : PT_LOAD, .p_offset = seg[i][0], .p_filesz = seg[i][1]};
        memcpy(head + sizeof eh + i * sizeof ph, &ph, sizeof ph);
    }
}

static void shapes(void)
{
    const unsigned long long segs[3][2] = {{0, 4000}, {8192, 1000}, {100, 20}};
    make(3, segs);
    CHECK_INT_EQ(oci_elf_exec_size(head, sizeof head, 1000000), 9192); /* the last segment's end */
    const unsigned long long empty[1][2] = {{0, 0}};
    make(1, empty);
    CHECK_INT_EQ(oci_elf_exec_size(head, sizeof head, 1000000), sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr));
    const unsigned long long past[2][2] = {{0, 4000}, {990000, 20000}};
    make(2, past);
    CHECK_INT_EQ(oci_elf_exec_size(head, sizeof head, 1000000), 1000000); /* a segment past the end */
    make(3, segs);
    CHECK_INT_EQ(oci_elf_exec_size(head, 100, 1000000), 1000000); /* its table not read */
    head[EI_CLASS] = ELFCLASS32;
    CHECK_INT_EQ(oci_elf_exec_size(head, sizeof head, 1000000), 1000000);
    memcpy(head, "#!/bin/sh\n", 10);
    CHECK_INT_EQ(oci_elf_exec_size(head, sizeof head, 1000000), 1000000);
    CHECK_INT_EQ(oci_elf_exec_size(head, 10, 10), 10);
}

/* This binary, cut where oci_elf_exec_size says and its section headers zeroed (as the copy is),
 * runs: with "--copy" it exits 42. */
static void own_copy_runs(char *self)
{
    int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    CHECK(src >= 0 && fstat(src, &st) == 0);
    ssize_t got = pread(src, head, sizeof head, 0);
    long long size = oci_elf_exec_size(head, (size_t)got, st.st_size);
    CHECK_MSG(size > 0 && size <= st.st_size, "%lld of %lld", size, (long long)st.st_size);
    int mfd = memfd_create("copy", MFD_CLOEXEC);
    char *buf = malloc((size_t)size);
    CHECK(buf && pread(src, buf, (size_t)size, 0) == size);
    Elf64_Ehdr eh;
    memcpy(&eh, buf, sizeof eh);
    eh.e_shoff = 0;
    eh.e_shnum = 0;
    eh.e_shstrndx = SHN_UNDEF;
    memcpy(buf, &eh, sizeof eh);
    CHECK(write(mfd, buf, (size_t)size) == size);
    free(buf);
    close(src);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {self, "--copy", NULL}, *envp[] = {NULL};
        syscall(SYS_execveat, mfd, "", argv, envp, AT_EMPTY_PATH);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 42, "status %#x", status);
    close(mfd);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--copy"))
        return 42;
    shapes();
    own_copy_runs(argv[0]);
    return CHECK_DONE();
}
