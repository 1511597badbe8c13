"""Tests of analysis.check: it passes on the real release, fails on any perturbed number, and reports
the known differences (hand-edited LaTeX, the paper's other model set) instead of hiding them."""

from __future__ import annotations

import math
import shutil
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from analysis_shared import reproduced_once

from analysis import check as C


# ----------------------------------------------------------------------------------------------
# unit tests of the comparison rules (no data needed)
# ----------------------------------------------------------------------------------------------
def test_compare_value_rules():
    assert C.compare_value("x", 1.0, 1.0 + 5e-10).status == "ok"
    assert C.compare_value("x", 1.0, 1.0 + 2e-9).status == "FAIL"
    assert C.compare_value("x", 1.0, 1.003, mc_tol=0.005).status == "ok-mc"
    assert C.compare_value("x", 1.0, 1.01, mc_tol=0.005).status == "FAIL"
    # displayed precision: "0.20" covers [0.195, 0.205]
    assert C.compare_value("x", "0.20", 0.2049, decimals=2).status == "ok"
    assert C.compare_value("x", "0.20", 0.2051, decimals=2).status == "FAIL"
    assert C.compare_value("x", "", float("nan")).status == "ok"
    assert C.compare_value("x", "", 1.0).status == "FAIL"
    assert C.compare_value("x", "True", "True").status == "ok"
    assert C.compare_value("x", "True", "False").status == "FAIL"
    assert C.compare_value("x", "nan", "nan", decimals=0).status == "ok"


def test_known_diff_is_never_ok_when_different():
    r = C.known_diff("q", 0.642, 0.551, "stale")
    assert r.status == "KNOWN-DIFF" and r.note == "stale" and r.diff == pytest.approx(0.091)
    assert C.known_diff("q", 0.913, 0.913, "coincides").status == "ok"


def test_exit_code_and_format():
    rows = [C.CheckRow("a", 1, 1, 0.0, "ok"), C.CheckRow("b", 1, 2, 1.0, "KNOWN-DIFF", "why")]
    assert C.exit_code(rows) == 0
    rows.append(C.CheckRow("c", 1, 3, 2.0, "FAIL"))
    assert C.exit_code(rows) == 1
    text = C.format_rows(rows)
    assert "quantity" in text.splitlines()[0] and "|diff|" in text
    assert "checked 3 quantities: 1 ok, 0 ok-mc, 1 KNOWN-DIFF, 1 FAIL" in text
    assert "(why)" in text
    assert "a " not in C.format_rows(rows, only_problems=True).splitlines()[2]


def test_register_check_and_plugin_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    before = C.registered_checks()
    try:
        @C.register_check("test: custom")
        def custom(ctx):
            return [C.CheckRow("custom quantity", 1.0, 2.0, 1.0, "FAIL")]

        plugin = types.ModuleType("analysis.ablations")
        plugin.CHECKS = [("test: plugin", lambda ctx: [C.CheckRow("plugin quantity", 1, 1, 0.0, "ok")])]
        monkeypatch.setitem(sys.modules, "analysis.ablations", plugin)
        found = C.load_plugin_checks()
        assert "analysis.ablations" in found
        ctx = C.CheckContext(out_dir=tmp_path, release_results=tmp_path)
        rows = C.run_checks(ctx, names=["test: custom", "test: plugin"], plugins=False)
        assert [r.quantity for r in rows] == ["custom quantity", "plugin quantity"]
        assert C.exit_code(rows) == 1

        C.register_check("test: broken", lambda ctx: 1 / 0)
        rows = C.run_checks(ctx, names=["test: broken"], plugins=False)
        assert rows[0].status == "FAIL" and "ZeroDivisionError" in rows[0].recomputed
        with pytest.raises(KeyError, match="run_checks: no check named"):
            C.run_checks(ctx, names=["nope"], plugins=False)
    finally:
        C._REGISTRY.clear()
        C._REGISTRY.update(before)


def test_compare_csv_synthetic(tmp_path: Path):
    theirs, ours = tmp_path / "t", tmp_path / "o"
    theirs.mkdir()
    ours.mkdir()
    df = pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0], "ci": [0.5, 0.6]})
    df.to_csv(theirs / "x.csv", index=False)
    df.assign(v=[1.0, 2.0 + 1e-6], ci=[0.5, 0.603]).to_csv(ours / "x.csv", index=False)
    ctx = C.CheckContext(out_dir=ours, release_results=theirs)
    rows = {r.quantity: r.status for r in C.compare_csv("x.csv", ctx, keys=["k"], mc_tol={"ci": 0.005})}
    assert rows["x.csv: b v"] == "FAIL" and rows["x.csv: b ci"] == "ok-mc" and rows["x.csv: a v"] == "ok"
    df.iloc[:1].to_csv(ours / "x.csv", index=False)  # a row lost
    assert any(r.status == "FAIL" and "absent" in r.note for r in C.compare_csv("x.csv", ctx, keys=["k"]))
    (ours / "x.csv").unlink()
    assert C.compare_csv("x.csv", ctx, keys=["k"])[0].status == "FAIL"


# ----------------------------------------------------------------------------------------------
# the real release
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def outcome(built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    return reproduced_once(built_dataset, tmp_path_factory)


@pytest.fixture()
def ctx(outcome, reported_dir: Path, tmp_path: Path) -> C.CheckContext:
    """A private copy of the recomputed folder that a test may perturb."""
    out = tmp_path / "ours"
    shutil.copytree(outcome.out_dir, out)
    return C.CheckContext(out_dir=out, release_results=reported_dir, extra={"main": outcome.main})


@pytest.mark.release
def test_check_passes_on_release_and_lists_known_diffs(ctx: C.CheckContext):
    # main-analysis checks only: ablation checks may already be registered by an earlier test module
    rows = C.run_checks(ctx, plugins=False, skip={"ablation-": "ablations not run in this test"})
    fails = [r for r in rows if r.status == "FAIL"]
    assert not fails, C.format_rows(fails)
    assert not [r for r in rows if r.status == "ok-mc"]  # exact streams: nothing merely within MC error
    known = {r.quantity: r for r in rows if r.status == "KNOWN-DIFF"}
    # the stale hand-edited tab_reliability.tex: all 10 dimensions and the commented Ward total
    rel = {q: r for q, r in known.items() if q.startswith("tab_reliability.tex")}
    assert len(rel) == 11
    sensory = rel["tab_reliability.tex: Sensory Organs"]
    assert (sensory.reported, sensory.recomputed) == ("0.642", "0.551") and "stale" in sensory.note
    assert "tab_ward_dimensions.tex: layout" in known
    paper = {q for q in known if q.startswith("paper:")}
    assert paper == {"paper: lowest overall Ward score (GPT-6 Luna)",
                     "paper: highest overall Ward score (Ministral 3 14B 2512)", "paper: Kruskal-Wallis H",
                     "paper: Table 7 sensory_organs alpha"}
    assert len(rows) > 1000 and C.exit_code(rows) == 0


def _edit_csv(path: Path, row: int, col: str, fn) -> None:
    df = pd.read_csv(path, dtype=object, keep_default_na=False)
    df.loc[row, col] = fn(df.loc[row, col])
    df.to_csv(path, index=False)


@pytest.mark.release
@pytest.mark.parametrize(("name", "col", "delta", "status"), [
    ("table_posthoc.csv", "p_raw", 1e-8, "FAIL"),  # deterministic: beyond 1e-9
    ("table_posthoc.csv", "r_ci_lo", 1e-6, "ok-mc"),  # resampled: within the RB tolerance 0.005
    ("table_posthoc.csv", "r_ci_lo", 0.01, "FAIL"),  # beyond it
    ("table_length_adjusted_per_model.csv", "ward_ci_hi", 0.05, "FAIL"),
    ("table_token_covariate.csv", "ward_score", 1e-6, "FAIL"),
    ("table_departure_freq.csv", "departure_rate", 1e-7, "FAIL"),
])
def test_check_flags_a_perturbed_csv_cell(ctx: C.CheckContext, name: str, col: str, delta: float, status: str):
    _edit_csv(ctx.out_dir / name, 3, col, lambda v: repr(float(v) + delta))
    rows = C.run_checks(ctx, names=["main: CSV tables"], plugins=False)
    hit = [r for r in rows if r.quantity.startswith(name) and col in r.quantity and r.status != "ok"]
    assert hit and hit[0].status == status
    assert C.exit_code(rows) == (1 if status == "FAIL" else 0)


@pytest.mark.release
def test_check_flags_reliability_string_and_boolean(ctx: C.CheckContext):
    _edit_csv(ctx.out_dir / "table_reliability.csv", 2, "α (all)", lambda v: "0.552")
    _edit_csv(ctx.out_dir / "table_length_adjusted_divergence.csv", 0, "sign_flip", lambda v: "False")
    rows = C.run_checks(ctx, names=["main: CSV tables"], plugins=False)
    bad = {r.quantity for r in rows if r.status == "FAIL"}
    assert any("sensory_organs α (all)" in q for q in bad)
    assert any("sign_flip" in q for q in bad)


@pytest.mark.release
def test_check_flags_perturbed_summary_and_latex(ctx: C.CheckContext):
    s = ctx.out_dir / "summary.txt"
    text = s.read_text(encoding="utf-8").replace("qwen/qwen3-8b: 5.17 [4.76, 5.59]", "qwen/qwen3-8b: 5.18 [4.76, 5.59]")
    # a CI bound off by 0.01 is within the spec's Monte-Carlo error (0.01-0.02 Ward points): ok-mc, not FAIL
    text = text.replace("openai/gpt-5.4: 3.57 [3.21, 3.96]", "openai/gpt-5.4: 3.57 [3.22, 3.96]")
    s.write_text(text, encoding="utf-8")
    t = ctx.out_dir / "tab_ward_scores.tex"
    t.write_text(t.read_text(encoding="utf-8").replace("4.72 (1.42)", "4.73 (1.42)"), encoding="utf-8")
    rows = C.run_checks(ctx, names=["main: summary.txt", "main: LaTeX tables"], plugins=False)
    bad = [r for r in rows if r.status == "FAIL"]
    assert any("qwen/qwen3-8b" in r.quantity and r.reported == "5.17" and r.recomputed == "5.18" for r in bad)
    assert any(r.quantity.startswith("tab_ward_scores.tex: claude-opus-4.7") for r in bad)
    mc = [r for r in rows if r.status == "ok-mc"]
    assert [(r.reported, r.recomputed) for r in mc] == [("3.21", "3.22")]


@pytest.mark.release
def test_check_flags_a_missing_line_or_file(ctx: C.CheckContext):
    s = ctx.out_dir / "summary.txt"
    s.write_text("\n".join(ln for ln in s.read_text(encoding="utf-8").splitlines()
                           if "Kruskal-Wallis: H=943.77" not in ln) + "\n", encoding="utf-8")
    (ctx.out_dir / "table_departure_freq.csv").unlink()
    rows = C.run_checks(ctx, names=["main: summary.txt", "main: CSV tables"], plugins=False)
    bad = [r for r in rows if r.status == "FAIL"]
    assert any("Kruskal-Wallis" in r.quantity for r in bad)
    assert any(r.quantity == "table_departure_freq.csv" for r in bad)


@pytest.mark.release
def test_check_against_a_perturbed_release(ctx: C.CheckContext, tmp_path: Path):
    # the other direction: a wrong reported number is caught too
    fake = tmp_path / "release_results"
    shutil.copytree(ctx.release_results, fake)
    _edit_csv(fake / "table_length_adjusted_per_model.csv", 0, "mean_ward", lambda v: repr(float(v) + 1e-6))
    rows = C.run_checks(C.CheckContext(ctx.out_dir, fake, ctx.extra), names=["main: CSV tables"], plugins=False)
    bad = [r for r in rows if r.status == "FAIL"]
    assert len(bad) == 1 and "mean_ward" in bad[0].quantity and not math.isnan(bad[0].diff)
