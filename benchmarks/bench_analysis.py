"""Benchmark of the full main analysis (spec 4.1-4.9 and 7.1; figures excluded).

Runs every 10,000-replicate bootstrap (per-model CIs, 30 rank-biserial CIs, per-model per-100-token
CIs, the human-vs-model RB CIs), the 5,000-replicate Spearman bootstraps and the 34 x 2,000-simulation
power analysis, and prints the wall time per step, the total wall and CPU time, and the peak
resident memory (``resource.getrusage``). Target: <= 10 s wall on 2 cores, <= 1 GB.

Usage::

    PYTHONPATH=. python benchmarks/bench_analysis.py [--data DIR] [--repeat N] [--write DIR]

``--data`` defaults to $ALIENBENCH_DATA or ./alienbench. The load step is timed separately (it
verifies every file's sha256); each repeat starts with cold bootstrap caches. Wall time on a shared
machine includes waiting for the CPU: compare it with the CPU time and the load average printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis import stats
from analysis.data import load_inputs
from analysis.main import run_main


def _clear_caches() -> None:
    for f in (stats._boot_indices_cached, stats._boot_pair_indices_cached, stats._mult_cached,
              stats._pair_mult_cached):
        f.cache_clear()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--write", default=None, help="also write the results folder (CSV, summary, LaTeX) here")
    args = ap.parse_args(argv)

    print(f"cores available: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    inputs = load_inputs(args.data)
    print(f"load dataset (sha256-verified parquet -> R, A1): {time.perf_counter() - t0:6.2f} s  (not in the total)")
    best = None
    for rep in range(args.repeat):
        _clear_caches()
        w0, c0 = time.perf_counter(), time.process_time()
        res = run_main(inputs)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(f"\nrun {rep + 1}/{args.repeat}")
        for step, sec in res.timings.items():
            print(f"  {step:<40s} {sec:6.2f} s")
        print(f"  {'TOTAL main analysis (wall)':<40s} {wall:6.2f} s   (CPU {cpu:.2f} s, all threads)")
        best = wall if best is None else min(best, wall)
        if args.write:
            from analysis.writers import write_main

            w1 = time.perf_counter()
            write_main(res, args.write)
            print(f"  {'write CSV/summary/LaTeX':<40s} {time.perf_counter() - w1:6.2f} s")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nbest total wall: {best:.2f} s (target <= 10 s on 2 cores); peak RSS: {peak_mb:.0f} MB "
          f"(target <= 1024 MB; includes the loaded dataset)")
    print(f"load average now: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
