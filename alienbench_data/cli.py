"""The ``alienbench`` command line: one entry point, one subcommand per capability.

Each subcommand lives in its own module exposing ``register(subparsers)``; the module sets
``func`` on its parser. Modules are imported lazily so ``alienbench --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# (module, description) per subcommand group; each module defines register(subparsers).
_COMMAND_MODULES: tuple[str, ...] = (
    "alienbench_data.commands",  # build, validate, publish, info
    "alienbench_data.submit_cli",  # submit
    "analysis.cli",  # reproduce, ablation, reanalyse
)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="alienbench",
        description="AlienBench: build, load, validate, publish, reproduce and extend the benchmark.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that capability is not installed in this checkout
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; completed work is kept and the next run resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
