/* cmd_list.c — `list [--format table|json] [--quiet]`: the store's containers, in runc's
 * table or document, every half-made one (no readable state) shown as stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "lifecycle.h"
#include "store.h"

/* list's containers, and every container directory without a readable state (a create killed
 * before it wrote one) shown as stopped, in id order, so that delete --force can be given its name. */
static json_t *with_half_made(int rootfd, json_t *l)
{
    json_t *ids = oci_store_ids(rootfd), *out = json_array(), *id, *c;
    size_t k, m;
    json_array_foreach(ids, k, id) {
        json_t *found = NULL;
        json_array_foreach(l, m, c) if (!strcmp(json_string_value(json_object_get(c, "id")), json_string_value(id)))
            found = c;
        json_array_append_new(out, found ? json_incref(found) : oci_state_partial(json_string_value(id)));
    }
    json_decref(ids);
    json_decref(l);
    return out;
}

/* runc's list document: one line, its fields in its order (callers match it as text) */
static void print_document(json_t *l)
{
    json_t *out = json_array(), *c;
    size_t k;
    const char *keys[] = {"ociVersion", "id", "pid", "status", "bundle", "rootfs", "created", "annotations", "owner"};
    json_array_foreach(l, k, c) {
        json_t *o = json_object();
        for (size_t n = 0; n < sizeof keys / sizeof keys[0]; n++) {
            json_t *v = json_object_get(c, keys[n]);
            if (v && !(json_is_object(v) && !json_object_size(v)))
                json_object_set(o, keys[n], v);
        }
        json_array_append_new(out, o);
    }
    char *t = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    printf("%s\n", t ? t : "[]");
    free(t);
    json_decref(out);
}

static void print_table(json_t *l)
{
    json_t *c;
    size_t k;
    printf("%-12s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
    json_array_foreach(l, k, c)
        printf("%-12s %-8d %-10s %-40s %-32s %s\n", json_string_value(json_object_get(c, "id")),
               (int)json_integer_value(json_object_get(c, "pid")), json_string_value(json_object_get(c, "status")),
               json_string_value(json_object_get(c, "bundle")), json_string_value(json_object_get(c, "created")),
               "root");
}

int oci_cmd_list(oci_cli *cli, mxc_error *e)
{
    const char *format = "table";
    bool quiet = false;
    oci_flag fl[] = {{"format", 'f', true, &format, NULL, NULL, NULL}, {"quiet", 'q', false, NULL, &quiet, NULL, NULL}};
    if ((cli->i = oci_parse_flags(cli->argc, cli->argv, cli->i, fl, 2, cli->name, e)) < 0)
        return -1;
    if (strcmp(format, "table") && strcmp(format, "json"))
        return mxc_err(e, MXC_E_MALFORMED_REQUEST, "invalid format option");
    json_t *l = with_half_made(cli->rootfd, oci_list(cli->rootfd)), *c;
    size_t k;
    if (!strcmp(format, "json"))
        print_document(l);
    else if (quiet)
        json_array_foreach(l, k, c) printf("%s\n", json_string_value(json_object_get(c, "id")));
    else
        print_table(l);
    json_decref(l);
    return 0;
}
