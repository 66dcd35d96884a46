#!/usr/bin/env python3
"""Where a stored check spends its CPU and wall time that a dry run does
not (issue #16): perf stat on the server process over a fixed number of
requests of each kind, per thread.

One `preflight serve` on a fresh database; wrk (2 threads, CONNS
connections) posts CONFIG until each of its threads has N/2 answers, once
as a dry run (POST /v1/checks?dry_run=true) and once stored, ROUNDS times
alternating.  Over each run `perf stat --per-thread` counts on the
server's threads: task-clock, user and kernel time (cpu-clock:u /
cpu-clock:k), context switches, sched_waking (wake-ups the server issues:
of its own threads and of wrk's), syscalls, and the write and sync
syscalls.  Printed per request, summed over the rounds: each by thread
group (MHD-worker: the request threads; pf-writer: the store's writer;
pf-ckpt: its checkpointer; other) and the wall time per request.  Then
the difference stored - dry run, which is what storing costs.

With --record, `perf record -g` over one more stored run and the top of
`perf report` by thread and by symbol (needs the binary's -g).

Measurements only; nothing here is an assertion.  Run it when the machine
is quiet (uptime's 1-minute load below 1 on 2 cores): context switches
and wall time depend on what else runs.

Usage: store_profile.py PREFLIGHT_BIN CONFIG [N [CONNS [ROUNDS]]] [--record]
(PF_SERVE_ARGS: more `preflight serve` flags, e.g. "--threads 2")
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import serve  # noqa: E402
from http_bench import SERVE_ARGS, metrics  # noqa: E402

LUA = """
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } pf_ts;
int clock_gettime(int clk, pf_ts *ts);
]]
local function now()
  local t = ffi.new("pf_ts")
  ffi.C.clock_gettime(1, t)
  return tonumber(t.tv_sec) + tonumber(t.tv_nsec) / 1e9
end
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
local f = io.open(os.getenv("PF_BODY"), "rb")
wrk.body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/yaml"
local limit = tonumber(os.getenv("PF_N"))
n = 0
bad = 0
t0 = 0
t1 = 0
function request()
  if t0 == 0 then t0 = now() end
  return wrk.format()
end
response = function(status, headers, body)
  n = n + 1
  if status >= 300 then bad = bad + 1 end
  if n == limit then
    t1 = now()
    wrk.thread:stop()
    local m = io.open(os.getenv("PF_MARK") .. tostring(t1), "w")
    m:close()
  end
end
done = function(summary, latency, requests)
  local a, b, k, e = 1e18, 0, 0, 0
  for _, t in ipairs(threads) do
    a = math.min(a, t:get("t0"))
    b = math.max(b, t:get("t1"))
    k = k + t:get("n")
    e = e + t:get("bad")
  end
  io.write(string.format("PF %d %.6f %.3f %.3f %d\\n", k, b - a,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e))
end
"""

EVENTS = ["task-clock", "context-switches",
          "sched:sched_waking", "raw_syscalls:sys_enter",
          "syscalls:sys_enter_pwrite64", "syscalls:sys_enter_write",
          "syscalls:sys_enter_fdatasync", "syscalls:sys_enter_futex",
          "syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_sendmsg",
          "syscalls:sys_enter_sendto"]
SHORT = {"task-clock": "cpu_ms", "context-switches": "cs",
         "sched:sched_waking": "wakes", "raw_syscalls:sys_enter": "syscalls",
         "syscalls:sys_enter_pwrite64": "pwrite",
         "syscalls:sys_enter_write": "write",
         "syscalls:sys_enter_fdatasync": "fdatasync",
         "syscalls:sys_enter_futex": "futex",
         "syscalls:sys_enter_epoll_wait": "epoll_wait",
         "syscalls:sys_enter_sendmsg": "sendmsg",
         "syscalls:sys_enter_sendto": "sendto"}
GROUPS = ("MHD-worker", "pf-writer", "pf-ckpt", "other")


def db_written(port):
    """preflight_db_written_bytes_total of /metrics (0 if absent)."""
    return metrics(port).get("preflight_db_written_bytes_total", 0.0)


def group(comm):
    return comm if comm in GROUPS else "other"


def proc_times(pid):
    """{group: [user ms, kernel ms]} of pid's threads (/proc, in ticks)."""
    tick = 1000.0 / os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        f = st[st.rindex(")") + 2:].split()
        g = out.setdefault(group(comm), [0.0, 0.0])
        g[0] += int(f[11]) * tick
        g[1] += int(f[12]) * tick
    return out


def run(port, pid, path, body, n, conns, script, record=None):
    """wrk until n answers under perf; (wrk figures, {group: {event: v}}).
    User and kernel time come from /proc (perf's cpu-clock:u/:k do not
    split them on every kernel)."""
    t0 = proc_times(pid)
    b0 = db_written(port)
    out = tempfile.mktemp(prefix="pf-perf-")
    if record:
        cmd = ["perf", "record", "-g", "-F", "2999", "-p", str(pid), "-o",
               record, "--quiet"]
    else:
        cmd = ["perf", "stat", "--per-thread", "-x", ",", "-o", out,
               "-e", ",".join(EVENTS), "-p", str(pid)]
    perf = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    mark = os.path.join(os.path.dirname(script), "mark-%d-" % time.time_ns())
    env = dict(os.environ, PF_BODY=body, PF_N=str(max(1, n // 2)),
               PF_MARK=mark)
    # wrk's threads stop at n/2 answers each (the Lua above); its main
    # thread sleeps out -d unless interrupted, which prints the summary.
    w = subprocess.Popen(["wrk", "-t2", "-c%d" % conns, "-d600s",
                          "--timeout", "5s", "-s", script,
                          "http://127.0.0.1:%d%s" % (port, path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    d = os.path.dirname(mark)
    while w.poll() is None and len([x for x in os.listdir(d) if
                                    x.startswith(os.path.basename(mark))]) < 2:
        time.sleep(0.05)
    w.send_signal(signal.SIGINT)
    stdout, stderr = w.communicate(timeout=60)
    perf.send_signal(signal.SIGINT)
    perf.wait(60)
    t1 = proc_times(pid)
    written = db_written(port) - b0
    res = None
    for line in stdout.splitlines():
        if line.startswith("PF "):
            f = line.split()
            res = {"requests": int(f[1]), "seconds": float(f[2]),
                   "written": written,
                   "p50": float(f[3]), "p99": float(f[4]),
                   "non2xx": int(f[5])}
    if res is None:
        raise RuntimeError("wrk printed no summary: " + stdout + stderr)
    counts = {g: {} for g in GROUPS}
    if not record:
        with open(out) as f:
            for line in f:
                p = line.strip().split(",")
                if len(p) < 4 or line.startswith("#"):
                    continue
                comm = p[0].rsplit("-", 1)[0]
                try:
                    v = float(p[1])
                except ValueError:
                    continue
                ev = p[3]
                key = SHORT.get(ev)
                if key is None:
                    continue
                if ev.startswith("task-clock") or ev.startswith("cpu-clock"):
                    v = v if p[2] == "msec" else v / 1e6
                c = counts[group(comm)]
                c[key] = c.get(key, 0) + v
        os.unlink(out)
    for g, (u, k) in t1.items():
        b = t0.get(g, [0.0, 0.0])
        counts[g]["user_ms"] = u - b[0]
        counts[g]["kernel_ms"] = k - b[1]
    return res, counts


def add(total, counts):
    for g, c in counts.items():
        t = total.setdefault(g, {})
        for k, v in c.items():
            t[k] = t.get(k, 0) + v


def show(name, requests, seconds, total):
    keys = ["cpu_ms", "user_ms", "kernel_ms", "cs", "wakes", "syscalls",
            "pwrite", "write", "fdatasync", "futex", "epoll_wait",
            "sendmsg", "sendto"]
    print("%s: %d requests, %.1f us wall per request (%d req/s)" % (
        name, requests, seconds / requests * 1e6, requests / seconds))
    print("  %-11s %8s %8s %8s %6s %6s %8s %6s %6s %6s %6s %6s %6s %6s" % (
        ("per request", "cpu us", "user us", "kern us", "cs", "wakes",
         "syscall", "pwrite", "write", "fsync", "futex", "epoll", "sendmsg",
         "sendto")))
    sums = {}
    for g in GROUPS + ("all",):
        c = total.get(g, {}) if g != "all" else sums
        if g != "all":
            for k, v in c.items():
                sums[k] = sums.get(k, 0) + v
        vals = [c.get(k, 0) / requests * (1000 if k.endswith("_ms") else 1)
                for k in keys]
        print("  %-11s %8.1f %8.1f %8.1f %6.2f %6.2f %8.2f %6.2f %6.2f %6.3f "
              "%6.2f %6.2f %6.2f %6.2f" % tuple([g] + vals))
    return {k: v / requests for k, v in sums.items()}


def main():
    argv = [a for a in sys.argv[1:] if a != "--record"]
    record = "--record" in sys.argv
    binary, config = argv[0], argv[1]
    n = int(argv[2]) if len(argv) > 2 else 20000
    conns = int(argv[3]) if len(argv) > 3 else 4
    rounds = int(argv[4]) if len(argv) > 4 else 2
    for tool in ("wrk", "perf"):
        if shutil.which(tool) is None:
            print("%s not found" % tool)
            return 1
    tmp = tempfile.mkdtemp(prefix="preflight-profile-")
    script = os.path.join(tmp, "profile.lua")
    with open(script, "w") as f:
        f.write(LUA)
    log = open(os.path.join(tmp, "serve.log"), "w+")
    extra = os.environ.get("PF_SERVE_ARGS", "").split()
    proc, port = serve(binary, os.path.join(tmp, "p.db"), log,
                       SERVE_ARGS + extra)
    try:
        with open("/proc/loadavg") as f:
            load0 = f.read().split()[:3]
        # Warm up both paths (tables, page cache, the WAL's first MiBs).
        run(port, proc.pid, "/v1/checks", config, 2000, conns, script)
        totals = {"dry run": [0, 0.0, {}], "stored": [0, 0.0, {}]}
        written = 0.0
        for _ in range(rounds):
            for name, path in (("dry run", "/v1/checks?dry_run=true"),
                               ("stored", "/v1/checks")):
                res, counts = run(port, proc.pid, path, config, n, conns,
                                  script)
                t = totals[name]
                if name == "stored":
                    written += res["written"]
                t[0] += res["requests"]
                t[1] += res["seconds"]
                add(t[2], counts)
                print("%-8s %6d requests in %.2f s, p50 %.2f ms, p99 %.2f "
                      "ms, %d non-2xx" % (name, res["requests"],
                                          res["seconds"], res["p50"],
                                          res["p99"], res["non2xx"]))
        with open("/proc/loadavg") as f:
            load1 = f.read().split()[:3]
        print("%d connections, %d rounds of %d requests per kind; load "
              "average %s before, %s after" % (
                  conns, rounds, n, "/".join(load0), "/".join(load1)))
        per = {}
        for name in ("dry run", "stored"):
            t = totals[name]
            per[name] = show(name, t[0], t[1], t[2])
            per[name]["wall_us"] = t[1] / t[0] * 1e6
        print("stored: %.1f KB written to the database and WAL per check "
              "(the store's counting VFS)" % (
                  written / totals["stored"][0] / 1024))
        d = {k: per["stored"].get(k, 0) - per["dry run"].get(k, 0)
             for k in per["stored"]}
        print("stored - dry run per request: wall %+.1f us, cpu %+.1f us "
              "(user %+.1f, kernel %+.1f), %+.2f context switches, %+.2f "
              "wake-ups, %+.1f syscalls (%+.2f pwrite, %+.2f futex)" % (
                  d["wall_us"], d.get("cpu_ms", 0) * 1000,
                  d.get("user_ms", 0) * 1000, d.get("kernel_ms", 0) * 1000,
                  d.get("cs", 0), d.get("wakes", 0), d.get("syscalls", 0),
                  d.get("pwrite", 0), d.get("futex", 0)))
        if record:
            data = os.path.join(tmp, "perf.data")
            run(port, proc.pid, "/v1/checks", config, n, conns, script,
                record=data)
            for sort in ("comm,dso", "comm,sym"):
                rep = subprocess.run(
                    ["perf", "report", "-i", data, "--no-children",
                     "--sort", sort, "--stdio", "-g", "none",
                     "--percent-limit", "0.7"],
                    capture_output=True, text=True)
                print("== perf report --sort %s (stored)" % sort)
                for line in rep.stdout.splitlines():
                    if line and not line.startswith("#"):
                        print(line)
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
