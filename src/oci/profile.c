/* profile.c — see profile.h. */
#include "profile.h"
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define bad oci_config_bad /* config.h */

/* The actions by name; with_errno: the errno (errnoRet, else the default) in the action's low 16 bits. */
static const struct { const char *name; uint32_t act; bool with_errno; } ACTIONS[] = {
    {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, false},         {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), true},
    {"SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, false},    {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, false},
    {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, false}, {"SCMP_ACT_TRAP", SCMP_ACT_TRAP, false},
    {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), true},       {"SCMP_ACT_LOG", SCMP_ACT_LOG, false},
    {"SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, false},
};

/* An action name (with its errno) as libseccomp's; 0 and *ok false when unknown. */
static uint32_t action_of(const char *name, json_t *errno_ret, int default_errno, bool *ok, mxc_error *e,
                          const char *field)
{
    int err = json_is_integer(errno_ret) ? (int)json_integer_value(errno_ret) : default_errno;
    size_t k = OCI_FIND(ACTIONS, name);
    if ((*ok = k < OCI_COUNT(ACTIONS)))
        return ACTIONS[k].act | (ACTIONS[k].with_errno ? (uint16_t)err : 0u);
    if (!e->code)
        bad(e, field, "a seccomp action (SCMP_ACT_...)");
    return 0;
}

/* The calls the container's process makes to hand its listener to mxc-oci, right after the filter
 * that notifies is loaded (src/oci/notify.h): a notification on one of them would wait for an agent
 * that has no listener yet, forever.  runc refuses `write` (its handover), in its words; mxc-oci's is
 * `sendmsg` (the descriptor goes by SCM_RIGHTS). */
static int notify_target_ok(const char *name, const char *field, mxc_error *e)
{
    if (!strcmp(name, "write") || !strcmp(name, "sendmsg"))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s: SCMP_ACT_NOTIFY cannot be used for the %s "
                       "syscall (the container's process hands its seccomp listener to mxc-oci with it)", field, name);
    return 0;
}

/* linux.seccomp.listenerPath and listenerMetadata: strings; a notify action needs an absolute path
 * (the agent's socket, connected by mxc-oci in the runtime's namespaces: src/oci/notify.h); a path
 * without a notify action is never connected (runc accepts it alike). */
static int listener_ok(json_t *sc, bool notify, mxc_error *e)
{
    json_t *path = json_object_get(sc, "listenerPath"), *meta = json_object_get(sc, "listenerMetadata");
    if (path && !json_is_null(path) && !json_is_string(path))
        return bad(e, "linux.seccomp.listenerPath", "a string");
    if (meta && !json_is_null(meta) && !json_is_string(meta))
        return bad(e, "linux.seccomp.listenerMetadata", "a string");
    const char *p = json_string_value(path);
    if (notify && (!p || !*p))
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.seccomp: SCMP_ACT_NOTIFY needs "
                       "linux.seccomp.listenerPath (the seccomp agent's socket)");
    if (notify && *p != '/')
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.seccomp.listenerPath \"%s\" is not an "
                       "absolute path (abstract sockets are not connected)", p);
    return 0;
}

static int op_of(const char *name, enum scmp_compare *op)
{
    static const struct { const char *name; enum scmp_compare op; } ops[] = {
        {"SCMP_CMP_NE", SCMP_CMP_NE}, {"SCMP_CMP_LT", SCMP_CMP_LT}, {"SCMP_CMP_LE", SCMP_CMP_LE},
        {"SCMP_CMP_EQ", SCMP_CMP_EQ}, {"SCMP_CMP_GE", SCMP_CMP_GE}, {"SCMP_CMP_GT", SCMP_CMP_GT},
        {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
    };
    size_t i = OCI_FIND(ops, name);
    if (i < OCI_COUNT(ops))
        *op = ops[i].op;
    return i < OCI_COUNT(ops) ? 0 : -1;
}

static int arch_of(const char *name, uint32_t *arch)
{
    static const struct { const char *name; uint32_t arch; } archs[] = {
        {"SCMP_ARCH_X86", SCMP_ARCH_X86}, {"SCMP_ARCH_X86_64", SCMP_ARCH_X86_64}, {"SCMP_ARCH_X32", SCMP_ARCH_X32},
        {"SCMP_ARCH_ARM", SCMP_ARCH_ARM}, {"SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64},
        {"SCMP_ARCH_MIPS", SCMP_ARCH_MIPS}, {"SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64},
        {"SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32}, {"SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL},
        {"SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64}, {"SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32},
        {"SCMP_ARCH_PPC", SCMP_ARCH_PPC}, {"SCMP_ARCH_PPC64", SCMP_ARCH_PPC64},
        {"SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE},
        {"SCMP_ARCH_S390", SCMP_ARCH_S390}, {"SCMP_ARCH_S390X", SCMP_ARCH_S390X},
        {"SCMP_ARCH_PARISC", SCMP_ARCH_PARISC}, {"SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64},
        {"SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64},
    };
    size_t i = OCI_FIND(archs, name);
    if (i < OCI_COUNT(archs))
        *arch = archs[i].arch;
    return i < OCI_COUNT(archs) ? 0 : -1;
}

static int compile(json_t *sc, scmp_filter_ctx *pctx, bool *log, mxc_error *e)
{
    char f[160];
    if (!json_is_object(sc))
        return bad(e, "linux.seccomp", "an object");
    json_t *derr = json_object_get(sc, "defaultErrnoRet");
    if (derr && !json_is_null(derr) && !json_is_integer(derr))
        return bad(e, "linux.seccomp.defaultErrnoRet", "an integer");
    bool ok;
    uint32_t dflt = action_of(json_string_value(json_object_get(sc, "defaultAction")), derr, EPERM, &ok, e,
                              "linux.seccomp.defaultAction");
    if (!ok)
        return -1;
    if (dflt == SCMP_ACT_NOTIFY) /* runc's words: every call, write among them, would wait for the agent */
        return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot "
                       "be used as default action");
    bool notify = false;
    scmp_filter_ctx ctx = seccomp_init(dflt);
    if (!ctx)
        return mxc_err(e, MXC_E_BACKEND_ERROR, "seccomp_init failed");
    *pctx = ctx;
    /* the container's process holds no_new_privs; TSYNC is added at load */
    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
    size_t i, k;
    json_t *a;
    json_array_foreach(json_object_get(sc, "architectures"), i, a) {
        uint32_t arch;
        snprintf(f, sizeof f, "linux.seccomp.architectures[%zu]", i);
        if (arch_of(json_string_value(a), &arch) < 0)
            return bad(e, f, "a seccomp architecture (SCMP_ARCH_...)");
        int rc = seccomp_arch_add(ctx, arch);
        if (rc < 0 && rc != -EEXIST)
            return mxc_err(e, MXC_E_BACKEND_ERROR, "%s: %s", f, strerror(-rc));
    }
    json_array_foreach(json_object_get(sc, "flags"), i, a) {
        const char *flag = json_string_value(a);
        snprintf(f, sizeof f, "linux.seccomp.flags[%zu]", i);
        if (flag && !strcmp(flag, "SECCOMP_FILTER_FLAG_LOG"))
            *log = true;
        else if (flag && !strcmp(flag, "SECCOMP_FILTER_FLAG_TSYNC"))
            ; /* always */
        else if (flag && !strcmp(flag, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
            return mxc_err(e, MXC_E_POLICY_VALIDATION, "config.json: %s SECCOMP_FILTER_FLAG_SPEC_ALLOW is refused (it "
                           "turns off the speculative store bypass mitigation)", f);
        else if (flag && !strcmp(flag, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
            return mxc_err(e, MXC_E_UNSUPPORTED_CONTAINMENT, "config.json: %s is not supported by mxc-oci yet", f);
        else
            return bad(e, f, "a seccomp filter flag");
    }
    json_t *s;
    json_array_foreach(json_object_get(sc, "syscalls"), i, s) {
        snprintf(f, sizeof f, "linux.seccomp.syscalls[%zu]", i);
        if (!json_is_object(s) || !json_is_array(json_object_get(s, "names")))
            return bad(e, f, "an object with names and an action");
        uint32_t act = action_of(json_string_value(json_object_get(s, "action")), json_object_get(s, "errnoRet"),
                                 EPERM, &ok, e, f);
        if (!ok)
            return -1;
        struct scmp_arg_cmp cmp[6];
        unsigned ncmp = 0;
        json_array_foreach(json_object_get(s, "args"), k, a) {
            enum scmp_compare op;
            json_t *idx = json_object_get(a, "index"), *val = json_object_get(a, "value"),
                   *two = json_object_get(a, "valueTwo");
            snprintf(f, sizeof f, "linux.seccomp.syscalls[%zu].args[%zu]", i, k);
            if (ncmp == 6 || !json_is_integer(idx) || json_integer_value(idx) < 0 || json_integer_value(idx) > 5 ||
                !json_is_integer(val) || (two && !json_is_null(two) && !json_is_integer(two)) ||
                op_of(json_string_value(json_object_get(a, "op")), &op) < 0)
                return bad(e, f, "an object of index (0-5), value, valueTwo and op (SCMP_CMP_...)");
            cmp[ncmp++] = (struct scmp_arg_cmp){(unsigned)json_integer_value(idx), op,
                                                (scmp_datum_t)json_integer_value(val),
                                                (scmp_datum_t)json_integer_value(two)};
        }
        json_array_foreach(json_object_get(s, "names"), k, a) {
            const char *name = json_string_value(a);
            if (!name)
                return bad(e, f, "an object whose names are strings");
            int nr = seccomp_syscall_resolve_name(name);
            if (act == SCMP_ACT_NOTIFY && notify_target_ok(name, f, e) < 0)
                return -1;
            notify |= act == SCMP_ACT_NOTIFY;
            if (nr == __NR_SCMP_ERROR)
                continue; /* unknown to this libseccomp: skipped, as runc and crun do */
            if (act == dflt)
                continue; /* libseccomp refuses a rule that repeats the default */
            /* two conditions on the same argument cannot be one rule (libseccomp: EINVAL): as runc
             * does, each becomes a rule of its own (either matches) */
            bool same = false;
            for (unsigned x = 0; x < ncmp; x++)
                for (unsigned y = x + 1; y < ncmp; y++)
                    same |= cmp[x].arg == cmp[y].arg;
            int rc = 0;
            if (!same)
                rc = seccomp_rule_add_array(ctx, act, nr, ncmp, cmp);
            for (unsigned x = 0; same && x < ncmp && rc >= 0; x++)
                rc = seccomp_rule_add_array(ctx, act, nr, 1, &cmp[x]);
            if (rc < 0)
                return mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: %s: the rule for %s: %s", f, name,
                               strerror(-rc));
        }
    }
    return listener_ok(sc, notify, e);
}

int oci_seccomp_compile(json_t *sc, oci_seccomp *out, mxc_error *e)
{
    memset(out, 0, sizeof *out);
    if (!sc || json_is_null(sc))
        return 0;
    scmp_filter_ctx ctx = NULL;
    int rc = compile(sc, &ctx, &out->log, e);
    int mfd = -1;
    if (rc == 0) {
        mfd = memfd_create("oci-seccomp", MFD_CLOEXEC);
        int r = mfd < 0 ? -errno : seccomp_export_bpf(ctx, mfd);
        off_t len = r == 0 ? lseek(mfd, 0, SEEK_END) : -1;
        if (r < 0 || len <= 0 || len % (off_t)sizeof(struct sock_filter) ||
            len / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
            rc = mxc_err(e, MXC_E_MALFORMED_REQUEST, "config.json: linux.seccomp does not compile to a BPF program "
                         "the kernel takes (%s)", r < 0 ? strerror(-r) : "too long");
        else if (!(out->insns = malloc((size_t)len)) || pread(mfd, out->insns, (size_t)len, 0) != len)
            rc = mxc_err(e, MXC_E_BACKEND_ERROR, "cannot read the compiled seccomp program");
        else
            out->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
    }
    if (mfd >= 0)
        close(mfd);
    if (ctx)
        seccomp_release(ctx);
    if (rc < 0)
        oci_seccomp_free(out);
    return rc;
}

void oci_seccomp_free(oci_seccomp *s)
{
    free(s->insns);
    memset(s, 0, sizeof *s);
}

bool oci_seccomp_notifies(const oci_seccomp *s)
{
    for (unsigned short i = 0; s->insns && i < s->len; i++)
        if (s->insns[i].code == (BPF_RET | BPF_K) && (s->insns[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
            return true;
    return false;
}

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

int oci_seccomp_load(const oci_seccomp *s)
{
    if (!s->insns)
        return 0;
    struct sock_fprog prog = {.len = s->len, .filter = s->insns};
    unsigned flags = SECCOMP_FILTER_FLAG_TSYNC | (s->log ? SECCOMP_FILTER_FLAG_LOG : 0);
    /* a listener with TSYNC needs TSYNC_ESRCH (Linux 5.7): the kernel's way to say which thread failed
     * is the return value, which is now the listener */
    if (oci_seccomp_notifies(s))
        flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    return rc < 0 ? -errno : (int)rc;
}
