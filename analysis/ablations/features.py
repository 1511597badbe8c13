"""Feature (dimension) sensitivity (spec section 9; paper Section 5 and Appendix F.2).

Leave-one-feature-out with a seed-0 permutation null per dimension, the exhaustive search over all
1,023 non-empty feature subsets by size k, the 1,000-draw null of the minimum k (one seed-1 stream
with the reference's early stop), and the exact-rank-preserving subsets.

Vectorisation: the reduced score of every subset is one matrix product of the per-generation
judge-summed labels (G x 10) with the 10 x 1,023 subset mask; per-model means follow the
reference's aggregation bit for bit (:mod:`._data`); rank correlations of all subsets and all null
draws are batched (:mod:`._exact`), with the reference's draw order and early stop.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._data import DIMENSIONS, AblationInputs, GenerationTable, generation_table, load_ablation_inputs
from ._exact import (
    PermutationStream,
    buffered_mean,
    fresh_permutations,
    kendall_rows,
    perm_kendall,
    perm_spearman,
    spearman_rows,
)
from ._format import fmt_table, write_csv, write_text
from ._stats import average_ranks

__all__ = [
    "RHO_THRESH",
    "TAU_THRESH",
    "FeatureAblation",
    "best_subset_indices",
    "feature_ablation",
    "full_means",
    "leave_one_out",
    "min_k_null",
    "min_k_summary",
    "rank_preserving_subsets",
    "subset_masks",
    "subset_means",
    "subset_search",
    "write_feature_outputs",
]

RHO_THRESH = 0.9
TAU_THRESH = 0.8
N_PERM_LOO = 10_000
LOO_SEED = 0
N_NULL_MIN_K = 1_000
MIN_K_SEED = 1
RANK_TOL = 1e-9


# --------------------------------------------------------------------------------------------
# reduced-score means
# --------------------------------------------------------------------------------------------
def subset_masks(n_dims: int = len(DIMENSIONS)) -> tuple[np.ndarray, np.ndarray]:
    """All non-empty subsets as a 0/1 mask, k = 1..n_dims, lexicographic within k (``itertools.combinations``).

    Returns
    -------
    masks : ndarray, shape (2**n_dims - 1, n_dims)
    sizes : ndarray, shape (2**n_dims - 1,)
    """
    rows, sizes = [], []
    for k in range(1, n_dims + 1):
        for comb in itertools.combinations(range(n_dims), k):
            m = np.zeros(n_dims)
            m[list(comb)] = 1.0
            rows.append(m)
            sizes.append(k)
    return np.array(rows).reshape(-1, n_dims), np.array(sizes, dtype=np.int64)


def subset_means(gt: GenerationTable, masks: np.ndarray) -> pd.DataFrame:
    """Per-model means P_S of the reduced score for every subset row of ``masks`` (spec 9).

    W_S = sum of the labels in S per judge row; averaged over judges per generation (exact integer
    sums / number of judge rows), then over generations per model in generation_id order with
    pandas' Kahan-compensated mean. Returns a (n_models x n_subsets) frame, models alphabetical.
    """
    per_gen = (gt.dim_sums @ np.asarray(masks, dtype=np.float64).T) / gt.n_rows[:, None]
    out = gt.group_means(per_gen, ("model",))
    out.index.name = "subject_model"
    return out


def full_means(gt: GenerationTable) -> pd.Series:
    """F = P_{all dimensions}, sorted by value descending (spec 9; the order the min-k null uses)."""
    f = subset_means(gt, np.ones((1, gt.dim_sums.shape[1])))[0]
    f.name = None
    return f.sort_values(ascending=False, kind="stable")


def _mad_rows(p: np.ndarray, f: np.ndarray) -> np.ndarray:
    """mean over models of |P_S - F| per row (NumPy's pairwise sum per row, like ``Series.mean``)."""
    return np.abs(p - f).mean(axis=-1)


def _ranks_equal(p: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rp, rf = average_ranks(p), average_ranks(f)
    return (rp != rf).sum(axis=-1), np.all(np.abs(rp - rf) <= RANK_TOL, axis=-1)


# --------------------------------------------------------------------------------------------
# 9.1 leave-one-out
# --------------------------------------------------------------------------------------------
def leave_one_out(gt: GenerationTable, *, n_perm: int = N_PERM_LOO, seed: int = LOO_SEED) -> pd.DataFrame:
    """Leave-one-feature-out table, ``table_ablation_dimensions_loo.csv`` (spec 9.1).

    For each dimension d (dimension order), S = all others:

    * departure_rate: pooled rate r_d (mean over generations of the judge-mean label);
    * spearman_rho: SP-guarded rho(P_S, F); mad_vs_full: mean_m |P_S - F|;
    * null_rho_*: a fresh ``default_rng(seed)`` per dimension, ``n_perm`` draws of rho(permuted
      P_S, F) over the models in alphabetical order (mean, type-7 2.5 and 97.5 percentiles); NaN
      with < 3 models or a constant side; rho_above_null_hi95 is rho > hi95 strictly;
    * rank_changes: models whose average rank differs exactly; rank_preserved: all within 1e-9.
    """
    n_dims = gt.dim_sums.shape[1]
    masks = 1.0 - np.eye(n_dims)
    p = subset_means(gt, masks)
    f = full_means(gt).reindex(p.index)
    fv = f.to_numpy()
    rates = gt.dim_sums / gt.n_rows[:, None]
    rows = []
    for d in range(n_dims):
        x = p[d].to_numpy()
        rho = float(spearman_rows(x, fv)) if x.size >= 3 and np.unique(x).size >= 2 and np.unique(fv).size >= 2 \
            else float("nan")
        lo = hi = mean = float("nan")
        if x.size >= 3 and np.ptp(x) > 0 and np.ptp(fv) > 0:
            perms = fresh_permutations(seed, n_perm, x.size)
            draws = perm_spearman(x, fv, perms, permute="first")
            draws = draws[~np.isnan(draws)]
            mean = buffered_mean(draws)
            lo, hi = (float(v) for v in np.percentile(draws, [2.5, 97.5]))
        changes, preserved = _ranks_equal(x, fv)
        rows.append({
            "dropped_dimension": DIMENSIONS[d],
            "departure_rate": float(np.mean(rates[:, d])),
            "spearman_rho": rho,
            "null_rho_mean": mean, "null_rho_lo95": lo, "null_rho_hi95": hi,
            "rho_above_null_hi95": bool(rho > hi),
            "mad_vs_full": float(_mad_rows(x, fv)),
            "rank_changes": int(changes), "rank_preserved": bool(preserved),
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# 9.2 exhaustive subset search
# --------------------------------------------------------------------------------------------
@dataclass
class SubsetSearch:
    """Per-subset statistics and the per-k table of the exhaustive search."""

    table: pd.DataFrame  # table_ablation_dimensions_minsubset.csv
    per_subset: pd.DataFrame  # k, subset, rho, tau, mad, rank_preserved (one row per subset, search order)
    best_rho_subset: dict[int, tuple[str, ...]]
    best_tau_subset: dict[int, tuple[str, ...]]
    min_k_rho: int
    min_k_tau: int


def subset_search(gt: GenerationTable) -> SubsetSearch:
    """Exhaustive search over the 1,023 non-empty subsets (spec 9.2).

    Per k: best_rho / best_tau (max non-NaN), min_mad (min over all), counts with rho >= 0.9 and
    tau >= 0.8, n_subsets = C(10, k). Example subsets (for the .tex): the first subset attaining the
    max tau; for rho, the reference's running rule — update when rho > best, or rho == best and
    MAD < the running minimum MAD over all subsets scanned so far at this k. Observed min-k: the
    smallest k with best_rho >= 0.9 (best_tau >= 0.8), -1 if none.
    """
    masks, sizes = subset_masks(gt.dim_sums.shape[1])
    p = subset_means(gt, masks)
    f = full_means(gt).reindex(p.index).to_numpy()
    P = p.to_numpy().T  # (n_subsets, n_models)
    n_models = P.shape[1]
    ok_f = n_models >= 3 and np.unique(f).size >= 2
    distinct = (np.diff(np.sort(P, axis=1), axis=1) != 0).any(axis=1)
    rho = np.where(distinct & ok_f, spearman_rows(P, f), np.nan) if n_models >= 3 else np.full(len(P), np.nan)
    tau = np.where((np.ptp(P, axis=1) > 0) & (np.ptp(f) > 0), kendall_rows(P, f), np.nan) if n_models >= 3 \
        else np.full(len(P), np.nan)
    mad = _mad_rows(P, f)
    _, preserved = _ranks_equal(P, f)
    names = [tuple(DIMENSIONS[i] for i in np.flatnonzero(m)) for m in masks]
    rows, best_rho_subset, best_tau_subset = [], {}, {}
    for k in range(1, masks.shape[1] + 1):
        sel = np.flatnonzero(sizes == k)
        r, t, m = rho[sel], tau[sel], mad[sel]
        i_rho, i_tau = best_subset_indices(r, t, m)
        b_rho = r[i_rho] if i_rho is not None else -np.inf
        b_tau = t[i_tau] if i_tau is not None else -np.inf
        if i_rho is not None:
            best_rho_subset[k] = names[sel[i_rho]]
        if i_tau is not None:
            best_tau_subset[k] = names[sel[i_tau]]
        rows.append({
            "k": k, "n_subsets": int(sel.size),
            "best_rho": float(b_rho) if np.isfinite(b_rho) else float("nan"),
            "best_tau": float(b_tau) if np.isfinite(b_tau) else float("nan"),
            "min_mad": float(np.min(m)),
            "n_rho_above_thresh": int(np.sum(r >= RHO_THRESH)),
            "n_tau_above_thresh": int(np.sum(t >= TAU_THRESH)),
        })
    table = pd.DataFrame(rows)
    hit_r = table.loc[table["best_rho"] >= RHO_THRESH, "k"]
    hit_t = table.loc[table["best_tau"] >= TAU_THRESH, "k"]
    per_subset = pd.DataFrame({"k": sizes, "subset": [",".join(s) for s in names], "rho": rho, "tau": tau,
                               "mad": mad, "rank_preserved": preserved})
    return SubsetSearch(table=table, per_subset=per_subset, best_rho_subset=best_rho_subset,
                        best_tau_subset=best_tau_subset, min_k_rho=int(hit_r.min()) if len(hit_r) else -1,
                        min_k_tau=int(hit_t.min()) if len(hit_t) else -1)


def best_subset_indices(rho: np.ndarray, tau: np.ndarray, mad: np.ndarray) -> tuple[int | None, int | None]:
    """Example subsets of one size k, with the reference's scan rule (spec 9.2, quirk 13.14).

    Scanning in order: the tau example is the first subset attaining the maximum tau (strict >
    updates); the rho example is updated when rho > best, or rho == best and its MAD is below the
    running minimum MAD over *all* subsets scanned so far (not only the best ones). NaN values never
    update. Returns positions (None if all NaN).
    """
    b_rho, b_tau, run_min = -np.inf, -np.inf, np.inf
    i_rho = i_tau = None
    for j in range(len(rho)):
        if not np.isnan(rho[j]) and (rho[j] > b_rho or (rho[j] == b_rho and mad[j] < run_min)):
            b_rho, i_rho = rho[j], j
        if not np.isnan(tau[j]) and tau[j] > b_tau:
            b_tau, i_tau = tau[j], j
        run_min = min(run_min, mad[j])
    return i_rho, i_tau


def rank_preserving_subsets(search: SubsetSearch) -> pd.DataFrame:
    """Subsets whose average ranks equal F's within 1e-9, at the smallest k that has any (spec 9.4).

    Columns: subset (comma-joined, dimension order), k. Empty when no k qualifies (the reference
    then writes no file).
    """
    ps = search.per_subset
    hit = ps.loc[ps["rank_preserved"]]
    if hit.empty:
        return pd.DataFrame({"subset": pd.Series(dtype=str), "k": pd.Series(dtype=np.int64)})
    k = int(hit["k"].min())
    return hit.loc[hit["k"] == k, ["subset", "k"]].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# 9.3 null distribution of min-k
# --------------------------------------------------------------------------------------------
def min_k_null(v: Sequence[float] | np.ndarray, *, n_draws: int = N_NULL_MIN_K, seed: int = MIN_K_SEED,
               n_dims: int = len(DIMENSIONS), rho_thresh: float = RHO_THRESH,
               tau_thresh: float = TAU_THRESH) -> pd.DataFrame:
    """Null distribution of the minimum subset size, ``table_ablation_dimensions_null_min_k.csv`` (spec 9.3).

    One generator ``default_rng(seed)`` for all draws. For each of ``n_draws`` outer draws and
    k = 1..n_dims, C(n_dims, k) inner draws permute ``v`` (the full means in descending order) and
    compute rho(v_perm, v) and tau(v_perm, v); min_k_rho (min_k_tau) is the first k whose maximum
    reaches the threshold, and the k loop stops as soon as both are found (so fewer permutations
    are consumed). Never reached: n_dims + 1.

    The permutations are drawn in vectorised chunks from :class:`._exact.PermutationStream` and
    the correlations batched; the early stop only decides how many of the (deterministic) stream's
    permutations each outer draw consumes, so the result equals the sequential loop exactly.
    """
    v = np.asarray(v, dtype=np.float64)
    n = v.size
    sizes = [math.comb(n_dims, k) for k in range(1, n_dims + 1)]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    per_draw = int(offsets[-1])
    stream = PermutationStream(seed)
    rho_buf = np.empty(0)
    tau_buf = np.empty(0)
    base = 0  # stream index of rho_buf[0]
    pos = 0  # stream index of the next permutation to consume
    chunk = max(16_384, per_draw)
    out_r = np.empty(n_draws, dtype=np.int64)
    out_t = np.empty(n_draws, dtype=np.int64)
    never = n_dims + 1
    for b in range(n_draws):
        if pos + per_draw > base + rho_buf.size:
            keep = pos - base
            perms = stream.draw(chunk, n)
            r = perm_spearman(v, v, perms, permute="first")
            t = perm_kendall(v, v, perms, permute="first")
            rho_buf = np.concatenate([rho_buf[keep:], r])
            tau_buf = np.concatenate([tau_buf[keep:], t])
            base = pos
        lo = pos - base
        win_r = rho_buf[lo:lo + per_draw]
        win_t = tau_buf[lo:lo + per_draw]
        # NaN draws (a constant permutation) are skipped by the reference: fmax ignores them
        max_r = np.fmax.reduceat(win_r, offsets[:-1])
        max_t = np.fmax.reduceat(win_t, offsets[:-1])
        hit_r = np.flatnonzero(max_r >= rho_thresh)
        hit_t = np.flatnonzero(max_t >= tau_thresh)
        kr = int(hit_r[0]) + 1 if hit_r.size else never
        kt = int(hit_t[0]) + 1 if hit_t.size else never
        stop = max(kr, kt) if kr != never and kt != never else n_dims
        out_r[b], out_t[b] = kr, kt
        pos += int(offsets[stop])
    return pd.DataFrame({"min_k_rho_null": out_r, "min_k_tau_null": out_t})


def min_k_summary(null: pd.DataFrame, observed_rho: int, observed_tau: int) -> pd.DataFrame:
    """5th percentile, median (type 7) and p = P(null min-k <= observed) per criterion (spec 9.3).

    p is NaN when the observed min-k is not positive (never reached).
    """
    rows = []
    for crit, col, obs in (("rho", "min_k_rho_null", observed_rho), ("tau", "min_k_tau_null", observed_tau)):
        x = null[col].to_numpy(dtype=np.float64)
        rows.append({"criterion": crit, "observed_min_k": obs, "null_p5": float(np.percentile(x, 5)),
                     "null_median": float(np.median(x)),
                     "p_value": float(np.mean(x <= obs)) if obs > 0 else float("nan"), "n_draws": x.size})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# the whole ablation
# --------------------------------------------------------------------------------------------
@dataclass
class FeatureAblation:
    """All tables of the feature ablation."""

    full: pd.Series
    loo: pd.DataFrame
    search: SubsetSearch
    null_min_k: pd.DataFrame
    null_summary: pd.DataFrame
    rank_preserving: pd.DataFrame


def feature_ablation(source: object = None, *, n_perm: int = N_PERM_LOO, n_null: int = N_NULL_MIN_K) -> FeatureAblation:
    """Run the feature ablation (spec 9) on a dataset folder, ``analysis.data.Inputs`` or score rows."""
    if isinstance(source, pd.DataFrame):
        gt = generation_table(source)
    else:
        inputs: AblationInputs = load_ablation_inputs(source)
        gt = generation_table(inputs.R)
    full = full_means(gt)
    full.index.name = "subject_model"
    loo = leave_one_out(gt, n_perm=n_perm)
    search = subset_search(gt)
    null = min_k_null(full.to_numpy(), n_draws=n_null, n_dims=gt.dim_sums.shape[1])
    summary = min_k_summary(null, search.min_k_rho, search.min_k_tau)
    return FeatureAblation(full=full, loo=loo, search=search, null_min_k=null, null_summary=summary,
                           rank_preserving=rank_preserving_subsets(search))


def summary_text(res: FeatureAblation) -> str:
    """``summary_ablation_dimensions.txt`` (the reference's layout)."""
    loo = res.loo.sort_values("departure_rate", ascending=False, kind="stable")
    s = res.null_summary.set_index("criterion")
    n_dims = int(res.search.table["k"].max())

    def null_line(c: str, sym: str) -> str:
        p = s.loc[c, "p_value"]
        return (f"Null min-k ({sym}): 5th percentile = {s.loc[c, 'null_p5']:.1f}, median = "
                f"{s.loc[c, 'null_median']:.1f}; p(null min-k ≤ observed) = {p:.3f}")

    lines = [
        "# Dimension Sensitivity", "",
        "## Full-score per-model means", "",
        fmt_table(res.full, 3), "",
        "## Leave-one-out (sorted by departure rate)", "",
        fmt_table(loo, 3, index=False), "",
        "LOO note: raw ρ is inflated because the reduced score is a strict subset of the full score. The meaningful "
        "comparison is whether ρ exceeds the permutation null 95% upper bound (column ``null_rho_hi95``); MAD reports "
        "the absolute-score loss on the 0--10 Ward scale, which ρ is invariant to.", "",
        f"## Subset-size summary (preregistered thresholds: ρ ≥ {RHO_THRESH}, τ ≥ {TAU_THRESH})", "",
        fmt_table(res.search.table, 3, index=False), "",
        f"Observed min-k (best ρ ≥ {RHO_THRESH}): {res.search.min_k_rho}",
        f"Observed min-k (best τ ≥ {TAU_THRESH}): {res.search.min_k_tau}", "",
        f"## Permutation null on min-k (B={len(res.null_min_k)}, seed={MIN_K_SEED})", "",
        "Under H0 (reduced rankings independent of full), min-k is inflated by the multiple-comparisons burden of "
        f"C({n_dims}, k) subsets per size.",
        null_line("rho", "ρ"),
        null_line("tau", "τ"),
    ]
    return "\n".join(lines) + "\n"


def _tex_dim(name: str) -> str:
    return name.replace("_", " ")


def latex_table(res: FeatureAblation) -> str:
    """``tab_ablation_dimensions.tex`` (spec 9.5)."""
    loo = res.loo.sort_values("departure_rate", ascending=False, kind="stable")
    s = res.null_summary.set_index("criterion")
    cap = (
        "Dimension sensitivity. Top: leave-one-out per-dimension effect on rank and score. ``Departure rate'' is "
        "the per-dimension share of generations coded as departing from the Earth-typical default; $\\rho$ is the "
        "Spearman rank correlation between the nine-dimension per-model mean and the full ten-dimension per-model "
        "mean. Because the reduced score is a strict subset of the full score, raw $\\rho$ is inflated; "
        "``$\\rho$ null $95\\%$ hi'' is the upper bound of a permutation null on the reduced score, and cells "
        "marked $^\\dagger$ exceed it. MAD is the mean absolute difference between reduced and full per-model means "
        "(Ward points), capturing absolute-score loss that $\\rho$ is invariant to. Bottom: continuous "
        "subset-search summary over all $\\binom{10}{k}$ subsets. ``Best $\\rho$'' / ``Best $\\tau$'' are the "
        "maxima across size-$k$ subsets; ``Min MAD'' is the minimum absolute-score loss at size $k$. The continuous "
        "thresholds $\\rho \\geq 0.9$ and $\\tau \\geq 0.8$ are preregistered."
    )
    lines = [
        "\\begin{table}[t]", "\\centering", f"\\caption{{{cap}}}", "\\label{tab:ablation_dimensions}",
        "\\begin{tabular}{lcccc}", "\\toprule",
        "Dropped dim & Departure rate & $\\rho$ vs full & $\\rho$ null $95\\%$ hi & MAD \\\\", "\\midrule",
    ]
    for _, r in loo.iterrows():
        mark = "$^\\dagger$" if r["rho_above_null_hi95"] else ""
        lines.append(f"{_tex_dim(r['dropped_dimension'])} & {r['departure_rate']:.2f} & {r['spearman_rho']:.2f}{mark}"
                     f" & {r['null_rho_hi95']:.2f} & {r['mad_vs_full']:.2f} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "", "\\vspace{0.5em}", "", "\\begin{tabular}{ccccc}", "\\toprule",
              "$k$ & \\#subsets & Best $\\rho$ & Best $\\tau$ & Min MAD \\\\", "\\midrule"]
    for _, r in res.search.table.iterrows():
        lines.append(f"{int(r['k'])} & {int(r['n_subsets'])} & {r['best_rho']:.2f} & {r['best_tau']:.2f} & "
                     f"{r['min_mad']:.2f} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", ""]

    def foot(crit: str, sym: str, thresh: float, k_obs: int, best: dict[int, tuple[str, ...]]) -> str:
        ex = best.get(k_obs)
        example = f" (example subset: \\{{{', '.join(_tex_dim(d) for d in ex)}\\}})" if ex else ""
        return (f"${sym} \\geq {thresh}$: observed min $k={k_obs}$ null 5th percentile "
                f"$k={s.loc[crit, 'null_p5']:.1f}${example}.")

    lines.append("\\vspace{0.3em} \\small "
                 + foot("rho", "\\rho", RHO_THRESH, res.search.min_k_rho, res.search.best_rho_subset) + " "
                 + foot("tau", "\\tau", TAU_THRESH, res.search.min_k_tau, res.search.best_tau_subset))
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def write_feature_outputs(res: FeatureAblation, out_dir: str | Path) -> dict[str, Path]:
    """Write the reference's feature-ablation files (spec 11)."""
    out = Path(out_dir)
    paths = {
        "table_ablation_dimensions_loo.csv": write_csv(res.loo, out / "table_ablation_dimensions_loo.csv", index=False),
        "table_ablation_dimensions_minsubset.csv": write_csv(
            res.search.table, out / "table_ablation_dimensions_minsubset.csv", index=False),
        "table_ablation_dimensions_null_min_k.csv": write_csv(
            res.null_min_k, out / "table_ablation_dimensions_null_min_k.csv", index=False),
    }
    if not res.rank_preserving.empty:
        paths["table_ablation_dimensions_rank_preserving.csv"] = write_csv(
            res.rank_preserving, out / "table_ablation_dimensions_rank_preserving.csv", index=False)
    paths["summary_ablation_dimensions.txt"] = write_text(summary_text(res), out / "summary_ablation_dimensions.txt")
    paths["tab_ablation_dimensions.tex"] = write_text(latex_table(res), out / "tab_ablation_dimensions.tex")
    return paths
