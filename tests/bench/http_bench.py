#!/usr/bin/env python3
"""HTTP load and daemon memory (issue #6 items 3 and 4, issue #4 point 5).

One `preflight serve` on an ephemeral port with a fresh database; wrk
(Debian's, installed by `make deps`) drives GET /healthz, POST
/v1/checks?dry_run=true and stored POST /v1/checks of a real Axolotl
example at 4 and 32 connections.  Prints requests/s and p50/p99/p99.9 per
case and the ratios stored/healthz and dry-run/healthz, then the server's
RSS idle, after the stored runs, with 512 idle connections open, and over
a steady-rate run.  Measurements only: nothing here is a test assertion.

Usage: http_bench.py PREFLIGHT_BIN CONFIG [SECONDS_PER_CASE]
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from pflib import rss_kib, serve  # noqa: E402

LUA = """
local body_file = os.getenv("PF_BODY")
if body_file ~= nil and body_file ~= "" then
  local f = io.open(body_file, "rb")
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/yaml"
end
local codes = {}
response = function(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
end
done = function(summary, latency, requests)
  io.write(string.format("PF %d %.1f %.3f %.3f %.3f %d %d\\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.timeout, summary.errors.status))
end
"""


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def wrk(port, path, body_file, conns, seconds, script):
    env = dict(os.environ, PF_BODY=body_file or "")
    threads = 2 if conns >= 2 else 1
    out = subprocess.run(
        ["wrk", "-t%d" % threads, "-c%d" % conns, "-d%ds" % seconds,
         "--timeout", "5s", "-s", script,
         "http://127.0.0.1:%d%s" % (port, path)],
        capture_output=True, text=True, env=env, timeout=seconds + 60)
    for line in out.stdout.splitlines():
        if line.startswith("PF "):
            f = line.split()
            return {"requests": int(f[1]), "rps": float(f[2]),
                    "p50": float(f[3]), "p99": float(f[4]),
                    "p999": float(f[5]), "errors": int(f[6]),
                    "non2xx": int(f[7])}
    raise RuntimeError("wrk printed no summary: " + out.stdout + out.stderr)


def steady(port, body, rate, seconds, pid):
    """POST at a steady rate from one thread per 100 req/s; RSS samples."""
    stop = time.time() + seconds
    samples = []
    errors = [0]

    def worker(share):
        s = None
        period = 1.0 / share
        nxt = time.time()
        while time.time() < stop:
            try:
                if s is None:
                    s = socket.create_connection(("127.0.0.1", port), 5)
                req = ("POST /v1/checks HTTP/1.1\r\nHost: x\r\n"
                       "Content-Type: application/yaml\r\n"
                       "Content-Length: %d\r\n\r\n" % len(body)).encode()
                s.sendall(req + body)
                buf = b""
                while b"\r\n\r\n" not in buf:
                    buf += s.recv(65536)
                head, rest = buf.split(b"\r\n\r\n", 1)
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                while len(rest) < n:
                    rest += s.recv(65536)
                if not head.startswith(b"HTTP/1.1 201"):
                    errors[0] += 1
            except OSError:
                errors[0] += 1
                s = None
            nxt += period
            time.sleep(max(0, nxt - time.time()))

    ts = [threading.Thread(target=worker, args=(rate / max(1, rate // 100),))
          for _ in range(max(1, rate // 100))]
    for t in ts:
        t.start()
    while time.time() < stop:
        samples.append((rss_kib(pid), fds(pid)))
        time.sleep(1)
    for t in ts:
        t.join()
    return samples, errors[0]


def main():
    binary, config = sys.argv[1], sys.argv[2]
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    if shutil.which("wrk") is None:
        print("wrk not found: run make deps")
        return 1
    tmp = tempfile.mkdtemp(prefix="preflight-bench-")
    script = os.path.join(tmp, "bench.lua")
    with open(script, "w") as f:
        f.write(LUA)
    log = open(os.path.join(tmp, "log"), "w+")
    proc, port = serve(binary, os.path.join(tmp, "bench.db"), log,
                       ["--max-connections", "2048",
                        "--max-connections-per-address", "2048",
                        "--quota-checks-per-minute", "0",
                        "--quota-bytes-per-day", "0"])
    try:
        time.sleep(0.3)
        idle = rss_kib(proc.pid)
        rows = []
        for conns in (4, 32):
            for name, path, body in (
                    ("GET /healthz", "/healthz", None),
                    ("POST dry_run", "/v1/checks?dry_run=true", config),
                    ("POST stored", "/v1/checks", config)):
                r = wrk(port, path, body, conns, seconds, script)
                rows.append((name, conns, r))
        print("%-14s %5s %10s %8s %8s %8s %7s" % (
            "case", "conns", "req/s", "p50 ms", "p99 ms", "p99.9ms",
            "errors"))
        for name, conns, r in rows:
            print("%-14s %5d %10.0f %8.2f %8.2f %8.2f %7d" % (
                name, conns, r["rps"], r["p50"], r["p99"], r["p999"],
                r["errors"] + r["non2xx"]))
        for conns in (4, 32):
            h = [r for n, c, r in rows if c == conns and n == "GET /healthz"]
            d = [r for n, c, r in rows if c == conns and n == "POST dry_run"]
            s = [r for n, c, r in rows if c == conns and n == "POST stored"]
            print("ratios at %2d conns: stored/healthz %.2f  dry-run/healthz "
                  "%.2f  (targets: stored >= 0.5, p99 <= 10 ms at 4)" % (
                      conns, s[0]["rps"] / h[0]["rps"],
                      d[0]["rps"] / h[0]["rps"]))
        stored = sum(r["requests"] for n, c, r in rows if n == "POST stored")
        after = rss_kib(proc.pid)
        socks = []
        for _ in range(512):
            socks.append(socket.create_connection(("127.0.0.1", port), 5))
        time.sleep(0.5)
        with_conns = rss_kib(proc.pid)
        for s in socks:
            s.close()
        with open(config, "rb") as f:
            body = f.read()
        samples, errs = steady(port, body, 200, max(10, 2 * seconds),
                               proc.pid)
        print("RSS idle %.1f MiB; after %d stored checks %.1f MiB; with 512 "
              "idle connections %.1f MiB (targets 32 / - / 96)" % (
                  idle / 1024, stored, after / 1024, with_conns / 1024))
        half = len(samples) // 2
        print("steady 200 req/s stored for %d s: RSS %.1f -> %.1f MiB "
              "(first half max %.1f, second half max %.1f), fds %d -> %d, "
              "%d errors" % (
                  len(samples), samples[0][0] / 1024, samples[-1][0] / 1024,
                  max(x[0] for x in samples[:half]) / 1024,
                  max(x[0] for x in samples[half:]) / 1024,
                  samples[0][1], samples[-1][1], errs))
        st = os.stat(os.path.join(tmp, "bench.db"))
        print("database: %.1f MiB" % (st.st_size / 1048576))
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
