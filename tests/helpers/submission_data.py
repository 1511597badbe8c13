"""Synthetic submissions, an in-process judge and an in-memory dataset for the submission tests."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from alienbench_data.config import benchmark, generation_seed, judge_config
from alienbench_data.judges import Judge, JudgeReply, TransientJudgeError

CFG = judge_config()
BM = benchmark()
DIMS = CFG.dimension_ids
ALIASES = CFG.judge_aliases


def make_records(model: str = "acme/test-model", *, n: int = 30, tag: str = "") -> list[dict[str, Any]]:
    """A valid submission: 6 conditions x n samples, distinct short responses."""
    recs = []
    for cond in BM.condition_ids:
        for i in range(n):
            recs.append({
                "model": model,
                "condition": cond,
                "sample_index": i,
                "prompt_text": BM.condition_text(cond),
                "response": f"A {cond} creature number {i}{tag} with {i % 7 + 2} glass limbs.",
                "completion_tokens": 100 + i,
                "seed": generation_seed(model, cond, i),
                "temperature": 1.0,
            })
    return recs


def write_jsonl(path: Path, records: list[Any]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n")
    return path


def labels_for(judge: str, user_prompt: str) -> dict[str, bool]:
    """Deterministic labels per (judge, prompt): the 'truth' the in-process judge answers with."""
    digest = hashlib.sha256(f"{judge}\n{user_prompt}".encode()).digest()
    return {d: bool(digest[i] & 1) for i, d in enumerate(DIMS)}


def reply_json(labels: Mapping[str, bool]) -> str:
    return json.dumps({d: {"feature_described": f"{d} described", "is_departure": labels[d],
                           "reasoning": f"{d} because"} for d in DIMS})


class LabelJudge(Judge):
    """In-process judge answering :func:`labels_for`; ``script`` may override replies per call."""

    route = "fake"

    def __init__(self, script: Callable[[str, str, int], str | Exception | None] | None = None) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.script = script

    def complete(self, judge: str, system_prompt: str, user_prompt: str) -> JudgeReply:
        self.calls.append((judge, system_prompt, user_prompt))
        if self.script is not None:
            got = self.script(judge, user_prompt, len(self.calls))
            if isinstance(got, Exception):
                raise got
            if got is not None:
                return JudgeReply(got, f"{judge}-resolved", self.route, 10, 20, 0.01)
        return JudgeReply(reply_json(labels_for(judge, user_prompt)), f"{judge}-resolved", self.route,
                          10, 20, 0.01)


def panel(judge: Judge) -> dict[str, Judge]:
    return {a: judge for a in ALIASES}


class FakeDataset:
    """In-memory stand-in for the data package (load + manifest + append_version)."""

    def __init__(self, tables: dict[tuple[str, str], pd.DataFrame] | None = None,
                 *, config_sha: str | None = None) -> None:
        self.tables = dict(tables or {})
        self.config_sha = CFG.sha256 if config_sha is None else config_sha
        self.appended: list[tuple[dict[str, pd.DataFrame], str]] = []
        self.table_reads = 0
        self.tags: list[str] = []

    def judge_config_sha256(self) -> str | None:
        return self.config_sha

    def table(self, config: str, split: str) -> pd.DataFrame:
        self.table_reads += 1
        if (config, split) not in self.tables:
            raise KeyError(f"{config}/{split}")
        return self.tables[(config, split)]

    def append(self, tables: Mapping[str, pd.DataFrame], *, tag: str, note: str) -> str:
        self.tags.append(tag)
        self.appended.append((dict(tables), note))
        return "v-next"


def dataset_from_tables(tables: Mapping[str, pd.DataFrame], **kw: Any) -> FakeDataset:
    return FakeDataset({(name, "main"): df for name, df in tables.items()}, **kw)


def empty_generations() -> pd.DataFrame:
    return pd.DataFrame({"generation_id": pd.Series([], dtype=str), "model": pd.Series([], dtype=str)})


class FlakyTransient(TransientJudgeError):
    pass
