"""Tests of analysis.figures: panels and axes of every figure, files, determinism, any number of models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.projections.polar import PolarAxes

from alienbench_data.schema import DIM_COLUMNS, DIMENSIONS
from analysis import figures
from analysis.reanalysis import generation_table, raw_ranking

CONDITIONS = ("baseline", "constrained_ammonia", "departure_primed", "detailed_description")


def synthetic(n_models: int = 11, n_per: int = 4, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge rows and generations with the dataset's column names; model m departs with prob. ~ m."""
    rng = np.random.default_rng(seed)
    rows, gens = [], []
    for m in range(n_models):
        model = f"prov{m % 4}/model-{m:02d}"
        for c in CONDITIONS:
            for i in range(n_per):
                gid = f"{rng.integers(0, 10**9):09d}-{m}-{c}-{i}"
                gens.append(
                    {
                        "generation_id": gid,
                        "model": model,
                        "condition": c,
                        "response_words": int(rng.integers(50, 500)),
                        "completion_tokens": int(rng.integers(100, 900)),
                        "likely_truncated": False,
                        "quality_flags": np.array([], dtype=object),
                        "added_in_version": "1.0.0",
                    }
                )
                for j in ("j/a", "j/b", "j/c"):
                    dims = (rng.random(10) < (m + 1) / (n_models + 2)).astype(np.int8)
                    row = {"generation_id": gid, "model": model, "condition": c, "judge": j}
                    row.update(dict(zip(DIM_COLUMNS, dims, strict=True)))
                    row["ward_score"] = np.int8(dims.sum())
                    rows.append(row)
    return pd.DataFrame(rows), pd.DataFrame(gens)


@pytest.fixture(scope="module")
def synth():
    scores, gens = synthetic()
    table = generation_table(scores, gens)
    return {
        "scores": scores,
        "generations": gens,
        "table": table,
        "rates": figures.feature_rates(table),
        "summary": raw_ranking(table, n_boot=200),
    }


def _polar(fig: Figure) -> list[PolarAxes]:
    return [ax for ax in fig.axes if isinstance(ax, PolarAxes)]


def test_feature_rates_hand_computed():
    scores, gens = synthetic(n_models=2, n_per=2)
    rates = figures.feature_rates(generation_table(scores, gens))
    assert list(rates.columns) == ["model", "dimension", "departure_rate", "n"]
    assert len(rates) == 2 * 10
    for (model, dim), r in rates.set_index(["model", "dimension"])["departure_rate"].items():
        grp = scores[scores["model"] == model]
        per_gen = grp.groupby("generation_id")[f"dim_{dim}"].mean()  # judge mean, then generation mean
        assert r == pytest.approx(per_gen.mean(), abs=1e-12)
    assert list(rates["dimension"].iloc[:10]) == list(DIMENSIONS)


def test_radar_small_multiples_one_polar_panel_per_model(synth):
    human = pd.Series(np.linspace(0.05, 0.5, 10), index=list(DIMENSIONS))
    fig = figures.radar_figure(synth["rates"], human=human)
    panels = _polar(fig)
    assert len(panels) == len(fig.axes) == 11
    # panel order: descending overall score (sum of the 10 rates)
    total = synth["rates"].groupby("model")["departure_rate"].sum()
    expected = sorted(total.index, key=lambda m: (-total[m], m))
    assert [ax.get_title() for ax in panels] == [m.split("/", 1)[1] for m in expected]
    ax = panels[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(figures.DIM_SHORT_LABELS.values())
    assert ax.get_theta_direction() == -1 and ax.get_theta_offset() == pytest.approx(np.pi / 2)  # clockwise from top
    assert ax.get_ylim() == (0.0, 1.0)
    # each panel: the human polygon and the model polygon, closed (11 points)
    assert len(ax.lines) == 2 and all(len(line.get_xdata()) == 11 for line in ax.lines)
    model_line = ax.lines[1]
    wide = synth["rates"].pivot(index="model", columns="dimension", values="departure_rate")[list(DIMENSIONS)]
    np.testing.assert_allclose(model_line.get_ydata()[:10], wide.loc[expected[0]].to_numpy())
    np.testing.assert_allclose(ax.lines[0].get_ydata()[:10], human.to_numpy())
    assert fig.legends  # model / human legend


def test_radar_without_human_and_explicit_order(synth):
    order = sorted(synth["rates"]["model"].unique())[:3]
    fig = figures.radar_figure(synth["rates"][synth["rates"]["model"].isin(order)], order=order, ncols=2)
    assert len(_polar(fig)) == 3
    assert all(len(ax.lines) == 1 for ax in _polar(fig))
    with pytest.raises(ValueError, match="radar_figure: order names models without rates"):
        figures.radar_figure(synth["rates"], order=["nope/x"])


def test_radar_overlay_has_one_axes_and_one_line_per_model_plus_human(synth):
    fig = figures.radar_overlay_figure(
        synth["rates"], human=synth["rates"].groupby("dimension", as_index=False).mean(numeric_only=True)
    )
    assert len(fig.axes) == 1 and len(_polar(fig)) == 1
    ax = fig.axes[0]
    assert len(ax.lines) == 12
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[-1] == "Human baseline" and len(labels) == 12


def test_overview_strip_plot(synth):
    fig = figures.overview_figure(synth["table"], synth["summary"])
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.0, 10.0)
    ylabels = [t.get_text() for t in ax.get_yticklabels()]
    est = synth["summary"].set_index("model")["estimate"]
    assert ylabels == sorted(est.index, key=lambda m: (-est[m], m))  # top row = best
    scatters = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(scatters) >= len(CONDITIONS)
    points = sum(len(c.get_offsets()) for c in scatters[: len(CONDITIONS)])
    assert points == len(synth["table"])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[: len(CONDITIONS)] == sorted(CONDITIONS) and legend[-1] == "Mean (95% CI)"
    # the diamonds sit at the estimates, top to bottom
    diamonds = [line for line in ax.lines if line.get_marker() == "D"]
    assert len(diamonds) == 1
    np.testing.assert_allclose(diamonds[0].get_xdata(), [est[m] for m in ylabels])


def test_overview_jitter_is_deterministic(synth):
    a = figures.overview_figure(synth["table"], synth["summary"]).axes[0].collections[0].get_offsets()
    b = figures.overview_figure(synth["table"], synth["summary"]).axes[0].collections[0].get_offsets()
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_overview_requires_a_summary_row_per_model(synth):
    with pytest.raises(ValueError, match="overview_figure: summary has no row"):
        figures.overview_figure(synth["table"], synth["summary"].iloc[1:])


def test_heatmap_axes_cells_and_scale(synth):
    fig = figures.heatmap_figure(synth["rates"])
    assert len(fig.axes) == 2  # heatmap + colour bar
    ax = fig.axes[0]
    (im,) = ax.get_images()
    assert im.get_clim() == (0.0, 1.0) and im.get_cmap().name == "YlOrRd"
    assert im.get_array().shape == (11, 10)
    assert [t.get_text() for t in ax.get_yticklabels()] == sorted(synth["rates"]["model"].unique())
    assert [t.get_text() for t in ax.get_xticklabels()] == list(DIMENSIONS)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 110 and all(len(t) == 4 and t[1] == "." for t in texts)  # 2 dp


def test_violin_and_reliability_table(synth):
    fig = figures.violin_figure(synth["table"])
    assert len(fig.axes) == 1 and fig.axes[0].get_xlim() == (0.0, 10.0)
    assert len(fig.axes[0].get_yticklabels()) == 11
    # a constant group (fewer than 2 distinct values) is drawn, not an error
    const = synth["table"].copy()
    const.loc[const["model"] == const["model"].iat[0], "ward_score"] = 3.0
    assert len(figures.violin_figure(const).axes) == 1

    rel = pd.DataFrame(
        {"Measure": ["Ward Total (0–10)", "Ward: symmetry"], "α (all)": ["0.913", "0.881"], "x": [np.nan, 0.5]}
    )
    fig = figures.reliability_table_figure(rel)
    assert len(fig.axes) == 1
    (table,) = fig.axes[0].tables
    cells = table.get_celld()
    assert cells[(0, 0)].get_text().get_text() == "Measure"
    assert cells[(1, 2)].get_text().get_text() == "" and cells[(2, 2)].get_text().get_text() == "0.500"


def test_missing_columns_are_reported(synth):
    with pytest.raises(ValueError, match=r"heatmap_figure: input lacks columns \['departure_rate'\]"):
        figures.heatmap_figure(synth["rates"].drop(columns="departure_rate"))
    with pytest.raises(ValueError, match="lack dimensions"):
        figures.heatmap_figure(synth["rates"][synth["rates"]["dimension"] != "habitat"])


def _check_files(paths: list[Path]) -> None:
    for p in paths:
        data = p.read_bytes()
        assert len(data) > 1000, p
        if p.suffix == ".png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert p.suffix == ".pdf" and data[:5] == b"%PDF-" and b"CreationDate" not in data


def test_draw_all_with_eleven_models_and_reruns_byte_identical(synth, tmp_path):
    human_scores, _ = synthetic(n_models=1, seed=9)
    inputs = {"scores": synth["scores"], "generations": synth["generations"], "human_scores": human_scores}
    rel = pd.DataFrame({"Measure": ["Ward Total (0–10)"], "α (all)": ["0.913"]})
    a = figures.draw_all(inputs, tmp_path / "a", tables={"table_reliability": rel}, n_boot=100, dpi=50)
    assert [p.name for p in a] == [f"{s}.{ext}" for s in figures.FIGURE_STEMS for ext in ("png", "pdf")]
    _check_files(a)
    b = figures.draw_all(inputs, tmp_path / "b", tables={"table_reliability": rel}, n_boot=100, dpi=50)
    for pa, pb in zip(a, b, strict=True):
        assert pa.read_bytes() == pb.read_bytes(), pa.name


@pytest.fixture(scope="module")
def dataset(built_dataset):
    """The dataset built once per session from the authors' release (tests/conftest.py)."""
    return Path(built_dataset)


@pytest.mark.release
def test_draw_all_on_release(dataset, tmp_path):
    paths = figures.draw_all(dataset, tmp_path, n_boot=500, dpi=50)
    # without a reliability table (computed by the main analysis) fig3 is skipped
    assert [p.stem for p in paths[::2]] == [s for s in figures.FIGURE_STEMS if s != "fig3_reliability_table"]
    _check_files(paths)
