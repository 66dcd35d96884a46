#!/usr/bin/env python3
"""HTTP integration tests: a real `preflight serve` on an ephemeral port.

Covers every route, both body types, pagination across pages while checks
are being inserted, history and diff, every error status, X-Request-Id,
CORS, and SIGTERM draining (an in-flight request completes).

Usage: tests/http_integration.py PREFLIGHT_BIN SHARED_DIR
Prints 'N passed, N failed'; exits non-zero on any failure.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, serve, summary  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
EXAMPLE = os.path.join(SHARED, "corpus", "axolotl", "examples", "llama-3",
                       "qlora-fsdp-70b.yaml")
class Server:
    def __init__(self, *args, db=None):
        self.dir = tempfile.mkdtemp(prefix="preflight-it-")
        self.db = db or os.path.join(self.dir, "p.db")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc, self.port = serve(BIN, self.db, self.log, args)

    def request(self, method, path, body=None, headers=None, timeout=10):
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        if isinstance(body, str):
            body = body.encode()
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            j = json.loads(data) if data else None
        except ValueError:
            j = None
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), \
            j, data

    def post_yaml(self, yaml, query=""):
        return self.request("POST", "/v1/checks" + query, yaml,
                            {"Content-Type": "application/yaml"})

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def is_problem(status, headers, j, want):
    return (status == want and
            headers.get("content-type") == "application/problem+json" and
            isinstance(j, dict) and j.get("status") == want and
            "title" in j and "detail" in j and "type" in j)


def main():
    # Passes everywhere (info notes only); the Axolotl example warns.
    ok_yaml = ("base_model: meta-llama/Llama-3.1-8B\ndatasets:\n"
               "  - path: tatsu-lab/alpaca\n    type: alpaca\n"
               "adapter: lora\nlora_r: 16\nlora_alpha: 32\n"
               "lora_target_linear: true\nmicro_batch_size: 1\n"
               "gradient_accumulation_steps: 4\nsequence_len: 2048\n"
               "bf16: true\nlearning_rate: 0.0002\n")
    example_yaml = open(EXAMPLE).read()
    dup_yaml = ("base_model: HuggingFaceTB/SmolLM2-135M\ndatasets:\n  - path: p\n    type: alpaca\n"
                "micro_batch_size: 1\ngradient_accumulation_steps: 1\n"
                "sequence_len: 2048\nsequence_len: 4096\n"
                "learning_rate: 0.0002\n")
    s = Server("--max-body", "64KiB", "--cors-origin",
               "https://form.example")
    try:
        st, h, j, _ = s.request("GET", "/healthz")
        check("GET /healthz", st == 200 and j == {"status": "ok"})
        st, h, j, _ = s.request("GET", "/readyz")
        check("GET /readyz", st == 200 and j["status"] == "ready")

        # Both body types.
        st, h, j, _ = s.post_yaml(ok_yaml, "?gpus=8&gpu=h100&name=a.yaml")
        check("POST yaml -> 201 with Location", st == 201 and
              h.get("location") == "/v1/checks/" + j["id"], (st, j))
        first = j["id"]
        body = json.dumps({"config": dup_yaml, "context": {"gpus": 2},
                           "name": "a.yaml", "labels": {"ci": "yes"}})
        st, h, j, _ = s.request("POST", "/v1/checks", body,
                                {"Content-Type": "application/json"})
        check("POST json -> 201", st == 201 and j["verdict"] == "warn" and
              j["labels"] == {"ci": "yes"}, (st, j))
        second = j["id"]
        st, h, j, _ = s.request("GET", "/v1/checks/" + second)
        check("GET /v1/checks/{id}", st == 200 and j["id"] == second)
        st, h, j, _ = s.post_yaml(ok_yaml, "?dry_run=true")
        check("dry_run -> 200 report", st == 200 and "id" not in j)
        st, h, j, _ = s.post_yaml(example_yaml, "?gpus=8&dry_run=true")
        check("Axolotl's FSDP example: warn, no error", st == 200 and
              j["verdict"] == "warn" and not [f for f in j["findings"]
              if f["severity"] == "error"], j)

        # History and diff.
        st, h, j, _ = s.request("GET", "/v1/configs/a.yaml/checks")
        check("history", st == 200 and [i["id"] for i in j["items"]] ==
              [second, first] and j["items"][0]["previous_id"] == first and
              [f["rule"] for f in j["items"][0]["changes"]["findings_added"]
               if f["severity"] != "info"] == ["schema.duplicate_key"], j)
        st, h, j, _ = s.request(
            "GET", "/v1/checks/%s/diff?against=%s" % (second, first))
        check("diff", st == 200 and j["verdict"] == {"from": "pass",
              "to": "warn"} and j["config_changed"] is True, j)
        st, h, j, _ = s.request("GET", "/v1/stats/rules?since=2020-01-01")
        check("stats", st == 200 and [
              (i["findings"], i["by_verdict"]["warn"]["checks"])
              for i in j["items"] if i["rule"] == "schema.duplicate_key"] ==
              [(1, 1)], j)
        st, h, j, _ = s.request("POST", "/v1/estimate", ok_yaml,
                                {"Content-Type": "application/yaml"})
        check("estimate", st == 200 and "estimate" in j and
              j["context"]["gpus"] == 1, j)
        for path in ("/v1/rules", "/v1/rules/schema.duplicate_key",
                     "/v1/catalog/gpus", "/v1/catalog/models", "/v1/keys"):
            st, h, j, _ = s.request("GET", path)
            check("GET " + path, st == 200 and isinstance(j, dict))
        st, h, _, data = s.request("GET", "/metrics")
        text = data.decode()
        check("metrics", st == 200 and all(
            m in text for m in ("http_requests_total{",
                                "http_request_duration_seconds_bucket{",
                                "preflight_checks_total{verdict=\"warn\"}",
                                "preflight_findings_total{rule=",
                                "preflight_db_size_bytes",
                                "preflight_db_errors_total")), text[:300])

        # Pagination across 3 pages while another client inserts.
        for _ in range(6):
            s.post_yaml(ok_yaml, "?name=page.yaml")
        stop = threading.Event()

        def writer():
            while not stop.is_set():
                s.post_yaml(ok_yaml, "?name=page.yaml")
                time.sleep(0.005)
        st, h, j, _ = s.request("GET", "/v1/checks?name=page.yaml&limit=1")
        newest_at_start = j["items"][0]["id"]
        t = threading.Thread(target=writer)
        t.start()
        seen, cursor, pages = [], None, 0
        while True:
            q = "?name=page.yaml&limit=2"
            if cursor:
                q += "&cursor=" + urllib.parse.quote(cursor)
            st, h, j, _ = s.request("GET", "/v1/checks" + q)
            pages += 1
            seen += [i["id"] for i in j["items"] if i["id"] <=
                     newest_at_start]
            cursor = j["next_cursor"]
            if not cursor or pages > 50:
                break
            time.sleep(0.02)
        stop.set()
        t.join()
        check("pagination while inserting: no repeats, no gaps, 3+ pages",
              pages >= 3 and len(seen) == len(set(seen)) == 6 and
              seen == sorted(seen, reverse=True), (pages, seen))

        # Errors.
        st, h, j, _ = s.post_yaml("a: 1\n  b: 2\n")
        check("400 bad YAML with line", is_problem(st, h, j, 400) and
              j.get("line") == 2 and "column" in j, j)
        st, h, j, _ = s.request("POST", "/v1/checks", "{bad",
                                {"Content-Type": "application/json"})
        check("400 bad JSON", is_problem(st, h, j, 400), j)
        st, h, j, _ = s.post_yaml("x" * (70 * 1024))
        check("413 body over --max-body", is_problem(st, h, j, 413), st)
        st, h, j, _ = s.request("POST", "/v1/checks", "a: 1",
                                {"Content-Type": "text/plain"})
        check("415", is_problem(st, h, j, 415), j)
        st, h, j, _ = s.post_yaml("a: 1\n", "?gpus=0")
        check("422 gpus <= 0", is_problem(st, h, j, 422), j)
        st, h, j, _ = s.post_yaml("a: 1\n", "?gpu=tpu-v5")
        check("422 unknown GPU", is_problem(st, h, j, 422) and
              "h100-sxm" in j["detail"], j)
        st, h, j, _ = s.request("GET", "/v1/checks/01ARZ3NDEKTSV4RRFFQ69G5FAV")
        check("404", is_problem(st, h, j, 404), j)
        st, h, j, _ = s.request("DELETE", "/v1/checks")
        check("405 with Allow", is_problem(st, h, j, 405) and
              "POST" in h.get("allow", ""), h)
        st, h, j, _ = s.request(
            "POST", "/v1/checks", None,
            {"Content-Type": "application/yaml", "Idempotency-Key": "k1",
             "Content-Length": "0"})
        check("empty YAML -> 400", is_problem(st, h, j, 400), j)

        # Chunked body over the limit.
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(b"POST /v1/checks HTTP/1.1\r\nHost: localhost\r\n"
                  b"Content-Type: application/yaml\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"y" * 8192
        for _ in range(12):
            c.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        c.sendall(b"0\r\n\r\n")
        resp = c.recv(65536)
        c.close()
        check("413 chunked over the limit", resp.startswith(b"HTTP/1.1 413"),
              resp[:80])

        # Idempotency.
        hdr = {"Content-Type": "application/yaml", "Idempotency-Key": "gate-1"}
        a = s.request("POST", "/v1/checks?name=i", ok_yaml, hdr)
        b = s.request("POST", "/v1/checks?name=i", ok_yaml, hdr)
        cc = s.request("POST", "/v1/checks?name=i", dup_yaml, hdr)
        check("idempotent retry -> 200 same id", a[0] == 201 and
              b[0] == 200 and a[2]["id"] == b[2]["id"], (a[0], b[0]))
        check("same key, other body -> 409", is_problem(cc[0], cc[1], cc[2],
              409), cc[2])

        # Request ids and CORS.
        st, h, j, _ = s.request("GET", "/healthz",
                                headers={"X-Request-Id": "ci-run-42"})
        check("X-Request-Id echoed", h.get("x-request-id") == "ci-run-42")
        st, h, j, _ = s.request("GET", "/healthz",
                                headers={"X-Request-Id": "bad id\x01"})
        check("X-Request-Id generated when invalid",
              re.fullmatch(r"[0-9a-f]{24}", h.get("x-request-id", "")), h)
        st, h, j, _ = s.request("OPTIONS", "/v1/checks", headers={
            "Origin": "https://form.example",
            "Access-Control-Request-Method": "POST"})
        check("CORS preflight allowed", st == 204 and h.get(
            "access-control-allow-origin") == "https://form.example", h)
        st, h, j, _ = s.request("OPTIONS", "/v1/checks", headers={
            "Origin": "https://evil.example"})
        check("CORS preflight refused", st == 403 and
              "access-control-allow-origin" not in h, h)
    finally:
        s.stop()
        s.cleanup()

    # SIGTERM drains: a request in flight when the signal arrives completes.
    s = Server()
    try:
        body = ok_yaml.encode()
        c = socket.create_connection(("127.0.0.1", s.port), timeout=15)
        c.sendall(b"POST /v1/checks?name=drain HTTP/1.1\r\nHost: localhost\r\n"
                  b"Content-Type: application/yaml\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body[:100])
        time.sleep(0.3)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        refused = False
        try:
            socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
        except OSError:
            refused = True
        c.sendall(body[100:])
        resp = b""
        while b"\r\n\r\n" not in resp:
            part = c.recv(65536)
            if not part:
                break
            resp += part
        c.close()
        code = s.proc.wait(15)
        check("SIGTERM: in-flight request completes with 201",
              resp.startswith(b"HTTP/1.1 201"), resp[:100])
        check("SIGTERM: new connections refused while draining", refused)
        check("SIGTERM: exit 0", code == 0, code)
        s2 = Server(db=s.db)
        st, h, j, _ = s2.request("GET", "/v1/checks?name=drain")
        check("SIGTERM: drained check was stored", len(j["items"]) == 1, j)
        s2.stop()
    finally:
        s.stop()
        s.cleanup()

    # --policy, and SIGHUP reloads it.
    pdir = tempfile.mkdtemp(prefix="preflight-pol-")
    pol = os.path.join(pdir, "policy.yaml")
    open(pol, "w").write("max_gpus: 4\n")
    s = Server("--policy", pol)
    try:
        st, h, j, _ = s.post_yaml(ok_yaml, "?gpus=8&dry_run=true")
        check("policy applies (max_gpus)", st == 200 and "policy.max_gpus"
              in [f["rule"] for f in j["findings"]], j and j["findings"])
        open(pol, "w").write("max_gpus: 16\n")
        s.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        st, h, j, _ = s.post_yaml(ok_yaml, "?gpus=8&dry_run=true")
        check("SIGHUP reloads the policy", st == 200 and "policy.max_gpus"
              not in [f["rule"] for f in j["findings"]], j["findings"])
        open(pol, "w").write("max_gpus: [broken\n")
        s.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        st, h, j, _ = s.request("GET", "/healthz")
        st2, h, j2, _ = s.post_yaml(ok_yaml, "?gpus=32&dry_run=true")
        check("a broken policy on SIGHUP keeps the old one", st == 200 and
              "policy.max_gpus" in [f["rule"] for f in j2["findings"]], j2)
    finally:
        s.stop()
        s.cleanup()
        shutil.rmtree(pdir, ignore_errors=True)
    p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--db",
                        "/tmp/never.db", "--policy", "/nonexistent.yaml"],
                       capture_output=True, text=True, timeout=10)
    check("a bad --policy refuses to start", p.returncode == 2 and
          "policy" in p.stderr, p.stderr)

    # A model outside the catalog: context.model (config.json object or a
    # catalog id) and --hf-cache (the Hugging Face hub cache layout).
    hdir = tempfile.mkdtemp(prefix="preflight-hf-")
    llama3 = {"model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 14336, "num_attention_heads": 32,
              "num_hidden_layers": 32, "num_key_value_heads": 8,
              "tie_word_embeddings": False, "vocab_size": 128256,
              "rms_norm_eps": 1e-05}
    repo = os.path.join(hdir, "models--my-org--private-llama")
    os.makedirs(os.path.join(repo, "snapshots", "abc123"))
    os.makedirs(os.path.join(repo, "blobs"))
    os.makedirs(os.path.join(repo, "refs"))
    with open(os.path.join(repo, "blobs", "f00d"), "w") as f:
        json.dump(llama3, f)
    os.symlink("../../blobs/f00d",
               os.path.join(repo, "snapshots", "abc123", "config.json"))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write("abc123\n")
    priv = ok_yaml.replace("meta-llama/Llama-3.1-8B", "my-org/private-llama")
    s = Server("--hf-cache", hdir)
    try:
        def est(body):
            st, h, j, _ = s.request("POST", "/v1/estimate", json.dumps(body),
                                    {"Content-Type": "application/json"})
            return st, h, j

        st, h, j = est({"config": ok_yaml})
        ref = j["estimate"]
        st, h, j = est({"config": priv.replace("my-org", "other-org")})
        check("a model in neither catalog nor cache: unknown",
              st == 200 and j["estimate"]["model"]["source"] == "unknown" and
              j["estimate"]["memory"]["per_gpu_peak_gib"] is None,
              j and j.get("estimate"))
        st, h, j = est({"config": priv.replace("my-org", "other-org"),
                        "context": {"model": llama3}})
        check("context.model (config.json) gives the catalog's estimate",
              st == 200 and j["estimate"]["model"]["source"] == "context" and
              j["estimate"]["model"]["params"] == ref["model"]["params"] and
              j["estimate"]["memory"] == ref["memory"], j and j.get("estimate"))
        st, h, j = est({"config": priv.replace("my-org", "other-org"),
                        "context": {"model": "meta-llama/Llama-3.1-8B"}})
        check("context.model (a catalog id)", st == 200 and
              j["estimate"]["memory"] == ref["memory"], j)
        st, h, j, _ = s.post_yaml(priv, "?dry_run=true")
        check("--hf-cache: config.json from the hub cache layout",
              st == 200 and j["estimate"]["model"]["source"] == "hf_cache" and
              j["estimate"]["memory"] == ref["memory"], j and j.get("estimate"))
        bad = dict(llama3, num_hidden_layers="many")
        st, h, j = est({"config": priv, "context": {"model": bad}})
        check("a bad context.model is 422 naming the field",
              is_problem(st, h, j, 422) and
              "num_hidden_layers" in j["detail"], j)
        st, h, j = est({"config": priv, "context": {"model": "no/such"}})
        check("an unknown context.model id is 422", is_problem(st, h, j, 422)
              and "no/such" in j["detail"], j)
        st, h, j = est({"config": priv, "context": {"model": 7}})
        check("a context.model of the wrong type is 422",
              is_problem(st, h, j, 422), j)
        trav = priv.replace("my-org/private-llama", "../../etc/passwd")
        st, h, j, _ = s.post_yaml(trav, "?dry_run=true")
        check("a base_model path never leaves the cache",
              st == 200 and j["estimate"]["model"]["source"] == "unknown", j)
    finally:
        s.stop()
        s.cleanup()
    p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--db",
                        "/tmp/never.db", "--hf-cache", "/nonexistent"],
                       capture_output=True, text=True, timeout=10)
    check("a missing --hf-cache refuses to start", p.returncode == 2 and
          "hf-cache" in p.stderr, p.stderr)
    shutil.rmtree(hdir, ignore_errors=True)

    # Refuses to start without auth on a non-loopback address.
    p = subprocess.run([BIN, "serve", "--listen", "0.0.0.0:0", "--db",
                        "/tmp/never.db"], capture_output=True, text=True,
                       timeout=10)
    check("no auth on 0.0.0.0 refused", p.returncode != 0 and
          "not a loopback address" in p.stderr, p.stderr)

    return summary()


if __name__ == "__main__":
    sys.exit(main())
