"""Issue 17: `mxc`, the command for people — every subcommand driven as a person would, against
real sandboxes (root, real namespaces). `mxc shell` runs under a pty this file makes: isatty
inside, the window size and its changes seen by `stty size`, Ctrl-C reaching the workload and
not mxc, the person's terminal restored after.

NETWORK SAFETY: no test here sends a packet anywhere (the network flags are checked through
--print-request and the library's refusals)."""
import fcntl
import json
import os
import re
import subprocess
import termios

import pytest

from conftest import DROP, MXC_EXEC, UID, PtyScreen, wait_until

MXC = os.path.join(os.path.dirname(MXC_EXEC), "mxc")


@pytest.fixture
def cli(mxc):
    """cli(*args, input=None) -> CompletedProcess of `mxc ARGS` in this test's state root;
    every sandbox left in that root is removed at the end."""
    def run(*args, input=None, env=None, timeout=90):
        return subprocess.run([MXC] + list(args), env=mxc.env(env), input=input, capture_output=True,
                              text=True, timeout=timeout)
    run.env = mxc.env
    yield run
    listed = run("ls", "--json")
    for s in json.loads(listed.stdout or "[]"):
        if s["kind"] == "session":
            run("rm", s["sandboxId"])


def listing(cli, kind="session"):
    """The sessions of this test's state root (one-shots of other tests may run beside)."""
    r = cli("ls", "--json")
    assert r.returncode == 0, r.stderr
    return [s for s in json.loads(r.stdout) if s["kind"] == kind]


# --------------------------------------------------------------------------------------------
# run


def test_run_keeps_argument_boundaries_and_passes_the_exit_code(cli):
    r = cli("run", "--", "printf", "[%s]\\n", "a b", "it's", "$HOME", "*", "")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[a b]", "[it's]", "[$HOME]", "[*]", "[]"]
    assert cli("run", "--", "sh", "-c", "exit 42").returncode == 42
    r = cli("run", "-c", "echo $((6 * 7)); exit 3")  # a shell only when asked
    assert (r.returncode, r.stdout) == (3, "42\n")


def test_run_policy_flags_grant_deny_and_refuse(cli, host_dir):
    rw, ro = host_dir("rw"), host_dir("ro")
    with open(os.path.join(ro, "f"), "w") as f:
        f.write("readable")
    r = cli("run", "--rw", rw, "--ro", ro, "--", "sh", "-c",
            "echo made > %s/out && cat %s/f && ! echo no > %s/g 2>/dev/null" % (rw, ro, ro))
    assert r.returncode == 0, r.stdout + r.stderr
    assert open(os.path.join(rw, "out")).read() == "made\n"
    assert not os.path.exists(os.path.join(ro, "g"))
    # not granted: the host directory cannot be written
    r = cli("run", "--", "sh", "-c", "echo x > %s/out2" % rw)
    assert r.returncode != 0 and not os.path.exists(os.path.join(rw, "out2"))
    # denied inside a read-only grant
    secret = host_dir("ro/secret")
    with open(os.path.join(secret, "key"), "w") as f:
        f.write("k")
    r = cli("run", "--ro", ro, "--deny", secret, "--", "cat", os.path.join(secret, "key"))
    assert r.returncode != 0 and "k" not in r.stdout


@pytest.mark.parametrize("flag", ["--ro", "--rw"])
def test_a_grant_of_a_missing_path_is_refused_naming_it(cli, host_dir, flag):
    """Upstream's lxc-exec refuses it too (bwrap: "Can't find source path", the workload never runs;
    docs/wire-contract.md D6): a one-shot and a session's start refuse before anything runs, naming
    the path; nothing is created on the host.  (Before: rc 0, and the sandbox showed ENOENT.)"""
    rw = host_dir("rw")
    missing = os.path.join(host_dir("parent"), "not-there")
    r = cli("run", "--rw", rw, flag, missing, "--", "sh", "-c", "echo ran > %s/marker" % rw)
    assert r.returncode != 0, r.stdout + r.stderr
    assert missing in r.stderr and "does not exist" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(rw, "marker")) and not os.path.exists(missing)
    r = cli("create", "--name", "missing-grant", "--rw", rw, flag, missing)
    assert r.returncode == 0, r.stderr
    r = cli("start", "missing-grant")
    assert r.returncode != 0 and missing in r.stderr and "does not exist" in r.stderr, r.stderr
    assert not os.path.exists(missing)
    # a denied path that is missing (and that nothing of the sandbox could create) is still skipped
    r = cli("run", "--deny", missing, "--", "true")
    assert r.returncode == 0, r.stderr


def test_run_process_flags(cli, host_dir):
    d = host_dir("wd")
    r = cli("run", "--ro", d, "--cwd", d, "--env", "GREETING=hi there", "--", "sh", "-c", 'pwd; echo "$GREETING"')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [d, "hi there"]
    r = cli("run", "--timeout", "300ms", "--", "sleep", "30")
    assert r.returncode == 255, r.stderr
    assert "timed out after 300 ms" in r.stderr and not r.stderr.lstrip().startswith("{")


def test_print_request_shows_the_one_wire_request(cli):
    r = cli("run", "--print-request", "--rw", "/srv/a", "--ro", "/srv/b", "--deny", "/srv/b/c", "--net", "allow",
            "--env", "K=V", "--cwd", "/srv/a", "--timeout", "2m", "--", "ls", "-l")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "filesystem": {"readwritePaths": ["/srv/a"], "readonlyPaths": ["/srv/b"], "deniedPaths": ["/srv/b/c"]},
        "network": {"defaultPolicy": "allow", "allowLocalNetwork": False},
        "process": {"commandLine": "exec 'ls' '-l'", "env": ["K=V"], "cwd": "/srv/a", "timeout": 120000}}
    r = cli("create", "--print-request", "--allow-host", "example.com", "--block-host", "bad.example.com")
    assert json.loads(r.stdout) == {"containment": "isolation_session", "phase": "provision",
                                    "network": {"allowedHosts": ["example.com"],
                                                "blockedHosts": ["bad.example.com"]}}
    r = cli("exec", "--print-request", "web", "--", "id")
    assert json.loads(r.stdout) == {"phase": "exec", "sandboxId": "web", "process": {"commandLine": "exec 'id'"}}


def test_policy_file_json_and_yaml(cli, host_dir, tmp_path):
    rw = host_dir("pol")
    (tmp_path / "p.json").write_text(json.dumps({"filesystem": {"readwritePaths": [rw]}}))
    (tmp_path / "p.yaml").write_text("filesystem:\n  readwritePaths:\n    - %s\nprocess:\n  timeout: 60000\n" % rw)
    for name in ("p.json", "p.yaml"):
        r = cli("run", "--policy", str(tmp_path / name), "--", "sh", "-c", "echo %s > %s/%s" % (name, rw, name))
        assert r.returncode == 0, r.stderr
        assert open(os.path.join(rw, name)).read() == name + "\n"
    (tmp_path / "bad.yaml").write_text("a: &x [1]\nb: *x\n")
    r = cli("run", "--policy", str(tmp_path / "bad.yaml"), "--", "true")
    assert r.returncode == 2 and "anchors and aliases" in r.stderr
    # a NUL in a scalar would cut the path short wherever C carries it (found by fuzz_yamljson)
    (tmp_path / "nul.yaml").write_text('filesystem:\n  readwritePaths:\n    - "%s\\0/../etc"\n' % rw)
    r = cli("run", "--policy", str(tmp_path / "nul.yaml"), "--", "true")
    assert r.returncode == 2 and "NUL character" in r.stderr, r.stderr
    (tmp_path / "unknown.json").write_text(json.dumps({"filesystem": {"writablePaths": ["/x"]}}))
    r = cli("run", "--policy", str(tmp_path / "unknown.json"), "--", "true")
    assert r.returncode == 1 and "writablePaths" in r.stderr


@pytest.mark.parametrize("args", [
    ["run", "--bogus", "--", "true"], ["run", "--net", "sideways", "--", "true"], ["run", "--timeout", "soon", "--", "x"],
    ["run", "--env", "NOEQUALS", "--", "true"], ["run"], ["run", "-c", "true", "--", "true"], ["frobnicate"], [],
    ["start"], ["start", "a", "b"], ["exec", "--rw", "/tmp", "x", "--", "true"], ["ls", "extra"], ["create", "x"],
    ["shell", "x", "--", "ls"]])
def test_bad_flags_get_a_usage_line_and_exit_2(cli, args):
    r = cli(*args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert "usage: mxc" in r.stderr, r.stderr


SUBCOMMANDS = ["run", "create", "start", "stop", "rm", "exec", "shell", "ls", "inspect", "gc"]
# every long flag mxc knows, and whether it takes a value
LONG_FLAGS = {"rw": 1, "ro": 1, "deny": 1, "net": 1, "allow-host": 1, "block-host": 1, "proxy": 1, "policy": 1,
              "env": 1, "cwd": 1, "timeout": 1, "name": 1, "json": 0, "print-request": 0, "help": 0}


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_usage_errors_name_the_flag_as_typed(cli, sub):
    """Issue 28: `mxc run --net` said "-8" and `mxc ls -a` said "-h" (getopt's optopt holds a long option's
    value, and outlived an earlier parse).  Every subcommand, every way a new user gets a flag wrong: the
    first line names exactly what was typed."""
    operand = [] if sub in ("run", "create", "ls", "gc") else ["x"]
    cases = [(["-a"], "unknown flag -a"), (["-z"], "unknown flag -z"), (["-qa"], "unknown flag -q"),
             (["--bogus"], "unknown (or ambiguous) flag --bogus"),
             (["--bogus=3"], "unknown (or ambiguous) flag --bogus"),
             (["--print-request=2"], "--print-request takes no value"), (["--json=yes"], "--json takes no value")]
    for flag, takes in LONG_FLAGS.items():
        if takes:  # at the end of the line: its value is missing
            cases.append((["--" + flag], "--%s needs a value" % flag))
    for args, said in cases:
        argv = [sub] + args if takes_missing(args) else [sub] + args + operand
        r = cli(*argv)
        first = r.stderr.splitlines()[0] if r.stderr else ""
        assert r.returncode == 2, (argv, r.returncode, r.stderr)
        assert first == "mxc %s: %s" % (sub, said), (argv, first)
    # a flag the subcommand does not take is named as typed, not by its value
    if sub in ("start", "stop", "rm", "ls", "inspect", "gc"):
        for flag in ("--rw", "--net", "--cwd", "--env"):
            r = cli(sub, flag, "v", *operand)
            first = r.stderr.splitlines()[0]
            assert r.returncode == 2 and first == "mxc %s: %s is not a flag of this subcommand" % (sub, flag), first
    r = cli(sub, "-c")
    assert r.returncode == 2 and r.stderr.splitlines()[0] == "mxc %s: -c needs a value" % sub, r.stderr


def takes_missing(args):
    """A value-taking long flag last on the line (its value missing)."""
    a = args[-1]
    return a.startswith("--") and "=" not in a and LONG_FLAGS.get(a[2:], 0) == 1


def test_errors_are_one_readable_line_and_json_on_request(cli):
    r = cli("run", "--net", "allow", "--allow-host", "example.com", "--", "true")
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    code = json.loads(cli("run", "--json", "--net", "allow", "--allow-host", "example.com", "--", "true").stdout)
    assert first == "mxc run: %s [%s]" % (code["error"]["message"], code["error"]["code"]), r.stderr
    assert "allowedHosts" in first and "{" not in first


def test_help_per_subcommand(cli):
    for sub in ("run", "create", "start", "stop", "rm", "exec", "shell", "ls", "inspect", "gc"):
        r = cli(sub, "--help")
        assert r.returncode == 0 and r.stdout.startswith("usage: mxc " + sub), (sub, r.stdout)


# --------------------------------------------------------------------------------------------
# sessions


def test_session_lifecycle_by_name_and_by_id(cli):
    r = cli("create", "--name", "web")
    assert r.returncode == 0, r.stderr
    sid = r.stdout.strip()
    assert sid.startswith("iso:")
    assert cli("start", "web").returncode == 0
    r = cli("exec", "web", "--env", "X=1", "--", "sh", "-c", "echo $X; id -u")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "1", r.stderr
    agent = [s for s in listing(cli) if s["sandboxId"] == sid][0]["agentName"]
    for addr in (sid, agent):  # the id and the agent name address it too
        assert cli("exec", addr, "--", "true").returncode == 0
    r = cli("exec", "web", "--", "sh", "-c", "exit 9")
    assert r.returncode == 9
    assert cli("stop", "web").returncode == 0
    r = cli("stop", "web")
    assert r.returncode == 1 and "[already_stopped]" in r.stderr, r.stderr
    assert cli("rm", "web").returncode == 0
    assert listing(cli) == []
    r = cli("exec", "web", "--", "true")
    assert r.returncode == 1 and "no sandbox named web" in r.stderr


def test_names_are_unique_and_freed_by_rm(cli):
    assert cli("create", "--name", "dup").returncode == 0
    r = cli("create", "--name", "dup")
    assert r.returncode == 1 and "taken" in r.stderr
    assert len(listing(cli)) == 1  # the refused create made nothing
    for bad in ("mxc-abc", "-x", "a/b", "x" * 65, ""):
        r = cli("create", "--name", bad)
        assert r.returncode in (1, 2) and listing(cli).__len__() == 1, (bad, r.stderr)
    assert cli("rm", "dup").returncode == 0
    assert cli("create", "--name", "dup").returncode == 0


def test_planted_entries_in_the_names_directory_name_nothing(cli, mxc, tmp_path):
    """The names directory is the caller's (root's, or a rootless user's); whatever was planted
    there — a link to a file holding a live sandbox's id, a FIFO — is read by descriptor without
    following or blocking: it names nothing, rm leaves the link's target alone, and a create of
    that name replaces the entry itself."""
    real = cli("create", "--name", "real").stdout.strip()
    names = os.path.join(mxc.state_dir, ".names")
    target = tmp_path / "holds-an-id"
    target.write_text(real)
    os.symlink(str(target), os.path.join(names, "linked"))
    os.mkfifo(os.path.join(names, "fifo"))
    for name in ("linked", "fifo"):
        r = cli("inspect", name, timeout=30)
        assert r.returncode == 1 and real not in r.stdout, (name, r.stdout, r.stderr)
        assert cli("rm", name, timeout=30).returncode == 1
    assert target.read_text() == real and cli("inspect", "real").returncode == 0
    made = cli("create", "--name", "linked").stdout.strip()
    assert made and made != real
    assert not os.path.islink(os.path.join(names, "linked")) and target.read_text() == real
    assert cli("inspect", "linked").returncode == 0


def test_ls_lists_exactly_what_was_created_and_marks_damage(cli, mxc):
    ids = [cli("create").stdout.strip() for _ in range(2)]
    named = cli("create", "--name", "third").stdout.strip()
    assert cli("start", "third").returncode == 0
    items = listing(cli)
    assert sorted(s["sandboxId"] for s in items) == sorted(ids + [named])
    byid = {s["sandboxId"]: s for s in items}
    assert byid[named]["state"] == "running" and byid[named]["name"] == "third"
    assert byid[named]["limits"]["pids"] > 0 and byid[named]["uid"] > 0
    assert all(byid[i]["state"] == "provisioned" and "name" not in byid[i] for i in ids)
    # damage one: its state file no longer parses
    agent = byid[ids[0]]["agentName"]
    with open(os.path.join(mxc.state_dir, agent, "state.json"), "w") as f:
        f.write("{not json")
    byid = {s["sandboxId"]: s for s in listing(cli)}
    assert byid[ids[0]]["state"] == "damaged" and byid[ids[0]]["damage"]
    table = cli("ls")
    assert table.returncode == 0
    lines = [line for line in table.stdout.splitlines() if "one-shot:" not in line]
    assert lines[0].split()[:4] == ["NAME", "ID", "STATE", "UID"]
    assert len(lines) == 4
    assert any(line.split()[:3] == ["third", byid[named]["agentName"], "running"] for line in lines), lines
    assert any(line.split()[1:3] == [agent, "damaged"] for line in lines), lines
    # the damaged one is still removable
    assert cli("rm", ids[0]).returncode == 0
    assert len(listing(cli)) == 2


def test_ls_shows_a_running_one_shot(cli):
    p = subprocess.Popen([MXC, "run", "--", "sleep", "30"], env=cli.env(), stdout=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: any(s["pid"] == p.pid for s in listing(cli, "one-shot")), 20)
        shot = [s for s in listing(cli, "one-shot") if s["pid"] == p.pid][0]
        assert shot["state"] == "running" and shot["uid"] > 0
        assert "one-shot:%d" % p.pid in cli("ls").stdout
    finally:
        p.kill()
        p.wait()
    assert wait_until(lambda: not any(s["pid"] == p.pid for s in listing(cli, "one-shot")), 20)


def test_rootless_the_same_commands_as_the_callers_own_uid(rl):
    """Without root: the sandbox is the caller's uid (marked * in the table), no host-wide view."""
    def run(*args):
        return subprocess.run(DROP + [MXC] + list(args), env=rl.env(), capture_output=True, text=True, timeout=90)
    r = run("run", "--", "id", "-u")
    assert r.returncode == 0, r.stderr
    sid = run("create", "--name", "mine").stdout.strip()
    try:
        assert run("start", "mine").returncode == 0
        assert run("exec", "mine", "--", "true").returncode == 0
        items = [s for s in json.loads(run("ls", "--json").stdout) if s["kind"] == "session"]
        assert [(s["sandboxId"], s["name"], s["state"], s["uid"], s["rootless"]) for s in items] == \
            [(sid, "mine", "running", UID, True)]
        line = [x for x in run("ls").stdout.splitlines() if x.startswith("mine")][0]
        assert "%d*" % UID in line.split()
    finally:
        assert run("rm", "mine").returncode == 0
    assert [s for s in json.loads(run("ls", "--json").stdout) if s["kind"] == "session"] == []


def test_inspect_shows_policy_and_state(cli, host_dir):
    d = host_dir("insp")
    sid = cli("create", "--name", "i", "--ro", d).stdout.strip()
    r = cli("inspect", "i")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["sandboxId"] == sid and j["name"] == "i" and j["state"] == "provisioned"
    assert j["policy"]["filesystem"]["readonlyPaths"] == [d]
    r = cli("inspect", "nosuch")
    assert r.returncode == 1


def test_inspect_masks_a_governed_proxy_credential(cli):
    sid = cli("create", "--allow-host", "example.com").stdout.strip()
    if cli("start", sid).returncode != 0:
        pytest.skip("governed egress unavailable on this build")
    j = json.loads(cli("inspect", sid).stdout)
    assert j["networkProxy"] == "http://***@127.0.0.1:3128/", j["networkProxy"]
    token = cli("exec", sid, "--", "sh", "-c", "echo $HTTP_PROXY").stdout.strip()
    assert token.startswith("http://mxc:") and token.split("@")[0].split(":")[-1] not in json.dumps(j)


def test_gc(cli):
    r = cli("gc")
    assert r.returncode == 0 and r.stdout.startswith("swept:"), r.stdout + r.stderr
    r = cli("gc", "--json")
    assert "swept" in json.loads(r.stdout)["result"]


# --------------------------------------------------------------------------------------------
# shell, on a terminal made here


class Pty(PtyScreen):
    """`mxc ARGS` with stdin, stdout and stderr on a pty made here, its controlling terminal."""

    def __init__(self, argv, env, rows=24, cols=80):
        super().__init__(rows, cols)
        self.before = termios.tcgetattr(self.slave)
        self.p = subprocess.Popen(argv, env=env, stdin=self.slave, stdout=self.slave, stderr=self.slave,
                                  start_new_session=True, preexec_fn=self._ctty)

    def _ctty(self):
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the person's terminal is mxc's controlling one


def test_shell_on_a_terminal(cli):
    assert cli("create", "--name", "sh").returncode == 0
    assert cli("start", "sh").returncode == 0
    t = Pty([MXC, "shell", "sh"], cli.env({"TERM": "xterm", "PS1": "$ "}), rows=31, cols=101)
    try:
        t.write(b"tty; stty size; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo ALL-$((1+1))-TTY; echo TERM=$TERM\n")
        assert t.read_until(b"TERM=xterm"), t.screen
        assert b"/dev/pts/" in t.screen and b"31 101" in t.screen and b"ALL-2-TTY" in t.screen, t.screen
        # a resize reaches the shell's terminal: the kernel sends mxc SIGWINCH (the pty's
        # foreground group), mxc passes the size on; asked until seen (delivery is asynchronous)
        t.resize(40, 120)
        assert wait_until(lambda: t.write(b"stty size\n") or t.read_until(b"40 120", 1), 20), t.screen
        # Ctrl-C reaches the workload's foreground job and not mxc
        # (the ^C is typed once the job runs as the terminal's foreground group: it says so
        # itself; bash makes it the foreground before it execs)
        t.write(b"sh -c 'echo running-$$; exec sleep 100'\n")
        assert wait_until(lambda: t.read_until(b"\0never", 0.2) or re.search(rb"running-\d+", t.screen), 30), \
            t.screen
        t.write(b"\x03")
        t.write(b"echo after-sleep-$?\n")
        assert t.read_until(b"after-sleep-130", 20), t.screen
        assert t.p.poll() is None
        # job control: a background job and back
        # (the needle is what the shell prints, never the terminal's echo of what was typed)
        t.write(b"sleep 50 &\njobs; kill %1; echo JOBS-$((40+2))-DONE\n")
        assert t.read_until(b"JOBS-42-DONE"), t.screen
        assert b"[1]" in t.screen, t.screen
        t.write(b"exit 5\n")
        assert t.p.wait(timeout=30) == 5
        assert termios.tcgetattr(t.slave) == t.before  # the person's terminal restored
    finally:
        t.close()


def test_shell_needs_a_terminal(cli):
    assert cli("create", "--name", "nt").returncode == 0
    assert cli("start", "nt").returncode == 0
    r = cli("shell", "nt")
    assert r.returncode == 2 and "needs a terminal" in r.stderr


# --------------------------------------------------------------------------------------------
# the man page and the completion


def test_man_page_renders_and_names_every_subcommand():
    page = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "man", "mxc.1")
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr, r.stderr
    text = open(page).read()
    for sub in ("run", "create", "start", "stop", "rm", "exec", "shell", "ls", "inspect", "gc"):
        assert ".B %s" % sub in text or "\\fB%s\\fR" % sub in text, sub


def test_bash_completion_offers_subcommands_and_names(cli):
    assert cli("create", "--name", "complete-me").returncode == 0
    comp = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "completions", "mxc.bash")
    script = ('mxc() { "%s" "$@"; }; source %s; ' % (MXC, comp) +
              'COMP_WORDS=(mxc s); COMP_CWORD=1; _mxc; echo "${COMPREPLY[*]}"; '
              'COMP_WORDS=(mxc start comp); COMP_CWORD=2; _mxc; echo "${COMPREPLY[*]}"; '
              'COMP_WORDS=(mxc run --n); COMP_CWORD=2; _mxc; echo "${COMPREPLY[*]}"')
    r = subprocess.run(["bash", "-c", script], env=cli.env(), capture_output=True, text=True)
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["start", "stop", "shell"], r.stdout + r.stderr
    assert lines[1] == "complete-me", r.stdout + r.stderr
    assert lines[2] == "--net", r.stdout + r.stderr
