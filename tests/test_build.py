"""Build from synthetic release trees: selection, determinism, and errors on bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from synth import MODELS, make_release

from alienbench_data import load
from alienbench_data.build import build
from alienbench_data.errors import AlienbenchError, ReleaseError
from alienbench_data.manifest import current_manifest
from alienbench_data.schema import DIM_COLUMNS


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_selection_counts(synthetic_dataset: Path) -> None:
    g = load("generations", data_dir=synthetic_dataset)
    s = load("scores", data_dir=synthetic_dataset)
    j = load("judgments", data_dir=synthetic_dataset)
    n_models = len(MODELS)
    assert (g["split"] == "main").sum() == n_models * 6 * 30
    assert (g["split"] == "paraphrase").sum() == n_models * 5 * 10
    assert (g["split"] == "human").sum() == 5
    assert g.loc[g["split"] == "main", "sample_index"].max() == 29
    assert g.loc[g["split"] == "paraphrase", "sample_index"].max() == 9
    assert sorted(g.loc[g["split"] == "human", "sample_index"]) == list(range(5))
    assert len(s) == 3 * len(g)
    assert len(j) == 10 * len(s)
    assert (s["ward_score"] == s[list(DIM_COLUMNS)].sum(axis=1)).all()
    # main scores come from the score files; paraphrase and human are recomputed
    assert set(s.loc[s["split"] == "main", "score_source"]) == {"release_scores"}
    assert set(s.loc[s["split"] != "main", "score_source"]) == {"recomputed_from_extractions"}
    base = g[(g["split"] == "main") & (g["condition"] == "baseline")]
    assert base["in_paraphrase_reference"].all()
    assert not g.loc[g["condition"] != "baseline", "in_paraphrase_reference"].any()


def test_scores_equal_extraction_labels(synthetic_release: Path, synthetic_dataset: Path) -> None:
    # independent value: recompute one judge's labels straight from the raw JSONL
    s = load("scores", "main", data_dir=synthetic_dataset).set_index(["generation_id", "judge"])
    path = next((synthetic_release / "data" / "extractions").glob("openai__gpt-5.4/*/baseline/features.jsonl"))
    checked = 0
    for line in path.read_text().splitlines():
        r = json.loads(line)
        key = (r["generation_id"], "openai/gpt-5.4")
        if key in s.index:
            want = sum(int(v["is_departure"]) for v in r["features"].values())
            assert s.loc[key, "ward_score"] == want
            checked += 1
    assert checked == 30


def test_build_is_deterministic(synthetic_release: Path, tmp_path: Path) -> None:
    a = build(synthetic_release, tmp_path / "a" / "alienbench")[0]
    b = build(synthetic_release, tmp_path / "b" / "alienbench")[0]
    assert a.sha256 == b.sha256
    assert _files(tmp_path / "a" / "alienbench") == _files(tmp_path / "b" / "alienbench")


def test_build_replaces_its_own_version_in_place(synthetic_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "alienbench"
    build(synthetic_release, out)
    before = _files(out)
    build(synthetic_release, out)
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["alienbench"]  # no temp folders left


def test_release_is_not_modified(synthetic_release: Path, tmp_path: Path) -> None:
    before = _files(synthetic_release)
    build(synthetic_release, tmp_path / "alienbench")
    assert _files(synthetic_release) == before


def test_exclude_model(synthetic_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "alienbench"
    m, _ = build(synthetic_release, out, exclude_models=(MODELS[1],))
    assert m.models == (MODELS[0],)
    assert set(load("scores", "main", data_dir=out)["model"]) == {MODELS[0]}
    with pytest.raises(AlienbenchError, match="not a configured model"):
        build(synthetic_release, tmp_path / "x", exclude_models=("nope/nope",))


def test_privacy_synthetic(synthetic_release: Path, synthetic_dataset: Path) -> None:
    raw = [json.loads(x) for x in (synthetic_release / "data/generations/human__prolific-baseline/baseline/"
                                   "responses.jsonl").read_text().splitlines()]
    secrets = {r["prolific_id"] for r in raw} | {r["call_id"] for r in raw}
    _assert_absent(synthetic_dataset, secrets)


def _assert_absent(root: Path, secrets: set[str]) -> None:
    """No secret appears in any built file: raw bytes (card, manifest) or decoded parquet cells.

    Secrets are identifier-like (ids, e-mail, epoch seconds), so every maximal token of identifier
    characters in the built text is intersected with the set (fast for thousands of secrets); a
    substring scan of each secret covers the small text files as well.
    """
    token = re.compile(r"[A-Za-z0-9_@.+\-]+")
    found: set[str] = set()
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        if p.suffix == ".parquet":
            df = pd.read_parquet(p)
            text = " ".join(df.columns) + "\n" + "\n".join(str(v) for v in df.to_numpy().ravel())
        else:
            text = p.read_bytes().decode("utf-8", errors="replace")
            found |= {s for s in secrets if s in text}
        found |= secrets.intersection(token.findall(text))
    assert not found, sorted(found)[:5]


def test_leak_detector_can_fail(tmp_path: Path) -> None:
    pd.DataFrame({"note": ["sent by abc123@email.prolific.com today"]}).to_parquet(tmp_path / "x.parquet")
    with pytest.raises(AssertionError):
        _assert_absent(tmp_path, {"abc123@email.prolific.com"})
    (tmp_path / "x.parquet").unlink()
    (tmp_path / "card.md").write_text("id=69f7b4fb145ed758c7752301.")
    with pytest.raises(AssertionError):
        _assert_absent(tmp_path, {"69f7b4fb145ed758c7752301"})


# ---------------------------------------------------------------- bad input

def _tiny(tmp_path: Path) -> Path:
    return make_release(tmp_path / "rel", models=("acme/model-a",), n_main=2, n_para=1, extra=0, n_human=2)


def _edit_line(path: Path, lineno: int, fn) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[lineno - 1] = fn(lines[lineno - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit_record(path: Path, lineno: int, fn) -> None:
    def edit(line: str) -> str:
        r = json.loads(line)
        fn(r)
        return json.dumps(r)

    _edit_line(path, lineno, edit)


GEN = "data/generations/acme__model-a/baseline/responses.jsonl"
EXT = "data/extractions/openai__gpt-5.4/acme__model-a/baseline/features.jsonl"
SCO = "data/scores/openai__gpt-5.4/acme__model-a/baseline/ward_scores.jsonl"


def _dup_id(rel: Path) -> None:
    path = rel / GEN
    lines = path.read_text().splitlines()
    r = json.loads(lines[1])
    r["id"] = json.loads(lines[0])["id"]
    lines[1] = json.dumps(r)
    path.write_text("\n".join(lines) + "\n")


def _flip_first_label(r: dict) -> None:
    first = next(iter(r["per_dimension"]))
    r["per_dimension"][first] = 1 - r["per_dimension"][first]
    r["ward_score"] = sum(r["per_dimension"].values())


CASES = {
    "malformed_json": (lambda rel: _edit_line(rel / GEN, 2, lambda s: s[:-5]), GEN, 2, None, "malformed JSON"),
    "missing_field": (lambda rel: _edit_record(rel / GEN, 1, lambda r: r.pop("response")), GEN, 1, "response",
                      "missing field"),
    "duplicate_id": (_dup_id, GEN, 2, "id", "duplicate id"),
    "unknown_feature": (lambda rel: _edit_record(rel / EXT, 1, lambda r: r["features"].update(
        {"wings": {"is_departure": True}})), EXT, 1, "features.wings", "unknown feature"),
    "non_bool_label": (lambda rel: _edit_record(rel / EXT, 1, lambda r: r["features"]["symmetry"].update(
        {"is_departure": "false"})), EXT, 1, "features.symmetry.is_departure", "non-bool label"),
    "prompt_text": (lambda rel: _edit_record(rel / GEN, 1, lambda r: r.update(
        {"prompt_text": r["prompt_text"] + " "})), GEN, 1, "prompt_text", "differs from the config text"),
    "score_vs_labels": (lambda rel: _edit_record(rel / SCO, 1, lambda r: r.update(
        {"ward_score": r["ward_score"] + 1})), SCO, 1, "ward_score", "disagrees with its labels"),
    "score_vs_extraction": (lambda rel: _edit_record(rel / SCO, 1, _flip_first_label), SCO, 1, "per_dimension",
                            "disagrees with the extraction"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_names_file_line_field(case: str, tmp_path: Path) -> None:
    rel = _tiny(tmp_path)
    corrupt, file, line, field, message = CASES[case]
    corrupt(rel)
    out = tmp_path / "out" / "alienbench"
    with pytest.raises(ReleaseError) as err:
        build(rel, out)
    hits = [p for p in err.value.problems if p.file == file and p.line == line]
    assert hits, str(err.value)
    if field:
        assert any((p.field or "").startswith(field) for p in hits), str(err.value)
    assert message in str(err.value)
    assert not out.exists()
    parent = tmp_path / "out"
    assert not parent.exists() or not any(parent.iterdir())  # nothing partial, no temp folder left


def test_failed_build_keeps_existing_folder(tmp_path: Path) -> None:
    rel = _tiny(tmp_path)
    out = tmp_path / "alienbench"
    build(rel, out)
    before = _files(out)
    _edit_line(rel / GEN, 1, lambda s: "{not json")
    with pytest.raises(ReleaseError):
        build(rel, out)
    assert _files(out) == before


def test_build_refuses_to_drop_appended_versions(synthetic_dataset: Path, tmp_path: Path,
                                                 synthetic_release: Path) -> None:
    out = tmp_path / "alienbench"
    shutil.copytree(synthetic_dataset, out)
    m = current_manifest(out)
    (out / "manifests" / "v1.1.0.json").write_text((out / "manifests" / f"v{m.version}.json").read_text())
    with pytest.raises(AlienbenchError, match="beyond"):
        build(synthetic_release, out)


_MUTATIONS = ["truncate", "drop_field", "wrong_type", "null_field", "garbage"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["gen", "ext", "sco"]), line=st.integers(1, 2), how=st.sampled_from(_MUTATIONS),
       field_index=st.integers(0, 50))
def test_any_corrupted_record_is_reported_with_its_line(tmp_path_factory: pytest.TempPathFactory, which: str,
                                                        line: int, how: str, field_index: int) -> None:
    tmp = tmp_path_factory.mktemp("hyp")
    rel = _tiny(tmp)
    rel_file = {"gen": GEN, "ext": EXT, "sco": SCO}[which]
    # fields the build reads (others, e.g. timestamps, are legitimately ignored)
    used = {"gen": ["id", "response", "prompt_text", "completion_tokens", "model", "prompt_variant", "sample_index"],
            "ext": ["generation_id", "judge_model", "features"],
            "sco": ["generation_id", "ward_score", "per_dimension"]}[which]
    key = used[field_index % len(used)]

    def mutate(s: str) -> str:
        if how == "truncate":
            return s[: len(s) // 2]
        if how == "garbage":
            return "\x00garbage"
        r = json.loads(s)
        if how == "drop_field":
            r.pop(key)
        elif how == "wrong_type":
            r[key] = [r[key]]
        else:
            r[key] = None
        return json.dumps(r)

    _edit_line(rel / rel_file, line, mutate)
    out = tmp / "out" / "alienbench"
    with pytest.raises(ReleaseError) as err:
        build(rel, out)
    assert any(p.file == rel_file and p.line == line for p in err.value.problems), str(err.value)
    assert not out.exists()


def test_build_interrupted_while_writing_leaves_nothing(synthetic_release: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import alienbench_data.build as build_mod

    def boom(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(build_mod.card_mod, "write_card", boom)
    with pytest.raises(KeyboardInterrupt):
        build(synthetic_release, tmp_path / "alienbench")
    assert list(tmp_path.iterdir()) == []  # neither the output nor a temporary folder
