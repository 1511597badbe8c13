"""Replay round trip on the authors' release (issue 5): build without one model, submit that model's
released generations through the replay judge, compare with the full build."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from alienbench_data import load
from alienbench_data.build import build
from alienbench_data.io import sha256_file
from alienbench_data.manifest import current_manifest, verify_chain
from alienbench_data.schema import CONDITIONS, DIM_COLUMNS
from alienbench_data.submit import submit
from alienbench_data.validate import validate
from analysis import main as A
from analysis import stats as S

pytestmark = pytest.mark.release
MODEL = "mistralai/mistral-large-2411"


def _submission(release: Path, out: Path) -> Path:
    """The release's own responses.jsonl records (sample_index < 30), unchanged."""
    lines = []
    for cond in CONDITIONS:
        path = release / "data" / "generations" / MODEL.replace("/", "__") / cond / "responses.jsonl"
        lines += [line for line in path.read_text(encoding="utf-8").splitlines()
                  if json.loads(line)["sample_index"] < 30]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _overall(scores: pd.DataFrame, model: str) -> pd.Series:
    a1 = S.per_generation(scores[scores["model"] == model])
    return A.model_scores(a1).set_index("model").loc[model]


@pytest.fixture(scope="module")
def round_trip(release_dir: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("replay")
    minus = tmp / "alienbench"
    build(release_dir, minus, exclude_models=(MODEL,))
    before = {f.path: f.sha256 for f in current_manifest(minus).files}
    sub = _submission(release_dir, tmp / "mistral.jsonl")
    result = submit(minus, sub, replay=built_dataset, progress=False)
    return minus, before, result


def test_replay_reproduces_released_per_judge_scores(round_trip, built_dataset: Path) -> None:
    minus, _, result = round_trip
    assert result.appended is not None
    new = load("scores", "main", data_dir=minus)
    new = new[new["model"] == MODEL]
    full = load("scores", "main", data_dir=built_dataset)
    full = full[full["model"] == MODEL]
    g_new = load("generations", "main", data_dir=minus).set_index("generation_id")["sample_index"]
    g_full = load("generations", "main", data_dir=built_dataset).set_index("generation_id")["sample_index"]
    key = ["condition", "sample_index", "judge"]
    a = new.assign(sample_index=new["generation_id"].map(g_new)).set_index(key).sort_index()
    b = full.assign(sample_index=full["generation_id"].map(g_full)).set_index(key).sort_index()
    assert len(a) == len(b) == 540
    cols = ["ward_score", *DIM_COLUMNS, "judge_model_resolved", "judge_prompt_sha256"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert set(a["score_source"]) == {"submission"} and set(a["judge_route"]) == {"replay"}


def test_replay_reproduces_overall_score_and_ci(round_trip, built_dataset: Path) -> None:
    minus, _, _ = round_trip
    got = _overall(load("scores", "main", data_dir=minus), MODEL)
    want = _overall(load("scores", "main", data_dir=built_dataset), MODEL)
    # same generation ids (the release records carry them), so the bootstrap resamples the same order
    assert got["estimate"] == want["estimate"] and got["n"] == 180
    assert (got["ci_low"], got["ci_high"]) == (want["ci_low"], want["ci_high"])


def test_released_files_untouched_and_chain_valid(round_trip) -> None:
    minus, before, _ = round_trip
    for path, digest in before.items():
        assert sha256_file(minus / path) == digest, path
    m = current_manifest(minus)
    assert m.version == "1.1.0" and MODEL in m.models
    assert verify_chain(minus) == []
    assert validate(minus) == []
