"""Figures of the AlienBench analysis (spec section 6; paper Figures 1 and 2).

Every figure has its own function that takes tidy DataFrames and returns a
:class:`matplotlib.figure.Figure`, so a user can redraw any figure on a subset::

    from analysis import figures, reanalysis as ra

    table = ra.generation_table(scores, gens, exclude_flags=("likely_truncated",))
    fig = figures.radar_figure(figures.feature_rates(table))
    figures.save_figure(fig, "out", "radar_no_truncated")

:func:`draw_all` draws the whole set from the dataset and writes PNG and PDF files with the
authors' stems (``fig1_ward_heatmap``, ``fig2_violin_scores``, ``fig3_reliability_table``,
``fig4_overview``, ``fig5_ward_radar``, ``fig5b_ward_radar_overlay``).

Figures use the Agg canvas and never touch pyplot's global state. Output is deterministic: the strip
jitter uses a fixed seed, PNG files carry a fixed ``Software`` tag and PDF files no creation date, so
a rerun writes byte-identical files with the same matplotlib version. Any number of models is
supported (submitted models are appended to the main split).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from alienbench_data.schema import DIM_COLUMNS, DIMENSIONS, HUMAN_MODEL
from analysis.reanalysis import generation_table, raw_ranking, resolve_inputs

__all__ = [
    "DIM_SHORT_LABELS",
    "FIGURE_STEMS",
    "draw_all",
    "feature_rates",
    "heatmap_figure",
    "overview_figure",
    "radar_figure",
    "radar_overlay_figure",
    "reliability_table_figure",
    "save_figure",
    "violin_figure",
]

#: Short axis labels of the radar charts, in dimension order (spec 6, fig5).
DIM_SHORT_LABELS: dict[str, str] = dict(
    zip(
        DIMENSIONS,
        (
            "Symmetry",
            "Sensing",
            "Locomotion",
            "Body plan",
            "Covering",
            "Reproduction",
            "Metabolism",
            "Communication",
            "Habitat",
            "Cognition",
        ),
        strict=True,
    )
)

#: File stems written by :func:`draw_all` (the authors' names, spec 6 / 11).
FIGURE_STEMS: tuple[str, ...] = (
    "fig1_ward_heatmap",
    "fig2_violin_scores",
    "fig3_reliability_table",
    "fig4_overview",
    "fig5_ward_radar",
    "fig5b_ward_radar_overlay",
)

_MODEL_COLOR = "#dd6e3a"
_HUMAN_COLOR = "#1f5fbf"
_RC = {
    "font.family": "serif",
    "font.serif": ["DejaVu Serif"],
    "font.size": 9,
    "axes.titlesize": 10,
    "svg.hashsalt": "alienbench",
    "path.simplify": True,
}
_PNG_METADATA = {"Software": "alienbench"}
_PDF_METADATA = {"Creator": "alienbench", "Producer": "alienbench", "CreationDate": None}


@contextmanager
def _style():
    with matplotlib.rc_context(_RC):
        yield


def _new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _palette(n: int) -> list[tuple[float, float, float, float]]:
    """tab10 for up to 10 series, tab20 up to 20, else evenly spaced turbo colours."""
    if n <= 10:
        cmap = matplotlib.colormaps["tab10"]
        return [cmap(i) for i in range(n)]
    if n <= 20:
        cmap = matplotlib.colormaps["tab20"]
        return [cmap(i) for i in range(n)]
    cmap = matplotlib.colormaps["turbo"]
    return [cmap(x) for x in np.linspace(0.05, 0.95, n)]


def _short_names(models: Sequence[str]) -> dict[str, str]:
    """Model id without the provider prefix, unless two models would then share a label."""
    short = {m: m.split("/", 1)[-1] for m in models}
    if len(set(short.values())) < len(short):
        return {m: m for m in models}
    return short


def _need(df: pd.DataFrame, cols: Sequence[str], func: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{func}: input lacks columns {missing}; it has {list(df.columns)}")


# --------------------------------------------------------------------------------------------------
# Tidy inputs
# --------------------------------------------------------------------------------------------------


def feature_rates(table: pd.DataFrame) -> pd.DataFrame:
    """Per-model departure rate of each dimension (spec A4), long format.

    Parameters
    ----------
    table
        A per-generation table (:func:`analysis.reanalysis.generation_table`): model and the dim_*
        judge means d̄_g.

    Returns
    -------
    pandas.DataFrame
        model (alphabetical), dimension (dimension order), departure_rate (r_{m,d} = mean of d̄_g over
        the model's generations), n (generations).
    """
    _need(table, ["model", *DIM_COLUMNS], "feature_rates")
    wide = table.groupby("model", sort=True)[list(DIM_COLUMNS)].mean()
    n = table.groupby("model", sort=True).size()
    wide.columns = list(DIMENSIONS)
    long = wide.reset_index().melt(id_vars="model", var_name="dimension", value_name="departure_rate")
    long["dimension"] = pd.Categorical(long["dimension"], categories=list(DIMENSIONS), ordered=True)
    long = long.sort_values(["model", "dimension"], kind="mergesort").reset_index(drop=True)
    long["dimension"] = long["dimension"].astype(str)
    long["n"] = long["model"].map(n).astype(int)
    return long


def _wide_rates(rates: pd.DataFrame, func: str) -> pd.DataFrame:
    _need(rates, ["model", "dimension", "departure_rate"], func)
    wide = rates.pivot_table(index="model", columns="dimension", values="departure_rate", aggfunc="mean", sort=True)
    missing = [d for d in DIMENSIONS if d not in wide.columns]
    if missing:
        raise ValueError(f"{func}: rates lack dimensions {missing}; pass all 10 dimensions of DIMENSIONS")
    return wide[list(DIMENSIONS)]


def _human_vector(human: pd.DataFrame | pd.Series | None, func: str) -> np.ndarray | None:
    if human is None:
        return None
    if isinstance(human, pd.DataFrame):
        _need(human, ["dimension", "departure_rate"], func)
        human = human.groupby("dimension")["departure_rate"].mean()
    missing = [d for d in DIMENSIONS if d not in human.index]
    if missing:
        raise ValueError(f"{func}: human rates lack dimensions {missing}")
    return human.reindex(list(DIMENSIONS)).to_numpy(float)


def _order_by_score(wide: pd.DataFrame, order: Sequence[str] | None, func: str) -> list[str]:
    """Descending overall score M_m = Σ_d r_{m,d}; ties alphabetical."""
    if order is not None:
        unknown = [m for m in order if m not in wide.index]
        if unknown:
            raise ValueError(f"{func}: order names models without rates: {unknown}")
        return list(order)
    total = wide.sum(axis=1)
    return sorted(wide.index, key=lambda m: (-total[m], m))


# --------------------------------------------------------------------------------------------------
# Radar (fig5, fig5b; paper Fig. 1)
# --------------------------------------------------------------------------------------------------


def _radar_axes(ax: Any) -> np.ndarray:
    angles = np.linspace(0.0, 2 * np.pi, len(DIMENSIONS), endpoint=False)
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.set_ylim(0.0, 1.0)
    ax.set_xticks(angles)
    ax.set_xticklabels([DIM_SHORT_LABELS[d] for d in DIMENSIONS])
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.set_yticklabels(["", ".5", "", "1"], color="0.35", fontsize=7)
    ax.set_rlabel_position(18)
    ax.grid(color="0.82", linewidth=0.6)
    ax.spines["polar"].set_color("0.5")
    return angles


def _closed(angles: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.append(angles, angles[0]), np.append(values, values[0])


def radar_figure(
    rates: pd.DataFrame,
    *,
    order: Sequence[str] | None = None,
    human: pd.DataFrame | pd.Series | None = None,
    ncols: int = 5,
    human_label: str = "Human baseline",
) -> Figure:
    """Small-multiple radars of the per-feature departure rates, one panel per model (fig5; paper Fig. 1).

    Parameters
    ----------
    rates
        Long table with columns model, dimension, departure_rate (:func:`feature_rates`).
    order
        Panel order. Default: descending overall score M_m = Σ_d r_{m,d} (ties alphabetical).
    human
        Human baseline rates (a table with dimension, departure_rate, or a Series indexed by
        dimension), overlaid on every panel as a dashed blue polygon. ``None``: no overlay.
    ncols
        Panels per row (5, as the authors).

    Returns
    -------
    matplotlib.figure.Figure
        One polar axes per model (unused grid cells are not created). Axes: the 10 dimensions
        clockwise from the top; radial scale [0, 1].
    """
    if ncols < 1:
        raise ValueError(f"radar_figure: ncols={ncols} must be >= 1")
    wide = _wide_rates(rates, "radar_figure")
    models = _order_by_score(wide, order, "radar_figure")
    hum = _human_vector(human, "radar_figure")
    n = len(models)
    ncols_eff = max(1, min(ncols, n))
    nrows = max(1, math.ceil(n / ncols_eff))
    labels = _short_names(models)
    with _style():
        fig = _new_figure(3.1 * ncols_eff, 3.0 * nrows + (0.4 if hum is not None else 0.0))
        grid = fig.add_gridspec(nrows, ncols_eff)
        for i, model in enumerate(models):
            ax = fig.add_subplot(grid[i // ncols_eff, i % ncols_eff], projection="polar")
            angles = _radar_axes(ax)
            ax.tick_params(axis="x", labelsize=7, pad=1)
            if hum is not None:
                ax.plot(*_closed(angles, hum), color=_HUMAN_COLOR, linewidth=1.2, linestyle="--")
                ax.fill(*_closed(angles, hum), color=_HUMAN_COLOR, alpha=0.08)
            vals = wide.loc[model].to_numpy(float)
            ax.plot(*_closed(angles, vals), color=_MODEL_COLOR, linewidth=1.6)
            ax.fill(*_closed(angles, vals), color=_MODEL_COLOR, alpha=0.22)
            ax.set_title(labels[model], pad=14)
        if hum is not None:
            fig.legend(
                handles=[
                    Line2D([], [], color=_MODEL_COLOR, linewidth=1.6, label="Model"),
                    Line2D([], [], color=_HUMAN_COLOR, linewidth=1.2, linestyle="--", label=human_label),
                ],
                loc="outside lower center",
                ncols=2,
                frameon=False,
            )
    return fig


def radar_overlay_figure(
    rates: pd.DataFrame,
    *,
    order: Sequence[str] | None = None,
    human: pd.DataFrame | pd.Series | None = None,
    human_label: str = "Human baseline",
) -> Figure:
    """All models on one radar (fig5b), the human baseline as a dashed black polygon.

    Same inputs as :func:`radar_figure`. Returns a figure with exactly one polar axes; legend entries
    follow ``order`` (default descending overall score), the human baseline last.
    """
    wide = _wide_rates(rates, "radar_overlay_figure")
    models = _order_by_score(wide, order, "radar_overlay_figure")
    hum = _human_vector(human, "radar_overlay_figure")
    labels = _short_names(models)
    colors = _palette(len(models))
    with _style():
        fig = _new_figure(9.5, 7.0)
        ax = fig.add_subplot(projection="polar")
        angles = _radar_axes(ax)
        for model, color in zip(models, colors, strict=True):
            vals = wide.loc[model].to_numpy(float)
            ax.plot(*_closed(angles, vals), color=color, linewidth=1.4, label=labels[model])
            ax.fill(*_closed(angles, vals), color=color, alpha=0.06)
        if hum is not None:
            ax.plot(*_closed(angles, hum), color="black", linewidth=1.8, linestyle="--", label=human_label)
        ax.legend(loc="upper left", bbox_to_anchor=(1.08, 1.05), frameon=False, fontsize=8)
    return fig


# --------------------------------------------------------------------------------------------------
# Strip plot with means (fig4_overview; paper Fig. 2)
# --------------------------------------------------------------------------------------------------


def overview_figure(
    per_generation: pd.DataFrame,
    summary: pd.DataFrame,
    *,
    seed: int = 0,
    jitter: float = 0.28,
) -> Figure:
    """Per-generation panel scores per model, coloured by condition, with mean and bootstrap CI (fig4).

    Parameters
    ----------
    per_generation
        One row per generation: model, condition, ward_score (judge mean W̄_g), and generation_id
        (used to fix the point order).
    summary
        One row per model: model, estimate, ci_low, ci_high (e.g. :func:`analysis.reanalysis.raw_ranking`:
        BOOT-MEAN, B = 10,000, seed 1234, spec 4.1).
    seed
        Seed of the vertical jitter (fixed, so the figure is reproducible).

    Returns
    -------
    matplotlib.figure.Figure
        One axes: rows = models by descending estimate (ties alphabetical), x in [0, 10]; points
        coloured by condition (alphabetical, tab10); a black diamond at the estimate with a horizontal
        bar over [ci_low, ci_high].
    """
    _need(per_generation, ["model", "condition", "ward_score"], "overview_figure")
    _need(summary, ["model", "estimate", "ci_low", "ci_high"], "overview_figure")
    summ = summary.set_index("model")
    models = sorted(summ.index, key=lambda m: (-summ.at[m, "estimate"], m))
    missing = sorted(set(per_generation["model"]) - set(models))
    if missing:
        raise ValueError(f"overview_figure: summary has no row for models {missing}")
    conditions = sorted(set(per_generation["condition"]))
    colors = dict(zip(conditions, _palette(len(conditions)), strict=True))
    ypos = {m: i for i, m in enumerate(models)}
    sort_cols = ["model", "generation_id"] if "generation_id" in per_generation else ["model"]
    pts = per_generation.sort_values(sort_cols, kind="mergesort")
    rng = np.random.default_rng(seed)
    y = pts["model"].map(ypos).to_numpy(float) + rng.uniform(-jitter, jitter, len(pts))
    with _style():
        fig = _new_figure(9.0, 1.2 + 0.42 * max(len(models), 2))
        ax = fig.add_subplot()
        for cond in conditions:
            sel = (pts["condition"] == cond).to_numpy()
            ax.scatter(
                pts.loc[sel, "ward_score"].to_numpy(float),
                y[sel],
                s=9,
                color=colors[cond],
                alpha=0.6,
                linewidths=0,
                label=cond,
                rasterized=False,
            )
        est = summ.loc[models, "estimate"].to_numpy(float)
        lo = summ.loc[models, "ci_low"].to_numpy(float)
        hi = summ.loc[models, "ci_high"].to_numpy(float)
        ax.errorbar(
            est,
            np.arange(len(models)),
            xerr=np.vstack([est - lo, hi - est]),
            fmt="D",
            color="black",
            markersize=7,
            capsize=3,
            elinewidth=1.3,
            zorder=5,
            label="Mean (95% CI)",
        )
        ax.set_yticks(np.arange(len(models)))
        ax.set_yticklabels(models)
        ax.set_ylim(len(models) - 0.5, -0.5)
        ax.set_xlim(0, 10)
        ax.set_xlabel("Ward Departure Score (0–10)")
        ax.set_title("Ward Departure Score: per-model distribution (points) and mean (95% bootstrap CI)")
        ax.legend(title="Prompt condition", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    return fig


# --------------------------------------------------------------------------------------------------
# Heatmap (fig1)
# --------------------------------------------------------------------------------------------------


def heatmap_figure(rates: pd.DataFrame) -> Figure:
    """Model x feature departure-rate heatmap (fig1_ward_heatmap).

    Parameters
    ----------
    rates
        Long table with columns model, dimension, departure_rate (:func:`feature_rates`).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the heatmap (rows models alphabetical, columns dimensions in dimension order,
        YlOrRd fixed to [0, 1], every cell annotated with 2 decimals) and its colour bar.
    """
    wide = _wide_rates(rates, "heatmap_figure").sort_index()
    vals = wide.to_numpy(float)
    nrow, ncol = vals.shape
    with _style():
        fig = _new_figure(11.0, 1.6 + 0.42 * max(nrow, 2))
        ax = fig.add_subplot()
        im = ax.imshow(vals, cmap="YlOrRd", vmin=0.0, vmax=1.0, aspect="auto")
        for i in range(nrow):
            for j in range(ncol):
                v = vals[i, j]
                text = "" if np.isnan(v) else f"{v:.2f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if v > 0.55 else "black")
        ax.set_xticks(np.arange(ncol), labels=list(DIMENSIONS), rotation=30, ha="right")
        ax.set_yticks(np.arange(nrow), labels=list(wide.index))
        ax.set_xticks(np.arange(ncol + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(nrow + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.0)
        ax.tick_params(which="minor", length=0)
        ax.set_xlabel("Feature Dimension")
        ax.set_ylabel("Model")
        ax.set_title("Ward Feature Departure Rates by Model")
        fig.colorbar(im, ax=ax, label="Departure rate")
    return fig


# --------------------------------------------------------------------------------------------------
# Violins (fig2)
# --------------------------------------------------------------------------------------------------


def violin_figure(per_generation: pd.DataFrame, *, order: Sequence[str] | None = None) -> Figure:
    """Horizontal violins of W̄_g per model and condition (fig2_violin_scores).

    Parameters
    ----------
    per_generation
        One row per generation: model, condition, ward_score.
    order
        Model order, top to bottom. Default: descending mean score (ties alphabetical); the
        authors' order of first appearance is arbitrary (spec 6), so this one is fixed instead.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; x in [0, 10]; violins cut at the data range with quartile lines; conditions
        alphabetical within a model (tab10). A group with fewer than two distinct values is drawn as
        a short vertical tick at its value.
    """
    _need(per_generation, ["model", "condition", "ward_score"], "violin_figure")
    means = per_generation.groupby("model")["ward_score"].mean()
    models = list(order) if order is not None else sorted(means.index, key=lambda m: (-means[m], m))
    conditions = sorted(set(per_generation["condition"]))
    colors = dict(zip(conditions, _palette(len(conditions)), strict=True))
    step, gap = 1.0, 1.2
    block = len(conditions) * step + gap
    with _style():
        fig = _new_figure(8.5, 1.4 + 0.23 * len(models) * (len(conditions) + 1.2))
        ax = fig.add_subplot()
        groups = per_generation.groupby(["model", "condition"])["ward_score"]
        data = {k: v.to_numpy(float) for k, v in groups}
        for i, model in enumerate(models):
            for j, cond in enumerate(conditions):
                x = data.get((model, cond))
                if x is None or x.size == 0:
                    continue
                pos = i * block + j * step
                if np.unique(x).size < 2:
                    ax.plot([x[0], x[0]], [pos - 0.35, pos + 0.35], color=colors[cond], linewidth=2)
                    continue
                parts = ax.violinplot(
                    [x],
                    positions=[pos],
                    orientation="horizontal",
                    widths=0.9 * step,
                    showextrema=False,
                    quantiles=[[0.25, 0.5, 0.75]],
                )
                for body in parts["bodies"]:
                    body.set_facecolor(colors[cond])
                    body.set_edgecolor("0.25")
                    body.set_linewidth(0.5)
                    body.set_alpha(0.9)
                parts["cquantiles"].set_color("0.25")
                parts["cquantiles"].set_linewidth(0.6)
        centres = [i * block + (len(conditions) - 1) * step / 2 for i in range(len(models))]
        ax.set_yticks(centres, labels=models)
        ax.set_ylim(len(models) * block - gap + 0.5 * step - step, -0.8 * step)
        ax.set_xlim(0, 10)
        ax.set_xlabel("Ward Departure Score (0–10)")
        ax.set_title("Ward Departure Score by Model and Prompt Condition")
        ax.legend(
            handles=[Patch(facecolor=colors[c], edgecolor="0.25", label=c) for c in conditions],
            title="Prompt condition",
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            frameon=False,
            fontsize=8,
        )
    return fig


# --------------------------------------------------------------------------------------------------
# Reliability table (fig3)
# --------------------------------------------------------------------------------------------------


def reliability_table_figure(table: pd.DataFrame, *, title: str | None = None, float_format: str = "{:.3f}") -> Figure:
    """Draw ``table_reliability.csv`` (spec 4.9) as a figure (fig3_reliability_table).

    Parameters
    ----------
    table
        Any DataFrame; cells are shown as text (NaN as empty, floats with ``float_format``; the
        shipped table already holds 3-dp strings), the header is the column names.

    Returns
    -------
    matplotlib.figure.Figure
        One axes (axis hidden) holding a table with ``len(table)`` body rows.
    """

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, (float, np.floating)):
            return float_format.format(v)
        return str(v)

    cells = [[cell(v) for v in row] for row in table.itertuples(index=False)]
    with _style():
        fig = _new_figure(max(6.0, 2.2 * len(table.columns)), 1.2 + 0.32 * (len(table) + 1))
        ax = fig.add_subplot()
        ax.axis("off")
        tab = ax.table(cellText=cells or None, colLabels=[str(c) for c in table.columns], loc="center", cellLoc="left")
        tab.auto_set_font_size(False)
        tab.set_fontsize(9)
        tab.scale(1.0, 1.4)
        ax.set_title(title or "Inter-Rater Reliability (Krippendorff's α), stratified by judge-subject overlap")
    return fig


# --------------------------------------------------------------------------------------------------
# Saving and the whole set
# --------------------------------------------------------------------------------------------------


def save_figure(fig: Figure, out_dir: str | os.PathLike[str], stem: str, *, dpi: int = 200) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.pdf`` with fixed metadata (byte-stable reruns).

    Returns the two paths, PNG first.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png, pdf = out / f"{stem}.png", out / f"{stem}.pdf"
    with _style():
        fig.savefig(png, dpi=dpi, metadata=_PNG_METADATA, facecolor="white")
        fig.savefig(pdf, metadata=_PDF_METADATA, facecolor="white")
    return [png, pdf]


def _table(tables: Mapping[str, pd.DataFrame] | None, name: str) -> pd.DataFrame | None:
    if not tables:
        return None
    for key in (name, f"{name}.csv"):
        if key in tables and tables[key] is not None:
            return tables[key]
    return None


def _summary_from_tables(tables: Mapping[str, pd.DataFrame] | None) -> pd.DataFrame | None:
    per_model = _table(tables, "table_length_adjusted_per_model")
    if per_model is None or not {"subject_model", "mean_ward", "ward_ci_lo", "ward_ci_hi"} <= set(per_model.columns):
        return None
    return per_model.rename(
        columns={"subject_model": "model", "mean_ward": "estimate", "ward_ci_lo": "ci_low", "ward_ci_hi": "ci_high"}
    )[["model", "estimate", "ci_low", "ci_high"]]


def draw_all(
    inputs: Any,
    out_dir: str | os.PathLike[str],
    *,
    tables: Mapping[str, pd.DataFrame] | None = None,
    n_boot: int = 10_000,
    seed: int = 1234,
    dpi: int = 200,
    human_overlay: bool = True,
) -> list[Path]:
    """Draw every figure of spec section 6 (plus the human overlay of paper Fig. 1) as PNG and PDF.

    Parameters
    ----------
    inputs
        A dataset folder, or an object / mapping with ``scores`` and ``generations`` (main split) and
        optionally ``human_scores`` (see :func:`analysis.reanalysis.resolve_inputs`). With human
        scores, the radars overlay the human baseline rates (spec 7.1).
    out_dir
        Folder for the files (created).
    tables
        Optional tables already computed by the main analysis, keyed by the authors' stems:
        ``table_reliability`` draws fig3 (skipped when absent); ``table_length_adjusted_per_model``
        (subject_model, mean_ward, ward_ci_lo, ward_ci_hi) supplies the fig4 means and CIs, otherwise
        they are computed here with BOOT-MEAN (``n_boot``, ``seed``).
    dpi
        Resolution of the PNG files.
    human_overlay
        Overlay the human baseline on the radars, as in the paper's Figure 1 (spec 12.10). The
        authors' code draws fig5 without it; pass ``False`` for their version.

    Returns
    -------
    list[pathlib.Path]
        The written files, PNG then PDF per figure, in :data:`FIGURE_STEMS` order.
    """
    frames = resolve_inputs(inputs)
    table = generation_table(frames.scores)
    rates = feature_rates(table)
    human = None
    if human_overlay and frames.human_scores is not None and len(frames.human_scores):
        hs = frames.human_scores
        if "model" in hs.columns:
            hs = hs[hs["model"] == HUMAN_MODEL] if (hs["model"] == HUMAN_MODEL).any() else hs
        hrates = feature_rates(generation_table(hs).assign(model=HUMAN_MODEL))
        human = hrates[["dimension", "departure_rate"]]
    summary = _summary_from_tables(tables)
    if summary is None or set(summary["model"]) != set(table["model"]):
        summary = raw_ranking(table, n_boot=n_boot, seed=seed)
    est = summary.set_index("model")["estimate"].astype(float)
    order = sorted(est.index, key=lambda m: (-est[m], m))  # descending M_m, ties alphabetical

    written: list[Path] = []
    builders: list[tuple[str, Any]] = [
        ("fig1_ward_heatmap", lambda: heatmap_figure(rates)),
        ("fig2_violin_scores", lambda: violin_figure(table, order=order)),
    ]
    reliability = _table(tables, "table_reliability")
    if reliability is not None:
        builders.append(("fig3_reliability_table", lambda: reliability_table_figure(reliability)))
    builders += [
        ("fig4_overview", lambda: overview_figure(table, summary)),
        ("fig5_ward_radar", lambda: radar_figure(rates, order=order, human=human)),
        ("fig5b_ward_radar_overlay", lambda: radar_overlay_figure(rates, order=order, human=human)),
    ]
    for stem, build in builders:
        fig = build()
        written += save_figure(fig, out_dir, stem, dpi=dpi)
    return written
