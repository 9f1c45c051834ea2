/* calls.c — see calls.h. */
#include "calls.h"

#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "mxc.h"
#include "osdpb.h"
#include "pbcheck.h"
#include "spec.h"
#include "workspace.h"

#define SVC "/openshell.compute.v1.ComputeDriver/"

/* The request's wire form before protoc-c unpacks it: no string with a NUL byte (it would be
 * cut there) or that is not UTF-8, no nesting deeper than the unpacking may recurse
 * (pbcheck.h). */
static bool wire_ok(const ProtobufCMessageDescriptor *d, const uint8_t *msg, size_t len, osd_reply *out)
{
    char path[256];
    int rc = osd_pb_check(d, msg, len, path, sizeof path);
    if (rc == OSD_PB_NUL)
        osd_refuse(out, OSD_INVALID_ARGUMENT, "%s holds a NUL byte", path);
    else if (rc == OSD_PB_UTF8)
        osd_refuse(out, OSD_INVALID_ARGUMENT, "%s is not UTF-8 (a proto3 string)", path);
    else if (rc == OSD_PB_DEEP)
        osd_refuse(out, OSD_INVALID_ARGUMENT, "%s nests messages more than %d deep", path, OSD_PB_MAX_DEPTH);
    return rc == OSD_PB_OK;
}

static int status_of(mxc_code c)
{
    switch (c) {
    case MXC_E_MALFORMED_REQUEST:
    case MXC_E_MALFORMED_ID:
    case MXC_E_POLICY_VALIDATION:
        return OSD_INVALID_ARGUMENT;
    case MXC_E_UNSUPPORTED_CONTAINMENT:
    case MXC_E_UNSUPPORTED_PHASE:
    case MXC_E_BACKEND_UNAVAILABLE:
        return OSD_FAILED_PRECONDITION;
    case MXC_E_STALE_ID:
    case MXC_E_NOT_PROVISIONED:
        return OSD_NOT_FOUND;
    default:
        return OSD_INTERNAL;
    }
}

static void refuse_error(osd_reply *out, const mxc_error *e)
{
    osd_refuse(out, status_of(e->code), "%s", e->message);
}

/* msg packed and framed into out (its size first: protoc-c packs into a caller's buffer). */
static void answer(osd_reply *out, const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return osd_refuse(out, OSD_RESOURCE_EXHAUSTED, "out of memory packing the reply");
    n = protobuf_c_message_pack(msg, buf);
    out->status = OSD_OK;
    osd_reply_frame(out, buf, n);
    free(buf);
}

static void get_capabilities(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    const osd_driver *d = ctx;
    Openshell__Compute__V1__GetCapabilitiesResponse r = OPENSHELL__COMPUTE__V1__GET_CAPABILITIES_RESPONSE__INIT;
    r.driver_name = "mxc";
    /* the contract has no field for it: the version string says whether creates can work */
    r.driver_version = d->have_supervisor ? MXC_VERSION " (supervisor configured)"
                                          : MXC_VERSION " (no supervisor configured: creates are refused)";
    r.gateway_manages_lifecycle = false; /* sandboxes outlive the gateway; the driver keeps them */
    answer(out, &r.base);
}

static void get_listener_requirements(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    const osd_driver *d = ctx;
    Openshell__Compute__V1__GetGatewayListenerRequirementsResponse r =
        OPENSHELL__COMPUTE__V1__GET_GATEWAY_LISTENER_REQUIREMENTS_RESPONSE__INIT;
    Openshell__Compute__V1__GatewayListenerRequirement q = OPENSHELL__COMPUTE__V1__GATEWAY_LISTENER_REQUIREMENT__INIT;
    Openshell__Compute__V1__GatewayListenerRequirement *qs[1] = {&q};
    if (d->rt.gateway && d->rt.gateway->literal) { /* a name: wherever it resolves, nothing to ask */
        q.reason = "the sandboxes' governed egress admits exactly this address and port (--gateway-endpoint)";
        q.selector_case = OPENSHELL__COMPUTE__V1__GATEWAY_LISTENER_REQUIREMENT__SELECTOR_EXACT_BIND_ADDRESS;
        q.exact_bind_address = (char *)d->rt.gateway->entry;
        r.n_requirements = 1;
        r.requirements = qs;
    }
    answer(out, &r.base);
}

static void validate_create(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    const osd_driver *d = ctx;
    if (!wire_ok(&openshell__compute__v1__validate_sandbox_create_request__descriptor, msg, len, out))
        return;
    Openshell__Compute__V1__ValidateSandboxCreateRequest *req =
        openshell__compute__v1__validate_sandbox_create_request__unpack(NULL, len, msg);
    if (!req)
        return osd_refuse(out, OSD_INVALID_ARGUMENT, "the request is not a ValidateSandboxCreateRequest");
    mxc_error e = {0};
    osd_limits lim;
    osd_judge j = {&d->cfg, d->have_supervisor};
    json_t *fragment = NULL;
    if (!req->sandbox)
        osd_refuse(out, OSD_INVALID_ARGUMENT, "sandbox is missing");
    else if (osd_spec_check(req->sandbox, &j, &lim, &fragment, &e) < 0 ||
             osd_sbx_grants_ok(&d->rt, fragment, &e) < 0)
        refuse_error(out, &e);
    else {
        Openshell__Compute__V1__ValidateSandboxCreateResponse r =
            OPENSHELL__COMPUTE__V1__VALIDATE_SANDBOX_CREATE_RESPONSE__INIT;
        answer(out, &r.base);
    }
    json_decref(fragment); /* what CreateSandbox makes of the policy (bundle.h) */
    mxc_error_clear(&e);
    openshell__compute__v1__validate_sandbox_create_request__free_unpacked(req, NULL);
}

static void get_sandbox(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    const osd_driver *d = ctx;
    if (!wire_ok(&openshell__compute__v1__get_sandbox_request__descriptor, msg, len, out))
        return;
    Openshell__Compute__V1__GetSandboxRequest *req = openshell__compute__v1__get_sandbox_request__unpack(NULL, len, msg);
    if (!req)
        return osd_refuse(out, OSD_INVALID_ARGUMENT, "the request is not a GetSandboxRequest");
    mxc_error e = {0};
    pb_sandbox *sb = NULL;
    int found = osd_id_is_valid(req->sandbox_id) ? osd_store_get(&d->store, req->sandbox_id, &sb, &e) : -2;
    if (found == -2)
        osd_refuse(out, OSD_INVALID_ARGUMENT, "sandbox_id is %s", req->sandbox_id[0] ? "malformed" : "empty");
    else if (found < 0)
        refuse_error(out, &e);
    else if (!found || (req->sandbox_name[0] && strcmp(req->sandbox_name, sb->name)))
        osd_refuse(out, OSD_NOT_FOUND, "no sandbox %s%s%s", req->sandbox_id, req->sandbox_name[0] ? " named " : "",
                   req->sandbox_name);
    else {
        Openshell__Compute__V1__GetSandboxResponse r = OPENSHELL__COMPUTE__V1__GET_SANDBOX_RESPONSE__INIT;
        osd_sbx_observe(&d->rt, sb);
        r.sandbox = sb;
        answer(out, &r.base);
    }
    if (sb)
        openshell__compute__v1__driver_sandbox__free_unpacked(sb, NULL);
    mxc_error_clear(&e);
    openshell__compute__v1__get_sandbox_request__free_unpacked(req, NULL);
}

/* Every record (store.h), or false with out the refusal. */
static bool records(const osd_driver *d, pb_sandbox ***list, size_t *n, osd_reply *out)
{
    mxc_error e = {0};
    if (osd_store_list(&d->store, list, n, false, &e) == 0) {
        for (size_t i = 0; i < *n; i++)
            osd_sbx_observe(&d->rt, (*list)[i]);
        return true;
    }
    refuse_error(out, &e);
    mxc_error_clear(&e);
    return false;
}

static void list_sandboxes(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    pb_sandbox **list;
    size_t n;
    if (!records(ctx, &list, &n, out))
        return;
    Openshell__Compute__V1__ListSandboxesResponse r = OPENSHELL__COMPUTE__V1__LIST_SANDBOXES_RESPONSE__INIT;
    r.n_sandboxes = n;
    r.sandboxes = list;
    answer(out, &r.base);
    osd_store_free(list, n);
}

/* The stream of observations: each record's snapshot now, then the stream stays open (the
 * changes a sandbox goes through come with CreateSandbox, which makes them). */
static void watch_sandboxes(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    pb_sandbox **list;
    size_t n;
    osd_watch_refresh(ctx); /* what was last sent becomes now, so later changes are measured from it */
    if (!records(ctx, &list, &n, out))
        return;
    out->status = OSD_OK;
    out->streaming = true;
    for (size_t i = 0; i < n && out->status == OSD_OK; i++) {
        Openshell__Compute__V1__WatchSandboxesSandboxEvent se = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_SANDBOX_EVENT__INIT;
        Openshell__Compute__V1__WatchSandboxesEvent ev = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_EVENT__INIT;
        se.sandbox = list[i];
        ev.payload_case = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_EVENT__PAYLOAD_SANDBOX;
        ev.sandbox = &se;
        answer(out, &ev.base);
    }
    osd_store_free(list, n);
}

static void create_sandbox(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    const osd_driver *d = ctx;
    if (!wire_ok(&openshell__compute__v1__create_sandbox_request__descriptor, msg, len, out))
        return;
    Openshell__Compute__V1__CreateSandboxRequest *req =
        openshell__compute__v1__create_sandbox_request__unpack(NULL, len, msg);
    if (!req)
        return osd_refuse(out, OSD_INVALID_ARGUMENT, "the request is not a CreateSandboxRequest");
    mxc_error e = {0};
    osd_limits lim;
    osd_judge j = {&d->cfg, d->have_supervisor};
    json_t *fragment = NULL;
    pb_sandbox *had = NULL;
    if (!req->sandbox)
        osd_refuse(out, OSD_INVALID_ARGUMENT, "sandbox is missing");
    else if (osd_spec_check(req->sandbox, &j, &lim, &fragment, &e) < 0)
        refuse_error(out, &e);
    else if (osd_store_load(&d->store, req->sandbox->id, &had))
        osd_refuse(out, OSD_ALREADY_EXISTS, "sandbox %s exists", req->sandbox->id);
    else if (osd_sbx_create(&d->rt, &d->store, req->sandbox, fragment, &lim, &e) < 0)
        refuse_error(out, &e);
    else {
        Openshell__Compute__V1__CreateSandboxResponse r = OPENSHELL__COMPUTE__V1__CREATE_SANDBOX_RESPONSE__INIT;
        answer(out, &r.base);
        osd_watch_tick(ctx);
    }
    if (had)
        openshell__compute__v1__driver_sandbox__free_unpacked(had, NULL);
    json_decref(fragment);
    mxc_error_clear(&e);
    openshell__compute__v1__create_sandbox_request__free_unpacked(req, NULL);
}

/* Stop, Start and Delete: a request of sandbox_id and sandbox_name (the three messages share
 * that form on the wire, so one unpacking serves); the name, when given, must be the record's. */
typedef int (*sbx_op)(const osd_rt *, const osd_store *, const char *, mxc_error *);

static int delete_op(const osd_rt *rt, const osd_store *st, const char *id, mxc_error *e)
{
    return osd_sbx_delete(rt, st, id);
}

static void by_id(void *ctx, const uint8_t *msg, size_t len, osd_reply *out, sbx_op op, const char *call)
{
    const osd_driver *d = ctx;
    if (!wire_ok(&openshell__compute__v1__stop_sandbox_request__descriptor, msg, len, out))
        return;
    Openshell__Compute__V1__StopSandboxRequest *req = openshell__compute__v1__stop_sandbox_request__unpack(NULL, len, msg);
    if (!req)
        return osd_refuse(out, OSD_INVALID_ARGUMENT, "the request is not a %sRequest", call);
    mxc_error e = {0};
    pb_sandbox *sb = NULL;
    int rc = 0;
    if (!osd_id_is_valid(req->sandbox_id))
        osd_refuse(out, OSD_INVALID_ARGUMENT, "sandbox_id is %s", req->sandbox_id[0] ? "malformed" : "empty");
    else if (osd_store_get(&d->store, req->sandbox_id, &sb, &e) > 0 && req->sandbox_name[0] &&
             strcmp(req->sandbox_name, sb->name))
        osd_refuse(out, OSD_NOT_FOUND, "no sandbox %s named %s", req->sandbox_id, req->sandbox_name);
    else if ((rc = op(&d->rt, &d->store, req->sandbox_id, &e)) < 0)
        refuse_error(out, &e);
    else if (rc == 0 && op != delete_op)
        osd_refuse(out, OSD_NOT_FOUND, "no sandbox %s", req->sandbox_id);
    else {
        Openshell__Compute__V1__DeleteSandboxResponse r = OPENSHELL__COMPUTE__V1__DELETE_SANDBOX_RESPONSE__INIT;
        r.deleted = rc > 0; /* Stop's and Start's replies are empty: field 1 unset packs to nothing */
        if (op != delete_op)
            r.deleted = false;
        answer(out, &r.base);
        osd_watch_tick(ctx);
    }
    if (sb)
        openshell__compute__v1__driver_sandbox__free_unpacked(sb, NULL);
    mxc_error_clear(&e);
    openshell__compute__v1__stop_sandbox_request__free_unpacked(req, NULL);
}

static void stop_sandbox(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    by_id(ctx, msg, len, out, osd_sbx_stop, "StopSandbox");
}

static void start_sandbox(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    by_id(ctx, msg, len, out, osd_sbx_start, "StartSandbox");
}

static void delete_sandbox(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    by_id(ctx, msg, len, out, delete_op, "DeleteSandbox");
}

/* ---- Watch's events ---- */

static uint8_t *pack_event(const Openshell__Compute__V1__WatchSandboxesEvent *ev, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(&ev->base);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        *len = protobuf_c_message_pack(&ev->base, buf);
    return buf;
}

static ssize_t seen_find(const osd_seen *seen, const char *id)
{
    for (size_t i = 0; i < seen->n; i++)
        if (!strcmp(seen->ids[i], id))
            return (ssize_t)i;
    return -1;
}

static void seen_drop(osd_seen *seen, size_t i)
{
    free(seen->ids[i]);
    free(seen->events[i]);
    seen->n--;
    seen->ids[i] = seen->ids[seen->n];
    seen->events[i] = seen->events[seen->n];
    seen->lens[i] = seen->lens[seen->n];
}

/* sandbox's event pushed unless it is what was last sent; kept as the last sent. */
static void seen_update(osd_seen *seen, pb_sandbox *sb)
{
    Openshell__Compute__V1__WatchSandboxesSandboxEvent se = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_SANDBOX_EVENT__INIT;
    Openshell__Compute__V1__WatchSandboxesEvent ev = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_EVENT__INIT;
    se.sandbox = sb;
    ev.payload_case = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_EVENT__PAYLOAD_SANDBOX;
    ev.sandbox = &se;
    size_t len;
    uint8_t *buf = pack_event(&ev, &len);
    ssize_t i = seen_find(seen, sb->id);
    if (!buf || (i >= 0 && seen->lens[i] == len && !memcmp(seen->events[i], buf, len))) {
        free(buf);
        return;
    }
    osd_push(SVC "WatchSandboxes", buf, len);
    if (i < 0) {
        char **ids = realloc(seen->ids, (seen->n + 1) * sizeof *ids);
        seen->ids = ids ? ids : seen->ids;
        uint8_t **evs = realloc(seen->events, (seen->n + 1) * sizeof *evs);
        seen->events = evs ? evs : seen->events;
        size_t *lens = realloc(seen->lens, (seen->n + 1) * sizeof *lens);
        seen->lens = lens ? lens : seen->lens;
        char *id = strdup(sb->id);
        if (!ids || !evs || !lens || !id) {
            free(id);
            free(buf);
            return;
        }
        i = (ssize_t)seen->n++;
        seen->ids[i] = id;
        seen->events[i] = NULL;
    }
    free(seen->events[i]);
    seen->events[i] = buf;
    seen->lens[i] = len;
}

void osd_watch_tick(void *ctx)
{
    const osd_driver *d = ctx;
    /* nobody watching: nothing to observe (a stream that opens refreshes what was sent first) */
    if (!d->seen || !osd_streams_open(SVC "WatchSandboxes"))
        return;
    osd_watch_refresh(ctx);
}

void osd_watch_refresh(void *ctx)
{
    const osd_driver *d = ctx;
    pb_sandbox **list;
    size_t n;
    osd_reply ignored = {0};
    if (!d->seen || !records(d, &list, &n, &ignored))
        return;
    for (size_t i = 0; i < n; i++)
        seen_update(d->seen, list[i]);
    for (size_t i = d->seen->n; i-- > 0;) { /* gone: a deleted event */
        bool present = false;
        for (size_t j = 0; j < n && !present; j++)
            present = !strcmp(list[j]->id, d->seen->ids[i]);
        if (present)
            continue;
        Openshell__Compute__V1__WatchSandboxesDeletedEvent de = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_DELETED_EVENT__INIT;
        Openshell__Compute__V1__WatchSandboxesEvent ev = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_EVENT__INIT;
        de.sandbox_id = d->seen->ids[i];
        ev.payload_case = OPENSHELL__COMPUTE__V1__WATCH_SANDBOXES_EVENT__PAYLOAD_DELETED;
        ev.deleted = &de;
        size_t len;
        uint8_t *buf = pack_event(&ev, &len);
        if (buf)
            osd_push(SVC "WatchSandboxes", buf, len);
        free(buf);
        seen_drop(d->seen, i);
    }
    osd_store_free(list, n);
}

void osd_seen_free(osd_seen *seen)
{
    while (seen && seen->n)
        seen_drop(seen, seen->n - 1);
    if (seen) {
        free(seen->ids);
        free(seen->events);
        free(seen->lens);
    }
}

/* EnsureWorkspace and DeleteWorkspace (workspace.h): a request of the workspace alone. */
static void workspace_call(void *ctx, const uint8_t *msg, size_t len, osd_reply *out, bool ensure)
{
    const osd_driver *d = ctx;
    if (!wire_ok(&openshell__compute__v1__ensure_workspace_request__descriptor, msg, len, out))
        return;
    Openshell__Compute__V1__EnsureWorkspaceRequest *req =
        openshell__compute__v1__ensure_workspace_request__unpack(NULL, len, msg);
    if (!req)
        return osd_refuse(out, OSD_INVALID_ARGUMENT, "the request is not a %sWorkspaceRequest", ensure ? "Ensure" : "Delete");
    mxc_error e = {0};
    if ((ensure ? osd_ws_ensure : osd_ws_delete)(&d->store, req->workspace, &e) < 0)
        refuse_error(out, &e);
    else {
        Openshell__Compute__V1__EnsureWorkspaceResponse r = OPENSHELL__COMPUTE__V1__ENSURE_WORKSPACE_RESPONSE__INIT;
        answer(out, &r.base); /* both replies are empty messages */
    }
    mxc_error_clear(&e);
    openshell__compute__v1__ensure_workspace_request__free_unpacked(req, NULL);
}

static void ensure_workspace(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    workspace_call(ctx, msg, len, out, true);
}

static void delete_workspace(void *ctx, const uint8_t *msg, size_t len, osd_reply *out)
{
    workspace_call(ctx, msg, len, out, false);
}

const osd_route osd_routes[] = {
    {SVC "GetCapabilities", get_capabilities},
    {SVC "GetGatewayListenerRequirements", get_listener_requirements},
    {SVC "ValidateSandboxCreate", validate_create},
    {SVC "GetSandbox", get_sandbox},
    {SVC "ListSandboxes", list_sandboxes},
    {SVC "CreateSandbox", create_sandbox},
    {SVC "StopSandbox", stop_sandbox},
    {SVC "StartSandbox", start_sandbox},
    {SVC "DeleteSandbox", delete_sandbox},
    {SVC "WatchSandboxes", watch_sandboxes},
    {SVC "EnsureWorkspace", ensure_workspace},
    {SVC "DeleteWorkspace", delete_workspace},
};
const size_t osd_nroutes = sizeof osd_routes / sizeof osd_routes[0];
