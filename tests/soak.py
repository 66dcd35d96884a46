#!/usr/bin/env python3
"""Soak (issue #7 item 7): a steady request rate of mixed reads and writes
against one server for a long run: no 5xx, no failed request, RSS flat,
no file-descriptor growth.

Mix per 10 requests: 4 stored POST /v1/checks (two config names, YAML),
1 dry-run JSON POST, 2 GET /v1/checks/{id} of a recent check, 1 list with
a filter, 1 history of a config, 1 GET /healthz.

Usage: tests/soak.py PREFLIGHT_BIN SHARED_DIR [SECONDS] [RATE]
(defaults 600 s at 500 requests/s; `make soak` runs that).  RSS "flat":
the largest RSS of the last minute is within 10% (+2 MiB) of the largest
after the first minute.  Prints 'N passed, N failed'.
"""
import http.client
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, rss_kib, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
SECONDS = int(sys.argv[3]) if len(sys.argv) > 3 else 600
RATE = int(sys.argv[4]) if len(sys.argv) > 4 else 500
EX = os.path.join(SHARED, "corpus", "axolotl", "examples")
CONFIGS = [open(os.path.join(EX, "llama-3", "lora-1b.yml"), "rb").read(),
           open(os.path.join(EX, "llama-3", "qlora-fsdp-70b.yaml"),
                "rb").read()]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_status = {}
        self.errors = 0
        self.ids = []

    def note(self, status, new_id=None):
        with self.lock:
            self.by_status[status] = self.by_status.get(status, 0) + 1
            if new_id:
                self.ids.append(new_id)
                if len(self.ids) > 1000:
                    del self.ids[:500]

    def recent_id(self):
        with self.lock:
            return random.choice(self.ids) if self.ids else None


def one(conn, k, stats):
    kind = k % 10
    if kind < 4:
        name = "soak-%d.yaml" % (k % 2)
        conn.request("POST", "/v1/checks?gpus=8&name=" + name,
                     CONFIGS[k % 2], {"Content-Type": "application/yaml"})
    elif kind == 4:
        body = json.dumps({"config": CONFIGS[k % 2].decode(),
                           "context": {"gpus": 2}})
        conn.request("POST", "/v1/checks?dry_run=true", body,
                     {"Content-Type": "application/json"})
    elif kind < 7:
        cid = stats.recent_id()
        conn.request("GET", "/v1/checks/%s" % cid if cid else "/healthz")
    elif kind == 7:
        conn.request("GET", "/v1/checks?limit=20&verdict=warn")
    elif kind == 8:
        conn.request("GET", "/v1/configs/soak-0.yaml/checks?limit=10")
    else:
        conn.request("GET", "/healthz")
    r = conn.getresponse()
    data = r.read()
    new_id = None
    if r.status == 201:
        new_id = json.loads(data)["id"]
    stats.note(r.status, new_id)


def worker(port, share, stop_at, stats, seed):
    period = 1.0 / share
    nxt = time.time()
    k = seed
    conn = None
    while time.time() < stop_at:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port,
                                                  timeout=10)
            one(conn, k, stats)
        except (OSError, http.client.HTTPException, ValueError):
            with stats.lock:
                stats.errors += 1
            conn = None
        k += 7
        nxt += period
        delay = nxt - time.time()
        if delay > 0:
            time.sleep(delay)
        elif delay < -1:
            nxt = time.time()   # behind by a second: do not burst


def main():
    tmp = tempfile.mkdtemp(prefix="preflight-soak-")
    log = open(os.path.join(tmp, "log"), "w+")
    proc, port = serve(BIN, os.path.join(tmp, "soak.db"), log,
                       ["--quota-checks-per-minute", "0",
                        "--quota-bytes-per-day", "0"])
    stats = Stats()
    nthreads = max(1, RATE // 50)
    stop_at = time.time() + SECONDS
    threads = [threading.Thread(target=worker, args=(
        port, RATE / nthreads, stop_at, stats, i)) for i in range(nthreads)]
    samples = []
    t0 = time.time()
    try:
        for t in threads:
            t.start()
        while time.time() < stop_at:
            samples.append((time.time() - t0, rss_kib(proc.pid),
                            len(os.listdir("/proc/%d/fd" % proc.pid))))
            time.sleep(1)
        for t in threads:
            t.join()
        elapsed = time.time() - t0
        total = sum(stats.by_status.values())
        five = sum(n for s, n in stats.by_status.items() if s >= 500)
        four = sum(n for s, n in stats.by_status.items() if 400 <= s < 500)
        print("soak: %d requests in %.0f s (%.0f/s), statuses %s, %d "
              "client errors" % (total, elapsed, total / elapsed,
                                 dict(sorted(stats.by_status.items())),
                                 stats.errors))
        check("no 5xx", five == 0, stats.by_status)
        check("no 4xx", four == 0, stats.by_status)
        check("no failed connections or timeouts", stats.errors == 0,
              stats.errors)
        check("the rate was held (>= 90%)", total >= 0.9 * RATE * SECONDS,
              "%d of %d" % (total, RATE * SECONDS))
        warm = [r for t, r, f in samples if t >= min(60, SECONDS / 4)]
        last = [r for t, r, f in samples if t >= SECONDS - min(60,
                                                                 SECONDS / 4)]
        fd0 = [f for t, r, f in samples if t >= min(60, SECONDS / 4)][0]
        print("RSS after warm-up max %.1f MiB, last stretch max %.1f MiB; "
              "fds after warm-up %d, at the end %d" % (
                  max(warm) / 1024, max(last) / 1024, fd0, samples[-1][2]))
        check("RSS flat", max(last) <= max(warm) * 1.10 + 2048,
              (max(warm), max(last)))
        check("no fd growth", samples[-1][2] <= fd0 + 4,
              (fd0, samples[-1][2]))
        check("server still healthy", proc.poll() is None)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except Exception:
            proc.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
