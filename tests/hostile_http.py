#!/usr/bin/env python3
"""Hostile clients and hostile input over HTTP (issue #7 items 5 and 6).

Against one `preflight serve` (--max-body 64KiB, --connection-timeout 5):
500 slowloris connections while a normal client keeps getting answers
within its 2 s timeout; a body far longer than its Content-Length; a
declared 1 GiB body abandoned half-way; chunked bodies over the limit;
thousands of headers; invalid HTTP; a client that pipelines requests and
never reads the answers.  Then every hostile YAML input of the
foundation's table (tests/test_hostile.c) sent as raw YAML and as the JSON
`config` string, and invalid JSON (depth 100,000, huge numbers, duplicate
keys, bad escapes, invalid UTF-8): each gets a 4xx problem+json within a
second.  After every case the server answers /healthz within 2 s and its
RSS stays under 64 MiB (PREFLIGHT_RSS_LIMIT_MIB).

Usage: tests/hostile_http.py PREFLIGHT_BIN SHARED_DIR
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import http.client
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, rss_kib, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
# 64 MiB for a release build; a sanitizer build's shadow memory and
# quarantine need more (the Makefile passes PREFLIGHT_RSS_LIMIT_MIB).
RSS_LIMIT_KIB = int(os.environ.get("PREFLIGHT_RSS_LIMIT_MIB", "64")) * 1024


class Srv:
    def __init__(self, args=("--max-body", "64KiB")):
        self.dir = tempfile.mkdtemp(prefix="preflight-hostile-")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc, self.port = serve(
            BIN, os.path.join(self.dir, "p.db"), self.log,
            list(args) + ["--connection-timeout", "5"])

    def request(self, method, path, body=None, headers=None, timeout=2.0):
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), \
            data

    def healthy(self, what):
        t0 = time.time()
        try:
            st, _, _ = self.request("GET", "/healthz", timeout=2)
        except OSError as e:
            st = str(e)
        rss = rss_kib(self.proc.pid)
        check("%s: healthz within 2 s, RSS %.1f MiB" % (what, rss / 1024),
              st == 200 and time.time() - t0 < 2 and rss < RSS_LIMIT_KIB and
              self.proc.poll() is None, (st, rss))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except Exception:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def raw(self, source="127.0.0.1"):
        return socket.create_connection(("127.0.0.1", self.port), 5,
                                        source_address=(source, 0))


def post_head(s, framing, query=b""):
    """A raw connection that has sent the head of a YAML POST /v1/checks
    whose body is framed by the header line framing."""
    k = s.raw()
    k.sendall(b"POST /v1/checks%s HTTP/1.1\r\nHost: localhost\r\n"
              b"Content-Type: application/yaml\r\n%s\r\n\r\n"
              % (query, framing))
    return k


def read_status(sock, timeout=5):
    """The status of the first response on sock, or None when closed."""
    sock.settimeout(timeout)
    buf = b""
    try:
        while b"\r\n" not in buf:
            d = sock.recv(4096)
            if not d:
                break
            buf += d
    except OSError:
        pass
    if not buf.startswith(b"HTTP/1."):
        return None
    return int(buf.split(b" ", 2)[1])


def slowloris(s):
    """From ten other addresses (the per-address limit would otherwise
    refuse all but 64 of them at once), so the global limit is tested."""
    socks = []
    for i in range(500):
        try:
            k = s.raw(source="127.0.0.%d" % (2 + i % 10))
            k.sendall(b"POST /v1/checks HTTP/1.1\r\nHost: localhost\r\n")
            socks.append(k)
        except OSError:
            pass
    stop = threading.Event()

    def drip():
        i = 0
        while not stop.is_set():
            for k in socks:
                try:
                    k.sendall(b"X-%d: y\r\n" % i)
                except OSError:
                    pass
            i += 1
            stop.wait(1)

    t = threading.Thread(target=drip)
    t.start()
    worst, fails = 0.0, 0
    t_end = time.time() + 8
    n = 0
    while time.time() < t_end:
        t0 = time.time()
        try:
            st, _, _ = s.request("POST", "/v1/checks?dry_run=true",
                                 b"base_model: x/y\n",
                                 {"Content-Type": "application/yaml"},
                                 timeout=2)
            if st != 200:
                fails += 1
        except OSError:
            fails += 1
        worst = max(worst, time.time() - t0)
        n += 1
        time.sleep(0.1)
    stop.set()
    t.join()
    check("500 slowloris connections: %d normal requests answered, worst "
          "%.0f ms" % (n, worst * 1000), fails == 0 and worst < 2, fails)
    for k in socks:
        k.close()
    s.healthy("after slowloris")


def long_body(s):
    """Content-Length 10, then up to 1 GiB more: the extra bytes are a bad
    next request; the server closes, it does not read them all."""
    k = post_head(s, b"Content-Length: 10", b"?dry_run=true")
    chunk = b"a: b\n" * 13108  # 64 KiB
    sent = 0
    t0 = time.time()
    try:
        while sent < (1 << 30) and time.time() - t0 < 20:
            k.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    k.close()
    check("1 GiB after Content-Length 10: the server cut it off after "
          "%.1f MiB in %.1f s" % (sent / 1048576, time.time() - t0),
          sent < (1 << 30), sent)
    s.healthy("after the long body")


def abandoned_gib(s):
    k = post_head(s, b"Content-Length: 1073741824")
    chunk = b"x" * 65536
    try:
        for _ in range(512):          # 32 MiB of the declared 1 GiB
            k.sendall(chunk)
    except OSError:
        pass
    k.close()
    s.healthy("after a declared 1 GiB body abandoned at 32 MiB")
    k = post_head(s, b"Content-Length: 1073741824")
    st = read_status(k, 3)
    k.close()
    check("declared 1 GiB: 413 or a close, never a buffer", st in (None, 413),
          st)


def chunked_over(s):
    k = post_head(s, b"Transfer-Encoding: chunked")
    piece = b"a" * 8192
    for _ in range(200):              # 1.6 MiB against a 64 KiB limit
        k.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
    k.sendall(b"0\r\n\r\n")
    st = read_status(k)
    k.close()
    check("chunked body of 1.6 MiB over a 64 KiB limit: 413", st == 413, st)
    s.healthy("after chunked over the limit")


def many_headers(s):
    k = s.raw()
    head = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + b"".join(
        b"X-H%d: %s\r\n" % (i, b"v" * 20) for i in range(5000)) + b"\r\n"
    try:
        k.sendall(head)
    except OSError:
        pass
    st = read_status(k)
    k.close()
    check("5,000 headers: refused (4xx) or closed", st is None or
          400 <= st < 500, st)
    s.healthy("after 5,000 headers")


def invalid_http(s):
    cases = [b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
             b"\x00\x01\x02\xff\xfe\r\n\r\n",
             b"GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n",
             b"POST /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
             b"Content-Length: -5\r\n\r\n",
             b"POST /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
             b"Content-Length: 5\r\nContent-Length: 7\r\n\r\nabcde",
             b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n"]
    # (An HTTP/1.1 request without Host is served: libmicrohttpd's
    # tolerant default, which its manual recommends in production.)
    bad = []
    for c in cases:
        k = s.raw()
        try:
            k.sendall(c)
        except OSError:
            pass
        st = read_status(k)
        k.close()
        # 505 is the answer to an unknown HTTP version.
        if st is not None and not 400 <= st < 500 and st != 505:
            bad.append((c[:30], st))
    check("invalid HTTP: 4xx (505 for a bad version) or a close",
          not bad, bad)
    s.healthy("after invalid HTTP")


def never_reads(s):
    k = s.raw()
    k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    req = b"GET /v1/catalog/models HTTP/1.1\r\nHost: localhost\r\n\r\n"
    sent = 0
    k.settimeout(3)
    try:
        for _ in range(20000):
            k.sendall(req)
            sent += 1
    except OSError:
        pass
    s.healthy("with a client that pipelines %d requests and reads nothing"
              % sent)
    k.close()


HOSTILE_YAML = {
    "billion_laughs": "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        "%s: &%s [%s]\n" % (c, c, ", ".join(["*" + p] * 10))
        for p, c in zip("abcdefgh", "bcdefghi")),
    "deep_flow": "a: " + "[" * 100000 + "]" * 100000 + "\n",
    "deep_block": "".join("  " * i + "k%d:\n" % i for i in range(700)),
    "bad_utf8": b"base_model: caf\xe9\n",
    "nul": b"base_model: a\x00b\n",
    "two_docs": "a: 1\n---\nb: 2\n",
    "scalar_root": "just a string\n",
    "unknown_alias": "lr: *nowhere\n",
    "recursive_alias": "a: &loop\n  b: *loop\n",
    "huge_key": "? " + "k" * 200000 + "\n: v\n",
    "many_keys": "".join("k%d: %d\n" % (i, i) for i in range(60000)),
    "tab_indent": "a:\n\tb: 1\n",
}


def input_hostility(s):
    slow, wrong = [], []
    for name, text in HOSTILE_YAML.items():
        raw = text if isinstance(text, bytes) else text.encode()
        for kind in ("yaml", "json"):
            if kind == "yaml":
                body, ctype = raw, "application/yaml"
            elif name == "bad_utf8":
                continue    # a JSON string is valid Unicode (see below)
            else:
                body = json.dumps({"config": raw.decode()}).encode()
                ctype = "application/json"
            t0 = time.time()
            st, h, data = s.request("POST", "/v1/checks", body,
                                    {"Content-Type": ctype}, timeout=5)
            dt = time.time() - t0
            if dt > 1:
                slow.append((name, kind, dt))
            if not (400 <= st < 500 and
                    h.get("content-type") == "application/problem+json"):
                wrong.append((name, kind, st))
    check("hostile YAML, raw and as JSON config: 4xx problem+json",
          not wrong, wrong)
    check("hostile YAML, raw and as JSON config: each within 1 s",
          not slow, slow)
    bad_json = {
        "depth_100000": b"[" * 100000 + b"]" * 100000,
        "depth_obj": b'{"config": ' + b'{"a": ' * 100000 + b"1" +
        b"}" * 100001,
        "huge_number": b'{"config": "a: 1", "context": {"gpus": '
        b"1" + b"0" * 5000 + b"}}",
        "float_gpus": b'{"config": "a: 1", "context": {"gpus": 1e400}}',
        "dup_keys": b'{"config": "a: 1", "config": "b: 2"}',
        "bad_escape": b'{"config": "\\ud800"}',
        "bad_escape2": b'{"config": "\\x41"}',
        "invalid_utf8": b'{"config": "caf\xe9"}',
        "nul_escape": b'{"config": "a: \\u0000"}',
        "not_object": b'"just a string"',
        "truncated": b'{"config": "a: 1"',
        "empty": b"",
    }
    slow, wrong = [], []
    for name, body in bad_json.items():
        t0 = time.time()
        st, h, data = s.request("POST", "/v1/checks", body,
                                {"Content-Type": "application/json"},
                                timeout=5)
        dt = time.time() - t0
        if dt > 1:
            slow.append((name, dt))
        if not (400 <= st < 500 and
                h.get("content-type") == "application/problem+json"):
            wrong.append((name, st, data[:100]))
    check("invalid JSON bodies: 4xx problem+json", not wrong, wrong)
    check("invalid JSON bodies: each within 1 s", not slow, slow)
    s.healthy("after hostile input")


def main():
    s = Srv()
    try:
        for case in (slowloris, long_body, abandoned_gib, chunked_over,
                     many_headers, invalid_http, never_reads):
            case(s)
    finally:
        s.stop()
    # The hostile inputs are up to 1 MiB: the default --max-body, so the
    # document limits, not the body limit, refuse them.
    s = Srv(args=())
    try:
        input_hostility(s)
    finally:
        s.stop()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
