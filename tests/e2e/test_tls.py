#!/usr/bin/python3
"""test_tls.py - TLS on tls-port, as Redis 7 serves it. The test makes its
own certificates with the openssl tool (a CA, two server certificates, a
client certificate, and a client certificate from a CA the server does not
trust) and checks, with redis-py (ssl=True), redis-cli --tls, ioredis
(tests/e2e/node, installed by scripts/deps.sh) and Python's ssl module: commands, a long pipeline and an 8 MB value both ways; TLS
beside the plaintext port and alone (port 0); tls-auth-clients yes, optional
and no (also changed by CONFIG SET); CONFIG SET tls-cert-file/tls-key-file
(new connections see the new certificate, old ones go on), a missing file
or a key that does not match refused with Redis's error while the old
context stays; a bad certificate at start (the server exits 1 with the
reason in its log); tls-protocols TLSv1.3 refusing a TLSv1.2 client; an
encrypted key with tls-key-file-pass (a wrong one: exit 1); tls-ca-cert-dir
instead of the file; tls-dh-params-file with a DHE suite (a file without DH
parameters: exit 1); tls-session-caching resuming a TLSv1.2 session, and
not with "no"; a
client that stops mid-handshake does not stall the others and is closed by
`timeout` (Redis's idle timeout applies to it), and by cudis's own 10 s
handshake limit without `timeout` (Redis has none: checked on cudis only);
plaintext RESP sent to the TLS port gets the connection closed, the server
lives on; protected mode refusing a client from 127.0.0.2 after its
handshake, over TLS; many TLS clients at once (cudis with io-threads 4) while CONFIG SET
swaps the certificate; tls-cluster: three nodes over a TLS bus, each client
told the ports of its own kind, and a cluster made and checked by
`redis-cli --tls --cluster create/check`, driven with `redis-cli --tls -c`.
Run by ctest (label e2e); validated first against Debian's redis-server:
  /usr/bin/python3 test_tls.py --server PATH   (or CUDIS_E2E_SERVER=...)
"""
import os
import shutil
import signal
import random
import socket
import json
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402

BIN = None
CERTS = None  # the folder of the certificates (setUpModule)
CONFIG_ERR = ("CONFIG SET failed (possibly related to argument '%s') - Unable to update TLS "
              "configuration. Check server logs.")


def openssl(*args):
    subprocess.run(("openssl",) + args, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def cert(name):
    return os.path.join(CERTS, name)


def setUpModule():
    global CERTS
    CERTS = tempfile.mkdtemp(prefix="cudis-tls-")
    for ca in ("ca", "rogue-ca"):
        openssl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-days", "2",
                "-keyout", cert(ca + ".key"), "-out", cert(ca + ".crt"), "-subj", "/CN=" + ca)
    for name, ca in (("server", "ca"), ("server2", "ca"), ("client", "ca"),
                     ("rogue", "rogue-ca")):
        openssl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", cert(name + ".key"),
                "-out", cert(name + ".csr"), "-subj", "/CN=" + name)
        openssl("x509", "-req", "-in", cert(name + ".csr"), "-CA", cert(ca + ".crt"),
                "-CAkey", cert(ca + ".key"), "-CAcreateserial", "-days", "2",
                "-out", cert(name + ".crt"))


def tearDownModule():
    shutil.rmtree(CERTS, ignore_errors=True)


def tls_args():
    return ["--tls-cert-file", cert("server.crt"), "--tls-key-file", cert("server.key"),
            "--tls-ca-cert-file", cert("ca.crt")]


class TlsServer:
    """A server under test with tls-port (and port unless plain is False)."""

    def __init__(self, extra=(), plain=True, cudis_extra=(), wait=True):
        self.dir = tempfile.mkdtemp(prefix="cudis-tls-srv-")
        self.log = os.path.join(self.dir, "server.log")
        self.is_redis = "redis-server" in os.path.basename(BIN)
        self.port = e2e_server.free_port() if plain else 0
        self.tls_port = e2e_server.free_port()
        args = [BIN]
        if self.is_redis:
            args += ["--save", "", "--appendonly", "no"]
        else:
            args += ["--engine", os.environ.get("CUDIS_E2E_ENGINE") or "cpu"] + list(cudis_extra)
        args += ["--bind", "127.0.0.1", "--port", str(self.port), "--tls-port",
                 str(self.tls_port), "--dir", self.dir] + tls_args() + [
                     x.replace("{dir}", self.dir) for x in extra]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        if not wait:
            return
        end = time.time() + 20
        while time.time() < end and self.proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.tls_port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("server did not start:\n" + self.log_text())

    def log_text(self):
        with open(self.log, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def client(self, certfile="client", **kw):
        """redis-py over TLS, with the client certificate `certfile` (None: none)."""
        return redis.Redis(port=self.tls_port, ssl=True, ssl_ca_certs=cert("ca.crt"),
                           ssl_cert_reqs="required",
                           ssl_certfile=cert(certfile + ".crt") if certfile else None,
                           ssl_keyfile=cert(certfile + ".key") if certfile else None,
                           socket_timeout=20, **kw)

    def stop(self):
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = -9
        if rc != 0:
            sys.stderr.write(self.log_text()[-4000:])
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


def ssl_context(certfile="client", maximum=None, minimum=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(cert("ca.crt"))
    if certfile:
        ctx.load_cert_chain(cert(certfile + ".crt"), cert(certfile + ".key"))
    if maximum:
        ctx.maximum_version = maximum
    if minimum:
        ctx.minimum_version = minimum
    return ctx


def tls_socket(port, **kw):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return ssl_context(**kw).wrap_socket(raw)


def ping_raw(s):
    """PING over a connected (TLS) socket: the reply line, b'' when closed."""
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
    got = b""
    while not got.endswith(b"\r\n"):
        d = s.recv(64)
        if not d:
            break
        got += d
    return got


def peer_cn(port):
    with tls_socket(port) as s:
        subject = dict(x[0] for x in s.getpeercert()["subject"])
        return subject["commonName"]


def closed_within(sock, seconds):
    """The time until the server closed sock (EOF or reset), None if it did not."""
    t0 = time.time()
    sock.settimeout(0.2)
    while time.time() - t0 < seconds:
        try:
            if sock.recv(4096) == b"":
                return time.time() - t0
        except socket.timeout:
            continue
        except OSError:
            return time.time() - t0
    return None


class TlsTest(unittest.TestCase):
    def start(self, *extra, **kw):
        srv = TlsServer(extra=extra, **kw)
        self.addCleanup(lambda: self.assertEqual(srv.stop(), 0, "server did not exit 0"))
        return srv

    def test_commands_pipeline_big_values(self):
        srv = self.start()
        r = srv.client()
        self.assertTrue(r.ping())
        self.assertTrue(r.set("k", "v"))
        self.assertEqual(r.get("k"), b"v")
        p = r.pipeline(transaction=False)
        for i in range(5000):
            p.set("key:%d" % i, "value:%d" % i)
        for i in range(5000):
            p.get("key:%d" % i)
        out = p.execute()
        self.assertEqual(out[:5000], [True] * 5000)
        self.assertEqual(out[5000:], [b"value:%d" % i for i in range(5000)])
        big = os.urandom(8 * 1024 * 1024)  # many records each way: partial writes, buffered reads
        self.assertTrue(r.set("big", big))
        self.assertEqual(r.get("big"), big)
        self.assertEqual(r.strlen("big"), len(big))
        # the plaintext port beside it serves the same data
        plain = redis.Redis(port=srv.port, socket_timeout=20)
        self.assertEqual(plain.get("key:4999"), b"value:4999")
        self.assertEqual(plain.get("big"), big)
        self.assertEqual(r.config_get("tls-port")["tls-port"], str(srv.tls_port))
        r.close()
        plain.close()

    def test_redis_cli(self):
        srv = self.start()
        base = ["redis-cli", "-p", str(srv.tls_port), "--tls", "--cacert", cert("ca.crt"),
                "--cert", cert("client.crt"), "--key", cert("client.key")]
        out = subprocess.run(base + ["PING"], capture_output=True, timeout=20)
        self.assertEqual(out.stdout, b"PONG\n")
        subprocess.run(base + ["SET", "cli", "yes"], capture_output=True, timeout=20, check=True)
        out = subprocess.run(base + ["GET", "cli"], capture_output=True, timeout=20)
        self.assertEqual(out.stdout, b"yes\n")

    def test_ioredis(self):
        node_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")
        self.assertTrue(os.path.isdir(os.path.join(node_dir, "node_modules", "ioredis")),
                        "ioredis is not installed: run scripts/deps.sh")
        srv = self.start()
        env = dict(os.environ, PORT=str(srv.tls_port), CA=cert("ca.crt"),
                   CERT=cert("client.crt"), KEY=cert("client.key"))
        out = subprocess.run(["node", os.path.join(node_dir, "ioredis_tls.js")], env=env,
                             capture_output=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr.decode("utf-8", "replace"))
        got = json.loads(out.stdout)
        self.assertEqual(got, {"ping": "PONG", "set": "OK", "get": "v", "big": True,
                               "pipeline_last": 2000, "pipeline_errors": 0, "hset": 2,
                               "hgetall": {"a": "1", "b": "2"}, "mget": ["v", None]})

    def test_port_zero(self):
        srv = self.start(plain=False)
        r = srv.client()
        self.assertTrue(r.ping())
        self.assertEqual(r.config_get("port")["port"], "0")
        r.close()

    def test_auth_clients(self):
        srv = self.start()
        with self.assertRaises((redis.ConnectionError, ssl.SSLError, OSError)):
            srv.client(certfile=None).ping()  # default yes: a certificate is required
        with self.assertRaises((redis.ConnectionError, ssl.SSLError, OSError)):
            srv.client(certfile="rogue").ping()  # from a CA the server does not trust
        r = srv.client()
        self.assertTrue(r.config_set("tls-auth-clients", "optional"))
        self.assertTrue(srv.client(certfile=None).ping())
        self.assertTrue(srv.client().ping())
        with self.assertRaises((redis.ConnectionError, ssl.SSLError, OSError)):
            srv.client(certfile="rogue").ping()  # optional: one presented is verified
        self.assertTrue(r.config_set("tls-auth-clients", "no"))
        self.assertTrue(srv.client(certfile=None).ping())
        self.assertTrue(r.config_set("tls-auth-clients", "yes"))
        with self.assertRaises((redis.ConnectionError, ssl.SSLError, OSError)):
            srv.client(certfile=None).ping()
        self.assertEqual(r.config_get("tls-auth-clients")["tls-auth-clients"], "yes")
        r.close()

    def test_auth_clients_no_at_start(self):
        srv = self.start("--tls-auth-clients", "no")
        self.assertTrue(srv.client(certfile=None).ping())
        self.assertTrue(srv.client().ping())

    def test_reload_certificate(self):
        srv = self.start()
        old = tls_socket(srv.tls_port)
        self.assertEqual(ping_raw(old), b"+PONG\r\n")
        self.assertEqual(peer_cn(srv.tls_port), "server")
        r = srv.client()
        # a certificate and its key change together in one CONFIG SET
        self.assertTrue(r.execute_command("CONFIG", "SET", "tls-cert-file", cert("server2.crt"),
                                          "tls-key-file", cert("server2.key")))
        self.assertEqual(peer_cn(srv.tls_port), "server2")
        self.assertEqual(ping_raw(old), b"+PONG\r\n")
        self.assertEqual(r.ping(), True)
        # a file that is not there: refused, the context in force stays
        with self.assertRaises(redis.ResponseError) as e:
            r.config_set("tls-cert-file", cert("missing.crt"))
        self.assertEqual(str(e.exception), CONFIG_ERR % "tls-cert-file")
        self.assertEqual(r.config_get("tls-cert-file")["tls-cert-file"], cert("server2.crt"))
        # a certificate whose key is not the one configured: refused too
        with self.assertRaises(redis.ResponseError) as e:
            r.config_set("tls-cert-file", cert("server.crt"))
        self.assertEqual(str(e.exception), CONFIG_ERR % "tls-cert-file")
        with self.assertRaises(redis.ResponseError) as e:
            r.config_set("tls-protocols", "TLSv9")
        self.assertEqual(str(e.exception), CONFIG_ERR % "tls-protocols")
        self.assertEqual(r.config_get("tls-protocols")["tls-protocols"], "")
        self.assertEqual(peer_cn(srv.tls_port), "server2")
        self.assertEqual(ping_raw(old), b"+PONG\r\n")
        self.assertTrue(srv.client().ping())
        old.close()
        r.close()
        self.assertIn("Failed to load certificate", srv.log_text())

    def test_bad_certificate_at_start(self):
        for bad in (["--tls-cert-file", cert("missing.crt")],
                    ["--tls-key-file", cert("server2.key")]):
            self.exits_with_tls_error(*bad)

    def test_protocols(self):
        srv = self.start("--tls-protocols", "TLSv1.3")
        with self.assertRaises((ssl.SSLError, OSError)):
            s = tls_socket(srv.tls_port, maximum=ssl.TLSVersion.TLSv1_2)
            ping_raw(s)
        s = tls_socket(srv.tls_port, minimum=ssl.TLSVersion.TLSv1_3)
        self.assertEqual(s.version(), "TLSv1.3")
        self.assertEqual(ping_raw(s), b"+PONG\r\n")
        s.close()
        srv2 = self.start()  # the default admits TLSv1.2
        s = tls_socket(srv2.tls_port, maximum=ssl.TLSVersion.TLSv1_2)
        self.assertEqual(s.version(), "TLSv1.2")
        self.assertEqual(ping_raw(s), b"+PONG\r\n")
        s.close()

    def exits_with_tls_error(self, *extra):
        """A server started with extra stops at once: exit 1, Redis's words in its log."""
        srv = TlsServer(extra=extra, wait=False)
        try:
            self.assertEqual(srv.proc.wait(20), 1)
            self.assertIn("Failed to configure TLS", srv.log_text())
        finally:
            if srv.proc.poll() is None:
                srv.proc.kill()
                srv.proc.wait()
            shutil.rmtree(srv.dir, ignore_errors=True)

    def test_encrypted_key(self):
        enc = cert("server-enc.key")
        openssl("pkey", "-in", cert("server.key"), "-aes256", "-passout", "pass:s3cret",
                "-out", enc)
        srv = self.start("--tls-key-file", enc, "--tls-key-file-pass", "s3cret")
        self.assertTrue(srv.client().ping())
        self.assertEqual(peer_cn(srv.tls_port), "server")
        self.exits_with_tls_error("--tls-key-file", enc, "--tls-key-file-pass", "wrong")

    def test_ca_cert_dir(self):
        d = os.path.join(CERTS, "cadir")
        os.makedirs(d, exist_ok=True)
        shutil.copy(cert("ca.crt"), d)
        openssl("rehash", d)  # the hash-named links OpenSSL looks certificates up by
        srv = self.start("--tls-ca-cert-file", "", "--tls-ca-cert-dir", d)
        self.assertEqual(srv.client().config_get("tls-ca-cert-dir")["tls-ca-cert-dir"], d)
        self.assertTrue(srv.client().ping())
        with self.assertRaises((redis.ConnectionError, ssl.SSLError, OSError)):
            srv.client(certfile="rogue").ping()  # its CA is not in the folder

    def test_dh_params_file(self):
        dh = cert("dh.pem")
        openssl("genpkey", "-genparam", "-algorithm", "DH", "-pkeyopt", "group:ffdhe2048",
                "-out", dh)
        srv = self.start("--tls-dh-params-file", dh, "--tls-protocols", "TLSv1.2",
                         "--tls-ciphers", "DHE-RSA-AES128-GCM-SHA256")
        ctx = ssl_context(maximum=ssl.TLSVersion.TLSv1_2)
        ctx.set_ciphers("DHE-RSA-AES128-GCM-SHA256")
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", srv.tls_port),
                                                      timeout=10)) as s:
            self.assertEqual(s.cipher()[0], "DHE-RSA-AES128-GCM-SHA256")
            self.assertEqual(ping_raw(s), b"+PONG\r\n")
        self.exits_with_tls_error("--tls-dh-params-file", cert("ca.crt"))  # not DH parameters

    def test_session_caching(self):
        ctx = ssl_context(maximum=ssl.TLSVersion.TLSv1_2)  # a session resumes in its context

        def reused(port, session=None):
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            with ctx.wrap_socket(raw, session=session) as s:
                self.assertEqual(ping_raw(s), b"+PONG\r\n")
                return s.session_reused, s.session

        srv = self.start()  # tls-session-caching yes by default
        first, session = reused(srv.tls_port)
        self.assertFalse(first)
        self.assertTrue(reused(srv.tls_port, session)[0], "the server resumed the session")
        off = self.start("--tls-session-caching", "no")
        first, session = reused(off.tls_port)
        try:
            self.assertFalse(reused(off.tls_port, session)[0], "no cache: no resumption")
        except ssl.SSLError:
            pass  # redis-server 7.0 answers the offer with an alert (no session id context)
        self.assertFalse(reused(off.tls_port)[0])  # and serves new handshakes on

    def stuck_clients(self, srv):
        """One client connected and silent, one that sent half a ClientHello."""
        silent = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
        half = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
        outgoing = ssl.MemoryBIO()
        hello = ssl_context().wrap_bio(ssl.MemoryBIO(), outgoing)
        with self.assertRaises(ssl.SSLWantReadError):
            hello.do_handshake()
        out = outgoing.read()
        self.assertGreater(len(out), 20)
        half.sendall(out[: len(out) // 2])
        return silent, half

    def test_stuck_handshake_and_timeout(self):
        srv = self.start("--timeout", "2")
        silent, half = self.stuck_clients(srv)
        # the others are served meanwhile (the handshake never blocks the loop)
        t0 = time.time()
        r = srv.client()
        for i in range(50):
            self.assertTrue(r.set("k%d" % i, i))
        self.assertLess(time.time() - t0, 1.5)
        # Redis's idle timeout closes clients stuck in their handshake too
        self.assertIsNotNone(closed_within(silent, 6), "silent client not closed")
        self.assertIsNotNone(closed_within(half, 2), "half-handshake client not closed")
        silent.close()
        half.close()
        r.close()

    def test_handshake_limit(self):
        if "redis-server" in os.path.basename(BIN):
            return  # cudis's own limit: Redis never closes them without `timeout`
        srv = self.start()
        silent, half = self.stuck_clients(srv)
        r = srv.client()
        self.assertTrue(r.ping())
        took = closed_within(silent, 14)
        self.assertIsNotNone(took, "silent client not closed within the handshake limit")
        self.assertGreater(took, 8)
        self.assertIsNotNone(closed_within(half, 2))
        self.assertTrue(r.ping())  # a served client is not subject to it
        silent.close()
        half.close()
        r.close()

    def test_plaintext_to_tls_port(self):
        srv = self.start()
        s = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        self.assertIsNotNone(closed_within(s, 5))
        s.close()
        s = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
        # garbage whose record header has no TLS version is refused at once;
        # random bytes are not (about 1 in 300 reads as a TLS or SSLv2 header
        # announcing more than was sent, and OpenSSL waits for the rest)
        s.sendall(b"\x17\xfe\xfe" + random.Random(5000).randbytes(4997))
        self.assertIsNotNone(closed_within(s, 5))
        s.close()
        self.assertTrue(srv.client().ping())
        plain = redis.Redis(port=srv.port, socket_timeout=10)
        self.assertTrue(plain.ping())
        plain.close()

    def test_protected_mode(self):
        srv = self.start()
        # from 127.0.0.2 (Linux's loopback, but not local to Redis): refused
        # after the handshake, over TLS, with Redis's text
        raw = socket.socket()
        raw.settimeout(10)
        raw.bind(("127.0.0.2", 0))
        raw.connect(("127.0.0.1", srv.tls_port))
        s = ssl_context().wrap_socket(raw)
        got = b""
        while True:
            try:
                d = s.recv(65536)
            except (ssl.SSLError, ConnectionResetError):
                break
            if not d:
                break
            got += d
        s.close()
        self.assertTrue(got.startswith(b"-DENIED Redis is running in protected mode"), got[:80])
        self.assertTrue(got.endswith(b"accepting connections from the outside.\r\n"))
        r = srv.client()
        self.assertEqual(r.info("stats")["rejected_connections"], 1)
        r.config_set("protected-mode", "no")
        raw = socket.socket()
        raw.settimeout(10)
        raw.bind(("127.0.0.2", 0))
        raw.connect(("127.0.0.1", srv.tls_port))
        s = ssl_context().wrap_socket(raw)
        self.assertEqual(ping_raw(s), b"+PONG\r\n")
        s.close()
        r.close()

    def test_many_clients(self):
        srv = self.start(cudis_extra=("--io-threads", "4"))
        errors = []

        def worker(n):
            try:
                r = None
                for i in range(300):
                    if i % 50 == 0:  # new connections while the certificate changes
                        if r is not None:
                            r.close()
                        r = srv.client()
                    key = "w%d:%d" % (n, i)
                    r.set(key, key * 10)
                    if r.get(key) != (key * 10).encode():
                        errors.append(key)
                r.close()
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
        for t in threads:
            t.start()
        admin = srv.client()
        for i in range(20):  # the context swapped under the loops' accepts
            name = ("server", "server2")[i % 2]
            self.assertTrue(admin.execute_command("CONFIG", "SET", "tls-cert-file",
                                                  cert(name + ".crt"), "tls-key-file",
                                                  cert(name + ".key")))
        admin.close()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        r = srv.client()
        self.assertEqual(r.dbsize(), 12 * 300)
        r.close()


class Raw:
    """A RESP connection over a plain or TLS socket (replies parsed; an
    error reply comes back as an Exception instance, not raised)."""

    def __init__(self, port, tls):
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.s = ssl_context().wrap_socket(raw) if tls else raw
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise ConnectionError("closed")
            self.buf += d
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def reply(self):
        ln = self.line()
        t, rest = ln[:1], ln[1:]
        if t in (b"+", b":"):
            return int(rest) if t == b":" else rest.decode()
        if t == b"-":
            return Exception(rest.decode())
        if t in (b"$", b"="):
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                d = self.s.recv(65536)
                if not d:
                    raise ConnectionError("closed")
                self.buf += d
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v.decode()
        if t in (b"*", b"%"):
            n = int(rest) * (2 if t == b"%" else 1)
            return [self.reply() for _ in range(n)] if n >= 0 else None
        raise ValueError(ln)

    def __call__(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.reply()

    def close(self):
        self.s.close()


class TlsClusterTest(unittest.TestCase):
    """tls-cluster yes: three nodes whose bus speaks TLS; each announces its
    TLS port as its port and its plaintext port as pport, and tells each
    client the port of its own kind (CLUSTER NODES, SLOTS, SHARDS, MOVED)."""

    def test_tls_cluster(self):
        nodes = []
        for _ in range(3):
            cport = e2e_server.free_port()
            srv = TlsServer(extra=("--cluster-enabled", "yes", "--tls-cluster", "yes",
                                   "--cluster-port", str(cport), "--cluster-config-file",
                                   "{dir}/nodes.conf", "--cluster-node-timeout", "5000"))
            srv.cport = cport
            self.addCleanup(lambda s=srv: self.assertEqual(s.stop(), 0))
            nodes.append(srv)
        a = [Raw(n.tls_port, True) for n in nodes]
        for i, n in enumerate(nodes[1:], 1):
            self.assertEqual(a[0]("CLUSTER", "MEET", "127.0.0.1", n.tls_port, n.cport), "OK")
        ranges = ((0, 5460), (5461, 10922), (10923, 16383))
        for i, (lo, hi) in enumerate(ranges):
            self.assertEqual(a[i]("CLUSTER", "ADDSLOTSRANGE", lo, hi), "OK")
        end = time.time() + 60
        while time.time() < end:
            infos = [c("CLUSTER", "INFO") for c in a]
            if all("cluster_state:ok" in x and "cluster_known_nodes:3" in x for x in infos):
                break
            time.sleep(0.2)
        self.assertTrue(all("cluster_state:ok" in x and "cluster_known_nodes:3" in x
                            for x in infos), infos)
        plain = Raw(nodes[0].port, False)
        # the port of the client's kind, the bus port as configured
        tls_nodes = a[0]("CLUSTER", "NODES")
        plain_nodes = plain("CLUSTER", "NODES")
        for n in nodes:
            self.assertIn("127.0.0.1:%d@%d" % (n.tls_port, n.cport), tls_nodes)
            self.assertIn("127.0.0.1:%d@%d" % (n.port, n.cport), plain_nodes)
        key = "k"  # slot 7629: the second node's
        self.assertEqual(a[0]("CLUSTER", "KEYSLOT", key), 7629)
        moved = a[0]("GET", key)
        self.assertIsInstance(moved, Exception)
        self.assertEqual(str(moved), "MOVED 7629 127.0.0.1:%d" % nodes[1].tls_port)
        self.assertEqual(str(plain("GET", key)), "MOVED 7629 127.0.0.1:%d" % nodes[1].port)
        ports = {r[0]: (r[2][1], r[0]) for r in plain("CLUSTER", "SLOTS")}
        self.assertEqual(ports[5461][0], nodes[1].port)
        ports = {r[0]: r[2][1] for r in a[0]("CLUSTER", "SLOTS")}
        self.assertEqual(ports[5461], nodes[1].tls_port)
        shards = a[0]("CLUSTER", "SHARDS")
        seen = set()
        for sh in shards:
            info = dict(zip(sh[3][0][::2], sh[3][0][1::2]))
            seen.add((info["port"], info["tls-port"]))
        self.assertEqual(seen, {(n.port, n.tls_port) for n in nodes})
        b = Raw(nodes[1].tls_port, True)
        self.assertEqual(b("SET", key, "v"), "OK")
        b.close()
        # the bus speaks TLS: a handshake with a certificate from the CA
        # succeeds, plaintext is dropped
        s = tls_socket(nodes[0].cport)
        self.assertEqual(s.version()[:4], "TLSv")
        s.close()
        s = socket.create_connection(("127.0.0.1", nodes[0].cport), timeout=10)
        s.sendall(b"RCmb" + b"\0" * 2252)
        self.assertIsNotNone(closed_within(s, 5))
        s.close()
        for c in a:
            c.close()
        plain.close()

    def test_redis_cli_cluster_tls(self):
        """redis-cli --tls --cluster create / check and -c over a TLS bus."""
        nodes = []
        for _ in range(3):
            cport = e2e_server.free_port()
            srv = TlsServer(extra=("--cluster-enabled", "yes", "--tls-cluster", "yes",
                                   "--cluster-port", str(cport), "--cluster-config-file",
                                   "{dir}/nodes.conf", "--cluster-node-timeout", "5000"))
            self.addCleanup(lambda s=srv: self.assertEqual(s.stop(), 0))
            nodes.append(srv)
        cli = ["redis-cli", "--tls", "--cacert", cert("ca.crt"), "--cert", cert("client.crt"),
               "--key", cert("client.key")]
        out = subprocess.run(cli + ["--cluster", "create"] +
                             ["127.0.0.1:%d" % n.tls_port for n in nodes] + ["--cluster-yes"],
                             capture_output=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn(b"[OK] All 16384 slots covered.", out.stdout)
        check = None
        end = time.time() + 60
        while time.time() < end:
            check = subprocess.run(cli + ["--cluster", "check", "127.0.0.1:%d" % nodes[0].tls_port],
                                   capture_output=True, timeout=60)
            if check.returncode == 0 and b"[OK] All nodes agree about slots configuration." \
                    in check.stdout:
                break
            time.sleep(0.5)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertIn(b"[OK] All nodes agree about slots configuration.", check.stdout)
        self.assertIn(b"[OK] All 16384 slots covered.", check.stdout)
        conns = [Raw(n.tls_port, True) for n in nodes]
        end = time.time() + 60
        while time.time() < end and not all(
                "cluster_state:ok" in x("CLUSTER", "INFO") for x in conns):
            time.sleep(0.2)
        self.assertTrue(all("cluster_state:ok" in x("CLUSTER", "INFO") for x in conns))
        for x in conns:
            x.close()
        c = cli + ["-c", "-p", str(nodes[0].tls_port)]
        for k in ("a", "b", "c", "k"):  # slots 15495, 3300, 7365, 7629: all three nodes
            subprocess.run(c + ["SET", k, "v-" + k], capture_output=True, timeout=20, check=True)
        for k in ("a", "b", "c", "k"):
            got = subprocess.run(cli + ["-c", "-p", str(nodes[2].tls_port), "GET", k],
                                 capture_output=True, timeout=20)
            self.assertEqual(got.stdout, ("v-%s\n" % k).encode())


if __name__ == "__main__":
    e2e_server.main(sys.modules[__name__])
