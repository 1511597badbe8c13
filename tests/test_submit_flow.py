"""submit(): refusals before any call, result rows per schema, incomplete judging, replay round trip."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from alienbench_data.config import benchmark, judge_config
from alienbench_data.judges import JudgeCallError, ReplayJudge, run_judging
from alienbench_data.schema import DIM_COLUMNS, FEATURES, PRIMARY_KEYS
from alienbench_data.submit import SubmissionError, SubmitRefused, build_tables, read_submission, submit
from tests.helpers.submission_data import (
    ALIASES,
    DIMS,
    FakeDataset,
    LabelJudge,
    dataset_from_tables,
    empty_generations,
    labels_for,
    make_records,
    panel,
    write_jsonl,
)

CFG = judge_config()
BM = benchmark()


def fresh_dataset(**kw) -> FakeDataset:
    return FakeDataset({("generations", "main"): empty_generations()}, **kw)


def run(tmp_path, ds, judge, *, records=None, **kw):
    path = tmp_path / "sub.jsonl"
    if not path.exists():
        write_jsonl(path, records or make_records())
    return submit(None, path, dataset=ds, judges=panel(judge), progress=False, stream=io.StringIO(),
                  sleep=lambda s: None, **kw)


# -- refusals before any call --------------------------------------------------------------------
def test_judge_config_mismatch_is_refused_before_any_call(tmp_path):
    ds, judge = fresh_dataset(config_sha="0" * 64), LabelJudge()
    with pytest.raises(SubmitRefused, match="judge configuration mismatch"):
        run(tmp_path, ds, judge)
    assert judge.calls == [] and ds.appended == [] and ds.table_reads == 0
    assert not list(tmp_path.glob("*journal*"))


def test_invalid_file_is_refused_before_any_call(tmp_path):
    recs = make_records()
    recs[10]["temperature"] = 0.7
    ds, judge = fresh_dataset(), LabelJudge()
    with pytest.raises(SubmissionError, match=r"sub.jsonl:11 \[temperature\]"):
        run(tmp_path, ds, judge, records=recs)
    assert judge.calls == [] and ds.appended == []


def test_model_already_in_the_dataset_is_refused_before_any_call(tmp_path):
    gens = pd.DataFrame({"generation_id": ["x"], "model": ["acme/test-model"]})
    ds = FakeDataset({("generations", "human"): gens})
    judge = LabelJudge()
    with pytest.raises(SubmissionError, match="already in the dataset"):
        run(tmp_path, ds, judge)
    assert judge.calls == [] and ds.appended == []


def test_validate_only_makes_no_call_and_prints_the_estimate(tmp_path):
    ds, judge, out = fresh_dataset(), LabelJudge(), io.StringIO()
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    res = submit(None, path, dataset=ds, judges=panel(judge), validate_only=True, stream=out)
    assert judge.calls == [] and ds.appended == []
    assert "180 x 3 = 540 judge calls" in out.getvalue() and res.report.n_planned == 540


# -- the happy path ------------------------------------------------------------------------------
def test_rows_follow_the_schema_exactly(tmp_path):
    ds, judge = fresh_dataset(), LabelJudge()
    out = io.StringIO()
    path = write_jsonl(tmp_path / "sub.jsonl", make_records())
    res = submit(None, path, dataset=ds, judges=panel(judge), progress=False, stream=out)
    assert "180 generations x 3 judges = 540 judge calls" in out.getvalue()
    assert len(judge.calls) == 540
    ((tables, note),) = ds.appended
    assert note == "submission: acme/test-model"
    assert {k: len(v) for k, v in tables.items()} == {"generations": 180, "scores": 540, "judgments": 5400}
    for name, df in tables.items():
        schema = FEATURES[name].arrow_schema
        assert list(df.columns) == schema.names, name
        pa.Table.from_pandas(df, schema=schema, preserve_index=False)  # types convert exactly
        assert not df.duplicated(list(PRIMARY_KEYS[name])).any(), name
    sc = tables["scores"]
    assert str(sc["ward_score"].dtype) == "int8" and all(str(sc[c].dtype) == "int8" for c in DIM_COLUMNS)
    assert (sc["ward_score"] == sc[list(DIM_COLUMNS)].sum(axis=1)).all()
    assert set(sc["score_source"]) == {"submission"} and set(sc["judge_config_sha256"]) == {CFG.sha256}
    assert set(sc["n_parse_attempts"]) == {1} and set(sc["judge_route"]) == {"fake"}
    gen = tables["generations"].set_index("generation_id")
    # Labels are the ones the judge answered, for the exact prompt of that generation.
    for row in sc.sample(25, random_state=1).itertuples():
        response = gen.loc[row.generation_id, "response"]
        assert row.judge_prompt_sha256 == CFG.prompt_sha256(response)
        want = labels_for(row.judge, CFG.render_user_prompt(response))
        assert [getattr(row, c) for c in DIM_COLUMNS] == [int(want[d]) for d in DIMS]
    jd = tables["judgments"]
    assert (jd.groupby(["generation_id", "judge"]).size() == 10).all()
    assert list(jd["feature"].iloc[:10]) == list(DIMS)
    merged = jd.groupby(["generation_id", "judge"])["is_departure"].sum().astype(int)
    assert merged.sort_index().tolist() == sc.set_index(["generation_id", "judge"])["ward_score"].sort_index().tolist()
    g = tables["generations"]
    assert set(g["condition_set"]) == {"main"} and set(g["source"]) == {"llm"}
    assert set(g["max_tokens"]) == {800} and not g["in_paraphrase_reference"].any()
    assert g["prompt_sha256"].nunique() == 6
    assert g["hit_max_tokens"].notna().all() and g["quality_flags"].notna().all()
    assert (g["response_chars"] == g["response"].str.len()).all()
    assert res.report.complete and res.model == "acme/test-model"


def test_parse_attempts_are_recorded(tmp_path):
    bad_once: set[str] = set()

    def script(judge, user, n):
        if judge == ALIASES[1] and "number 3 " in user and user not in bad_once:
            bad_once.add(user)
            return '{"symmetry": {"is_departure": "true"}}'
        return None

    ds = fresh_dataset()
    run(tmp_path, ds, LabelJudge(script))
    sc = ds.appended[0][0]["scores"]
    two = sc[sc["n_parse_attempts"] == 2]
    assert len(two) == 6 and set(two["judge"]) == {ALIASES[1]}


# -- incomplete judging --------------------------------------------------------------------------
def test_incomplete_judging_is_refused_and_a_rerun_repeats_only_the_failed_calls(tmp_path):
    def failing(judge, user, n):
        if judge == ALIASES[2] and "constrained_ammonia creature number 4 " in user:
            return JudgeCallError("HTTP 400: bad request")
        return None

    ds = fresh_dataset()
    first = LabelJudge(failing)
    with pytest.raises(SubmitRefused, match="incomplete judging: 539 of 540"):
        run(tmp_path, ds, first)
    assert ds.appended == []
    second = LabelJudge()
    res = run(tmp_path, ds, second)
    assert len(second.calls) == 1 and second.calls[0][0] == ALIASES[2]
    assert res.report.n_already_done == 539 and len(ds.appended) == 1


def test_build_tables_refuses_missing_pairs(tmp_path):
    sub = read_submission(write_jsonl(tmp_path / "s.jsonl", make_records()))
    with pytest.raises(SubmitRefused, match="incomplete judging: 540 of 540"):
        build_tables(sub, {})


# -- replay ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A dataset holding acme/test-model, judged by the in-process judge (as if released)."""
    tmp = tmp_path_factory.mktemp("released")
    ds = fresh_dataset()
    run(tmp, ds, LabelJudge())
    return tmp / "sub.jsonl", ds.appended[0][0]


def test_replay_round_trip_reproduces_per_judge_scores(tmp_path, released):
    subfile, tables = released
    dataset = dataset_from_tables(tables)
    res = submit(None, subfile, dataset=fresh_dataset(), replay=dataset, model_name="check/replayed",
                 journal=tmp_path / "replay.jsonl", progress=False, stream=io.StringIO())
    new = res.tables["scores"]
    assert set(new["model"]) == {"check/replayed"} and set(new["judge_route"]) == {"replay"}
    key = ["condition", "judge", "judge_prompt_sha256"]
    cols = ["ward_score", *DIM_COLUMNS, "judge_model_resolved", "judge_prompt_tokens",
            "judge_completion_tokens"]
    a = tables["scores"].sort_values(key)[cols].reset_index(drop=True)
    b = new.sort_values(key)[cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    ja = tables["judgments"].sort_values(["judge_prompt_sha256", "judge", "feature"])
    jb = res.tables["judgments"].sort_values(["judge_prompt_sha256", "judge", "feature"])
    for c in ("is_departure", "feature_described", "reasoning"):
        assert ja[c].tolist() == jb[c].tolist()
    assert not set(new["generation_id"]) & set(tables["scores"]["generation_id"])


def test_replay_miss_is_a_clear_failure(tmp_path, released):
    _, tables = released
    rj = ReplayJudge(tables["judgments"], tables["scores"])
    gens = [{"generation_id": "g-edited", "response": tables["generations"]["response"].iloc[0] + " Edited."},
            {"generation_id": "g-same", "response": tables["generations"]["response"].iloc[1]}]
    out = io.StringIO()
    rep = run_judging(gens, panel(rj), journal=tmp_path / "j.jsonl", progress=False, stream=out)
    assert {(f.generation_id, type(f).__name__) for f in rep.failures} == {("g-edited", "JudgingFailure")}
    assert len(rep.failures) == 3 and len(rep.entries) == 3
    assert "no judgment for prompt sha256" in rep.failures[0].error and "--replay" in rep.failures[0].error


def test_replay_and_live_journal_entries_are_kept_apart(tmp_path, released):
    _, tables = released
    rj = ReplayJudge(tables["judgments"], tables["scores"])
    gens = tables["generations"][["generation_id", "response"]].iloc[:3].to_dict("records")
    journal = tmp_path / "shared.jsonl"
    assert run_judging(gens, panel(rj), journal=journal, progress=False, stream=io.StringIO()).complete
    live = LabelJudge()
    rep = run_judging(gens, panel(live), journal=journal, progress=False, stream=io.StringIO())
    assert rep.n_already_done == 0 and len(live.calls) == 9  # replayed answers never count as live calls
    again = run_judging(gens, panel(rj), journal=journal, progress=False, stream=io.StringIO())
    assert again.n_already_done == 9


def test_replay_refuses_conflicting_or_partial_judgments():
    jd = pd.DataFrame([
        {"generation_id": g, "judge": "j", "judge_prompt_sha256": CFG.prompt_sha256("x"), "feature": d,
         "is_departure": flip and d == "habitat", "feature_described": None, "reasoning": None}
        for g, flip in (("g1", False), ("g2", True)) for d in DIMS
    ])
    rj = ReplayJudge(jd)
    with pytest.raises(Exception, match="different judgments"):
        rj.complete("j", CFG.system_prompt, CFG.render_user_prompt("x"))
    rj = ReplayJudge(jd[jd["generation_id"] == "g1"].iloc[:9])
    with pytest.raises(Exception, match="9 of 10 features"):
        rj.complete("j", CFG.system_prompt, CFG.render_user_prompt("x"))
    with pytest.raises(ValueError, match="lacks column"):
        ReplayJudge(jd.drop(columns=["reasoning"]))


# -- replay on the authors' release (one model, built from the raw files here) --------------------
def _release_frames(release: Path, subject_dir: str):
    gens = {}
    for cond in BM.condition_ids:
        for line in (release / "data/generations" / subject_dir / cond / "responses.jsonl").open():
            r = json.loads(line)
            if r["sample_index"] < 30:
                gens[r["id"]] = r
    jrows, srows, released = [], [], {}
    for jdir in sorted((release / "data/extractions").iterdir()):
        for cond in BM.condition_ids:
            for line in (jdir / subject_dir / cond / "features.jsonl").open():
                e = json.loads(line)
                g = gens.get(e["generation_id"])
                if g is None:
                    continue
                sha = CFG.prompt_sha256(g["response"])
                for d in DIMS:
                    f = e["features"][d]
                    jrows.append({"generation_id": g["id"], "judge": e["judge_model"], "judge_prompt_sha256": sha,
                                  "feature": d, "is_departure": bool(f["is_departure"]),
                                  "feature_described": f.get("feature_described"), "reasoning": f.get("reasoning"),
                                  "judge_model_resolved": e["judge_model_resolved"]})
                srows.append({"judge": e["judge_model"], "judge_prompt_sha256": sha,
                              "judge_model_resolved": e["judge_model_resolved"],
                              "judge_prompt_tokens": e["prompt_tokens"],
                              "judge_completion_tokens": e["completion_tokens"],
                              "judge_duration_seconds": e["duration_seconds"]})
        for cond in BM.condition_ids:
            for line in (release / "data/scores" / jdir.name / subject_dir / cond / "ward_scores.jsonl").open():
                s = json.loads(line)
                if s["generation_id"] in gens:
                    g = gens[s["generation_id"]]
                    released[(cond, g["sample_index"], s["judge_model"])] = (s["ward_score"], s["per_dimension"])
    return list(gens.values()), pd.DataFrame(jrows), pd.DataFrame(srows), released


@pytest.mark.release
def test_replay_on_the_release_reproduces_released_scores(tmp_path, release_dir):
    gens, jd, sd, released = _release_frames(release_dir, "mistralai__mistral-large-2411")
    path = tmp_path / "mistral.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in gens), encoding="utf-8")
    rj = ReplayJudge(jd, sd)
    res = submit(None, path, judges=panel(rj), append=False, model_name="check/mistral-large-2411",
                 progress=False, stream=io.StringIO())
    sc = res.tables["scores"]
    assert len(sc) == 540 == len(released)
    for row in sc.itertuples():
        ward, per_dim = released[(row.condition, int(res.tables["generations"].set_index("generation_id")
                                                      .loc[row.generation_id, "sample_index"]), row.judge)]
        assert row.ward_score == ward
        assert [getattr(row, f"dim_{d}") for d in DIMS] == [per_dim[d] for d in DIMS]
    assert sc["ward_score"].mean() == pytest.approx(
        sum(w for w, _ in released.values()) / len(released), abs=1e-12)
