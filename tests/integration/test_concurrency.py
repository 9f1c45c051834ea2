"""Independence of concurrent sandboxes, and concurrency inside one session (issue 4)."""
import os
from concurrent.futures import ThreadPoolExecutor

from conftest import assert_error, assert_ok_envelope, h, unique

N = 16


def test_sixteen_sandboxes_in_parallel(mxc):
    tokens = [unique("tok%02d" % i) for i in range(N)]

    def up(i):
        res = mxc.provision()
        sid = res["sandboxId"]
        ws = res["metadata"]["ephemeralWorkspacePath"]
        assert_ok_envelope(mxc.phase("start", sid))
        r = mxc.exec(sid, "echo %s > %s/token && cat %s/token" % (tokens[i], ws, ws))
        assert (r.rc, r.stdout) == (0, tokens[i] + "\n"), r.describe()
        return res

    with ThreadPoolExecutor(max_workers=N) as pool:
        results = list(pool.map(up, range(N)))

    ids = [r["sandboxId"] for r in results]
    names = [r["metadata"]["agentUserName"] for r in results]
    wss = [r["metadata"]["ephemeralWorkspacePath"] for r in results]
    uids = [r["metadata"]["agentUserSid"] for r in results]
    assert len(set(ids)) == N, ids
    assert len(set(names)) == N, names
    assert len(set(wss)) == N, wss
    if os.geteuid() == 0:
        assert len(set(uids)) == N, uids

    # the host sees each token in its own workspace only
    for i, ws in enumerate(wss):
        assert open(os.path.join(ws, "token")).read() == tokens[i] + "\n"

    def cross(i):
        """From inside sandbox i, try every other sandbox's workspace."""
        sid = ids[i]
        others = " ".join("%s/token" % wss[j] for j in range(N) if j != i)
        r = mxc.exec(sid, "cat %s/token; for f in %s; do cat $f 2>&1; done; "
                          "grep -rs tok /tmp /run 2>/dev/null; true" % (wss[i], others))
        assert r.rc == 0, r.describe()
        seen = [t for t in tokens if t in r.stdout]
        assert seen == [tokens[i]], "sandbox %d saw %r\n%s" % (i, seen, r.describe())
        # every other workspace is refused: absent from this view (or, at worst, denied)
        refused = r.stdout.count("No such file or directory") + r.stdout.count("Permission denied")
        assert refused == N - 1, r.describe()
        return True

    with ThreadPoolExecutor(max_workers=N) as pool:
        assert all(pool.map(cross, range(N)))

    def down(i):
        assert_ok_envelope(mxc.phase("deprovision", ids[i]))
        return True

    with ThreadPoolExecutor(max_workers=N) as pool:
        assert all(pool.map(down, range(N)))
    for ws in wss:
        assert not os.path.exists(ws), ws
    for sid in ids:
        assert_error(mxc.phase("start", sid), "stale_id")


def test_concurrent_execs_in_one_session_overlap(session, mxc):
    """Two execs run side by side: each creates its file, then waits (bounded) for the other's.
    If execs were serialised, the first would time out waiting and report ETIMEDOUT."""

    def run(me, other):
        cmd = "touch /tmp/%s && %s" % (me, h("wait_file", "/tmp/" + other, "600"))
        return session.exec(cmd)

    with ThreadPoolExecutor(max_workers=2) as pool:
        fa = pool.submit(run, "a", "b")
        fb = pool.submit(run, "b", "a")
        ra, rb = fa.result(), fb.result()
    assert (ra.rc, ra.stdout) == (0, "wait_file: ok\n"), ra.describe()
    assert (rb.rc, rb.stdout) == (0, "wait_file: ok\n"), rb.describe()


def test_concurrent_starts_serialised(session_factory, mxc):
    """Eight simultaneous starts of one provisioned sandbox: exactly one starts it, the others
    say already_started; then the session works."""
    s = session_factory(start=False)
    with ThreadPoolExecutor(max_workers=8) as pool:
        rs = list(pool.map(lambda _: s.start(), range(8)))
    oks = [r for r in rs if r.rc == 0]
    assert len(oks) == 1, [r.describe() for r in rs]
    for r in rs:
        if r.rc != 0:
            assert_error(r, "already_started")
    r = s.exec("echo up")
    assert (r.rc, r.stdout) == (0, "up\n"), r.describe()


def test_concurrent_stop_and_deprovision(session, mxc):
    """stop and deprovision racing on one sandbox: both answer precisely, the end state is gone."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        f1 = pool.submit(session.stop)
        f2 = pool.submit(session.deprovision)
        r1, r2 = f1.result(), f2.result()
    assert r2.rc == 0, r2.describe()
    if r1.rc != 0:
        assert_error(r1, ["stale_id", "already_stopped"])
    assert_error(session.exec("true"), "stale_id")


def test_many_concurrent_execs(session):
    with ThreadPoolExecutor(max_workers=8) as pool:
        rs = list(pool.map(lambda i: session.exec("echo n%d" % i), range(24)))
    for i, r in enumerate(rs):
        assert (r.rc, r.stdout) == (0, "n%d\n" % i), r.describe()
