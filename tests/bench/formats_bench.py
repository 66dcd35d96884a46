#!/usr/bin/env python3
"""`preflight check` of the corpus listed 10 times in every output format
(issue 17: each within 1.5x of text).  The median of 5 runs per format,
stdout read through a pipe as CI would.  A measurement, not a test.

Usage: tests/bench/formats_bench.py PREFLIGHT_BIN EXAMPLES_DIR [REPEAT]
"""
import os
import statistics
import subprocess
import sys
import time

BIN, EXAMPLES = os.path.abspath(sys.argv[1]), sys.argv[2]
REPEAT = int(sys.argv[3]) if len(sys.argv) > 3 else 10
FORMATS = ["text", "json", "sarif", "github", "github-checkrun", "gitlab",
           "junit"]

files = sorted(os.path.relpath(os.path.join(d, f), EXAMPLES)
               for d, _, fs in os.walk(EXAMPLES) for f in fs
               if f.endswith((".yaml", ".yml")))
args = files * REPEAT + ["--gpus", "8", "--gpu", "h100-sxm"]


def once(fmt):
    t = time.perf_counter()
    p = subprocess.Popen([BIN, "check", "--format", fmt, "--no-policy"] +
                         args, cwd=EXAMPLES, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    size = 0
    while True:
        chunk = p.stdout.read(1 << 16)
        if not chunk:
            break
        size += len(chunk)
    p.wait()
    return time.perf_counter() - t, size


results = {}
for fmt in FORMATS:
    once(fmt)  # warm the page cache
    runs = [once(fmt) for _ in range(5)]
    results[fmt] = (statistics.median(r[0] for r in runs), runs[0][1])
base = results["text"][0]
print("%d files (the corpus x %d), median of 5:" % (len(args) - 4, REPEAT))
worst = 0.0
for fmt in FORMATS:
    t, size = results[fmt]
    ratio = t / base
    worst = max(worst, ratio)
    print("  %-16s %6.3f s  %5.2fx text  %8.1f KiB out" %
          (fmt, t, ratio, size / 1024))
print("  slowest format: %.2fx text (target: within 1.5x)" % worst)
