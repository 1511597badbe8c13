"""Validate a built dataset folder: manifest and checksums, card, schema, keys, labels, counts.

Every problem names the file, the 0-based row inside that file and the field. ``validate``
returns the list; the CLI prints it and exits non-zero when it is not empty.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .config import benchmark, judge_config
from .errors import DatasetError, Problem
from .manifest import Manifest, current_manifest, verify_chain, verify_files
from .schema import CONDITIONS, CONFIGS, DIM_COLUMNS, DIMENSIONS, FEATURES, HUMAN_MODEL, PARAPHRASES, PRIMARY_KEYS

__all__ = ["validate"]

_MAX_ROWS_PER_CHECK = 5  # rows listed per failed check; the message gives the total


class _Frames:
    """Rows of every (config, split), with the file and in-file row of each row."""

    def __init__(self, root: Path, manifest: Manifest) -> None:
        self.data: dict[str, dict[str, pd.DataFrame]] = {c: {} for c in CONFIGS}
        for config in CONFIGS:
            by_split: dict[str, list[pd.DataFrame]] = {}
            for f in manifest.files_of(config):
                df = pq.read_table(root / f.path).to_pandas()
                df["_file"] = f.path
                df["_row"] = np.arange(len(df))
                by_split.setdefault(f.split, []).append(df)
            for split, parts in by_split.items():
                self.data[config][split] = pd.concat(parts, ignore_index=True)

    def all(self, config: str) -> pd.DataFrame:
        parts = [df.assign(_split=s) for s, df in self.data[config].items()]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _report(problems: list[Problem], df: pd.DataFrame, mask: pd.Series, field: str, message: str,
            fix: str = "") -> None:
    bad = df[mask]
    if bad.empty:
        return
    total = len(bad)
    for _, r in bad.head(_MAX_ROWS_PER_CHECK).iterrows():
        extra = f" ({total} rows in all)" if total > _MAX_ROWS_PER_CHECK else ""
        problems.append(Problem(r["_file"], int(r["_row"]), field, message + extra, fix))


def _check_card(root: Path, manifest: Manifest, problems: list[Problem]) -> None:
    from datasets.features import Features
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    path = root / "README.md"
    if not path.is_file():
        problems.append(Problem("README.md", None, None, "dataset card missing", "re-run the build"))
        return
    try:
        card = DatasetCard.load(path)
    except Exception as exc:
        problems.append(Problem("README.md", None, None, f"card YAML does not parse ({exc})"))
        return
    data = card.data
    configs = MetadataConfigs.from_dataset_card_data(data)
    for config in CONFIGS:
        want = {s: [f.path for f in manifest.files_of(config, s)] for s in {f.split for f in manifest.files_of(config)}}
        if not want:
            continue
        got_cfg = configs.get(config)
        if got_cfg is None:
            problems.append(Problem("README.md", None, f"configs.{config}", "config missing from the card"))
            continue
        got = {d["split"]: list(d["path"]) if isinstance(d["path"], list) else [d["path"]]
               for d in got_cfg.get("data_files", [])}
        if got != want:
            problems.append(Problem("README.md", None, f"configs.{config}.data_files",
                                    f"card lists {got} but the manifest has {want}",
                                    "regenerate the card from the manifest"))
    infos = data.to_dict().get("dataset_info") or []
    infos = infos if isinstance(infos, list) else [infos]
    by_name = {i.get("config_name"): i for i in infos}
    for config in CONFIGS:
        if not manifest.files_of(config):
            continue
        info = by_name.get(config)
        if info is None:
            problems.append(Problem("README.md", None, f"dataset_info.{config}", "column types not declared"))
            continue
        feats = Features._from_yaml_list(info.get("features", []))
        if feats != FEATURES[config]:
            problems.append(Problem("README.md", None, f"dataset_info.{config}.features",
                                    "declared column types differ from the schema", "regenerate the card"))
        for s in info.get("splits", []):
            n = manifest.rows(config, s["name"])
            if s.get("num_examples") != n:
                problems.append(Problem("README.md", None, f"dataset_info.{config}.splits.{s['name']}",
                                        f"num_examples {s.get('num_examples')} != manifest rows {n}"))
    if manifest.sha256 not in card.text:
        problems.append(Problem("README.md", None, None, f"card does not name the current manifest "
                                f"(v{manifest.version}, {manifest.sha256[:12]}...)", "regenerate the card"))


def _sig(t: pa.DataType) -> str:
    # Parquet names list items "element", Arrow "item": compare the value types only.
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{_sig(t.value_type)}>"
    return str(t)


def _check_schema(root: Path, manifest: Manifest, problems: list[Problem]) -> None:
    for f in manifest.files:
        if f.config not in FEATURES:
            problems.append(Problem(f.path, None, "config", f"unknown config {f.config!r}"))
            continue
        try:
            meta = pq.read_metadata(root / f.path)
        except Exception as exc:
            problems.append(Problem(f.path, None, None, f"not a readable parquet file ({exc})"))
            continue
        want = FEATURES[f.config].arrow_schema
        got = meta.schema.to_arrow_schema()
        if [(x.name, _sig(x.type)) for x in got] != [(x.name, _sig(x.type)) for x in want]:
            diff = sorted({x.name for x in got} ^ {x.name for x in want}) or [
                x.name for x, y in zip(got, want, strict=False) if _sig(x.type) != _sig(y.type)]
            problems.append(Problem(f.path, None, ",".join(diff[:5]) or None,
                                    "columns or types differ from the declared schema"))
        if b"huggingface" not in (got.metadata or {}):
            problems.append(Problem(f.path, None, None, "declared features are not embedded in the file"))
        if meta.num_rows != f.rows:
            problems.append(Problem(f.path, None, None, f"{meta.num_rows} rows but the manifest says {f.rows}"))


def _check_rows(fr: _Frames, manifest: Manifest, problems: list[Problem], expect_design: bool) -> None:
    jc = judge_config()
    gens = fr.all("generations")
    scores = fr.all("scores")
    judg = fr.all("judgments")
    parts = fr.all("participants")
    judges = set(jc.judge_aliases)

    for config, df in (("generations", gens), ("scores", scores), ("judgments", judg), ("participants", parts)):
        if df.empty:
            continue
        key = list(PRIMARY_KEYS[config])
        dup = df.duplicated(key, keep="first")
        _report(problems, df, dup, ",".join(key), f"duplicate {config} key", "remove the duplicate row")

    if not gens.empty:
        ok_cond = np.where(gens["_split"].eq("paraphrase"), gens["condition"].isin(PARAPHRASES[1:]),
                           gens["condition"].isin(CONDITIONS))
        _report(problems, gens, ~pd.Series(ok_cond, index=gens.index), "condition", "unknown condition for split")
        _report(problems, gens, gens["condition_set"] != gens["_split"], "condition_set", "differs from the split")
        _report(problems, gens, ~gens["source"].isin(["llm", "human"]), "source", "must be llm or human")
        bench = benchmark()
        texts = gens["condition"].map(lambda c: bench.condition_text(c) if c in (*CONDITIONS, *PARAPHRASES) else None)
        _report(problems, gens, gens["prompt_text"] != texts, "prompt_text", "differs from the condition's prompt")
        _report(problems, gens, gens["response"].fillna("").str.strip().eq(""), "response", "empty response")

    gid_split = dict(zip(gens["generation_id"], gens["_split"], strict=False)) if not gens.empty else {}
    responses = dict(zip(gens["generation_id"], gens["response"], strict=False)) if not gens.empty else {}
    for df in (scores, judg):
        if df.empty:
            continue
        split_of = df["generation_id"].map(gid_split)
        _report(problems, df, split_of.isna(), "generation_id", "references no generation",
                "every judge row must reference a generation of the dataset")
        _report(problems, df, split_of.notna() & (split_of != df["_split"]), "generation_id",
                "references a generation of another split")
        _report(problems, df, ~df["judge"].isin(judges), "judge", "not a judge of the fixed panel")
        want = df["generation_id"].map(lambda g: jc.prompt_sha256(responses[g]) if g in responses else None)
        _report(problems, df, split_of.notna() & (df["judge_prompt_sha256"] != want), "judge_prompt_sha256",
                "does not match the prompt rendered from the generation's response")
    if not judg.empty:
        _report(problems, judg, ~judg["feature"].isin(DIMENSIONS), "feature", "unknown feature")
        _report(problems, judg, judg["is_departure"].isna(), "is_departure", "missing label")
    if not scores.empty:
        labels = scores[list(DIM_COLUMNS)]
        for c in DIM_COLUMNS:
            _report(problems, scores, ~scores[c].isin([0, 1]), c, "label must be 0 or 1")
        _report(problems, scores, scores["ward_score"] != labels.sum(axis=1), "ward_score",
                "does not equal the sum of the 10 labels", "recompute ward_score from dim_*")
        _report(problems, scores, scores["judge_config_sha256"] != manifest.judge_config_sha256,
                "judge_config_sha256", "differs from the dataset's judge configuration")
        if not judg.empty:
            wide = judg.pivot_table(index=["generation_id", "judge"], columns="feature", values="is_departure",
                                    aggfunc="first")
            s = scores.set_index(["generation_id", "judge"])
            common = s.index.intersection(wide.index)
            for d in DIMENSIONS:
                if d not in wide:
                    continue
                a = s.loc[common, f"dim_{d}"].astype(int).to_numpy()
                b = wide.loc[common, d].astype(int).to_numpy()
                mism = pd.Series(False, index=scores.index)
                bad_keys = set(common[a != b])
                if bad_keys:
                    mism = pd.Series([k in bad_keys for k in zip(scores["generation_id"], scores["judge"],
                                                                   strict=True)], index=scores.index)
                _report(problems, scores, mism, f"dim_{d}", "disagrees with the judgments table")
            n_j = judg.groupby(["generation_id", "judge"]).size()
            short = n_j[n_j != len(DIMENSIONS)]
            for (g, j), n in short.head(_MAX_ROWS_PER_CHECK).items():
                problems.append(Problem("judgments", None, "feature", f"{g} / {j} has {n} feature rows, not 10"))
            missing = s.index.difference(n_j.index)
            for g, j in list(missing)[:_MAX_ROWS_PER_CHECK]:
                problems.append(Problem("judgments", None, "generation_id", f"score {g} / {j} has no judgments"))
    if not parts.empty:
        human_ids = set(gens.loc[gens["_split"] == "human", "generation_id"]) if not gens.empty else set()
        _report(problems, parts, ~parts["generation_id"].isin(human_ids), "generation_id",
                "participant references no human generation")
    if expect_design and not gens.empty:
        _check_design(gens, scores, manifest, problems)


def _check_design(gens: pd.DataFrame, scores: pd.DataFrame, manifest: Manifest, problems: list[Problem]) -> None:
    """Counts per cell: 30 per (model, condition) with sample_index 0-29, 10 per paraphrase cell, 3 judges."""
    bench = benchmark()
    n_main = bench.generation["samples_per_condition"]
    n_para = bench.generation["prompt_ablation_samples_per_condition"]
    n_judges = len(judge_config().judge_aliases)
    main = gens[gens["_split"] == "main"]
    for model in manifest.models:
        for cond in CONDITIONS:
            cell = main[(main["model"] == model) & (main["condition"] == cond)]
            idx = sorted(cell["sample_index"].tolist())
            if idx != list(range(n_main)):
                problems.append(Problem("generations/main", None, "sample_index",
                                        f"{model} / {cond}: {len(cell)} generations, "
                                        f"expected sample_index 0-{n_main - 1}"))
    para = gens[gens["_split"] == "paraphrase"]
    for model in sorted(para["model"].unique()):
        for cond in PARAPHRASES[1:]:
            cell = para[(para["model"] == model) & (para["condition"] == cond)]
            if sorted(cell["sample_index"].tolist()) != list(range(n_para)):
                problems.append(Problem("generations/paraphrase", None, "sample_index",
                                        f"{model} / {cond}: {len(cell)} generations, expected 0-{n_para - 1}"))
    human = gens[gens["_split"] == "human"]
    if len(human) and (human["model"] != HUMAN_MODEL).any():
        problems.append(Problem("generations/human", None, "model", f"human rows must have model {HUMAN_MODEL}"))
    if not scores.empty:
        per_gen = scores.groupby("generation_id")["judge"].nunique()
        counts = gens["generation_id"].map(per_gen).fillna(0).astype(int)
        _report(problems, gens, counts != n_judges, "generation_id",
                f"not judged by all {n_judges} judges of the panel")


def validate(data_dir: Path | str, *, expect_design: bool = True, load_with_datasets: bool = True) -> list[Problem]:
    """Check a dataset folder; return every problem found (empty list = valid).

    Parameters
    ----------
    expect_design : bool
        Also check the benchmark's counts per cell (30 per model x condition etc.).
    load_with_datasets : bool
        Load every config through ``datasets.load_dataset`` (fresh temporary cache), which is how
        users load it; a wrong ``data_files`` entry only shows up that way.
    """
    root = Path(data_dir)
    try:
        manifest = current_manifest(root)
    except DatasetError as exc:
        return list(exc.problems)
    problems = verify_chain(root)
    problems += verify_files(root, manifest)
    if problems:
        return problems  # do not interpret rows of files that fail their checksums
    _check_card(root, manifest, problems)
    _check_schema(root, manifest, problems)
    if problems:
        return problems
    _check_rows(_Frames(root, manifest), manifest, problems, expect_design)
    if load_with_datasets and not problems:
        _check_load_dataset(root, manifest, problems)
    return problems


def _check_load_dataset(root: Path, manifest: Manifest, problems: list[Problem]) -> None:
    import datasets

    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="alienbench-validate-") as cache:
        for config in CONFIGS:
            if not manifest.files_of(config):
                continue
            try:
                dd = datasets.load_dataset(str(root.resolve()), config, cache_dir=cache)
            except Exception as exc:
                problems.append(Problem("README.md", None, f"configs.{config}",
                                        f"datasets.load_dataset fails: {type(exc).__name__}: {exc}"))
                continue
            for split, ds in dd.items():
                if ds.num_rows != manifest.rows(config, split):
                    problems.append(Problem("README.md", None, f"configs.{config}.{split}",
                                            f"load_dataset gives {ds.num_rows} rows, "
                                            f"manifest {manifest.rows(config, split)}"))
