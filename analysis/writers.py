"""Write the main-analysis results: the authors' CSVs (same names and columns), summary.txt, extra tables.

File names and columns follow spec section 11 so a results folder can be diffed against the
authors' ``results/``. Tables beyond the authors' code carry names they never use
(``table_human_vs_models*.csv``, ``table_power_simulation.csv``, ...).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .main import MainResults

__all__ = ["AUTHOR_CSVS", "EXTRA_CSVS", "summary_text", "write_csvs", "write_main", "write_summary"]

AUTHOR_CSVS = (
    "table_reliability.csv",
    "table_posthoc.csv",
    "table_extraction_status.csv",
    "table_token_covariate.csv",
    "table_token_covariate_per_condition.csv",
    "table_length_adjusted.csv",
    "table_length_adjusted_per_model.csv",
    "table_length_adjusted_posthoc.csv",
    "table_length_adjusted_divergence.csv",
    "table_departure_freq.csv",
)
EXTRA_CSVS = (
    "table_model_scores.csv",
    "table_cell_scores.csv",
    "table_reliability_full.csv",
    "table_kruskal_wallis.csv",
    "table_power_simulation.csv",
    "table_token_covariate_overall.csv",
    "table_departure_per_model.csv",
    "table_human_baseline.csv",
    "table_human_vs_models_rates.csv",
    "table_human_vs_models.csv",
)


def _fmt3(v: float) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def reliability_csv_frame(rel: pd.DataFrame) -> pd.DataFrame:
    """The authors' ``table_reliability.csv``: 3-decimal strings, NaN as empty (spec 4.9)."""
    return pd.DataFrame({
        "Measure": rel["measure"],
        "α (all)": [_fmt3(v) for v in rel["alpha_all"]],
        "α (cross-model)": [_fmt3(v) for v in rel["alpha_cross"]],
        "α (same-model)": [_fmt3(v) for v in rel["alpha_same"]],
        "Δ self−cross": [_fmt3(v) for v in rel["delta_self"]],
    })


def write_csvs(res: MainResults, out_dir: str | Path) -> list[Path]:
    """Write the authors' CSVs (spec 11) and the extra tables; returns the written paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frames: dict[str, pd.DataFrame] = {}
    if len(res.reliability):
        frames["table_reliability.csv"] = reliability_csv_frame(res.reliability)
    if len(res.posthoc):
        frames["table_posthoc.csv"] = res.posthoc
    frames["table_extraction_status.csv"] = res.extraction_status
    frames["table_token_covariate.csv"] = res.token_covariate
    frames["table_token_covariate_per_condition.csv"] = res.token_per_condition
    frames["table_length_adjusted.csv"] = res.length_adjusted
    frames["table_length_adjusted_per_model.csv"] = res.length_per_model
    if len(res.length_posthoc):
        frames["table_length_adjusted_posthoc.csv"] = res.length_posthoc
    frames["table_length_adjusted_divergence.csv"] = res.divergence
    frames["table_departure_freq.csv"] = res.departure_pooled
    # beyond the authors' files
    frames["table_model_scores.csv"] = res.model_scores
    frames["table_cell_scores.csv"] = res.cell_scores
    frames["table_reliability_full.csv"] = res.reliability
    frames["table_kruskal_wallis.csv"] = pd.concat([res.kw, res.length_kw], ignore_index=True)
    if res.power is not None:
        frames["table_power_simulation.csv"] = res.power.assign(**{k: v for k, v in res.power.attrs.items()})
    frames["table_token_covariate_overall.csv"] = res.token_overall
    frames["table_departure_per_model.csv"] = res.departure_per_model
    if len(res.human_rates):
        frames["table_human_baseline.csv"] = res.human_rates.assign(human_mean_ward=res.human_mean)
        frames["table_human_vs_models_rates.csv"] = res.human_vs_model_rates
        frames["table_human_vs_models.csv"] = res.human_vs_model_tests.assign(
            note="beyond the authors' code (spec 7.1: they test no human-model difference)")
    paths = []
    for name, frame in frames.items():
        path = out / name
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


# --------------------------------------------------------------------------------------------
# summary.txt
# --------------------------------------------------------------------------------------------
def _posthoc_lines(ph: pd.DataFrame, indent: str, *, with_ci: bool = True) -> list[str]:
    lines = []
    for row in ph.itertuples(index=False):
        star = "*" if row.p_corrected < 0.05 else ""
        ci = f" [{row.r_ci_lo:.3f}, {row.r_ci_hi:.3f}]" if with_ci else ""
        lines.append(f"{indent}{row.group_a} vs {row.group_b}: U={row.U:.0f}, p={row.p_corrected:.4f}{star}, "
                     f"r={row.rank_biserial_r:.3f}{ci}")
    return lines


def summary_text(res: MainResults) -> str:
    """summary.txt in the authors' layout (spec 4.1-4.8, in that order)."""
    L: list[str] = ["# AlienBench Results Summary", "", "## Ward Departure Score by Model (bootstrap 95% CI)", ""]
    for r in res.model_scores.itertuples(index=False):
        L.append(f"  {r.model}: {r.estimate:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}] (n={r.n})")
    if len(res.reliability):
        w = res.reliability.iloc[0]
        L += ["", "## Inter-Rater Reliability (Ward Total, stratified)", "",
              f"  α all-pairs     = {w['alpha_all']:.3f}  (n={w['n_all']})",
              f"  α cross-model   = {w['alpha_cross']:.3f}  (n={w['n_cross']})",
              f"  α same-model    = {w['alpha_same']:.3f}  (n={w['n_same']})",
              f"  Δ̄ self−cross    = {w['delta_self']:.3f} score points"]
        if res.self_judge_triggered:
            L.append("  Self-judge exclusion rule triggered: YES — consider excluding self-judge pairs from the "
                     "primary analysis.")
        else:
            L.append("  Self-judge exclusion rule triggered: no — self-judge pairs may remain in the primary analysis.")
    kw = res.kw.iloc[0]
    L += ["", "## Prompt Variant Effects (Kruskal-Wallis + Post-Hoc)", "",
          f"  Kruskal-Wallis: H={kw['H']:.2f}, p={kw['p']:.4f}"]
    if len(res.posthoc):
        L += ["", "  Pairwise Mann-Whitney U (Bonferroni-corrected, rank-biserial 95% CI):", ""]
        L += _posthoc_lines(res.posthoc, "    ")
    if res.power is not None:
        a = res.power.attrs
        L += ["", f"  Retrospective power (Mann-Whitney U, Bonferroni α'={a['alpha_corrected']:.4f}):"]
        mde = "not reached in grid" if math.isnan(res.mde) else f"{res.mde:.2f}"
        L.append(f"    Minimum detectable |r| at 80% power: {mde}")
        for r in res.power.loc[res.power["kind"] == "observed"].itertuples(index=False):
            L.append(f"    observed |r|={r.effect:.3f} -> simulated power={r.power:.2f}")
    L += ["", "## Extraction Reliability (per-judge success rates)", ""]
    st = res.extraction_status
    for j in sorted(st["judge_model"].unique()):
        part = st.loc[st["judge_model"] == j]
        n, succ = int(part["n_generations"].sum()), int(part["success"].sum())
        rate = 100 * succ / n if n else float("nan")
        L.append(f"  {j}: {rate:.1f}% successful ({succ}/{n}; {int(part['parse_error'].sum())} parse_error, "
                 f"{int(part['api_error'].sum())} api_error)")
    low = int((st["success_rate"] < 0.95).sum())
    if low:
        L.append(f"  {low} (judge, model, condition) cells have success_rate < 95%.")
    L += ["", "## Token Count vs. Ward Score (Instruction-Following Covariate)", ""]
    o = res.token_overall.iloc[0]
    L.append(f"  Overall: ρ={o['rho']:.3f} [{o['rho_ci_lo']:.3f}, {o['rho_ci_hi']:.3f}], p={o['p']:.4f} "
             f"(n={int(o['n'])})")
    for r in res.token_per_condition.itertuples(index=False):
        flag = "  [TOKEN-CONFOUNDED]" if r.token_confounded else ""
        L.append(f"  {r.prompt_variant}: ρ={r.rho:.3f} [{r.rho_ci_lo:.3f}, {r.rho_ci_hi:.3f}], p={r.p:.4f} "
                 f"(n={r.n}){flag}")
    L.append(f"  Cross-condition median ρ = {o['median_rho']:.3f}; flag threshold (median + 0.15) = "
             f"{o['threshold']:.3f}")
    flagged = res.token_per_condition.loc[res.token_per_condition["token_confounded"], "prompt_variant"].tolist()
    if flagged:
        L.append("  Flagged conditions should be excluded from primary model-comparison analyses: "
                 + ", ".join(flagged))
    else:
        L.append("  No condition exceeds the flag threshold.")
    L += ["", "## Length-Adjusted Ward Score (per 100 completion tokens)", ""]
    L.append(f"  Dropped {res.n_length_dropped} generations with completion_tokens <= 0." if res.n_length_dropped
             else "")
    L.append("  Per-model mean (bootstrap 95% CI):")
    for r in res.length_per_model.itertuples(index=False):
        L.append(f"    {r.subject_model}: ward_per_100={r.mean_ward_per_100:.3f} [{r.ward_per_100_ci_lo:.3f}, "
                 f"{r.ward_per_100_ci_hi:.3f}] (n={r.n})")
    rho, p = res.length_agreement
    L += ["", f"  Agreement with raw Ward (Spearman ρ on per-model means): ρ={rho:.3f}, p={p:.4f}"]
    lk = res.length_kw.iloc[0]
    L += ["", "  Prompt Variant Effects on ward_per_100 (Kruskal-Wallis + Post-Hoc):",
          f"    Kruskal-Wallis: H={lk['H']:.2f}, p={lk['p']:.4f}"]
    if lk["p"] < 0.05 and len(res.length_posthoc):
        L += ["", "    Pairwise Mann-Whitney U (Bonferroni-corrected):"]
        L += _posthoc_lines(res.length_posthoc, "      ")
    if len(res.posthoc) and len(res.length_posthoc):
        n_pairs = len(res.posthoc.merge(res.length_posthoc, on=["group_a", "group_b"]))
        L += ["", f"  Post-hoc divergence: {len(res.divergence)} of {n_pairs} pairs differ between raw and "
                  "length-adjusted analyses (sign flip or α'=0.05 significance flip)."]
        for r in res.divergence.itertuples(index=False):
            L.append(f"    {r.group_a} vs {r.group_b}: raw r={r.r_raw_metric:.3f} (p={r.p_raw_metric:.4f}), "
                     f"adj r={r.r_adj_metric:.3f} (p={r.p_adj_metric:.4f})")
    L += ["", "## Per-Dimension Departure Rates (Training-Data Trope Analysis)", ""]
    for r in res.departure_pooled.itertuples(index=False):
        L.append(f"  {r.dimension}: {r.departure_rate:.3f}")
    return "\n".join(L) + "\n"


def write_summary(res: MainResults, out_dir: str | Path) -> Path:
    path = Path(out_dir) / "summary.txt"
    path.write_text(summary_text(res), encoding="utf-8")
    return path


def write_main(res: MainResults, out_dir: str | Path) -> list[Path]:
    """Write the CSVs, summary.txt and the LaTeX tables of the main analysis."""
    from .latex import write_latex

    paths = write_csvs(res, out_dir)
    paths.append(write_summary(res, out_dir))
    paths += write_latex(res, out_dir)
    return paths
