/* drvcfg.c — see drvcfg.h. */
#include "drvcfg.h"

#include <math.h>
#include <stdio.h>

#define WHOLE_MAX 9007199254740992.0 /* 2^53 */

static json_t *value_json(const Google__Protobuf__Value *v, const char *path, mxc_error *e);

static json_t *struct_json(const Google__Protobuf__Struct *s, const char *path, mxc_error *e)
{
    json_t *o = json_object();
    for (size_t i = 0; o && s && i < s->n_fields; i++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s.%s", path, s->fields[i]->key);
        json_t *v = value_json(s->fields[i]->value, sub, e);
        if (!v || json_object_set_new(o, s->fields[i]->key, v) < 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *list_json(const Google__Protobuf__ListValue *l, const char *path, mxc_error *e)
{
    json_t *a = json_array();
    for (size_t i = 0; a && l && i < l->n_values; i++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        json_t *v = value_json(l->values[i], sub, e);
        if (!v || json_array_append_new(a, v) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *number_json(double d, const char *path, mxc_error *e)
{
    if (!isfinite(d)) {
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s is not a finite number", path);
        return NULL;
    }
    if (d >= -WHOLE_MAX && d <= WHOLE_MAX && d == (double)(json_int_t)d)
        return json_integer((json_int_t)d);
    return json_real(d);
}

static json_t *value_json(const Google__Protobuf__Value *v, const char *path, mxc_error *e)
{
    switch (v ? v->kind_case : GOOGLE__PROTOBUF__VALUE__KIND__NOT_SET) {
    case GOOGLE__PROTOBUF__VALUE__KIND_NULL_VALUE:
        return json_null();
    case GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE:
        return number_json(v->number_value, path, e);
    case GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE:
        return json_string(v->string_value);
    case GOOGLE__PROTOBUF__VALUE__KIND_BOOL_VALUE:
        return json_boolean(v->bool_value);
    case GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE:
        return struct_json(v->struct_value, path, e);
    case GOOGLE__PROTOBUF__VALUE__KIND_LIST_VALUE:
        return list_json(v->list_value, path, e);
    default:
        mxc_err(e, MXC_E_MALFORMED_REQUEST, "%s has no value", path);
        return NULL;
    }
}

json_t *osd_driver_config_json(const Google__Protobuf__Struct *s, mxc_error *e)
{
    json_t *o = struct_json(s, "template.driver_config", e);
    if (!o && !e->message[0])
        mxc_err(e, MXC_E_BACKEND_ERROR, "out of memory reading template.driver_config");
    return o;
}
