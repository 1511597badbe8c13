"""``alienbench submit``: score a new model with the fixed judge panel and append it to the dataset."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["register", "run"]

_EPILOG = """\
examples:
  alienbench submit --data alienbench --generations my-model.jsonl
  alienbench submit --data alienbench --generations my-model.jsonl --validate-only
  alienbench submit --data alienbench --generate myorg/my-model --generations my-model.jsonl
  alienbench submit --data new --generations responses.jsonl --model-name check/gpt-5.4 --replay full

Keys are read from the environment only: OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_CLOUD_PROJECT
(+ application default credentials, GOOGLE_CLOUD_LOCATION), OPENROUTER_API_KEY for --generate.
A killed run resumes: rerun the same command; completed calls are read from the journal.
"""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``submit`` subcommand to the ``alienbench`` parser."""
    p = subparsers.add_parser(
        "submit",
        help="score a new model with the fixed judge panel and append it as a new dataset version",
        description=(
            "Validate a model's 180 generations (6 conditions x 30 samples), judge them with the "
            "fixed three-judge panel (540 calls), and append the model to the dataset as a new "
            "version. Released files are never modified."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", metavar="DIR", type=Path,
                   help="the built dataset folder to append to (optional with --judge-only)")
    p.add_argument("--generations", metavar="FILE", type=Path, required=True,
                   help="JSONL of the model's generations (the output file with --generate)")
    p.add_argument("--generate", metavar="MODEL_ID",
                   help="first produce the generations into FILE through an OpenAI-compatible API "
                        "(OPENROUTER_BASE_URL, default OpenRouter; key OPENROUTER_API_KEY)")
    p.add_argument("--replay", metavar="DATASET_DIR", type=Path,
                   help="answer judge calls from DATASET_DIR's judgments instead of calling providers")
    p.add_argument("--model-name", metavar="NAME",
                   help="submit under this model id (org/name); generation ids are derived from it")
    p.add_argument("--journal", metavar="PATH", type=Path,
                   help="judge journal (default: FILE.judge-journal.jsonl, FILE.replay-journal.jsonl)")
    p.add_argument("--concurrency", metavar="N", type=int, default=4,
                   help="parallel calls per judge (default 4)")
    p.add_argument("--timeout", metavar="SECONDS", type=float, default=600.0,
                   help="per-request timeout; timed-out calls are retried with backoff (default 600)")
    p.add_argument("--note", help="note recorded with the new dataset version")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--validate-only", action="store_true",
                      help="validate FILE and print the call estimate; make no call")
    mode.add_argument("--judge-only", action="store_true",
                      help="judge into the journal but do not append to the dataset")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Execute ``alienbench submit`` from parsed arguments; returns the exit code."""
    from .errors import AlienbenchError
    from .submit import submit

    if args.concurrency < 1:
        print(f"alienbench submit: --concurrency must be >= 1, got {args.concurrency}", file=sys.stderr)
        return 2
    if args.data is None and not (args.judge_only or args.validate_only):
        print("alienbench submit: --data DIR is required (or use --judge-only / --validate-only)",
              file=sys.stderr)
        return 2
    try:
        if args.generate:
            from .generate import generate

            rep = generate(args.generate, args.generations, concurrency=args.concurrency,
                           timeout=args.timeout, progress=not args.no_progress)
            if not rep.complete:
                print(f"alienbench submit: generation incomplete ({len(rep.records)} of {rep.n_planned}); "
                      "rerun the same command to finish", file=sys.stderr)
                return 1
        result = submit(
            args.data,
            args.generations,
            replay=args.replay,
            model_name=args.model_name,
            journal=args.journal,
            concurrency=args.concurrency,
            append=not args.judge_only,
            validate_only=args.validate_only,
            note=args.note,
            timeout=args.timeout,
            progress=not args.no_progress,
        )
    except AlienbenchError as exc:
        print(f"alienbench submit: {exc}", file=sys.stderr)
        return 1
    if args.judge_only:
        print(f"judged {result.model}: {len(result.report.entries)} judge results in {result.journal}; "
              "not appended (--judge-only)", file=sys.stderr)
    return 0
