"""Shared pieces of the Python test suites: the check/summary counter and
starting `preflight serve` on a free port."""
import hashlib
import hmac
import json
import subprocess
import time
import uuid

_counts = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    """Record one named assertion and print it."""
    if ok:
        _counts["passed"] += 1
        print("ok   %s" % name)
    else:
        _counts["failed"] += 1
        print("FAIL %s %s" % (name, str(detail)[:500]))


def summary():
    """Print the counts; the exit code (1 if anything failed)."""
    print("%d passed, %d failed" % (_counts["passed"], _counts["failed"]))
    return 1 if _counts["failed"] else 0


def serve(binary, db, log, args=(), env=None):
    """Start `binary serve` on 127.0.0.1:0 with its log in the open file
    log; (process, port) once it logs "listening", or RuntimeError."""
    proc = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--db", db] +
        list(args), stdout=subprocess.DEVNULL, stderr=log, env=env)
    deadline = time.time() + 10
    while time.time() < deadline:
        log.seek(0)
        for line in log:
            if '"listening"' in line:
                return proc, json.loads(line)["port"]
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    log.seek(0)
    raise RuntimeError("server did not start: " + log.read())


def rss_kib(pid):
    """The resident set size of process pid, KiB (0 if unknown)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def ci_headers(secret, raw, query="", ts=None, delivery=None):
    """The headers of a signed POST /v1/ci/checks (docs/ci.md): HMAC-SHA256
    over "v1\n<timestamp>\n<delivery>\n<query>\n<body>"; query is the raw
    query string without '?'."""
    ts = str(int(time.time()) if ts is None else ts)
    delivery = delivery or str(uuid.uuid4())
    msg = ("v1\n%s\n%s\n%s\n" % (ts, delivery, query)).encode() + raw
    mac = hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()
    return {"X-Preflight-Timestamp": ts, "X-Preflight-Delivery": delivery,
            "X-Preflight-Signature": "sha256=" + mac}
