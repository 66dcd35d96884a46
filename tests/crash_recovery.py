#!/usr/bin/env python3
"""Crash recovery: SIGKILL the server during concurrent submissions, restart
it on the same database, and find every check that got a 201: each round's
through GET /v1/checks/{id} on the restarted server, every earlier round's
in the file (a check answered 201 is committed: issue #16 answers only
after COMMIT returned); the database passes PRAGMA integrity_check and
foreign_key_check after every round.

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
    proc, port = serve(BIN, db, log, ["--quota-checks-per-minute", "0",
                                      "--quota-bytes-per-day", "0"])
    return proc, port, log


def stored_ids(db):
    con = sqlite3.connect(db)
    ids = {r[0] for r in con.execute("SELECT id FROM checks")}
    ok = con.execute("PRAGMA integrity_check").fetchall() == [("ok",)] and \
        con.execute("PRAGMA foreign_key_check").fetchall() == []
    con.close()
    return ids, ok


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
            proc, port, log = start(db, os.path.join(d, "relog%d" % rnd))
            missing = []
            for cid in acked:
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
            all_acked += acked
            ids, ok = stored_ids(db)
            lost = [c for c in all_acked if c not in ids]
            check("round %d: %d acknowledged before SIGKILL, all readable "
                  "after restart; all %d of every round in the file, "
                  "integrity and foreign keys ok" % (
                      rnd + 1, len(acked), len(all_acked)),
                  len(acked) > 0 and not missing and not lost and ok,
                  (missing[:5], lost[:5], ok))
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
