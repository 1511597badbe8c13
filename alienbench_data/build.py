"""Build the AlienBench dataset (parquet + card + manifest) from the authors' raw release.

The canonical selection is exactly the one the analysis used (data-audit.md section 3):

* main: per configured (model, condition), generations with ``sample_index < 30``;
* paraphrase: per (model, paraphrase), ``sample_index < 10`` (the ablation's baseline column reuses
  the 300 main baseline rows, marked ``in_paraphrase_reference``; they are not copied);
* human: all 100 Prolific responses (the raw records carry no sample_index; one is assigned
  0-99 by submission time, then id).

Judge records of selected generations only. Main-study scores come from the release's score
files and are cross-checked against the extractions; paraphrase and human scores, which the
release does not ship, are recomputed from the extractions (the same rule the authors used).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import card as card_mod
from .config import benchmark, judge_config, sha256_text
from .errors import AlienbenchError, Problem, ReleaseError
from .io import DIR_MODE, sha256_file, swap_dir_into_place, write_parquet
from .manifest import FileEntry, Manifest, list_versions
from .quality import add_quality_columns, paste_evidence
from .raw import Checker, Record, ReleaseConfig, dir_name, read_jsonl, read_release_config
from .schema import DIMENSIONS, FEATURES, HUMAN_MODEL, SPLITS_OF

__all__ = ["DEFAULT_RELEASE", "BuildReport", "Tables", "build", "data_file_path", "read_release"]

DEFAULT_RELEASE = Path("../shared/alienbench-release")
DEFAULT_VERSION = "1.0.0"
RELEASE_SOURCE = {"repository": "joetm/alienbench", "commit": "2d6fe2a", "date": "2026-05-07"}

Tables = dict[str, dict[str, pd.DataFrame]]  # config -> split -> frame


@dataclass
class BuildReport:
    """What the build read, kept and left out (printed by the CLI, summarised in the card)."""

    counts: dict[str, int] = field(default_factory=Counter)
    ignored_paths: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def data_file_path(config: str, split: str, version: str, tag: str) -> str:
    """Relative path of one data file. New versions add new files; none is ever rewritten."""
    return f"data/{config}/{split}/v{version}-{tag}.parquet"


def _route(call_id: Any, judge: str) -> str:
    cid = str(call_id or "")
    if cid.startswith("msg_bdrk"):
        return "bedrock"
    if cid.startswith("msg_"):
        return "anthropic"
    if cid.startswith("chatcmpl-"):
        return "openai"
    provider = judge.split("/", 1)[0]
    return {"google": "vertex", "anthropic": "anthropic", "openai": "openai"}.get(provider, provider)


def _read_generations(root: Path, cfg: ReleaseConfig, models: list[str], chk: Checker,
                      report: BuildReport) -> tuple[list[dict[str, Any]], dict[tuple[str, str], dict[str, Record]]]:
    """All generation records of the configured cells; returns selected rows and per-cell id maps."""
    gen_root = root / "data" / "generations"
    if not gen_root.is_dir():
        raise ReleaseError(Problem(str(root / "data" / "generations"), None, None, "folder not found",
                                   "the release must hold data/generations"), context="build")
    para_ids = [p for p in cfg.paraphrases if p not in cfg.conditions]
    cells: list[tuple[str, str, str]] = []  # (model, condition, condition_set)
    for m in models:
        cells += [(m, c, "main") for c in cfg.conditions]
        cells += [(m, p, "paraphrase") for p in para_ids]
    cells.append((HUMAN_MODEL, "baseline", "human"))
    expected_dirs = {(dir_name(m), c) for m, c, _ in cells}
    for d in sorted((root / "data").iterdir()):
        if d.is_dir() and d.name not in ("generations", "extractions", "scores"):
            report.ignored_paths.append(str(d.relative_to(root)))
    for d in sorted(gen_root.iterdir()):
        if not d.is_dir():
            continue
        if d.name.startswith("_"):
            report.ignored_paths.append(str(d.relative_to(root)))
            continue
        for c in sorted(p for p in d.iterdir() if p.is_dir()):
            if (d.name, c.name) not in expected_dirs:
                report.ignored_paths.append(str(c.relative_to(root)))

    seen_ids: dict[str, Record] = {}
    by_cell: dict[tuple[str, str], dict[str, Record]] = {}
    selected: list[dict[str, Any]] = []
    for model, cond, cset in cells:
        path = gen_root / dir_name(model) / cond / "responses.jsonl"
        if not path.is_file():
            if cset == "human":
                report.warnings.append(f"no human baseline at {path.relative_to(root)}")
            else:
                report.warnings.append(f"missing cell {model} / {cond} ({path.relative_to(root)})")
            continue
        texts = cfg.conditions if cset != "paraphrase" else cfg.paraphrases
        cell: dict[str, Record] = {}
        by_index: dict[int, Record] = {}
        human_rows = []
        for rec in read_jsonl(path, root, chk.problems):
            d = rec.data
            ok = chk.need(rec, "id", str, nonempty=True)
            ok &= chk.need(rec, "response", str, nonempty=True)
            ok &= chk.need(rec, "prompt_text", str)
            ok &= chk.need(rec, "completion_tokens", int)
            ok &= chk.need(rec, "model", str) and chk.need(rec, "prompt_variant", str)
            if cset != "human":
                ok &= chk.need(rec, "sample_index", int)
                ok &= chk.need(rec, "temperature", (int, float), nullable=True)
                ok &= chk.need(rec, "seed", int, nullable=True)
            for opt, typ in (("prompt_tokens", int), ("duration_seconds", (int, float)),
                             ("model_resolved", str)):
                if opt in d:
                    ok &= chk.need(rec, opt, typ, nullable=True)
            if not ok:
                continue
            if d["model"] != model:
                chk.add(rec, "model", f"record says {d['model']!r} but the folder is {model!r}",
                        "move the record to its model's folder")
                continue
            if d["prompt_variant"] != cond:
                chk.add(rec, "prompt_variant", f"record says {d['prompt_variant']!r} but the folder is "
                        f"{cond!r}", "move the record to its condition's folder")
                continue
            if d["prompt_text"] != texts[cond]:
                chk.add(rec, "prompt_text", f"differs from the config text of condition {cond!r}",
                        "the generation was made with another prompt; remove it or fix config.yaml")
                continue
            gid = d["id"]
            if gid in seen_ids:
                first = seen_ids[gid]
                chk.add(rec, "id", f"duplicate id {gid} (first at {first.file}:{first.line})",
                        "remove the duplicate record")
                continue
            seen_ids[gid] = rec
            cell[gid] = rec
            if cset == "human":
                human_rows.append(rec)
                continue
            si = d["sample_index"]
            if si < 0:
                chk.add(rec, "sample_index", f"negative sample_index {si}")
                continue
            if si in by_index:
                first = by_index[si]
                chk.add(rec, "sample_index", f"duplicate sample_index {si} in this cell (first at line "
                        f"{first.line})", "remove the duplicate record")
                continue
            by_index[si] = rec
            cap = cfg.samples_per_condition if cset == "main" else cfg.paraphrase_samples
            if si < cap:
                selected.append(_gen_row(rec, cset, cfg))
            else:
                report.counts[f"unused_{cset}_generations"] += 1
        if cset == "human":
            # Assign 0..n-1 by (submission time, id): the raw records have no sample_index.
            human_rows.sort(key=lambda r: (float(r.data.get("timestamp") or 0.0), r.data["id"]))
            for i, rec in enumerate(human_rows):
                row = _gen_row(rec, cset, cfg)
                row["sample_index"] = i
                selected.append(row)
        by_cell[(model, cond)] = cell
    return selected, by_cell


def _gen_row(rec: Record, cset: str, cfg: ReleaseConfig) -> dict[str, Any]:
    d = rec.data
    human = cset == "human"
    model = d["model"]
    cond = d["prompt_variant"]
    return {
        "generation_id": d["id"],
        "source": "human" if human else "llm",
        "model": model,
        "model_resolved": d.get("model_resolved") or model,
        "condition": cond,
        "condition_set": cset,
        "paraphrase_of": "baseline" if cset == "paraphrase" else None,
        "prompt_text": d["prompt_text"],
        "prompt_sha256": sha256_text(d["prompt_text"]),
        "sample_index": d.get("sample_index"),
        "seed": d.get("seed"),
        "temperature": None if d.get("temperature") is None else float(d["temperature"]),
        "max_tokens": None if human else cfg.max_tokens_for(model, paraphrase=cset == "paraphrase"),
        "prompt_tokens": d.get("prompt_tokens"),
        "completion_tokens": d["completion_tokens"],
        "duration_seconds": None if d.get("duration_seconds") is None else float(d["duration_seconds"]),
        "response": d["response"],
        "in_paraphrase_reference": cset == "main" and cond == "baseline",
        "_raw": d,
    }


def _read_labels(rec: Record, chk: Checker, key: str, want_bool: bool) -> dict[str, Any] | None:
    feats = rec.data.get(key)
    if not isinstance(feats, dict):
        chk.add(rec, key, f"expected an object of the 10 features, got {type(feats).__name__}")
        return None
    ok = True
    for name in feats:
        if name not in DIMENSIONS:
            chk.add(rec, f"{key}.{name}", f"unknown feature {name!r}",
                    f"features are {', '.join(DIMENSIONS)}")
            ok = False
    for name in DIMENSIONS:
        if name not in feats:
            chk.add(rec, f"{key}.{name}", "missing feature", "the judge record must label all 10 features")
            ok = False
            continue
        v = feats[name]
        if want_bool:
            if not isinstance(v, dict) or "is_departure" not in v:
                chk.add(rec, f"{key}.{name}", "expected an object with is_departure")
                ok = False
            elif not isinstance(v["is_departure"], bool):
                chk.add(rec, f"{key}.{name}.is_departure",
                        f"non-bool label {v['is_departure']!r}", "labels must be JSON true/false")
                ok = False
            else:
                for sub in ("feature_described", "reasoning"):
                    if not isinstance(v.get(sub, ""), str | type(None)):
                        chk.add(rec, f"{key}.{name}.{sub}", "expected a string")
                        ok = False
        elif isinstance(v, bool) or v not in (0, 1):
            chk.add(rec, f"{key}.{name}", f"label {v!r} is not 0 or 1")
            ok = False
    return feats if ok else None


def _read_judging(root: Path, cfg: ReleaseConfig, gens: list[dict[str, Any]],
                  by_cell: dict[tuple[str, str], dict[str, Record]], chk: Checker, report: BuildReport,
                  jc_sha: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    selected = {g["generation_id"]: g for g in gens}
    prompt_hash = {gid: judge_config().prompt_sha256(g["response"]) for gid, g in selected.items()}
    score_rows: list[dict[str, Any]] = []
    judgment_rows: list[dict[str, Any]] = []
    ext_root = root / "data" / "extractions"
    sc_root = root / "data" / "scores"
    cells = sorted(by_cell)
    for judge in cfg.judges:
        for model, cond in cells:
            cell = by_cell[(model, cond)]
            path = ext_root / dir_name(judge) / dir_name(model) / cond / "features.jsonl"
            if not path.is_file():
                if any(gid in selected for gid in cell):
                    report.warnings.append(f"no extractions by {judge} for {model} / {cond}")
                continue
            kept: dict[str, tuple[Record, dict[str, Any]]] = {}
            for rec in read_jsonl(path, root, chk.problems):
                d = rec.data
                if not (chk.need(rec, "generation_id", str) and chk.need(rec, "judge_model", str)):
                    continue
                gid = d["generation_id"]
                if d["judge_model"] != judge:
                    chk.add(rec, "judge_model", f"record says {d['judge_model']!r} but the folder is {judge!r}")
                    continue
                if gid not in cell:
                    chk.add(rec, "generation_id", f"{gid} is not a generation of {model} / {cond}",
                            "every judgment must reference a generation of its cell")
                    continue
                if gid not in selected:
                    report.counts["unused_extractions"] += 1
                    continue
                if d.get("parse_error"):
                    report.counts["parse_error_extractions"] += 1
                    continue
                if gid in kept:
                    chk.add(rec, "generation_id", f"duplicate judgment of {gid} by {judge} (first at line "
                            f"{kept[gid][0].line})", "remove the duplicate record")
                    continue
                ok = chk.need(rec, "n_parse_attempts", int, nullable=True)
                for k in ("prompt_tokens", "completion_tokens"):
                    if k in d:
                        ok &= chk.need(rec, k, int, nullable=True)
                feats = _read_labels(rec, chk, "features", want_bool=True)
                if feats is None or not ok:
                    continue
                kept[gid] = (rec, feats)

            scores_from_file: dict[str, tuple[Record, dict[str, Any]]] = {}
            spath = sc_root / dir_name(judge) / dir_name(model) / cond / "ward_scores.jsonl"
            score_file = spath.is_file()
            if score_file:
                for rec in read_jsonl(spath, root, chk.problems):
                    d = rec.data
                    if not (chk.need(rec, "generation_id", str) and chk.need(rec, "ward_score", int)):
                        continue
                    gid = d["generation_id"]
                    if gid not in cell:
                        chk.add(rec, "generation_id", f"{gid} is not a generation of {model} / {cond}")
                        continue
                    if gid not in selected:
                        report.counts["unused_scores"] += 1
                        continue
                    if gid in scores_from_file:
                        chk.add(rec, "generation_id", f"duplicate score of {gid} by {judge}",
                                "remove the duplicate record")
                        continue
                    per = _read_labels(rec, chk, "per_dimension", want_bool=False)
                    if per is None:
                        continue
                    total = sum(int(per[k]) for k in DIMENSIONS)
                    if d["ward_score"] != total:
                        chk.add(rec, "ward_score", f"ward_score {d['ward_score']} disagrees with its labels "
                                f"(sum of per_dimension = {total})", "recompute the score from the labels")
                        continue
                    if gid not in kept:
                        chk.add(rec, "generation_id", f"score of {gid} has no extraction by {judge}")
                        continue
                    labels = {k: int(kept[gid][1][k]["is_departure"]) for k in DIMENSIONS}
                    diff = [k for k in DIMENSIONS if labels[k] != int(per[k])]
                    if diff:
                        chk.add(rec, f"per_dimension.{diff[0]}", f"score disagrees with the extraction's "
                                f"labels on {', '.join(diff)}", "re-run the score stage")
                        continue
                    scores_from_file[gid] = (rec, per)
                missing = [gid for gid in kept if gid not in scores_from_file]
                if missing:
                    rec0 = kept[missing[0]][0]
                    chk.problems.append(Problem(str(spath.relative_to(root)), None, "generation_id",
                                                f"{len(missing)} judged generation(s) have no score record, "
                                                f"e.g. {missing[0]} ({rec0.file}:{rec0.line})",
                                                "re-run the score stage, or delete this file to recompute "
                                                "all scores from the extractions"))

            for gid in sorted(kept, key=lambda g: (selected[g]["sample_index"], g)):
                rec, feats = kept[gid]
                d = rec.data
                g = selected[gid]
                labels = {f"dim_{k}": int(bool(feats[k]["is_departure"])) for k in DIMENSIONS}
                score_rows.append({
                    "generation_id": gid,
                    "model": model,
                    "condition": cond,
                    "judge": judge,
                    "judge_model_resolved": d.get("judge_model_resolved") or judge,
                    "judge_route": _route(d.get("judge_call_id"), judge),
                    "judge_config_sha256": jc_sha,
                    "judge_prompt_sha256": prompt_hash[gid],
                    "ward_score": sum(labels.values()),
                    **labels,
                    "n_parse_attempts": d.get("n_parse_attempts"),
                    "judge_prompt_tokens": d.get("prompt_tokens"),
                    "judge_completion_tokens": d.get("completion_tokens"),
                    "judge_duration_seconds": d.get("duration_seconds"),
                    "score_source": "release_scores" if score_file else "recomputed_from_extractions",
                    "_set": g["condition_set"],
                })
                for k in DIMENSIONS:
                    f = feats[k]
                    judgment_rows.append({
                        "generation_id": gid,
                        "model": model,
                        "condition": cond,
                        "judge": judge,
                        "judge_model_resolved": d.get("judge_model_resolved") or judge,
                        "judge_prompt_sha256": prompt_hash[gid],
                        "feature": k,
                        "is_departure": bool(f["is_departure"]),
                        "feature_described": f.get("feature_described"),
                        "reasoning": f.get("reasoning"),
                        "_set": g["condition_set"],
                    })
    return score_rows, judgment_rows


def read_release(release: Path | str, *, exclude_models: tuple[str, ...] = (),
                 version: str = DEFAULT_VERSION) -> tuple[Tables, BuildReport, ReleaseConfig]:
    """Read and check the raw release; return the tidy tables (nothing is written).

    Raises :class:`ReleaseError` listing every problem (file, line, field, fix).
    """
    root = Path(release)
    if not (root / "data").is_dir():
        raise ReleaseError(Problem(str(root), None, None, "not a release folder (no data/)",
                                   "pass --release pointing at the authors' release root"), context="build")
    cfg = read_release_config(root)
    unknown = [m for m in exclude_models if m not in cfg.models]
    if unknown:
        raise AlienbenchError(f"build: --exclude-model {unknown[0]!r} is not a configured model; "
                              f"choose from {', '.join(cfg.models)}")
    models = [m for m in cfg.models if m not in exclude_models]
    problems: list[Problem] = []
    chk = Checker(problems)
    report = BuildReport()
    gens, by_cell = _read_generations(root, cfg, models, chk, report)
    jc_sha = judge_config().sha256
    scores, judgments = ([], []) if problems else _read_judging(root, cfg, gens, by_cell, chk, report, jc_sha)
    if problems:
        raise ReleaseError(problems, context=f"build: the release at {root} has problems; nothing was written")

    gdf = pd.DataFrame(gens)
    raw = gdf.pop("_raw")
    gdf = add_quality_columns(gdf)
    gdf["added_in_version"] = version
    order = {m: i for i, m in enumerate([*cfg.models, HUMAN_MODEL])}
    corder = {c: i for i, c in enumerate([*cfg.conditions, *cfg.paraphrases])}

    def _sort(df: pd.DataFrame, extra: list[str]) -> pd.DataFrame:
        key = df.assign(_m=df["model"].map(order), _c=df["condition"].map(corder))
        return key.sort_values(["_m", "_c", *extra], kind="stable").drop(columns=["_m", "_c"])

    tables: Tables = {c: {} for c in FEATURES}
    gdf["_raw_idx"] = range(len(gdf))
    sdf = pd.DataFrame(scores)
    jdf = pd.DataFrame(judgments)
    si = gdf.set_index("generation_id")["sample_index"]
    for split in ("main", "paraphrase", "human"):
        g = _sort(gdf[gdf["condition_set"] == split], ["sample_index", "generation_id"])
        if len(g):
            tables["generations"][split] = g.drop(columns=["_raw_idx"]).reset_index(drop=True)
        if len(sdf):
            s = sdf[sdf["_set"] == split].drop(columns=["_set"])
            if len(s):
                s = s.assign(_si=s["generation_id"].map(si))
                s = _sort(s, ["_si", "generation_id", "judge"]).drop(columns=["_si"])
                s["added_in_version"] = version
                tables["scores"][split] = s.reset_index(drop=True)
        if len(jdf):
            j = jdf[jdf["_set"] == split].drop(columns=["_set"])
            if len(j):
                j = j.assign(_si=j["generation_id"].map(si),
                             _f=j["feature"].map({d: i for i, d in enumerate(DIMENSIONS)}))
                j = _sort(j, ["_si", "generation_id", "judge", "_f"]).drop(columns=["_si", "_f"])
                j["added_in_version"] = version
                tables["judgments"][split] = j.reset_index(drop=True)

    human = gdf[gdf["condition_set"] == "human"]
    if len(human):
        rows = []
        for i, (_, g) in enumerate(human.sort_values("sample_index").iterrows(), 1):
            d = raw.iloc[int(g["_raw_idx"])]
            prior = d.get("prior_exposure")
            rows.append({
                "participant_id": f"P{i:03d}",
                "generation_id": g["generation_id"],
                "biology_background": d.get("biology_background"),
                "prior_exposure": None if prior is None else str(prior).strip().lower() in ("yes", "true", "1"),
                "suspected_llm_paste": "suspected_llm_paste" in g["quality_flags"],
                "paste_evidence": paste_evidence(g["response"]) or None,
                "excluded_in_paper": None,
            })
        tables["participants"]["human"] = pd.DataFrame(rows)
    for k in ("generations", "scores", "judgments"):
        for split, df in tables[k].items():
            report.counts[f"{k}/{split}"] = len(df)
    return tables, report, cfg


def write_tables(tables: Tables, out: Path, version: str, tag: str) -> list[FileEntry]:
    """Write one parquet file per (config, split); returns their manifest entries."""
    entries = []
    for config, splits in tables.items():
        for split, df in splits.items():
            if split not in SPLITS_OF[config]:
                raise ValueError(f"write_tables: split {split!r} is not a split of {config!r}")
            rel_path = data_file_path(config, split, version, tag)
            path = out / rel_path
            if path.exists():
                raise AlienbenchError(f"write_tables: {rel_path} already exists; released files are never "
                                      "rewritten (choose a new version)")
            write_parquet(df, FEATURES[config], path)
            entries.append(FileEntry(rel_path, sha256_file(path), path.stat().st_size, len(df),
                                     config, split, version))
    return entries


def build(release: Path | str = DEFAULT_RELEASE, out: Path | str = "alienbench", *,
          version: str = DEFAULT_VERSION, exclude_models: tuple[str, ...] = (),
          overwrite: bool = False) -> tuple[Manifest, BuildReport]:
    """Build the dataset folder ``out`` from the raw release at ``release``.

    The folder is assembled in a temporary sibling and renamed into place, so a failed or
    interrupted build leaves nothing partial. An existing folder is replaced only when it holds
    no version beyond the one being built (appended models are never dropped silently); pass
    ``overwrite=True`` to replace it anyway.
    """
    out = Path(out)
    tables, report, _cfg = read_release(release, exclude_models=exclude_models, version=version)
    if out.exists():
        if not (out / "manifests").is_dir() and any(out.iterdir()):
            raise AlienbenchError(f"build: {out} exists and is not a dataset folder; choose another --out")
        later = [v for v in list_versions(out) if v != version]
        if later and not overwrite:
            raise AlienbenchError(f"build: {out} holds versions {', '.join(later)} beyond {version} "
                                  "(appended submissions); rebuilding would drop them. Use another --out, "
                                  "or pass --overwrite to replace it.")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
    os.chmod(tmp, DIR_MODE)
    try:
        entries = write_tables(tables, tmp, version, "release")
        models = tuple(sorted(tables["generations"]["main"]["model"].unique())) if "main" in \
            tables["generations"] else ()
        manifest = Manifest(
            version=version,
            files=tuple(entries),
            previous_version=None,
            previous_manifest_sha256=None,
            judge_config_sha256=judge_config().sha256,
            benchmark_sha256=benchmark().sha256,
            models=models,
            notes=(f"Built from the authors' release ({RELEASE_SOURCE['repository']}@"
                   f"{RELEASE_SOURCE['commit']}).",),
            source={**RELEASE_SOURCE, "excluded_models": list(exclude_models)},
        )
        manifest.write(tmp)
        card_mod.write_card(tmp, manifest, tables)
        swap_dir_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest, report
