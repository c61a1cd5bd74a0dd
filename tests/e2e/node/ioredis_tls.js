// ioredis_tls.js - ioredis over TLS against the server on $PORT, for
// test_tls.py: certificates from $CA, $CERT, $KEY (the client presents
// its own); the server's name is not checked (the test's certificates name
// no host). Prints one JSON object of what came back; exits 1 on an error.
"use strict";
const fs = require("fs");
const Redis = require("ioredis");

async function main() {
  const r = new Redis({
    host: "127.0.0.1",
    port: Number(process.env.PORT),
    tls: {
      ca: fs.readFileSync(process.env.CA),
      cert: fs.readFileSync(process.env.CERT),
      key: fs.readFileSync(process.env.KEY),
      checkServerIdentity: () => undefined,
    },
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  const out = {};
  out.ping = await r.ping();
  out.set = await r.set("io:k", "v", "EX", 100);
  out.get = await r.get("io:k");
  const big = "x".repeat(3 << 20); // several TLS records each way
  await r.set("io:big", big);
  out.big = (await r.get("io:big")) === big;
  const p = r.pipeline();
  for (let i = 0; i < 2000; i++) p.incr("io:n");
  const res = await p.exec();
  out.pipeline_last = res[res.length - 1][1];
  out.pipeline_errors = res.filter((x) => x[0] !== null).length;
  out.hset = await r.hset("io:h", "a", "1", "b", "2");
  out.hgetall = await r.hgetall("io:h");
  out.mget = await r.mget("io:k", "io:missing");
  await r.quit();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
