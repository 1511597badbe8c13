"""Prompt-paraphrase sensitivity (spec section 8; paper Section 5 and Appendix F.1).

Per-model mean Ward scores under the baseline prompt and its five rewordings, the pairwise Spearman
rho / pair-n / MAD matrices, the 10,000-draw permutation null per ordered pair on one shared seed-0
stream, and the preregistered stability bars (rho >= 0.9, MAD <= 1.0 Ward points).

Beyond the paper (issue 4), two labelled sensitivity analyses are computed with the same
definitions: without the models whose paraphrase responses are truncated fragments (quality flag
``reasoning_budget_exhausted``: Gemini, whose shadow-config run lost its 4,000-token budget), and
with the baseline column restricted to ``sample_index < 10`` (equal N = 10 per cell).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

import alienbench_data as ab

from ._data import AblationInputs, generation_table, load_ablation_inputs
from ._exact import PermutationStream, buffered_mean, fresh_permutations, perm_spearman
from ._format import fmt_table, write_csv, write_text
from ._stats import spearman

__all__ = [
    "MAD_BAR",
    "N_PERM",
    "RHO_BAR",
    "PromptAblation",
    "prompt_ablation",
    "prompt_mad_matrix",
    "prompt_means",
    "prompt_n_matrix",
    "prompt_null",
    "prompt_rho_matrix",
    "prompt_rows",
    "prompt_stability",
    "sensitivity_runs",
    "truncated_paraphrase_models",
    "write_prompt_outputs",
]

RHO_BAR = 0.9
MAD_BAR = 1.0
N_PERM = 10_000
NULL_SEED = 0
TRUNCATION_FLAG = "reasoning_budget_exhausted"


def _variants() -> tuple[str, ...]:
    return tuple(ab.benchmark().paraphrase_ids)


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------
def prompt_rows(inputs: AblationInputs, *, baseline_max_index: int | None = None,
                exclude_models: Sequence[str] = ()) -> pd.DataFrame:
    """Score rows entering the paraphrase ablation (spec 1.3, 8).

    Parameters
    ----------
    inputs : AblationInputs
    baseline_max_index : int, optional
        Keep only baseline generations with ``sample_index < baseline_max_index`` (the reference
        keeps all 30: None). Paraphrase cells always hold sample_index < 10.
    exclude_models : sequence of str
        Models to drop from every column (sensitivity analyses).

    Returns
    -------
    DataFrame
        The main-study baseline rows flagged ``in_paraphrase_reference`` plus the paraphrase rows.
    """
    g = inputs.generations
    ref = g.loc[g["in_paraphrase_reference"].fillna(False).astype(bool)]
    if baseline_max_index is not None:
        ref = ref.loc[ref["sample_index"] < baseline_max_index]
    base = inputs.R.loc[inputs.R["generation_id"].isin(set(ref["generation_id"]))]
    rows = pd.concat([base, inputs.paraphrase], ignore_index=True)
    if exclude_models:
        rows = rows.loc[~rows["model"].isin(list(exclude_models))]
    return rows.reset_index(drop=True)


def truncated_paraphrase_models(inputs: AblationInputs, *, flag: str = TRUNCATION_FLAG) -> tuple[str, ...]:
    """Models with at least one paraphrase generation carrying ``flag`` (data audit: Gemini, all 50 rows)."""
    g = inputs.generations
    para = g.loc[g["condition"] != "baseline"]
    hit = para["quality_flags"].map(lambda f: f is not None and flag in list(f))
    return tuple(sorted(set(para.loc[hit, "model"])))


# --------------------------------------------------------------------------------------------
# matrices
# --------------------------------------------------------------------------------------------
def prompt_means(rows: pd.DataFrame, *, variants: Sequence[str] | None = None) -> pd.DataFrame:
    """Per-model mean Ward score per paraphrase, ``table_ablation_prompt.csv`` (spec 8 step 1).

    Judges are averaged per generation, then generations per (model, paraphrase) (Kahan-summed in
    generation_id order, as pandas' groupby mean). Rows: models alphabetical (index
    ``subject_model``); columns: paraphrase ids in config order (``prompt_variant``); NaN = no data.
    """
    variants = tuple(variants) if variants is not None else _variants()
    gt = generation_table(rows)
    per_gen = gt.ward_sums / gt.n_rows
    m = gt.group_means(per_gen, ("model", "condition"))
    wide = m.unstack("condition")
    wide = wide.reindex(columns=list(variants))
    wide = wide.loc[sorted(wide.index)]
    wide.index.name = "subject_model"
    wide.columns.name = "prompt_variant"
    return wide


def _pairs(means: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    x = means[a].to_numpy(dtype=np.float64)
    y = means[b].to_numpy(dtype=np.float64)
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def prompt_rho_matrix(means: pd.DataFrame) -> pd.DataFrame:
    """Pairwise Spearman rho of per-model means (spec 8 step 2): 1 on the diagonal, NaN if < 3 paired models.

    Off the diagonal, the unguarded rho (:func:`analysis.stats.spearman`) of column a against column b
    over the models present in both, alphabetical.
    """
    cols = list(means.columns)
    out = np.full((len(cols), len(cols)), np.nan)
    for i, a in enumerate(cols):
        for j, b in enumerate(cols):
            x, y = _pairs(means, a, b)
            if a == b:
                out[i, j] = 1.0
            elif x.size >= 3:
                out[i, j] = spearman(x, y)[0]
    return pd.DataFrame(out, index=cols, columns=cols)


def prompt_n_matrix(means: pd.DataFrame) -> pd.DataFrame:
    """Number of models with a mean under both paraphrases (spec 8 step 3), as float like the reference."""
    cols = list(means.columns)
    ok = means.notna().to_numpy(dtype=np.float64)
    return pd.DataFrame(ok.T @ ok, index=cols, columns=cols)


def prompt_mad_matrix(means: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute difference of per-model means over paired models (spec 8 step 4); 0 on the diagonal.

    MAD_ab = mean_m |mean_a(m) - mean_b(m)|; NaN if no model is paired. Symmetric.
    """
    cols = list(means.columns)
    out = np.full((len(cols), len(cols)), np.nan)
    for i, a in enumerate(cols):
        for j, b in enumerate(cols):
            x, y = _pairs(means, a, b)
            if a == b:
                out[i, j] = 0.0
            elif x.size:
                out[i, j] = float(np.mean(np.abs(x - y)))
    return pd.DataFrame(out, index=cols, columns=cols)


def prompt_null(means: pd.DataFrame, *, n_perm: int = N_PERM, seed: int = NULL_SEED,
                rho: pd.DataFrame | None = None, mad: pd.DataFrame | None = None,
                rho_bar: float = RHO_BAR, mad_bar: float = MAD_BAR) -> pd.DataFrame:
    """Permutation null of rho per ordered paraphrase pair, ``table_ablation_prompt_null.csv`` (spec 8 step 5).

    One generator ``default_rng(seed)`` is shared by the whole matrix: a runs over the paraphrases
    in config order (outer), b likewise (inner); the diagonal and pairs with < 3 paired models
    draw nothing. For every other pair, with x = column a and y = column b over the paired models
    (alphabetical), ``n_perm`` draws rho(x, permutation(y)) give

    * null_mean: their mean; null_lo95 / null_hi95: type-7 2.5 / 97.5 percentiles;
    * p_value: fraction of draws with |rho_perm| >= |rho_obs| (two-sided, inclusive).

    The draws are vectorised (:class:`._exact.PermutationStream`) and equal the sequential loop
    bit for bit. Bars: rho >= ``rho_bar``, MAD <= ``mad_bar`` and both (False on the diagonal).

    Returns
    -------
    DataFrame
        pair_a, pair_b, rho_obs, mad, null_mean, null_lo95, null_hi95, p_value, n_models,
        rho_above_stable_bar, mad_below_stable_bar, both_bars_pass (one row per ordered pair,
        diagonal included, a-major).
    """
    if n_perm < 1:
        raise ValueError(f"prompt_null: n_perm must be >= 1; got {n_perm}")
    rho = prompt_rho_matrix(means) if rho is None else rho
    mad = prompt_mad_matrix(means) if mad is None else mad
    n_mat = prompt_n_matrix(means)
    cols = list(means.columns)
    sizes = [_pairs(means, a, b)[0].size for a in cols for b in cols if a != b]
    sizes = [k for k in sizes if k >= 3]
    if len(set(sizes)) == 1:  # one length: the whole matrix is a prefix of the seed's stream (cached)
        batch = fresh_permutations(seed, n_perm * len(sizes), sizes[0])
        chunks = iter(batch[k:k + n_perm] for k in range(0, batch.shape[0], n_perm))
        draw = lambda count, n: next(chunks)  # noqa: E731
    else:
        draw = PermutationStream(seed).draw
    rows = []
    rho_np, mad_np, n_np = rho.to_numpy(), mad.to_numpy(), n_mat.to_numpy()
    for ia, a in enumerate(cols):
        for ib, b in enumerate(cols):
            x, y = _pairs(means, a, b)
            r_obs, m_ab = float(rho_np[ia, ib]), float(mad_np[ia, ib])
            null_mean = lo = hi = p = np.nan
            if a != b and x.size >= 3:
                perms = draw(n_perm, x.size)
                draws = perm_spearman(x, y, perms, permute="second")
                null_mean = buffered_mean(draws)
                lo, hi = (float(v) for v in np.percentile(draws, [2.5, 97.5]))
                p = float(np.mean(np.abs(draws) >= abs(r_obs)))
            off = a != b
            rows.append({
                "pair_a": a, "pair_b": b, "rho_obs": r_obs, "mad": m_ab, "null_mean": null_mean,
                "null_lo95": lo, "null_hi95": hi, "p_value": p, "n_models": float(n_np[ia, ib]),
                "rho_above_stable_bar": bool(off and r_obs >= rho_bar),
                "mad_below_stable_bar": bool(off and m_ab <= mad_bar),
            })
            rows[-1]["both_bars_pass"] = rows[-1]["rho_above_stable_bar"] and rows[-1]["mad_below_stable_bar"]
    return pd.DataFrame(rows)


def prompt_stability(null: pd.DataFrame, *, unit: Literal["ordered", "unordered"] = "ordered") -> pd.DataFrame:
    """Stability-bar and null-exceedance counts over the off-diagonal cells (spec 8 summary, 12.5).

    Parameters
    ----------
    null : DataFrame
        Output of :func:`prompt_null`.
    unit : {"ordered", "unordered"}
        ``"ordered"``: the 30 ordered cells, as the reference code counts (each unordered pair
        twice). ``"unordered"``: the 15 unordered pairs (a before b in config order), the paper's
        unit; rho and MAD are symmetric, so the bar counts are the ordered ones halved, and a pair
        "exceeds its null" when rho_obs > null_hi95 in both orders.

    Returns
    -------
    DataFrame
        One row per criterion: criterion, count, n (cells with a finite rho), unit.
    """
    if unit not in ("ordered", "unordered"):
        raise ValueError(f"prompt_stability: unit must be 'ordered' or 'unordered'; got {unit!r}")
    off = null.loc[(null["pair_a"] != null["pair_b"]) & null["rho_obs"].notna()]
    above = off["rho_obs"] > off["null_hi95"]
    if unit == "unordered":
        order = {v: i for i, v in enumerate(pd.unique(null["pair_a"]))}
        key = off.apply(lambda r: tuple(sorted((r["pair_a"], r["pair_b"]), key=order.get)), axis=1)
        grouped = off.assign(_key=key, _above=above).groupby("_key", sort=False)
        first = grouped.first()
        counts = {
            "rho_above_null_hi95": int(grouped["_above"].all().sum()),
            "rho_bar": int(first["rho_above_stable_bar"].sum()),
            "mad_bar": int(first["mad_below_stable_bar"].sum()),
            "both_bars": int(first["both_bars_pass"].sum()),
        }
        n = len(first)
    else:
        counts = {
            "rho_above_null_hi95": int(above.sum()),
            "rho_bar": int(off["rho_above_stable_bar"].sum()),
            "mad_bar": int(off["mad_below_stable_bar"].sum()),
            "both_bars": int(off["both_bars_pass"].sum()),
        }
        n = len(off)
    return pd.DataFrame([{"criterion": k, "count": v, "n": n, "unit": unit} for k, v in counts.items()])


# --------------------------------------------------------------------------------------------
# the whole ablation
# --------------------------------------------------------------------------------------------
@dataclass
class PromptAblation:
    """All tables of one run of the paraphrase ablation."""

    means: pd.DataFrame
    rho: pd.DataFrame
    n: pd.DataFrame
    mad: pd.DataFrame
    null: pd.DataFrame
    label: str = "reproduction"
    description: str = ""
    excluded_models: tuple[str, ...] = ()
    baseline_max_index: int | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def stability(self, unit: Literal["ordered", "unordered"] = "ordered") -> pd.DataFrame:
        return prompt_stability(self.null, unit=unit)


def prompt_ablation(source: object = None, *, baseline_max_index: int | None = None,
                    exclude_models: Sequence[str] = (), n_perm: int = N_PERM, seed: int = NULL_SEED,
                    label: str = "reproduction", description: str = "") -> PromptAblation:
    """Run the paraphrase ablation (spec 8) on a dataset folder or loaded inputs.

    The defaults reproduce the reference; ``baseline_max_index`` and ``exclude_models`` give the
    sensitivity analyses (see the module docstring).
    """
    inputs = load_ablation_inputs(source)
    rows = prompt_rows(inputs, baseline_max_index=baseline_max_index, exclude_models=exclude_models)
    means = prompt_means(rows)
    rho, n, mad = prompt_rho_matrix(means), prompt_n_matrix(means), prompt_mad_matrix(means)
    null = prompt_null(means, n_perm=n_perm, seed=seed, rho=rho, mad=mad)
    return PromptAblation(means=means, rho=rho, n=n, mad=mad, null=null, label=label, description=description,
                          excluded_models=tuple(exclude_models), baseline_max_index=baseline_max_index)


def sensitivity_runs(source: object = None, *, n_perm: int = N_PERM) -> dict[str, PromptAblation]:
    """The issue-4 sensitivity analyses, keyed by file suffix.

    * ``no_truncated``: without the models whose paraphrase rows carry ``reasoning_budget_exhausted``;
    * ``baseline_n10``: baseline column restricted to sample_index < 10;
    * ``no_truncated_baseline_n10``: both.
    """
    inputs = load_ablation_inputs(source)
    bad = truncated_paraphrase_models(inputs)
    names = ", ".join(bad) or "none"
    return {
        "no_truncated": prompt_ablation(
            inputs, exclude_models=bad, n_perm=n_perm, label="no_truncated",
            description=f"without {names} (paraphrase responses flagged {TRUNCATION_FLAG})"),
        "baseline_n10": prompt_ablation(
            inputs, baseline_max_index=10, n_perm=n_perm, label="baseline_n10",
            description="baseline column restricted to sample_index < 10 (N = 10 per cell, like the paraphrases)"),
        "no_truncated_baseline_n10": prompt_ablation(
            inputs, exclude_models=bad, baseline_max_index=10, n_perm=n_perm, label="no_truncated_baseline_n10",
            description=f"both: without {names} and baseline sample_index < 10"),
    }


# --------------------------------------------------------------------------------------------
# outputs
# --------------------------------------------------------------------------------------------
def _matrix(null: pd.DataFrame, col: str) -> pd.DataFrame:
    cols = list(pd.unique(null["pair_a"]))
    return null.pivot(index="pair_a", columns="pair_b", values=col).reindex(index=cols, columns=cols).rename_axis(
        index=None, columns=None)


def _off(null: pd.DataFrame, col: str) -> np.ndarray:
    v = null.loc[null["pair_a"] != null["pair_b"], col].to_numpy(dtype=np.float64)
    return v[~np.isnan(v)]


def _mmm(v: np.ndarray, digits: int) -> str:
    if v.size == 0:
        return "min=nan, median=nan, max=nan"
    return f"min={v.min():.{digits}f}, median={np.median(v):.{digits}f}, max={v.max():.{digits}f}"


def summary_text(res: PromptAblation) -> str:
    """``summary_ablation_prompt.txt`` body for one run (the reference's layout)."""
    null = res.null
    off_rho = _off(null, "rho_obs")
    off_mad = _off(null, "mad")
    off = null.loc[(null["pair_a"] != null["pair_b"]) & null["rho_obs"].notna()]
    n_off = len(off)
    st = prompt_stability(null, unit="ordered").set_index("criterion")["count"]
    lines = [
        "# Prompt Paraphrase Sensitivity", "",
        "## Per-model mean Ward scores by paraphrase", "",
        fmt_table(res.means, 3), "",
        "## Pairwise Spearman ρ (per-model means)", "",
        fmt_table(res.rho, 3), "",
        "## Pair n (models with means in both variants)", "",
        fmt_table(res.n, 3), "",
        f"Off-diagonal ρ: {_mmm(off_rho, 3)}", "",
        "## Pairwise mean absolute difference of per-model means", "",
        "ρ is invariant to uniform shifts in score, so a paraphrase that translates every per-model mean by a "
        "constant still reports ρ = 1. The MAD matrix captures the absolute-score shift that ρ ignores; values "
        "are in Ward points on the 0--10 scale.", "",
        fmt_table(res.mad, 3), "",
        f"Off-diagonal MAD: {_mmm(off_mad, 3)}", "",
        f"## Permutation null (B={_n_perm(res)}, seed={NULL_SEED})", "",
        "Null mean ρ (should be ≈ 0 under H0):", "",
        fmt_table(_matrix(null, "null_mean"), 3), "",
        "Null 95% upper bound:", "",
        fmt_table(_matrix(null, "null_hi95"), 3), "",
        "Two-sided p-value (fraction of draws with |ρ_perm| ≥ |ρ_obs|):", "",
        fmt_table(_matrix(null, "p_value"), 4), "",
        f"Off-diagonal null mean: {_mmm(_off(null, 'null_mean'), 3)}",
        f"Off-diagonal null 95% upper bound: {_mmm(_off(null, 'null_hi95'), 3)}",
        f"Pairs with ρ_obs > null 95% upper bound: {st['rho_above_null_hi95']}/{n_off}",
        f"Off-diagonal p-value: {_mmm(_off(null, 'p_value'), 4)}", "",
        f"## Preregistered stability bars (ρ ≥ {RHO_BAR:.2f}, MAD ≤ {MAD_BAR:.2f} Ward points)", "",
        f"Off-diagonal pairs clearing ρ bar only: {st['rho_bar']}/{n_off}",
        f"Off-diagonal pairs clearing MAD bar only: {st['mad_bar']}/{n_off}",
        f"Off-diagonal pairs clearing both bars jointly: {st['both_bars']}/{n_off}",
    ]
    return "\n".join(lines) + "\n"


def _n_perm(res: PromptAblation) -> int:
    return int(res.extra.get("n_perm", N_PERM))


def _counts_line(res: PromptAblation, unit: Literal["ordered", "unordered"]) -> str:
    st = res.stability(unit).set_index("criterion")
    n = int(st["n"].iloc[0]) if len(st) else 0
    c = st["count"]
    what = "ordered cells (the code's count)" if unit == "ordered" else "unordered pairs (the paper's count)"
    return (f"  {what}: ρ > null 95% upper bound {c['rho_above_null_hi95']}/{n}"
            f"{' (both orders)' if unit == 'unordered' else ''}; ρ ≥ {RHO_BAR:.2f} {c['rho_bar']}/{n}; "
            f"MAD ≤ {MAD_BAR:.2f} {c['mad_bar']}/{n}; both {c['both_bars']}/{n}")


def _run_digest(res: PromptAblation) -> list[str]:
    null = res.null
    off_rho, off_mad = _off(null, "rho_obs"), _off(null, "mad")
    return [
        f"  models: {len(res.means)}; off-diagonal ρ {_mmm(off_rho, 3)}; MAD {_mmm(off_mad, 3)}",
        _counts_line(res, "ordered"),
        _counts_line(res, "unordered"),
    ]


def sensitivity_text(main: PromptAblation, runs: dict[str, PromptAblation]) -> str:
    """The labelled "beyond the paper" section appended to the summary: what changes and why."""
    lines = [
        "", "## Beyond the paper: unordered-pair counts (the paper's unit)", "",
        "The counts above run over the 30 ordered cells, so each unordered pair counts twice. Over the 15 "
        "unordered pairs (ρ and MAD are symmetric; the null is per order):",
        _counts_line(main, "unordered"), "",
        "## Beyond the paper: sensitivity analyses (not part of the reproduction)", "",
        "Same definitions, seed and draw order as above, on altered inputs; tables in "
        "table_ablation_prompt_sensitivity_<label>*.csv.", "",
        "reproduction (as shipped):",
        *_run_digest(main),
    ]
    for key, res in runs.items():
        lines += ["", f"{key}: {res.description}", *_run_digest(res)]
    lines += ["", "How the conclusions change:", *_conclusions(main, runs)]
    return "\n".join(lines) + "\n"


def _conclusions(main: PromptAblation, runs: dict[str, PromptAblation]) -> list[str]:
    """Data-driven sentences: what each sensitivity run changes relative to the reproduction."""
    def c(res: PromptAblation) -> pd.Series:
        return res.stability("unordered").set_index("criterion")["count"]

    def med(res: PromptAblation, col: str) -> float:
        v = _off(res.null, col)
        return float(np.median(v)) if v.size else float("nan")

    def verb(a: float, b: float) -> str:
        return "rises" if b > a + 5e-4 else "falls" if b < a - 5e-4 else "is unchanged"

    n_main = int(main.stability("unordered")["n"].iloc[0])
    base = c(main)
    out = []
    for key, res in runs.items():
        cur = c(res)
        n = int(res.stability("unordered")["n"].iloc[0])
        out.append(
            f"- {key}: median ρ {verb(med(main, 'rho_obs'), med(res, 'rho_obs'))} ({med(main, 'rho_obs'):.3f} -> "
            f"{med(res, 'rho_obs'):.3f}), median MAD {verb(med(main, 'mad'), med(res, 'mad'))} "
            f"({med(main, 'mad'):.3f} -> {med(res, 'mad'):.3f}). Unordered pairs meeting ρ ≥ {RHO_BAR:.2f}: "
            f"{base['rho_bar']}/{n_main} -> {cur['rho_bar']}/{n}; MAD ≤ {MAD_BAR:.2f}: {base['mad_bar']}/{n_main} -> "
            f"{cur['mad_bar']}/{n}; both bars: {base['both_bars']}/{n_main} -> {cur['both_bars']}/{n}; ρ above the "
            f"null in both orders: {base['rho_above_null_hi95']}/{n_main} -> {cur['rho_above_null_hi95']}/{n}.")
        upper = res.rho.to_numpy()[np.triu_indices(len(res.rho), 1)]
        k_bar = int(np.sum(np.abs(upper - RHO_BAR) < 1e-12))
        if k_bar:
            out.append(f"  note: {k_bar} pair(s) have ρ exactly at the {RHO_BAR:.2f} bar (attainable with "
                       f"{len(res.means)} models) and count as meeting it.")
        for model in res.excluded_models:
            if model not in main.means.index:
                continue
            ranks = main.means.rank(ascending=True, method="min").loc[model]
            paras = [v for v in main.means.columns if v != "baseline"]
            last = [v for v in paras if ranks[v] == 1]
            scores = main.means.loc[model, paras]
            line = (f"  why: in the reproduction {model} (paraphrase means {scores.min():.2f}-{scores.max():.2f}, "
                    f"baseline {main.means.loc[model, 'baseline']:.2f}) ranks lowest under {len(last)} of "
                    f"{len(paras)} paraphrases but {int(ranks['baseline'])} of {len(main.means)} from the bottom "
                    "under the baseline")
            if paras and len(last) == len(paras):
                line += ("; its constant last place is agreement among the paraphrases that the model set "
                         "without it no longer has")
            out.append(line + ".")
    excluded = sorted({m for r in runs.values() for m in r.excluded_models})
    what = " or ".join(filter(None, [f"on {', '.join(excluded)}" if excluded else "",
                                     "on the unequal baseline N" if any(r.baseline_max_index for r in runs.values())
                                     else ""]))
    out.append("- Overall: in every run the rankings agree far more than chance (ρ above the permutation null for "
               "at least 80% of the unordered pairs), while at most a third of the pairs meet both preregistered "
               f"stability bars; the reproduction's reading does not depend {what}." if _robust(main, runs) else
               "- Overall: the stability verdict is not robust to these inputs; read the counts above.")
    return out


def _robust(main: PromptAblation, runs: dict[str, PromptAblation]) -> bool:
    """Does every run keep >= 80% of unordered pairs above the null and at most a third meeting both bars?"""
    for res in (main, *runs.values()):
        st = res.stability("unordered").set_index("criterion")
        n = int(st["n"].iloc[0])
        if n == 0 or st.loc["rho_above_null_hi95", "count"] < 0.8 * n or st.loc["both_bars", "count"] > n / 3:
            return False
    return True


_LATEX_NAMES = {"baseline": "Baseline"}


def _latex_name(v: str) -> str:
    if v in _LATEX_NAMES:
        return _LATEX_NAMES[v]
    if v.startswith("baseline_para_"):
        return "Paraphrase " + v.removeprefix("baseline_para_").upper()
    return v.replace("_", r"\_")


def latex_table(res: PromptAblation) -> str:
    """``tab_ablation_prompt.tex`` (spec 8 LaTeX), without the shipped file's hand-added ``\\resizebox``."""
    null = res.null
    cols = list(res.means.columns)
    hi = _matrix(null, "null_hi95")
    both = _matrix(null, "both_bars_pass")
    off_hi, off_mad = _off(null, "null_hi95"), _off(null, "mad")
    off = null.loc[(null["pair_a"] != null["pair_b"]) & null["rho_obs"].notna()]
    n_both = int(off["both_bars_pass"].sum())
    cap = (
        "Prompt paraphrase sensitivity. Top: per-model mean Ward Departure Score (0--10) under each surface "
        "rewording of the baseline prompt. Bottom: pairwise Spearman rank correlation $\\rho$ of per-model means "
        "across paraphrases. High off-diagonal $\\rho$ indicates that the paraphrase wording does not change the "
        "induced model ranking, but $\\rho$ is invariant to uniform shifts in score and does not characterize "
        "absolute-score stability. An empirical null built by permuting model labels "
        f"({_n_perm(res):,} draws) gives off-diagonal $95\\%$ upper bounds in "
        f"$[{off_hi.min():.2f},\\ {off_hi.max():.2f}]$; cells marked $^\\dagger$ exceed their null $95\\%$ upper "
        "bound. Pairwise mean absolute difference of per-model Ward means across paraphrases lies in "
        f"$[{off_mad.min():.2f},\\ {off_mad.max():.2f}]$ points (on the 0--10 Ward scale), indicating the "
        "absolute-score shift that $\\rho$ does not capture. Cells marked $^\\ddagger$ satisfy the preregistered "
        f"stability bars $\\rho \\geq {RHO_BAR:.2f}$ and $\\mathrm{{MAD}} \\leq {MAD_BAR:.2f}$ Ward points jointly; "
        f"{n_both}/{len(off)} off-diagonal pairs clear both bars."
    )
    head = " & ".join(_latex_name(c) for c in cols)
    lines = [
        "\\begin{table}[t]", "\\centering", f"\\caption{{{cap}}}", "\\label{tab:ablation_prompt}",
        "\\begin{tabular}{l" + "c" * len(cols) + "}", "\\toprule",
        f"Model & {head} \\\\", "\\midrule",
    ]
    for model, row in res.means.iterrows():
        cells = " & ".join("--" if pd.isna(v) else f"{v:.2f}" for v in row)
        lines.append(f"{model} & {cells} \\\\")
    lines += ["\\midrule", f"Paraphrase & {head} \\\\", "\\midrule"]
    for a in cols:
        cells = []
        for b in cols:
            r = res.rho.loc[a, b]
            if pd.isna(r):
                cells.append("--")
                continue
            s = f"{r:.2f}"
            if a != b and pd.notna(hi.loc[a, b]) and r > hi.loc[a, b]:
                s += "$^\\dagger$"
            if a != b and bool(both.loc[a, b]):
                s += "$^\\ddagger$"
            cells.append(s)
        lines.append(f"{_latex_name(a)} & {' & '.join(cells)} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _means_csv(means: pd.DataFrame) -> pd.DataFrame:
    out = means.copy()
    out.columns.name = None
    return out


def write_prompt_outputs(res: PromptAblation, out_dir: str | Path, *,
                         sensitivity: dict[str, PromptAblation] | None = None) -> dict[str, Path]:
    """Write the reference's prompt-ablation files (spec 11) and, if given, the labelled sensitivity files.

    Files: table_ablation_prompt.csv, _corr.csv, _corr_n.csv, _mad.csv, _null.csv,
    summary_ablation_prompt.txt, tab_ablation_prompt.tex; new (not in the reference):
    table_ablation_prompt_stability.csv (run, unit = ordered | unordered, criterion, count, n) for the
    reproduction and every sensitivity run; sensitivity runs write
    table_ablation_prompt_sensitivity_<label>{,_corr,_corr_n,_mad,_null}.csv and append their
    labelled section to the summary (after the reproduced text, which is left unchanged).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}

    def tables(r: PromptAblation, stem: str) -> None:
        paths[f"{stem}.csv"] = write_csv(_means_csv(r.means), out / f"{stem}.csv", index=True)
        paths[f"{stem}_corr.csv"] = write_csv(r.rho, out / f"{stem}_corr.csv", index=True)
        paths[f"{stem}_corr_n.csv"] = write_csv(r.n, out / f"{stem}_corr_n.csv", index=True)
        paths[f"{stem}_mad.csv"] = write_csv(r.mad, out / f"{stem}_mad.csv", index=True)
        paths[f"{stem}_null.csv"] = write_csv(r.null, out / f"{stem}_null.csv", index=False)

    tables(res, "table_ablation_prompt")
    runs = {"reproduction": res, **(sensitivity or {})}
    stab = pd.concat([r.stability(u).assign(run=k) for k, r in runs.items() for u in ("ordered", "unordered")],
                     ignore_index=True)[["run", "unit", "criterion", "count", "n"]]
    paths["table_ablation_prompt_stability.csv"] = write_csv(stab, out / "table_ablation_prompt_stability.csv",
                                                             index=False)
    text = summary_text(res)
    if sensitivity:
        for key, r in sensitivity.items():
            tables(r, f"table_ablation_prompt_sensitivity_{key}")
        text += sensitivity_text(res, sensitivity)
    paths["summary_ablation_prompt.txt"] = write_text(text, out / "summary_ablation_prompt.txt")
    paths["tab_ablation_prompt.tex"] = write_text(latex_table(res), out / "tab_ablation_prompt.tex")
    return paths
