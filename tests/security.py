#!/usr/bin/env python3
"""Attacks on `preflight serve --auth token` (issue 13), each against a real
server on a loopback port:

 1. every route of openapi.yaml under several encodings of its fixed
    segments (escaped letters, dot segments, NUL): 400, never served;
 2. findings capped per report and diffed in linear time; YAML keys crafted
    to collide; HEAD that builds no body;
 3. one address holding every connection; clients that never read their
    answers (RSS); one team's statistics stalling another team's reads;
    per-team write quotas;
 4. Idempotency-Key races; a corrupt database (refused at start, /readyz
    while serving); the failure limiter behind one address;
 5. CI signatures replayed, stale or with another query; TLS versions and
    suites; Transfer-Encoding/Content-Length/Host framing;
 6. the metrics token from a file and never echoed; database file modes;
    CORS headers on 401, 413 and 429.

Usage: tests/security.py PREFLIGHT_BIN SHARED_DIR
SECURITY_RSS=1 also runs the non-reading-clients RSS case (release build:
a sanitizer's quarantine keeps freed memory resident).
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, ci_headers, rss_kib, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SECRET = "ci-secret-0123456789abcdef"
ORIGIN = "https://form.example.com"
CFG = ("base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n"
       "micro_batch_size: 1\ngradient_accumulation_steps: 1\n"
       "sequence_len: 2048\ndatasets:\n  - path: tatsu-lab/alpaca\n"
       "    type: alpaca\nlearning_rate: 0.0002\n")


def dup_config(n, prefix="k"):
    """A config with n duplicate keys in one free-form mapping."""
    lines = [CFG.rstrip("\n"), "lr_scheduler_kwargs:"]
    for i in range(n):
        lines += ["  %s%d: 1" % (prefix, i), "  %s%d: 2" % (prefix, i)]
    return "\n".join(lines) + "\n"


def colliding_int_keys(n):
    """n integers whose hash under the old fixed index function (x ^= x>>33;
    x *= C; x ^= x>>33) share the low 32 bits: every one lands in the same
    cluster of an unkeyed table."""
    m = (1 << 64) - 1
    c = 0xff51afd7ed558ccd
    cinv = pow(c, -1, 1 << 64)
    out = []
    for i in range(1, n + 1):
        h = (i << 32) | 0x1234
        x = h ^ (h >> 33)
        x = (x * cinv) & m
        x ^= x >> 33
        out.append(x - (1 << 64) if x >= 1 << 63 else x)
    return out


def flood_config(n):
    return (CFG + "lr_scheduler_kwargs:\n" +
            "".join("  %d: 1\n" % k for k in colliding_int_keys(n)))


class Server:
    def __init__(self, d, *args, env=None, tls=None, db="p.db"):
        self.d = d
        self.db = os.path.join(d, db)
        self.log = open(os.path.join(d, "log-%d" % time.time_ns()), "w+")
        e = dict(os.environ)
        e.update(env or {})
        self.tls = tls
        self.proc, self.port = serve(BIN, self.db, self.log, args, env=e)

    def conn(self, timeout=10, source="127.0.0.1"):
        if self.tls:
            return http.client.HTTPSConnection(
                "127.0.0.1", self.port, timeout=timeout, context=self.tls,
                source_address=(source, 0))
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout,
                                          source_address=(source, 0))

    def request(self, method, path, body=None, headers=None, token=None,
                timeout=10, source="127.0.0.1"):
        c = self.conn(timeout, source)
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        if isinstance(body, str):
            body = body.encode()
        c.putrequest(method, path, skip_accept_encoding=True,
                     skip_host="Host" in h)
        for k, v in h.items():
            c.putheader(k, v)
        if body is not None:
            c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            j = json.loads(data) if data else None
        except ValueError:
            j = None
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), j

    def raw(self, source="127.0.0.1", timeout=5):
        return socket.create_connection(("127.0.0.1", self.port), timeout,
                                        source_address=(source, 0))

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def token(db, team, admin=False):
    args = [BIN, "token", "create", "--team", team, "--db", db] + \
        (["--admin"] if admin else [])
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return p.stdout.strip()


def post(s, tok, cfg=CFG, query="name=a.yaml", headers=None, source=None):
    h = {"Content-Type": "application/yaml"}
    h.update(headers or {})
    return s.request("POST", "/v1/checks?" + query, cfg, h, token=tok,
                     source=source or "127.0.0.1")


def read_status(sock, timeout=5):
    """(status or None, closed after it?) of the first answer on sock."""
    sock.settimeout(timeout)
    buf = b""
    try:
        while True:
            d = sock.recv(65536)
            if not d:
                break
            buf += d
    except OSError:
        pass
    if not buf.startswith(b"HTTP/1."):
        return None, True
    return int(buf.split(b" ", 2)[1]), True


# ---- 1. one route, one decision --------------------------------------

def encodings(seg):
    """Non-canonical spellings of a fixed path segment."""
    out = []
    first = "%%%02X" % ord(seg[0])
    out.append(first + seg[1:])                    # %76 for v
    out.append(("%%%02x" % ord(seg[-1])).join([seg[:-1], ""]))  # lower hex
    out.append("".join("%%%02X" % ord(c) for c in seg))  # all escaped
    out.append(seg + "%00")                        # NUL
    return out


def route_variants(path):
    """(description, target) pairs for every fixed segment of path."""
    segs = path.strip("/").split("/")
    out = []
    for i, seg in enumerate(segs):
        if not seg or seg.startswith("{"):   # "/" has no fixed segment
            continue
        for enc in encodings(seg):
            out.append(("%s -> %s" % (seg, enc),
                        "/" + "/".join(segs[:i] + [enc] + segs[i + 1:])))
        # dot segments before it, written and escaped
        for dots in (".", "x/..", "%2e", "x/%2E%2E", "%2e%2E"):
            out.append(("%s after /%s/" % (seg, dots),
                        "/" + "/".join(segs[:i] + [dots] + segs[i:])))
    return out


def test_routes(d):
    s = Server(d, "--auth", "token", "--metrics-token", "m" * 20,
               "--cors-origin", ORIGIN, env={"PREFLIGHT_CI_SECRET": SECRET})
    tok = token(s.db, "red")
    st, h, j = post(s, tok)
    cid = j["id"] if st == 201 else "0" * 26
    spec = yaml.safe_load(open(os.path.join(HERE, "..", "openapi.yaml")))
    served, bad, leaked = 0, [], []
    for path, ops in spec["paths"].items():
        concrete = path.replace("{id}", cid).replace("{name}", "a.yaml")
        for method in ops:
            m = method.upper()
            if m not in ("GET", "POST", "HEAD", "PUT", "DELETE", "PATCH"):
                continue
            for what, target in route_variants(concrete):
                body = CFG if m == "POST" else None
                hdr = {"Content-Type": "application/yaml"} if body else {}
                st, h, j = s.request(m, target, body, hdr)
                served += 1
                if st != 400:
                    bad.append((m, target, st))
                if j is not None and (cid in json.dumps(j) or
                                      j.get("items") is not None):
                    leaked.append((m, target))
    check("every route x %d non-canonical spellings of its fixed segments: "
          "400 without a token" % served, served > 100 and not bad, bad[:5])
    check("none of them returns stored data", not leaked, leaked[:5])
    # The same with a valid token: never routed either.
    st, h, j = s.request("GET", "/%761/checks", token=tok)
    check("GET /%761/checks with a valid token -> 400 too", st == 400, st)
    # Canonical paths still need the token (the test can fail).
    st, _, _ = s.request("GET", "/v1/checks")
    st2, _, _ = s.request("GET", "/metrics")
    st3, _, j3 = s.request("GET", "/v1/checks", token=tok)
    check("canonical /v1/checks and /metrics without token -> 401; with "
          "-> 200", st == 401 and st2 == 401 and st3 == 200 and
          len(j3["items"]) == 1, (st, st2, st3))
    # Parameters are decoded once: an encoded '/' in a name is data.
    st, _, j = post(s, tok, query="name=org%2Fml%3Aa.yaml")
    st2, _, j2 = s.request("GET", "/v1/configs/org%2Fml%3Aa.yaml/checks",
                           token=tok)
    st3, _, _ = s.request("GET", "/v1/configs/org%252Fml/checks", token=tok)
    check("a name with an encoded '/' is one parameter, decoded once",
          st == 201 and st2 == 200 and len(j2["items"]) == 1 and
          j2["name"] == "org/ml:a.yaml" and st3 == 200, (st, st2, st3))
    # Logs and metrics name the matched route only.
    st, _, j = s.request("GET", "/metrics",
                         headers={"Authorization": "Bearer " + "m" * 20})
    s.stop()
    text = s.log_text()
    check("refused targets are logged as 'unmatched' with status 400",
          '"route":"unmatched"' in text.replace(" ", "") and
          '"status":400' in text.replace(" ", ""))


# ---- 2. work that grows faster than the input -------------------------

def test_growth(d):
    s = Server(d, "--auth", "token", "--max-body", "4MiB")
    tok = token(s.db, "red")
    ids = []
    for prefix in ("a", "b"):
        t0 = time.time()
        st, h, j = post(s, tok, dup_config(5000, prefix), "name=big.yaml")
        ids.append(j["id"] if st == 201 else "")
        rules = [f["rule"] for f in j["findings"]] if st == 201 else []
        check("5,000 duplicate keys -> stored with 1,000 findings and a "
              "report.truncated note (%.2f s)" % (time.time() - t0),
              st == 201 and len(rules) == 1000 and
              rules.count("report.truncated") == 1 and
              j["verdict"] == "warn", (st, len(rules)))
    t0 = time.time()
    st, h, j = s.request("GET", "/v1/checks/%s/diff?against=%s" %
                         (ids[1], ids[0]), token=tok, timeout=30)
    took = time.time() - t0
    check("diff of two 1,000-finding checks answers at once (%.2f s)" % took,
          st == 200 and len(j["findings_added"]) == 999 and
          len(j["findings_removed"]) == 999 and took < 5, (st, took))
    t0 = time.time()
    items, cur, pages = [], None, 0
    while pages < 5:
        st, h, j = s.request("GET", "/v1/configs/big.yaml/checks" +
                             ("?cursor=" + cur if cur else ""), token=tok,
                             timeout=30)
        pages += 1
        if st != 200:
            break
        items += j["items"]
        cur = j["next_cursor"]
        if not cur:
            break
    took = time.time() - t0
    check("history of them answers at once, in byte-capped pages (%.2f s, "
          "%d pages)" % (took, pages), st == 200 and
          [i["id"] for i in items] == ids[::-1] and took < 5, (st, items))
    # Keys crafted to collide under the public hash function.
    t0 = time.time()
    st, h, j = post(s, tok, flood_config(9000), "dry_run=true")
    took = time.time() - t0
    check("9,000 integer keys crafted to collide: checked at once "
          "(%.2f s)" % took, st == 200 and took < 2, (st, took))
    st, h, j = post(s, tok, flood_config(45000), "dry_run=true")
    check("45,000 keys in one mapping -> 413 naming max_map_keys and the "
          "line", st == 413 and "max_map_keys" in j["detail"] and
          j.get("line", 0) > 10000, (st, j))
    p = subprocess.run([BIN, "check", "-"], input=flood_config(45000),
                       capture_output=True, text=True, timeout=30)
    check("the CLI refuses it the same way (exit 2)", p.returncode == 2 and
          "max_map_keys" in p.stderr, p.stderr[:200])
    # HEAD: status and headers, no body, nothing built.
    st, h, j = s.request("HEAD", "/v1/checks?limit=200", token=tok)
    st2, _, _ = s.request("HEAD", "/v1/checks?limit=0", token=tok)
    check("HEAD /v1/checks -> 200 with no body and no Content-Length; a bad "
          "query still 400", st == 200 and j is None and
          "content-length" not in h and st2 == 400, (st, h, st2))
    s.stop()


# ---- 3. one client must not take the whole server -----------------------

def test_per_address(d):
    s = Server(d, "--auth", "token", "--max-connections", "300",
               "--max-connections-per-address", "64",
               "--connection-timeout", "10")
    tok = token(s.db, "red")
    socks, refused = [], 0
    for _ in range(300):
        try:
            k = s.raw(source="127.0.0.2")
            k.sendall(b"POST /v1/checks HTTP/1.1\r\nHost: localhost\r\n")
            socks.append(k)
        except OSError:
            refused += 1
    time.sleep(0.5)
    open_ = 0
    for k in socks:
        k.setblocking(False)
        try:
            if k.recv(1) == b"":
                refused += 1
            else:
                open_ += 1
        except BlockingIOError:
            open_ += 1
        except OSError:
            refused += 1
    worst, ok = 0.0, 0
    for _ in range(10):
        t0 = time.time()
        try:
            st, _, _ = s.request("GET", "/v1/checks?limit=1", token=tok,
                                 timeout=2)
            ok += st == 200
        except OSError:
            pass
        worst = max(worst, time.time() - t0)
    check("300 half-sent requests from one address: at most 64 kept "
          "(%d kept, %d closed)" % (open_, refused), open_ <= 64 and
          refused >= 236, (open_, refused))
    check("another address is served meanwhile (10/10, worst %.0f ms)" %
          (worst * 1000), ok == 10 and worst < 2, (ok, worst))
    for k in socks:
        k.close()
    s.stop()


def test_slow_readers(d):
    s = Server(d, "--auth", "token", "--max-body", "4MiB",
               "--max-connections-per-address", "0")
    tok = token(s.db, "red")
    for i in range(6):
        post(s, tok, dup_config(1200, "x%d" % i), "name=r%d.yaml" % i)
    time.sleep(0.5)
    before = rss_kib(s.proc.pid)
    socks = []
    req = (b"GET /v1/checks?limit=5 HTTP/1.1\r\nHost: localhost\r\n"
           b"Authorization: Bearer " + tok.encode() + b"\r\n\r\n") * 8
    for i in range(100):
        k = s.raw(source="127.0.0.%d" % (10 + i % 50))
        k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        k.sendall(req)
        socks.append(k)
    time.sleep(3)
    after = rss_kib(s.proc.pid)
    st, _, _ = s.request("GET", "/healthz", timeout=2)
    grew = (after - before) / 1024
    check("100 clients that never read their list pages add %.1f MiB "
          "(< 64)" % grew, grew < 64 and st == 200, (before, after))
    for k in socks:
        k.close()
    s.stop()


def test_body_memory(d):
    s = Server(d, "--auth", "token", "--max-body", "1MiB",
               "--body-memory", "2MiB", db="bm.db")
    tok = token(s.db, "red")
    held = []
    for i in range(3):
        # Three teams: one team holds a quarter at most (server/limits.h).
        other = token(s.db, "other%d" % i)
        k = s.raw(source="127.0.0.%d" % (20 + i))
        k.sendall(b"POST /v1/checks?dry_run=true HTTP/1.1\r\nHost: localhost\r\n"
                  b"Authorization: Bearer " + other.encode() + b"\r\n"
                  b"Content-Type: application/yaml\r\n"
                  b"Content-Length: 1048000\r\n\r\n" + b"a: 1\n" * 180000)
        held.append(k)
    time.sleep(0.5)
    st, h, j = post(s, tok, query="dry_run=true")
    check("bodies held by others past --body-memory: a new body -> 503 "
          "with Retry-After", st == 503 and h.get("retry-after"), (st, j))
    for k in held:
        k.close()
    time.sleep(0.5)
    st, _, _ = post(s, tok, query="dry_run=true")
    check("once they go, bodies are taken again", st == 200, st)
    s.stop()


def test_dns_rebinding(d):
    s = Server(d, db="rb.db")   # --auth none on loopback
    codes = {}
    for host in ("localhost", "127.0.0.1:%d" % s.port, "[::1]",
                 "evil.example.com", "localhost.evil.example",
                 "127.0.0.1.nip.io"):
        codes[host] = s.request("GET", "/v1/checks",
                                headers={"Host": host})[0]
    s.stop()
    check("--auth none on loopback answers only to loopback Host names "
          "(DNS rebinding)", [codes[h] for h in codes] ==
          [200, 200, 200, 403, 403, 403], codes)
    s = Server(d, "--allowed-host", "preflight.internal", db="rb2.db")
    st, _, _ = s.request("GET", "/v1/checks",
                         headers={"Host": "preflight.internal:443"})
    st2, _, _ = s.request("GET", "/v1/checks",
                          headers={"Host": "evil.example.com"})
    s.stop()
    check("--allowed-host adds a proxy's name, and only it", st == 200 and
          st2 == 403, (st, st2))


def fill_big_team(db, nchecks, per_check):
    """nchecks checks of team 'big' with per_check findings each, written
    as the store writes them (migration 0006: findings as one column,
    error and warning rules in check_rules); the plan of its stats query."""
    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode=WAL")
    report = json.dumps({"verdict": "warn", "findings": []})
    c.executemany("INSERT OR IGNORE INTO rules (name) VALUES (?)",
                  [("rule.%d" % k,) for k in range(40)])
    rid = dict(c.execute("SELECT name, id FROM rules"))
    top = c.execute("SELECT coalesce(max(seq), 0) FROM checks").fetchone()[0]
    rows, rrows = [], []
    for i in range(nchecks):
        cid = "0%09d%016d" % (i, i)
        seq = top + 1 + i
        found = json.dumps([[rid["rule.%d" % (k % 40)], 1, k]
                            for k in range(per_check)],
                           separators=(",", ":"))
        rows.append((seq, cid, 0, "big", "b.yaml", "0" * 64, "warn", 0,
                     per_check, 0, "{}", report, b"a: 1\n", None, "0",
                     found))
        for k in range(min(per_check, 40)):
            rrows.append(("big", rid["rule.%d" % k], seq))
    c.executemany("INSERT INTO checks (seq, id, created_at, team, name, "
                  "config_sha256, verdict, errors, warnings, infos, context,"
                  " report, config, idem_key, body_sha256, findings) VALUES "
                  "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    c.executemany("INSERT INTO check_rules (team, rule, seq) VALUES "
                  "(?,?,?)", rrows)
    c.commit()
    plan = " ".join(r[3] for r in c.execute(
        "EXPLAIN QUERY PLAN SELECT verdict, findings FROM checks WHERE "
        "team = ?2 AND id >= ?1", ("", "big")))
    c.close()
    return plan


def test_stats_isolation(d):
    s = Server(d, "--auth", "token")
    red = token(s.db, "red")
    big = token(s.db, "big")
    st, _, j = post(s, red)
    rid = j["id"]
    s.stop()
    plan = fill_big_team(s.db, 8000, 250)
    check("stats of one team use checks_team_id (no scan of others)",
          "checks_team_id" in plan and "SCAN checks" not in plan, plan)
    s = Server(d, "--auth", "token", "--query-budget-ms", "10")
    stop = threading.Event()
    codes = []

    def hammer():
        while not stop.is_set():
            try:
                st, h, _ = s.request("GET", "/v1/stats/rules", token=big,
                                     timeout=30)
                codes.append((st, h.get("retry-after")))
            except OSError:
                codes.append((0, None))

    ts = [threading.Thread(target=hammer) for _ in range(3)]
    for t in ts:
        t.start()
    time.sleep(0.3)
    worst = 0.0
    for _ in range(20):
        t0 = time.time()
        st, _, _ = s.request("GET", "/v1/checks/" + rid, token=red)
        worst = max(worst, time.time() - t0)
    stop.set()
    for t in ts:
        t.join()
    check("another team's GET /v1/checks/{id} stays fast while 3 large "
          "stats run (worst %.0f ms)" % (worst * 1000), worst < 0.5, worst)
    check("a stats query past its budget -> 503 with Retry-After",
          codes and all(c in (200, 503) for c, _ in codes) and
          any(c == 503 and ra for c, ra in codes), codes[:5])
    s.stop()
    check("the budget is logged", "query budget" in s.log_text())


def test_quota(d):
    s = Server(d, "--auth", "token", "--quota-checks-per-minute", "3",
               "--cors-origin", ORIGIN)
    red, blue = token(s.db, "red"), token(s.db, "blue")
    codes = [post(s, red, query="name=q%d" % i)[0] for i in range(3)]
    st, h, j = post(s, red, headers={"Origin": ORIGIN})
    check("a team past its checks per minute -> 429 with Retry-After and "
          "CORS", codes == [201] * 3 and st == 429 and
          int(h.get("retry-after", "0")) >= 1 and
          h.get("access-control-allow-origin") == ORIGIN, (codes, st, h))
    st, _, _ = post(s, blue)
    check("another team is not affected", st == 201, st)
    s.stop()
    s = Server(d, "--auth", "token", "--quota-bytes-per-day", "16KiB",
               db="q2.db")
    red = token(s.db, "red")
    codes = [post(s, red, query="name=b%d" % i)[0] for i in range(12)]
    check("a team past its stored bytes per day -> 429", 201 in codes and
          codes[-1] == 429 and codes.index(429) > 1, codes)
    s.stop()


# ---- 4. errors that tell the truth --------------------------------------

def test_idempotency_race(d):
    s = Server(d, "--auth", "token")
    red = token(s.db, "red")
    out = []

    def go():
        try:
            st, h, j = post(s, red, headers={"Idempotency-Key": "race-1"})
            out.append((st, h.get("location")))
        except OSError as e:
            out.append((str(e), None))

    ts = [threading.Thread(target=go) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    sts = sorted(st for st, _ in out)
    locs = set(loc for _, loc in out)
    check("8 concurrent requests with one Idempotency-Key: one 201, the "
          "others 200 with the same check", sts == [200] * 7 + [201] and
          len(locs) == 1, out)
    s.stop()


def corrupt_table(db, table):
    """Overwrite the body of a table's root page with garbage."""
    c = sqlite3.connect(db)
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                     (table,)).fetchone()[0]
    size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * size + 8)
        f.write(b"\xa5" * (size - 16))


def test_corruption(d):
    s = Server(d, "--auth", "token")
    red = token(s.db, "red")
    for i in range(20):
        post(s, red, query="name=c%d.yaml" % i)
    s.stop()
    db2 = os.path.join(d, "copy.db")
    shutil.copy(s.db, db2)
    corrupt_table(s.db, "checks")
    p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--db",
                        s.db], capture_output=True, text=True, timeout=30)
    check("a database failing quick_check is refused at start, saying "
          "what to do", p.returncode != 0 and "quick_check" in p.stderr and
          "backup" in p.stderr, p.stderr[-300:])
    s = Server(d, "--auth", "token", "--quick-check-interval", "1",
               db="copy.db")
    red2 = token(s.db, "red2")
    st, _, _ = s.request("GET", "/readyz")
    corrupt_table(s.db, "checks")
    deadline = time.time() + 10
    st2 = 200
    while time.time() < deadline and st2 == 200:
        time.sleep(0.5)
        st2, _, _ = s.request("GET", "/readyz")
    st3, _, j = s.request("GET", "/v1/checks?limit=50", token=red2)
    s.stop()
    log = s.log_text()
    check("/readyz 200, then 503 once the periodic quick_check sees the "
          "corrupt page", st == 200 and st2 == 503, (st, st2))
    check("the store error is logged with its code, and reads answer 503 "
          "(never stored data)", "quick_check" in log and
          ("sqlite code" in log or st3 == 200) and st3 in (200, 503),
          (st3, log[-400:]))


def test_failure_limiter(d):
    s = Server(d, "--auth", "token", env={"PREFLIGHT_CI_SECRET": SECRET})
    red = token(s.db, "red")
    codes = [s.request("GET", "/v1/checks", source="127.0.0.3")[0]
             for _ in range(25)]
    st, _, _ = s.request("GET", "/v1/checks", token=red, source="127.0.0.3")
    st2, _, _ = s.request("GET", "/v1/checks", source="127.0.0.4")
    check("requests without a token behind one address: 401 then 429",
          codes[:20] == [401] * 20 and codes[-1] == 429, codes)
    check("a valid token from that address still passes; another address "
          "has its own budget", st == 200 and st2 == 401, (st, st2))
    guesses = [s.request("GET", "/v1/checks", token="pf_%08dxyz" % i,
                         source="127.0.0.5")[0] for i in range(230)]
    check("ever new token guesses from one address are limited too",
          guesses[-1] == 429 and guesses.count(401) <= 200, guesses[-5:])
    raw = json.dumps({"config": CFG, "source": {"repo": "r", "path": "p"}})
    bad = []
    for i in range(24):
        h = ci_headers("wrong-secret-0123456789", raw.encode())
        h["Content-Type"] = "application/json"
        bad.append(s.request("POST", "/v1/ci/checks", raw, h,
                             source="127.0.0.6")[0])
    check("bad CI signatures are counted: 401 then 429", bad[0] == 401 and
          bad[-1] == 429, bad)
    s.stop()


# ---- 5. CI webhook, TLS, HTTP framing -----------------------------------

def test_ci_replay(d):
    s = Server(d, "--auth", "token", env={"PREFLIGHT_CI_SECRET": SECRET})
    raw = json.dumps({"config": CFG, "source": {"repo": "org/ml",
                      "path": "a.yaml"}}).encode()
    h = ci_headers(SECRET, raw, "format=json")
    h["Content-Type"] = "application/json"
    st, _, _ = s.request("POST", "/v1/ci/checks?format=json", raw, h)
    st2, _, j2 = s.request("POST", "/v1/ci/checks?format=json", raw, h)
    check("a signed delivery is stored once; sending it again -> 409",
          st == 201 and st2 == 409 and "replayed" in j2["type"], (st, st2))
    h = ci_headers(SECRET, raw, "format=json")
    h["Content-Type"] = "application/json"
    st, _, _ = s.request("POST", "/v1/ci/checks?format=sarif", raw, h)
    check("the query string is signed: another format -> 401", st == 401,
          st)
    h = ci_headers(SECRET, raw, "", ts=int(time.time()) - 400)
    h["Content-Type"] = "application/json"
    st, _, j = s.request("POST", "/v1/ci/checks", raw, h)
    check("a timestamp 400 s old -> 401 stale", st == 401 and
          "stale" in j["type"], (st, j))
    # The shell example of docs/ci.md, as written, against this server.
    doc = open(os.path.join(HERE, "..", "docs", "ci.md")).read()
    snippet = [b for b in doc.split("```sh\n")[1:] if "openssl dgst" in b]
    script = snippet[0].split("```")[0] if snippet else "exit 9"
    cfgf = os.path.join(d, "llama.yaml")
    open(cfgf, "w").write(CFG)
    script = script.replace("configs/llama.yaml", cfgf).replace(
        "https://preflight.internal", "http://127.0.0.1:%d" % s.port)
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", script],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PREFLIGHT_CI_SECRET=SECRET,
                                CI_COMMIT="abc", CI_REF="refs/heads/x"))
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    check("the shell example of docs/ci.md is accepted", p.returncode == 0
          and out is not None, (p.returncode, p.stderr[-300:]))
    h = ci_headers(SECRET, raw, "")
    del h["X-Preflight-Timestamp"]
    h["Content-Type"] = "application/json"
    st, _, _ = s.request("POST", "/v1/ci/checks", raw, h)
    check("a request without a timestamp -> 401", st == 401, st)
    s.stop()


def tls_handshake(port, ctx):
    try:
        with socket.create_connection(("127.0.0.1", port), 5) as k:
            with ctx.wrap_socket(k, server_hostname="127.0.0.1") as t:
                return t.version(), t.cipher()[0]
    except (ssl.SSLError, OSError) as e:
        return None, str(e)[:80]


def test_tls(d):
    key, crt = os.path.join(d, "k.pem"), os.path.join(d, "c.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True,
                   capture_output=True)
    ok = ssl.create_default_context(cafile=crt)
    s = Server(d, "--tls-cert", crt, "--tls-key", key, tls=ok, db="t.db")

    def ctx(lo, hi, ciphers=None):
        c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        c.check_hostname = False
        c.verify_mode = ssl.CERT_NONE
        c.minimum_version, c.maximum_version = lo, hi
        if ciphers:
            c.set_ciphers(ciphers)
        return c

    v = ssl.TLSVersion
    old = tls_handshake(s.port, ctx(v.TLSv1, v.TLSv1_1,
                                    "ALL:@SECLEVEL=0"))
    cbc = tls_handshake(s.port, ctx(v.TLSv1_2, v.TLSv1_2,
                                    "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-"
                                    "SHA384:ECDHE-RSA-AES128-SHA256"))
    rsa = tls_handshake(s.port, ctx(v.TLSv1_2, v.TLSv1_2,
                                    "AES128-GCM-SHA256:AES256-GCM-SHA384"))
    gcm = tls_handshake(s.port, ctx(v.TLSv1_2, v.TLSv1_2,
                                    "ECDHE-RSA-AES128-GCM-SHA256"))
    t13 = tls_handshake(s.port, ctx(v.TLSv1_3, v.TLSv1_3))
    s.stop()
    check("TLS 1.0/1.1 refused", old[0] is None, old)
    check("TLS 1.2 CBC suites refused", cbc[0] is None, cbc)
    check("static RSA key exchange refused", rsa[0] is None, rsa)
    check("TLS 1.2 ECDHE + AES-GCM and TLS 1.3 accepted",
          gcm[0] == "TLSv1.2" and t13[0] == "TLSv1.3", (gcm, t13))


def test_framing(d):
    s = Server(d, "--auth", "token")
    tok = token(s.db, "red").encode()
    k = s.raw()
    t0 = time.time()
    k.sendall(b"POST /v1/checks?dry_run=true HTTP/1.1\r\nHost: localhost\r\n"
              b"Authorization: Bearer " + tok + b"\r\n"
              b"Content-Type: application/yaml\r\nContent-Length: 5\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    st, closed = read_status(k)
    check("Transfer-Encoding and Content-Length together -> 400, closed",
          st == 400 and closed and time.time() - t0 < 3, st)
    k.close()
    k = s.raw()
    t0 = time.time()
    k.sendall(b"POST /v1/checks?dry_run=true HTTP/1.1\r\nHost: localhost\r\n"
              b"Authorization: Bearer " + tok + b"\r\n"
              b"Content-Type: application/yaml\r\n"
              b"Transfer-Encoding: gzip\r\n\r\nabc")
    st, closed = read_status(k, timeout=5)
    check("an unknown transfer coding -> 501 at once (%.2f s)" %
          (time.time() - t0), st == 501 and time.time() - t0 < 2, st)
    k.close()
    k = s.raw()
    k.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
    st, _ = read_status(k)
    check("HTTP/1.1 without Host -> 400", st == 400, st)
    k.close()
    k = s.raw()
    k.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
    st, _ = read_status(k)
    check("HTTP/1.0 without Host is still served", st == 200, st)
    k.close()
    s.stop()


# ---- 6. small leaks -----------------------------------------------------

def test_small_leaks(d):
    tf = os.path.join(d, "metrics-token")
    open(tf, "w").write("metrics-secret-0123456789\n")
    s = Server(d, "--auth", "token", "--metrics-token-file", tf,
               "--cors-origin", ORIGIN, "--max-body", "1KiB",
               db="leak.db")
    st, _, _ = s.request("GET", "/metrics")
    st2, _, _ = s.request("GET", "/metrics", headers={
        "Authorization": "Bearer metrics-secret-0123456789"})
    check("--metrics-token-file: /metrics 401 without it, 200 with it",
          st == 401 and st2 == 200, (st, st2))
    tok = token(s.db, "red")
    post(s, tok)
    modes = {}
    for suffix in ("", "-wal", "-shm"):
        p = s.db + suffix
        if os.path.exists(p):
            modes[suffix or "db"] = stat.S_IMODE(os.stat(p).st_mode)
    check("the database, its WAL and shm are mode 0600",
          modes.get("db") == 0o600 and all(m == 0o600 for m in
                                            modes.values()), modes)
    o = {"Origin": ORIGIN}
    st1, h1, _ = s.request("GET", "/v1/checks", headers=o)
    st2, h2, _ = s.request("POST", "/v1/checks", "a: 1\n" * 400,
                           dict(o, **{"Content-Type": "application/yaml"}),
                           token=tok)
    check("401 and 413 carry CORS headers for an allowed origin",
          st1 == 401 and st2 == 413 and
          h1.get("access-control-allow-origin") == ORIGIN and
          h2.get("access-control-allow-origin") == ORIGIN, (st1, st2))
    s.stop()
    secret = "short-secret"
    p = subprocess.run([BIN, "serve", "-n", "--db", os.path.join(d, "x.db"),
                        "--metrics-token", secret], capture_output=True,
                       text=True, timeout=20)
    check("an invalid --metrics-token is refused without echoing it",
          p.returncode != 0 and secret not in p.stderr, p.stderr)


def main():
    d = tempfile.mkdtemp(prefix="preflight-security-")
    cases = [test_routes, test_growth, test_per_address, test_body_memory,
             test_dns_rebinding,
             test_stats_isolation,
             test_quota, test_idempotency_race, test_corruption,
             test_failure_limiter, test_ci_replay, test_tls, test_framing,
             test_small_leaks]
    if os.environ.get("SECURITY_RSS") == "1":
        cases.append(test_slow_readers)
    try:
        for case in cases:
            sub = os.path.join(d, case.__name__)
            os.mkdir(sub)
            print("== %s" % case.__name__)
            case(sub)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
