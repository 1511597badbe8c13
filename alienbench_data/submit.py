"""Append-only submission: validate a model's generations, judge them with the fixed panel, append.

The flow of :func:`submit`:

1. refuse when the dataset's judge-config sha256 differs from the package's panel;
2. read and validate the generations file (:func:`read_submission`) — every problem is reported
   with file, line and field, and nothing is called before the file is valid;
3. judge every generation with the three judges (:func:`~alienbench_data.judges.run_judging`):
   bounded parallel calls, every result journaled with fsync, a killed run resumes;
4. refuse incomplete judging (every generation needs all three judges);
5. convert the journal into ``generations``/``judgments``/``scores`` rows following
   :mod:`alienbench_data.schema` (:func:`build_tables`) and hand them to the data package's
   ``versioning.append_version``, which writes a new version atomically.

Submission file format (JSONL, one generation per line)
-------------------------------------------------------
Required: ``model`` (str), ``condition`` (or the release's ``prompt_variant``; one of the 6 main
conditions), ``sample_index`` (int 0-29), ``prompt_text`` (the exact condition text),
``response`` (non-empty str), ``completion_tokens`` (int), ``seed`` (int), ``temperature``
(1.0). Optional: ``id`` (str), ``model_resolved`` (str), ``prompt_tokens`` (int),
``duration_seconds`` (number), ``max_tokens`` (int, default: the benchmark's for the model).
Other fields are ignored, so the release's own ``responses.jsonl`` records are accepted unchanged.
A file holds one model: 6 conditions x 30 samples = 180 lines.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from .config import Benchmark, JudgeConfig, benchmark, generation_seed, judge_config, sha256_text
from .errors import AlienbenchError, Problem, _ProblemsError
from .judges import Judge, JudgingReport, ReplayJudge, RetryPolicy, provider_panel, run_judging

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GENERATION_ID_NAMESPACE",
    "DatasetAccess",
    "LocalDataset",
    "Submission",
    "SubmissionError",
    "SubmitRefused",
    "SubmitResult",
    "SubmittedGeneration",
    "build_tables",
    "default_journal_path",
    "generation_id_for",
    "read_submission",
    "replay_judge",
    "submit",
]

#: Namespace of the deterministic generation ids of submitted (or renamed) generations.
GENERATION_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://alienbench/generation")

_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:+-]*$")
_REQUIRED = ("model", "sample_index", "prompt_text", "response", "completion_tokens", "seed", "temperature")


class SubmissionError(_ProblemsError):
    """The submission file is invalid; nothing was called or written. ``problems`` lists each."""


class SubmitRefused(AlienbenchError):
    """Submission refused for a dataset-level reason (judge-config mismatch, incomplete judging...).

    The dataset is left untouched; the journal keeps every completed judge call.
    """


def generation_id_for(model: str, condition: str, sample_index: int) -> str:
    """Deterministic generation id: uuid5 of ``"model|condition|sample_index"``."""
    return str(uuid.uuid5(GENERATION_ID_NAMESPACE, f"{model}|{condition}|{sample_index}"))


@dataclass(frozen=True)
class SubmittedGeneration:
    """One validated generation of a submission (``model`` is the submitted name)."""

    generation_id: str
    model: str
    source_model: str
    model_resolved: str | None
    condition: str
    sample_index: int
    prompt_text: str
    response: str
    completion_tokens: int
    seed: int
    temperature: float
    prompt_tokens: int | None
    duration_seconds: float | None
    max_tokens: int
    line: int


@dataclass(frozen=True)
class Submission:
    """A validated submission file: one model, 6 conditions x 30 samples."""

    model: str
    path: Path
    generations: tuple[SubmittedGeneration, ...]
    warnings: tuple[Problem, ...] = ()

    def __len__(self) -> int:
        return len(self.generations)


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _ranges(values: Iterable[int]) -> str:
    vals = sorted(values)
    parts: list[str] = []
    start = prev = None
    for v in vals:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = v
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def read_submission(
    path: str | Path,
    *,
    model_name: str | None = None,
    existing_models: Collection[str] = (),
    existing_generation_ids: Collection[str] = (),
    bench: Benchmark | None = None,
) -> Submission:
    """Read and validate a submission file.

    Parameters
    ----------
    path
        JSONL file of generations (format in the module docstring).
    model_name
        Submit under this model id instead of the file's (``org/name``). Generation ids are then
        derived from it (:func:`generation_id_for`), so a released model can be resubmitted.
    existing_models
        Model ids already in the dataset; the submitted model must not be one of them.
    existing_generation_ids
        Generation ids already in the dataset; none may be reused.
    bench
        The benchmark protocol (default: the package's).

    Returns
    -------
    Submission

    Raises
    ------
    SubmissionError
        Listing every problem with file, line and field: bad JSON, missing or mistyped fields,
        unknown condition, prompt text differing from the condition's, sample_index outside
        0-29, temperature other than 1.0, empty response, duplicates, missing cells, mixed
        models, a model or generation id already in the dataset.
    """
    bm = bench or benchmark()
    path = Path(path)
    fname = str(path)
    n_samples = int(bm.generation["samples_per_condition"])
    conditions = bm.condition_ids
    paraphrases = set(bm.paraphrase_ids) - set(conditions)
    problems: list[Problem] = []
    warnings: list[Problem] = []

    def problem(line: int | None, fld: str | None, message: str, fix: str = "") -> None:
        problems.append(Problem(fname, line, fld, message, fix))

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SubmissionError(Problem(fname, None, None, f"cannot read the file: {exc.strerror}",
                                      "pass an existing JSONL file with --generations"),
                              context="read_submission") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(Problem(fname, None, None, f"not UTF-8 (byte {exc.start})",
                                      "save the file as UTF-8"), context="read_submission") from None

    records: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            problem(lineno, None, f"not valid JSON ({exc.msg} at column {exc.colno})",
                    "write one JSON object per line")
            continue
        if not isinstance(rec, dict):
            problem(lineno, None, f"a line must be a JSON object, got {type(rec).__name__}")
            continue
        records.append((lineno, rec))
    if not records and not problems:
        problem(None, None, "the file holds no generations",
                f"write {len(conditions)} conditions x {n_samples} samples, one JSON object per line")

    valid: list[tuple[int, dict[str, Any]]] = []
    for lineno, rec in records:
        n_before = len(problems)
        for fld in _REQUIRED:
            if fld not in rec or rec[fld] is None:
                problem(lineno, fld, "required field is missing")
        cond = rec.get("condition")
        variant = rec.get("prompt_variant")
        if cond is None and variant is None:
            problem(lineno, "condition", "required field is missing (key 'condition' or 'prompt_variant')")
        elif cond is not None and variant is not None and cond != variant:
            problem(lineno, "condition", f"condition {cond!r} and prompt_variant {variant!r} disagree",
                    "keep one of the two keys")
        else:
            cond = cond if cond is not None else variant
            if not isinstance(cond, str):
                problem(lineno, "condition", f"must be a string, got {json.dumps(cond)}")
            elif cond not in conditions:
                if cond in paraphrases:
                    problem(lineno, "condition", f"{cond!r} is a paraphrase-ablation prompt",
                            "submit only the 6 main conditions: " + ", ".join(conditions))
                else:
                    problem(lineno, "condition", f"unknown condition {cond!r}",
                            "use one of " + ", ".join(conditions))
            elif isinstance(rec.get("prompt_text"), str) and rec["prompt_text"] != bm.condition_text(cond):
                expected = bm.condition_text(cond)
                pos = _first_difference(rec["prompt_text"], expected)
                problem(lineno, "prompt_text",
                        f"differs from the benchmark text of condition {cond!r} at character {pos}",
                        f"use exactly {expected!r}")
        if "model" in rec and rec["model"] is not None and (
            not isinstance(rec["model"], str) or not rec["model"].strip()
        ):
            problem(lineno, "model", f"must be a non-empty string, got {json.dumps(rec['model'])}")
        ptext = rec.get("prompt_text")
        if ptext is not None and not isinstance(ptext, str):
            problem(lineno, "prompt_text", f"must be a string, got {type(ptext).__name__}")
        si = rec.get("sample_index")
        if si is not None:
            if not _is_int(si):
                problem(lineno, "sample_index", f"must be an integer, got {json.dumps(si)}")
            elif not 0 <= si < n_samples:
                problem(lineno, "sample_index", f"{si} is outside 0-{n_samples - 1}",
                        f"submit sample_index 0-{n_samples - 1} only (drop the others)")
        resp = rec.get("response")
        if resp is not None:
            if not isinstance(resp, str):
                problem(lineno, "response", f"must be a string, got {type(resp).__name__}")
            elif not resp.strip():
                problem(lineno, "response", "is empty", "regenerate this sample")
        for fld in ("completion_tokens", "seed"):
            v = rec.get(fld)
            if v is not None and (not _is_int(v) or v < 0):
                problem(lineno, fld, f"must be a non-negative integer, got {json.dumps(v)}")
        temp = rec.get("temperature")
        if temp is not None:
            if not _is_number(temp):
                problem(lineno, "temperature", f"must be a number, got {json.dumps(temp)}")
            elif float(temp) != float(bm.generation["temperature"]):
                problem(lineno, "temperature",
                        f"is {temp}; the benchmark samples at {bm.generation['temperature']}",
                        "regenerate with temperature 1.0")
        for fld in ("prompt_tokens", "max_tokens"):
            v = rec.get(fld)
            if v is not None and (not _is_int(v) or v < 0):
                problem(lineno, fld, f"must be a non-negative integer or null, got {json.dumps(v)}")
        dur = rec.get("duration_seconds")
        if dur is not None and (not _is_number(dur) or dur < 0):
            problem(lineno, "duration_seconds",
                    f"must be a non-negative number or null, got {json.dumps(dur)}")
        for fld in ("id", "model_resolved"):
            v = rec.get(fld)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                problem(lineno, fld, f"must be a non-empty string or null, got {json.dumps(v)}")
        if len(problems) == n_before:
            rec = dict(rec)
            rec["condition"] = cond
            valid.append((lineno, rec))

    # -- across records ----------------------------------------------------------------------
    models: dict[str, int] = {}
    for lineno, rec in records:
        m = rec.get("model")
        if isinstance(m, str) and m.strip():
            models.setdefault(m, lineno)
    if len(models) > 1:
        first_model = next(iter(models))
        for lineno, rec in records:
            if isinstance(rec.get("model"), str) and rec["model"] != first_model:
                problem(lineno, "model",
                        f"file mixes models: {rec['model']!r} here, {first_model!r} on line "
                        f"{models[first_model]}",
                        "submit one model per file")
    source_model = next(iter(models), None)
    final_model = model_name if model_name is not None else source_model
    if model_name is not None and not _MODEL_NAME.match(model_name):
        problem(None, "model", f"--model-name {model_name!r} is not an 'org/name' model id",
                "use letters, digits, '.', '_', '-' as in 'myorg/my-model-v1'")
    elif final_model is not None and not _MODEL_NAME.match(final_model):
        problem(None, "model", f"model id {final_model!r} is not an 'org/name' model id",
                "rename it with --model-name org/name")
    if final_model is not None:
        if final_model in set(existing_models):
            problem(None, "model", f"model {final_model!r} is already in the dataset",
                    "submit under a new name with --model-name")
        if final_model.startswith("human/"):
            problem(None, "model", "the 'human/' namespace is reserved for the human baseline",
                    "use another --model-name")

    cells: dict[tuple[str, int], int] = {}
    ids: dict[str, int] = {}
    for lineno, rec in records:
        cond = rec.get("condition", rec.get("prompt_variant"))
        si = rec.get("sample_index")
        if isinstance(cond, str) and _is_int(si):
            if (cond, si) in cells:
                problem(lineno, "sample_index",
                        f"duplicate of line {cells[(cond, si)]} (condition {cond!r}, sample_index {si})",
                        "keep one generation per condition and sample_index")
            else:
                cells[(cond, si)] = lineno
        rid = rec.get("id")
        if isinstance(rid, str) and rid.strip() and model_name is None:
            if rid in ids:
                problem(lineno, "id", f"duplicate id {rid!r} (also line {ids[rid]})",
                        "give each generation its own id")
            else:
                ids[rid] = lineno
    for cond in conditions:
        missing = [i for i in range(n_samples) if (cond, i) not in cells]
        if missing:
            problem(None, "sample_index",
                    f"condition {cond!r} lacks sample_index {_ranges(missing)} "
                    f"({n_samples - len(missing)} of {n_samples} present)",
                    f"submit all {len(conditions)} conditions x {n_samples} samples")

    gens: list[SubmittedGeneration] = []
    existing_ids = set(existing_generation_ids)
    if final_model is not None:
        for lineno, rec in valid:
            cond, si = rec["condition"], rec["sample_index"]
            if model_name is None and isinstance(rec.get("id"), str):
                gid = rec["id"]
            else:
                gid = generation_id_for(final_model, cond, si)
            if gid in existing_ids:
                problem(lineno, "id", f"generation id {gid} is already in the dataset",
                        "use fresh ids (omit 'id' to derive them) or --model-name")
            expected_seed = generation_seed(rec["model"], cond, si)
            if rec["seed"] != expected_seed:
                warnings.append(Problem(fname, lineno, "seed",
                                        f"seed {rec['seed']} differs from the seed rule ({expected_seed})",
                                        "generate with the benchmark's seed rule"))
            max_tokens = rec.get("max_tokens")
            dur_v = rec.get("duration_seconds")
            gens.append(SubmittedGeneration(
                generation_id=gid,
                model=final_model,
                source_model=rec["model"],
                model_resolved=rec.get("model_resolved"),
                condition=cond,
                sample_index=si,
                prompt_text=rec["prompt_text"],
                response=rec["response"],
                completion_tokens=rec["completion_tokens"],
                seed=rec["seed"],
                temperature=float(rec["temperature"]),
                prompt_tokens=rec.get("prompt_tokens"),
                duration_seconds=None if dur_v is None else float(dur_v),
                max_tokens=max_tokens if max_tokens is not None else bm.max_tokens(rec["model"]),
                line=lineno,
            ))
    if problems:
        # File-level problems (model already present, missing cells) first, then by line.
        problems.sort(key=lambda p: (p.line is not None, p.line or 0))
        raise SubmissionError(problems, context=f"read_submission: {fname} is not a valid submission")
    order = {c: i for i, c in enumerate(conditions)}
    gens.sort(key=lambda g: (order[g.condition], g.sample_index))
    assert final_model is not None
    return Submission(model=final_model, path=path, generations=tuple(gens), warnings=tuple(warnings))


# ---------------------------------------------------------------------------------------------
# Result rows
# ---------------------------------------------------------------------------------------------
def _frame(config_name: str, rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Rows -> DataFrame with exactly the schema's columns, order and types (via its arrow schema)."""
    import pyarrow as pa

    from .schema import FEATURES

    schema = FEATURES[config_name].arrow_schema
    if isinstance(rows, list):
        table = pa.Table.from_pylist(rows, schema=schema)
    else:
        table = pa.Table.from_pandas(rows[schema.names], schema=schema, preserve_index=False)
    return table.to_pandas()


def _quality_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The build's per-generation quality columns (same rules as the released rows)."""
    from .quality import add_quality_columns

    return add_quality_columns(frame)


def build_tables(
    submission: Submission,
    judgments: Mapping[tuple[str, str], Mapping[str, Any]],
    *,
    config: JudgeConfig | None = None,
    added_in_version: str | None = None,
) -> dict[str, pd.DataFrame]:
    """Turn a judged submission into ``generations``, ``judgments`` and ``scores`` rows (split ``main``).

    Parameters
    ----------
    submission
        The validated submission.
    judgments
        ``{(generation_id, judge alias): journal entry}`` for every generation and panel judge.
    config
        The judge configuration (its sha256 must be the one the entries were made with).
    added_in_version
        Value of ``added_in_version`` on every row (``None``: set by ``append_version``).

    Returns
    -------
    dict
        ``{"generations": df, "judgments": df, "scores": df}`` with the columns, order and types of
        :data:`alienbench_data.schema.FEATURES`, rows sorted by the schema's sort keys. Scores
        have ``score_source="submission"``.

    Raises
    ------
    SubmitRefused
        When a (generation, judge) pair has no entry or an entry was made with another panel.
    """
    cfg = config or judge_config()
    aliases = cfg.judge_aliases
    dims = cfg.dimension_ids
    missing = [(g.generation_id, a) for g in submission.generations for a in aliases
               if (g.generation_id, a) not in judgments]
    if missing:
        shown = ", ".join(f"{gid} x {a}" for gid, a in missing[:5])
        raise SubmitRefused(
            f"build_tables: incomplete judging: {len(missing)} of {len(submission) * len(aliases)} "
            f"(generation, judge) pairs have no judgment ({shown}{', ...' if len(missing) > 5 else ''}) "
            "(fix: rerun the submission; completed calls are kept in the journal)"
        )
    gen_rows: list[dict[str, Any]] = []
    score_rows: list[dict[str, Any]] = []
    judgment_rows: list[dict[str, Any]] = []
    for g in submission.generations:
        gen_rows.append({
            "generation_id": g.generation_id,
            "source": "llm",
            "model": g.model,
            "model_resolved": g.model_resolved,
            "condition": g.condition,
            "condition_set": "main",
            "paraphrase_of": None,
            "prompt_text": g.prompt_text,
            "prompt_sha256": sha256_text(g.prompt_text),
            "sample_index": g.sample_index,
            "seed": g.seed,
            "temperature": g.temperature,
            "max_tokens": g.max_tokens,
            "prompt_tokens": g.prompt_tokens,
            "completion_tokens": g.completion_tokens,
            "duration_seconds": g.duration_seconds,
            "response": g.response,
            # response_chars/words, the quality booleans and flags: alienbench_data.quality
            "in_paraphrase_reference": False,  # a submitted model has no paraphrase-ablation rows
            "added_in_version": added_in_version,
        })
        prompt_sha = cfg.prompt_sha256(g.response)
        for alias in aliases:
            e = judgments[(g.generation_id, alias)]
            if e.get("judge_config_sha256") != cfg.sha256 or e.get("judge_prompt_sha256") != prompt_sha:
                raise SubmitRefused(
                    f"build_tables: the judgment of {g.generation_id} by {alias} was made with another "
                    "judge configuration or another response text (fix: rerun; it will be judged again)"
                )
            labels = e["labels"]
            values = {d: int(bool(labels[d]["is_departure"])) for d in dims}
            score_rows.append({
                "generation_id": g.generation_id,
                "model": g.model,
                "condition": g.condition,
                "judge": alias,
                "judge_model_resolved": e.get("judge_model_resolved"),
                "judge_route": e.get("judge_route"),
                "judge_config_sha256": cfg.sha256,
                "judge_prompt_sha256": prompt_sha,
                "ward_score": sum(values.values()),
                **{f"dim_{d}": values[d] for d in dims},
                "n_parse_attempts": e.get("n_parse_attempts"),
                "judge_prompt_tokens": e.get("judge_prompt_tokens"),
                "judge_completion_tokens": e.get("judge_completion_tokens"),
                "judge_duration_seconds": e.get("judge_duration_seconds"),
                "score_source": "submission",
                "added_in_version": added_in_version,
            })
            for d in dims:
                judgment_rows.append({
                    "generation_id": g.generation_id,
                    "model": g.model,
                    "condition": g.condition,
                    "judge": alias,
                    "judge_model_resolved": e.get("judge_model_resolved"),
                    "judge_prompt_sha256": prompt_sha,
                    "feature": d,
                    "is_departure": bool(labels[d]["is_departure"]),
                    "feature_described": labels[d].get("feature_described"),
                    "reasoning": labels[d].get("reasoning"),
                    "added_in_version": added_in_version,
                })
    generations = _quality_columns(_frame("generations", gen_rows))
    generations = _frame("generations", generations)  # re-assert the schema's columns and types
    # Sort keys of schema.SORT_KEYS (judgments: feature in dimension order).
    generations = generations.sort_values(
        ["model", "condition", "sample_index", "generation_id"], kind="stable").reset_index(drop=True)
    scores = _frame("scores", score_rows).sort_values(
        ["model", "condition", "generation_id", "judge"], kind="stable").reset_index(drop=True)
    jdf = _frame("judgments", judgment_rows)
    feature_order = jdf["feature"].map({d: i for i, d in enumerate(dims)})
    jdf = (jdf.assign(_f=feature_order)
              .sort_values(["model", "condition", "generation_id", "judge", "_f"], kind="stable")
              .drop(columns="_f").reset_index(drop=True))
    return {"generations": generations, "judgments": jdf, "scores": scores}


# ---------------------------------------------------------------------------------------------
# Dataset access (the data package's loader and versioning)
# ---------------------------------------------------------------------------------------------
class DatasetAccess(Protocol):
    """What submission needs from a built dataset folder."""

    def judge_config_sha256(self) -> str | None:
        """The panel hash recorded in the dataset's manifest (``judge_config_sha256``)."""

    def table(self, config: str, split: str) -> pd.DataFrame:
        """One config and split as pandas (``KeyError`` when the split has no rows)."""

    def append(self, tables: Mapping[str, pd.DataFrame], *, tag: str, note: str) -> Any:
        """Write a new version holding these rows (split ``main``), atomically; refuses tampering."""


class LocalDataset:
    """A built dataset folder, through :func:`alienbench_data.load` and ``versioning.append_version``."""

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir)
        if not self.data_dir.is_dir():
            raise SubmitRefused(
                f"submit: dataset folder {self.data_dir} does not exist "
                "(fix: pass the folder written by 'alienbench build' with --data)"
            )

    def manifest(self) -> Any:
        from .loader import manifest_of

        return manifest_of(self.data_dir)

    def judge_config_sha256(self) -> str | None:
        return self.manifest().judge_config_sha256

    def table(self, config: str, split: str) -> pd.DataFrame:
        from .loader import load

        if not self.manifest().files_of(config, split):
            raise KeyError(f"{config}/{split}")
        return load(config, split, data_dir=self.data_dir)

    def append(self, tables: Mapping[str, pd.DataFrame], *, tag: str, note: str) -> Any:
        from .versioning import append_version

        return append_version(self.data_dir, {c: {"main": df} for c, df in tables.items()}, tag=tag, note=note)


def _concat_splits(ds: DatasetAccess, config: str, splits: Iterable[str]) -> pd.DataFrame:
    import pandas as pd

    frames = []
    for split in splits:
        try:
            frames.append(ds.table(config, split))
        except KeyError:  # no rows in this split
            continue
    if not frames:
        raise SubmitRefused(f"submit: the dataset has no {config!r} table (fix: rebuild it)")
    return pd.concat(frames, ignore_index=True)


def replay_judge(dataset: DatasetAccess | str | Path, *, config: JudgeConfig | None = None) -> ReplayJudge:
    """A :class:`~alienbench_data.judges.ReplayJudge` over a dataset's judgments and scores (all splits)."""
    ds = LocalDataset(dataset) if isinstance(dataset, str | Path) else dataset
    splits = ("main", "paraphrase", "human")
    return ReplayJudge(_concat_splits(ds, "judgments", splits), _concat_splits(ds, "scores", splits),
                       config=config)


# ---------------------------------------------------------------------------------------------
# Orchestration
# ---------------------------------------------------------------------------------------------
@dataclass
class SubmitResult:
    """What :func:`submit` did."""

    model: str
    n_generations: int
    journal: Path
    report: JudgingReport
    tables: dict[str, Any] = field(default_factory=dict)
    appended: Any = None


def default_journal_path(generations: str | Path, *, replay: bool = False) -> Path:
    """Journal beside the generations file: ``<file>.judge-journal.jsonl`` (replay: ``.replay-journal``)."""
    p = Path(generations)
    return p.with_name(p.name + (".replay-journal.jsonl" if replay else ".judge-journal.jsonl"))


def submit(
    data_dir: str | Path | None,
    generations: str | Path,
    *,
    replay: str | Path | DatasetAccess | None = None,
    model_name: str | None = None,
    journal: str | Path | None = None,
    concurrency: int = 4,
    judges: Mapping[str, Judge] | None = None,
    append: bool = True,
    validate_only: bool = False,
    note: str | None = None,
    dataset: DatasetAccess | None = None,
    config: JudgeConfig | None = None,
    policy: RetryPolicy = RetryPolicy(),  # noqa: B008
    sleep: Callable[[float], None] = time.sleep,
    timeout: float | None = None,
    progress: bool = True,
    stream: TextIO | None = None,
) -> SubmitResult:
    """Score a model's generations with the fixed judge panel and append it as a new dataset version.

    Parameters
    ----------
    data_dir
        The built dataset folder (``None`` only with ``append=False``: judge into the journal
        without a dataset).
    generations
        The submission file (see the module docstring).
    replay
        Answer from this dataset's judgments instead of calling providers (a folder or a
        :class:`DatasetAccess`).
    model_name
        Submit under this model id (generation ids are then derived from it).
    journal
        Journal path (default :func:`default_journal_path`).
    concurrency
        Parallel calls per judge.
    judges
        Backends to use (default: the providers, or the replay judge with ``replay``).
    append
        ``False``: stop after judging (the journal holds the results).
    validate_only
        Validate and print the estimate; make no call.
    note
        Note recorded with the new version (default names the model).
    dataset
        Dataset access to use instead of ``LocalDataset(data_dir)`` (tests, other storage).
    config
        Judge configuration (default: the package's fixed panel).
    policy, sleep, timeout
        Backoff schedule, sleep function and per-request timeout of provider calls.
    progress, stream
        Progress bar, and where messages go (default ``sys.stderr``).

    Returns
    -------
    SubmitResult

    Raises
    ------
    SubmitRefused
        Judge-config mismatch (before any call), incomplete judging (after the run; the journal
        keeps what was done), missing dataset. The dataset is left untouched.
    SubmissionError
        Invalid submission file (before any call).
    """
    cfg = config or judge_config()
    out = stream if stream is not None else sys.stderr
    ds: DatasetAccess | None = dataset
    if ds is None and data_dir is not None:
        ds = LocalDataset(data_dir)
    if ds is None and append and not validate_only:
        raise SubmitRefused(
            "submit: appending needs the dataset folder (fix: pass --data DIR, or --judge-only)"
        )

    existing_models: set[str] = set()
    existing_ids: set[str] = set()
    if ds is not None:
        recorded = ds.judge_config_sha256()
        if recorded != cfg.sha256:
            raise SubmitRefused(
                f"submit: judge configuration mismatch: the dataset was judged with panel sha256 "
                f"{recorded} but this package's panel is {cfg.sha256} (fix: use the alienbench version "
                "that built this dataset; scores from different panels are not comparable)"
            )
        gens = _concat_splits(ds, "generations", ("main", "paraphrase", "human"))
        existing_models = set(gens["model"].astype(str))
        existing_ids = set(gens["generation_id"].astype(str))

    sub = read_submission(generations, model_name=model_name, existing_models=existing_models,
                          existing_generation_ids=existing_ids)
    for w in sub.warnings[:5]:
        print(f"warning: {w}", file=out)
    if len(sub.warnings) > 5:
        print(f"warning: ... and {len(sub.warnings) - 5} more", file=out)

    is_replay = replay is not None
    jpath = Path(journal) if journal is not None else default_journal_path(generations, replay=is_replay)
    if validate_only:
        n = len(sub) * len(cfg.judge_aliases)
        print(f"{sub.path}: valid submission of {sub.model}: {len(sub)} generations; judging needs "
              f"{len(sub)} x {len(cfg.judge_aliases)} = {n} judge calls (no call made: --validate-only).",
              file=out)
        return SubmitResult(model=sub.model, n_generations=len(sub), journal=jpath,
                            report=JudgingReport(n_planned=n, n_already_done=0))

    if judges is None:
        if is_replay:
            rj = replay_judge(replay, config=cfg)  # type: ignore[arg-type]
            judges = {a: rj for a in cfg.judge_aliases}
        else:
            judges = provider_panel(cfg, **({"timeout": timeout} if timeout is not None else {}))

    report = run_judging(sub.generations, judges, journal=jpath, config=cfg, concurrency=concurrency,
                         policy=policy, sleep=sleep, progress=progress, stream=out)
    result = SubmitResult(model=sub.model, n_generations=len(sub), journal=jpath, report=report)
    if not report.complete:
        raise SubmitRefused(
            f"submit: incomplete judging: {len(report.entries)} of {report.n_planned} judge calls done, "
            f"{len(report.failures)} failed this run; the dataset is untouched (fix: rerun the same "
            f"command; the {len(report.entries)} completed calls are kept in {jpath} and not repeated)"
        )
    result.tables = build_tables(sub, report.entries, config=cfg)
    if append:
        assert ds is not None
        tag = re.sub(r"[^A-Za-z0-9._-]+", "-", sub.model.replace("/", "__"))
        result.appended = ds.append(result.tables, tag=tag, note=note or f"submission: {sub.model}")
        print(f"appended {sub.model}: {len(sub)} generations, {len(result.tables['scores'])} scores, "
              f"{len(result.tables['judgments'])} judgments.", file=out)
    return result
