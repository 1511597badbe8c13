"""Integration tests on the authors' real release (skipped when it is absent)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from test_build import _assert_absent

from alienbench_data import load
from alienbench_data.config import judge_config
from alienbench_data.validate import validate

pytestmark = pytest.mark.release


def test_canonical_counts(built_dataset: Path) -> None:
    # issue 2 / data-audit.md section 3: 1,800 + 5,400; 500 + 1,500; 100 + 300
    want = {
        ("generations", "main"): 1800, ("scores", "main"): 5400, ("judgments", "main"): 54000,
        ("generations", "paraphrase"): 500, ("scores", "paraphrase"): 1500, ("judgments", "paraphrase"): 15000,
        ("generations", "human"): 100, ("scores", "human"): 300, ("judgments", "human"): 3000,
        ("participants", "human"): 100,
    }
    for (config, split), n in want.items():
        assert len(load(config, split, data_dir=built_dataset)) == n, (config, split)
    g = load("generations", "main", data_dir=built_dataset)
    cell = g.groupby(["model", "condition"]).size()
    assert len(cell) == 60 and (cell == 30).all()
    assert g["in_paraphrase_reference"].sum() == 300


def _reported_overall(reported_dir: Path) -> dict[str, float]:
    text = (reported_dir / "summary.txt").read_text(encoding="utf-8")
    section = text.split("## Ward Departure Score by Model")[1].split("##")[0]
    return {m: float(v) for m, v in re.findall(r"^\s+(\S+): ([0-9.]+) \[", section, flags=re.M)}


def test_per_model_means_match_reported_summary(built_dataset: Path, reported_dir: Path) -> None:
    # compare only: the reported summary is the independent value
    s = load("scores", "main", data_dir=built_dataset)
    per_gen = s.groupby(["model", "generation_id"])["ward_score"].mean()
    ours = per_gen.groupby(level="model").mean()
    reported = _reported_overall(reported_dir)
    assert len(reported) == 10
    for model, value in reported.items():
        assert round(ours[model], 2) == pytest.approx(value, abs=1e-9), model


def test_human_rates_match_reported_table(built_dataset: Path, reported_dir: Path) -> None:
    s = load("scores", "human", data_dir=built_dataset)
    dims = [c for c in s.columns if c.startswith("dim_")]
    rates = s.groupby("generation_id")[dims].mean().mean() * 100
    tex = (reported_dir / "tab_human_dimensions.tex").read_text()
    reported = [float(x) for x in re.findall(r"(\d+\.\d)", tex.split("Human")[-1])[:10]]
    assert [round(v, 1) for v in rates] == reported


def test_judge_prompt_hash_check_value(built_dataset: Path) -> None:
    # judge-config.md section 4: assembled user message of generation 9401e98c has this sha256
    g = load("generations", "main", data_dir=built_dataset).set_index("generation_id")
    resp = g.loc["9401e98c-57f6-490d-aaee-eb72e84c0750", "response"]
    user = judge_config().render_user_prompt(resp)
    assert len(user) == 9648
    want = "c120dae3bbc9d81f4884b21bec0f10d9ed8f9472cc143507d6dc25f4958a2c85"
    assert hashlib.sha256(user.encode()).hexdigest() == want
    s = load("scores", "main", data_dir=built_dataset)
    row = s[s["generation_id"] == "9401e98c-57f6-490d-aaee-eb72e84c0750"]
    assert len(row) == 3 and (row["judge_prompt_sha256"] == judge_config().prompt_sha256(resp)).all()


def test_no_raw_identifier_in_built_files(built_dataset: Path, release_dir: Path) -> None:
    secrets: set[str] = set()
    for path in (release_dir / "data" / "generations").glob("*/*/responses.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            for k in ("prolific_id", "call_id"):
                if r.get(k):
                    secrets.add(str(r[k]))
            if r.get("model") == "human/prolific-baseline":
                secrets.add(repr(r["timestamp"]))  # exact submission time, e.g. 1777976285.0
    for path in (release_dir / "data" / "extractions").glob("*/*/*/features.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            secrets.add(json.loads(line)["judge_call_id"])
    assert any("@" in s for s in secrets)  # the e-mail address is among them
    _assert_absent(built_dataset, secrets)
    # and no timestamp-like column survives
    for config in ("generations", "scores", "judgments", "participants"):
        assert not [c for c in load(config, data_dir=built_dataset).columns if "timestamp" in c or "call_id" in c]


def test_quality_flag_counts(built_dataset: Path) -> None:
    g = load("generations", data_dir=built_dataset)
    para = g[g["split"] == "paraphrase"]
    gem = para["model"] == "google/gemini-3.1-pro-preview"
    budget = para["quality_flags"].map(lambda f: "reasoning_budget_exhausted" in list(f))
    assert (budget == gem).all() and budget.sum() == 50  # data-audit: all 50 used Gemini paraphrase rows
    main = g[g["split"] == "main"]
    assert main["hit_max_tokens"].sum() == 961  # data-audit section 5: 961 rows at the 800 cap
    assert main["tokens_include_reasoning"].sum() == 540  # Gemini + 2 Qwen, 180 each
    assert main["quality_flags"].map(lambda f: "cjk_code_switch" in list(f)).sum() == 5
    assert main["quality_flags"].map(lambda f: "tokens_exceed_max" in list(f)).sum() == 2
    parts = load("participants", data_dir=built_dataset)
    susp = set(parts.loc[parts["suspected_llm_paste"], "generation_id"])
    assert {"75b0d681-79f0-45e0-b7e6-0186a1847a61", "913a8f42-02dc-47e1-ac57-6ed4eace3869",
            "5bfb5149-a6f3-4506-a041-9b41acc2295a"} <= susp
    assert parts["excluded_in_paper"].isna().all()
    s = load("scores", data_dir=built_dataset)
    assert (s["judge_route"] == "bedrock").sum() == 5


def test_release_dataset_validates(built_dataset: Path) -> None:
    assert validate(built_dataset) == []


def test_full_build_is_deterministic(release_dir: Path, built_dataset: Path, tmp_path: Path) -> None:
    from alienbench_data.build import build

    out = tmp_path / "alienbench"
    build(release_dir, out)
    for p in sorted(built_dataset.rglob("*")):
        if p.is_file():
            assert (out / p.relative_to(built_dataset)).read_bytes() == p.read_bytes(), p


def test_card_documents_counts_and_known_issues(built_dataset: Path) -> None:
    card = (built_dataset / "README.md").read_text(encoding="utf-8")
    for needle in ("## Known issues", "961 of 1800 main", "50 paraphrase rows", "reasoning_budget_exhausted",
                   "not excluded in the data", "Suspected pasted chatbot texts", "judge_config_sha256",
                   judge_config().sha256, "constrained_ammonia", "Imagine a creature that lives on a planet with 10x",
                   "## License and citation"):
        assert needle in card, needle
