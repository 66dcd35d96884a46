#!/usr/bin/env python3
"""Attacks on `preflight serve --auth token` beyond issue 13
(tests/security.py), each against a real server on a loopback port:

 1. slowloris from many addresses: every connection slot held by
    requests that trickle one byte at a time, each under the per-address
    limit and never idle long enough for the idle timeout; another
    client must still be served;
 2. configs that make the checker's own work grow faster than their size
    (a long plugins list in a run that needs suggestions; fsdp_config
    with thousands of keys; thousands of findings and suppression
    markers);
 3. output injection: config keys and file names holding newlines and
    terminal escapes, in the text report a terminal or CI log shows;
 4. duplicated framing and credential headers (two Content-Length, Host,
    Transfer-Encoding or Authorization lines), which a proxy in front may
    read the other way (request smuggling, a second team's token);
 5. requests libmicrohttpd refuses itself after the request line (a query
    with more arguments than its memory pool holds): nothing may leak, and
    they must not count as in flight (SIGTERM would wait for them);
 6. percent-encoded bytes that are not UTF-8 in path parameters and query
    strings: a 400 that says so, never a 500 or a stored check whose name
    no JSON can carry;
 7. /metrics without a metrics token under --auth token: every team's
    verdict and rule counts together, so only this machine's loopback
    may read them (a client on another address gets 401);
 8. amplification: a request whose answer (and stored check) is many
    times its size, on every route and format that writes a report: a
    suppression reason every suppressed finding repeats, a plugins list
    every suggestion repeats; an answer is at most twice the request plus
    a fixed 2 MiB;
 9. one team holding every request thread: a flood of the most expensive
    checks from one token, over many source addresses, must leave other
    teams answered within a second (at most --quota-at-once requests of a
    team are served at once, the rest wait their turn);
 10. memory one team holds: 600 connections each asking for a 2 MB stored
    check and never reading must not pin 600 answers in memory (nor keep
    the server busy building them), and one team's unfinished uploads
    must not take the request-body budget every team shares;
 11. HEAD answers: libmicrohttpd framed a HEAD answer without a length as
    chunked and sent its last chunk, bytes a client or a proxy pooling
    connections reads as the start of the next answer;
 12. the CI team's budget spent by anyone: unsigned POSTs to /v1/ci/checks
    (no secret needed) took the CI team's checks per minute, so its real,
    signed deliveries got 429;
 13. YAML %TAG directives: libyaml compares each with every one before it
    (quadratic), so 1 MiB of them held a request thread for seconds (tens
    of seconds under ASan), where any other 1 MiB config takes
    milliseconds;
 14. a line of many '#' characters (one comment, or a quoted value): the
    suppression-marker scan counted lines from the start of the line again
    at every '#', so a 1 MB line of them cost seconds;
 15. request methods that are not tokens (RFC 9110): a byte that is not
    UTF-8 made the 405 answer a 500 and dropped the request's access-log
    line (its JSON could not be built), so such requests left no trace;
    control characters went into the log as written;
 16. problems that quote the request: a Content-Type that is not UTF-8,
    or a value cut inside a UTF-8 character where the detail stops, made
    the 4xx a 500 "out of memory" (jansson refuses the text);
 17. Idempotency-Key races counted as database failures: a team that
    sends one key from several connections at once makes the losers'
    inserts fail on the (team, key) index, each logged at level error and
    counted in preflight_db_errors_total, so a client can raise the
    operator's database alarm at will (now a lost race is ERR_TAKEN:
    neither logged nor counted);
 18. the stored bytes per day of a team (--quota-bytes-per-day) spent only
    by POST /v1/checks: POST /v1/diagnose with a config stores a check
    (and a diagnosis) too, answered 200, and was never charged, so a team
    filled the disk past its quota through it;
 19. the CLI's `--format github` (workflow commands, printed into CI logs):
    a config key or file name with ESC, BEL, C1 or U+2028 went out raw
    (the text format escapes them), so a config in a pull request drove
    the terminal of whoever reads the log (OSC 8 links, erased lines);
 20. a UTF-8 byte order mark (Windows editors write one): libyaml, told
    the input is UTF-8, read it as a character of the first line, so a
    config Axolotl (PyYAML) loads was refused as invalid YAML from its
    second key on;

Usage: tests/redteam.py PREFLIGHT_BIN SHARED_DIR
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, ci_headers, rss_kib, summary  # noqa: E402
import security  # noqa: E402  (reads the same argv)

BIN, SHARED = sys.argv[1], sys.argv[2]
CFG = ("base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n"
       "micro_batch_size: 1\ngradient_accumulation_steps: 1\n"
       "sequence_len: 2048\ndatasets:\n  - path: tatsu-lab/alpaca\n"
       "    type: alpaca\nlearning_rate: 0.0002\n")


class Server(security.Server):
    """security.py's server (one harness for both suites), each with a
    database of its own in d."""

    def __init__(self, d, *args, env=None):
        super().__init__(d, *args, env=env, db="p-%d.db" % time.time_ns())

    def token(self, team, admin=False):
        return security.token(self.db, team, admin)


def alive(sock):
    """Is the server still holding sock open?"""
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


# ---- 1. slowloris from many addresses ---------------------------------

def test_slowloris_many_addresses(d):
    """12 addresses x 20 connections (each address under its limit of
    20, together past the 200 connections the server takes), each sending
    one header byte every 1.5 s: never idle for the 4 s timeout."""
    s = Server(d, "--auth", "token", "--max-connections", "200",
               "--max-connections-per-address", "20",
               "--connection-timeout", "4")
    tok = s.token("red")
    socks = []
    for a in range(12):
        for _ in range(20):
            try:
                k = s.raw(source="127.0.1.%d" % (a + 1))
                k.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
                socks.append(k)
            except OSError:
                pass
    stop = threading.Event()

    def drip():
        while not stop.is_set():
            for k in socks:
                try:
                    k.sendall(b"X")
                except OSError:
                    pass
            stop.wait(1.5)
    t = threading.Thread(target=drip)
    t.start()
    served, tries = [], 0
    t0 = time.time()
    while time.time() - t0 < 14:
        tries += 1
        try:
            st, _, _ = s.request("GET", "/v1/checks?limit=1", token=tok,
                                 timeout=2)
            if st == 200:
                served.append(round(time.time() - t0, 1))
        except OSError:
            pass
        time.sleep(1)
    held = sum(alive(k) for k in socks)
    stop.set()
    t.join()
    for k in socks:
        k.close()
    s.stop()
    check("240 trickling connections from 12 addresses: another client "
          "is served within 8 s (served at %s s of 14)" % served[:3],
          served and served[0] < 8, (served, tries))
    check("none of them is held past 14 s (%d still open; the request "
          "must arrive within --connection-timeout)" % held, held == 0,
          held)
    # A client that is slow but within the deadline is not cut.
    s = Server(d, "--auth", "token", "--connection-timeout", "4")
    tok = s.token("red")
    k = s.raw()
    body = CFG.encode()
    k.sendall(b"POST /v1/checks?dry_run=true HTTP/1.1\r\nHost: localhost\r\n"
              b"Authorization: Bearer " + tok.encode() + b"\r\n"
              b"Content-Type: application/yaml\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body))
    for i in range(0, len(body), len(body) // 4 + 1):
        time.sleep(0.6)
        k.sendall(body[i:i + len(body) // 4 + 1])
    k.settimeout(5)
    first = k.recv(64)
    k.close()
    s.stop()
    check("a body sent in four pieces over 2.4 s (deadline 4 s) is "
          "answered", first.startswith(b"HTTP/1.1 200"), first)


# ---- 2. configs whose check costs more than their size ------------------

FULL_FT = ("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 4\n"
           "gradient_accumulation_steps: 1\nsequence_len: 4096\n"
           "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
           "learning_rate: 0.00002\n")


def plugins_config(n):
    """A full fine-tune that does not fit one GPU (so the estimator
    searches for changes, one of which adds Cut Cross Entropy to the
    plugins list) with n plugins listed."""
    return FULL_FT + "plugins:\n" + "".join(
        "  - org.plugins.p%d.Plugin\n" % i for i in range(n))


def test_plugins_suggestions(d):
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    times = {}
    for n in (100, 3000):
        cfg = plugins_config(n)
        t0 = time.time()
        st, _, j = s.request("POST", "/v1/checks?dry_run=true&gpus=1", cfg,
                             {"Content-Type": "application/yaml"}, tok,
                             timeout=30)
        times[n] = time.time() - t0
        sets = [json.dumps(x["set"]) for x in (j or {}).get(
            "suggestions", [])] if st == 200 else []
        check("%d plugins (%d KB) in a run that needs suggestions: checked "
              "(%d, %.2f s, under 2 s), CCE suggested with every plugin "
              "kept" % (n, len(cfg) >> 10, st, times[n]),
              st == 200 and times[n] < 2 and any(
                  "CutCrossEntropyPlugin" in x and
                  "org.plugins.p%d.Plugin" % (n - 1) in x for x in sets),
              (st, j if st != 200 else sets[:2]))
    s.stop()
    cfg = plugins_config(20000)
    t0 = time.time()
    p = subprocess.run([BIN, "check", "-", "--gpus", "1"], input=cfg,
                       capture_output=True, text=True, timeout=60)
    took = time.time() - t0
    check("the CLI checks 20,000 plugins (%d KB) in %.2f s, exit 1 not 2" %
          (len(cfg) >> 10, took), p.returncode == 1 and took < 3,
          (p.returncode, p.stderr[:200]))


def cli_time(cfg):
    """Seconds `check -` takes on cfg, and its exit code."""
    t0 = time.time()
    p = subprocess.run([BIN, "check", "-", "--gpus", "1"], input=cfg,
                       capture_output=True, text=True, timeout=120)
    return time.time() - t0, p.returncode


def test_fsdp_config_keys(d):
    """fsdp_config is read the way Axolotl's validator does (the fsdp_
    prefix dropped, a later key winning): that normalisation compared
    each key with every key kept before it."""
    keys = "".join("  fsdp_state_dict_typ%d: x\n" % i for i in range(9990))
    base = FULL_FT.replace("micro_batch_size: 4", "micro_batch_size: 1")
    fsdp = base + "fsdp_config:\n" + keys
    other = base + "lr_scheduler_kwargs:\n" + keys
    t_other, rc_other = min(cli_time(other) for _ in range(3))
    t_fsdp, rc_fsdp = min(cli_time(fsdp) for _ in range(3))
    check("9,990 keys in fsdp_config cost at most 4x the same keys in "
          "another mapping (%.3f s vs %.3f s)" % (t_fsdp, t_other),
          rc_fsdp in (0, 1) and t_fsdp < 4 * t_other + 0.05,
          (rc_fsdp, rc_other))
    # Semantics kept: a later key wins over an earlier one it renames to.
    rules = []
    for order in (("fsdp_offload_params: notabool", "offload_params: true"),
                  ("offload_params: true", "fsdp_offload_params: notabool")):
        cfg = base + "fsdp_config:\n  %s\n  %s\n  fsdp_version: 2\n" % order
        p = subprocess.run([BIN, "check", "-", "--gpus", "2", "--format",
                            "json"], input=cfg, capture_output=True,
                           text=True, timeout=60)
        j = json.loads(p.stdout) if p.stdout else {}
        rules.append([f["path"] for f in j.get("findings", [])
                      if f["rule"] == "schema.type"])
    check("... a later fsdp_config key still wins over the earlier one it "
          "renames to (a bad value first: no type error; last: one)",
          rules == [[], ["fsdp_config"]], rules)


def test_suppression_markers(d):
    """Each finding was held against every `# preflight: ignore[...]`
    marker of the file: findings x markers."""
    head = FULL_FT + "".join("z%d: 1\n" % i for i in range(9900))
    marked = head + "# preflight: ignore[a.b] reason\n" * 25000
    plain = head + "# an ordinary comment line here\n" * 25000
    t_plain, rc_plain = min(cli_time(plain) for _ in range(3))
    t_marked, rc_marked = min(cli_time(marked) for _ in range(3))
    check("9,900 findings and 25,000 markers that match none cost at most "
          "4x the same lines as plain comments (%.3f s vs %.3f s)" %
          (t_marked, t_plain), rc_marked in (0, 1) and
          t_marked < 4 * t_plain + 0.05, (rc_marked, rc_plain))
    # A whole config on one line: every finding against one marker
    # listing 60,000 ids.
    keys = ", ".join("z%d: 1" % i for i in range(9000))
    ids = ",".join("x.y%d" % i for i in range(60000))
    flow = ("{base_model: meta-llama/Llama-3.1-8B, micro_batch_size: 1, "
            "gradient_accumulation_steps: 1, learning_rate: 0.0002, "
            "datasets: [{path: a, type: alpaca}], " + keys + "}")
    t_plain, _ = min(cli_time(flow + "  # " + ids + "\n") for _ in range(3))
    t_marked, rc = min(cli_time(flow + "  # preflight: ignore[" + ids +
                                ",schema.unknown_key_dropped] r\n")
                       for _ in range(3))
    check("9,000 findings on one line, its marker listing 60,000 ids: at "
          "most 4x the same line with a plain comment (%.3f s vs %.3f s)" %
          (t_marked, t_plain), rc in (0, 1) and
          t_marked < 4 * t_plain + 0.05, rc)
    # Markers still apply: on the line, alone on the line above, by id.
    cfg = (FULL_FT + "zz_a: 1  # preflight: ignore[schema.unknown_key_dropped] ok\n"
           "# preflight: ignore[schema.unknown_key_dropped] ok\nzz_b: 1\n"
           "zz_c: 1  # preflight: ignore[other.rule] no\n"
           "# preflight: ignore[schema.unknown_key_dropped] ok\n\nzz_d: 1\n")
    p = subprocess.run([BIN, "check", "-", "--gpus", "8", "--format",
                        "json"], input=cfg, capture_output=True, text=True,
                       timeout=60)
    j = json.loads(p.stdout) if p.stdout else {}
    kept = sorted(f["path"] for f in j.get("findings", [])
                  if f["rule"] == "schema.unknown_key_dropped")
    gone = sorted(f["path"] for f in j.get("suppressed", []))
    check("... markers still suppress on their line and the line below "
          "(suppressed %s, kept %s)" % (gone, kept),
          gone == ["zz_a", "zz_b"] and kept == ["zz_c", "zz_d"], p.stdout[:300])


# ---- 3. output injection -------------------------------------------------

HOSTILE_KEYS = (
    'base_model: meta-llama/Llama-3.1-8B\n'
    '"x\\n::error file=a.py,line=1::injected": 1\n'
    '"y\\r\\n::add-mask::secret\\u0085::warning::nel": 2\n'
    '"z\\e[2J\\e]0;title\\a\\e[31mred": 3\n')


def test_text_injection(d):
    sub = os.path.join(d, "inj")
    os.mkdir(sub)
    path = os.path.join(sub, "cfg\n::error::from-the-name.yaml")
    with open(path, "w") as f:
        f.write(HOSTILE_KEYS)
    p = subprocess.run([BIN, "check", path, "--gpus", "1"],
                       capture_output=True, timeout=30)
    out = p.stdout
    lines = out.split(b"\n")
    starts = [ln for ln in lines if ln.lstrip().startswith(b"::")]
    check("text report of hostile keys and a hostile file name: no line "
          "starts a workflow command (%d lines, %d do)" %
          (len(lines), len(starts)), p.returncode in (0, 1) and
          not starts and b"injected" in out, (p.returncode, starts[:3]))
    check("... no terminal control byte (ESC, BEL, CR, C1) reaches the "
          "terminal", not any(c in out for c in (b"\x1b", b"\x07", b"\r",
                                                 b"\xc2\x85")),
          out[:300])
    check("... the keys are still named, escaped ('x\\n::error')",
          b"'x\\n::error file=a.py" in out and b"\\x1b[2J" in out,
          out[:300])
    p = subprocess.run([BIN, "check", sub, "--gpus", "1"],
                       capture_output=True, timeout=30)
    starts = [ln for ln in p.stdout.split(b"\n")
              if ln.lstrip().startswith(b"::")]
    check("... the same walking the directory (%d workflow lines)" %
          len(starts), p.returncode in (0, 1) and not starts and
          b"injected" in p.stdout, (p.returncode, starts[:3]))


def test_github_format_controls(d):
    sub = os.path.join(d, "inj-gh")
    os.mkdir(sub)
    path = os.path.join(sub, "cfg\x1b[2K\x07\u0085.yaml")
    with open(path, "w") as f:
        f.write(HOSTILE_KEYS + '"w\\e]8;;http://evil.example/\\afoo'
                '\\e]8;;\\a\\u2028bar": 4\n')
    p = subprocess.run([BIN, "check", path, "--gpus", "1", "--format",
                        "github"], capture_output=True, timeout=30)
    out = p.stdout
    bad = [c for c in (b"\x1b", b"\x07", b"\r", b"\xc2\x85",
                       b"\xe2\x80\xa8") if c in out]
    cmds = [ln for ln in out.split(b"\n") if ln.startswith(b"::")]
    check("--format github of hostile keys and file name: one workflow "
          "command per finding, no terminal control byte in them (%d "
          "commands; found %s)" % (len(cmds), bad), p.returncode in (0, 1)
          and len(cmds) >= 4 and not bad, out[:400])
    check("... the keys and the name are still there, escaped (\\x1b, "
          "\\u2028, %0A)", b"\\x1b]8;;http://evil" in out and
          b"\\u2028bar" in out and b"x%0A::error file=a.py" in out and
          b"cfg\\x1b[2K\\x07\\u0085.yaml," in out, out[:400])


# ---- 4. duplicated framing and credential headers ------------------------

def send_raw(s, data, timeout=5):
    """The status of the first answer to data, and whether the server
    closed the connection after it."""
    k = s.raw(timeout=timeout)
    k.sendall(data)
    k.settimeout(timeout)
    buf = b""
    closed = False
    try:
        while True:
            got = k.recv(65536)
            if not got:
                closed = True
                break
            buf += got
    except OSError:
        pass
    k.close()
    st = int(buf.split(b" ", 2)[1]) if buf.startswith(b"HTTP/1.") else None
    return st, closed, buf


def test_duplicate_headers(d):
    s = Server(d, "--auth", "token", "--connection-timeout", "3")
    red, blue = s.token("red"), s.token("blue")
    body = CFG.encode()
    head = b"POST /v1/checks?dry_run=true HTTP/1.1\r\nHost: localhost\r\n" \
        b"Authorization: Bearer " + red.encode() + b"\r\n" \
        b"Content-Type: application/yaml\r\n"
    smuggled = b"GET /v1/checks HTTP/1.1\r\nHost: localhost\r\n" \
        b"Authorization: Bearer " + blue.encode() + b"\r\n\r\n"
    cases = [
        ("two Content-Length values", head + b"Content-Length: %d\r\n"
         b"Content-Length: 5\r\n\r\n" % len(body) + body),
        ("Content-Length twice, the second covering a smuggled request",
         head + b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" %
         (len(body), len(body) + len(smuggled)) + body + smuggled),
        ("two Transfer-Encoding lines (chunked, then gzip)",
         head + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip"
         b"\r\n\r\n%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"),
        ("two Host lines", b"GET /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
         b"Host: evil.example.com\r\nAuthorization: Bearer " +
         red.encode() + b"\r\n\r\n"),
        ("two Authorization lines (two teams' tokens)",
         b"GET /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
         b"Authorization: Bearer " + red.encode() + b"\r\n"
         b"Authorization: Bearer " + blue.encode() + b"\r\n\r\n"),
    ]
    for what, data in cases:
        st, closed, buf = send_raw(s, data)
        check("%s -> 400 and closed (got %s%s)" % (what, st,
              ", closed" if closed else ""), st == 400 and closed and
              buf.count(b"HTTP/1.1 ") == 1, buf[:200])
    # One of each is still served.
    st, closed, buf = send_raw(s, head + b"Content-Length: %d\r\n"
                               b"Connection: close\r\n\r\n" % len(body) +
                               body)
    check("the same request with one of each -> 200", st == 200, buf[:200])
    # Folded header lines (obs-fold): libmicrohttpd joined the fold to the
    # header's name, framing the request with no Content-Length or
    # Transfer-Encoding where a proxy that unfolds sees one.
    folded = [
        ("Transfer-Encoding folded onto a second line",
         head + b"Transfer-Encoding:\r\n chunked\r\n\r\n%x\r\n" %
         len(body) + body + b"\r\n0\r\n\r\n"),
        ("Content-Length continued on a second line",
         head + b"Content-Length: %d\r\n 0\r\n\r\n" % len(body) + body),
        ("Transfer-Encoding: chunked continued with ', gzip'",
         head + b"Transfer-Encoding: chunked\r\n , gzip\r\n\r\n%x\r\n" %
         len(body) + body + b"\r\n0\r\n\r\n"),
        ("Authorization folded after 'Bearer'",
         b"GET /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
         b"Authorization: Bearer\r\n\t" + red.encode() + b"\r\n\r\n"),
        ("another header folded into a name with a space",
         b"GET /v1/checks HTTP/1.1\r\nHost: localhost\r\nAuthorization: "
         b"Bearer " + red.encode() + b"\r\nX-A: b\r\n c d\r\n\r\n"),
    ]
    for what, data in folded:
        st, closed, buf = send_raw(s, data)
        check("%s -> 400 bad-framing and closed (got %s%s)" % (
              what, st, ", closed" if closed else ""), st == 400 and
              closed and b"bad-framing" in buf and
              buf.count(b"HTTP/1.1 ") == 1, buf[:300])
    s.stop()


# ---- 5. requests MHD refuses after the request line -----------------------

def client_sockets(pid):
    """Sockets the daemon holds besides its listening one."""
    fds = os.listdir("/proc/%d/fd" % pid)
    n = 0
    for f in fds:
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, f)).startswith(
                "socket:")
        except OSError:
            pass
    return n - 1


def test_refused_requests_freed(d):
    """(libmicrohttpd leaves a few of these connections open until its
    timeout, here 3 s: the test waits for them to close.)"""
    s = Server(d, "--auth", "token", "--connection-timeout", "3")
    req = (b"GET /v1/checks?" + b"&" * 5000 +
           b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    before = rss_kib(s.proc.pid)
    for _ in range(2000):
        k = s.raw()
        k.sendall(req)
        time.sleep(0.002)
        k.close()
    t0 = time.time()
    while client_sockets(s.proc.pid) > 0 and time.time() - t0 < 10:
        time.sleep(0.2)
    open_ = client_sockets(s.proc.pid)
    grew = (rss_kib(s.proc.pid) - before) / 1024
    st, _, _ = s.request("GET", "/healthz", timeout=5)
    t0 = time.time()
    rc = s.stop()
    took = time.time() - t0
    with open(s.log.name) as f:
        log = f.read()
    check("2,000 queries of 5,000 empty arguments (431 from MHD), each "
          "closed at once: once their connections are gone (%d left), "
          "SIGTERM exits at once (%.1f s, exit %d) with no request left in "
          "flight" % (open_, took, rc), st == 200 and rc == 0 and
          open_ == 0 and took < 5 and "cut off" not in log and
          "LeakSanitizer" not in log, log[-400:])
    if os.environ.get("REDTEAM_RSS") == "1":
        check("... and the daemon grew %.1f MiB (< 4)" % grew, grew < 4,
              grew)


# ---- 6. percent-encoded bytes that are not UTF-8 -------------------------

def test_non_utf8_parameters(d):
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    yaml_ct = {"Content-Type": "application/yaml"}
    cases = [
        ("GET", "/v1/configs/%C0%AF/checks", None),      # overlong '/'
        ("GET", "/v1/configs/%ED%A0%80/checks", None),   # a surrogate
        ("GET", "/v1/rules/%FF", None),
        ("GET", "/v1/checks/%C3/diff?against=x", None),  # cut short
        ("GET", "/v1/checks?name=%C0%AF", None),
        ("GET", "/v1/checks?%FF=1", None),
        ("GET", "/v1/measurements?name=%F5%80%80%80", None),  # > U+10FFFF
        ("POST", "/v1/checks?name=%C0%AF", CFG),
        ("POST", "/v1/checks?dry_run=true&gpu=%FF", CFG),
        ("POST", "/v1/estimate?gpu=%E0%80%80", CFG),
    ]
    got = []
    for method, path, body in cases:
        st, _, j = s.request(method, path, body, yaml_ct if body else None,
                             tok)
        got.append(st)
        check("%s %s -> 400 saying it is not UTF-8 (got %d)" %
              (method, path, st), st == 400 and j is not None and
              "UTF-8" in j.get("detail", ""), j)
    st, _, j = s.request("GET", "/v1/checks", token=tok)
    check("... and nothing was stored", st == 200 and j["items"] == [],
          (st, j))
    st, _, j = s.request("POST", "/v1/checks?name=caf%C3%A9%E2%80%94%F0%9F"
                         "%9A%80.yaml", CFG, yaml_ct, tok)
    st2, _, j2 = s.request("GET", "/v1/configs/caf%C3%A9%E2%80%94%F0%9F%9A%80"
                           ".yaml/checks", token=tok)
    check("a UTF-8 name (2, 3 and 4 bytes) is stored and its history read",
          st == 201 and st2 == 200 and len(j2["items"]) == 1 and
          j2["name"] == "caf\u00e9\u2014\U0001f680.yaml", (st, st2, j2))
    s.stop()


# ---- 7. /metrics across teams ------------------------------------------

def own_address():
    """An address of this machine off loopback, or None."""
    import socket
    for target in ("10.255.255.255", "8.8.8.8", "192.0.2.1"):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.connect((target, 9))  # a route lookup: nothing is sent
            a = s.getsockname()[0]
            if not a.startswith("127.") and a != "0.0.0.0":
                return a
        except OSError:
            pass
        finally:
            s.close()
    try:
        for a in socket.gethostbyname_ex(socket.gethostname())[2]:
            if not a.startswith("127."):
                return a
    except OSError:
        pass
    return None


def metrics_from(port, host, token=None, extra=None):
    import http.client
    c = http.client.HTTPConnection(host, port, timeout=10)
    h = {"Host": "localhost"}
    h.update(extra or {})
    if token:
        h["Authorization"] = "Bearer " + token
    c.request("GET", "/metrics", headers=h)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def test_metrics_off_loopback(d):
    """With --auth token and no metrics token, /metrics holds every
    team's counts: open to loopback clients only."""
    addr = own_address()
    check("this machine has an address off loopback to test from",
          addr is not None, addr)
    if addr is None:
        return
    s = Server(d, "--auth", "token", "--listen", "0.0.0.0:0")
    try:
        red = s.token("red")
        st, _, _ = s.request("POST", "/v1/checks", CFG,
                             {"Content-Type": "application/yaml"},
                             token=red)
        check("a check is stored", st == 201, st)
        st, body = metrics_from(s.port, "127.0.0.1")
        check("/metrics from loopback without a metrics token: 200",
              st == 200 and b"preflight_" in body, st)
        # A proxy on this machine relays every client from loopback.
        for hdr in ({"X-Forwarded-For": "203.0.113.9"},
                    {"forwarded": "for=203.0.113.9"},
                    {"X-Real-IP": "203.0.113.9"}):
            st, body = metrics_from(s.port, "127.0.0.1", extra=hdr)
            check("/metrics relayed by a local proxy (%s): 401, no counts"
                  % list(hdr)[0], st == 401 and b"preflight_" not in body,
                  st)
        st, body = metrics_from(s.port, addr)
        check("/metrics from %s without a metrics token: 401, no counts"
              % addr, st == 401 and b"preflight_" not in body, st)
        st, body = metrics_from(s.port, addr, token=red)
        check("a team token does not open /metrics off loopback",
              st == 401 and b"preflight_" not in body, st)
    finally:
        s.stop()
    s = Server(d, "--auth", "token", "--listen", "0.0.0.0:0",
               "--metrics-token", "m" * 32)
    try:
        st, _ = metrics_from(s.port, addr)
        check("with --metrics-token: off loopback needs it (401)",
              st == 401, st)
        st, body = metrics_from(s.port, addr, token="m" * 32)
        check("with --metrics-token: off loopback with it (200)",
              st == 200 and b"preflight_" in body, st)
        st, _ = metrics_from(s.port, "127.0.0.1")
        check("with --metrics-token: loopback needs it too (401)",
              st == 401, st)
    finally:
        s.stop()


# ---- 8. amplification ----------------------------------------------------

def amp_bound(n):
    """The most an answer to a request of n bytes may hold."""
    return 2 * n + (2 << 20)


def reason_config(nkeys, reason):
    """nkeys unknown keys on one line, all suppressed by one marker whose
    reason is `reason`: each suppressed finding carries the reason."""
    keys = ", ".join("z%d: 1" % i for i in range(nkeys))
    return ("{base_model: meta-llama/Llama-3.1-8B, micro_batch_size: 1, "
            "gradient_accumulation_steps: 1, learning_rate: 0.0002, "
            "datasets: [{path: a, type: alpaca}], " + keys + "}  "
            "# preflight: ignore[schema.unknown_key_dropped] " + reason +
            "\n")


def big_plugins_config(size):
    """A run five suggestions fix (8 GPUs), each adding Cut Cross Entropy
    to a plugins list of about `size` bytes."""
    head = FULL_FT.replace("micro_batch_size: 4", "micro_batch_size: 8") \
        .replace("sequence_len: 4096", "sequence_len: 8192") + "plugins:\n"
    n = (size - len(head)) // 19
    return head + "".join("  - org.p%07d.P\n" % i for i in range(n))


def amp_post(s, path, body, headers, ids, timeout=60):
    """Status and length of the answer to one POST; the id of a stored
    check (a JSON answer) is appended to ids."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=timeout)
    c.request("POST", path, body, headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status == 201 and data.startswith(b"{"):
        i = json.loads(data).get("id")  # not in SARIF, say
        if i is not None:
            ids.append(i)
    return r.status, len(data)


def test_amplification(d):
    s = Server(d, "--auth", "token",
               env={"PREFLIGHT_CI_SECRET": security.SECRET})
    tok = s.token("red")
    ids = []
    yaml_h = {"Content-Type": "application/yaml",
              "Authorization": "Bearer " + tok}
    cases = [("a 100 KB suppression reason on 1,100 findings",
              reason_config(1100, "r" * 100000).encode(), "gpus=8"),
             ("a 900 KB plugins list five suggestions repeat",
              big_plugins_config(900000).encode(), "gpus=8"),
             ("450 unknown keys of 1,000 tabs (each escaped in JSON)",
              (FULL_FT + "".join('"%s%d": 1\n' % ("\t" * 1000, i)
                                 for i in range(450))).encode(), "gpus=8")]
    for what, cfg, q in cases:
        for path in ("/v1/checks?dry_run=true&", "/v1/checks?",
                     "/v1/estimate?"):
            st, n = amp_post(s, path + q, cfg, yaml_h, ids)
            check("%s (%d KB): POST %s -> %d, %d KB (at most %d KB)" % (
                  what, len(cfg) >> 10, path.rstrip("?&"), st, n >> 10,
                  amp_bound(len(cfg)) >> 10), st in (200, 201) and
                  n <= amp_bound(len(cfg)), (st, n))
        raw = json.dumps({"config": cfg.decode(), "source": {
            "repo": "org/ml", "path": "a.yaml"}, "context": {
            "world_size": 8}}).encode()
        for fmt in ("json", "sarif", "github", "gitlab"):
            h = ci_headers(security.SECRET, raw, "format=" + fmt)
            h["Content-Type"] = "application/json"
            st, n = amp_post(s, "/v1/ci/checks?format=" + fmt, raw, h,
                             ids)
            check("... POST /v1/ci/checks?format=%s -> %d, %d KB (at most "
                  "%d KB)" % (fmt, st, n >> 10, amp_bound(len(raw)) >> 10),
                  st in (200, 201) and n <= amp_bound(len(raw)), (st, n))
    # The stored checks read back are as small (the CI ones are the CI
    # team's: an admin reads them).
    tok = s.token("ops", admin=True)
    sizes = []
    for i in ids:
        c = s.conn(60)
        c.request("GET", "/v1/checks/" + i,
                  headers={"Authorization": "Bearer " + tok})
        sizes.append(len(c.getresponse().read()))
        c.close()
    check("... the %d stored checks read back at most 3 MiB each (%s KB)"
          % (len(ids), [n >> 10 for n in sizes]), len(ids) >= 4 and
          max(sizes) <= 3 << 20, sizes)
    s.stop()
    # What the cuts keep: the reason (cut, marked), the CCE suggestion
    # with every plugin.
    p = subprocess.run([BIN, "check", "-", "--gpus", "8", "--format",
                        "json"], input=reason_config(50, "why " * 500),
                       capture_output=True, text=True, timeout=60)
    j = json.loads(p.stdout) if p.stdout else {}
    rs = set(f.get("reason") for f in j.get("suppressed", []))
    want = ("why " * 500).rstrip()[:240] + "..."
    check("a 2,000-byte reason is kept cut to its first 240 bytes and "
          "'...' (%s bytes)" % sorted(len(r) for r in rs), rs == {want},
          (rs, want))
    cfg = big_plugins_config(20000)
    p = subprocess.run([BIN, "check", "-", "--gpus", "8", "--format",
                        "json"], input=cfg, capture_output=True, text=True,
                       timeout=60)
    j = json.loads(p.stdout) if p.stdout else {}
    sets = [json.dumps(x["set"]) for x in j.get("suggestions", [])]
    last = cfg.rstrip("\n").rsplit("- ", 1)[1]
    full = [x for x in sets if "CutCrossEntropyPlugin" in x and last in x]
    check("... a 20 KB plugins list: %d suggestions, one with Cut Cross "
          "Entropy and every plugin (%d)" % (len(sets), len(full)),
          len(sets) >= 2 and len(full) == 1, sets[:2])


# ---- 9. one team holding every request thread ---------------------------

def expensive_config():
    """About 1 MB that costs the most per byte we know: a plugins list in
    a run that needs suggestions (~150 ms a check on the release build)."""
    cfg = FULL_FT + "plugins:\n" + "".join("  - p%d\n" % i
                                          for i in range(100000))
    cfg = cfg[:1000000]
    return cfg[:cfg.rindex("\n") + 1].encode()


def post_as(s, tok, body, source, path="/v1/checks?dry_run=true&gpus=1"):
    """POST body as tok's team from address source: (status or "reset",
    Retry-After, the answer)."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120,
                                   source_address=(source, 0))
    try:
        c.request("POST", path, body, {"Content-Type": "application/yaml",
                                       "Authorization": "Bearer " + tok})
        r = c.getresponse()
        return r.status, r.getheader("Retry-After"), r.read()
    except OSError:
        return "reset", None, b""   # refused before the body was sent
    finally:
        c.close()


def test_team_at_once(d):
    """A team's requests past --quota-at-once wait their turn (64 at
    most, then 429): 100 of one team at once, one served at a time."""
    s = Server(d, "--auth", "token", "--quota-at-once", "1")
    red, blue = s.token("red"), s.token("blue")
    cfg = expensive_config()[:100000]
    cfg = cfg[:cfg.rindex(b"\n") + 1]
    got = []

    def one(i):
        st, retry, body = post_as(s, red, cfg, "127.0.3.%d" % (1 + i % 4))
        got.append((st, retry, b"too-many-at-once" in body))
    ts = [threading.Thread(target=one, args=(i,)) for i in range(100)]
    for t in ts:
        t.start()
    blue_st = []
    for _ in range(3):
        st, _, _ = s.request("POST", "/v1/checks?dry_run=true", CFG,
                             {"Content-Type": "application/yaml"}, blue,
                             timeout=60)
        blue_st.append(st)
    for t in ts:
        t.join()
    rc = s.stop()
    ok = sum(1 for x in got if x[0] == 200)
    busy = [x for x in got if x[0] == 429]
    check("100 checks of one team at once, one served at a time: %d "
          "answered 200 in turn, %d refused 429 (the team has 64 waiting)"
          % (ok, len(busy)), ok >= 40 and busy and ok + len(busy) == 100
          and all(x[1] == "1" and x[2] for x in busy), got)
    check("... another team is served meanwhile (%s); SIGTERM exits 0 "
          "(%s)" % (blue_st, rc), blue_st == [200] * 3 and rc == 0,
          (blue_st, rc))
    # Under a flood: 48 connections of red from 4 addresses, each sending
    # ~1 MB checks back to back; blue's small checks are timed.
    s = Server(d, "--auth", "token")
    red, blue = s.token("red"), s.token("blue")
    cfg = expensive_config()
    stop = threading.Event()
    codes = {}

    def flood(i):
        while not stop.is_set():
            st = post_as(s, red, cfg, "127.0.4.%d" % (1 + i % 4))[0]
            codes[st] = codes.get(st, 0) + 1
    ts = [threading.Thread(target=flood, args=(i,)) for i in range(48)]
    for t in ts:
        t.start()
    time.sleep(1)
    lat = []
    t0 = time.time()
    while time.time() - t0 < 6:
        t1 = time.time()
        st, _, _ = s.request("POST", "/v1/checks?dry_run=true", CFG,
                             {"Content-Type": "application/yaml"}, blue,
                             timeout=30)
        lat.append((time.time() - t1, st))
        time.sleep(0.1)
    stop.set()
    for t in ts:
        t.join()
    s.stop()
    worst = max(x[0] for x in lat)
    check("48 connections of one team flooding ~1 MB checks: it is "
          "answered (%s; 413 under ARENA_DEBUG), another team's %d checks "
          "all answered 200" % (codes, len(lat)),
          sum(v for k, v in codes.items() if k != "reset") > 0 and
          all(x[1] == 200 for x in lat), (codes, lat))
    mean = sum(x[0] for x in lat) / len(lat)
    over = sum(1 for x in lat if x[0] >= 1.0)
    if "/san/" not in BIN:
        # (One slow answer of ~40 is this shared machine's noise.)
        check("... in %.3f s on average (< 0.25), %d of them over a second "
              "(at most 1; the slowest %.2f s)" % (mean, over, worst),
              mean < 0.25 and over <= 1, lat)


# ---- 10. answers nobody reads ------------------------------------------

def test_unread_answers(d):
    """Each answer is held until its client reads it: one client with 600
    connections, each asking for a 2 MB stored check and reading nothing,
    made the daemon build 2,400 of them (the server 10 s+ behind) and hold
    them (329 MiB for 300 connections)."""
    import socket
    s = Server(d, "--auth", "token", "--max-connections", "2000")
    red = s.token("red")
    cfg = FULL_FT + "".join('"%s%d": 1\n' % ("\t" * 1000, i)
                            for i in range(930))
    st, _, j = s.request("POST", "/v1/checks?gpus=8", cfg,
                         {"Content-Type": "application/yaml"}, red,
                         timeout=60)
    check("a check whose report is ~2 MB is stored (%d)" % st, st == 201,
          st)
    if st != 201:
        s.stop()
        return
    req = ("GET /v1/checks/%s HTTP/1.1\r\nHost: localhost\r\n"
           "Authorization: Bearer %s\r\n\r\n" % (j["id"], red)).encode()
    before = rss_kib(s.proc.pid)
    socks = []
    for i in range(600):
        k = socket.socket()
        k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            k.bind(("127.0.%d.%d" % (5 + i // 60, 1 + i % 60), 0))
            k.connect(("127.0.0.1", s.port))
            k.sendall(req * 4)
        except OSError:
            pass
        socks.append(k)
    time.sleep(3)
    grew = (rss_kib(s.proc.pid) - before) / 1024
    t0 = time.time()
    try:
        st, _, _ = s.request("GET", "/healthz", timeout=10)
    except OSError:
        st = None
    took = time.time() - t0
    for k in socks:
        k.close()
    s.stop()
    refused = s.log_text().count('"status":429')
    check("600 connections asking for a 2 MB check, reading nothing: the "
          "team is refused once its unread answers reach a quarter of "
          "--body-memory (%d refused), /healthz answers in %.2f s" %
          (refused, took), st == 200 and took < 5 and refused > 0,
          (st, took, refused))
    if "/san/" not in BIN:
        check("... and the daemon grew %.0f MiB (< 256, the "
              "--body-memory figure)" % grew, grew < 256, grew)
    # One team's 300 unfinished 1 MiB uploads (6 addresses) held the
    # whole --body-memory: every other team's body was a 503.
    s = Server(d, "--auth", "token", "--max-connections", "2000")
    red, blue = s.token("red"), s.token("blue")
    socks = []
    for i in range(300):
        k = socket.socket()
        try:
            k.bind(("127.0.%d.%d" % (30 + i // 50, 1 + i % 50), 0))
            k.connect(("127.0.0.1", s.port))
            k.sendall(b"POST /v1/checks?dry_run=true HTTP/1.1\r\nHost: "
                      b"localhost\r\nAuthorization: Bearer " +
                      red.encode() + b"\r\nContent-Type: application/yaml"
                      b"\r\nContent-Length: 1048576\r\n\r\n" +
                      b"#" * 900000)
        except OSError:
            pass
        socks.append(k)
    time.sleep(1)
    st, _, j = s.request("POST", "/v1/checks?dry_run=true", CFG,
                         {"Content-Type": "application/yaml"}, blue)
    for k in socks:
        k.close()
    s.stop()
    check("one team sending 300 bodies of 1 MiB and never finishing: "
          "another team's check is answered (%d)" % st, st == 200, (st, j))


# ---- 11. HEAD answers --------------------------------------------------

def test_head_framing(d):
    s = Server(d, "--auth", "token", "--connection-timeout", "3")
    red = s.token("red")
    st, _, j = s.request("POST", "/v1/checks?name=a.yaml", CFG,
                         {"Content-Type": "application/yaml"}, red)
    auth = b"Authorization: Bearer " + red.encode() + b"\r\n"
    for path in ("/healthz", "/v1/checks", "/v1/checks/" + j["id"],
                 "/v1/configs/a.yaml/checks", "/v1/rules", "/",
                 "/ui/app.js"):
        gst, _, _ = s.request("GET", path, token=red)
        _, _, buf = send_raw(
            s, b"HEAD " + path.encode() + b" HTTP/1.1\r\nHost: "
            b"localhost\r\n" + auth + b"\r\nGET /healthz HTTP/1.1"
            b"\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        head, _, rest = buf.partition(b"\r\n\r\n")
        hst = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.") \
            else None
        check("HEAD %s -> %s as GET (%d); what follows its head is nothing "
              "or the next answer (%r)" % (path, hst, gst, rest[:12]),
              hst == gst and (rest == b"" or rest.startswith(b"HTTP/1.1 ")),
              buf[:400])
    s.stop()


# ---- 12. the CI team's budget spent by anyone ----------------------------

def test_ci_quota_unsigned(d):
    s = Server(d, "--auth", "token", "--quota-checks-per-minute", "100",
               env={"PREFLIGHT_CI_SECRET": security.SECRET})
    bad = {"Content-Type": "application/json", "X-Preflight-Timestamp": "1",
           "X-Preflight-Delivery": "x", "X-Preflight-Signature": "sha256=00"}
    codes = {}
    for i in range(150):
        st, _, _ = s.request("POST", "/v1/ci/checks", b"{}", bad,
                             source="127.0.9.%d" % (1 + i % 10))
        codes[st] = codes.get(st, 0) + 1
    raw = json.dumps({"config": CFG, "source": {"repo": "org/ml",
                      "path": "a.yaml"}}).encode()

    def signed():
        h = ci_headers(security.SECRET, raw, "")
        h["Content-Type"] = "application/json"
        return s.request("POST", "/v1/ci/checks", raw, h)
    st, _, j = signed()
    check("150 unsigned CI posts from 10 addresses (%s), then a signed "
          "delivery -> 201 (got %d)" % (codes, st), st == 201 and
          set(codes) == {401}, (codes, st, j))
    # Unsigned bodies, never finished, from 10 addresses: more than the
    # quarter of --body-memory one team may hold (server/limits.h).
    import socket
    socks = []
    for i in range(100):
        k = socket.socket()
        try:
            k.bind(("127.0.10.%d" % (1 + i % 10), 0))
            k.connect(("127.0.0.1", s.port))
            k.sendall(b"POST /v1/ci/checks HTTP/1.1\r\nHost: localhost\r\n"
                      b"Content-Type: application/json\r\nContent-Length: "
                      b"1048576\r\n\r\n" + b" " * 900000)
        except OSError:
            pass
        socks.append(k)
    time.sleep(1)
    st, _, j = signed()
    for k in socks:
        k.close()
    check("... 100 unsigned 1 MiB CI bodies held unfinished: a signed "
          "delivery's body is still taken (%d)" % st, st == 201, (st, j))
    sts = [signed()[0] for _ in range(110)]
    check("... signed deliveries still spend the CI team's 100 a minute "
          "(%d stored, then %d 429)" % (sts.count(201), sts.count(429)),
          sts[:98] == [201] * 98 and 429 in sts, sts)
    s.stop()


# ---- 13. YAML directives ------------------------------------------------

WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def tag_handle(i):
    """A distinct %TAG handle for each i (three word characters)."""
    return "!%s%s%s!" % (WORD[i % 64], WORD[i // 64 % 64], WORD[i // 4096])


def test_yaml_directives(d):
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    n = 78000
    tags = "".join("%%TAG %s t\n" % tag_handle(i) for i in range(n))
    plain = "# xxxxxxxxxx\n" * n
    took = {}
    res = {}
    for name, head in (("comments", plain), ("directives", tags)):
        t0 = time.time()
        res[name] = s.request("POST", "/v1/checks?dry_run=true&gpus=1",
                              head + "---\n" + CFG,
                              {"Content-Type": "application/yaml"}, tok,
                              timeout=120)
        took[name] = time.time() - t0
    st, _, j = res["directives"]
    check("%d %%TAG directives (%d KB): refused (%d) in at most 10x the "
          "time of as many comment lines (%.3f s vs %.3f s)" % (
              n, len(tags) >> 10, st, took["directives"], took["comments"]),
          st == 413 and "directives" in (j or {}).get("detail", "") and
          took["directives"] < 10 * took["comments"] + 0.1,
          (st, j, res["comments"][0]))
    # A few directives, and lines starting with '%' inside a quoted
    # scalar (no directives at all), are read as before.
    few = "%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\n" + CFG
    quoted = CFG + 'wandb_notes: "a\n' + "%d percent\n" * 500 + 'b"\n'
    for name, cfg in (("two directives", few), ("'%' lines in a quoted "
                      "scalar", quoted)):
        st, _, j = s.request("POST", "/v1/checks?dry_run=true&gpus=1", cfg,
                             {"Content-Type": "application/yaml"}, tok)
        check("... %s: checked (%d)" % (name, st), st == 200, j)
    s.stop()


# ---- 14. many '#' on one line --------------------------------------------

def test_hash_line(d):
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    n = 1000000
    took = {}
    res = {}
    for name, tail in (("one comment of letters", "# " + "x" * n),
                       ("one comment of '#'", "#" * n),
                       ("a quoted value of '#'", "wandb_notes: '%s'" %
                        ("#" * n))):
        t0 = time.time()
        res[name] = s.request("POST", "/v1/checks?dry_run=true&gpus=1",
                              CFG + tail + "\n",
                              {"Content-Type": "application/yaml"}, tok,
                              timeout=300)
        took[name] = time.time() - t0
    base = took["one comment of letters"]
    for name in ("one comment of '#'", "a quoted value of '#'"):
        check("%s (1 MB): checked (%d) in at most 10x the time of a comment "
              "of letters (%.3f s vs %.3f s)" % (name, res[name][0],
                                                  took[name], base),
              res[name][0] == 200 and took[name] < 10 * base + 0.1,
              res[name][2] if res[name][0] != 200 else "")
    # Lines are still counted right: a marker after lines of '#' applies
    # to the finding on its own line.
    cfg = ("#" * 1000 + " # #\n") * 3 + CFG + \
        "foo: 1 # preflight: ignore[schema.unknown_key_dropped] tested\n"
    st, _, j = s.request("POST", "/v1/checks?dry_run=true&gpus=1", cfg,
                         {"Content-Type": "application/yaml"}, tok)
    sup = [(f["rule"], f["line"]) for f in (j or {}).get("suppressed", [])]
    check("... a marker after such lines suppresses the finding of its "
          "line (%s)" % sup, st == 200 and
          sup == [("schema.unknown_key_dropped", 13)], (st, j))
    s.stop()


# ---- 15. methods that are not tokens --------------------------------------

def test_bad_methods(d):
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    methods = [b"G\xffT", b"GET\x01", b"P\xc3\xa9ST", b"G\x7fT", b"GE(T"]
    got = []
    for i, m in enumerate(methods):
        k = s.raw()
        k.sendall(m + b" /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
                  b"X-Request-Id: badmethod-%d\r\nAuthorization: Bearer "
                  % i + tok.encode() + b"\r\nConnection: close\r\n\r\n")
        got.append(security.read_status(k)[0])
        k.close()
    st, _, _ = s.request("GET", "/v1/checks", token=tok)
    check("methods that are not tokens (%s): 400 each, never 500 (%s)" %
          (b", ".join(methods), got), got == [400] * len(methods), got)
    logged = {}
    for line in s.log_text().splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if str(j.get("request_id", "")).startswith("badmethod-"):
            logged[j["request_id"]] = (j.get("status"), j.get("method"))
    want = dict(("badmethod-%d" % i, (400, "-"))
                for i in range(len(methods)))
    check("... each has its access-log line (status 400, method '-': no "
          "bytes of it in the log) and the server still answers (%d)" % st,
          logged == want and st == 200, logged)
    s.stop()


# ---- 16. problems that quote the request -------------------------------

def test_problem_utf8(d):
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    cases = []
    for ct in (b"\xff\xfe", b"application/\xc3", "application/" +
               "\u00e9" * 60, "x" + "\u00e9" * 60):
        _, _, buf = send_raw(
            s, b"POST /v1/checks?gpus=1 HTTP/1.1\r\nHost: localhost\r\n"
            b"Authorization: Bearer " + tok.encode() + b"\r\n"
            b"Content-Type: " + (ct if isinstance(ct, bytes) else
                                 ct.encode()) +
            b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
            % len(CFG) + CFG.encode())
        head, _, body = buf.partition(b"\r\n\r\n")
        try:
            j = json.loads(body)
        except ValueError:
            j = None
        cases.append(("Content-Type %r" % ct[:16], int(head.split(b" ")[1]),
                      j, 415))
    for pad in range(4):
        st, _, j = s.request("POST", "/v1/checks?gpus=1&gpu=" + "x" * pad +
                             "%C3%A9" * 600, CFG,
                             {"Content-Type": "application/yaml"}, tok)
        cases.append(("gpu=%s\u00e9 x 600" % ("x" * pad), st, j, 422))
    bad = [(n, st, want) for n, st, j, want in cases
           if st != want or not isinstance(j, dict) or
           j.get("status") != want]
    check("problems that quote request bytes that are not UTF-8, or cut "
          "inside a character: their 4xx, never a 500 (%d cases)" %
          len(cases), bad == [], bad)
    s.stop()


# ---- 17. Idempotency-Key races as database failures ----------------------

def test_idem_race_errors(d):
    s = Server(d, "--auth", "token", "--quota-at-once", "0")
    tok = s.token("red")
    sts = []

    def race(i):
        for k in range(20):
            st, _, _ = s.request("POST", "/v1/checks?gpus=1&name=i.yaml", CFG,
                                 {"Content-Type": "application/yaml",
                                  "Idempotency-Key": "race-%d" % k}, tok)
            sts.append(st)
    ts = [threading.Thread(target=race, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c = s.conn()
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    errs = [ln for ln in text.splitlines()
            if ln.startswith("preflight_db_errors_total ")]
    logged = [ln for ln in s.log_text().splitlines()
              if '"level":"error"' in ln]
    check("20 keys each sent from 6 connections at once: 20 stored, the "
          "rest answered with them (%d 201, %d 200), no database error "
          "counted (%s) or logged (%d lines)" % (
              sts.count(201), sts.count(200), errs, len(logged)),
          sts.count(201) == 20 and sts.count(200) == 100 and
          errs == ["preflight_db_errors_total 0"] and logged == [],
          logged[:2])
    s.stop()


# ---- 18. the bytes quota through /v1/diagnose -----------------------------

def test_diagnose_bytes_quota(d):
    s = Server(d, "--auth", "token", "--quota-bytes-per-day", "2MiB")
    tok = s.token("red")
    pad = CFG + "".join("# padding line %06d %s\n" % (i, "x" * 40)
                        for i in range(8000))
    sts = []
    for i in range(8):
        st, _, j = s.request("POST", "/v1/diagnose", json.dumps({
            "log": "torch.OutOfMemoryError: CUDA out of memory.",
            "config": pad, "name": "q%d.yaml" % i}),
            {"Content-Type": "application/json"}, tok)
        sts.append(st)
    _, _, j = s.request("GET", "/v1/checks?limit=50", token=tok)
    stored = len((j or {}).get("items", []))
    check("8 diagnoses with a %d KB config under a 2 MiB a day quota: "
          "charged like checks, 429 once it is spent (%s; %d checks "
          "stored)" % (len(pad) >> 10, sts, stored),
          sts[:4] == [200] * 4 and sts[-1] == 429 and stored < 8, sts)
    s.stop()


# ---- 20. a UTF-8 byte order mark ----------------------------------------

def test_utf8_bom(d):
    import hashlib
    s = Server(d, "--auth", "token")
    tok = s.token("red")
    raw = b"\xef\xbb\xbf" + CFG.encode()
    st, _, j = s.request("POST", "/v1/checks?dry_run=true&gpus=1", raw,
                         {"Content-Type": "application/yaml"}, tok)
    _, _, plain = s.request("POST", "/v1/checks?dry_run=true&gpus=1", CFG,
                            {"Content-Type": "application/yaml"}, tok)
    s.stop()
    j = j or {}
    check("a config that starts with a UTF-8 BOM is checked like the same "
          "config without (%d, verdict %s), its sha256 of the bytes sent" %
          (st, j.get("verdict")), st == 200 and
          j.get("verdict") == (plain or {}).get("verdict") and
          j.get("config_sha256") == hashlib.sha256(raw).hexdigest(),
          j if st != 200 else j.get("config_sha256"))
    path = os.path.join(d, "bom.yaml")
    with open(path, "wb") as f:
        f.write(raw + b"foo: 1\n")
    p = subprocess.run([BIN, "check", path, "--gpus", "1"],
                       capture_output=True, text=True, timeout=30)
    check("... and by the CLI, with its findings on their lines (exit %d)"
          % p.returncode, p.returncode == 0 and
          "bom.yaml:10:1: warning: unknown key 'foo'" in p.stdout,
          p.stdout[:300] + p.stderr[:300])


def main():
    d = tempfile.mkdtemp(prefix="preflight-redteam-")
    cases = [test_slowloris_many_addresses, test_plugins_suggestions,
             test_fsdp_config_keys, test_suppression_markers,
             test_text_injection, test_github_format_controls,
             test_duplicate_headers,
             test_refused_requests_freed, test_non_utf8_parameters,
             test_metrics_off_loopback, test_amplification,
             test_team_at_once, test_unread_answers, test_head_framing,
             test_ci_quota_unsigned, test_yaml_directives,
             test_hash_line, test_bad_methods, test_problem_utf8,
             test_idem_race_errors, test_diagnose_bytes_quota,
             test_utf8_bom]
    only = os.environ.get("REDTEAM_ONLY")
    try:
        for case in cases:
            if only and only not in case.__name__:
                continue
            print("== %s" % case.__name__)
            case(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
