#!/usr/bin/env python3
"""The review pages in a real browser (issue #18): headless Chromium
(Debian's, driven over the DevTools pipe by tests/ui_cdp.py) against a real
`preflight serve` on a loopback port, with checks stored from the corpus.

Each page is loaded and its content asserted from the DOM against what the
JSON API says: the checks list (rows, a filter that narrows it, paging to
the last page), a check (each finding's marker under its config line, the
memory bar's segments adding up to the peak against the capacity line, the
suggestions' YAML), a config's history (chart points, the GPU change named),
a diff (the added finding, the edited line, memory per term), try-a-config
(the live report as the config is typed, storing it, an invalid config's
problem), the rules (counts, filter).  Every page is also checked at 375 px
(no horizontal scrolling), by keyboard (focus visible, a link followed with
Enter), for labels on every control and words beside every colour.  Any
console error, uncaught exception, failed load, unexpected HTTP error or
request to another host fails the test.  Names, labels, keys and
config text written as HTML show as text.  Then --auth token: the token
prompt, a refused token, the token kept in sessionStorage only.

Screenshots of every page go to build/ui-screenshots/ (not committed).

Usage: tests/ui_browser.py PREFLIGHT_BIN SHARED_DIR [SCREENSHOT_DIR]
Prints 'N passed, N failed'; exits non-zero on any failure."""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, ci_headers, serve, summary  # noqa: E402
from ui_cdp import Browser, CdpError  # noqa: E402

BIN, SHARED = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SHOTS = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
    HERE, "..", "build", "ui-screenshots")
EXAMPLES = os.path.join(SHARED, "corpus", "axolotl", "examples")
DUP_EXAMPLE = os.path.join(HERE, "..", "docs", "examples",
                           "llama-8b-dup.yaml")
N_CORPUS = 24        # stored corpus configs: several pages at limit=10
GPUS = (8, 1, 2, 16)
CI_SECRET = "ui-browser-test-secret"
CI_SOURCE = {"repo": "org/models", "commit": "0123456789abcdef0123",
             "path": "configs/ci.yaml", "ref": "refs/pull/7/head",
             "pull_request": 7}


class Server:
    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="preflight-ui-")
        self.db = os.path.join(self.dir, "p.db")
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.args = args
        self.proc, self.port = serve(BIN, self.db, self.log, args, env=dict(
            os.environ, PREFLIGHT_CI_SECRET=CI_SECRET))
        self.base = "http://127.0.0.1:%d" % self.port
        self.token = None

    def request(self, method, path, body=None, ctype=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {}
        if ctype:
            h["Content-Type"] = ctype
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, data.decode("utf-8", "replace")

    def get(self, path):
        st, j = self.request("GET", path)
        if st != 200:
            raise RuntimeError("GET %s: %s %s" % (path, st, j))
        return j

    def post(self, text, name, gpus, gpu="h100-sxm", nodes=1):
        body = json.dumps({"config": text, "name": name, "context": {
            "gpus": gpus, "gpu": gpu, "nodes": nodes}})
        st, j = self.request("POST", "/v1/checks", body, "application/json")
        if st != 201:
            raise RuntimeError("POST %s: %s %s" % (name, st, j))
        return j

    def post_ci(self, text, gpus):
        """A signed CI check (stored for --ci-team) with CI_SOURCE."""
        raw = json.dumps({"config": text, "context": {"gpus": gpus},
                          "source": CI_SOURCE}).encode()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Content-Type": "application/json"}
        h.update(ci_headers(CI_SECRET, raw))
        c.request("POST", "/v1/ci/checks", body=raw, headers=h)
        r = c.getresponse()
        j = json.loads(r.read())
        c.close()
        if r.status != 201:
            raise RuntimeError("POST /v1/ci/checks: %s %s" % (r.status, j))
        return j

    def all_ids(self, query=""):
        ids, cur = [], None
        while True:
            q = query + ("&cursor=" + cur if cur else "")
            page = self.get("/v1/checks?limit=200" + q)
            ids += [c["id"] for c in page["items"]]
            cur = page["next_cursor"]
            if not cur:
                return ids

    def stop(self):
        """SIGTERM; the daemon's exit code (0: drained, sanitizers quiet)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.seek(0)
        tail = self.log.read()[-1500:]
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        check("the daemon (%s) exits cleanly on SIGTERM" % " ".join(
            self.args), self.proc.returncode == 0, tail)
        return self.proc.returncode


def seg(s):
    return urllib.parse.quote(s, safe="")


def corpus_files():
    out = []
    for root, _, files in os.walk(EXAMPLES):
        for f in files:
            if f.endswith((".yaml", ".yml")):
                out.append(os.path.join(root, f))
    return sorted(out)


# ---- helpers over one tab -------------------------------------------------

def no_problems(page, what):
    probs = page.problems()
    check("%s: no console error, exception, failed load or unexpected "
          "HTTP error" % what, not probs, probs[:5])


def only_this_host(page, srv, what):
    other = [u for _, u, _ in page.requests
             if not (u.startswith(srv.base + "/") or u.startswith("data:")
                     or u == "about:blank")]
    check("%s: every request goes to the daemon itself" % what, not other,
          other[:5])


def shot(page, name):
    page.screenshot(os.path.join(SHOTS, name + ".png"))


def a11y(page, what):
    """Labels on every control; a word beside every verdict and severity
    colour; keyboard focus visible on the first stops."""
    unlabelled = page.eval("""[...document.querySelectorAll(
        'input, select, textarea')].filter(e => e.type !== 'hidden' &&
        !(e.labels && e.labels.length) && !e.getAttribute('aria-label') &&
        !e.getAttribute('aria-labelledby')).map(e => e.outerHTML)""")
    check("%s: every control has a label" % what, unlabelled == [],
          unlabelled[:3])
    wordless = page.eval("""[...document.querySelectorAll('.verdict, .sev')]
        .filter(e => !/(pass|warn|fail|error|warning|info)/.test(
        e.textContent)).length""")
    check("%s: every verdict and severity is written out, not only "
          "coloured" % what, wordless == 0, wordless)
    # Start sequential navigation at the top of the document.
    page.eval("document.body.tabIndex = -1; document.body.focus(); "
              "document.body.removeAttribute('tabindex'); "
              "window.scrollTo(0, 0)")
    stops = page.eval("""[...document.querySelectorAll(
        'a[href], button, input, select, textarea, summary')].filter(e =>
        !e.disabled && e.getClientRects().length > 0).length""")
    seen = []
    for _ in range(min(6, stops)):
        page.key("Tab")
        seen.append(page.eval("""(() => { const e = document.activeElement;
            const s = getComputedStyle(e);
            return [e.tagName + (e.id ? '#' + e.id : ''),
                    s.outlineStyle, parseFloat(s.outlineWidth)]; })()"""))
    bad = [x for x in seen if x[0] == "BODY" or x[1] == "none" or x[2] < 2]
    check("%s: Tab moves focus through the page with a visible outline "
          "(%s)" % (what, ", ".join(x[0] for x in seen[:4])), not bad, bad)
    check("%s: the first Tab stop is the skip link" % what,
          seen[0][0] == "A" and page.eval(
              "document.querySelector('.skip').textContent") ==
          "Skip to content", seen[:1])


def narrow(browser, srv, path, name, ready=("ready",), allow=()):
    """The page at 375 px: no horizontal scrolling, a screenshot."""
    p = browser.page(375, 800, mobile=True)
    try:
        for status, part in allow:
            p.allow(status, part)
        p.goto(srv.base + path, ready)
        over = p.eval("document.documentElement.scrollWidth")
        wide = p.eval("""[...document.querySelectorAll('body *')].filter(
            e => e.getBoundingClientRect().right > 376).map(e => e.tagName +
            '.' + e.getAttribute('class') + ': ' +
            e.textContent.slice(0, 40)).slice(0, 4)""")
        check("%s at 375 px: no horizontal scrolling (width %s)" % (name,
              over), over is not None and over <= 376, wide)
        shot(p, name + "-375")
        no_problems(p, name + " at 375 px")
    finally:
        p.close()


# ---- the pages ------------------------------------------------------------

def test_checks_page(browser, srv, total_ids, ci):
    p = browser.page()
    try:
        p.goto(srv.base + "/")
        newest = srv.get("/v1/checks?limit=50")["items"]
        rows = p.eval("[...document.querySelectorAll('table.checks tbody "
                      "tr')].map(r => [r.dataset.id, r.dataset.verdict, "
                      "r.innerText])")
        check("/: the newest 50 checks, newest first, as the API lists them",
              [r[0] for r in rows] == [c["id"] for c in newest],
              (len(rows), len(newest)))
        c0 = newest[0]
        m = c0["estimate"]["memory"]
        check("/: a row shows verdict, name, GPUs x type, peak vs capacity",
              rows and c0["verdict"] in rows[0][2] and c0["name"] in
              rows[0][2] and "%d × %s" % (c0["context"]["gpus"],
                                          c0["context"]["gpu"]) in rows[0][2]
              and (m["per_gpu_peak_gib"] is None or "%.2f GiB / %.2f GiB" % (
                  m["per_gpu_peak_gib"], m["capacity_gib"]) in rows[0][2]),
              rows[:1])
        src = [r[2] for r in rows if r[0] == ci["id"]]
        check("/: a CI check's row gives its source (repo @ commit : path)",
              src and "org/models @ 0123456789 : configs/ci.yaml" in src[0],
              src)
        shot(p, "checks")
        a11y(p, "/")
        no_problems(p, "/")

        # A filter set through the form narrows the list and stays in the
        # URL.
        verdicts = [c["verdict"] for c in srv.get(
            "/v1/checks?limit=200")["items"]]
        want = min(set(verdicts), key=verdicts.count)
        p.eval("document.getElementById('f-verdict').value = %s; "
               "document.getElementById('f-limit').value = '200'"
               % json.dumps(want))
        before = p.loaded
        p.eval("document.querySelector('form.filters button[type=submit]')"
               ".click()")
        browser.wait_for(lambda: p.loaded > before, 20, "the filtered page")
        p.wait_state()
        url = p.eval("location.search")
        got = p.eval("[...document.querySelectorAll('table.checks tbody tr')]"
                     ".map(r => r.dataset.verdict)")
        api = srv.all_ids("&verdict=" + want)
        check("filter verdict=%s: in the URL (%s), %d of %d rows, all %s" % (
            want, url, len(got), len(total_ids), want),
            "verdict=" + want in url and len(got) == len(api) and
            0 < len(got) < len(total_ids) and set(got) == {want},
            (url, len(got), len(api)))
        no_problems(p, "/?verdict=")

        # A rule filter in the URL (the rules page links so).
        stats = srv.get("/v1/stats/rules")["items"]
        rule = next(s["rule"] for s in sorted(stats, key=lambda s: -s[
            "checks"]) if srv.all_ids("&rule=" + s["rule"]))
        p.goto(srv.base + "/?limit=200&rule=" + seg(rule))
        got = p.eval("document.querySelectorAll('table.checks tbody tr')"
                     ".length")
        api = srv.all_ids("&rule=" + seg(rule))
        check("filter rule=%s: the %d checks the API lists" % (rule,
              len(api)), got == len(api) and 0 < got < len(total_ids),
              (got, len(api)))
        check("the rule filter is filled in from the URL",
              p.eval("document.getElementById('f-rule').value") == rule)

        # Cursor paging to the last page, by following the links.
        p.goto(srv.base + "/?limit=10")
        seen, pages = [], 0
        while True:
            pages += 1
            seen += p.eval("[...document.querySelectorAll('table.checks "
                           "tbody tr')].map(r => r.dataset.id)")
            nxt = p.eval("(document.querySelector('a.next-page') || {}).href"
                         " || null")
            if not nxt or pages > 20:
                break
            p.goto(nxt)
        last = p.eval("!!document.querySelector('.last-page')")
        check("paging by 10 reaches the last page in %d pages, every check "
              "once, in order" % pages, seen == total_ids and last and
              pages == (len(total_ids) + 9) // 10, (len(seen), pages))
        first = p.eval("(document.querySelector('a.first-page') || {}).href")
        check("a later page links back to the newest checks",
              first is not None and "cursor" not in first, first)
        no_problems(p, "paging")
        only_this_host(p, srv, "/")

        # Keyboard only: Tab to the first check and follow it with Enter.
        p.goto(srv.base + "/")
        p.eval("document.body.tabIndex = -1; document.body.focus(); "
               "document.body.removeAttribute('tabindex')")
        for _ in range(80):
            p.key("Tab")
            if p.eval("document.activeElement.classList.contains("
                      "'check-link')"):
                break
        before = p.loaded
        p.key("Enter")
        browser.wait_for(lambda: p.loaded > before, 20, "Enter on a link")
        p.wait_state()
        check("keyboard only: Tab to a check and Enter opens it",
              p.eval("location.pathname") == "/checks/" + newest[0]["id"],
              p.eval("location.pathname"))
        no_problems(p, "keyboard")

        p.goto(srv.base + "/checks/" + ci["id"])
        src = p.eval("(document.querySelector('p.source') || {}).innerText")
        check("/checks/{id} of a CI check names its repo, commit, path, ref "
              "and pull request", src and all(str(v) in src for v in
                                              CI_SOURCE.values()), src)
        no_problems(p, "a CI check")
    finally:
        p.close()
    narrow(browser, srv, "/", "checks")


def test_check_page(browser, srv, finding_check, sug_check):
    c = finding_check
    p = browser.page()
    try:
        p.goto(srv.base + "/checks/" + c["id"])
        st, text = srv.request("GET", "/v1/checks/%s/config" % c["id"])
        lines = text.split("\n")
        loud = [f for f in c["findings"] if f["severity"] != "info"]
        marks = p.eval("""[...document.querySelectorAll('tr.marker')].map(
            m => { let r = m.previousElementSibling;
                 while (r && !r.classList.contains('line'))
                     r = r.previousElementSibling;
                 const f = m.querySelector('.finding');
                 return [f.dataset.rule, +f.dataset.line, +r.dataset.line,
                         r.querySelector('code').textContent,
                         f.querySelector('a.rule').getAttribute('href'),
                         f.innerText]; })""")
        ok, detail = len(marks) == len(c["findings"]), []
        for f in loud:
            hit = [m for m in marks if m[0] == f["rule"] and m[1] == f["line"]]
            good = hit and hit[0][2] == f["line"] and \
                hit[0][3] == lines[f["line"] - 1] and \
                hit[0][4] == "/rules/" + f["rule"] and \
                f["message"] in hit[0][5] and \
                (not f["hint"] or f["hint"] in hit[0][5]) and \
                f["severity"] in hit[0][5]
            if not good:
                ok = False
                detail.append((f["rule"], f["line"], hit[:1]))
        check("/checks/{id}: each of the %d findings is marked right under "
              "its config line (%s), with severity, message, hint and rule "
              "link" % (len(c["findings"]), ", ".join(
                  "%s@%d" % (f["rule"], f["line"]) for f in loud[:3])),
              ok and loud, detail[:3] or len(marks))
        hidden = p.eval("[...document.querySelectorAll('tr.marker.sev-info')]"
                        ".every(m => m.offsetParent === null)")
        p.eval("document.getElementById('show-info') && "
               "document.getElementById('show-info').click()")
        shown = p.eval("[...document.querySelectorAll('tr.marker.sev-info')]"
                       ".every(m => m.offsetParent !== null)")
        check("info notes are hidden until asked for, then shown",
              hidden and shown)
        plan = p.eval("document.querySelector('[aria-labelledby=h-plan]')"
                      ".innerText")
        check("the plan shows the strategy and micro batch",
              c["plan"]["strategy"] in plan and
              str(c["plan"]["micro_batch_size"]) in plan, plan[:200])
        bar(p, c)
        shot(p, "check")
        a11y(p, "/checks/{id}")
        no_problems(p, "/checks/{id}")
        only_this_host(p, srv, "/checks/{id}")

        s = sug_check
        p.goto(srv.base + "/checks/" + s["id"])
        rows = p.eval("""[...document.querySelectorAll(
            'table.suggestions tbody tr')].map(r => [
            r.querySelector('pre.snippet').textContent,
            r.cells[1].innerText, r.cells[2].innerText])""")
        ok = len(rows) == len(s["suggestions"])
        for row, sg in zip(rows, s["suggestions"]):
            ok = ok and yaml.safe_load(row[0]) == sg["set"] and \
                "%.2f GiB" % sg["per_gpu_peak_gib"] in row[1]
        check("suggestions: %d rows, each with its peak and a YAML snippet "
              "that parses to its 'set'" % len(s["suggestions"]),
              ok and rows, rows[:1])
        p.eval("document.querySelector('button.copy').click()")
        copied = p.wait_js("document.querySelector('.copy-status')"
                           ".textContent", 5, "the copy status")
        check("Copy YAML copies (or selects) the snippet: %r" % copied,
              copied in ("Copied.", "Selected: press Ctrl+C (⌘C) to copy."))
        bar(p, s)
        estimator_fields(p)
        shot(p, "check-suggestions")
        no_problems(p, "/checks/{id} with suggestions")
    finally:
        p.close()
    narrow(browser, srv, "/checks/" + c["id"], "check")


def bar(p, c):
    m = c["estimate"]["memory"]
    g = p.eval("""(() => { const b = document.querySelector('.bar');
        const segs = [...b.querySelectorAll('.seg')];
        const cap = b.querySelector('.cap');
        const left = b.getBoundingClientRect().left + b.clientLeft;
        return {gib: segs.map(s => +s.dataset.gib),
                terms: segs.map(s => s.dataset.term),
                px: segs.reduce((a, s) => a + s.getBoundingClientRect().width,
                                0),
                cap: cap ? cap.getBoundingClientRect().left - left : null,
                label: b.getAttribute('aria-label')}; })()""")
    peak, cap = m["per_gpu_peak_gib"], m["capacity_gib"]
    terms = {k for k, v in m["breakdown_gib"].items() if v > 0}
    check("memory bar of %s: segments %s add up to the peak %.2f GiB" % (
        c["name"], "+".join("%.2f" % x for x in g["gib"]), peak),
        abs(sum(g["gib"]) - peak) <= 0.05 and
        terms <= set(g["terms"]), g)
    check("memory bar: the segments end where the peak sits against the "
          "capacity line (%.0f px vs %.0f px)" % (
              g["px"], (g["cap"] or 0) * peak / cap),
          g["cap"] and abs(g["px"] / g["cap"] - peak / cap) < 0.01 * max(
              1, peak / cap), g)
    check("memory bar: its label says peak and capacity in words",
          "%.2f GiB" % peak in g["label"] and "%.2f GiB" % cap in g["label"],
          g["label"])


def estimator_fields(p):
    """DESIGN.md's allocated_peak_gib and range_gib, drawn when a report
    has them (the estimator may add them): the bar is ui/report.js's own,
    fed DESIGN.md's example with a breakdown that itemises only the
    allocated 54 GiB."""
    g = p.eval("""(async () => {
        const m = await import('/ui/report.js');
        const fig = m.memoryBar({memory: {per_gpu_peak_gib: 61.2,
          allocated_peak_gib: 54.0, range_gib: [56.0, 66.5],
          capacity_gib: 79.6, fits: true, cpu_offload_gib: 0.0,
          breakdown_gib: {weights: 2.0, gradients: 2.0, optimizer: 6.0,
            activations: 30.9, logits: 8.1, buffers: 3.0, runtime: 2.0}}});
        fig.id = 'synthetic';
        document.querySelector('main').append(fig);
        const b = fig.querySelector('.bar');
        const x0 = b.getBoundingClientRect().left + b.clientLeft;
        const at = (sel) => fig.querySelector(sel).getBoundingClientRect();
        const segs = [...b.querySelectorAll('.seg')];
        return {terms: segs.map(s => [s.dataset.term, +s.dataset.gib]),
                cap: at('.cap').left - x0,
                lo: at('.range').left - x0, hi: at('.range').right - x0,
                alloc: at('.alloc').left - x0,
                end: segs.reduce((a, s) => a + s.getBoundingClientRect().width,
                                 0),
                text: fig.innerText}; })()""")
    scale = g["cap"] / 79.6

    def near(px, gib):
        return abs(px - gib * scale) <= 2.5

    other = [v for t, v in g["terms"] if t == "other"]
    check("estimator fields: what the breakdown leaves out is an 'other' "
          "segment (%s GiB), so the bar ends at the 61.2 GiB peak" % other,
          other == [7.2] and near(g["end"], 61.2), g)
    check("estimator fields: the range bracket spans 56.0-66.5 GiB and the "
          "allocated peak sits at 54.0 GiB on the same scale",
          near(g["lo"], 56.0) and near(g["hi"], 66.5) and
          near(g["alloc"], 54.0), g)
    check("estimator fields: both are also written out",
          "Calibration range: 56.00 GiB – 66.50 GiB" in g["text"] and
          "54.00 GiB" in g["text"], g["text"])
    p.eval("document.getElementById('synthetic').remove()")


OOM_LOG = """[rank0]: Traceback (most recent call last):
[rank0]:   File "/workspace/axolotl/src/axolotl/train.py", line 191, in train
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including \
non-PyTorch memory, this process has 78.12 GiB memory in use. Of the \
allocated memory 75.40 GiB is allocated by PyTorch, and 1.90 GiB is reserved \
by PyTorch but unallocated.
"""


def diagnose(srv, check_id):
    """A failed run's log diagnosed against check_id (POST /v1/diagnose,
    issue 19), or None when this build has no such route."""
    st, j = srv.request("POST", "/v1/diagnose", json.dumps(
        {"log": OOM_LOG, "check_id": check_id}), "application/json")
    if st in (404, 405) and "no such resource" in str(j):
        return None
    if st != 200:
        raise RuntimeError("POST /v1/diagnose: %s %s" % (st, j))
    return j


def test_history_and_diff(browser, srv, name, hist):
    v1, v2, v3 = hist
    diagnosed = diagnose(srv, v3["id"])
    p = browser.page()
    try:
        p.goto(srv.base + "/configs/" + seg(name))
        page = srv.get("/v1/configs/%s/checks" % seg(name))
        if diagnosed is None:
            print("skip a diagnosed failure in the history: no "
                  "POST /v1/diagnose in this build")
        else:
            want = [f["summary"] for f in page["items"][0].get(
                "failures", [])]
            got = p.eval("[...document.querySelectorAll('tr[data-id=\"%s\"]"
                         " ul.failures li')].map(li => li.textContent)" %
                         v3["id"])
            check("history: a diagnosed failed run shows under its check "
                  "(%s)" % want[:1], want and
                  [g.lstrip("✖ ") for g in got] == want, (got, want))
        pts = p.eval("[...document.querySelectorAll('svg.chart a.point')]"
                     ".map(a => [a.dataset.id, a.getAttribute('href'), "
                     "a.getAttribute('aria-label')])")
        want = [it["id"] for it in reversed(page["items"])
                if it["memory"]["per_gpu_peak_gib"] is not None]
        check("history chart: one point per check, oldest first, each "
              "linking to its check", [x[0] for x in pts] == want and
              all(x[1] == "/checks/" + x[0] for x in pts) and
              all(it["verdict"] in x[2] for x, it in zip(
                  pts, reversed(page["items"]))), pts)
        rows = p.eval("""[...document.querySelectorAll(
            'table.history tbody tr')].map(r => [r.dataset.id, r.innerText,
            [...r.querySelectorAll('.ctx-change')].map(x => [x.dataset.field,
             x.textContent]),
            [...r.querySelectorAll('li.added')].map(x => x.dataset.rule),
            (r.querySelector('a.diff-link') || {}).href || null])""")
        by = {r[0]: r for r in rows}
        check("history timeline: the %d checks, newest first" % len(rows),
              [r[0] for r in rows] == [v3["id"], v2["id"], v1["id"]], rows)
        check("history: the change of GPU count is named (GPUs 8 → 16)",
              ["gpus", "GPUs 8 → 16"] in by[v2["id"]][2], by[v2["id"]][2])
        added = srv.get("/v1/checks/%s/diff?against=%s" % (
            v3["id"], v2["id"]))["findings_added"]
        check("history: the findings added by the edit are listed (%s)" %
              ", ".join(f["rule"] for f in added),
              added and sorted(by[v3["id"]][3]) == sorted(
                  f["rule"] for f in added), by[v3["id"]][3])
        check("history: each later check links to its diff",
              by[v3["id"]][4] and by[v3["id"]][4].endswith(
                  "/checks/%s/diff/%s" % (v3["id"], v2["id"])) and
              by[v1["id"]][4] is None, [r[4] for r in rows])
        shot(p, "history")
        a11y(p, "/configs/{name}")
        no_problems(p, "/configs/{name}")

        # Follow a chart point with the keyboard focus + Enter.
        p.eval("document.querySelector('svg.chart a.point').focus()")
        before = p.loaded
        p.key("Enter")
        browser.wait_for(lambda: p.loaded > before, 20, "Enter on a point")
        p.wait_state()
        check("a chart point opens its check from the keyboard",
              p.eval("location.pathname") == "/checks/" + want[0])

        # The diff of the edit.
        d = srv.get("/v1/checks/%s/diff?against=%s" % (v3["id"], v2["id"]))
        p.goto(srv.base + "/checks/%s/diff/%s" % (v3["id"], v2["id"]))
        got = p.eval("""({added: [...document.querySelectorAll(
            '.card.added .finding')].map(f => [f.dataset.rule,
            +f.dataset.line]),
            removed: [...document.querySelectorAll('.card.removed .finding')]
            .map(f => f.dataset.rule),
            adds: [...document.querySelectorAll('table.linediff tr.add')]
            .map(r => [r.cells[1].textContent, r.cells[3].textContent]),
            dels: document.querySelectorAll('table.linediff tr.del').length,
            terms: [...document.querySelectorAll('table.memdiff tbody tr')]
            .map(r => [r.dataset.term, r.cells[3].textContent])})""")
        check("diff: the findings added are shown with their lines",
              got["added"] == [[f["rule"], f["line"]] for f in
                               d["findings_added"]] and got["added"],
              got["added"])
        check("diff: the findings removed are shown",
              got["removed"] == [f["rule"] for f in d["findings_removed"]])
        new_lines = srv.request("GET", "/v1/checks/%s/config" %
                                v3["id"])[1].split("\n")
        old_lines = srv.request("GET", "/v1/checks/%s/config" %
                                v2["id"])[1].split("\n")
        appended = [x for x in new_lines if x and x not in old_lines]
        check("diff: the line diff shows the added config line %r" %
              appended[:1], appended and [a[1] for a in got["adds"]] ==
              appended and got["dels"] == 0, got["adds"])
        terms = d["memory_delta_by_term_gib"]
        check("diff: memory change per term (%d terms)" % len(terms),
              sorted(t for t, _ in got["terms"]) == sorted(terms), got)
        shot(p, "diff")
        a11y(p, "/checks/{id}/diff/{other}")
        no_problems(p, "diff")

        # The diff across a GPU change says so.
        p.goto(srv.base + "/checks/%s/diff/%s" % (v2["id"], v1["id"]))
        ctx = p.eval("[...document.querySelectorAll('.ctx-change')]"
                     ".map(x => x.textContent)")
        check("diff across GPU counts names it: %s" % ctx,
              "GPUs 8 → 16" in ctx and p.eval(
                  "document.querySelector('table.linediff') === null"))
        no_problems(p, "diff across GPUs")
        only_this_host(p, srv, "history and diff")
    finally:
        p.close()
    narrow(browser, srv, "/configs/" + seg(name), "history")
    narrow(browser, srv, "/checks/%s/diff/%s" % (v3["id"], v2["id"]), "diff")


def test_try_page(browser, srv):
    text = open(DUP_EXAMPLE).read()
    p = browser.page()
    try:
        p.goto(srv.base + "/try")
        p.eval("document.getElementById('config').focus()")
        p.type_text(text)
        p.wait_js("!!document.querySelector('#live .findings-box')", 15,
                  "the live report")
        st, want = srv.request("POST", "/v1/checks?dry_run=true", json.dumps(
            {"config": text, "context": {"gpus": 8, "gpu": "h100-sxm",
                                         "nodes": 1}}), "application/json")
        status = p.eval("document.getElementById('status').innerText")
        marks = p.eval("[...document.querySelectorAll('#live tr.marker "
                       ".finding')].map(f => [f.dataset.rule, "
                       "+f.dataset.line])")
        check("try: typing a config shows its live report (%s)" % status,
              st == 200 and want["verdict"] in status and "8 × h100-sxm" in
              status and sorted(marks) == sorted(
                  [f["rule"], f["line"]] for f in want["findings"]),
              (status, marks[:3]))
        dup = [f for f in want["findings"]
               if f["rule"] == "schema.duplicate_key"]
        check("try: the duplicate key is marked on its line",
              dup and [dup[0]["rule"], dup[0]["line"]] in marks, dup)
        shot(p, "try")
        a11y(p, "/try")

        # Another GPU count: the report follows.
        p.eval("const g = document.getElementById('gpus'); g.value = '16'; "
               "g.dispatchEvent(new Event('input', {bubbles: true}))")
        p.wait_js("document.getElementById('status').innerText.includes("
                  "'16 × h100-sxm')", 15, "the report for 16 GPUs")
        check("try: changing the GPUs re-checks", True)

        # Store it.
        p.eval("document.getElementById('name').value = 'tried/dup.yaml'")
        p.eval("document.getElementById('store').click()")
        href = p.wait_js("(document.getElementById('stored-link') || {}).href",
                         15, "the stored check's link")
        cid = href.rsplit("/", 1)[1]
        st, stored = srv.request("GET", "/v1/checks/" + cid)
        check("try: Store keeps it as a check of the team (%s)" % cid,
              st == 200 and stored["name"] == "tried/dup.yaml" and
              stored["context"]["gpus"] == 16, (st, stored))
        no_problems(p, "/try")

        # A config that cannot be parsed: its problem, with the line.
        p.allow(400, "/v1/checks?dry_run=true")
        p.eval("const c = document.getElementById('config'); c.value = ''; "
               "c.focus()")
        p.type_text("base_model: x\na: [1, 2\n")
        msg = p.wait_js("(document.querySelector('#live .problem') || {})"
                        ".innerText", 15, "the problem")
        check("try: an invalid config shows why and where (%s)" % msg.strip(),
              "line" in msg and "column" in msg, msg)
        check("try: Store is off while the config cannot be checked",
              p.eval("document.getElementById('store').disabled"))
        no_problems(p, "/try with an invalid config")
        only_this_host(p, srv, "/try")
    finally:
        p.close()
    narrow(browser, srv, "/try", "try")


def test_rules_pages(browser, srv):
    p = browser.page()
    try:
        p.goto(srv.base + "/rules")
        rules = srv.get("/v1/rules")["items"]
        stats = srv.get("/v1/stats/rules")["items"]
        top = max(stats, key=lambda s: (s["findings"], -ord(s["rule"][0])))
        rows = p.eval("[...document.querySelectorAll('table.rules tbody tr')]"
                      ".map(r => [r.dataset.rule, r.cells[3].textContent])")
        check("/rules: every rule (%d), the most frequent first (%s, %d)" % (
              len(rules), top["rule"], top["findings"]),
              len(rows) == len(rules) and
              rows[0][1].replace(",", "") == str(top["findings"]) and
              max(stats, key=lambda s: s["findings"])["findings"] ==
              top["findings"], rows[:2])
        p.eval("document.getElementById('rule-filter').focus()")
        p.type_text("duplicate")
        vis = p.wait_js("""(() => { const v = [...document.querySelectorAll(
            'table.rules tbody tr')].filter(r => !r.hidden).map(r =>
            r.innerText.toLowerCase()); return v.length ? v : null; })()""")
        check("/rules: the filter narrows to %d rules and stays in the URL" %
              len(vis), all("duplicate" in v for v in vis) and
              len(vis) < len(rules) and
              p.eval("location.search") == "?q=duplicate", vis[:3])
        shot(p, "rules")
        a11y(p, "/rules")
        no_problems(p, "/rules")

        p.goto(srv.base + "/rules/" + seg(top["rule"]))
        total = p.eval("document.getElementById('rule-total').textContent")
        check("/rules/{id}: the team's count (%s)" % total,
              str(top["findings"]) in total.replace(",", "") and
              str(top["checks"]) in total.replace(",", ""), total)
        shot(p, "rule")
        a11y(p, "/rules/{id}")
        no_problems(p, "/rules/{id}")

        p.allow(404, "/v1/rules/no.such_rule")
        p.goto(srv.base + "/rules/no.such_rule")
        check("/rules/{unknown}: says there is no such rule",
              p.eval("document.querySelector('h1').textContent") ==
              "No such rule")
        p.allow(404, "/v1/checks/")
        p.goto(srv.base + "/checks/" + "0" * 26)
        check("/checks/{unknown}: says the check is not found",
              p.eval("document.querySelector('h1').textContent") ==
              "Check not found")
        no_problems(p, "not-found pages")
        only_this_host(p, srv, "/rules")
    finally:
        p.close()
    narrow(browser, srv, "/rules", "rules")


EVIL = '<img src=x onerror="window.pwned=1">'


def test_hostile_data(browser, srv):
    """Names, labels, config text and finding messages are the
    submitter's: they must show as text, never as markup."""
    config = ("base_model: meta-llama/Llama-3.1-8B\n"
              "# %s <script>window.pwned=2</script>\n"
              "'%s': 1\n" % (EVIL, EVIL.replace("'", "''")))
    name = "x/%s.yaml" % EVIL
    body = json.dumps({"config": config, "name": name, "labels": {
        "team": EVIL}, "context": {"gpus": 8}})
    st, c = srv.request("POST", "/v1/checks", body, "application/json")
    check("hostile names, labels and keys are stored as given", st == 201 and
          any(EVIL in f["message"] for f in c["findings"]), (st, c))
    p = browser.page()
    try:
        for path in ("/", "/checks/" + c["id"], "/configs/" + seg(name),
                     "/?name=" + seg(name)):
            p.goto(srv.base + path)
            got = p.eval("""({pwned: window.pwned || 0,
                imgs: document.querySelectorAll('main img').length,
                scripts: document.querySelectorAll('main script').length,
                text: document.querySelector('main').textContent})""")
            check("%s: hostile text is shown as text (no element made, "
                  "nothing run)" % path.split("?")[0][:20],
                  got["pwned"] == 0 and got["imgs"] == 0 and
                  got["scripts"] == 0 and EVIL in got["text"], got["pwned"])
        links = p.eval("[...document.querySelectorAll('a[href]')].map(a => "
                       "a.getAttribute('href')).filter(h => !h.startsWith("
                       "'/') && !h.startsWith('#'))")
        check("every link stays on this origin", links == [], links)
        no_problems(p, "hostile data")
    finally:
        p.close()


def test_token_mode(browser):
    srv = Server("--auth", "token")
    try:
        tok = subprocess.run([BIN, "token", "create", "--team", "red",
                              "--db", srv.db], capture_output=True,
                             text=True, check=True).stdout.strip()
        srv.token = tok
        srv.post(open(DUP_EXAMPLE).read(), "red/dup.yaml", 8)
        p = browser.page()
        try:
            p.allow(401, "/v1/")
            p.goto(srv.base + "/", ("auth",))
            why = p.eval("document.getElementById('token-why').innerText")
            check("--auth token: the page asks for a token with the reason "
                  "(%s)" % why[:60], "needs an access token" in why and
                  "401" in why, why)
            check("the token field is focused and labelled",
                  p.eval("document.activeElement.id") == "token" and
                  p.eval("document.getElementById('token').labels.length")
                  == 1)
            shot(p, "token")
            a11y(p, "token prompt")
            p.eval("document.getElementById('token').focus()")
            p.type_text("not-a-valid-token")
            p.key("Enter")
            p.wait_js("document.getElementById('token-why') && document"
                      ".getElementById('token-why').innerText.includes("
                      "'refused')", 10, "the refusal")
            check("a wrong token is refused with a clear message", True)
            p.eval("document.getElementById('token').focus()")
            p.type_text(tok)
            p.key("Enter")
            p.wait_state()
            rows = p.eval("document.querySelectorAll('table.checks tbody tr')"
                          ".length")
            check("with the token the team's checks show", rows == 1, rows)
            sent = [h.get("Authorization") for m, u, h in p.requests
                    if "/v1/checks" in u]
            check("the token is sent as Authorization: Bearer",
                  sent and sent[-1] == "Bearer " + tok, sent[-1:])
            check("the token is in sessionStorage only: not localStorage, "
                  "not the URL, not a cookie",
                  p.eval("sessionStorage.getItem('preflight.token')") == tok
                  and p.eval("localStorage.length") == 0 and
                  tok not in p.eval("location.href") and
                  p.eval("document.cookie") == "" and
                  not any(tok in u for _, u, _ in p.requests))
            p.reset()
            p.goto(srv.base + "/rules")
            check("the next page uses the kept token without asking",
                  p.eval("document.body.dataset.state") == "ready")
            no_problems(p, "--auth token with the token")
            p.allow(401, "/v1/")
            before = p.loaded
            p.eval("document.querySelector('#session button').click()")
            browser.wait_for(lambda: p.loaded > before, 20, "the reload")
            p.wait_state(("auth",))
            check("Forget token forgets it and asks again",
                  p.eval("sessionStorage.length") == 0)
            only_this_host(p, srv, "--auth token")
        finally:
            p.close()
    finally:
        srv.stop()


def main():
    os.makedirs(SHOTS, exist_ok=True)
    t0 = time.time()
    srv = Server("--auth", "none", "--ci-team", "default")
    browser = None
    try:
        # Checks stored from the corpus, under their paths as names.
        stored = []
        for i, f in enumerate(corpus_files()[:N_CORPUS]):
            name = os.path.relpath(f, EXAMPLES)
            stored.append(srv.post(open(f).read(), name, GPUS[i % len(GPUS)]))
        # A config's history: the same config on 8 then 16 GPUs, then
        # edited with a duplicated key.
        base = next(c for c in stored if c["estimate"]["memory"][
            "per_gpu_peak_gib"] is not None and c["context"]["gpus"] == 8)
        src = srv.request("GET", "/v1/checks/%s/config" % base["id"])[1]
        first_key = next(iter(yaml.safe_load(src)))
        value = yaml.safe_load(src)[first_key]
        edited = src.rstrip("\n") + "\n%s: %s\n" % (first_key,
                                                     json.dumps(value))
        hname = "team/history.yaml"
        hist = [srv.post(src, hname, 8), srv.post(src, hname, 16),
                srv.post(edited, hname, 16)]
        ci = srv.post_ci(open(DUP_EXAMPLE).read(), 4)
        dup = srv.post(open(DUP_EXAMPLE).read(), "llama-8b-dup.yaml", 8)
        total_ids = srv.all_ids()
        check("seeded %d checks from %d corpus configs" % (
              len(total_ids), N_CORPUS), len(total_ids) == N_CORPUS + 5)
        everything = [srv.get("/v1/checks/" + i) for i in total_ids]
        finding_check = next(c for c in everything if any(
            f["severity"] in ("error", "warning") and f["line"] > 1
            for f in c["findings"]) and
            c["estimate"]["memory"]["per_gpu_peak_gib"] is not None)
        sug_check = next((c for c in everything if c["suggestions"]), None)
        check("the corpus gives a check with suggestions", sug_check,
              [c["name"] for c in everything])

        browser = Browser()
        test_checks_page(browser, srv, total_ids, ci)
        test_check_page(browser, srv, finding_check, sug_check or dup)
        test_history_and_diff(browser, srv, hname, hist)
        test_try_page(browser, srv)
        test_rules_pages(browser, srv)
        test_hostile_data(browser, srv)
        test_token_mode(browser)
    except (CdpError, RuntimeError, StopIteration) as e:
        check("the browser run finished", False, repr(e))
    finally:
        if browser is not None:
            browser.close()
        srv.stop()
    print("ui_browser: %.1f s, screenshots in %s" % (time.time() - t0,
                                                      os.path.relpath(SHOTS)))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
