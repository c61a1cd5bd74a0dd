"""e2e_raw.py - what the collection suites (test_hashes, test_sets,
test_lists) share: a raw RESP connection to the server under test (Base)
and, beside it, one to Debian's redis-server (BesideRedis), for tests that
send both the same commands. A suite passes this module to
e2e_server.main with its own, so BIN is set here too."""
import os
import unittest

import e2e_server
from test_tracking import Conn, Err

BIN = None
REDIS = "/usr/bin/redis-server"
WRONGTYPE = Err("WRONGTYPE Operation against a key holding the wrong kind of value")


class Base(unittest.TestCase):
    """self.c: a connection to a fresh server under test (options: extra,
    and cudis_extra when it is cudis)."""
    extra = ()
    cudis_extra = ()

    def setUp(self):
        own = () if "redis-server" in os.path.basename(BIN) else self.cudis_extra
        self.srv = e2e_server.Server(BIN, extra=tuple(self.extra) + tuple(own))
        self.c = Conn(self.srv.port)

    def tearDown(self):
        self.c.close()
        self.assertEqual(self.srv.stop(), 0, "server did not exit 0 on SIGTERM")


@unittest.skipUnless(os.path.exists(REDIS), "redis-server not installed")
class BesideRedis(Base):
    """self.rc: a connection to a fresh redis-server beside it."""

    def setUp(self):
        super().setUp()
        self.ref = e2e_server.Server(REDIS)
        self.rc = Conn(self.ref.port)

    def tearDown(self):
        self.rc.close()
        self.assertEqual(self.ref.stop(), 0)
        super().tearDown()
