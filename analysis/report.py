"""The one-page HTML report: leaderboard, main tables, figures and provenance (issue 3 outputs, issue 5 item 7).

:func:`leaderboard` ranks every model of the main split, including submitted models appended in a
later dataset version, by overall Ward score with its BOOT-MEAN CI (spec 4.1) and adds the
per-condition means (A3), per-feature departure rates (A4), length-normalised scores and the
length-adjusted ranking of :mod:`analysis.reanalysis`. :func:`write_report` renders it with the main
tables and the figures into a single self-contained ``report.html``: figures are embedded as base64
PNG, there is no script, stylesheet, font or image fetched from the network, and every piece of text
coming from the data (model ids, table cells, provenance) is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from alienbench_data.schema import CONDITIONS, DIM_COLUMNS, DIMENSIONS
from analysis.reanalysis import (
    LengthUnit,
    generation_table,
    judge_table,
    length_regression,
    raw_ranking,
    resolve_inputs,
)

__all__ = ["REPORT_NAME", "leaderboard", "write_report"]

REPORT_NAME = "report.html"


def _version_key(version: str) -> tuple[Any, ...]:
    parts = []
    for p in str(version).split("."):
        parts.append((0, int(p), "") if p.isdigit() else (1, 0, p))
    return tuple(parts)


def _ordered_conditions(present: Sequence[str]) -> list[str]:
    known = [c for c in CONDITIONS if c in present]
    return known + sorted(set(present) - set(known))


def leaderboard(
    inputs: Any,
    *,
    n_boot: int = 10_000,
    seed: int = 1234,
    length: LengthUnit = "words",
    judges: Sequence[str] | None = None,
    exclude_flags: Sequence[str] = (),
) -> pd.DataFrame:
    """The AlienBench leaderboard: one row per model of the main split, best first.

    Parameters
    ----------
    inputs
        A dataset folder or an object / mapping with ``scores`` and ``generations`` (main split);
        see :func:`analysis.reanalysis.resolve_inputs`.
    n_boot, seed
        BOOT-MEAN parameters (spec 3.1).
    length
        Length measure of the regression adjustment: ``"words"`` (visible words, default) or
        ``"tokens"``.
    judges, exclude_flags
        Subset options of :func:`analysis.reanalysis.generation_table` (e.g. one judge, or
        ``exclude_flags=("likely_truncated",)``); the default is the canonical analysis set.

    Returns
    -------
    pandas.DataFrame
        Columns: rank (1 = best; ties share the lowest rank), model, mean (M_m), ci_low, ci_high
        (BOOT-MEAN 95 %), n (generations), ``mean_<condition>`` for every condition (config order,
        then any other alphabetically), ``rate_<dimension>`` for the 10 dimensions,
        per_100_words, per_100_tokens (means of W̄_g / length x 100), adjusted_mean,
        adjusted_ci_low, adjusted_ci_high, adjusted_rank (regression on log length, OLS with
        cluster-robust errors by generation, :func:`analysis.reanalysis.length_regression`),
        rank_change (rank - adjusted_rank, positive: better after adjustment), added_in_version and
        is_new (added after the first dataset version present). Sorted by rank, then model.
    """
    frames = resolve_inputs(inputs)
    gens = frames.generations
    table = generation_table(frames.scores, gens, judges=judges, exclude_flags=exclude_flags)
    if table.empty:
        raise ValueError("leaderboard: no generation left after the subset options; relax judges/exclude_flags")
    board = raw_ranking(table, n_boot=n_boot, seed=seed).rename(columns={"estimate": "mean"})
    board = board[["rank", "model", "mean", "ci_low", "ci_high", "n"]]

    cell = table.pivot_table(index="model", columns="condition", values="ward_score", aggfunc="mean", sort=True)
    for cond in _ordered_conditions(list(cell.columns)):
        board[f"mean_{cond}"] = board["model"].map(cell[cond]).astype(float)
    rates = table.groupby("model", sort=True)[list(DIM_COLUMNS)].mean()
    for dim, col in zip(DIMENSIONS, DIM_COLUMNS, strict=True):
        board[f"rate_{dim}"] = board["model"].map(rates[col]).astype(float)

    nan = pd.Series(np.nan, index=board.index)
    if gens is not None:
        for unit, col in (("words", "response_words"), ("tokens", "completion_tokens")):
            length_ = table[col].astype(float).where(table[col].astype(float) > 0)  # as length_normalised
            per = (table["ward_score"] / length_ * 100.0).groupby(table["model"]).mean()
            board[f"per_100_{unit}"] = board["model"].map(per).astype(float)
        rows = judge_table(frames.scores, gens, judges=judges, exclude_flags=exclude_flags)
        adj = length_regression(rows, length=length).set_index("model")
        board["adjusted_mean"] = board["model"].map(adj["estimate"]).astype(float)
        board["adjusted_ci_low"] = board["model"].map(adj["ci_low"]).astype(float)
        board["adjusted_ci_high"] = board["model"].map(adj["ci_high"]).astype(float)
        board["adjusted_rank"] = board["model"].map(adj["rank"]).astype("Int64")
    else:
        for c in ("per_100_words", "per_100_tokens", "adjusted_mean", "adjusted_ci_low", "adjusted_ci_high"):
            board[c] = nan
        board["adjusted_rank"] = pd.array([pd.NA] * len(board), dtype="Int64")
    board["rank_change"] = (board["rank"].astype("Int64") - board["adjusted_rank"]).astype("Int64")

    source = gens if gens is not None and "added_in_version" in gens.columns else frames.scores
    if "added_in_version" in source.columns:
        versions = source.groupby("model")["added_in_version"].agg(lambda v: max(map(str, v), key=_version_key))
        board["added_in_version"] = board["model"].map(versions).astype("string")
        first = min(map(str, versions.reindex(board["model"]).dropna()), key=_version_key, default=None)
        board["is_new"] = [
            v is not pd.NA and first is not None and _version_key(v) > _version_key(first)
            for v in board["added_in_version"]
        ]
    else:
        board["added_in_version"] = pd.array([pd.NA] * len(board), dtype="string")
        board["is_new"] = False
    board["rank"] = board["rank"].astype("Int64")
    return board.sort_values(["rank", "model"], kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# HTML rendering
# --------------------------------------------------------------------------------------------------

_CSS = """
body{font-family:Georgia,'DejaVu Serif',serif;margin:2em auto;max-width:1200px;color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.85em}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.t,th.t{text-align:left}
.new{background:#fff4d6}
.badge{font-size:.75em;background:#e8a33a;color:#fff;border-radius:3px;padding:0 .35em;margin-left:.4em}
.note{color:#666;font-size:.85em}figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}.scroll{overflow-x:auto}code{font-size:.9em}
"""


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _is_missing(v: Any) -> bool:
    if v is None or v is pd.NA:
        return True
    try:
        return bool(isinstance(v, (float, np.floating)) and math.isnan(v))
    except TypeError:  # pragma: no cover
        return False


def _fmt(v: Any, nd: int = 3) -> str:
    if _is_missing(v):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.{nd}f}"
    return str(v)


def _shade(rate: Any) -> str:
    if _is_missing(rate):
        return ""
    a = min(max(float(rate), 0.0), 1.0)
    return f' style="background:rgba(221,110,58,{a * 0.75:.3f})"'


def _html_table(df: pd.DataFrame, *, max_rows: int | None = None, nd: int = 3) -> str:
    shown = df if max_rows is None else df.head(max_rows)
    text_cols = {c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])}
    head = "".join(f"<th{' class=t' if c in text_cols else ''}>{_esc(c)}</th>" for c in df.columns)
    body = []
    for row in shown.itertuples(index=False):
        cells = "".join(
            f"<td{' class=t' if c in text_cols else ''}>{_esc(_fmt(v, nd))}</td>"
            for c, v in zip(df.columns, row, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    note = ""
    if max_rows is not None and len(df) > max_rows:
        note = (
            f'<p class="note">First {max_rows} of {len(df)} rows; the full table is in the CSV beside this report.</p>'
        )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{note}'
    )


def _model_cell(row: Mapping[str, Any]) -> str:
    cell = _esc(row["model"])
    if bool(row.get("is_new", False)) and not _is_missing(row.get("added_in_version")):
        cell += f'<span class="badge">new in v{_esc(row["added_in_version"])}</span>'
    return cell


def _ci(est: Any, lo: Any, hi: Any, nd: int = 2) -> str:
    if _is_missing(est):
        return ""
    return f"{_fmt(est, nd)} [{_fmt(lo, nd)}, {_fmt(hi, nd)}]"


def _leaderboard_html(board: pd.DataFrame) -> str:
    recs = board.to_dict("records")
    cond_cols = [c for c in board.columns if c.startswith("mean_")]
    rate_cols = [c for c in board.columns if c.startswith("rate_")]

    def tr(rec: Mapping[str, Any], cells: list[str]) -> str:
        cls = ' class="new"' if bool(rec.get("is_new", False)) else ""
        return f"<tr{cls}>{''.join(cells)}</tr>"

    head = (
        "<tr><th>Rank</th><th class=t>Model</th><th>Ward score [95% CI]</th><th>n</th>"
        "<th>per 100 words</th><th>per 100 tokens</th><th>Length-adjusted [95% CI]</th>"
        "<th>Adjusted rank</th><th>Rank change</th><th class=t>Added in</th></tr>"
    )
    rows = []
    for r in recs:
        change = r.get("rank_change")
        change_txt = "" if _is_missing(change) else f"{int(change):+d}"
        rows.append(
            tr(
                r,
                [
                    f"<td>{_esc(_fmt(r['rank']))}</td>",
                    f"<td class=t>{_model_cell(r)}</td>",
                    f"<td>{_esc(_ci(r['mean'], r['ci_low'], r['ci_high']))}</td>",
                    f"<td>{_esc(_fmt(r['n']))}</td>",
                    f"<td>{_esc(_fmt(r.get('per_100_words')))}</td>",
                    f"<td>{_esc(_fmt(r.get('per_100_tokens')))}</td>",
                    f"<td>{_esc(_ci(r.get('adjusted_mean'), r.get('adjusted_ci_low'), r.get('adjusted_ci_high')))}"
                    "</td>",
                    f"<td>{_esc(_fmt(r.get('adjusted_rank')))}</td>",
                    f"<td>{_esc(change_txt)}</td>",
                    f"<td class=t>{_esc(_fmt(r.get('added_in_version')))}</td>",
                ],
            )
        )
    overall = f'<div class="scroll"><table><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'

    def sub_table(cols: list[str], prefix: str, nd: int, shade: bool) -> str:
        if not cols:
            return ""
        hd = (
            "<tr><th>Rank</th><th class=t>Model</th>"
            + "".join(f"<th>{_esc(c[len(prefix) :])}</th>" for c in cols)
            + "</tr>"
        )
        body = []
        for r in recs:
            cells = [f"<td>{_esc(_fmt(r['rank']))}</td>", f"<td class=t>{_model_cell(r)}</td>"]
            cells += [f"<td{_shade(r[c]) if shade else ''}>{_esc(_fmt(r[c], nd))}</td>" for c in cols]
            body.append(tr(r, cells))
        return f'<div class="scroll"><table><thead>{hd}</thead><tbody>{"".join(body)}</tbody></table></div>'

    return (
        overall
        + '<p class="note">Ward score: mean over generations of the judge-averaged Ward Departure Score (0-10), '
        "percentile bootstrap 95% CI (B = 10,000, seed 1234). Per 100 words / tokens: mean of score / length x 100 "
        "(completion tokens include hidden reasoning for Gemini and Qwen, so the per-token value is not comparable "
        "across models). Length-adjusted: marginal mean from OLS of the judge scores on model + condition + "
        "log(visible words), cluster-robust by generation; rank change = raw rank - adjusted rank.</p>"
        + "<h3>Mean score per prompt condition</h3>"
        + sub_table(cond_cols, "mean_", 2, False)
        + "<h3>Departure rate per feature</h3>"
        + sub_table(rate_cols, "rate_", 2, True)
    )


def _figure_pngs(figures: Sequence[os.PathLike[str] | str]) -> list[Path]:
    seen: list[Path] = []
    for f in figures:
        p = Path(f)
        if p.suffix.lower() != ".png":
            p = p.with_suffix(".png")
        if p.exists() and p not in seen:
            seen.append(p)
    return seen


def _provenance_html(provenance: Mapping[str, Any]) -> str:
    rows = []
    for key, value in provenance.items():
        text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True, default=str)
        rows.append(f"<tr><th class=t>{_esc(key)}</th><td class=t><code>{_esc(text)}</code></td></tr>")
    return f"<table><tbody>{''.join(rows)}</tbody></table>"


def write_report(
    out_dir: str | os.PathLike[str],
    *,
    leaderboard: pd.DataFrame,
    tables: Mapping[str, pd.DataFrame],
    figures: Sequence[os.PathLike[str] | str],
    provenance: Mapping[str, Any],
    title: str = "AlienBench results",
    max_table_rows: int = 60,
) -> Path:
    """Write ``report.html``: leaderboard, main tables, figures and provenance on one self-contained page.

    Parameters
    ----------
    out_dir
        Folder for ``report.html`` (created).
    leaderboard
        Output of :func:`leaderboard` (rank, model, mean, ci_low, ci_high, n, ``mean_<condition>``,
        ``rate_<dimension>``, per_100_*, adjusted_*, rank_change, added_in_version, is_new). Submitted
        models (``is_new``) are highlighted with their ``added_in_version``.
    tables
        name -> DataFrame, rendered in the given order (at most ``max_table_rows`` rows each, with a
        note pointing to the full CSV).
    figures
        Figure files; PNG files (or the PNG sibling of a PDF) are embedded as base64 data URIs.
    provenance
        key -> value (dataset version, manifest hash, git commit, parameters...); non-string values
        are shown as JSON.

    Returns
    -------
    pathlib.Path
        The written ``report.html``. No external asset is referenced; all text is escaped with
        :func:`html.escape`.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    version = provenance.get("dataset_version") if isinstance(provenance, Mapping) else None
    if version is not None:
        parts.append(f'<p class="note">Dataset version {_esc(version)}; {len(leaderboard)} models.</p>')
    parts += ['<h2 id="leaderboard">Leaderboard</h2>', _leaderboard_html(leaderboard)]

    pngs = _figure_pngs(figures)
    if pngs:
        parts.append('<h2 id="figures">Figures</h2>')
        for p in pngs:
            data = base64.b64encode(p.read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img src="data:image/png;base64,{data}" alt="{_esc(p.stem)}">'
                f"<figcaption>{_esc(p.stem)}</figcaption></figure>"
            )
    if tables:
        parts.append('<h2 id="tables">Tables</h2>')
        for name, df in tables.items():
            if df is None:
                continue
            parts.append(f"<h3>{_esc(name)}</h3>")
            parts.append(_html_table(df, max_rows=max_table_rows))
    parts += ['<h2 id="provenance">Provenance</h2>', _provenance_html(provenance), "</body></html>"]
    path = out / REPORT_NAME
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path
