"""``alienbench reproduce``: dataset -> main analysis -> ablations -> figures/report -> files -> check.

The optional stages run when their modules exist in the checkout: ``analysis.ablations.run_all``,
``analysis.figures.draw_all``, ``analysis.reanalysis.write_reanalysis`` and
``analysis.report.write_report``. A failing optional stage is reported and makes the exit code
non-zero, but never prevents the main results from being written.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ._optional import optional_module
from .check import CheckContext, CheckRow, exit_code, format_rows, run_checks
from .data import Inputs, load_inputs
from .main import MainResults, run_main
from .provenance import provenance, write_provenance
from .writers import write_main

__all__ = ["DEFAULT_RELEASE", "Outcome", "find_release_results", "reproduce"]

DEFAULT_RELEASE = Path("..") / "shared" / "alienbench-release"
Say = Callable[[str], None]


@dataclass
class Outcome:
    """What a reproduce run produced."""

    out_dir: Path
    main: MainResults
    paths: list[Path] = field(default_factory=list)
    check_rows: list[CheckRow] | None = None
    stage_errors: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if self.check_rows is not None and exit_code(self.check_rows):
            return 1
        return 2 if self.stage_errors else 0


def find_release_results(release: str | os.PathLike[str] | None) -> Path:
    """The authors' ``results/`` folder: ``release`` itself if it holds summary.txt, else ``release/results``."""
    root = Path(release) if release is not None else DEFAULT_RELEASE
    for cand in (root, root / "results"):
        if (cand / "summary.txt").is_file():
            return cand
    raise FileNotFoundError(
        f"reproduce --check: no authors' results/ (with summary.txt) at {root} or {root / 'results'}; pass "
        "--release PATH pointing at the authors' release (default ../shared/alienbench-release)")



def _tables(res: MainResults) -> dict[str, pd.DataFrame]:
    from .writers import reliability_csv_frame

    t = {
        "table_length_adjusted_per_model": res.length_per_model,
        "table_posthoc": res.posthoc,
        "table_departure_freq": res.departure_pooled,
        "table_token_covariate_per_condition": res.token_per_condition,
        "table_length_adjusted_posthoc": res.length_posthoc,
        "table_length_adjusted_divergence": res.divergence,
        "table_human_vs_models": res.human_vs_model_tests,
    }
    if len(res.reliability):
        t["table_reliability"] = reliability_csv_frame(res.reliability)
    return t


def reproduce(data_dir: str | os.PathLike[str] | None = None, out_dir: str | os.PathLike[str] = "results", *,
              release: str | os.PathLike[str] | None = None, check: bool = False, figures: bool = True,
              ablations: bool = True, say: Say | None = None, only_problems: bool = False) -> Outcome:
    """Recompute everything from the dataset into ``out_dir`` and optionally check it against the authors' files.

    Parameters
    ----------
    data_dir : path, optional
        Built dataset folder (default ``$ALIENBENCH_DATA`` or ``./alienbench``).
    out_dir : path
        Results folder (created).
    release : path, optional
        The authors' release (or its ``results/``) for ``check``; default ``../shared/alienbench-release``.
    check : bool
        Compare every recomputed number with the authors' files and print the table.
    figures, ablations : bool
        Run the optional figure/report and ablation stages when their modules exist.
    say : callable, optional
        Progress sink (default: print to stderr).
    """
    say = say or (lambda s: print(s, file=sys.stderr, flush=True))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    errors: dict[str, str] = {}
    release_results = find_release_results(release) if check else None  # fail fast before the long work

    def timed(label: str, fn: Callable[[], Any]) -> Any:
        say(f"[reproduce] {label} ...")
        t0 = time.perf_counter()
        value = fn()
        timings[label] = time.perf_counter() - t0
        say(f"[reproduce] {label}: done in {timings[label]:.2f}s")
        return value

    def optional(label: str, fn: Callable[[], Any]) -> Any:
        try:
            return timed(label, fn)
        except Exception as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"
            say(f"[reproduce] {label}: FAILED ({errors[label]})\n{traceback.format_exc()}")
            return None

    inputs: Inputs = timed("load dataset", lambda: load_inputs(data_dir))
    say(f"[reproduce] dataset v{inputs.dataset_version} ({inputs.manifest_sha256[:12]}...): {len(inputs.R)} score "
        f"rows, {len(inputs.A1)} generations, {len(inputs.models)} models")
    res: MainResults = timed("main analysis (spec 4, 7.1)", lambda: run_main(
        inputs, progress=lambda step, sec: say(f"    {step}: {sec:.2f}s")))
    paths: list[Path] = timed("write CSV / summary / LaTeX", lambda: write_main(res, out))
    extra: dict[str, Any] = {"main": res}
    if ablations and (mod := optional_module("analysis.ablations")) is not None and hasattr(mod, "run_all"):
        extra["ablations"] = optional("ablations (spec 8-10)", lambda: mod.run_all(inputs, out))
    if figures:
        tables = _tables(res)
        figs: list[Path] = []
        if (fmod := optional_module("analysis.figures")) is not None and hasattr(fmod, "draw_all"):
            figs = optional("figures", lambda: fmod.draw_all(inputs, out, tables=tables)) or []
            paths += figs
        if (rmod := optional_module("analysis.reanalysis")) is not None and hasattr(rmod, "write_reanalysis"):
            paths += optional("reanalysis", lambda: rmod.write_reanalysis(inputs, out)) or []
        if (pmod := optional_module("analysis.report")) is not None and hasattr(pmod, "write_report"):
            def report() -> Path:
                board = pmod.leaderboard(inputs) if hasattr(pmod, "leaderboard") else res.model_scores
                return pmod.write_report(out, leaderboard=board, tables=tables, figures=figs,
                                         provenance=_prov(inputs, res, timings, errors))
            rp = optional("HTML report", report)
            if rp is not None:
                paths.append(rp)
    paths.append(write_provenance(_prov(inputs, res, timings, errors), out))
    outcome = Outcome(out_dir=out, main=res, paths=paths, stage_errors=errors, timings=timings)
    if check:
        assert release_results is not None
        ctx = CheckContext(out_dir=out, release_results=release_results, extra=extra)
        skip = {} if ablations else {"ablation-": "ablations were not run (--no-ablations)"}
        rows = timed("check against the authors' files", lambda: run_checks(ctx, skip=skip))
        outcome.check_rows = rows
        print(format_rows(rows, only_problems=only_problems))
    say(f"[reproduce] wrote {len(paths)} files to {out}")
    return outcome


def _prov(inputs: Inputs, res: MainResults, timings: dict[str, float], errors: dict[str, str]) -> dict[str, Any]:
    return provenance(
        data_dir=inputs.data_dir, dataset_version=inputs.dataset_version, manifest_sha256=inputs.manifest_sha256,
        parameters={**res.params, "bootstrap_scheme": "fresh default_rng(seed) per call; generation_id order",
                    "power_grid": "linspace(0.05, 0.95, 19)"},
        timings={**timings, **{f"main/{k}": v for k, v in res.timings.items()}},
        extra={"stage_errors": dict(errors)} if errors else None,
    )
