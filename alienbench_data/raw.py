"""Reading the authors' raw release tree (upstream layout), with precise errors.

Nothing here modifies the release. Every problem is collected as a :class:`Problem` naming the
file, the 1-based line and the field, so one run reports all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import Problem, ReleaseError

__all__ = ["Checker", "Record", "ReleaseConfig", "dir_name", "read_jsonl", "read_release_config"]


def dir_name(model_id: str) -> str:
    """On disk, model ids use ``__`` instead of ``/``."""
    return model_id.replace("/", "__")


@dataclass(frozen=True)
class ReleaseConfig:
    models: tuple[str, ...]
    judges: tuple[str, ...]
    conditions: dict[str, str]  # id -> prompt text, config order
    paraphrases: dict[str, str]  # id -> prompt text, config order (incl. baseline)
    samples_per_condition: int
    paraphrase_samples: int
    max_tokens: int
    model_overrides: dict[str, dict[str, Any]]
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    def max_tokens_for(self, model: str, *, paraphrase: bool) -> int:
        # The paraphrase runs used a shadow config without model_overrides (data-audit item 5).
        if paraphrase:
            return self.max_tokens
        return int(self.model_overrides.get(model, {}).get("max_tokens", self.max_tokens))


def read_release_config(root: Path) -> ReleaseConfig:
    path = root / "config.yaml"
    if not path.is_file():
        raise ReleaseError(Problem(str(path), None, None, "config.yaml not found",
                                   "pass --release pointing at the release root (it holds config.yaml "
                                   "and data/)"), context="build")
    try:
        cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise ReleaseError(Problem(str(path), None if line is None else line + 1, None,
                                   f"invalid YAML: {exc}", "repair config.yaml"), context="build") from exc
    problems = []
    need = {"models": list, "judge_models": list, "prompt_variants": list, "prompt_paraphrases": list,
            "samples_per_condition": int, "prompt_ablation_samples_per_condition": int, "max_tokens": int}
    for key, typ in need.items():
        if not isinstance(cfg, dict) or key not in cfg:
            problems.append(Problem(str(path), None, key, "missing key", f"add `{key}` to config.yaml"))
        elif not isinstance(cfg[key], typ):
            problems.append(Problem(str(path), None, key, f"expected {typ.__name__}"))
    if problems:
        raise ReleaseError(problems, context="build")

    def variants(key: str) -> dict[str, str]:
        out = {}
        for i, v in enumerate(cfg[key]):
            if not isinstance(v, dict) or not isinstance(v.get("id"), str) or not isinstance(v.get("text"), str):
                problems.append(Problem(str(path), None, f"{key}[{i}]", "needs string `id` and `text`"))
                continue
            out[v["id"]] = v["text"]
        return out

    conditions = variants("prompt_variants")
    paraphrases = variants("prompt_paraphrases")
    if problems:
        raise ReleaseError(problems, context="build")
    return ReleaseConfig(
        models=tuple(cfg["models"]),
        judges=tuple(cfg["judge_models"]),
        conditions=conditions,
        paraphrases=paraphrases,
        samples_per_condition=cfg["samples_per_condition"],
        paraphrase_samples=cfg["prompt_ablation_samples_per_condition"],
        max_tokens=cfg["max_tokens"],
        model_overrides=dict(cfg.get("model_overrides") or {}),
        raw=cfg,
    )


@dataclass
class Record:
    file: str  # path relative to the release root
    line: int  # 1-based
    data: dict[str, Any]


def read_jsonl(path: Path, root: Path, problems: list[Problem]) -> list[Record]:
    """Read one JSONL file; malformed lines become problems (blank lines are skipped)."""
    rel = str(path.relative_to(root))
    out: list[Record] = []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                problems.append(Problem(rel, lineno, None, f"not UTF-8 ({exc.reason})",
                                        "re-encode the file as UTF-8"))
                continue
            except json.JSONDecodeError as exc:
                problems.append(Problem(rel, lineno, None, f"malformed JSON ({exc.msg} at column {exc.colno})",
                                        "repair or remove the line"))
                continue
            if not isinstance(obj, dict):
                problems.append(Problem(rel, lineno, None, f"expected a JSON object, got {type(obj).__name__}"))
                continue
            out.append(Record(rel, lineno, obj))
    return out


_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object"}


class Checker:
    """Field checks that record problems instead of raising on the first one."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems

    def need(self, rec: Record, key: str, types: type | tuple[type, ...], *, nullable: bool = False,
             nonempty: bool = False) -> bool:
        d = rec.data
        if key not in d:
            self.problems.append(Problem(rec.file, rec.line, key, "missing field",
                                         f"add `{key}` to the record"))
            return False
        v = d[key]
        if v is None:
            if nullable:
                return True
            self.problems.append(Problem(rec.file, rec.line, key, "is null"))
            return False
        tt = types if isinstance(types, tuple) else (types,)
        # bool is a subclass of int: a boolean never passes for an integer field.
        ok = isinstance(v, tt) and not (isinstance(v, bool) and bool not in tt)
        if not ok:
            want = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in tt)
            self.problems.append(Problem(rec.file, rec.line, key,
                                         f"expected {want}, got {type(v).__name__} {v!r:.40}"))
            return False
        if nonempty and isinstance(v, str) and not v.strip():
            self.problems.append(Problem(rec.file, rec.line, key, "is empty"))
            return False
        return True

    def add(self, rec: Record, key: str | None, message: str, fix: str = "") -> None:
        self.problems.append(Problem(rec.file, rec.line, key, message, fix))
