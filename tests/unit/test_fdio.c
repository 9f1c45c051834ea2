/* test_fdio.c — the whole-document JSON helpers (mxc_json_loadfd,
 * mxc_json_dumpfd) give what jansson's own json_loadfd / json_dumpfd give:
 * the same document, the same refusals (a duplicate key under
 * JSON_REJECT_DUPLICATES, an empty or truncated text), for a text larger
 * than the first read buffer too; a read error is an error.  A file replaced
 * whole (mxc_replace_at, synced or not) leaves no temporary, never writes
 * through a link; a tree removed by descriptor (dirtree.h) removes a planted
 * link, never what it names, and is removed whatever its depth.  A short
 * file read at a descriptor (mxc_read_small_at) is cut at the buffer, never
 * read through a link, and leaves the buffer as it was when it fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dirtree.h"
#include "fdio.h"

static int memfd_of(const char *text)
{
    int fd = mxc_text_memfd("t", text);
    CHECK(fd >= 0);
    return fd;
}

/* the document both loaders make of text (NULL when they refuse it), checked to agree */
static json_t *both_load(const char *text, size_t flags)
{
    int a = memfd_of(text), b = memfd_of(text);
    json_error_t ea, eb;
    json_t *ja = mxc_json_loadfd(a, flags, &ea), *jb = json_loadfd(b, flags, &eb);
    CHECK_MSG((ja == NULL) == (jb == NULL), "%s", text);
    CHECK(ja == NULL || json_equal(ja, jb));
    if (!ja && !jb)
        CHECK_MSG(!strcmp(ea.text, eb.text), "%s vs %s", ea.text, eb.text);
    close(a), close(b);
    json_decref(jb);
    return ja;
}

static void replace_and_remove(void)
{
    char top[] = "/tmp/mxc-fdio-XXXXXX";
    CHECK(mkdtemp(top) != NULL);
    int d = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK_INT_EQ(mxc_replace_at(d, "f", NULL, "one", 3, 0600), 0);
    CHECK_INT_EQ(mxc_replace_at(d, "f", ".f.tmp", "two!", 4, 0644), 0);
    json_t *o = json_pack("{s:i}", "a", 1);
    CHECK_INT_EQ(mxc_json_replace_at(d, "j", NULL, o), 0);
    json_decref(o);
    char buf[16] = {0};
    int fd = openat(d, "f", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 4 && !strcmp(buf, "two!"));
    close(fd);
    CHECK(faccessat(d, "f.new", F_OK, 0) < 0 && faccessat(d, ".f.tmp", F_OK, 0) < 0);
    /* unsynced: the same whole replacement, the same refusal of a link (below) */
    CHECK_INT_EQ(mxc_replace_at_unsynced(d, "u", NULL, "old", 3, 0600), 0);
    o = json_pack("{s:i}", "b", 2);
    CHECK_INT_EQ(mxc_json_replace_at_unsynced(d, "u", NULL, o), 0);
    json_decref(o);
    fd = openat(d, "u", O_RDONLY | O_CLOEXEC);
    memset(buf, 0, sizeof buf);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 7 && !strcmp(buf, "{\"b\":2}"));
    close(fd);
    CHECK(faccessat(d, "u.new", F_OK, 0) < 0);
    /* a copy of a known size: what is asked, or -EIO when the file ends sooner */
    int in = openat(d, "f", O_RDONLY | O_CLOEXEC), out = memfd_create("copy", MFD_CLOEXEC);
    CHECK_INT_EQ(mxc_copy_size(in, out, 3), 0);
    CHECK(pread(out, buf, sizeof buf, 0) == 3 && !memcmp(buf, "two", 3));
    CHECK_INT_EQ(mxc_copy_size(in, out, 5), -EIO);
    close(in), close(out);
    /* a link where the temporary goes: refused, what it names untouched */
    CHECK(symlinkat("/etc/hostname", d, "g.new") == 0);
    CHECK_INT_EQ(mxc_replace_at(d, "g", NULL, "x", 1, 0600), -ELOOP);
    CHECK(faccessat(d, "g", F_OK, 0) < 0);
    CHECK_INT_EQ(mxc_replace_at_unsynced(d, "g", NULL, "x", 1, 0600), -ELOOP);
    CHECK(faccessat(d, "g", F_OK, 0) < 0);
    /* a tree: a link in it to a directory outside is removed, not followed */
    char outside[] = "/tmp/mxc-fdio-out-XXXXXX", path[128];
    CHECK(mkdtemp(outside) != NULL);
    snprintf(path, sizeof path, "%s/keep", outside);
    CHECK(close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == 0);
    CHECK(mkdirat(d, "t", 0700) == 0 && mkdirat(d, "t/a", 0500) == 0 && symlinkat(outside, d, "t/l") == 0);
    CHECK_INT_EQ(mxc_remove_tree_at(d, "t"), 0);
    CHECK(faccessat(d, "t", F_OK, 0) < 0 && access(path, F_OK) == 0);
    CHECK_INT_EQ(mxc_remove_tree_at(d, "t"), 0); /* absent: 0 */
    /* deeper than the 256 levels a pass descends (a workload's nested workspace): removed whole,
     * read-only directories and a link at the bottom too */
    int cur = openat(d, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(mkdirat(cur, "deep", 0700) == 0);
    for (int i = 0; i < 1000; i++) {
        int next = openat(cur, i ? "d" : "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(next >= 0 && mkdirat(next, "d", 0700) == 0);
        if (i % 7 == 0)
            CHECK(fchmod(next, 0500) == 0);
        close(cur);
        cur = next;
    }
    CHECK(symlinkat(outside, cur, "l") == 0);
    close(cur);
    CHECK_INT_EQ(mxc_remove_tree_at(d, "deep"), 0);
    CHECK(faccessat(d, "deep", F_OK, 0) < 0 && access(path, F_OK) == 0);
    CHECK_INT_EQ(mxc_remove_tree_at(AT_FDCWD, outside), 0);
    CHECK_INT_EQ(mxc_remove_tree_at(AT_FDCWD, top), 0);
    CHECK(access(top, F_OK) < 0);
    close(d);
}

/* a short file read at a descriptor: its text with a NUL, cut at size-1 bytes; an empty file 0;
 * a missing file, a link (never followed) or a directory -errno with the buffer untouched */
static void read_small(void)
{
    char top[] = "/tmp/mxc-fdio-XXXXXX", buf[8];
    CHECK(mkdtemp(top) != NULL);
    int d = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK_INT_EQ(mxc_replace_at_unsynced(d, "f", NULL, "abc\n", 4, 0600), 0);
    CHECK_INT_EQ(mxc_replace_at_unsynced(d, "long", NULL, "0123456789", 10, 0600), 0);
    CHECK_INT_EQ(mxc_replace_at_unsynced(d, "empty", NULL, "", 0, 0600), 0);
    CHECK(symlinkat("f", d, "l") == 0 && mkdirat(d, "dir", 0700) == 0);
    CHECK_INT_EQ(mxc_read_small_at(d, "f", buf, sizeof buf), 4);
    CHECK(!strcmp(buf, "abc\n"));
    CHECK_INT_EQ(mxc_read_small_at(d, "long", buf, sizeof buf), 7);
    CHECK(!strcmp(buf, "0123456"));
    CHECK_INT_EQ(mxc_read_small_at(d, "long", buf, 1), 0);
    CHECK(!strcmp(buf, ""));
    strcpy(buf, "keep");
    CHECK_INT_EQ(mxc_read_small_at(d, "empty", buf, sizeof buf), 0);
    CHECK(!strcmp(buf, ""));
    strcpy(buf, "keep");
    CHECK_INT_EQ(mxc_read_small_at(d, "missing", buf, sizeof buf), -ENOENT);
    CHECK_INT_EQ(mxc_read_small_at(d, "l", buf, sizeof buf), -ELOOP);
    CHECK_INT_EQ(mxc_read_small_at(d, "dir", buf, sizeof buf), -EISDIR);
    CHECK(!strcmp(buf, "keep"));
    /* AT_FDCWD: a path as open(2) takes it (the kernel's files, whole in one read) */
    char stat[1024];
    CHECK(mxc_read_small_at(AT_FDCWD, "/proc/self/stat", stat, sizeof stat) > 0 && strchr(stat, ')'));
    CHECK_INT_EQ(mxc_remove_tree_at(AT_FDCWD, top), 0);
    close(d);
}

int main(void)
{
    replace_and_remove();
    read_small();
    json_t *j = both_load("{\"a\": [1, 2, {\"b\": \"c\"}], \"d\": null}", 0);
    CHECK(j && json_integer_value(json_array_get(json_object_get(j, "a"), 1)) == 2);
    json_decref(j);
    CHECK(both_load("{\"a\": 1, \"a\": 2}", JSON_REJECT_DUPLICATES) == NULL);
    CHECK(both_load("", 0) == NULL);
    CHECK(both_load("{\"a\": ", 0) == NULL);
    CHECK(both_load("{} trailing", 0) == NULL);

    /* larger than the first 4096-byte buffer: grown, nothing lost at the seams */
    json_t *big = json_array();
    for (int i = 0; i < 5000; i++)
        json_array_append_new(big, json_sprintf("entry-%d", i));
    char *text = json_dumps(big, JSON_INDENT(1));
    j = both_load(text, JSON_REJECT_DUPLICATES);
    CHECK(j && json_equal(j, big));
    json_decref(j);

    /* dumped whole: the same bytes as json_dumpfd writes */
    int fd = memfd_create("out", MFD_CLOEXEC);
    CHECK_INT_EQ(mxc_json_dumpfd(big, fd, JSON_INDENT(1)), 0);
    size_t len = strlen(text);
    char *back = calloc(1, len + 2);
    CHECK_INT_EQ(pread(fd, back, len + 1, 0), (long long)len);
    CHECK(!strcmp(back, text));
    close(fd);
    free(back);
    free(text);
    json_decref(big);

    /* a read error is an error, not a document */
    int p[2];
    CHECK(pipe(p) == 0);
    json_error_t e;
    CHECK(mxc_json_loadfd(p[1], 0, &e) == NULL); /* the write end: EBADF on read */
    CHECK(strstr(e.text, "read error") != NULL);
    close(p[0]), close(p[1]);
    /* a failed write is -1 with errno */
    CHECK(pipe(p) == 0);
    json_t *o = json_pack("{s:i}", "a", 1);
    errno = 0;
    CHECK_INT_EQ(mxc_json_dumpfd(o, p[0], 0), -1);
    CHECK(errno != 0);
    json_decref(o);
    close(p[0]), close(p[1]);

    /* read to the end: grown past the first buffer, NUL-terminated, bounded */
    fd = memfd_create("in", MFD_CLOEXEC);
    char chunk[1000];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 10; i++)
        CHECK(mxc_write_all(fd, chunk, sizeof chunk));
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    size_t got = 0;
    char *all = mxc_read_all(fd, SIZE_MAX, &got);
    CHECK(all && got == 10000 && all[9999] == 'x' && all[10000] == '\0');
    free(all);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    all = mxc_read_all(fd, 4097, &got);
    CHECK(all && got == 4097 && all[4097] == '\0');
    free(all);
    close(fd);
    CHECK(pipe(p) == 0);
    close(p[1]);
    int dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* a read error: an end, or (whole) an error */
    all = mxc_read_all(dfd, SIZE_MAX, &got);
    CHECK(all && got == 0);
    free(all);
    errno = 0;
    CHECK(mxc_read_whole(dfd, SIZE_MAX, &got) == NULL && errno == EISDIR);
    close(dfd);
    all = mxc_read_all(p[0], SIZE_MAX, &got); /* empty: "" */
    CHECK(all && got == 0 && all[0] == '\0');
    free(all);
    close(p[0]);
    return CHECK_DONE();
}
