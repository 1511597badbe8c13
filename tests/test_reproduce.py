"""Tests of the reproduce orchestration, provenance and the CLI (real release where needed)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from analysis_shared import reproduced_once

import alienbench_data as ab
from alienbench_data.cli import main as cli_main
from analysis import provenance, reproduce


@pytest.fixture(scope="module")
def outcome(built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    return reproduced_once(built_dataset, tmp_path_factory)


@pytest.mark.release
def test_provenance_record(outcome, built_dataset: Path):
    rec = json.loads((outcome.out_dir / "provenance.json").read_text(encoding="utf-8"))
    m = ab.manifest_of(built_dataset)
    assert rec["dataset"]["version"] == m.version and rec["dataset"]["manifest_sha256"] == m.sha256
    assert rec["dataset"]["judge_config_sha256"] == m.judge_config_sha256
    assert rec["parameters"]["n_boot"] == 10_000 and rec["parameters"]["seed"] == 1234
    assert rec["parameters"]["n_sims"] == 2000 and rec["parameters"]["n_boot_tokens"] == 5000
    assert {"numpy", "scipy", "pandas", "krippendorff", "python"} <= set(rec["packages"])
    assert set(rec["code"]) == {"commit", "branch", "dirty"}
    assert rec["created_utc"].endswith("Z")
    assert "main analysis (spec 4, 7.1)" in rec["timings_seconds"]


def test_git_state_outside_a_repository(tmp_path: Path):
    assert provenance.git_state(tmp_path) == {"commit": None, "branch": None, "dirty": None}


@pytest.mark.release
def test_written_files(outcome):
    names = {p.name for p in outcome.out_dir.iterdir()}
    from analysis.writers import AUTHOR_CSVS

    assert set(AUTHOR_CSVS) <= names
    assert {"summary.txt", "tab_ward_scores.tex", "tab_ward_dimensions.tex", "tab_reliability.tex",
            "tab_human_dimensions.tex", "provenance.json", "table_human_vs_models.csv"} <= names


def test_find_release_results(tmp_path: Path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "summary.txt").write_text("x")
    assert reproduce.find_release_results(tmp_path) == tmp_path / "results"
    assert reproduce.find_release_results(tmp_path / "results") == tmp_path / "results"
    with pytest.raises(FileNotFoundError, match="--release PATH"):
        reproduce.find_release_results(tmp_path / "nope")


@pytest.mark.release
def test_optional_stages_are_called_and_failures_reported(built_dataset: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    calls = []
    abl = types.ModuleType("analysis.ablations")
    abl.run_all = lambda inputs, out_dir: calls.append(("ablations", len(inputs.R), Path(out_dir))) or {"ok": 1}
    figs = types.ModuleType("analysis.figures")

    def draw_all(inputs, out_dir, *, tables):
        calls.append(("figures", sorted(tables)))
        raise RuntimeError("no display")

    figs.draw_all = draw_all
    monkeypatch.setitem(sys.modules, "analysis.ablations", abl)
    monkeypatch.setitem(sys.modules, "analysis.figures", figs)
    monkeypatch.setitem(sys.modules, "analysis.reanalysis", types.ModuleType("analysis.reanalysis"))
    monkeypatch.setitem(sys.modules, "analysis.report", types.ModuleType("analysis.report"))
    out = tmp_path / "res"
    o = reproduce.reproduce(built_dataset, out, say=lambda s: None)
    assert calls[0] == ("ablations", 5400, out)
    assert calls[1][0] == "figures" and "table_length_adjusted_per_model" in calls[1][1]
    assert o.stage_errors == {"figures": "RuntimeError: no display"} and o.exit_code == 2
    assert (out / "summary.txt").is_file()  # main results written regardless
    rec = json.loads((out / "provenance.json").read_text())
    assert rec["stage_errors"] == {"figures": "RuntimeError: no display"}


@pytest.mark.release
@pytest.mark.slow
def test_cli_reproduce_check_passes(built_dataset: Path, release_dir: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]):
    rc = cli_main(["reproduce", "--data", str(built_dataset), "--out", str(tmp_path / "r"), "--check",
                   "--release", str(release_dir), "--no-figures", "--no-ablations"])
    out = capsys.readouterr().out
    assert rc == 0, out[-3000:]
    assert "quantity" in out and "KNOWN-DIFF" in out and " 0 FAIL" in out
    assert "3 SKIPPED" in out and "ablations were not run" in out  # not silently dropped


def test_cli_reproduce_check_without_release_fails_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    rc = cli_main(["reproduce", "--data", str(tmp_path), "--out", str(tmp_path / "r"), "--check",
                   "--release", str(tmp_path / "missing")])
    assert rc == 2
    assert "no authors' results/" in capsys.readouterr().err


def test_cli_ablation_without_module(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setitem(sys.modules, "analysis.ablations.cli", None)  # import fails like an absent module
    assert cli_main(["ablation", "prompt"]) == 2
    assert "not installed in this checkout" in capsys.readouterr().err


def test_cli_ablation_delegates_to_run(monkeypatch: pytest.MonkeyPatch):
    seen = []
    fake = types.ModuleType("analysis.ablations.cli")
    fake.run = lambda which, args: seen.append((which, args.out, args.check)) or 0
    monkeypatch.setitem(sys.modules, "analysis.ablations.cli", fake)
    assert cli_main(["ablation", "judges", "--out", "x", "--check"]) == 0
    assert seen == [("judges", "x", True)]


def test_reproduce_on_a_synthetic_two_model_release(synthetic_release: Path, tmp_path: Path):
    # nothing assumes the 10 configured models: a 2-model release (models outside the config) runs
    # end to end and every table has one row per present model / condition pair
    from alienbench_data.build import build

    data = tmp_path / "alienbench"
    build(synthetic_release, data)
    o = reproduce.reproduce(data, tmp_path / "res", figures=False, ablations=False, say=lambda s: None)
    assert o.exit_code == 0
    ms = o.main.model_scores
    assert ms["model"].tolist() == ["acme/model-a", "beta/model-b"] and (ms["n"] == 180).all()
    assert len(o.main.cell_scores) == 12 and len(o.main.extraction_status) == 3 * 2 * 6
    assert (tmp_path / "res" / "summary.txt").read_text(encoding="utf-8").startswith("# AlienBench Results Summary")
    tex = (tmp_path / "res" / "tab_ward_scores.tex").read_text(encoding="utf-8")
    assert "model-a &" in tex and "model-b &" in tex
    assert len(o.main.human_vs_model_tests) == 2
