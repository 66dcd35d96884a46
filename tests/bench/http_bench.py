#!/usr/bin/env python3
"""HTTP load, what a stored check costs, and daemon memory (issue #6
items 3 and 4, issue #16).

Two `preflight serve` on fresh databases, one with the default durability
and one with the other (`--durability full` or `normal`), wrk (Debian's,
installed by `make deps`) posting a real Axolotl example.  The machine is
shared, so every figure that matters is a ratio taken within one run:
at 4 and 32 connections, ROUNDS rounds of back-to-back segments of
SECONDS each -- dry run (POST ?dry_run=true), stored (POST /v1/checks) on
the default server, stored on the other server -- and the ratios are of
the totals (stored/dry, other/default).  Printed per case: requests/s,
p50/p99/p99.9 (median over the segments, and the worst), errors; per
stored check: bytes written to the database and its WAL (the store's
counting VFS, /metrics) and by the process (/proc/PID/io write_bytes),
fsyncs, checks per commit, database growth.  Then GET /healthz for
scale, and the server's RSS idle, after the stored runs, with 512 idle
connections open, and over a steady-rate run.  Measurements only:
nothing here is a test assertion.

Usage: http_bench.py PREFLIGHT_BIN CONFIG [SECONDS [ROUNDS]]
"""
import http.client
import json
import os
import re
import shutil
import socket
import statistics
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
                req = ("POST /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
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


SERVE_ARGS = ["--max-connections", "2048",
              "--max-connections-per-address", "2048",
              "--quota-checks-per-minute", "0", "--quota-bytes-per-day", "0"]


def metrics(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    return {k: float(v) for k, v in
            re.findall(r"^(preflight_db_\w+) (\S+)$", text, re.M)}


def proc_io(pid):
    with open("/proc/%d/io" % pid) as f:
        return {k: int(v) for k, v in
                (line.split(": ") for line in f.read().splitlines())}


class Server:
    """One daemon and the counters of its stored segments."""

    def __init__(self, binary, tmp, name, args):
        self.name = name
        self.db = os.path.join(tmp, name + ".db")
        self.log = open(os.path.join(tmp, name + ".log"), "w+")
        self.proc, self.port = serve(binary, self.db, self.log,
                                     SERVE_ARGS + args)
        self.stored = {}    # conns -> [wrk result]
        self.cost = {}      # conns -> counters summed over stored segments

    def stored_segment(self, path, body, conns, seconds, script):
        m0, io0 = metrics(self.port), proc_io(self.proc.pid)
        r = wrk(self.port, path, body, conns, seconds, script)
        m1, io1 = metrics(self.port), proc_io(self.proc.pid)
        self.stored.setdefault(conns, []).append(r)
        c = self.cost.setdefault(conns, {})
        for k in ("checks_committed_total", "commits_total", "syncs_total",
                  "written_bytes_total", "size_bytes"):
            key = "preflight_db_" + k
            c[k] = c.get(k, 0) + m1.get(key, 0) - m0.get(key, 0)
        c["write_bytes"] = c.get("write_bytes", 0) + \
            io1["write_bytes"] - io0["write_bytes"]
        if "preflight_db_checks_committed_total" not in m1:
            # A binary before issue #16 (no store counters): the
            # answered requests, and the process's bytes only.
            c["checks_committed_total"] += r["requests"]
            c["commits_total"] = 0
        return r

    def stop(self):
        self.proc.terminate()
        self.proc.wait(20)
        self.log.close()


def total_rps(rs):
    return sum(r["requests"] for r in rs) / max(
        1e-9, sum(r["requests"] / r["rps"] for r in rs if r["rps"] > 0))


def line(name, conns, rs):
    return "%-22s %5d %10.0f %8.2f %8.2f %8.2f %8.2f %7d" % (
        name, conns, total_rps(rs),
        statistics.median(r["p50"] for r in rs),
        statistics.median(r["p99"] for r in rs),
        max(r["p99"] for r in rs),
        statistics.median(r["p999"] for r in rs),
        sum(r["errors"] + r["non2xx"] for r in rs))


def cost_line(s, conns):
    c = s.cost[conns]
    n = c["checks_committed_total"]
    if n <= 0:
        return "%s: nothing committed" % s.name
    if c["commits_total"] <= 0:
        return ("%-8s %2d conns: %.1f KB written by the process per check, "
                "database growth %.1f KB per check (no store counters)" % (
                    s.name, conns, c["write_bytes"] / n / 1024,
                    c["size_bytes"] / n / 1024))
    return ("%-8s %2d conns: %6.1f KB written per check (process: %.1f "
            "KB), %.3f fsyncs per check, %.1f checks per commit, database "
            "growth %.1f KB per check" % (
                s.name, conns, c["written_bytes_total"] / n / 1024,
                c["write_bytes"] / n / 1024, c["syncs_total"] / n,
                n / max(1, c["commits_total"]), c["size_bytes"] / n / 1024))


def main():
    binary, config = sys.argv[1], sys.argv[2]
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    if shutil.which("wrk") is None:
        print("wrk not found: run make deps")
        return 1
    tmp = tempfile.mkdtemp(prefix="preflight-bench-")
    script = os.path.join(tmp, "bench.lua")
    with open(script, "w") as f:
        f.write(LUA)
    help_text = subprocess.run([binary, "serve", "--help"],
                               capture_output=True, text=True).stdout
    default = "full" if re.search(r"durability[^\n]*default full",
                                  help_text) else "normal"
    other = "normal" if default == "full" else "full"
    main_s = Server(binary, tmp, default, [])
    alt_s = Server(binary, tmp, other, ["--durability", other])
    try:
        time.sleep(0.3)
        idle = rss_kib(main_s.proc.pid)
        dry = {}
        with open("/proc/loadavg") as f:
            load0 = f.read().split()[:3]
        for conns in (4, 32):
            for _ in range(rounds):
                dry.setdefault(conns, []).append(wrk(
                    main_s.port, "/v1/checks?dry_run=true", config, conns,
                    seconds, script))
                main_s.stored_segment("/v1/checks", config, conns, seconds,
                                      script)
                alt_s.stored_segment("/v1/checks", config, conns, seconds,
                                     script)
        health = {c: [wrk(main_s.port, "/healthz", None, c, seconds,
                          script)] for c in (4, 32)}
        with open("/proc/loadavg") as f:
            load1 = f.read().split()[:3]
        print("%d rounds of %d s segments (dry, stored %s, stored %s), "
              "load average %s before, %s after" % (
                  rounds, seconds, default, other, "/".join(load0),
                  "/".join(load1)))
        print("%-22s %5s %10s %8s %8s %8s %8s %7s" % (
            "case", "conns", "req/s", "p50 ms", "p99 ms", "worst99",
            "p99.9ms", "errors"))
        for conns in (4, 32):
            print(line("POST dry_run", conns, dry[conns]))
            print(line("POST stored (%s)" % default, conns,
                       main_s.stored[conns]))
            print(line("POST stored (%s)" % other, conns,
                       alt_s.stored[conns]))
            print(line("GET /healthz", conns, health[conns]))
        for conns in (4, 32):
            d = total_rps(dry[conns])
            st = total_rps(main_s.stored[conns])
            alt = total_rps(alt_s.stored[conns])
            per = [s["rps"] / x["rps"] for s, x in
                   zip(main_s.stored[conns], dry[conns])]
            print("ratios at %2d conns: stored/dry-run %.2f (segments %s; "
                  "target >= %s), %s/%s stored %.2f, dry-run/healthz %.2f" % (
                      conns, st / d, " ".join("%.2f" % x for x in per),
                      "0.5" if conns == 4 else "0.6", other, default,
                      alt / st, d / total_rps(health[conns])))
        print("p99 of stored checks at 4 conns: %.2f ms (median of "
              "segments; target <= 5 ms)" % statistics.median(
                  r["p99"] for r in main_s.stored[4]))
        for conns in (4, 32):
            print(cost_line(main_s, conns))
            print(cost_line(alt_s, conns))
        stored = sum(r["requests"] for rs in main_s.stored.values()
                     for r in rs)
        after = rss_kib(main_s.proc.pid)
        socks = []
        for _ in range(512):
            socks.append(socket.create_connection(("127.0.0.1",
                                                   main_s.port), 5))
        time.sleep(0.5)
        with_conns = rss_kib(main_s.proc.pid)
        for s in socks:
            s.close()
        with open(config, "rb") as f:
            body = f.read()
        samples, errs = steady(main_s.port, body, 200, max(10, 2 * seconds),
                               main_s.proc.pid)
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
        print("database: %.1f MiB" % (os.stat(main_s.db).st_size / 1048576))
    finally:
        main_s.stop()
        alt_s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
