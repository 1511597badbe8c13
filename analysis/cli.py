"""``alienbench reproduce`` and ``alienbench ablation ...`` (registered by ``alienbench_data.cli``).

Hooks for the other analysis modules:

* ``analysis.ablations.cli``: if it defines ``register(subparsers)`` it owns the ``ablation``
  command entirely; otherwise, if it defines ``run(name, args) -> int``, the ``ablation
  {prompt,features,judges}`` command parsed here delegates to it.
* ``analysis.reanalysis`` / ``analysis.report``: a ``register(subparsers)`` there is called too
  (e.g. for ``reanalyse``).
"""

from __future__ import annotations

import argparse
import sys

from ._optional import optional_module

__all__ = ["register"]



def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import reproduce

    try:
        outcome = reproduce(args.data, args.out, release=args.release, check=args.check,
                            figures=not args.no_figures, ablations=not args.no_ablations,
                            only_problems=args.only_problems)
    except FileNotFoundError as exc:
        print(f"alienbench reproduce: {exc}", file=sys.stderr)
        return 2
    if outcome.stage_errors:
        print("alienbench reproduce: optional stages failed: " + "; ".join(
            f"{k}: {v}" for k, v in outcome.stage_errors.items()), file=sys.stderr)
    if outcome.check_rows is not None and outcome.exit_code == 1:
        print("alienbench reproduce --check: FAIL (see the rows marked FAIL above)", file=sys.stderr)
    return outcome.exit_code


def _cmd_ablation(args: argparse.Namespace) -> int:
    mod = optional_module("analysis.ablations.cli")
    if mod is None or not hasattr(mod, "run"):
        print(f"alienbench ablation {args.which}: the ablations module (analysis.ablations.cli.run) is not "
              "installed in this checkout", file=sys.stderr)
        return 2
    return int(mod.run(args.which, args) or 0)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``reproduce`` and ``ablation`` to the ``alienbench`` command line."""
    p = subparsers.add_parser(
        "reproduce", help="recompute every table, figure and test of the paper from the dataset",
        description="Recompute the main analysis (and, when installed, the ablations, figures and report) from a "
                    "built dataset, write the results folder with provenance, and optionally check every number "
                    "against the authors' reported files.")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="built dataset folder (default $ALIENBENCH_DATA or ./alienbench)")
    p.add_argument("--out", metavar="DIR", default="results", help="results folder to write (default ./results)")
    p.add_argument("--check", action="store_true",
                   help="compare every recomputed number with the authors' results/; exit 1 on any FAIL")
    p.add_argument("--release", metavar="PATH", default=None,
                   help="the authors' release or its results/ folder (default ../shared/alienbench-release)")
    p.add_argument("--no-figures", action="store_true", help="skip figures, reanalysis and the HTML report")
    p.add_argument("--no-ablations", action="store_true", help="skip the ablations (spec sections 8-10)")
    p.add_argument("--only-problems", action="store_true",
                   help="with --check, print only KNOWN-DIFF and FAIL rows (the counts cover all rows)")
    p.set_defaults(func=_cmd_reproduce)

    abl = optional_module("analysis.ablations.cli")
    if abl is not None and hasattr(abl, "register"):
        abl.register(subparsers)
    else:
        a = subparsers.add_parser("ablation", help="run one ablation (prompt paraphrase, features, judge panel)")
        a.add_argument("which", choices=("prompt", "features", "judges"))
        a.add_argument("--data", metavar="DIR", default=None)
        a.add_argument("--out", metavar="DIR", default="results")
        a.add_argument("--check", action="store_true")
        a.add_argument("--release", metavar="PATH", default=None)
        a.set_defaults(func=_cmd_ablation)
    for name in ("analysis.reanalysis", "analysis.report"):
        mod = optional_module(name)
        if mod is not None and hasattr(mod, "register"):
            mod.register(subparsers)
