#!/usr/bin/env python3
"""CLI cold start (issue #6, item 2): `preflight check` of one config as a
whole process, median of many runs, next to `python3 -c 'import yaml'` on
the same machine (the kind of tool people run today).  Prints both and the
ratio; timings are measurements, never test assertions."""
import statistics
import subprocess
import sys
import time


def median_ms(argv, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main():
    binary, config = sys.argv[1], sys.argv[2]
    runs = 50
    pf = median_ms([binary, "check", config, "--gpus", "8"], runs)
    py = median_ms([sys.executable, "-c", "import yaml"], runs)
    print("preflight check (1 config)  %7.1f ms  median of %d" % (pf, runs))
    print("python3 -c 'import yaml'    %7.1f ms  median of %d" % (py, runs))
    print("ratio preflight/python      %7.2f" % (pf / py))


if __name__ == "__main__":
    main()
