/* validate.c — see validate.h. */
#include "validate.h"

#include "policy.h"
#include "relpath.h"
#include "sandbox_id.h"

int mxc_validate(const char *buf, size_t len, unsigned flags, mxc_request *r, mxc_error *e)
{
    bool experimental = flags & MXC_VALIDATE_EXPERIMENTAL;
    if (mxc_request_parse_opts(buf, len, experimental ? MXC_PARSE_EXPERIMENTAL : 0, r, e) < 0)
        return -1;
    /* The legacy dialect keeps its experimental state-aware surface;
     * contract 1.0 made isolation_session a production backend. */
    if (r->dialect == MXC_DIALECT_LEGACY && r->phase != MXC_PHASE_NONE && !experimental) {
        mxc_err(e, MXC_E_BACKEND_UNAVAILABLE, "state-aware phases are experimental");
        mxc_err_set_remediation(e, "pass --experimental to mxc-exec to use the state-aware lifecycle");
        return -1;
    }
    if (r->phase != MXC_PHASE_NONE && r->phase != MXC_PHASE_PROVISION) {
        mxc_sandbox_id id;
        if (mxc_sandbox_id_decode(r->sandbox_id, &id, e) < 0 && e->code != MXC_E_STALE_ID)
            return -1;
        mxc_error_clear(e); /* a stale id is the state layer's answer, after policy */
    }
    /* the caller's working directory gives a relative path its meaning, before any path rule judges it */
    if (mxc_relpath_absolutize(r, e) < 0) {
        if (r->phase == MXC_PHASE_NONE) /* one-shot has no typed policy code (policy.c) */
            e->code = MXC_E_BACKEND_ERROR;
        return -1;
    }
    return mxc_policy_validate(r, e);
}
