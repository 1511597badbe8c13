"""Run the judge panel over a set of generations: bounded parallel calls, journaled, resumable."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ..config import JudgeConfig, judge_config
from ._base import Judge, JudgeCallError, JudgeError, JudgeReply
from ._journal import Journal
from ._parse import FeatureLabel, ParseError, parse_reply
from ._retry import RetryPolicy, call_with_retries

__all__ = [
    "JudgeResult",
    "JudgingFailure",
    "JudgingReport",
    "completed_judgments",
    "journal_key",
    "judge_one",
    "run_judging",
]


def journal_key(
    generation_id: str,
    judge: str,
    judge_prompt_sha256: str,
    judge_config_sha256: str,
    *,
    replay: bool = False,
) -> str:
    """The key of one judge result.

    A journaled result is reused only for the same generation, judge, exact prompt (response text)
    and judge panel, and only by the same kind of backend (live provider or replay).
    """
    source = "replay" if replay else "live"
    return f"{generation_id}|{judge}|{judge_prompt_sha256}|{judge_config_sha256}|{source}"


@dataclass(frozen=True)
class JudgeResult:
    """One validated judge answer for one generation."""

    labels: dict[str, FeatureLabel]
    reply: JudgeReply
    n_parse_attempts: int
    rejected: tuple[tuple[str, str], ...] = ()  # (reply text, parse error) of failed attempts


@dataclass(frozen=True)
class JudgingFailure:
    """A (generation, judge) pair that produced no result in this run; a rerun tries it again."""

    generation_id: str
    judge: str
    error: str


@dataclass
class JudgingReport:
    """What :func:`run_judging` did. ``entries`` holds every completed journal entry for the input."""

    n_planned: int
    n_already_done: int
    n_new: int = 0
    failures: list[JudgingFailure] = field(default_factory=list)
    entries: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.failures and len(self.entries) == self.n_planned


def judge_one(
    backend: Judge,
    judge: str,
    system_prompt: str,
    user_prompt: str,
    *,
    max_parse_attempts: int = 3,
    dimensions: tuple[str, ...] | None = None,
    policy: RetryPolicy = RetryPolicy(),  # noqa: B008
    sleep: Callable[[float], None] = time.sleep,
) -> JudgeResult:
    """Call one judge until its reply parses (up to ``max_parse_attempts`` identical calls).

    Each call is retried on transient API errors following ``policy``. A reply that fails
    :func:`parse_reply` triggers another call with the identical prompt.

    Raises
    ------
    ParseError
        When every attempt returned an invalid reply.
    JudgeError
        A non-retryable call failure, or a transient one that outlived the retries.
    """
    dims = dimensions or judge_config().dimension_ids
    rejected: list[tuple[str, str]] = []
    for attempt in range(1, max_parse_attempts + 1):
        reply = call_with_retries(
            lambda: backend.complete(judge, system_prompt, user_prompt), policy=policy, sleep=sleep
        )
        try:
            labels = parse_reply(reply.text, dims)
        except ParseError as exc:
            rejected.append((reply.text, str(exc)))
            continue
        return JudgeResult(labels=labels, reply=reply, n_parse_attempts=attempt, rejected=tuple(rejected))
    raise ParseError(
        f"judge {judge}: no valid reply in {max_parse_attempts} attempts; last error: {rejected[-1][1]}"
    )


def _entry(
    *, key: str, generation_id: str, judge: str, prompt_sha: str, config_sha: str, result: JudgeResult
) -> dict[str, Any]:
    reply = result.reply
    return {
        "key": key,
        "kind": "judgment",
        "generation_id": generation_id,
        "judge": judge,
        "judge_prompt_sha256": prompt_sha,
        "judge_config_sha256": config_sha,
        "labels": {
            dim: {"is_departure": lab.is_departure, "feature_described": lab.feature_described,
                  "reasoning": lab.reasoning}
            for dim, lab in result.labels.items()
        },
        "ward_score": sum(int(lab.is_departure) for lab in result.labels.values()),
        "n_parse_attempts": result.n_parse_attempts,
        "judge_model_resolved": reply.model_resolved,
        "judge_route": reply.route,
        "judge_prompt_tokens": reply.prompt_tokens,
        "judge_completion_tokens": reply.completion_tokens,
        "judge_duration_seconds": reply.duration_seconds,
        "reply_text": reply.text,
        "rejected_replies": [{"text": t, "error": e} for t, e in result.rejected],
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _rows(generations: Iterable[Any]) -> list[tuple[str, str]]:
    out = []
    for g in generations:
        if isinstance(g, Mapping):
            out.append((str(g["generation_id"]), g["response"]))
        else:
            out.append((str(g.generation_id), g.response))
    return out


def completed_judgments(
    journal: Journal,
    generations: Iterable[Any],
    judges: Iterable[str],
    *,
    config: JudgeConfig | None = None,
    replay: bool = False,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The journal entries answering (generation, judge) for these generations under this panel."""
    cfg = config or judge_config()
    out: dict[tuple[str, str], dict[str, Any]] = {}
    judges = tuple(judges)
    for gid, response in _rows(generations):
        sha = cfg.prompt_sha256(response)
        for judge in judges:
            entry = journal.entries.get(journal_key(gid, judge, sha, cfg.sha256, replay=replay))
            if entry is not None:
                out[(gid, judge)] = entry
    return out


def run_judging(
    generations: Iterable[Any],
    judges: Mapping[str, Judge],
    *,
    journal: str | Path,
    config: JudgeConfig | None = None,
    concurrency: int = 4,
    policy: RetryPolicy = RetryPolicy(),  # noqa: B008
    sleep: Callable[[float], None] = time.sleep,
    progress: bool = True,
    stream: TextIO | None = None,
) -> JudgingReport:
    """Judge every generation with every judge of the panel, resuming from the journal.

    Parameters
    ----------
    generations
        Items with ``generation_id`` and ``response`` (mappings or objects).
    judges
        ``{panel alias: backend}``; must cover every judge of ``config``.
    journal
        JSONL journal path. Every result is appended (fsync) as it arrives; results already in it
        (same generation, judge, prompt sha256 and judge-config sha256) are not requested again.
    config
        The judge configuration (default: the package's fixed panel).
    concurrency
        Parallel calls per judge (the judges run side by side).
    policy, sleep
        Backoff schedule for transient API errors and the sleep function (inject in tests).
    progress
        Show a tqdm progress bar on ``stream``.
    stream
        Where the estimate, progress and summary go (default ``sys.stderr``).

    Returns
    -------
    JudgingReport
        Counts, failures (pairs a rerun will try again) and the completed journal entries.
    """
    cfg = config or judge_config()
    out = stream if stream is not None else sys.stderr
    if concurrency < 1:
        raise ValueError(f"run_judging: concurrency must be >= 1, got {concurrency} (fix: pass 1 or more)")
    missing = [a for a in cfg.judge_aliases if a not in judges]
    if missing:
        raise ValueError(
            f"run_judging: no backend for judge(s) {missing} (fix: pass a backend for every panel judge)"
        )
    rows = _rows(generations)
    seen: set[str] = set()
    for gid, _ in rows:
        if gid in seen:
            raise ValueError(f"run_judging: generation_id {gid} appears twice (fix: deduplicate the input)")
        seen.add(gid)

    system = cfg.system_prompt
    dims = cfg.dimension_ids
    max_attempts = int(cfg.call.get("max_parse_attempts", 3))
    aliases = cfg.judge_aliases
    report = JudgingReport(n_planned=len(rows) * len(aliases), n_already_done=0)

    with Journal(journal) as jr:
        todo: dict[str, list[tuple[str, str, str, str]]] = {a: [] for a in aliases}
        for gid, response in rows:
            sha = cfg.prompt_sha256(response)
            for alias in aliases:
                key = journal_key(gid, alias, sha, cfg.sha256, replay=judges[alias].is_replay)
                if key in jr:
                    report.entries[(gid, alias)] = jr.entries[key]
                    report.n_already_done += 1
                else:
                    todo[alias].append((gid, response, sha, key))
        n_todo = sum(len(v) for v in todo.values())
        print(
            f"Judging {len(rows)} generations x {len(aliases)} judges = {report.n_planned} judge calls: "
            f"{report.n_already_done} already in the journal {jr.path}, {n_todo} to make "
            f"(a reply that fails to parse is asked again, up to {max_attempts} calls per pair; "
            f"{concurrency} parallel call(s) per judge).",
            file=out,
            flush=True,
        )
        if jr.repaired_bytes:
            print(f"journal: removed a torn last line ({jr.repaired_bytes} bytes) left by a killed run",
                  file=out)
        if n_todo == 0:
            return report
        for alias in aliases:
            if todo[alias]:
                judges[alias].check_ready()  # missing credentials: fail before any call

        stop = {alias: threading.Event() for alias in aliases}

        def work(alias: str, gid: str, response: str, sha: str, key: str) -> dict[str, Any]:
            if stop[alias].is_set():
                raise JudgeCallError(f"judge {alias}: skipped after a fatal error of this judge")
            try:
                result = judge_one(
                    judges[alias], alias, system, cfg.render_user_prompt(response),
                    max_parse_attempts=max_attempts, dimensions=dims, policy=policy, sleep=sleep,
                )
            except JudgeCallError as exc:
                if exc.fatal:
                    stop[alias].set()
                raise
            entry = _entry(key=key, generation_id=gid, judge=alias, prompt_sha=sha,
                           config_sha=cfg.sha256, result=result)
            jr.append(entry)
            return entry

        from tqdm.auto import tqdm

        executors = {a: ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"judge-{i}")
                     for i, a in enumerate(aliases)}
        futures: dict[Future[dict[str, Any]], tuple[str, str]] = {}
        try:
            # Interleave submission so every judge starts at once.
            queues = {a: list(todo[a]) for a in aliases}
            while any(queues.values()):
                for alias in aliases:
                    if queues[alias]:
                        gid, response, sha, key = queues[alias].pop(0)
                        fut = executors[alias].submit(work, alias, gid, response, sha, key)
                        futures[fut] = (gid, alias)
            with tqdm(total=n_todo, disable=not progress, file=out, unit="call", desc="judging") as bar:
                for fut in as_completed(futures):
                    gid, alias = futures[fut]
                    try:
                        report.entries[(gid, alias)] = fut.result()
                        report.n_new += 1
                    except JudgeError as exc:
                        report.failures.append(JudgingFailure(gid, alias, str(exc)))
                    bar.update(1)
        except BaseException:
            for ex in executors.values():
                ex.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            for ex in executors.values():
                ex.shutdown(wait=True)
    if report.failures:
        print(f"{len(report.failures)} judge call(s) failed; rerun to retry them (completed calls are kept):",
              file=out)
        for f in report.failures[:10]:
            print(f"  {f.generation_id} {f.judge}: {f.error}", file=out)
        if len(report.failures) > 10:
            print(f"  ... and {len(report.failures) - 10} more", file=out)
    return report
