"""CLI subcommands of the data package: build, validate, publish, info."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import AlienbenchError

__all__ = ["register"]


def _default_release() -> Path:
    from .build import DEFAULT_RELEASE

    return DEFAULT_RELEASE


def _cmd_build(args: argparse.Namespace) -> int:
    from .build import build

    release = Path(args.release) if args.release else _default_release()
    if not release.exists():
        print(f"alienbench build: no release at {release}; pass --release PATH (the authors' release root)",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        manifest, report = build(release, args.out, version=args.version,
                                 exclude_models=tuple(args.exclude_model or ()), overwrite=args.overwrite)
    except AlienbenchError as exc:
        print(f"alienbench build: {exc}", file=sys.stderr)
        return 1
    dt = time.perf_counter() - t0
    print(f"built {args.out} v{manifest.version} in {dt:.1f}s  manifest sha256 {manifest.sha256}")
    for f in sorted(manifest.files, key=lambda f: f.path):
        print(f"  {f.path:55s} {f.rows:>7,d} rows  {f.sha256[:12]}")
    left_out = {k: v for k, v in report.counts.items() if k.startswith(("unused", "parse_error"))}
    if left_out:
        print("  left out (outside the canonical selection): "
              + ", ".join(f"{k}={v}" for k, v in sorted(left_out.items())))
    for p in report.ignored_paths:
        print(f"  ignored: {p}")
    for w in report.warnings:
        print(f"  warning: {w}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate

    problems = validate(args.dir, expect_design=not args.no_design)
    if problems:
        for p in problems:
            print(p)
        print(f"alienbench validate: {len(problems)} problem(s) in {args.dir}", file=sys.stderr)
        return 1
    print(f"{args.dir}: valid")
    return 0


def _cmd_publish(args: argparse.Namespace) -> int:
    from .publish import publish

    try:
        publish(args.dir, repo_id=args.repo, dry_run=args.dry_run, endpoint=args.endpoint,
                version=args.version, out=sys.stdout)
    except AlienbenchError as exc:
        print(f"alienbench {exc}", file=sys.stderr)  # messages start with "publish:"
        return 1
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from .loader import manifest_of

    m = manifest_of(args.dir)
    print(f"{args.dir}: AlienBench v{m.version}, manifest sha256 {m.sha256}")
    print(f"  judge config sha256 {m.judge_config_sha256}")
    print(f"  models: {', '.join(m.models)}")
    for f in sorted(m.files, key=lambda f: f.path):
        print(f"  {f.path:55s} {f.rows:>7,d} rows")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="build the dataset folder from the authors' raw release")
    p.add_argument("--release", help="release root (default ../shared/alienbench-release)")
    p.add_argument("--out", default="alienbench", help="output dataset folder (default ./alienbench)")
    p.add_argument("--version", default="1.0.0", help="semantic version of the build (default 1.0.0)")
    p.add_argument("--exclude-model", action="append", metavar="MODEL",
                   help="leave a configured model out (repeatable; e.g. to test a replay submission)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing folder even if it holds later (appended) versions")
    p.set_defaults(func=_cmd_build)

    p = sub.add_parser("validate", help="check a dataset folder: schema, keys, labels, scores, counts, checksums")
    p.add_argument("dir", nargs="?", default="alienbench")
    p.add_argument("--no-design", action="store_true",
                   help="skip the per-cell design counts (for partial or synthetic datasets)")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("publish", help="publish the current version to the Hub as one adds-only commit + tag")
    p.add_argument("dir", nargs="?", default="alienbench")
    p.add_argument("--repo", required=True, help="Hub dataset repo id, e.g. org/alienbench")
    p.add_argument("--version", help="version to publish (default: the current one)")
    p.add_argument("--endpoint", help="Hub endpoint URL (default: HF_ENDPOINT or https://huggingface.co)")
    p.add_argument("--dry-run", action="store_true", help="print the plan (files, sizes, sha256) offline")
    p.set_defaults(func=_cmd_publish)

    p = sub.add_parser("info", help="print a dataset folder's version, hashes and files")
    p.add_argument("dir", nargs="?", default="alienbench")
    p.set_defaults(func=_cmd_info)
