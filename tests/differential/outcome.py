"""Runs one request through an lxc-exec-style executor and reduces what it did to an outcome.

Outcome: ("ran", exit_code) when the workload ran (the exit code is the executor's own, as
upstream's lxc-exec passes the workload's through), or ("refused", code) with the wire error
code: a parse or validation error (`Request error` on stderr, exit 1) is malformed_request, a
backend that is not on Linux (`error: the 'X' backend is not available`) unsupported_containment,
an experimental backend without the flag backend_unavailable, and an `{"error":…}` envelope on
stderr (exit 255) its own code, except a timeout, which is ("timed_out",).  Our legacy dialect
answers with one `{"error":…}` envelope on stdout instead; that is the same refusal.
"""
import json
import os
import re
import subprocess
import tempfile

ENVELOPE = re.compile(r'\{"error":\{.*\}\}\s*$')


def run(executor, request, timeout=30, env=None):
    text = request if isinstance(request, str) else json.dumps(request)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        p = subprocess.run([executor, path], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout, env=env)
    finally:
        os.unlink(path)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def classify(rc, out, err):
    last = err.strip().splitlines()[-1] if err.strip() else ""
    m = ENVELOPE.search(last)
    if rc == 255 and m:
        try:
            e = json.loads(m.group(0))["error"]
        except ValueError:
            e = {"code": "?"}
        if "timed out" in e.get("message", ""):
            return ("timed_out",)
        return ("refused", e.get("code"))
    if rc == 1 and err.startswith("Request error"):
        return ("refused", "malformed_request")
    if rc == 1 and re.search(r"^error: the '.*' backend is not available", err, re.M):
        return ("refused", "unsupported_containment")
    if rc == 1 and re.search(r"^error: the '.*' backend is experimental", err, re.M):
        return ("refused", "backend_unavailable")
    if rc == 1 and err.startswith("Error: No config provided"):
        return ("refused", "malformed_request")
    lines = out.strip().splitlines()
    if rc != 0 and len(lines) == 1 and lines[0].startswith('{"error":'):
        # ours, legacy dialect: the same refusal as one envelope on stdout (docs: difference D1)
        try:
            return ("refused", json.loads(lines[0])["error"]["code"])
        except (ValueError, KeyError, TypeError):
            pass
    return ("ran", rc)


def outcome(executor, request, env=None):
    rc, out, err = run(executor, request, env=env)
    return classify(rc, out, err), rc, out, err
