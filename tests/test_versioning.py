"""Append-only versions, the manifest chain, loading (stale cache, checksums) and validation."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pandas as pd
import pytest
from synth import MODELS

from alienbench_data import DatasetError, load
from alienbench_data.io import sha256_file, write_parquet
from alienbench_data.manifest import current_manifest, list_versions, read_manifest, verify_chain
from alienbench_data.schema import FEATURES
from alienbench_data.validate import validate
from alienbench_data.versioning import RefusedError, append_version, next_version


@pytest.fixture
def dataset(synthetic_dataset: Path, tmp_path: Path) -> Path:
    out = tmp_path / "alienbench"
    shutil.copytree(synthetic_dataset, out)
    return out


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): sha256_file(p) for p in sorted(root.rglob("*")) if p.is_file()}


def _copy_model(root: Path, model: str, new: str) -> dict[str, dict[str, pd.DataFrame]]:
    """A fake submission: one model's main rows under a new name and new ids."""
    out: dict[str, dict[str, pd.DataFrame]] = {}
    ids: dict[str, str] = {}
    for config in ("generations", "scores", "judgments"):
        df = load(config, "main", data_dir=root)
        df = df[df["model"] == model].copy()
        if config == "generations":
            ids = {g: str(uuid.uuid5(uuid.NAMESPACE_URL, new + g)) for g in df["generation_id"]}
        df["generation_id"] = df["generation_id"].map(ids)
        df["model"] = new
        out[config] = {"main": df}
    return out


def test_next_version() -> None:
    assert next_version("1.0.0") == "1.1.0"
    assert next_version("1.4.2", "patch") == "1.4.3"
    assert next_version("1.4.2", "major") == "2.0.0"
    with pytest.raises(ValueError, match="part"):
        next_version("1.0.0", "minor-ish")


def test_append_adds_files_and_chains_manifests(dataset: Path) -> None:
    before = _snapshot(dataset)
    old = current_manifest(dataset)
    new = append_version(dataset, _copy_model(dataset, MODELS[0], "acme/new-model"), tag="acme-new-model",
                         note="add acme/new-model")
    assert new.version == "1.1.0" and list_versions(dataset) == ["1.0.0", "1.1.0"]
    assert new.previous_manifest_sha256 == old.sha256 and new.previous_version == "1.0.0"
    assert read_manifest(dataset, "1.1.0").sha256 == new.sha256
    after = _snapshot(dataset)
    for path, digest in before.items():
        if path != "README.md":
            assert after[path] == digest, path  # every released file byte-identical
    added = set(after) - set(before)
    assert added == {f.path for f in new.files if f.added_in_version == "1.1.0"} | {"manifests/v1.1.0.json"}
    assert verify_chain(dataset) == []
    g = load("generations", "main", data_dir=dataset)
    assert (g["model"] == "acme/new-model").sum() == 180
    assert set(g.loc[g["model"] == "acme/new-model", "added_in_version"]) == {"1.1.0"}
    assert len(load("generations", "main", data_dir=dataset, version="1.0.0")) == len(g) - 180
    assert "acme/new-model" in (dataset / "README.md").read_text()
    assert validate(dataset) == []
    assert not list(dataset.parent.glob(".alienbench*"))  # no stage or lock left behind


def test_refuses_existing_model(dataset: Path) -> None:
    before = _snapshot(dataset)
    with pytest.raises(DatasetError, match="already in the dataset"):
        append_version(dataset, _copy_model(dataset, MODELS[0], MODELS[1]), tag="x", note="x")
    assert _snapshot(dataset) == before


def test_refuses_tampered_released_file(dataset: Path) -> None:
    tables = _copy_model(dataset, MODELS[0], "acme/new")
    target = next((dataset / "data" / "scores" / "main").glob("*.parquet"))
    df = pd.read_parquet(target)
    df.loc[0, "ward_score"] = (df.loc[0, "ward_score"] + 1) % 11
    write_parquet(df, FEATURES["scores"], target)
    before = _snapshot(dataset)
    with pytest.raises(DatasetError, match="tampered") as err:
        append_version(dataset, tables, tag="x", note="x")
    assert any(p.field == "sha256" for p in err.value.problems)
    assert _snapshot(dataset) == before


def test_refuses_incomplete_judging(dataset: Path) -> None:
    tables = _copy_model(dataset, MODELS[0], "acme/new")
    s = tables["scores"]["main"]
    tables["scores"]["main"] = s.iloc[1:]  # one (generation, judge) missing
    before = _snapshot(dataset)
    with pytest.raises(DatasetError, match="judging is incomplete"):
        append_version(dataset, tables, tag="x", note="x")
    assert _snapshot(dataset) == before


def test_refuses_other_judge_config(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import alienbench_data.versioning as versioning
    from alienbench_data.config import JudgeConfig, judge_config

    raw = dict(judge_config().raw)
    raw["system_prompt"] += " Be lenient."
    monkeypatch.setattr(versioning, "judge_config", lambda: JudgeConfig(raw))
    before = _snapshot(dataset)
    with pytest.raises(RefusedError, match="judge configuration"):
        append_version(dataset, _copy_model(dataset, MODELS[0], "acme/new"), tag="x", note="x")
    assert _snapshot(dataset) == before


def test_refuses_concurrent_append(dataset: Path) -> None:
    lock = dataset.parent / f".{dataset.name}.lock"
    lock.write_text(str(os.getpid()))  # a live process holds it
    try:
        with pytest.raises(RefusedError, match="locked"):
            append_version(dataset, _copy_model(dataset, MODELS[0], "acme/new"), tag="x", note="x")
    finally:
        lock.unlink()
    lock.write_text("999999999")  # a dead process: stale lock is taken over
    append_version(dataset, _copy_model(dataset, MODELS[0], "acme/new"), tag="x", note="x")


def test_interrupted_append_leaves_dataset_untouched(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import alienbench_data.versioning as versioning

    def boom(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(versioning.card_mod, "write_card", boom)
    before = _snapshot(dataset)
    with pytest.raises(KeyboardInterrupt):
        append_version(dataset, _copy_model(dataset, MODELS[0], "acme/new"), tag="x", note="x")
    assert _snapshot(dataset) == before
    assert sorted(p.name for p in dataset.parent.iterdir()) == ["alienbench"]


# ---------------------------------------------------------------- loader

def test_load_verifies_checksums(dataset: Path) -> None:
    target = next((dataset / "data" / "generations" / "main").glob("*.parquet"))
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match="checksum"):
        load("generations", "main", data_dir=dataset)
    load("scores", "main", data_dir=dataset)  # other files still load


def test_load_errors_are_clear(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown config 'score'"):
        load("score", data_dir=dataset)
    with pytest.raises(ValueError, match="no split 'main'"):
        load("participants", "main", data_dir=dataset)
    from alienbench_data import AlienbenchError

    with pytest.raises(AlienbenchError, match="alienbench build"):
        load("scores", data_dir=tmp_path / "nowhere")
    with pytest.raises(AlienbenchError, match=r"available: 1\.0\.0"):
        load("scores", data_dir=dataset, version="2.0.0")


def test_load_as_datasets_has_declared_types(dataset: Path) -> None:
    dd = load("scores", data_dir=dataset, as_="datasets")
    assert set(dd) == {"main", "paraphrase", "human"}
    assert dd["main"].features == FEATURES["scores"]
    df = load("scores", "main", data_dir=dataset)
    assert dd["main"].num_rows == len(df)
    assert str(df["ward_score"].dtype) == "int8"


def test_plain_load_dataset_never_serves_stale_rows(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hf-dataset-notes.md: the folder-name cache key trap. The card lists files explicitly, so an
    appended version changes the cache key and load_dataset("alienbench", cfg) sees the new rows."""
    import datasets

    datasets.disable_progress_bars()
    monkeypatch.chdir(dataset.parent)
    first = datasets.load_dataset("alienbench", "generations")
    n0 = first["main"].num_rows
    append_version(dataset, _copy_model(dataset, MODELS[0], "acme/new"), tag="x", note="x")
    second = datasets.load_dataset("alienbench", "generations")
    assert second["main"].num_rows == n0 + 180
    assert "acme/new" in set(second["main"]["model"])


# ---------------------------------------------------------------- validate

def _rewrite(root: Path, config: str, split: str, fn) -> None:
    """Change rows of a data file AND re-seal the manifest, so row-level checks (not the checksum) fire."""
    m = current_manifest(root)
    entry = m.files_of(config, split)[0]
    path = root / entry.path
    df = fn(pd.read_parquet(path))
    write_parquet(df, FEATURES[config], path)
    d = json.loads((root / "manifests" / f"v{m.version}.json").read_text())
    for f in d["files"]:
        if f["path"] == entry.path:
            f.update(sha256=sha256_file(path), bytes=path.stat().st_size, rows=len(df))
    from alienbench_data.manifest import Manifest

    Manifest.from_dict(d).write(root)
    from alienbench_data.card import write_card

    write_card(root, current_manifest(root))


def test_validate_reports_row_and_field(dataset: Path) -> None:
    def bad_sum(df: pd.DataFrame) -> pd.DataFrame:
        df.loc[3, "ward_score"] = (df.loc[3, "ward_score"] + 1) % 11
        return df

    _rewrite(dataset, "scores", "main", bad_sum)
    problems = validate(dataset, load_with_datasets=False)
    hit = [p for p in problems if p.field == "ward_score"]
    assert hit and hit[0].line == 3 and hit[0].file.startswith("data/scores/main/")


def test_validate_duplicate_and_orphan(dataset: Path) -> None:
    def dup_and_orphan(df: pd.DataFrame) -> pd.DataFrame:
        extra = df.iloc[[0]].copy()
        orphan = df.iloc[[1]].copy()
        orphan["generation_id"] = "no-such-generation"
        return pd.concat([df, extra, orphan], ignore_index=True)

    _rewrite(dataset, "judgments", "main", dup_and_orphan)
    problems = validate(dataset, load_with_datasets=False)
    msgs = " | ".join(str(p) for p in problems)
    assert "duplicate judgments key" in msgs
    assert "references no generation" in msgs


def test_validate_detects_checksum_and_card_mismatch(dataset: Path) -> None:
    assert validate(dataset) == []
    target = next((dataset / "data" / "participants" / "human").glob("*.parquet"))
    target.write_bytes(target.read_bytes() + b"x")
    problems = validate(dataset)
    assert any(p.field == "bytes" and "participants" in p.file for p in problems)


def test_validate_cli_exit_code(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from alienbench_data.cli import main

    assert main(["validate", str(dataset)]) == 0
    (dataset / "README.md").write_text("---\nconfigs: []\n---\n")
    assert main(["validate", str(dataset)]) == 1
    assert "README.md" in capsys.readouterr().out
