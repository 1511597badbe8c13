"""LaTeX tables of the main analysis (spec section 5 and 7.1).

``tab_ward_scores.tex`` and ``tab_human_dimensions.tex`` reproduce the authors' code output byte for
byte. ``tab_ward_dimensions.tex`` is the code layout (dimensions x models); the authors' shipped file
was edited by hand (a "Human baseline" column and rotated headers were added), which
``human_column=True`` approximates. ``tab_reliability.tex`` is the code output (unstratified alpha
with a Landis & Koch band); the shipped file is hand-edited and stale (spec 5.3).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

import alienbench_data as ab

from .data import DIMENSIONS
from .main import MainResults

__all__ = [
    "DIMENSION_LABELS",
    "RADAR_LABELS",
    "reliability_band",
    "tab_human_dimensions",
    "tab_reliability",
    "tab_ward_dimensions",
    "tab_ward_scores",
    "write_latex",
]

CONDITION_HEADERS = {"baseline": "Base", "departure_primed": "Dep-P", "constrained_no_light": "NoLight",
                     "constrained_high_gravity": "HighG", "constrained_ammonia": "NH$_3$",
                     "detailed_description": "Detail"}
DIMENSION_LABELS = {"symmetry": "Body Symmetry", "sensory_organs": "Sensory Organs", "locomotion": "Locomotion",
                    "body_plan": "Body Plan", "skin_covering": "Skin/Body Covering",
                    "reproduction": "Reproduction", "metabolism": "Metabolism/Energy Source",
                    "communication": "Communication", "habitat": "Habitat",
                    "cognition": "Cognitive Architecture"}
RADAR_LABELS = {"symmetry": "Symmetry", "sensory_organs": "Sensing", "locomotion": "Locomotion",
                "body_plan": "Body plan", "skin_covering": "Covering", "reproduction": "Reproduction",
                "metabolism": "Metabolism", "communication": "Communication", "habitat": "Habitat",
                "cognition": "Cognition"}

_WARD_SCORES_CAPTION = (
    "Ward Departure Scores (0--10) by model and prompt condition. Rows are subject models; columns are prompt "
    "conditions with a final Overall column averaged across all conditions. Per-condition cells report mean (SD) "
    "across generations after averaging judges per generation. The Overall column reports the per-model mean with "
    "a bootstrap percentile 95\\% CI in brackets ($B=10{,}000$) over per-generation judge-averaged Ward scores. "
    "Bold marks the top model in each column. Column headers: Base = baseline, Dep-P = departure-primed, NoLight = "
    "constrained (no light), HighG = constrained (10$\\times$ Earth gravity), NH$_3$ = constrained (ammonia "
    "oceans), Detail = detailed description.")


def _short(model: str) -> str:
    return model.split("/", 1)[1] if "/" in model else model


def _bold_if(text: str, value: float, col_max: float) -> str:
    return f"\\textbf{{{text}}}" if not math.isnan(value) and abs(value - col_max) <= 1e-9 else text


def tab_ward_scores(res: MainResults) -> str:
    """``tab_ward_scores.tex`` (spec 5.1): model x condition "mean (SD)", overall "M [lo, hi]"; column max bold."""
    cells = res.cell_scores
    conditions = [c for c in ab.benchmark().condition_ids if c in set(cells["condition"])]
    conditions += sorted(set(cells["condition"]) - set(conditions))
    models = [m for m in dict.fromkeys(cells["model"])]
    mean = cells.pivot(index="model", columns="condition", values="mean")
    sd = cells.pivot(index="model", columns="condition", values="sd")
    n = cells.pivot(index="model", columns="condition", values="n")
    overall = res.model_scores.set_index("model")
    col_max = {c: np.nanmax(mean[c].to_numpy(dtype=float)) for c in conditions}
    o_max = np.nanmax(overall["estimate"].to_numpy(dtype=float))
    headers = [CONDITION_HEADERS.get(c, c.replace("_", r"\_")) for c in conditions]
    lines = [
        r"\begin{table}[htbp]",
        r"  \centering",
        f"  \\caption{{{_WARD_SCORES_CAPTION}}}",
        r"  \small",
        r"  \label{tab:ward_scores}",
        r"  \resizebox{\textwidth}{!}{%",
        f"  \\begin{{tabular}}{{l{'c' * (len(conditions) + 1)}}}",
        r"    \toprule",
        "    Model & " + " & ".join(headers) + r" & Overall \\",
        r"    \midrule",
    ]
    for m in models:
        parts = [_short(m)]
        for c in conditions:
            if c not in mean.columns or pd.isna(n.loc[m, c]) or n.loc[m, c] < 2:
                parts.append("---")
                continue
            v, s = float(mean.loc[m, c]), float(sd.loc[m, c])
            parts.append(_bold_if(f"{v:.2f} ({s:.2f})", v, col_max[c]))
        o = overall.loc[m]
        parts.append(_bold_if(f"{o['estimate']:.2f}\\,[{o['ci_low']:.2f}, {o['ci_high']:.2f}]", float(o["estimate"]),
                              o_max))
        lines.append("    " + " & ".join(parts) + r" \\")
    lines += [r"    \bottomrule", r"  \end{tabular}%", r"  }", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _model_dimension_matrix(res: MainResults) -> pd.DataFrame:
    dm = res.departure_per_model.pivot(index="dimension", columns="model", values="departure_rate")
    models = [m for m in dict.fromkeys(res.cell_scores["model"])]
    return dm.loc[list(DIMENSIONS), models]


def tab_ward_dimensions(res: MainResults, *, human_column: bool = False) -> str:
    """``tab_ward_dimensions.tex`` (spec 5.2): r_{m,d} in % (1 decimal), row maximum bold.

    With ``human_column=True`` the 7.1 human rates are added as a first column (the authors added it by
    hand; it is not part of their code output and takes no part in the bold rule).
    """
    dm = _model_dimension_matrix(res)
    models = list(dm.columns)
    human = res.human_rates.set_index("dimension")["departure_rate"] if human_column else None
    cols = (["Human baseline"] if human_column else []) + [_short(m) for m in models]
    lines = [
        r"\begin{table}[htbp]",
        r"  \centering",
        r"  \caption{Ward feature departure rates (\%) per dimension and model, averaged across all prompt "
        r"conditions and judges. Bold marks the highest departure rate per dimension.}",
        r"  \small",
        r"  \label{tab:ward_dimensions}",
        r"  \resizebox{\textwidth}{!}{%",
        f"  \\begin{{tabular}}{{l{'c' * len(cols)}}}",
        r"    \toprule",
        "    Dimension & " + " & ".join(cols) + r" \\",
        r"    \midrule",
    ]
    for d in DIMENSIONS:
        row = dm.loc[d].to_numpy(dtype=float)
        rmax = np.nanmax(row)
        parts = [DIMENSION_LABELS[d]]
        if human is not None:
            parts.append(f"{100 * human[d]:.1f}\\%")
        parts += [_bold_if(f"{100 * v:.1f}\\%", v, rmax) for v in row]
        lines.append("    " + " & ".join(parts) + r" \\")
    lines += [r"    \bottomrule", r"  \end{tabular}%", r"  }", r"\end{table}"]
    return "\n".join(lines) + "\n"


def reliability_band(alpha: float) -> str:
    """Landis & Koch band of spec 5.3: >= .80 Excellent, >= .60 Good, >= .40 Moderate, >= .20 Fair, else Poor."""
    if alpha is None or math.isnan(alpha):
        return "N/A"
    for cut, name in ((0.80, "Excellent"), (0.60, "Good"), (0.40, "Moderate"), (0.20, "Fair")):
        if alpha >= cut:
            return name
    return "Poor"


def tab_reliability(res: MainResults) -> str:
    """``tab_reliability.tex`` code output (spec 5.3): unstratified alpha of the Ward total and each dimension."""
    lines = [
        r"\begin{table}[!htbp]",
        r"  \centering",
        r"  \caption{Inter-rater reliability (Krippendorff's $\alpha$) between LLM judges across all generations: "
        r"interval level for the Ward total, nominal level per dimension. Bands follow Landis \& Koch (1977).}",
        r"  \small",
        r"  \label{tab:reliability_full}",
        r"  \begin{tabular}{lcl}",
        r"    \toprule",
        r"    Measure & $\alpha$ & Interpretation \\",
        r"    \midrule",
    ]
    for row in res.reliability.itertuples(index=False):
        label = "Ward Total (0--10)" if row.column == "ward_score" else DIMENSION_LABELS[row.column[4:]]
        a = float(row.alpha_all)
        val = "N/A" if math.isnan(a) else f"{a:.3f}"
        lines.append(f"    {label} & {val} & {reliability_band(a)} \\\\")
    lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def tab_human_dimensions(res: MainResults) -> str:
    """``tab_human_dimensions.tex`` (spec 5.4 / 7.1): one row "Human" with the 10 rates in % (1 decimal)."""
    rates = res.human_rates.set_index("dimension")["departure_rate"]
    n = int(res.human_rates["n"].max()) if len(res.human_rates) else 0
    lines = [
        r"\begin{table}[htb]",
        r"  \centering",
        r"  \caption{Human baseline Ward feature departure rate (\%) per dimension, computed from the "
        f"$N{{=}}{n}$ Prolific generations after averaging across judges per generation and then across "
        r"generations. Dimension labels match the axes of \autoref{fig:ward_radar}.}",
        r"  \small",
        r"  \label{tab:human_dimensions}",
        r"  \resizebox{\textwidth}{!}{%",
        r"  \begin{tabular}{lcccccccccc}",
        r"    \toprule",
        "    & " + " & ".join(RADAR_LABELS[d] for d in DIMENSIONS) + r" \\",
        r"    \midrule",
        "    Human & " + " & ".join(f"{100 * rates[d]:.1f}\\%" for d in DIMENSIONS) + r" \\",
        r"    \bottomrule",
        r"  \end{tabular}",
        r"  }",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def write_latex(res: MainResults, out_dir: str | Path, *, human_column: bool = False) -> list[Path]:
    """Write the four LaTeX tables of the main analysis into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"tab_ward_scores.tex": tab_ward_scores(res),
             "tab_ward_dimensions.tex": tab_ward_dimensions(res, human_column=human_column)}
    if len(res.reliability):
        files["tab_reliability.tex"] = tab_reliability(res)
    if len(res.human_rates):
        files["tab_human_dimensions.tex"] = tab_human_dimensions(res)
    paths = []
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        paths.append(out / name)
    return paths
