#!/usr/bin/env python3
"""Packaging (issue 17), run as a user or an operator would:

- `make install PREFIX=/usr/local DESTDIR=tmp` installs exactly the binary,
  preflight(1), bash and zsh completion, the systemd unit and the licence
  files; the unit passes systemd-analyze verify, the man page renders
  without groff warnings and describes every `check` flag, the bash
  completion completes the flags `--help` lists;
- `make deps` asks only for what building needs (no cmocka, PyYAML, wrk);
- `preflight version` names the git commit of the build;
- the Dockerfile's HEALTHCHECK command, run as written against a daemon
  started with the image's environment, answers 0 (1 without a daemon),
  and its documented token line works; the image build runs no tests;
- action.yml: every `run:` step, in order, in a scratch git repository
  with a pull request's base commit; the SARIF its upload step is given
  validates; a broken changed config fails the step, other YAML does not;
- the GitLab template's before_script and script, the same way;
- `preflight backup` while the daemon takes writes, and a restore.

Usage: tests/packaging.py PREFLIGHT_BIN SHARED_DIR
"""
import http.client
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pflib import check, summary  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
SHARED = os.path.abspath(sys.argv[2])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(SHARED, "corpus", "axolotl", "examples")
SARIF_SCHEMA = json.load(open(os.path.join(SHARED, "schemas",
                                           "sarif-schema-2.1.0.json")))
GOOD = open(os.path.join(EXAMPLES, "llama-3", "qlora-fsdp-70b.yaml")).read()
BROKEN = ("base_model: meta-llama/Llama-3.1-8B\ndatasets:\n  - path: a\n"
          "    type: alpaca\nmicro_batch_size: 1\n"
          "gradient_accumulation_steps: 1\ndp_shard_size: 3\n"
          "learning_rate: 0.0002\n")
WORKFLOW = ("name: ci\non: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - run: make test\n")


# make's own variables (B=build/san ... when make test runs this) must not
# reach the makes run here: they build and install as a user would.
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}


def sh(cmd, **kw):
    kw.setdefault("env", CLEAN_ENV)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def help_flags(cmd):
    """The --long flags `preflight CMD --help` lists."""
    return set(re.findall(r"(--[a-z][a-z-]+)", sh([BIN, cmd, "--help"])
                          .stdout))


def install_checks():
    d = tempfile.mkdtemp()
    try:
        p = sh(["make", "-s", "install", "PREFIX=/usr/local",
                "DESTDIR=" + d], cwd=ROOT)
        got = sorted(os.path.relpath(os.path.join(dp, f), d)
                     for dp, _, fs in os.walk(d) for f in fs)
        want = sorted([
            "usr/local/bin/preflight",
            "usr/local/share/man/man1/preflight.1",
            "usr/local/share/bash-completion/completions/preflight",
            "usr/local/share/zsh/site-functions/_preflight",
            "usr/local/lib/systemd/system/preflight.service",
            "usr/local/share/doc/preflight/LICENSE",
            "usr/local/share/doc/preflight/NOTICE",
            "usr/local/share/doc/preflight/CHANGELOG.md"])
        print("installed:\n  " + "\n  ".join(got))
        check("make install into a DESTDIR installs exactly these files",
              p.returncode == 0 and got == want, (p.stderr[-300:], got))
        binary = os.path.join(d, "usr/local/bin/preflight")
        check("the installed binary runs", os.access(binary, os.X_OK) and
              sh([binary, "version"]).stdout.startswith("preflight "))
        unit = open(os.path.join(
            d, "usr/local/lib/systemd/system/preflight.service")).read()
        check("the unit runs $(PREFIX)/bin/preflight serve, reloads with "
              "SIGHUP, DynamicUser and StateDirectory",
              "ExecStart=/usr/local/bin/preflight serve " in unit and
              "ExecReload=/bin/kill -HUP $MAINPID" in unit and
              "DynamicUser=yes" in unit and
              "StateDirectory=preflight" in unit and
              "NoNewPrivileges=yes" in unit and "@BINDIR@" not in unit)
        if shutil.which("systemd-analyze"):
            local = os.path.join(d, "preflight.service")
            open(local, "w").write(unit.replace("/usr/local/bin/preflight",
                                                binary))
            p = sh(["systemd-analyze", "verify", "--man=no", local])
            check("systemd-analyze verify accepts the unit",
                  p.returncode == 0 and p.stderr == "", p.stderr)
            p = sh(["systemd-analyze", "security", "--offline=yes", local])
            m = re.search(r"exposure level for preflight.service: "
                          r"([0-9.]+)", p.stdout)
            check("systemd-analyze security rates the unit under 2.0",
                  m is not None and float(m.group(1)) < 2.0,
                  p.stdout[-200:])
        man = os.path.join(d, "usr/local/share/man/man1/preflight.1")
        if shutil.which("groff"):
            p = sh(["groff", "-mdoc", "-ww", "-z", "-Tutf8", man])
            check("preflight(1) renders without groff warnings",
                  p.returncode == 0 and p.stderr == "", p.stderr)
        src = open(man).read()
        missing = sorted(f for f in help_flags("check")
                         if "Fl " + f[1:].replace("-", "\\-", 0) not in src
                         and "Fl " + f[1:] not in src)
        check("preflight(1) describes every check flag --help lists",
              not missing, missing)
        for cmd in ("serve", "rules", "explain", "token", "migrate",
                    "backup", "health", "version"):
            check("preflight(1) describes %s" % cmd,
                  (".Cm %s" % cmd) in src or (".Ss %s" % cmd) in src)
        comp = os.path.join(d, "usr/local/share/bash-completion/"
                            "completions/preflight")
        for cmd in ("check", "serve", "backup", "health", "migrate"):
            script = ('source "%s"; PATH="%s:$PATH"; COMP_WORDS=(preflight '
                      '%s --); COMP_CWORD=2; _preflight; '
                      'printf "%%s\\n" "${COMPREPLY[@]}"'
                      % (comp, os.path.dirname(BIN), cmd))
            got = set(sh(["bash", "-c", script]).stdout.split())
            want = help_flags(cmd)
            check("bash completion of `%s --` is its --help flags" % cmd,
                  got == want, (sorted(got ^ want)))
        script = ('source "%s"; PATH="%s:$PATH"; COMP_WORDS=(preflight '
                  'check --ignore memory.exc); COMP_CWORD=3; _preflight; '
                  'echo "${COMPREPLY[@]}"' % (comp, os.path.dirname(BIN)))
        check("bash completion completes rule ids",
              sh(["bash", "-c", script]).stdout.strip() ==
              "memory.exceeds_capacity")
        zsh = open(os.path.join(d, "usr/local/share/zsh/site-functions/"
                                "_preflight")).read()
        check("zsh completion names every check flag",
              all(f in zsh for f in help_flags("check")),
              sorted(f for f in help_flags("check") if f not in zsh))
        if shutil.which("zsh"):
            check("zsh completion parses", sh(["zsh", "-n", os.path.join(
                d, "usr/local/share/zsh/site-functions/_preflight")])
                .returncode == 0)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def deps_checks():
    d = tempfile.mkdtemp()
    try:
        real = shutil.which("pkg-config")
        fake = os.path.join(d, "pkg-config")
        open(fake, "w").write(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = cmocka ] && exit 1; "
            "done\nexec %s \"$@\"\n" % real)
        os.chmod(fake, 0o755)
        for tool in ("cc", "python3", "id", "sh", "make", "curl", "jq",
                     "openssl", "chromium"):
            w = shutil.which(tool)
            if w:
                os.symlink(w, os.path.join(d, tool))
        env = dict(CLEAN_ENV, PATH=d, DEPS_DRY_RUN="1")

        def deps(target):
            p = sh([shutil.which("make"), "-s", target,
                    "PKG_CONFIG=" + fake], cwd=ROOT, env=env)
            return p.stdout.strip() + p.stderr.strip()

        check("make deps (building) needs nothing more without cmocka and "
              "wrk", deps("deps") == "nothing missing", deps("deps"))
        check("make test-deps asks for cmocka",
              deps("test-deps") == "missing: libcmocka-dev")
        check("make bench-deps asks for cmocka and wrk",
              deps("bench-deps") == "missing: libcmocka-dev wrk")
        p = sh(["make", "-n", "all"], cwd=ROOT)
        check("make (all) runs only the build's deps",
              "deps.sh build" in p.stdout and "deps.sh test" not in
              p.stdout and "cmocka" not in p.stdout, p.stdout[:300])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def version_checks():
    p = sh([BIN, "version"])
    head = sh(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT).stdout
    check("version: the version, the git commit and the Axolotl commit",
          re.match(r"^preflight \d+\.\d+\.\d+ \(git [0-9a-f]{12}(-dirty)?; "
                   r"rules follow axolotl [0-9a-f]{40}\)$", p.stdout.strip())
          is not None and (not head or head.strip() in p.stdout), p.stdout)


def start(env, db):
    """`serve` with env; (process, port, log)."""
    log = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([BIN, "serve", "--db", db],
                            stdout=subprocess.DEVNULL, stderr=log, env=env)
    deadline = time.time() + 10
    while time.time() < deadline:
        log.seek(0)
        for line in log:
            if '"listening"' in line:
                return proc, json.loads(line)["port"], log
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    log.seek(0)
    raise RuntimeError("server did not start: " + log.read())


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body, headers or {})
    r = c.getresponse()
    return r.status, r.read()


def docker_checks():
    text = open(os.path.join(ROOT, "Dockerfile")).read()
    flat = text.replace("\\\n", " ")
    stages = flat.split("\nFROM ")
    final = stages[-1]
    check("Dockerfile: EXPOSE 8080, a VOLUME for the database, non-root",
          re.search(r"^EXPOSE 8080$", final, re.M) and
          'VOLUME ["/var/lib/preflight"]' in final and
          re.search(r"^USER preflight$", final, re.M) and
          "PREFLIGHT_DB=/var/lib/preflight/preflight.db" in final)
    labels = re.findall(r"org\.opencontainers\.image\.([a-z]+)=", final)
    check("Dockerfile: OCI labels", {"title", "description", "version",
                                     "revision", "licenses", "source"} <=
          set(labels), labels)
    runs = [l for l in flat.splitlines() if l.startswith("RUN ")]
    check("Dockerfile: the image build runs no test suite",
          runs and not any(re.search(r"\bmake\b[^&]*\btest", r)
                           for r in runs), runs)
    hc = re.search(r"^HEALTHCHECK .*CMD (\[.*\])$", final, re.M)
    envs = dict(re.findall(r"(PREFLIGHT_[A-Z]+)=(\S+)", final))
    check("Dockerfile: HEALTHCHECK is the binary probing itself",
          hc is not None and json.loads(hc.group(1))[1:] == ["health"])
    argv = [BIN] + json.loads(hc.group(1))[1:]
    d = tempfile.mkdtemp()
    try:
        db = os.path.join(d, "preflight.db")
        env = dict(CLEAN_ENV, **envs)
        env["PREFLIGHT_DB"] = db
        # The documented token line, then the daemon as the image runs it
        # (0.0.0.0, --auth token; port 0 here).
        p = sh([BIN, "token", "create", "--team", "ml"], env=env)
        token = p.stdout.strip().split()[-1] if p.returncode == 0 else ""
        check("docker run ... token create prints a token",
              token.startswith("pf_"), p.stdout + p.stderr)
        env["PREFLIGHT_LISTEN"] = "0.0.0.0:0"
        proc, port, log = start(env, db)
        try:
            env["PREFLIGHT_LISTEN"] = "0.0.0.0:%d" % port
            p = sh(argv, env=env)
            check("HEALTHCHECK command: 0 with the daemon up",
                  p.returncode == 0, p.stderr)
            st, _ = request(port, "GET", "/v1/checks")
            st2, _ = request(port, "GET", "/v1/checks", headers={
                "Authorization": "Bearer " + token})
            check("the image's daemon wants the token", st == 401 and
                  st2 == 200, (st, st2))
        finally:
            proc.terminate()
            proc.wait()
        p = sh(argv, env=env)
        check("HEALTHCHECK command: 1 with the daemon down",
              p.returncode == 1, p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def git(repo, *args):
    p = sh(["git", "-c", "user.email=t@t", "-c", "user.name=t"] +
           list(args), cwd=repo)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def scratch_repo(d):
    """A repository with a base commit, then a branch that changes an
    Axolotl config, adds a broken one and a workflow; (repo, base sha)."""
    repo = os.path.join(d, "repo")
    os.makedirs(os.path.join(repo, "configs"))
    git(repo, "init", "-q", "-b", "main")
    open(os.path.join(repo, "configs", "old.yaml"), "w").write(GOOD)
    open(os.path.join(repo, "configs", "untouched.yaml"), "w").write(BROKEN)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    os.makedirs(os.path.join(repo, ".github", "workflows"))
    open(os.path.join(repo, ".github", "workflows", "ci.yml"),
         "w").write(WORKFLOW)
    open(os.path.join(repo, "configs", "old.yaml"), "a").write("\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "change")
    return repo, base


def gh_expr(expr, ctx):
    """The ${{ }} expressions action.yml uses, evaluated."""
    def value(m):
        name = m.group(1).strip()
        return ctx.get(name, "")
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", value, expr)


def gh_if(cond, ctx):
    """`if:` conditions: always(), hashFiles(...) != '', a == 'x', a != ''
    joined by &&."""
    ok = True
    for part in cond.split("&&"):
        part = part.strip()
        if part == "always()":
            continue
        m = re.match(r"^hashFiles\(([^)]+)\) != ''$", part)
        if m:
            ok = ok and os.path.exists(os.path.join(
                ctx["github.workspace"], ctx.get(m.group(1).strip(), "")))
            continue
        m = re.match(r"^([a-z.\-]+) (==|!=) '([^']*)'$", part)
        assert m, part
        eq = ctx.get(m.group(1), "") == m.group(3)
        ok = ok and (eq if m.group(2) == "==" else not eq)
    return ok


def run_action(repo, base, inputs):
    """Every step of action.yml in order, as the runner would; (statuses
    of the run steps, the upload step's sarif path or None, logs)."""
    action = yaml.safe_load(open(os.path.join(ROOT, "action.yml")))
    ctx = {"inputs." + k: str(v.get("default", "")) for k, v in
           action["inputs"].items()}
    ctx.update({"inputs." + k: v for k, v in inputs.items()})
    ctx.update({"github.action_path": ROOT, "github.workspace": repo,
                "github.event.pull_request.base.sha": base})
    tmp = tempfile.mkdtemp()
    genv = os.path.join(tmp, "github_env")
    open(genv, "w").close()
    env = dict(CLEAN_ENV, GITHUB_ENV=genv, GITHUB_ACTION_PATH=ROOT,
               RUNNER_TEMP=tmp, GITHUB_WORKSPACE=repo)
    statuses, upload, logs = [], None, ""
    failed = False
    for step in action["runs"]["steps"]:
        cond = step.get("if", "success()")
        if cond == "success()":
            if failed:
                continue
        elif "always()" not in cond and failed:
            continue
        elif not gh_if(cond, ctx):
            continue
        if "uses" in step:
            upload = gh_expr(step["with"]["sarif_file"], ctx)
            continue
        step_env = dict(env)
        for k, v in step.get("env", {}).items():
            step_env[k] = gh_expr(str(v), ctx)
        for line in open(genv):
            k, _, v = line.rstrip("\n").partition("=")
            step_env[k] = v
            env[k] = v
        p = sh(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                gh_expr(step["run"], ctx)], cwd=repo, env=step_env)
        logs += p.stdout + p.stderr
        statuses.append((step["name"], p.returncode))
        failed = failed or p.returncode != 0
    shutil.rmtree(tmp, ignore_errors=True)
    return statuses, upload, logs


def action_checks():
    d = tempfile.mkdtemp()
    try:
        repo, base = scratch_repo(d)
        # The whole action, building from this source (make is a no-op
        # when build/preflight is current).
        statuses, upload, logs = run_action(repo, base, {"gpus": "8"})
        names = [n for n, _ in statuses]
        check("action: build, find, check steps run and pass on a PR that "
              "changes a good config and a workflow",
              names == ["Build preflight", "Find the configs to check",
                        "Check"] and all(s == 0 for _, s in statuses),
              (statuses, logs[-600:]))
        sarif = json.load(open(os.path.join(repo, upload)))
        res = sarif["runs"][0]["results"]
        check("action: the SARIF it uploads validates, with the changed "
              "config's findings only and relative URIs",
              not list(jsonschema.Draft4Validator(SARIF_SCHEMA)
                       .iter_errors(sarif)) and res and all(
                  r["locations"][0]["physicalLocation"]["artifactLocation"]
                  ["uri"] == "configs/old.yaml" for r in res))
        check("action: annotations are workflow commands",
              "::warning file=configs/old.yaml,line=" in logs and
              "ci.yml" not in logs.replace("skipped", ""), logs[-400:])
        # A broken config in the pull request fails the Check step; the
        # upload still runs (always()).
        open(os.path.join(repo, "configs", "new.yaml"), "w").write(BROKEN)
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "broken")
        statuses, upload, logs = run_action(
            repo, base, {"gpus": "8", "preflight": BIN,
                         "sarif-file": "out/p.sarif"})
        check("action: a broken changed config fails Check, SARIF still "
              "uploaded", statuses[-1] == ("Check", 1) and
              upload == "out/p.sarif" and os.path.exists(os.path.join(
                  repo, upload)) and "::error file=configs/new.yaml,"
              "line=7,col=1,title=parallel.nd_product_mismatch::" in logs,
              (statuses, upload, logs[-400:]))
        # On a push (no base): every config under paths.
        statuses, upload, logs = run_action(
            repo, "", {"gpus": "8", "preflight": BIN, "paths": "configs",
                       "fail-on": "warning"})
        check("action: on a push, paths is walked (untouched configs too)",
              statuses[-1] == ("Check", 1) and "configs/untouched.yaml"
              in logs, logs[-400:])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def gitlab_checks():
    tpl = yaml.safe_load(open(os.path.join(ROOT, "packaging",
                                           "preflight.gitlab-ci.yml")))
    job = tpl["preflight"]
    check("gitlab: the job reports Code Quality and JUnit",
          job["artifacts"]["reports"] == {
              "codequality": "gl-code-quality.json",
              "junit": "preflight-junit.xml"} and
          job["artifacts"]["when"] == "always")
    d = tempfile.mkdtemp()
    try:
        repo, base = scratch_repo(d)

        def run(extra):
            env = dict(CLEAN_ENV, **{k: str(v) for k, v in
                                      tpl["variables"].items()})
            env.update(extra)
            script = "\n".join(job["before_script"] + job["script"])
            return sh(["bash", "--noprofile", "--norc", "-e", "-c", script],
                      cwd=repo, env=env)

        p = run({"PREFLIGHT_BIN": BIN, "PREFLIGHT_GPUS": "8",
                 "CI_MERGE_REQUEST_DIFF_BASE_SHA": base})
        cq = json.load(open(os.path.join(repo, "gl-code-quality.json")))
        ET.parse(os.path.join(repo, "preflight-junit.xml"))
        check("gitlab: an MR changing a good config and a workflow passes",
              p.returncode == 0 and cq and all(
                  i["location"]["path"] == "configs/old.yaml" for i in cq),
              p.stdout[-300:] + p.stderr[-300:])
        open(os.path.join(repo, "configs", "new.yaml"), "w").write(BROKEN)
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "broken")
        p = run({"PREFLIGHT_BIN": BIN, "PREFLIGHT_GPUS": "8",
                 "CI_MERGE_REQUEST_DIFF_BASE_SHA": base})
        cq = json.load(open(os.path.join(repo, "gl-code-quality.json")))
        junit = ET.parse(os.path.join(repo, "preflight-junit.xml"))
        check("gitlab: a broken changed config fails the job, reported in "
              "both artifacts", p.returncode == 1 and any(
                  i["location"]["path"] == "configs/new.yaml" and
                  i["severity"] == "critical" for i in cq) and
              junit.getroot().find("testsuite[@name='configs/new.yaml']/"
                                   "testcase/failure") is not None,
              p.stdout[-300:])
        p = run({"PREFLIGHT_BIN": BIN, "PREFLIGHT_PATHS": "configs/old.yaml"})
        check("gitlab: outside an MR, PREFLIGHT_PATHS is checked",
              p.returncode == 0 and "configs/old.yaml" in p.stdout)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def backup_checks():
    d = tempfile.mkdtemp()
    try:
        db = os.path.join(d, "live.db")
        proc, port, log = start(dict(CLEAN_ENV,
                                     PREFLIGHT_LISTEN="127.0.0.1:0"), db)
        stop = threading.Event()
        posted = []

        def writer():
            while not stop.is_set():
                st, _ = request(port, "POST", "/v1/checks?name=w&gpus=8",
                                GOOD, {"Content-Type": "application/yaml"})
                posted.append(st)

        try:
            for _ in range(5):
                request(port, "POST", "/v1/checks?name=a", GOOD,
                        {"Content-Type": "application/yaml"})
            t = threading.Thread(target=writer)
            t.start()
            time.sleep(0.2)
            copy = os.path.join(d, "copy.db")
            p = sh([BIN, "backup", "--db", db, "--to", copy])
            stop.set()
            t.join()
            con = sqlite3.connect(copy)
            n = con.execute("select count(*) from checks").fetchone()[0]
            ok = con.execute("pragma integrity_check").fetchone()[0]
            con.close()
            check("backup while the daemon takes writes: a consistent copy",
                  p.returncode == 0 and ok == "ok" and n >= 5 and
                  posted and all(s == 201 for s in posted) and
                  "backed up" in p.stdout, (p.stdout, p.stderr, n))
            p = sh([BIN, "backup", "--db", db, "--to", copy])
            check("backup will not overwrite without --force",
                  p.returncode == 1 and "exists" in p.stderr)
        finally:
            proc.terminate()
            proc.wait()
        # Restore: stopped daemon, the copy over the live database.
        p = sh([BIN, "backup", "--db", copy, "--to", db, "--force"])
        con = sqlite3.connect(db)
        m = con.execute("select count(*) from checks").fetchone()[0]
        con.close()
        check("restore with --force gives the copy's rows",
              p.returncode == 0 and m == n, (p.stderr, m, n))
        p = sh([BIN, "backup", "--db", os.path.join(d, "none.db"), "--to",
                os.path.join(d, "x.db")])
        check("backup of a missing database fails and creates nothing",
              p.returncode == 1 and not os.path.exists(
                  os.path.join(d, "none.db")) and not os.path.exists(
                  os.path.join(d, "x.db")))
    finally:
        shutil.rmtree(d, ignore_errors=True)


install_checks()
deps_checks()
version_checks()
docker_checks()
action_checks()
gitlab_checks()
backup_checks()
sys.exit(summary())
