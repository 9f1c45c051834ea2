/* test_fdio.c — the whole-document JSON helpers (mxc_json_loadfd,
 * mxc_json_dumpfd) give what jansson's own json_loadfd / json_dumpfd give:
 * the same document, the same refusals (a duplicate key under
 * JSON_REJECT_DUPLICATES, an empty or truncated text), for a text larger
 * than the first read buffer too; a read error is an error. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
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

int main(void)
{
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
    all = mxc_read_all(p[0], SIZE_MAX, &got); /* empty: "" */
    CHECK(all && got == 0 && all[0] == '\0');
    free(all);
    close(p[0]);
    return CHECK_DONE();
}
