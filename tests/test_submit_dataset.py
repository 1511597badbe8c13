"""submit() against a real dataset folder (built from a synthetic release by the data package).

Covers the wiring with ``alienbench_data.load``, the manifest and ``versioning.append_version``:
a replayed resubmission becomes a new version with identical per-judge scores, released files
stay byte-identical, and every refusal happens before any judge call and leaves the folder as it was.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from alienbench_data.config import JudgeConfig, benchmark, judge_config
from alienbench_data.errors import AlienbenchError
from alienbench_data.loader import load, manifest_of
from alienbench_data.schema import DIM_COLUMNS
from alienbench_data.submit import SubmissionError, SubmitRefused, submit
from alienbench_data.validate import validate
from tests.helpers.submission_data import LabelJudge, panel

BM = benchmark()
MODEL = "acme/model-a"


def tree_hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def submission_from_release(release: Path, model: str, out: Path) -> Path:
    lines = []
    for cond in BM.condition_ids:
        f = release / "data" / "generations" / model.replace("/", "__") / cond / "responses.jsonl"
        lines += [x for x in f.read_text(encoding="utf-8").splitlines() if json.loads(x)["sample_index"] < 30]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.fixture
def dataset(synthetic_dataset, tmp_path) -> Path:
    target = tmp_path / "alienbench"
    shutil.copytree(synthetic_dataset, target)
    return target


@pytest.fixture
def subfile(synthetic_release, tmp_path) -> Path:
    return submission_from_release(synthetic_release, MODEL, tmp_path / "model-a.jsonl")


def test_replayed_resubmission_appends_a_version_with_identical_scores(dataset, subfile, synthetic_dataset):
    before = tree_hashes(dataset)
    v0 = manifest_of(dataset)
    res = submit(dataset, subfile, replay=synthetic_dataset, model_name="check/model-a",
                 progress=False, stream=io.StringIO())
    m = manifest_of(dataset)
    assert res.appended.version == m.version == "1.1.0"
    assert m.previous_manifest_sha256 == v0.sha256 and "check/model-a" in m.models
    after = tree_hashes(dataset)
    changed = {p for p in before if p in after and before[p] != after[p]}
    assert changed <= {"README.md"}, changed  # released data files and manifests byte-identical
    assert validate(dataset, expect_design=False, load_with_datasets=False) == []

    scores = load("scores", "main", data_dir=dataset)
    old = scores[scores["model"] == MODEL].set_index(["judge_prompt_sha256", "judge"]).sort_index()
    new = scores[scores["model"] == "check/model-a"].set_index(["judge_prompt_sha256", "judge"]).sort_index()
    assert len(new) == 540 and list(old.index) == list(new.index)
    assert (old[["ward_score", *DIM_COLUMNS]].values == new[["ward_score", *DIM_COLUMNS]].values).all()
    assert old["ward_score"].mean() == new["ward_score"].mean()
    assert set(new["added_in_version"]) == {"1.1.0"} and set(new["score_source"]) == {"submission"}
    gens = load("generations", "main", data_dir=dataset)
    assert (gens["model"] == "check/model-a").sum() == 180


def test_model_already_present_is_refused_before_any_call(dataset, subfile):
    before, judge = tree_hashes(dataset), LabelJudge()
    with pytest.raises(SubmissionError, match="already in the dataset"):
        submit(dataset, subfile, judges=panel(judge), progress=False, stream=io.StringIO())
    assert judge.calls == [] and tree_hashes(dataset) == before


def test_judge_config_mismatch_is_refused_before_any_call(dataset, subfile):
    raw = json.loads(json.dumps(judge_config().raw))
    raw["system_prompt"] += " "
    before, judge = tree_hashes(dataset), LabelJudge()
    with pytest.raises(SubmitRefused, match="judge configuration mismatch"):
        submit(dataset, subfile, model_name="check/x", judges=panel(judge), config=JudgeConfig(raw),
               progress=False, stream=io.StringIO())
    assert judge.calls == [] and tree_hashes(dataset) == before


def test_tampered_released_file_is_refused_before_any_call(dataset, subfile):
    victim = next(p for p in sorted((dataset / "data").rglob("*.parquet")) if "generations" in str(p))
    victim.write_bytes(victim.read_bytes() + b"\0")
    before, judge = tree_hashes(dataset), LabelJudge()
    with pytest.raises(AlienbenchError, match="does not match the manifest"):
        submit(dataset, subfile, model_name="check/x", judges=panel(judge), progress=False,
               stream=io.StringIO())
    assert judge.calls == [] and tree_hashes(dataset) == before


def test_a_refused_append_keeps_the_journal_for_the_rerun(dataset, subfile, tmp_path, monkeypatch):
    import alienbench_data.versioning as versioning

    judge = LabelJudge()
    journal = tmp_path / "j.jsonl"

    def refuse(*a, **k):
        raise versioning.RefusedError("append_version: simulated refusal")

    monkeypatch.setattr(versioning, "append_version", refuse)
    before = tree_hashes(dataset)
    with pytest.raises(versioning.RefusedError):
        submit(dataset, subfile, model_name="check/y", judges=panel(judge), journal=journal,
               progress=False, stream=io.StringIO())
    assert tree_hashes(dataset) == before and len(judge.calls) == 540
    monkeypatch.undo()
    again = LabelJudge()
    submit(dataset, subfile, model_name="check/y", judges=panel(again), journal=journal,
           progress=False, stream=io.StringIO())
    assert again.calls == [] and manifest_of(dataset).version == "1.1.0"
