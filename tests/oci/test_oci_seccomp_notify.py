"""Seccomp agents (linux.seccomp.listenerPath, SCMP_ACT_NOTIFY; src/oci/notify.h): mxc-oci hands the
container's listener and its process state to the agent at listenerPath, as runc 1.1 does; the
engine's baseline still answers first (a call it denies never reaches the agent); the container keeps
no listener; exec hands a new one over; what would hang the runtime or hand the listener to the
workload itself is refused.

The agent here is a small one in Python: it takes the state and the descriptor (recvmsg), answers
mkdir with ENOMEDIUM and lets every other call go on (SECCOMP_IOCTL_NOTIF_RECV/SEND), and records
what it saw.

Run as root:  python3 -m pytest -q -p no:cacheprovider tests/oci/test_oci_seccomp_notify.py
"""
import array
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time

import pytest

from test_oci import oci  # noqa: F401  (the fixture)

NR_MKDIR, NR_UNSHARE = 83, 272  # x86_64
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0|1, seccomp_notif (80) | seccomp_notif_resp (24))
CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers of x86_64")


class Agent:
    """A seccomp agent on a Unix socket: states received, syscall numbers notified."""

    def __init__(self, path):
        self.path = path
        self.states, self.seen = [], []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        listeners = []
        while not self.stop:
            r, _, _ = select.select([self.sock] + listeners, [], [], 0.1)
            for s in r:
                if s is self.sock:
                    listeners.append(self.accept())
                elif self.answer(s) is False:
                    listeners.remove(s)
                    os.close(s)
        for s in listeners:
            os.close(s)

    def accept(self):
        c, _ = self.sock.accept()
        fds = array.array("i")
        msg, anc, _, _ = c.recvmsg(4096, socket.CMSG_SPACE(4 * fds.itemsize))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        c.close()
        self.states.append(json.loads(msg))
        assert len(fds) == 1
        return fds[0]

    def answer(self, fd):
        req = bytearray(80)
        try:
            fcntl.ioctl(fd, NOTIF_RECV, req)
        except OSError:
            return False  # the process is gone (ENOENT) or the filter with it
        nid, _pid, _flags, nr = struct.unpack_from("=QIIi", req)
        self.seen.append(nr)
        if nr == NR_MKDIR:
            resp = struct.pack("=QqiI", nid, 0, -errno.ENOMEDIUM, 0)
        else:
            resp = struct.pack("=QqiI", nid, 0, 0, CONTINUE)
        try:
            fcntl.ioctl(fd, NOTIF_SEND, bytearray(resp))
        except OSError:
            pass
        return True

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def agent(oci):
    a = Agent(os.path.join(oci.base, "agent.sock"))
    yield a
    a.close()


def notify_profile(path, names=("mkdir",), **extra):
    p = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"], "listenerPath": path,
         "listenerMetadata": "meta", "syscalls": [{"names": list(names), "action": "SCMP_ACT_NOTIFY"}]}
    p.update(extra)
    return p


def bundle(oci, args, profile):
    return oci.bundle(args, mutate=lambda c: c["linux"].update(seccomp=profile), readonly=False)


def test_the_agent_gets_the_state_and_the_listener_and_answers(oci, agent):
    b = bundle(oci, ["sh", "-c", "mkdir /tmp/x; echo rc=$?"], notify_profile(agent.path))
    rc, out, err = oci("run", "--bundle", b, "n1")
    assert rc == 0, err
    assert "No medium found" in err + out and "rc=1" in out, out + err
    assert not os.path.exists(os.path.join(b, "rootfs/tmp/x"))
    assert len(agent.states) == 1
    s = agent.states[0]
    assert s["fds"] == ["seccompFd"] and s["metadata"] == "meta" and s["ociVersion"]
    st = s["state"]
    assert st["id"] == "n1" and st["status"] == "creating" and st["pid"] == s["pid"] > 0
    assert os.path.realpath(st["bundle"]) == os.path.realpath(b)
    assert NR_MKDIR in agent.seen


def test_the_baseline_answers_before_the_agent(oci, agent):
    """unshare is denied by the engine's baseline (EPERM): notified by the config's profile too, it never
    reaches the agent; mkdir, which the baseline allows, does."""
    b = bundle(oci, ["sh", "-c", "unshare -u true; echo u=$?; mkdir /tmp/y; echo m=$?"],
               notify_profile(agent.path, names=("mkdir", "unshare")))
    rc, out, err = oci("run", "--bundle", b, "n2")
    assert rc == 0, err
    assert "Operation not permitted" in out + err and "u=1" in out and "m=1" in out, out + err
    assert NR_MKDIR in agent.seen and NR_UNSHARE not in agent.seen


def test_the_container_keeps_no_listener(oci, agent):
    b = bundle(oci, ["sh", "-c", "for f in /proc/1/fd/* /proc/self/fd/*; do readlink $f; done; sleep 100"],
               notify_profile(agent.path))
    rc, _, err = oci.create("n3", b)
    assert rc == 0, err
    assert oci("start", "n3")[0] == 0
    rc, out, err = oci("exec", "n3", "sh", "-c", "for f in /proc/*/fd/*; do readlink $f; done; echo done")
    assert rc == 0 and "done" in out, err
    init = oci.state("n3")["pid"]
    host = [os.readlink("/proc/%d/fd/%s" % (init, f)) for f in os.listdir("/proc/%d/fd" % init)]
    with open(os.path.join(b, "out")) as f:
        inside = f.read()
    for seen in (out, inside, "\n".join(host)):
        assert "seccomp" not in seen, seen


def test_exec_hands_a_listener_over_again(oci, agent):
    b = bundle(oci, ["sleep", "100"], notify_profile(agent.path))
    rc, _, err = oci.create("n4", b)
    assert rc == 0, err
    assert oci("start", "n4")[0] == 0
    rc, out, err = oci("exec", "n4", "sh", "-c", "mkdir /tmp/z; echo rc=$?; echo pid=$$")
    assert "rc=1" in out and "No medium found" in out + err, out + err
    assert len(agent.states) == 2
    init = oci.state("n4")["pid"]
    s = agent.states[1]
    assert s["state"]["status"] == "running" and s["state"]["pid"] == init and s["pid"] not in (0, init)
    assert s["metadata"] == "meta" and s["fds"] == ["seccompFd"]


def test_no_agent_fails_create_in_runc_s_words(oci):
    b = bundle(oci, ["true"], notify_profile(os.path.join(oci.base, "none.sock")))
    rc, _, err = oci("run", "--bundle", b, "n5")
    assert rc != 0 and "failed to connect with seccomp agent" in err, err
    assert oci("list", "--quiet")[1].split() == []


def test_an_agent_served_from_inside_the_container_is_refused(oci):
    """The listener is never handed to the workload: at exec the agent's socket is served by a
    process of the container's own user namespace (a workload that replaced the socket where the
    path leads, a directory it can write), and exec is refused."""
    shared = os.path.join(oci.base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    agent = Agent(os.path.join(shared, "agent.sock"))
    b = bundle(oci, ["sleep", "100"], notify_profile(agent.path))
    rc, _, err = oci.create("n6", b)
    assert rc == 0, err
    assert oci("start", "n6")[0] == 0
    init = oci.state("n6")["pid"]
    agent.close()
    os.unlink(agent.path)
    code = ("import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); "
            "print('up', flush=True); c=s.accept()[0]; c.recv(4096)")
    fake = subprocess.Popen(["nsenter", "-t", str(init), "-U", "--", "/usr/bin/python3", "-c", code, agent.path],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert fake.stdout.readline().strip() == b"up"
        rc, out, err = oci("exec", "n6", "sh", "-c", "mkdir /tmp/w; echo rc=$?")
        assert rc != 0 and "served from another user namespace than the runtime's" in err, out + err
        # and the refused exec's process never ran (it waits for the handover before its execve)
        assert oci("exec", "n6", "sh", "-c", "test -e /tmp/w")[0] != 0
    finally:
        fake.kill()
        fake.wait()


def test_a_failed_handover_at_exec_never_runs_the_process(oci, agent):
    """Review of issue 36: the exec'd process sent its listener and went on to execve at once, so an
    exec refused because the agent could not take the listener had already run its command (and a
    --detach exec waited for it).  Now it waits for mxc-oci's word that the agent has it."""
    b = bundle(oci, ["sleep", "100"], notify_profile(agent.path))
    assert oci.create("n9", b)[0] == 0
    assert oci("start", "n9")[0] == 0
    agent.close()
    os.unlink(agent.path)
    rc, out, err = oci("exec", "--detach", "n9", "sh", "-c", "echo ran > /tmp/ran; sleep 30")
    assert rc != 0 and "failed to connect with seccomp agent" in err, out + err
    assert not os.path.exists(os.path.join(b, "rootfs", "tmp", "ran"))
    assert oci("delete", "--force", "n9")[0] == 0


def test_an_agent_in_another_container_s_user_namespace_is_refused(oci, agent):
    """A second container that can write where listenerPath leads serves the socket from its own user
    namespace: it would get this container's listener (answer its calls, add descriptors to it).
    Only an agent of the runtime's own user namespace is handed a listener."""
    shared = os.path.join(oci.base, "shared2")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    other = oci.bundle(["sleep", "100"])
    assert oci.create("n10", other)[0] == 0
    pid = oci.state("n10")["pid"]
    path = os.path.join(shared, "agent.sock")
    code = ("import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); "
            "print('up', flush=True); c=s.accept()[0]; c.recv(4096)")
    fake = subprocess.Popen(["nsenter", "-t", str(pid), "-U", "--", "/usr/bin/python3", "-c", code, path],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert fake.stdout.readline().strip() == b"up"
        b = bundle(oci, ["true"], notify_profile(path))
        rc, out, err = oci("run", "--bundle", b, "n11")
        assert rc != 0 and "served from another user namespace than the runtime's" in err, out + err
    finally:
        fake.kill()
        fake.wait()
        oci("delete", "--force", "n10")


def spawn_at(pid, argv):
    """A host process (the runtime's user namespace) given exactly pid (clone3 with set_tid, as root):
    any host process the kernel may hand a freed pid to.  Its pid, or None if pid is taken."""
    libc = ctypes.PyDLL(None, use_errno=True)  # the GIL held across the call: the child runs no thread
    tid = (ctypes.c_int * 1)(pid)
    args = (ctypes.c_uint64 * 11)(0, 0, 0, 0, signal.SIGCHLD, 0, 0, 0, ctypes.addressof(tid), 1, 0)
    r = libc.syscall(435, ctypes.byref(args), ctypes.sizeof(args))  # clone3 (x86_64)
    if r == 0:
        os.execv(argv[0], argv)
    return r if r == pid else None


def test_an_agent_whose_listening_process_exited_is_refused_whatever_holds_its_pid(oci):
    """Review of issue 37: the agent's user namespace was read through SO_PEERCRED's pid, a number.
    The workload listens at listenerPath, hands the socket to a child and exits; once any host
    process is given that pid again (here made so: clone3 set_tid), the pid vouched for the
    workload's socket, and exec handed the container's listener to it (the child received it).
    Now the listening process is named by its pidfd (SO_PEERPIDFD), read while it lives."""
    shared = os.path.join(oci.base, "shared3")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    agent = Agent(os.path.join(shared, "agent.sock"))
    b = bundle(oci, ["sleep", "100"], notify_profile(agent.path))
    assert oci.create("n13", b)[0] == 0
    assert oci("start", "n13")[0] == 0
    init = oci.state("n13")["pid"]
    agent.close()
    os.unlink(agent.path)
    got = os.path.join(shared, "got")
    code = ("import array,os,socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)\n"
            "child = os.fork()\n"
            "if child == 0:\n"
            "    c = s.accept()[0]; m, anc, _, _ = c.recvmsg(4096, 64)\n"
            "    if anc: open(sys.argv[2], 'w').write('listener')\n"
            "    os._exit(0)\n"
            "print(os.getpid(), child, flush=True)\n")
    fake = subprocess.Popen(["nsenter", "-t", str(init), "-U", "--", "/usr/bin/python3", "-c", code, agent.path, got],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    listening, child = (int(w) for w in fake.stdout.readline().split())
    fake.wait()  # the listening process is gone; its child holds the socket
    host = spawn_at(listening, ["/bin/sleep", "60"])
    try:
        if host is None:
            pytest.skip("pid %d was taken again before the test could give it to a host process" % listening)
        rc, out, err = oci("exec", "n13", "sh", "-c", "mkdir /tmp/w2; echo rc=$?")
        assert rc != 0 and "cannot tell whose it is" in err and "has exited" in err, out + err
        time.sleep(0.3)
        assert not os.path.exists(got)
        assert not os.path.exists(os.path.join(b, "rootfs", "tmp", "w2"))  # the exec'd process never ran
    finally:
        for p in (host, child):
            if p:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if host:
            os.waitpid(host, 0)


def test_an_agent_that_never_accepts_cannot_hold_exec(oci, agent):
    """Review of issue 36: a socket at listenerPath whose backlog is full and that never accepts held
    create and exec in connect() forever.  The connection is given a bounded time, then refused."""
    b = bundle(oci, ["sleep", "100"], notify_profile(agent.path))
    assert oci.create("n12", b)[0] == 0
    assert oci("start", "n12")[0] == 0
    agent.close()
    os.unlink(agent.path)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(agent.path)
    srv.listen(0)
    fillers = []
    try:
        for _ in range(8):                  # the backlog filled by connections never accepted
            c = socket.socket(socket.AF_UNIX)
            c.setblocking(False)
            try:
                c.connect(agent.path)
            except (BlockingIOError, InterruptedError):
                c.close()
                break
            fillers.append(c)
        rc, out, err = oci("exec", "--detach", "n12", "sh", "-c", "echo ran > /tmp/ran")
        assert rc != 0 and "failed to connect with seccomp agent" in err, out + err
        assert not os.path.exists(os.path.join(b, "rootfs", "tmp", "ran"))
    finally:
        for c in fillers:
            c.close()
        srv.close()
        oci("delete", "--force", "n12")


def test_a_link_at_the_listener_path_is_not_followed(oci, agent):
    """The socket at listenerPath is opened without following its last component and connected through
    that descriptor: a symbolic link there (one a workload could plant in a directory it writes, to
    another socket of the host) is refused, not followed."""
    link = os.path.join(oci.base, "link.sock")
    os.symlink(agent.path, link)
    b = bundle(oci, ["true"], notify_profile(link))
    rc, _, err = oci("run", "--bundle", b, "n8")
    assert rc != 0 and "failed to connect with seccomp agent" in err and "symbolic links" in err, err
    assert agent.states == []


REFUSED = {
    "write": (lambda p: notify_profile(p, names=("mkdir", "write")),
              "SCMP_ACT_NOTIFY cannot be used for the write syscall"),
    "sendmsg": (lambda p: notify_profile(p, names=("sendmsg",)),
                "SCMP_ACT_NOTIFY cannot be used for the sendmsg syscall"),
    "default": (lambda p: {"defaultAction": "SCMP_ACT_NOTIFY", "listenerPath": p},
                "SCMP_ACT_NOTIFY cannot be used as default action"),
    "no_path": (lambda p: notify_profile(""), "SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath"),
    "relative": (lambda p: notify_profile("agent.sock"), "linux.seccomp.listenerPath \"agent.sock\" is not an absolute"),
    "abstract": (lambda p: notify_profile("@agent"), "is not an absolute path"),
    "metadata": (lambda p: notify_profile(p, listenerMetadata=7), "linux.seccomp.listenerMetadata must be a string"),
    "path_type": (lambda p: notify_profile(p, listenerPath=7), "linux.seccomp.listenerPath must be a string"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_field(oci, agent, case):
    make, words = REFUSED[case]
    b = bundle(oci, ["true"], make(agent.path))
    rc, _, err = oci("run", "--bundle", b, "r1")
    assert rc != 0 and words in err, err
    assert agent.states == []


def test_a_listener_path_without_a_notify_action_is_never_connected(oci, agent):
    """runc accepts it alike (its seccomp-notify.bats "empty listener path")."""
    prof = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": agent.path, "listenerMetadata": "meta"}
    b = bundle(oci, ["sh", "-c", "mkdir /tmp/v && echo made"], prof)
    rc, out, err = oci("run", "--bundle", b, "n7")
    assert rc == 0 and "made" in out, err
    assert agent.states == []
