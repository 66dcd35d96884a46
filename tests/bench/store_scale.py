#!/usr/bin/env python3
"""Query time against the number of stored checks (issue #6 item 5, issue
#16).

For 10^3, 10^5 and 10^6 stored checks: a database made by `preflight
migrate` and filled, as the store writes them (migration 0006), with copies
of one real stored check (its report, config, findings column and rule
entries; ids in order, 10 ms apart, 10 config names), served by `preflight
serve`; then the median time of GET /v1/checks (first page, a page from the
middle through its cursor, verdict and rule filters), of GET
/v1/configs/{name}/checks (one config's history) and of GET
/v1/stats/rules over the last 10 s (the newest 1,000 checks) over 30
requests each.  Through the indexes these stay flat as the table grows
1000-fold; a query that scanned would grow with it.

Usage: store_scale.py PREFLIGHT_BIN [MAX_ROWS]
"""
import http.client
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from pflib import serve  # noqa: E402

CONFIG = (b"base_model: HuggingFaceTB/SmolLM2-135M\ndatasets:\n"
          b"  - path: tatsu-lab/alpaca\n    type: alpaca\n"
          b"sequence_len: 2048\nsequence_len: 4096\nmicro_batch_size: 1\n"
          b"gradient_accumulation_steps: 4\nbf16: true\n")


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.perf_counter()
    c.request("GET", path)
    r = c.getresponse()
    data = r.read()
    dt = time.perf_counter() - t0
    c.close()
    if r.status != 200:
        raise RuntimeError("%s -> %d %s" % (path, r.status, data[:200]))
    return dt, json.loads(data)


def template(binary, tmp):
    """One real stored check, as its checks row, and the rules table."""
    db = os.path.join(tmp, "t.db")
    log = open(os.path.join(tmp, "t.log"), "w+")
    proc, port = serve(binary, db, log)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("POST", "/v1/checks?name=t.yaml", CONFIG,
                  {"Content-Type": "application/yaml"})
        r = c.getresponse()
        r.read()
        assert r.status == 201, r.status
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    con = sqlite3.connect(db)
    row = con.execute("SELECT * FROM checks").fetchone()
    cols = [d[0] for d in con.execute("SELECT * FROM checks").description]
    rules = con.execute("SELECT id, name FROM rules").fetchall()
    con.close()
    t = dict(zip(cols, row))
    t["rules"] = rules
    return t


def fill(path, binary, t, rows):
    subprocess.run([binary, "migrate", "--db", path], check=True,
                   capture_output=True)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = OFF")
    con.executemany("INSERT INTO rules (id, name) VALUES (?, ?)",
                    t["rules"])
    # Ids: the first 10 characters (the time) are i in decimal digits,
    # which sort as base-32 numbers do; keys (seq) number them in order.
    con.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
        "WHERE i < ?) INSERT INTO checks (seq, id, created_at, team, name, "
        "config_sha256, verdict, errors, warnings, infos, context, report, "
        "config, idem_key, body_sha256, findings) SELECT i, "
        "printf('%010d%016d', i, i), ? + i, 'default', "
        "printf('cfg-%d.yaml', i % 10), ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ? "
        "FROM n",
        (rows, t["created_at"], t["config_sha256"], t["verdict"],
         t["errors"], t["warnings"], t["infos"], t["context"], t["report"],
         t["config"], t["body_sha256"], t["findings"]))
    con.execute(
        "INSERT INTO check_rules (team, rule, seq) SELECT 'default', r, "
        "seq FROM checks, (SELECT DISTINCT value ->> 0 AS r FROM "
        "json_each(?) WHERE value ->> 1 < 2)", (t["findings"],))
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def main():
    binary = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    tmp = tempfile.mkdtemp(prefix="preflight-scale-")
    try:
        t = template(binary, tmp)
        print("%9s %8s %8s %8s %8s %8s %8s %8s  (median ms of 30)" % (
            "rows", "fill s", "list", "middle", "verdict", "rule",
            "history", "stats"))
        for rows in (1000, 100000, 1000000):
            if rows > top:
                break
            path = os.path.join(tmp, "s%d.db" % rows)
            t0 = time.time()
            fill(path, binary, t, rows)
            filled = time.time() - t0
            log = open(os.path.join(tmp, "s.log"), "w+")
            proc, port = serve(binary, path, log)
            try:
                mid = urllib.parse.quote(
                    _cursor_for(port, rows // 2), safe="")
                paths = [
                    "/v1/checks?limit=50",
                    "/v1/checks?limit=50&cursor=" + mid,
                    "/v1/checks?limit=50&verdict=" + t["verdict"],
                    "/v1/checks?limit=50&rule=schema.duplicate_key",
                    "/v1/configs/cfg-7.yaml/checks?limit=50",
                    "/v1/stats/rules?since=" + _since(rows - 1000)]
                med = []
                for p in paths:
                    times = []
                    for _ in range(30):
                        dt, j = get(port, p)
                        times.append(dt)
                        if not j.get("items"):
                            raise RuntimeError("no items for " + p)
                    med.append(statistics.median(times) * 1000)
                print("%9d %8.1f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f" % (
                    (rows, filled) + tuple(med)))
            finally:
                proc.terminate()
                proc.wait(20)
                log.close()
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(path + suffix)
                except OSError:
                    pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _since(i):
    """The time of check i: its id's first 10 characters, base 32."""
    ms = int("%010d" % max(i, 1), 32)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + \
        ".%03dZ" % (ms % 1000)


def _cursor_for(port, skip):
    """The next_cursor that starts about skip rows down the list."""
    path = "/v1/checks?limit=200"
    cursor, seen = None, 0
    dt, j = get(port, path)
    cursor = j.get("next_cursor")
    seen = len(j["items"])
    # Walking half a million rows would dominate the run: jump by asking
    # for the id directly (ids are printf('%010d%016d', i, i)).
    del dt, seen
    if skip > 200:
        return _cursor_of_id(cursor, "%010d%016d" % (skip, skip))
    return cursor


def _cursor_of_id(sample, target_id):
    """next_cursor is an opaque encoding of an id; make the same encoding
    of target_id by re-encoding the sample's scheme (base64url of the id,
    as api/list.c list_cursor_encode writes it)."""
    import base64
    raw = base64.urlsafe_b64decode(sample + "=" * (-len(sample) % 4))
    if len(raw) != 26:      # not the scheme this tool knows: no jump
        return sample
    return base64.urlsafe_b64encode(target_id.encode()).decode().rstrip("=")


if __name__ == "__main__":
    sys.exit(main())
