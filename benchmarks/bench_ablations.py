"""Benchmark of the three ablations (spec 8-10), nulls included.

Times, per ablation, everything it computes: the prompt matrices and the 30 x 10,000-draw
permutation null on one seed-0 stream; the feature LOO with its 10 x 10,000-draw nulls, the
1,023-subset search and the 1,000-draw min-k null on one seed-1 stream (about 950,000
permutations with the early stop); the judge single / LOO / size-sweep tables with their 9
10,000-draw nulls and the Krippendorff alphas. The labelled sensitivity analyses of the prompt
ablation (3 more 10,000-draw matrices) are timed separately. Writing the files is included.
Target: the three ablations together <= 10 s wall on 2 cores.

Every repeat starts cold: the cached seed-0 permutation prefix is cleared first.

Usage::

    PYTHONPATH=. python benchmarks/bench_ablations.py [--data DIR] [--repeat N] [--out DIR]

Wall time on a shared machine includes waiting for the CPU: compare it with the CPU time and the
load average printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.ablations import _exact
from analysis.ablations._data import load_ablation_inputs
from analysis.ablations.features import feature_ablation, write_feature_outputs
from analysis.ablations.judges import judge_ablation, write_judge_outputs
from analysis.ablations.prompt import prompt_ablation, sensitivity_runs, write_prompt_outputs


def _timed(label: str, fn, rows: list[tuple[str, float, float]]):  # type: ignore[no-untyped-def]
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    rows.append((label, time.perf_counter() - w0, time.process_time() - c0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="built dataset folder (default $ALIENBENCH_DATA or ./alienbench)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", default=None, help="results folder to write (default: a temporary folder)")
    args = ap.parse_args(argv)

    print(f"cores available: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    inputs = load_ablation_inputs(args.data)
    print(f"load dataset (sha256-verified parquet): {time.perf_counter() - t0:6.2f} s  (not in the total)")
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        for rep in range(args.repeat):
            _exact._PREFIX_CACHE.clear()
            rows: list[tuple[str, float, float]] = []
            res = _timed("prompt paraphrase (spec 8)", lambda: prompt_ablation(inputs), rows)
            _timed("  write prompt files", lambda: write_prompt_outputs(res, out), rows)  # noqa: B023
            fr = _timed("features: LOO, 1,023 subsets, min-k null (9)", lambda: feature_ablation(inputs), rows)
            _timed("  write feature files", lambda: write_feature_outputs(fr, out), rows)  # noqa: B023
            jr = _timed("judge panel (spec 10)", lambda: judge_ablation(inputs), rows)
            _timed("  write judge files", lambda: write_judge_outputs(jr, out), rows)  # noqa: B023
            wall, cpu = sum(r[1] for r in rows), sum(r[2] for r in rows)
            sens_rows: list[tuple[str, float, float]] = []
            sens = _timed("prompt sensitivity analyses (issue 4)", lambda: sensitivity_runs(inputs), sens_rows)
            _timed("  write with sensitivity files", lambda: write_prompt_outputs(res, out, sensitivity=sens),  # noqa: B023
                   sens_rows)
            print(f"\nrun {rep + 1}/{args.repeat}")
            for label, w, c in rows:
                print(f"  {label:<48s} {w:6.2f} s wall  {c:6.2f} s CPU")
            print(f"  {'TOTAL three ablations':<48s} {wall:6.2f} s wall  {cpu:6.2f} s CPU   (target <= 10 s wall)")
            for label, w, c in sens_rows:
                print(f"  {label:<48s} {w:6.2f} s wall  {c:6.2f} s CPU   (extra)")
            best = wall if best is None else min(best, wall)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nbest total wall over {args.repeat} run(s): {best:.2f} s; peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
