#!/usr/bin/env python3
"""A database written by the version-5 preflight (tests/fixtures/store/
v5.db.gz, made by tests/gen/store_v5_fixture.py with the binary of commit
2cc2f49) is migrated by this one (issue #16): every stored check, list
page, history, diff, rule statistic and measurement the old binary served
is served again byte for byte (same status, same body; a history with
every member version 5 had, now beside the members issue 18 added), for
each team and
for an admin; another team's check is still a 404; the file passes
integrity_check and foreign_key_check; the findings are all kept (one
compact column per check, error and warning rules in check_rules); and
the migrated store takes new checks.

Usage: tests/store_migration.py PREFLIGHT_BIN SHARED_DIR
"""
import gzip
import http.client
import json
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                   "store")


def call(port, method, path, tok, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = dict(headers or {})
    h["Authorization"] = "Bearer " + tok
    c.request(method, path, body, h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def subset(old, new):
    """Is every member of old in new with the same value (recursively;
    lists item by item, same length)?"""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(
            k in new and subset(v, new[k]) for k, v in old.items())
    if isinstance(old, list):
        return isinstance(new, list) and len(old) == len(new) and all(
            subset(a, b) for a, b in zip(old, new))
    return old == new


def main():
    d = tempfile.mkdtemp(prefix="preflight-migration-")
    db = os.path.join(d, "v5.db")
    with gzip.open(os.path.join(FIX, "v5.db.gz"), "rb") as g, \
            open(db, "wb") as f:
        shutil.copyfileobj(g, f)
    os.chmod(db, 0o600)
    with gzip.open(os.path.join(FIX, "v5.json.gz"), "rt") as f:
        want = json.load(f)
    old = sqlite3.connect(db)
    old_findings = sorted(old.execute(
        "SELECT check_id, rule, severity, line FROM findings"))
    old_rules = sorted(set(old.execute(
        "SELECT team, rule, check_id FROM findings WHERE severity <> "
        "'info'")))
    old.close()
    log = open(os.path.join(d, "log"), "w+")
    proc, port = serve(BIN, db, log, ["--auth", "token"])
    try:
        bad = []
        for g in want["gets"]:
            st, body = call(port, "GET", g["path"], want["tokens"][g["token"]])
            if st != g["status"]:
                bad.append((g["token"], g["path"], st, g["status"]))
            elif ("/v1/configs/" in g["path"] or "/diff" in g["path"]) \
                    and st == 200:
                # Histories and diffs gained members after version 5 (18:
                # each item's context and memory, the changes' context
                # and per-term memory): what version 5 served must be
                # there unchanged, in the same order.
                if not subset(json.loads(g["body"]), json.loads(body)):
                    bad.append((g["token"], g["path"], "members", st))
            elif body.decode() != g["body"]:
                bad.append((g["token"], g["path"], st, g["status"]))
        n = len(want["gets"])
        check("%d GETs of the version-5 binary answered byte for byte "
              "after the migration (checks, lists, cursor pages, rule "
              "filters, histories, diff, stats, measurements; 404s)" % n,
              not bad and n >= 70, bad[:5])
        cfg = open(os.path.join(SHARED, "corpus", "axolotl", "examples",
                                "llama-3", "lora-1b.yml"), "rb").read()
        st, body = call(port, "POST", "/v1/checks?name=1b.yml",
                        want["tokens"]["red"], cfg,
                        {"Content-Type": "application/yaml"})
        check("the migrated store takes a new check", st == 201, st)
        st, hist = call(port, "GET", "/v1/configs/1b.yml/checks",
                        want["tokens"]["red"])
        items = json.loads(hist)["items"] if st == 200 else []
        check("its history puts it first and diffs it against the old ones",
              len(items) >= 2 and items[0]["id"] == json.loads(body)["id"]
              and items[0]["previous_id"] == items[1]["id"], hist[:300])
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    con = sqlite3.connect(db)
    check("schema version 6", con.execute(
        "PRAGMA user_version").fetchone()[0] == 6)
    check("integrity_check ok", con.execute(
        "PRAGMA integrity_check").fetchall() == [("ok",)])
    check("foreign_key_check finds nothing",
          con.execute("PRAGMA foreign_key_check").fetchall() == [])
    sev = {0: "error", 1: "warning", 2: "info"}
    names = dict(con.execute("SELECT id, name FROM rules"))
    kept = []
    for cid, found in con.execute("SELECT id, findings FROM checks"):
        for rule, s, line in json.loads(found):
            kept.append((cid, names[rule], sev[s], line))
    new_ids = {r[0] for r in con.execute(
        "SELECT id FROM checks").fetchall()} - {f[0] for f in old_findings}
    kept = sorted(k for k in kept if k[0] not in new_ids)
    check("all %d findings kept in the compact column" % len(old_findings),
          kept == old_findings and len(old_findings) > 100,
          (len(kept), len(old_findings)))
    entries = sorted(con.execute(
        "SELECT x.team, r.name, c.id FROM check_rules x JOIN rules r ON "
        "r.id = x.rule JOIN checks c ON c.seq = x.seq WHERE c.id NOT IN "
        "(%s)" % ",".join("?" * len(new_ids)), list(new_ids)))
    check("error and warning rules of each check in check_rules",
          entries == old_rules and len(old_rules) > 10,
          (len(entries), len(old_rules)))
    con.close()
    shutil.rmtree(d, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
