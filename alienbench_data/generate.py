"""Produce a model's 180 benchmark generations through an OpenAI-compatible chat API (OpenRouter).

Parameters are the benchmark's (``resources/benchmark.json``): one user message holding the
condition's prompt text and no system prompt, temperature 1.0, ``max_tokens`` 800 (per-model
overrides apply), the per-sample seed rule, and OpenRouter provider routing in ``extra_body``.

The output file is its own journal: each generation is appended as one JSON line (fsync) as it
arrives, in the submission format, so a killed run resumes where it stopped and the finished file
is a valid ``--generations`` input.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from .config import Benchmark, benchmark, generation_seed
from .judges import (
    Journal,
    JudgeCallError,
    JudgeError,
    MissingCredentialsError,
    RetryPolicy,
    TransientJudgeError,
    call_with_retries,
)
from .judges._retry import RETRY_STATUSES

__all__ = ["DEFAULT_BASE_URL", "GenerationReport", "generate"]

#: Default endpoint; override with ``$OPENROUTER_BASE_URL``.
DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"


@dataclass
class GenerationReport:
    """What :func:`generate` did; ``records`` holds every generation in the output file."""

    path: Path
    n_planned: int
    n_already_done: int
    n_new: int = 0
    failures: list[tuple[str, int, str]] = field(default_factory=list)  # (condition, sample_index, error)
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.failures and len(self.records) == self.n_planned


def _client(base_url: str | None, api_key_env: str, timeout: float) -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise JudgeCallError(
            "generate: the openai SDK is not installed (fix: pip install 'alienbench[judges]')"
        ) from exc
    key = os.environ.get(api_key_env)
    if not key:
        raise MissingCredentialsError(
            f"generate: environment variable {api_key_env} is not set (fix: export {api_key_env}=...)"
        )
    url = base_url or os.environ.get("OPENROUTER_BASE_URL") or DEFAULT_BASE_URL
    return openai.OpenAI(api_key=key, base_url=url, max_retries=0, timeout=timeout)


def _call(
    client: Any, model: str, prompt: str, *, max_tokens: int, seed: int, bm: Benchmark
) -> dict[str, Any]:
    import openai

    gen = bm.generation
    start = time.monotonic()
    try:
        resp = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": prompt}],
            temperature=gen["temperature"],
            max_tokens=max_tokens,
            seed=seed,
            extra_body={"provider": gen["provider_routing"]},
        )
    except openai.APIConnectionError as exc:  # includes timeouts
        raise TransientJudgeError(f"generate {model}: {type(exc).__name__}: {exc}") from None
    except openai.APIStatusError as exc:
        msg = f"generate {model}: HTTP {exc.status_code}: {str(exc.message)[:300]}"
        if exc.status_code in RETRY_STATUSES:
            raise TransientJudgeError(msg, status=exc.status_code) from None
        raise JudgeCallError(msg, fatal=exc.status_code in (401, 403, 404)) from None
    except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
        raise TransientJudgeError(f"generate {model}: malformed response body: {exc}") from None
    duration = time.monotonic() - start
    choices = getattr(resp, "choices", None)
    content = choices[0].message.content if choices else None
    if not content or not content.strip():
        # The benchmark treats an empty reply or no choices as retryable.
        raise TransientJudgeError(f"generate {model}: empty reply")
    usage = getattr(resp, "usage", None)
    return {
        "model_resolved": getattr(resp, "model", None),
        "response": content,
        "prompt_tokens": getattr(usage, "prompt_tokens", None),
        "completion_tokens": getattr(usage, "completion_tokens", None),
        "duration_seconds": duration,
    }


def generate(
    model: str,
    out: str | Path,
    *,
    conditions: Sequence[str] | None = None,
    samples: int | None = None,
    concurrency: int = 4,
    base_url: str | None = None,
    api_key_env: str = "OPENROUTER_API_KEY",
    timeout: float = 600.0,
    policy: RetryPolicy = RetryPolicy(),  # noqa: B008
    sleep: Callable[[float], None] = time.sleep,
    progress: bool = True,
    stream: TextIO | None = None,
    bench: Benchmark | None = None,
) -> GenerationReport:
    """Generate (or finish generating) a model's benchmark responses into ``out``.

    Parameters
    ----------
    model
        The model id sent to the API (an OpenRouter model id).
    out
        Output JSONL; also the journal: generations already in it are not requested again.
    conditions, samples
        Defaults: the 6 main conditions and ``samples_per_condition`` (30).
    concurrency
        Parallel requests.
    base_url, api_key_env
        Endpoint (default ``$OPENROUTER_BASE_URL``, else OpenRouter) and the environment variable
        holding the key (the key is never logged or written).
    timeout, policy, sleep
        Per-request timeout; backoff on 429/5xx, timeouts and empty replies; sleep function.
    progress, stream
        Progress bar and where messages go (default ``sys.stderr``).

    Returns
    -------
    GenerationReport
    """
    from .submit import generation_id_for

    bm = bench or benchmark()
    stream_out = stream if stream is not None else sys.stderr
    conds = tuple(conditions) if conditions is not None else bm.condition_ids
    n = int(samples if samples is not None else bm.generation["samples_per_condition"])
    max_tokens = bm.max_tokens(model)
    cells = [(c, i) for c in conds for i in range(n)]
    report = GenerationReport(path=Path(out), n_planned=len(cells), n_already_done=0)
    with Journal(out, key_field="id") as jr:
        todo = [(c, i) for c, i in cells if generation_id_for(model, c, i) not in jr]
        report.n_already_done = len(cells) - len(todo)
        print(f"Generating {len(conds)} conditions x {n} samples = {len(cells)} calls to {model}: "
              f"{report.n_already_done} already in {jr.path}, {len(todo)} to make "
              f"(temperature {bm.generation['temperature']}, max_tokens {max_tokens}).",
              file=stream_out, flush=True)
        if todo:
            client = _client(base_url, api_key_env, timeout)
            stop = threading.Event()

            def work(cond: str, idx: int) -> dict[str, Any]:
                if stop.is_set():
                    raise JudgeCallError("skipped after a fatal error")
                prompt = bm.condition_text(cond)
                seed = generation_seed(model, cond, idx)
                try:
                    got = call_with_retries(
                        lambda: _call(client, model, prompt, max_tokens=max_tokens, seed=seed, bm=bm),
                        policy=policy, sleep=sleep,
                    )
                except JudgeCallError as exc:
                    if exc.fatal:
                        stop.set()
                    raise
                record = {
                    "id": generation_id_for(model, cond, idx),
                    "model": model,
                    "model_resolved": got["model_resolved"],
                    "condition": cond,
                    "sample_index": idx,
                    "prompt_text": prompt,
                    "response": got["response"],
                    "temperature": bm.generation["temperature"],
                    "seed": seed,
                    "max_tokens": max_tokens,
                    "prompt_tokens": got["prompt_tokens"],
                    "completion_tokens": got["completion_tokens"],
                    "duration_seconds": got["duration_seconds"],
                    "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
                jr.append(record)
                return record

            from tqdm.auto import tqdm

            with ThreadPoolExecutor(max_workers=concurrency) as ex:
                futures = {ex.submit(work, c, i): (c, i) for c, i in todo}
                try:
                    with tqdm(total=len(todo), disable=not progress, file=stream_out, unit="call",
                              desc="generating") as bar:
                        for fut in as_completed(futures):
                            c, i = futures[fut]
                            try:
                                fut.result()
                                report.n_new += 1
                            except JudgeError as exc:
                                report.failures.append((c, i, str(exc)))
                            bar.update(1)
                except BaseException:
                    ex.shutdown(wait=False, cancel_futures=True)
                    raise
        report.records = [jr.entries[generation_id_for(model, c, i)] for c, i in cells
                          if generation_id_for(model, c, i) in jr]
    if report.failures:
        print(f"{len(report.failures)} generation call(s) failed; rerun to retry them:", file=stream_out)
        for c, i, err in report.failures[:10]:
            print(f"  {c} #{i}: {err}", file=stream_out)
    return report
