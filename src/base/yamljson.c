/* yamljson.c — see yamljson.h. */
#include "yamljson.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 32

/* A scalar with a NUL in it ("\0" in a double-quoted one) would be cut
 * short by every C string that later carries it (a path, a key): refused. */
static bool has_nul(const yaml_node_t *n, mxc_error *e)
{
    if (!memchr(n->data.scalar.value, 0, n->data.scalar.length))
        return false;
    mxc_err(e, MXC_E_MALFORMED_REQUEST,
            "line %zu: a NUL character in a scalar is not accepted", n->start_mark.line + 1);
    return true;
}

static json_t *scalar(const yaml_node_t *n, mxc_error *e)
{
    const char *v = (const char *)n->data.scalar.value;
    if (has_nul(n, e))
        return NULL;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        if (!strcmp(v, "true"))
            return json_true();
        if (!strcmp(v, "false"))
            return json_false();
        if (!strcmp(v, "null") || !strcmp(v, "~") || !v[0])
            return json_null();
        char *end;
        errno = 0;
        long long i = strtoll(v, &end, 10);
        if (*v && !*end && errno == 0 && (v[0] != '0' || !v[1]))
            return json_integer(i);
    }
    return json_stringn(v, n->data.scalar.length);
}

static json_t *node(yaml_document_t *d, yaml_node_t *n, int depth, mxc_error *e)
{
    if (!n || depth > MAX_DEPTH) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "nested deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    if (n->tag && strncmp((const char *)n->tag, "tag:yaml.org,2002:", 18) != 0) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST,
                "line %zu: tag %s is not accepted", n->start_mark.line + 1, (const char *)n->tag);
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return scalar(n, e);
    case YAML_SEQUENCE_NODE: {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            json_t *v = node(d, yaml_document_get_node(d, *it), depth + 1, e);
            if (!v) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, v);
        }
        return a;
    }
    case YAML_MAPPING_NODE: {
        json_t *o = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(d, p->key);
            if (!k || k->type != YAML_SCALAR_NODE) {
                mxc_err(e, MXC_E_MALFORMED_REQUEST, "line %zu: a key is not a plain string", n->start_mark.line + 1);
                json_decref(o);
                return NULL;
            }
            const char *key = (const char *)k->data.scalar.value;
            if (has_nul(k, e)) {
                json_decref(o);
                return NULL;
            }
            if (json_object_get(o, key)) {
                mxc_err(e, MXC_E_MALFORMED_REQUEST, "line %zu: key %s appears twice", k->start_mark.line + 1, key);
                json_decref(o);
                return NULL;
            }
            json_t *v = node(d, yaml_document_get_node(d, p->value), depth + 1, e);
            if (!v) {
                json_decref(o);
                return NULL;
            }
            json_object_set_new(o, key, v);
        }
        return o;
    }
    default:
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "an empty document");
        return NULL;
    }
}

/* Anchors and aliases are refused before loading: libyaml would share the
 * node (and a "billion laughs" document multiplies it). */
static bool has_alias(FILE *f, mxc_error *e)
{
    yaml_parser_t p;
    yaml_event_t ev;
    bool found = false, done = false;
    if (!yaml_parser_initialize(&p))
        return true;
    yaml_parser_set_input_file(&p, f);
    while (!done && !found) {
        if (!yaml_parser_parse(&p, &ev)) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST,
                    "line %zu: %s", p.problem_mark.line + 1, p.problem ? p.problem : "not YAML");
            found = true;
            break;
        }
        if (ev.type == YAML_ALIAS_EVENT || (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.anchor) ||
            (ev.type == YAML_MAPPING_START_EVENT && ev.data.mapping_start.anchor) ||
            (ev.type == YAML_SEQUENCE_START_EVENT && ev.data.sequence_start.anchor)) {
            mxc_err(e, MXC_E_MALFORMED_REQUEST,
                    "line %zu: anchors and aliases are not accepted", ev.start_mark.line + 1);
            found = true;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return found;
}

json_t *mxc_yaml_load(FILE *f, mxc_error *e)
{
    if (has_alias(f, e))
        return NULL;
    rewind(f);
    yaml_parser_t p;
    yaml_document_t d;
    if (!yaml_parser_initialize(&p)) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_file(&p, f);
    json_t *out = NULL;
    if (!yaml_parser_load(&p, &d)) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST,
                "line %zu: %s", p.problem_mark.line + 1, p.problem ? p.problem : "not YAML");
    } else {
        out = node(&d, yaml_document_get_root_node(&d), 0, e);
        yaml_document_delete(&d);
    }
    yaml_parser_delete(&p);
    return out;
}

json_t *mxc_doc_load(FILE *f, bool yaml, mxc_error *e)
{
    if (yaml)
        return mxc_yaml_load(f, e);
    json_error_t je;
    json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "line %d: %s", je.line, je.text);
    return doc;
}
