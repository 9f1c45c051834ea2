/* mxc-nft — mxc's rule installer: runs one nftables script, read from fd 0
 * (at most 4 MiB), in this process's network namespace as one transaction
 * through libnftables; its error text goes to stderr; exit 0 once applied.
 *
 * src/net/stack.c joins the sandbox's network namespace in a child and
 * execs this, so libnftables and its five libraries are loaded only where
 * rules are installed, and never into mxc-exec (static-pie: a dlopen there
 * would load a second libc, locked to the version linked in).  It takes
 * no arguments and no environment, and changes nothing but the rule set of
 * the namespace it runs in. */
#include <nftables/libnftables.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCRIPT_MAX (4u << 20)

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fputs("mxc-nft takes no arguments: the script comes on stdin\n", stderr);
        return 2;
    }
    char *script = malloc(SCRIPT_MAX + 1);
    size_t n = 0;
    while (script && n < SCRIPT_MAX) {
        ssize_t r = read(0, script + n, SCRIPT_MAX - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "cannot read the rule set: %s", strerror(errno));
            return 1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (!script || n == SCRIPT_MAX) {
        fputs(script ? "the rule set is larger than 4 MiB" : "out of memory", stderr);
        return 1;
    }
    script[n] = '\0';
    struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
    if (!ctx) {
        fputs("libnftables: cannot create a context", stderr);
        return 1;
    }
    nft_ctx_buffer_output(ctx);
    nft_ctx_buffer_error(ctx);
    int rc = nft_run_cmd_from_buffer(ctx, script);
    if (rc != 0)
        fputs(nft_ctx_get_error_buffer(ctx), stderr);
    nft_ctx_free(ctx);
    free(script);
    return rc != 0;
}
