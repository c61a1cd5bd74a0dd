"""soak_load.py - the client processes of the soak benchmark (README.md here).

Every process talks to one server through redis-py's Connection (the `redis`
module's socket and RESP parser, without a pool: a connection the server
drops raises instead of being replaced behind our back) and counts into a
shared array of int64 (`Stats`) that the sampler in soak.py reads each
interval without locking (one writer per array; a counter read mid-update is
off by one op at most). The processes, per server:

  worker      mixed commands, as fast as the server answers: GET/SET/MGET/MSET/
              INCR/APPEND/DEL/EXPIRE/SET EX|PX on shared keys, values of
              16 B-16 KB and a few of 100 KB-1 MB, pipelines, MULTI/EXEC,
              EVAL, PUBLISH; plus keys only it writes, whose exact value it
              knows (counters, strings, short-TTL keys that must be gone once
              their TTL has passed); the latency of each round trip goes into
              a log-linear histogram
  subscriber  SUBSCRIBEd to every worker's channel; each message must be the
              next sequence number of its channel
  churn       connects, runs a few commands (or half a command, or a pipeline
              it never reads, or a SUBSCRIBE) and disconnects, CHURN per second
  config      every CONFIG_EVERY seconds a CONFIG SET (maxmemory-policy, hz,
              client-output-buffer-limit), checked with CONFIG GET, and now
              and then a FLUSHDB

A reply is one of: the value checked (VERIFIED), an OOM error under
noeviction (OOM), an error the worker provoked on purpose (EXPECTED), or
anything else, an ERROR, with a line on the error queue saying what it was.
"""
import bisect
import hashlib
import math
import random
import re
import socket
import time

import redis
from redis.exceptions import ExecAbortError, ResponseError

# ------------------------------------------------------------------ stats

# Counters at the start of every process's shared array; the latency
# histogram follows them.
(OPS, RTTS, ERRORS, OOM, EXPECTED, VERIFIED, CHURN, PUBLISHED, RECEIVED, RESETS, CONFIGS,
 FLUSHES) = range(12)
NCOUNTERS = 16
HIST_PER_OCTAVE = 32  # buckets per doubling: a percentile is within 2.2%
HIST_OCTAVES = 27  # 1 us .. 2^27 us (134 s)
HIST_BUCKETS = HIST_OCTAVES * HIST_PER_OCTAVE
SLOTS = NCOUNTERS + HIST_BUCKETS


def hist_index(us):
    """The histogram bucket of a latency in microseconds."""
    if us < 1.0:
        return 0
    return min(int(math.log2(us) * HIST_PER_OCTAVE), HIST_BUCKETS - 1)


def hist_value(i):
    """The latency a bucket stands for (its geometric middle), microseconds."""
    return 2.0 ** ((i + 0.5) / HIST_PER_OCTAVE)


def percentile(hist, q):
    """The q-quantile (0 < q <= 1) of a histogram (list of counts), in us;
    0 for an empty one."""
    total = sum(hist)
    if total == 0:
        return 0.0
    rank = max(1, math.ceil(q * total))
    seen = 0
    for i, n in enumerate(hist):
        seen += n
        if seen >= rank:
            return hist_value(i)
    return hist_value(len(hist) - 1)


def hist_max(hist):
    """The highest non-empty bucket's latency, us (0 when empty)."""
    for i in range(len(hist) - 1, -1, -1):
        if hist[i]:
            return hist_value(i)
    return 0.0


# ------------------------------------------------------------------ values

OOM_TEXT = "command not allowed when used memory"
UNKNOWN = object()  # an owned key's value after a lost round trip
CHANNEL = b"soak:ch:%d"
APPEND_TOKEN = re.compile(rb"(?:\d+\.\d+;)*")
APPEND_MAX = 4096  # an APPEND key longer than this is deleted


def filler(tag, n):
    """n bytes that only `tag` determines."""
    block = hashlib.blake2b(tag.to_bytes(8, "little"), digest_size=32).hexdigest().encode()
    return (block * (n // 64 + 1))[:n]


def make_value(key, size, tag):
    """A value that names its key, its size and its tag, then filler(tag):
    anything else read back under that key is a wrong value."""
    head = b"%s|%d|%d|" % (key, size, tag)
    return head + filler(tag, max(size - len(head), 0))


def value_ok(key, v):
    """Whether v is a make_value() of key, whole."""
    parts = v.split(b"|", 3)
    if len(parts) != 4 or parts[0] != key:
        return False
    try:
        size, tag = int(parts[1]), int(parts[2])
    except ValueError:
        return False
    head = len(v) - len(parts[3])
    return len(v) == max(size, head) and parts[3] == filler(tag, len(v) - head)


def value_size(rng):
    """Most values small, a few up to 16 KB (the big ones have their own op)."""
    r = rng.random()
    if r < 0.70:
        return rng.randint(16, 128)
    if r < 0.95:
        return rng.randint(128, 1024)
    return rng.randint(1024, 16384)


def is_oom(reply):
    return isinstance(reply, ResponseError) and OOM_TEXT in str(reply)


def short(reply):
    """A reply as a short printable string, for error lines."""
    text = repr(reply)
    return text if len(text) <= 120 else text[:117] + "..."


# ------------------------------------------------------------------ process base


class Proc:
    """What every client process shares: its server, stats, error queue, the
    stop event, a seeded RNG and one connection."""

    ERROR_LINES = 20  # error lines one process sends; the count goes on

    def __init__(self, ctx, name, stats, seed):
        self.ctx = ctx
        self.name = name
        self.stats = stats
        self.rng = random.Random(seed)
        self.sent_lines = 0
        self.conn = None

    def connect(self):
        self.conn = redis.Connection(host="127.0.0.1", port=self.ctx.port,
                                     socket_timeout=self.ctx.timeout,
                                     socket_connect_timeout=self.ctx.timeout)
        self.conn.connect()

    def close(self):
        if self.conn is not None:
            self.conn.disconnect()
            self.conn = None

    def error(self, what):
        self.stats[ERRORS] += 1
        if self.sent_lines < self.ERROR_LINES:
            self.sent_lines += 1
            self.ctx.errq.put("%s %s: %s" % (self.ctx.server, self.name, what))

    def call(self, cmds):
        """Sends commands (tuples of arguments) in one write and reads their
        replies; an error reply comes back as its ResponseError. Records one
        round trip's latency. A dropped connection or a timeout raises."""
        conn = self.conn
        t0 = time.perf_counter()
        conn.send_packed_command(conn.pack_commands(cmds))
        replies = []
        for _ in cmds:
            try:
                replies.append(conn.read_response())
            except ResponseError as e:
                replies.append(e)
        us = (time.perf_counter() - t0) * 1e6
        st = self.stats
        st[OPS] += len(cmds)
        st[RTTS] += 1
        st[NCOUNTERS + hist_index(us)] += 1
        return replies

    def refused(self, reply, cmd):
        """For an error reply: counts it as OOM or as an error; True when it
        was an error reply at all."""
        if not isinstance(reply, ResponseError):
            return False
        if is_oom(reply):
            self.stats[OOM] += 1
        else:
            self.error("%s -> %s" % (cmd, short(reply)))
        return True

    def check_ok(self, reply, cmd):
        if not self.refused(reply, cmd) and reply != b"OK":
            self.error("%s -> %s (expected OK)" % (cmd, short(reply)))

    def run_guarded(self, step):
        """Calls step() until stop; a connection that drops or times out is an
        error, and a new one is made."""
        while not self.ctx.stop.is_set():
            try:
                if self.conn is None:
                    self.connect()
                    self.on_connect()
                step()
            except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
                self.error("connection: %s: %s" % (type(e).__name__, e))
                self.close()
                time.sleep(0.2)
        self.close()

    def on_connect(self):
        pass


# ------------------------------------------------------------------ worker


class Worker(Proc):
    OWN = 32  # owned counters and strings per worker
    OWN_TTL = 16
    CLIENT_ID_EVERY = 500  # round trips between checks that the connection is the same
    EVAL_SET_GET = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])"
    # The mix: each op's share of the picks (one pick, one round trip).
    MIX = [("op_get", 22), ("op_set", 14), ("op_mget", 5), ("op_mset", 4), ("op_incr", 5),
           ("op_append", 4), ("op_del", 3), ("op_expire", 3), ("op_set_ttl", 6),
           ("op_get_ttl", 3), ("op_misc", 4), ("op_own_counter", 6), ("op_own_string", 5),
           ("op_own_ttl", 4), ("op_pipeline", 5), ("op_multi", 3), ("op_eval", 1),
           ("op_publish", 3), ("op_provoke", 0.5), ("op_big_set", 0.25), ("op_big_get", 0.15)]

    def __init__(self, ctx, index, stats, seed):
        super().__init__(ctx, "worker%d" % index, stats, seed)
        self.index = index
        self.own_prefix = b"soak:o:%d:" % index
        self.counters = [None] * self.OWN  # expected value, None: unknown
        self.strings = [None] * self.OWN  # last value written, None: absent, or UNKNOWN
        self.ttl_value = [None] * self.OWN_TTL
        self.ttl_deadline = [None] * self.OWN_TTL  # monotonic time it must be gone by
        self.seq = 0  # last sequence number PUBLISHed
        self.client_id = None
        self.since_id = 0
        self.seq_append = 0  # APPEND tokens are <worker>.<seq>;
        self.ops = [getattr(self, name) for name, _ in self.MIX]
        self.cum = []
        total = 0.0
        for _, weight in self.MIX:
            total += weight
            self.cum.append(total)

    def on_connect(self):
        if self.client_id is not None:
            # A reconnect after an error: what the lost round trip did is not
            # known, so neither are the owned keys' values.
            self.counters = [None] * self.OWN
            self.strings = [UNKNOWN] * self.OWN
            self.ttl_deadline = [None] * self.OWN_TTL
        (cid,) = self.call([("CLIENT", "ID")])
        self.client_id = cid
        self.since_id = 0

    def step(self):
        op = self.ops[min(bisect.bisect_right(self.cum, self.rng.random() * self.cum[-1]),
                           len(self.ops) - 1)]
        op()
        self.since_id += 1
        if self.since_id >= self.CLIENT_ID_EVERY:
            (cid,) = self.call([("CLIENT", "ID")])
            if cid != self.client_id:
                self.error("CLIENT ID changed from %r to %r: the connection was replaced"
                           % (self.client_id, cid))
                self.client_id = cid
            self.since_id = 0

    # -- keys and checks

    def shared_key(self):
        """Half the picks from a hot tenth of the key space."""
        n = self.ctx.keys
        if self.rng.random() < 0.5:
            n = max(n // 10, 1)
        return b"soak:k:%d" % self.rng.randrange(n)

    def new_value(self, key, size=None):
        return make_value(key, size or value_size(self.rng), self.rng.getrandbits(32))

    def check_value(self, key, v, cmd="GET"):
        """A read of a shared key: nil, or a whole value of that key."""
        if v is None or self.refused(v, cmd):
            return
        if isinstance(v, bytes) and value_ok(key, v):
            self.stats[VERIFIED] += 1
        else:
            self.error("%s %s: wrong value %s" % (cmd, key.decode(), short(v)))

    def check_int(self, reply, cmd, lo=0, hi=None):
        if self.refused(reply, cmd):
            return None
        if not isinstance(reply, int) or reply < lo or (hi is not None and reply > hi):
            self.error("%s -> %s (expected an integer in [%s, %s])" % (cmd, short(reply), lo, hi))
            return None
        return reply

    # -- shared keys (many writers: values are checked for their form)

    def get_checked(self, key, cmd="GET"):
        (v,) = self.call([("GET", key)])
        self.check_value(key, v, cmd)

    def op_get(self):
        self.get_checked(self.shared_key())

    def op_set(self):
        key = self.shared_key()
        (r,) = self.call([("SET", key, self.new_value(key))])
        self.check_ok(r, "SET")

    def op_mget(self):
        keys = [self.shared_key() for _ in range(10)]
        (r,) = self.call([("MGET",) + tuple(keys)])
        if self.refused(r, "MGET"):
            return
        if not isinstance(r, list) or len(r) != len(keys):
            self.error("MGET of %d keys -> %s" % (len(keys), short(r)))
            return
        for key, v in zip(keys, r):
            self.check_value(key, v, "MGET")

    def op_mset(self):
        args = ["MSET"]
        for _ in range(10):
            key = self.shared_key()
            args += [key, self.new_value(key)]
        (r,) = self.call([tuple(args)])
        self.check_ok(r, "MSET")

    def op_incr(self):
        (r,) = self.call([("INCR", b"soak:c:%d" % self.rng.randrange(1000))])
        self.check_int(r, "INCR", lo=1)

    def op_append(self):
        key = b"soak:a:%d" % self.rng.randrange(1000)
        self.seq_append += 1
        token = b"%d.%d;" % (self.index, self.seq_append)
        if self.rng.random() < 0.2:
            _, v = self.call([("APPEND", key, token), ("GET", key)])
            if isinstance(v, bytes) and not APPEND_TOKEN.fullmatch(v):
                self.error("GET %s after APPENDs: %s" % (key.decode(), short(v)))
            elif isinstance(v, bytes):
                self.stats[VERIFIED] += 1
            return
        (n,) = self.call([("APPEND", key, token)])
        n = self.check_int(n, "APPEND", lo=len(token))
        if n is not None and n > APPEND_MAX:
            (d,) = self.call([("DEL", key)])
            self.check_int(d, "DEL", 0, 1)

    def op_del(self):
        keys = tuple(self.shared_key() for _ in range(self.rng.randint(1, 3)))
        (r,) = self.call([("DEL",) + keys])
        self.check_int(r, "DEL", 0, len(keys))

    def op_expire(self):
        (r,) = self.call([("EXPIRE", self.shared_key(), self.rng.randint(1, 5))])
        self.check_int(r, "EXPIRE", 0, 1)

    def ttl_key(self):
        return b"soak:t:%d" % self.rng.randrange(5000)

    def op_set_ttl(self):
        key = self.ttl_key()
        if self.rng.random() < 0.5:
            ttl = ("PX", self.rng.randint(50, 2000))
        else:
            ttl = ("EX", self.rng.randint(1, 3))
        (r,) = self.call([("SET", key, self.new_value(key)) + ttl])
        self.check_ok(r, "SET %s" % ttl[0])

    def op_get_ttl(self):
        self.get_checked(self.ttl_key())

    def op_misc(self):
        """One of the other string and key commands, on a shared key."""
        key = self.shared_key()
        pick = self.rng.randrange(6)
        if pick == 0:
            (r,) = self.call([("EXISTS", key)])
            self.check_int(r, "EXISTS", 0, 1)
        elif pick == 1:
            (r,) = self.call([("PTTL", key)])
            self.check_int(r, "PTTL", -2, 5000)
        elif pick == 2:
            (r,) = self.call([("STRLEN", key)])
            self.check_int(r, "STRLEN", 0, 16384)
        elif pick == 3:
            (v,) = self.call([("GETDEL", key)])
            self.check_value(key, v, "GETDEL")
        elif pick == 4:
            (v,) = self.call([("GETEX", key, "PX", self.rng.randint(100, 3000))])
            self.check_value(key, v, "GETEX")
        else:
            (r,) = self.call([("SETNX", key, self.new_value(key))])
            self.check_int(r, "SETNX", 0, 1)

    # -- owned keys (one writer: exact values)

    def own_key(self, kind, i):
        return self.own_prefix + b"%s%d" % (kind, i)

    def counter_reply(self, i, r, cmd):
        """An INCR of owned counter i answered r: the expected next value, or 1
        if the key was evicted or flushed since."""
        r = self.check_int(r, cmd, lo=1)
        if r is None:
            return
        want = self.counters[i]
        if want is not None and r != want + 1:
            if r == 1:
                self.stats[RESETS] += 1
            else:
                self.error("%s %s -> %d, expected %d (or 1 after an eviction)"
                           % (cmd, self.own_key(b"c", i).decode(), r, want + 1))
        else:
            self.stats[VERIFIED] += 1
        self.counters[i] = r

    def string_read(self, i, v, cmd):
        """A read of owned string i: the last value written or nil (evicted
        or flushed); once nil, nil until the next write."""
        want = self.strings[i]
        if self.refused(v, cmd):
            return
        if want is UNKNOWN and (v is None or value_ok(self.own_key(b"s", i), v)):
            self.strings[i] = v
        elif v is None:
            if want is not None:
                self.stats[RESETS] += 1
            self.strings[i] = None
        elif v == want:
            self.stats[VERIFIED] += 1
        else:
            self.error("%s %s -> %s, expected %s" % (cmd, self.own_key(b"s", i).decode(),
                                                    short(v), short(want)))

    def op_own_counter(self):
        i = self.rng.randrange(self.OWN)
        (r,) = self.call([("INCR", self.own_key(b"c", i))])
        self.counter_reply(i, r, "INCR")

    def op_own_string(self):
        i = self.rng.randrange(self.OWN)
        key = self.own_key(b"s", i)
        if self.rng.random() < 0.5:
            v = self.new_value(key)
            (r,) = self.call([("SET", key, v)])
            if not self.refused(r, "SET"):
                self.strings[i] = v
        else:
            (v,) = self.call([("GET", key)])
            self.string_read(i, v, "GET")

    def op_own_ttl(self):
        """SET PX a short TTL; before the deadline GET gives the value or nil,
        from 10 ms after it nil only (lazy expiry must not serve it)."""
        i = self.rng.randrange(self.OWN_TTL)
        key = self.own_key(b"t", i)
        deadline = self.ttl_deadline[i]
        now = time.monotonic()
        if deadline is None:
            ttl = self.rng.randint(20, 500)
            v = self.new_value(key)
            (r,) = self.call([("SET", key, v, "PX", ttl)])
            if not self.refused(r, "SET PX"):
                self.ttl_value[i] = v
                self.ttl_deadline[i] = time.monotonic() + ttl / 1000.0
            return
        (v,) = self.call([("GET", key)])
        if self.refused(v, "GET"):
            return
        if now >= deadline + 0.010:
            if v is not None:
                self.error("GET %s %.0f ms after its PX deadline -> %s"
                           % (key.decode(), (now - deadline) * 1000, short(v)))
            else:
                self.stats[VERIFIED] += 1
            self.ttl_deadline[i] = None
        elif v is not None and v != self.ttl_value[i]:
            self.error("GET %s before its deadline -> %s" % (key.decode(), short(v)))

    # -- round trips of several commands

    def op_pipeline(self):
        """20 GET/SET/INCR in one write."""
        cmds, keys = [], []
        for _ in range(20):
            key = self.shared_key()
            r = self.rng.random()
            if r < 0.6:
                cmds.append(("GET", key))
            elif r < 0.9:
                cmds.append(("SET", key, self.new_value(key)))
            else:
                key = b"soak:c:%d" % self.rng.randrange(1000)
                cmds.append(("INCR", key))
            keys.append(key)
        for cmd, key, r in zip(cmds, keys, self.call(cmds)):
            if cmd[0] == "GET":
                self.check_value(key, r)
            elif cmd[0] == "SET":
                self.check_ok(r, "SET")
            else:
                self.check_int(r, "INCR", lo=1)

    def op_multi(self):
        """MULTI INCR counter, SET string, GET string EXEC: the GET must see
        the SET. Under noeviction Redis refuses a command as it is queued and
        EXEC then aborts (EXECABORT); cudis queues it and answers OOM for it
        inside EXEC's reply. Both count as OOM."""
        i = self.rng.randrange(self.OWN)
        ckey, skey = self.own_key(b"c", i), self.own_key(b"s", i)
        v = self.new_value(skey)
        replies = self.call([("MULTI",), ("INCR", ckey), ("SET", skey, v), ("GET", skey),
                             ("EXEC",)])
        multi, queued, exec_ = replies[0], replies[1:-1], replies[-1]
        if multi != b"OK":
            self.error("MULTI -> %s" % short(multi))
            return
        refused = [q for q in queued if q != b"QUEUED"]
        if any(not is_oom(q) for q in refused):
            self.error("MULTI: queued -> %s" % short(queued))
        if isinstance(exec_, ResponseError):
            if is_oom(exec_) or (refused and isinstance(exec_, ExecAbortError)):
                self.stats[OOM] += 1
            else:
                self.error("EXEC -> %s" % short(exec_))
            return
        if refused or not isinstance(exec_, list) or len(exec_) != 3:
            self.error("EXEC after %s -> %s" % (short(queued), short(exec_)))
            return
        self.counter_reply(i, exec_[0], "MULTI INCR")
        if self.refused(exec_[1], "MULTI SET"):
            return
        self.strings[i] = v
        if exec_[2] != v:
            self.error("MULTI SET %s then GET -> %s" % (skey.decode(), short(exec_[2])))
        else:
            self.stats[VERIFIED] += 1

    def op_eval(self):
        i = self.rng.randrange(self.OWN)
        key = self.own_key(b"s", i)
        v = self.new_value(key)
        (r,) = self.call([("EVAL", self.EVAL_SET_GET, 1, key, v)])
        if self.refused(r, "EVAL"):
            return
        self.strings[i] = v
        if r != v:
            self.error("EVAL SET+GET %s -> %s" % (key.decode(), short(r)))
        else:
            self.stats[VERIFIED] += 1

    def op_publish(self):
        (r,) = self.call([("PUBLISH", CHANNEL % self.index, b"%d" % (self.seq + 1))])
        if self.refused(r, "PUBLISH"):
            return
        if r != 1:
            self.error("PUBLISH -> %s (expected 1: the subscriber)" % short(r))
            return
        self.seq += 1
        self.stats[PUBLISHED] = self.seq

    def op_provoke(self):
        """Errors asked for: INCR of a value that is not a number, SET EX 0."""
        key = self.own_prefix + b"nan"
        s, r, e, d = self.call([("SET", key, "not-a-number"), ("INCR", key),
                                ("SET", key, "x", "EX", 0), ("DEL", key)])
        for reply, text in ((r, "not an integer"), (e, "invalid expire time")):
            if isinstance(reply, ResponseError) and text in str(reply):
                self.stats[EXPECTED] += 1
            elif not (is_oom(reply) or (is_oom(s) and isinstance(reply, int))):
                self.error("provoked %r -> %s" % (text, short(reply)))
        self.check_int(d, "DEL", 0, 1)

    def op_big_set(self):
        key = b"soak:big:%d" % self.rng.randrange(256)
        (r,) = self.call([("SET", key, self.new_value(key, self.rng.randint(100_000, 1_000_000)))])
        self.check_ok(r, "SET big")

    def op_big_get(self):
        self.get_checked(b"soak:big:%d" % self.rng.randrange(256), "GET big")


# ------------------------------------------------------------------ subscriber


class Subscriber(Proc):
    """Subscribes to every worker's channel (then sets ctx.ready) and checks
    that each channel's messages are 1, 2, 3, ... with none missing; `seen`
    holds the last number per channel. Stops once ctx.drained is set and
    nothing has come for a second."""

    def __init__(self, ctx, stats, seen, seed):
        super().__init__(ctx, "subscriber", stats, seed)
        self.seen = seen

    def run(self):
        try:
            self.connect()
            n = len(self.seen)
            self.conn.send_command("SUBSCRIBE", *[CHANNEL % w for w in range(n)])
            for _ in range(n):
                self.conn.read_response()
            self.ctx.ready.set()
            quiet_since = time.monotonic()
            while not (self.ctx.drained.is_set() and time.monotonic() - quiet_since > 1.0):
                if not self.conn.can_read(timeout=0.2):
                    continue
                quiet_since = time.monotonic()
                self.message(self.conn.read_response())
        except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
            self.error("subscriber connection: %s: %s" % (type(e).__name__, e))
            self.ctx.ready.set()
        self.close()

    def message(self, msg):
        if not (isinstance(msg, list) and len(msg) == 3 and msg[0] == b"message"):
            self.error("subscriber got %s" % short(msg))
            return
        try:
            w = int(msg[1].rsplit(b":", 1)[1])
            seq = int(msg[2])
        except (ValueError, IndexError):
            self.error("subscriber got %s" % short(msg))
            return
        if seq != self.seen[w] + 1:
            self.error("channel %d: message %d after %d" % (w, seq, self.seen[w]))
        self.seen[w] = seq
        self.stats[RECEIVED] += 1


# ------------------------------------------------------------------ churn


class Churn(Proc):
    """Short-lived connections at ctx.churn per second, each one of: PING,
    SET, GET and close; CLIENT SETNAME, INCR, QUIT; SUBSCRIBE and close;
    five 64 KB SETs written and the socket closed without reading; half a
    command and close."""

    def run(self):
        start = time.monotonic()
        n = 0
        while not self.ctx.stop.is_set():
            try:
                self.one(n)
            except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
                self.error("churn connection: %s: %s" % (type(e).__name__, e))
                time.sleep(0.2)
            finally:
                self.close()
            self.stats[CHURN] += 1
            n += 1
            ahead = start + n / self.ctx.churn - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
            elif ahead < -1.0:
                start = time.monotonic() - n / self.ctx.churn  # fell behind: no burst

    def one(self, n):
        pick = self.rng.random()
        if pick < 0.90:
            self.connect()
            if pick < 0.55:
                key = b"soak:churn:%d" % (n % 10000)
                v = make_value(key, self.rng.randint(16, 256), n)
                pong, s, g = self.call([("PING",), ("SET", key, v), ("GET", key)])
                if pong != b"PONG":
                    self.error("PING -> %s" % short(pong))
                if not self.refused(s, "SET") and g is not None and g != v:
                    self.error("SET then GET %s -> %s" % (key.decode(), short(g)))
            elif pick < 0.80:
                name, i, q = self.call([("CLIENT", "SETNAME", "soak-churn"),
                                        ("INCR", b"soak:churn:count"), ("QUIT",)])
                if name != b"OK" or q != b"OK":
                    self.error("CLIENT SETNAME/QUIT -> %s %s" % (short(name), short(q)))
                self.refused(i, "INCR")
            else:
                (r,) = self.call([("SUBSCRIBE", b"soak:churn")])
                if not (isinstance(r, list) and r[0] == b"subscribe"):
                    self.error("SUBSCRIBE -> %s" % short(r))
            return
        with socket.create_connection(("127.0.0.1", self.ctx.port), timeout=self.ctx.timeout) as s:
            if pick < 0.95:
                v = b"x" * 65536
                s.sendall(b"*3\r\n$3\r\nSET\r\n$14\r\nsoak:churn:big\r\n$65536\r\n%s\r\n" % v * 5)
            else:
                s.sendall(b"*3\r\n$3\r\nSET\r\n$12\r\nsoak:churn:x\r\n$100\r\nabc")


# ------------------------------------------------------------------ config


class Config(Proc):
    """A CONFIG SET every ctx.config_every seconds, read back with CONFIG GET;
    FLUSHDB at most every ctx.flush_every seconds."""

    POLICIES = ["allkeys-lru", "allkeys-random", "allkeys-lfu", "volatile-lru", "noeviction"]
    HZ = ["1", "10", "50", "100"]
    # Never reached by this workload (the largest reply, an MGET of ten
    # 16 KB values, is far below), so no client should be cut off.
    OUTPUT_LIMITS = [
        {b"normal": b"0 0 0", b"pubsub": b"33554432 8388608 60"},
        {b"normal": b"268435456 134217728 60", b"pubsub": b"16777216 4194304 30"},
    ]

    def __init__(self, ctx, stats, seed):
        super().__init__(ctx, "config", stats, seed)
        self.last_flush = time.monotonic()

    def run(self):
        self.run_guarded(self.step)

    def step(self):
        if self.ctx.stop.wait(self.ctx.config_every):
            return
        pick = self.rng.random()
        if pick < 0.1 and time.monotonic() - self.last_flush >= self.ctx.flush_every:
            (r,) = self.call([("FLUSHDB",)])
            self.check_ok(r, "FLUSHDB")
            self.last_flush = time.monotonic()
            self.stats[FLUSHES] += 1
            return
        if pick < 0.6:
            name, value = "maxmemory-policy", self.rng.choice(self.POLICIES)
        elif pick < 0.8:
            name, value = "hz", self.rng.choice(self.HZ)
        else:
            limits = self.rng.choice(self.OUTPUT_LIMITS)
            name = "client-output-buffer-limit"
            value = " ".join("%s %s" % (k.decode(), v.decode()) for k, v in limits.items())
        s, g = self.call([("CONFIG", "SET", name, value), ("CONFIG", "GET", name)])
        self.check_ok(s, "CONFIG SET %s %s" % (name, value))
        self.stats[CONFIGS] += 1
        if not (isinstance(g, list) and len(g) == 2):
            self.error("CONFIG GET %s -> %s" % (name, short(g)))
        elif name == "client-output-buffer-limit":
            words = g[1].split()
            got = {words[k]: b" ".join(words[k + 1:k + 4]) for k in range(0, len(words) - 3, 4)}
            if any(got.get(k) != v for k, v in limits.items()):
                self.error("CONFIG GET %s -> %s after SET %s" % (name, short(g[1]), value))
        elif g[1] != value.encode():
            self.error("CONFIG GET %s -> %s after SET %s" % (name, short(g[1]), value))


# ------------------------------------------------------------------ entry points


def run_worker(ctx, stats, index, seed):
    ctx.ready.wait(30)
    w = Worker(ctx, index, stats, seed)
    w.run_guarded(w.step)


def run_subscriber(ctx, stats, seen, seed):
    Subscriber(ctx, stats, seen, seed).run()


def run_churn(ctx, stats, seed):
    ctx.ready.wait(30)
    Churn(ctx, "churn", stats, seed).run()


def run_config(ctx, stats, seed):
    ctx.ready.wait(30)
    Config(ctx, stats, seed).run()
