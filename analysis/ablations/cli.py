"""``alienbench ablation prompt|features|judges|all``: run one ablation (or all three) and write its files.

Registered by ``analysis.cli`` (which calls :func:`register` when this module exists); the same
entry points are available programmatically as :func:`run` and :func:`main`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Literal, get_args

__all__ = ["Kind", "main", "register", "register_ablation_commands", "run"]

Kind = Literal["prompt", "features", "judges"]
_KINDS: tuple[str, ...] = get_args(Kind)


def run(kind: Kind, *, data_dir: str | Path | None = None, out_dir: str | Path = "results",
        inputs: object = None) -> dict[str, Path]:
    """Run one ablation and write its files; returns {file name: path}.

    Parameters
    ----------
    kind : {"prompt", "features", "judges"}
    data_dir : path, optional
        Built dataset folder (default ``$ALIENBENCH_DATA`` or ``./alienbench``); ignored when
        ``inputs`` is given.
    out_dir : path
        Results folder to write.
    inputs : AblationInputs or analysis.data.Inputs, optional
        Already loaded inputs.
    """
    from . import _data
    from .features import feature_ablation, write_feature_outputs
    from .judges import judge_ablation, write_judge_outputs
    from .prompt import prompt_ablation, sensitivity_runs, write_prompt_outputs

    if kind not in _KINDS:
        raise ValueError(f"run: kind must be one of {_KINDS}; got {kind!r}")
    src = _data.load_ablation_inputs(inputs if inputs is not None else data_dir)
    if kind == "prompt":
        return write_prompt_outputs(prompt_ablation(src), out_dir, sensitivity=sensitivity_runs(src))
    if kind == "features":
        return write_feature_outputs(feature_ablation(src), out_dir)
    return write_judge_outputs(judge_ablation(src), out_dir)


def main(kind: str, data_dir: str | Path | None = None, out_dir: str | Path = "results", *, check: bool = False,
         release: str | Path | None = None) -> int:
    """Command body: run ``kind`` ("all" for the three), print what was written, optionally check; exit code."""
    kinds = _KINDS if kind == "all" else (kind,)
    if any(k not in _KINDS for k in kinds):
        print(f"alienbench ablation: unknown ablation {kind!r}; choose one of {', '.join(_KINDS)} or all",
              file=sys.stderr)
        return 2
    from . import _data

    try:
        src = _data.load_ablation_inputs(data_dir)
    except Exception as exc:  # a missing or broken dataset folder: say what to do
        print(f"alienbench ablation {kind}: cannot load the dataset ({exc})", file=sys.stderr)
        return 2
    for k in kinds:
        t0 = time.perf_counter()
        paths = run(k, out_dir=out_dir, inputs=src)  # type: ignore[arg-type]
        print(f"[ablation] {k}: wrote {len(paths)} files to {out_dir} in {time.perf_counter() - t0:.2f}s")
    if not check:
        return 0
    return _check(kinds, Path(out_dir), release)


def _check(kinds: tuple[str, ...], out_dir: Path, release: str | Path | None) -> int:
    try:
        from analysis.check import CheckContext, exit_code, format_rows
    except ImportError:
        print("alienbench ablation --check: analysis.check is not installed in this checkout", file=sys.stderr)
        return 2
    from ._checks import CHECKS, resolve_release_results

    results = resolve_release_results(release)
    if results is None:
        print("alienbench ablation --check: the authors' results/ folder was not found; pass --release PATH",
              file=sys.stderr)
        return 2
    ctx = CheckContext(out_dir=out_dir, release_results=results)
    rows = []
    for name, fn in CHECKS:
        if name.split(": ", 1)[0].removeprefix("ablation-") in kinds:
            rows += list(fn(ctx))
    print(format_rows(rows))
    return int(exit_code(rows))


def _cmd(args: argparse.Namespace) -> int:
    return main(args.which, args.data, args.out, check=args.check, release=args.release)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``alienbench ablation {prompt,features,judges,all}`` to the command line."""
    p = subparsers.add_parser(
        "ablation", help="run one ablation (prompt paraphrase, features, judge panel) or all three",
        description="Recompute an ablation of the paper (spec sections 8-10) from a built dataset and write its "
                    "tables, summary and LaTeX; the prompt ablation also writes the labelled sensitivity analyses.")
    p.add_argument("which", choices=(*_KINDS, "all"))
    p.add_argument("--data", metavar="DIR", default=None,
                   help="built dataset folder (default $ALIENBENCH_DATA or ./alienbench)")
    p.add_argument("--out", metavar="DIR", default="results", help="results folder to write (default ./results)")
    p.add_argument("--check", action="store_true",
                   help="compare the written files with the authors' results/; exit 1 on any FAIL")
    p.add_argument("--release", metavar="PATH", default=None,
                   help="the authors' release or its results/ folder (default ../shared/alienbench-release)")
    p.set_defaults(func=_cmd)


register_ablation_commands = register
