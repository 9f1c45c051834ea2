/* cmdline.c — argv to the wire's commandLine (mxc.h: mxc_command_line). */
#include <stdio.h>
#include <stdlib.h>

#include "mxc.h"

char *mxc_command_line(const char *const *argv, size_t argc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    fputs("exec", m);
    for (size_t i = 0; i < argc; i++) {
        fputs(" '", m);
        for (const char *p = argv[i]; *p; p++)
            if (*p == '\'')
                fputs("'\\''", m);
            else
                fputc(*p, m);
        fputc('\'', m);
    }
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
