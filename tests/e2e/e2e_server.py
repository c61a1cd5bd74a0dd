"""e2e_server.py - start the server under test for the Python e2e tests.

Same rules as the C harness (e2e.h): the binary is $CUDIS_E2E_SERVER, else
the path given with --server (the cudis-server target, from CMake); a binary
named *redis-server* gets --save "" --appendonly no, cudis gets --engine
$CUDIS_E2E_ENGINE (default cpu). It listens on a free 127.0.0.1 port and a
unix socket in a temporary folder, and is stopped with SIGTERM (exit 0
expected). Exit code 77 means "skipped" (no server configured).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77


def binary(argv):
    env = os.environ.get("CUDIS_E2E_SERVER", "")
    if env:
        return env
    if "--server" in argv:
        i = argv.index("--server")
        if i + 1 < len(argv) and argv[i + 1]:
            return argv[i + 1]
    return None


def strip_server_arg(argv):
    """argv without "--server PATH" (for unittest.main)."""
    out = list(argv)
    if "--server" in out:
        i = out.index("--server")
        del out[i:i + 2]
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ping(port, timeout=1.0):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return len(s.recv(64)) > 0
    except OSError:
        return False


class Server:
    """A running server: .port, .sock, .dir; stop() returns the exit code."""

    def __init__(self, bin_path, extra=(), preexec=None):
        self.bin = bin_path
        self.dir = tempfile.mkdtemp(prefix="cudis-e2e-py-")
        os.chmod(self.dir, 0o777)  # a server run as another user (test_fdlimit) writes here
        self.sock = os.path.join(self.dir, "s.sock")
        self.log = os.path.join(self.dir, "server.log")
        self.is_redis = "redis-server" in os.path.basename(bin_path)
        for _ in range(3):
            self.port = free_port()
            args = [bin_path]
            if self.is_redis:
                args += ["--save", "", "--appendonly", "no"]
            else:
                args += ["--engine", os.environ.get("CUDIS_E2E_ENGINE") or "cpu"]
            args += ["--port", str(self.port), "--bind", "127.0.0.1", "--unixsocket", self.sock]
            args += list(extra)
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                             preexec_fn=preexec)
            end = time.time() + 20
            while time.time() < end and self.proc.poll() is None:
                if ping(self.port):
                    return
                time.sleep(0.02)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        sys.stderr.write(self.log_tail())
        raise RuntimeError("server %s did not start" % bin_path)

    def log_tail(self):
        try:
            with open(self.log, "rb") as f:
                return f.read()[-4000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        rc = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = -9
        else:
            rc = self.proc.returncode
        if rc != 0:
            sys.stderr.write(self.log_tail())
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


def main(*modules):
    """Run the calling file's tests against the server under test: each
    module given gets it as its BIN; exit 77 (skipped) when there is none."""
    import unittest
    bin_path = binary(sys.argv)
    if not bin_path:
        print("no server under test: build cudis-server or set CUDIS_E2E_SERVER; skipped")
        sys.exit(SKIP)
    for m in modules:
        m.BIN = bin_path
    unittest.main(module="__main__", argv=strip_server_arg(sys.argv), verbosity=2)

