#!/usr/bin/env python3
"""Crash recovery: SIGKILL the server during concurrent submissions, restart
it on the same database, and find every check that got a 201; the database
passes PRAGMA integrity_check.

Usage: tests/crash_recovery.py PREFLIGHT_BIN SHARED_DIR [ROUNDS]
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
CONFIG = open(os.path.join(SHARED, "corpus", "axolotl", "examples",
                           "llama-3", "lora-1b.yml"), "rb").read()
def start(db, logpath):
    log = open(logpath, "w+")
    proc, port = serve(BIN, db, log)
    return proc, port, log


def submitter(port, acked, stop, lock):
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("POST", "/v1/checks?name=crash", CONFIG,
                      {"Content-Type": "application/yaml"})
            r = c.getresponse()
            body = r.read()
            if r.status == 201:
                with lock:
                    acked.append(json.loads(body)["id"])
            c.close()
        except (OSError, http.client.HTTPException, ValueError):
            return  # the server is gone


def main():
    d = tempfile.mkdtemp(prefix="preflight-crash-")
    db = os.path.join(d, "p.db")
    all_acked = []
    try:
        for rnd in range(ROUNDS):
            proc, port, log = start(db, os.path.join(d, "log%d" % rnd))
            acked, stop, lock = [], threading.Event(), threading.Lock()
            threads = [threading.Thread(target=submitter,
                                        args=(port, acked, stop, lock))
                       for _ in range(8)]
            for t in threads:
                t.start()
            time.sleep(random.uniform(0.3, 1.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            stop.set()
            for t in threads:
                t.join()
            log.close()
            all_acked += acked
            proc, port, log = start(db, os.path.join(d, "relog%d" % rnd))
            missing = []
            for cid in all_acked:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/v1/checks/" + cid)
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    missing.append(cid)
                c.close()
            proc.send_signal(signal.SIGTERM)
            proc.wait(15)
            log.close()
            check("round %d: %d acknowledged before SIGKILL, all readable "
                  "after restart" % (rnd + 1, len(acked)),
                  len(acked) > 0 and not missing, missing[:5])
        con = sqlite3.connect(db)
        res = con.execute("PRAGMA integrity_check").fetchall()
        n = con.execute("SELECT count(*) FROM checks").fetchone()[0]
        con.close()
        check("integrity_check ok", res == [("ok",)], res)
        check("stored >= acknowledged", n >= len(all_acked), (n,
              len(all_acked)))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
