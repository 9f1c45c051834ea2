#!/usr/bin/python3
"""recvtty: a consumer of runc's --console-socket protocol, for runc's bats suite.

runc's own contrib/cmd/recvtty is Go and not packaged by Debian; the bats
helpers (helpers.bash's setup_recvtty) start it as
`recvtty --pid-file FILE --mode null SOCKET`.  This speaks the same protocol:
listen on a unix stream socket; each connection carries one message whose
ancillary data is the pty master (SCM_RIGHTS) and whose payload is the pty's
name.  Modes, as runc's:
  single  one terminal, wired to this process's stdin/stdout (ONLCR cleared);
          the listener is closed after the first connection
  null    any number of terminals, each read until it closes and discarded
"""
import argparse
import os
import selectors
import socket
import sys
import termios
import threading


def recv_master(conn):
    _, fds, _, _ = socket.recv_fds(conn, 4096, 1)
    if len(fds) != 1:
        raise OSError("no descriptor received")
    return fds[0]


def drain(fd):
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass  # EIO once the last peer descriptor is closed
    finally:
        os.close(fd)


def handle_null(ln):
    while True:
        conn, _ = ln.accept()
        with conn:
            try:
                fd = recv_master(conn)
            except OSError:
                continue
        threading.Thread(target=drain, args=(fd,), daemon=True).start()


def handle_single(ln, no_stdin):
    conn, _ = ln.accept()
    ln.close()
    with conn:
        fd = recv_master(conn)
    attrs = termios.tcgetattr(fd)
    attrs[1] &= ~termios.ONLCR
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    if not no_stdin:
        sel.register(0, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fd == fd:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    os.close(fd)
                    return
                os.write(1, data)
            else:
                data = os.read(0, 65536)
                if not data:
                    sel.unregister(0)
                    continue
                os.write(fd, data)


def main():
    p = argparse.ArgumentParser(prog="recvtty")
    p.add_argument("--mode", "-m", default="single")
    p.add_argument("--pid-file", default="")
    p.add_argument("--no-stdin", action="store_true")
    p.add_argument("socket")
    a = p.parse_args()
    if a.mode not in ("single", "null"):
        sys.exit("[recvtty] fatal error: need to select a valid mode: %s" % a.mode)
    # nothing but stdio of the caller's: a test that fails before the runtime connects leaves this
    # process behind, and bats waits for every holder of its own descriptors (fd 3) to go
    os.closerange(3, 1 << 16)
    if a.pid_file:
        with open(a.pid_file, "w") as f:
            f.write("%d\n" % os.getpid())
    ln = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ln.bind(a.socket)
    ln.listen(16)
    if a.mode == "null":
        handle_null(ln)
    else:
        handle_single(ln, a.no_stdin)


if __name__ == "__main__":
    try:
        main()
    except (OSError, KeyboardInterrupt) as e:
        sys.exit("[recvtty] fatal error: %s" % e)
