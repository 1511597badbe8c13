"""Validation of submission files: every problem reported with file, line and field, before any call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alienbench_data.config import benchmark, generation_seed
from alienbench_data.submit import SubmissionError, generation_id_for, read_submission
from tests.helpers.submission_data import make_records, write_jsonl

BM = benchmark()


def problems_of(path, **kw):
    with pytest.raises(SubmissionError) as info:
        read_submission(path, **kw)
    return info.value.problems


def where(problems):
    return {(p.line, p.field) for p in problems}


def test_valid_file_passes(tmp_path):
    sub = read_submission(write_jsonl(tmp_path / "s.jsonl", make_records()))
    assert sub.model == "acme/test-model" and len(sub) == 180
    assert sub.warnings == ()
    g = sub.generations[0]
    assert (g.condition, g.sample_index) == ("baseline", 0)
    assert g.generation_id == generation_id_for("acme/test-model", "baseline", 0)
    assert g.max_tokens == 800
    assert len({x.generation_id for x in sub.generations}) == 180


def test_release_style_prompt_variant_and_ids_are_accepted(tmp_path):
    recs = make_records()
    for i, r in enumerate(recs):
        r["prompt_variant"] = r.pop("condition")
        r["id"] = f"id-{i}"
        r["call_id"] = "ignored"
    sub = read_submission(write_jsonl(tmp_path / "s.jsonl", recs))
    assert {g.generation_id for g in sub.generations} == {f"id-{i}" for i in range(180)}


def test_model_name_rewrites_model_and_derives_ids(tmp_path):
    recs = make_records()
    for i, r in enumerate(recs):
        r["id"] = f"id-{i}"
    sub = read_submission(write_jsonl(tmp_path / "s.jsonl", recs), model_name="check/copy-1",
                          existing_models={"acme/test-model"}, existing_generation_ids={"id-0"})
    assert sub.model == "check/copy-1"
    assert {g.model for g in sub.generations} == {"check/copy-1"}
    assert {g.source_model for g in sub.generations} == {"acme/test-model"}
    assert sub.generations[5].generation_id == generation_id_for("check/copy-1", "baseline", 5)
    # The same call twice gives the same ids (resumable journals depend on it).
    again = read_submission(tmp_path / "s.jsonl", model_name="check/copy-1")
    assert [g.generation_id for g in again.generations] == [g.generation_id for g in sub.generations]


def test_model_already_in_dataset_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    probs = problems_of(path, existing_models={"acme/test-model", "x/y"})
    assert where(probs) == {(None, "model")}
    assert "already in the dataset" in str(probs[0]) and "--model-name" in str(probs[0])


def test_existing_generation_id_is_refused(tmp_path):
    recs = make_records()
    recs[3]["id"] = "taken"
    probs = problems_of(write_jsonl(tmp_path / "s.jsonl", recs), existing_generation_ids={"taken"})
    assert where(probs) == {(4, "id")}


@pytest.mark.parametrize("name", ["no-slash", "a/b c", "/x", "a/", "human/prolific-2"])
def test_bad_model_names_are_refused(tmp_path, name):
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    assert (None, "model") in where(problems_of(path, model_name=name))


def test_specific_messages(tmp_path):
    recs = make_records()
    recs[0]["prompt_variant"] = "departure_primed"  # disagrees with condition
    recs[1]["condition"] = "baseline_para_a"
    recs[2]["prompt_text"] = recs[2]["prompt_text"].replace("alien", "Alien")
    recs[3]["id"] = "dup"
    recs[4]["id"] = "dup"
    recs[5]["model"] = "other/model"
    text = str(SubmissionError(problems_of(write_jsonl(tmp_path / "s.jsonl", recs))))
    assert "s.jsonl:1 [condition]: condition 'baseline' and prompt_variant 'departure_primed' disagree" in text
    assert "s.jsonl:2 [condition]: 'baseline_para_a' is a paraphrase-ablation prompt" in text
    assert "s.jsonl:3 [prompt_text]: differs from the benchmark text of condition 'baseline' at character" in text
    assert "s.jsonl:5 [id]: duplicate id 'dup' (also line 4)" in text
    assert "s.jsonl:6 [model]: file mixes models" in text


def test_missing_cells_are_listed_as_ranges(tmp_path):
    recs = [r for r in make_records() if not (r["condition"] == "constrained_ammonia" and 3 <= r["sample_index"] <= 7)]
    probs = problems_of(write_jsonl(tmp_path / "s.jsonl", recs))
    assert len(probs) == 1
    assert "'constrained_ammonia' lacks sample_index 3-7 (25 of 30 present)" in str(probs[0])


def test_seed_differing_from_the_rule_is_a_warning_not_an_error(tmp_path):
    recs = make_records()
    recs[7]["seed"] = 12345
    sub = read_submission(write_jsonl(tmp_path / "s.jsonl", recs))
    assert [(w.line, w.field) for w in sub.warnings] == [(8, "seed")]


@pytest.mark.parametrize("content,expected", [
    (b"", "holds no generations"),
    (b"\xff\xfe{}", "not UTF-8"),
])
def test_whole_file_problems(tmp_path, content, expected):
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    assert expected in str(problems_of(path)[0])


def test_unreadable_file(tmp_path):
    assert "cannot read the file" in str(problems_of(tmp_path / "missing.jsonl")[0])


# -- hypothesis: corrupt a valid file, every corruption is reported where it is -----------------
_BAD = {
    "prompt_text": st.one_of(st.text(max_size=20), st.integers(), st.just(BM.condition_text("baseline") + " ")),
    "response": st.one_of(st.just(""), st.text(alphabet=" \n\t", min_size=1, max_size=4), st.integers()),
    "temperature": st.one_of(st.floats(allow_nan=False).filter(lambda x: x != 1.0), st.just("1.0"),
                             st.just(True)),
    "sample_index": st.one_of(st.integers(min_value=30), st.integers(max_value=-1), st.just("3"),
                              st.just(3.0), st.just(True)),
    "completion_tokens": st.one_of(st.just("12"), st.just(1.5), st.integers(max_value=-1), st.just(False)),
    "seed": st.one_of(st.just("7"), st.just(7.5), st.just(None)),
    "condition": st.one_of(st.just("unknown_condition"), st.just("Baseline"), st.integers()),
    "model": st.one_of(st.just(""), st.integers(), st.just("other/model")),
    "prompt_tokens": st.one_of(st.just("3"), st.just(-2)),
    "duration_seconds": st.one_of(st.just("fast"), st.just(-1.0)),
}
_MISSING = ["model", "sample_index", "prompt_text", "response", "completion_tokens", "seed", "temperature",
            "condition"]

mutation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(sorted(_BAD))).flatmap(
        lambda t: st.tuples(st.just(t[0]), st.just(t[1]), _BAD[t[1]])),
    st.tuples(st.just("delete"), st.sampled_from(_MISSING), st.none()),
    st.tuples(st.just("garbage"), st.none(), st.sampled_from(["{", "[1, 2", "not json", '{"a": }'])),
    st.tuples(st.just("not_object"), st.none(), st.sampled_from(["[]", "3", '"x"', "null"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    muts=st.lists(st.tuples(st.integers(0, 179), mutation), min_size=1, max_size=4,
                  unique_by=lambda t: t[0]),
    structural=st.sampled_from([None, "duplicate", "drop"]),
    victim=st.integers(0, 179),
)
def test_every_corruption_is_reported_with_line_and_field(tmp_path, muts, structural, victim):
    recs: list = [dict(r) for r in make_records()]
    expected: set[tuple[int | None, str | None]] = set()
    mutated = {i for i, _ in muts}
    for i, (kind, fld, value) in muts:
        if kind == "set":
            recs[i][fld] = value
            expected.add((i + 1, fld))
        elif kind == "delete":
            recs[i].pop(fld)
            expected.add((i + 1, fld))
        else:
            recs[i] = value  # a raw line
            expected.add((i + 1, None))
    lines = [r if isinstance(r, str) else json.dumps(r) for r in recs]
    if structural == "duplicate" and victim not in mutated:
        lines.append(lines[victim])
        expected.add((len(lines), "sample_index"))
    elif structural == "drop" and victim not in mutated:
        del lines[victim]
        expected = {(ln - 1 if ln is not None and ln > victim + 1 else ln, f) for ln, f in expected}
        expected.add((None, "sample_index"))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    probs = problems_of(path)
    got = where(probs)
    assert expected <= got, (expected - got, probs)
    for p in probs:
        assert p.file == str(path)
        assert p.line is None or 1 <= p.line <= len(lines)


# -- the release's own records --------------------------------------------------------------------
def release_records(release: Path, model_dir: str) -> list[str]:
    lines = []
    for cond in BM.condition_ids:
        f = release / "data" / "generations" / model_dir / cond / "responses.jsonl"
        for line in f.read_text(encoding="utf-8").splitlines():
            if json.loads(line)["sample_index"] < 30:
                lines.append(line)  # unchanged bytes
    return lines


@pytest.mark.release
def test_release_responses_validate_unchanged(tmp_path, release_dir):
    lines = release_records(release_dir, "openai__gpt-5.4")
    path = tmp_path / "gpt.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sub = read_submission(path)
    assert sub.model == "openai/gpt-5.4" and len(sub) == 180 and sub.warnings == ()
    g = next(g for g in sub.generations if g.generation_id == "9401e98c-57f6-490d-aaee-eb72e84c0750")
    assert (g.condition, g.sample_index, g.seed) == ("baseline", 18, 1685787450)
    assert g.seed == generation_seed("openai/gpt-5.4", "baseline", 18)
    assert g.model_resolved == "openai/gpt-5.4-20260305"
    # Already released: refused unless renamed.
    assert where(problems_of(path, existing_models={"openai/gpt-5.4"})) == {(None, "model")}
    renamed = read_submission(path, model_name="check/gpt-5.4", existing_models={"openai/gpt-5.4"})
    assert renamed.model == "check/gpt-5.4"


@pytest.mark.release
def test_release_file_with_samples_beyond_30_is_refused_per_line(release_dir):
    f = release_dir / "data" / "generations" / "openai__gpt-5.4" / "baseline" / "responses.jsonl"
    probs = problems_of(f)
    assert {(p.field) for p in probs if p.line is not None} == {"sample_index"}
    assert sum("outside 0-29" in p.message for p in probs) == 20
