"""Headless Chromium driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on fds 3 and 4), with
the standard library only: no WebDriver, no debugging port, no download.

Browser() starts Debian's /usr/bin/chromium with a fresh profile and the
flags that keep it off the network; browser.page() opens a tab that records
every console message, uncaught exception, request and failed load, so a
test can fail on anything it did not expect."""
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions",
    "--disable-dev-shm-usage", "--no-default-browser-check",
    "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe",
]


def find_chromium():
    for c in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if c and shutil.which(c):
            return shutil.which(c)
    return None


class CdpError(Exception):
    pass


class Browser:
    def __init__(self, binary=None, timeout=30):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="preflight-ui-")
        binary = binary or find_chromium()
        if binary is None:
            raise RuntimeError("chromium not found (make test-deps installs "
                               "it)")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def child():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.log = open(os.path.join(self.profile, "chromium.log"), "w+")
        self.proc = subprocess.Popen(
            [binary] + CHROMIUM_FLAGS + ["--user-data-dir=" + self.profile,
                                         "about:blank"],
            preexec_fn=child, pass_fds=(3, 4), stdin=subprocess.DEVNULL,
            stdout=self.log, stderr=self.log, start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._replies = {}
        self._sessions = {}      # sessionId -> Page
        self._dead = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.call("Target.setDiscoverTargets", {"discover": False})

    def _read(self):
        buf = b""
        try:
            while True:
                chunk = os.read(self._from_chrome, 1 << 16)
                if not chunk:
                    break
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    msg = json.loads(raw)
                    with self._cv:
                        if "id" in msg:
                            self._replies[msg["id"]] = msg
                            self._cv.notify_all()
                        else:
                            page = self._sessions.get(msg.get("sessionId"))
                            if page is not None:
                                page._event(msg["method"], msg["params"])
                                self._cv.notify_all()
        finally:
            with self._cv:
                self._dead = True
                self._cv.notify_all()

    def call(self, method, params=None, session=None, timeout=None):
        with self._cv:
            self._next += 1
            mid = self._next
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + (timeout or self.timeout)
        with self._cv:
            while mid not in self._replies:
                if self._dead:
                    raise CdpError("chromium exited: " + self.log_tail())
                left = deadline - time.time()
                if left <= 0:
                    raise CdpError("no answer to %s in time" % method)
                self._cv.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CdpError("%s: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def wait_for(self, pred, timeout=None, what="condition"):
        """Wait until pred() (called under the event lock) is true."""
        deadline = time.time() + (timeout or self.timeout)
        with self._cv:
            while not pred():
                left = deadline - time.time()
                if left <= 0 or self._dead:
                    raise CdpError("timed out waiting for " + what)
                self._cv.wait(min(left, 0.1))

    def page(self, width=1280, height=900, mobile=False):
        target = self.call("Target.createTarget",
                           {"url": "about:blank"})["targetId"]
        sid = self.call("Target.attachToTarget",
                        {"targetId": target, "flatten": True})["sessionId"]
        p = Page(self, sid, target)
        with self._cv:
            self._sessions[sid] = p
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable", session=sid)
        p.viewport(width, height, mobile)
        return p

    def log_tail(self):
        try:
            self.log.seek(0)
            return self.log.read()[-2000:]
        except (OSError, ValueError):
            return ""

    def close(self):
        try:
            if not self._dead:
                self.call("Browser.close", timeout=10)
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab.  problems() lists what went wrong since the last reset:
    console errors, exceptions, failed loads and HTTP errors not allowed by
    allow(status, url-substring)."""

    def __init__(self, browser, sid, target):
        self.b = browser
        self.sid = sid
        self.target = target
        self.console = []      # (level, text)
        self.exceptions = []
        self.requests = []     # (method, url, headers)
        self.responses = []    # (status, url)
        self.failed = []       # (url, errorText)
        self.log_entries = []  # (level, source, text, url)
        self._urls = {}
        self._allowed = []
        self.loaded = 0

    def _event(self, method, p):
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", "")))
                            for a in p.get("args", []))
            self.console.append((p["type"], text))
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.exceptions.append(
                d.get("exception", {}).get("description") or d.get("text"))
        elif method == "Log.entryAdded":
            e = p["entry"]
            self.log_entries.append((e["level"], e.get("source"),
                                     e.get("text"), e.get("url", "")))
        elif method == "Network.requestWillBeSent":
            r = p["request"]
            self._urls[p["requestId"]] = r["url"]
            self.requests.append((r["method"], r["url"], r.get("headers", {})))
        elif method == "Network.responseReceived":
            self.responses.append((p["response"]["status"],
                                   p["response"]["url"]))
        elif method == "Network.loadingFailed":
            self.failed.append((self._urls.get(p["requestId"], "?"),
                                p.get("errorText"), p.get("canceled", False)))
        elif method == "Page.loadEventFired":
            self.loaded += 1

    def call(self, method, params=None, timeout=None):
        return self.b.call(method, params, session=self.sid, timeout=timeout)

    def viewport(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1,
            "mobile": mobile})

    def allow(self, status, url_part):
        """Expect an HTTP status >= 400 from a URL holding url_part."""
        self._allowed.append((status, url_part))

    def reset(self):
        with self.b._cv:
            self.console, self.exceptions, self.failed = [], [], []
            self.log_entries, self.responses, self.requests = [], [], []
            self._allowed = []

    def _ok_status(self, status, url):
        return status < 400 or any(status == s and part in url
                                   for s, part in self._allowed)

    def problems(self):
        out = []
        with self.b._cv:
            out += ["console.%s: %s" % (t, x) for t, x in self.console
                    if t in ("error", "assert", "warning")]
            out += ["exception: %s" % x for x in self.exceptions]
            out += ["HTTP %d %s" % (s, u) for s, u in self.responses
                    if not self._ok_status(s, u)]
            out += ["failed load %s: %s" % (u, e) for u, e, c in self.failed
                    if not c]
            for level, source, text, url in self.log_entries:
                if level not in ("error", "warning"):
                    continue
                # A failed response is logged too; it counts once, above.
                if source == "network" and any(
                        u == url for s, u in self.responses):
                    continue
                out.append("log %s (%s): %s %s" % (level, source, text, url))
        return out

    def goto(self, url, ready=("ready",), timeout=20):
        before = self.loaded
        self.call("Page.navigate", {"url": url})
        self.b.wait_for(lambda: self.loaded > before, timeout,
                        "the load of " + url)
        return self.wait_state(ready, timeout)

    def wait_state(self, states=("ready",), timeout=20):
        """Wait for document.body.dataset.state (set by ui/app.js)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            st = self.eval("document.body && document.body.dataset.state")
            if st in states:
                return st
            if st in ("ready", "auth", "error") and st not in states:
                raise CdpError("page state %r, wanted %r: %s" % (
                    st, states, self.eval("document.querySelector('main')"
                                          "?.innerText.slice(0, 500)")))
            time.sleep(0.05)
        raise CdpError("page never reached %r" % (states,))

    def wait_js(self, expr, timeout=15, what=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.eval(expr)
            if v:
                return v
            time.sleep(0.05)
        raise CdpError("timed out waiting for " + (what or expr))

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {
            "expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CdpError("%s: %s" % (expr[:80], r["exceptionDetails"].get(
                "exception", {}).get("description")))
        return r["result"].get("value")

    def key(self, key, code=None, shift=False):
        """One key press (Tab, Enter, ...) as the keyboard sends it."""
        params = {"key": key, "code": code or key,
                  "modifiers": 8 if shift else 0}
        if key == "Tab":
            params["windowsVirtualKeyCode"] = 9
        elif key == "Enter":
            params.update(windowsVirtualKeyCode=13, text="\r")
        self.call("Input.dispatchKeyEvent", dict(params, type="keyDown"))
        self.call("Input.dispatchKeyEvent", dict(params, type="keyUp"))

    def type_text(self, text):
        self.call("Input.insertText", {"text": text})

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot",
                         {"format": "png", "captureBeyondViewport": True},
                         timeout=30)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.b.call("Target.closeTarget", {"targetId": self.target})
        except CdpError:
            pass
