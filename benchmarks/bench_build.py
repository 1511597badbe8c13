"""Timings of the data package on the real release: build, warm load of each config, validate.

Targets (issue 2, 2 cores): full build <= 15 s; warm ``load`` of any config <= 1 s.
Run: python benchmarks/bench_build.py [--release PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from alienbench_data import load
from alienbench_data.build import DEFAULT_RELEASE, build
from alienbench_data.schema import CONFIGS
from alienbench_data.validate import validate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--release", default=str(DEFAULT_RELEASE))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "alienbench"
        builds = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            build(args.release, out)
            builds.append(time.perf_counter() - t0)
        best = min(builds)
        print(f"build (full release)        best {best:6.2f} s  of {args.repeat}  target 15 s  ratio {best / 15:.2f}")
        for config in CONFIGS:
            load(config, data_dir=out)  # cold: hashes the files once
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                load(config, data_dir=out)
                times.append(time.perf_counter() - t0)
            t = min(times)
            print(f"warm load {config:16s}  best {t:6.3f} s  of 5  target 1 s   ratio {t:.2f}")
        t0 = time.perf_counter()
        problems = validate(out)
        print(f"validate (incl. load_dataset) {time.perf_counter() - t0:6.2f} s  problems: {len(problems)}")


if __name__ == "__main__":
    main()
