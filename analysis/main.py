"""The main analysis (spec section 4, 4.1-4.9) and the human baseline (7.1), as tidy DataFrames.

Each public function computes one block of the authors' ``analyze`` stage from tidy inputs (the
per-generation table A1, the score rows R, the token table), so any block can be recomputed on a
subset in a few lines::

    from analysis.data import load_inputs
    from analysis import main, stats
    inp = load_inputs("alienbench")
    keep = inp.generations.loc[~inp.generations["likely_truncated"], "generation_id"]
    a1 = inp.A1.loc[inp.A1["generation_id"].isin(keep)]
    main.model_scores(a1)                      # per-model mean and bootstrap CI without truncated responses
    main.model_scores(stats.per_generation(inp.R.loc[inp.R["judge"] == "openai/gpt-5.4"]))  # one judge

:func:`run_main` runs every block in the authors' order and returns a :class:`MainResults`.
Column names: the authors' names (``subject_model``, ``prompt_variant``, ``judge_model`` ...) in the
frames that reproduce one of their CSVs; ``model``, ``condition``, ``estimate``, ``ci_low``,
``ci_high``, ``n`` in the new tables.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

import alienbench_data as ab

from . import stats as S
from .data import DIM_COLUMNS, DIMENSIONS, Inputs, model_order

__all__ = [
    "POSTHOC_COLUMNS",
    "MainResults",
    "cell_scores",
    "condition_effects",
    "departure_rates",
    "divergence",
    "extraction_status",
    "human_baseline",
    "human_vs_models",
    "kruskal_by_condition",
    "length_adjusted",
    "length_adjusted_per_model",
    "model_scores",
    "posthoc",
    "power_simulation",
    "reliability",
    "run_main",
    "self_judge_rule",
    "token_covariate",
    "token_covariate_stats",
]

POSTHOC_COLUMNS = ("group_a", "group_b", "U", "p_raw", "p_corrected", "rank_biserial_r", "r_ci_lo", "r_ci_hi",
                   "n_a", "n_b")
RELIABILITY_MEASURES: tuple[tuple[str, str, S.Level], ...] = (
    ("Ward Total (0–10)", "ward_score", "interval"),
    *((f"Ward: {d}", f"dim_{d}", "nominal") for d in DIMENSIONS),
)
HUMAN_MODEL = "human/prolific-baseline"


def _need(fn: str, frame: pd.DataFrame, cols: Iterable[str]) -> None:
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise KeyError(f"{fn}: input lacks column(s) {missing}; available: {list(frame.columns)}. "
                       "Pass the per-generation table from analysis.stats.per_generation (A1) or the score rows R.")


def _by_generation_id(frame: pd.DataFrame) -> pd.DataFrame:
    order = np.argsort(frame["generation_id"].to_numpy(dtype=object), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# 4.1 and 5.1: per-model and per-cell scores
# --------------------------------------------------------------------------------------------
def model_scores(a1: pd.DataFrame, *, value: str = "ward_score", n_boot: int = S.N_BOOT,
                 seed: int = S.BOOT_SEED, level: float = 0.95) -> pd.DataFrame:
    """Per-model mean of the per-generation values with its BOOT-MEAN CI (spec 4.1, A2).

    Parameters
    ----------
    a1 : DataFrame
        Per-generation table (``generation_id``, ``model``, ``value``).
    value : str
        Column to average (``ward_score``; ``ward_per_100`` in 4.7).

    Returns
    -------
    DataFrame
        ``model`` (alphabetical), ``n`` (generations), ``estimate``, ``ci_low``, ``ci_high``;
        each model's values are resampled in generation_id order with a fresh seed.
    """
    _need("model_scores", a1, ("generation_id", "model", value))
    a1 = _by_generation_id(a1)
    rows = []
    for m in sorted(a1["model"].unique()):
        x = a1.loc[a1["model"] == m, value].to_numpy(dtype=np.float64)
        est, lo, hi = S.boot_mean_ci(x, n_boot=n_boot, seed=seed, level=level)
        rows.append({"model": m, "n": int(np.count_nonzero(~np.isnan(x))), "estimate": est, "ci_low": lo,
                     "ci_high": hi})
    return pd.DataFrame(rows, columns=["model", "n", "estimate", "ci_low", "ci_high"])


def cell_scores(a1: pd.DataFrame, *, value: str = "ward_score") -> pd.DataFrame:
    """Per (model, condition) mean and sample SD (n-1) of the per-generation values (spec A3, 5.1).

    Returns ``model``, ``condition`` (config orders), ``n``, ``mean``, ``sd`` (NaN when n < 2).
    """
    _need("cell_scores", a1, ("model", "condition", value))
    g = a1.groupby(["model", "condition"], sort=False)[value]
    out = pd.DataFrame({"n": g.count(), "mean": g.mean(), "sd": g.std(ddof=1)}).reset_index()
    mo = {m: i for i, m in enumerate(model_order(a1["model"]))}
    co = {c: i for i, c in enumerate(ab.benchmark().condition_ids)}
    out = out.assign(_m=out["model"].map(mo), _c=out["condition"].map(lambda c: co.get(c, len(co))))
    out = out.sort_values(["_m", "_c", "condition"], kind="stable").drop(columns=["_m", "_c"])
    return out.reset_index(drop=True)[["model", "condition", "n", "mean", "sd"]]


# --------------------------------------------------------------------------------------------
# 4.2 and 4.9: reliability
# --------------------------------------------------------------------------------------------
def reliability(r: pd.DataFrame, *, rater: str = "judge", subject: str = "model") -> pd.DataFrame:
    """KALPHA-STRAT of the Ward total (interval) and of each dimension (nominal) (spec 4.2, 4.9).

    Returns
    -------
    DataFrame
        One row per measure (Ward total, then dimensions in dimension order): ``measure`` (the
        authors' label), ``column``, ``level``, ``alpha_all``, ``alpha_cross``, ``alpha_same``,
        ``delta_self``, ``n_all``, ``n_cross``, ``n_same`` (score-row counts). Empty when R has
        fewer than 2 judges (the authors write no table then).
    """
    _need("reliability", r, ("generation_id", rater, subject, "ward_score", *DIM_COLUMNS))
    cols = ["measure", "column", "level", "alpha_all", "alpha_cross", "alpha_same", "delta_self", "n_all",
            "n_cross", "n_same"]
    if r[rater].nunique() < 2:
        return pd.DataFrame(columns=cols)
    rows = []
    for label, col, level in RELIABILITY_MEASURES:
        k = S.kalpha_stratified(r, col, level, subject=subject, rater=rater)
        rows.append({"measure": label, "column": col, "level": level, "alpha_all": k["all"],
                     "alpha_cross": k["cross_model"], "alpha_same": k["same_model"],
                     "delta_self": k["mean_delta_self"], "n_all": k["n_all"], "n_cross": k["n_cross"],
                     "n_same": k["n_same"]})
    return pd.DataFrame(rows, columns=cols)


def self_judge_rule(alpha_same: float, alpha_cross: float, delta_self: float) -> bool:
    """Self-judge exclusion rule (spec 4.2): (same - cross) > 0.10 when both defined, or delta_self > 0.5.

    Informational only: nothing is excluded anywhere.
    """
    by_alpha = not (math.isnan(alpha_same) or math.isnan(alpha_cross)) and (alpha_same - alpha_cross) > 0.10
    by_delta = not math.isnan(delta_self) and delta_self > 0.5
    return bool(by_alpha or by_delta)


# --------------------------------------------------------------------------------------------
# 4.3: Kruskal-Wallis and post-hoc
# --------------------------------------------------------------------------------------------
def _condition_groups(a1: pd.DataFrame, value: str) -> dict[str, np.ndarray]:
    a1 = _by_generation_id(a1)
    groups = {}
    for c in sorted(a1["condition"].unique()):
        x = a1.loc[a1["condition"] == c, value].to_numpy(dtype=np.float64)
        groups[c] = x[~np.isnan(x)]
    return groups


def kruskal_by_condition(a1: pd.DataFrame, *, value: str = "ward_score") -> pd.DataFrame:
    """Kruskal-Wallis across the conditions of the per-generation values (spec 4.3 step 3).

    Returns one row: ``metric``, ``H``, ``p``, ``k`` (groups), ``n`` (values).
    """
    _need("kruskal_by_condition", a1, ("generation_id", "condition", value))
    groups = _condition_groups(a1, value)
    h, p = S.kruskal_wallis(list(groups.values()))
    return pd.DataFrame([{"metric": value, "H": h, "p": p, "k": len(groups),
                          "n": int(sum(g.size for g in groups.values()))}])


def posthoc(a1: pd.DataFrame, *, value: str = "ward_score", n_boot: int = S.N_BOOT,
            seed: int = S.BOOT_SEED) -> pd.DataFrame:
    """All pairwise MWU tests between conditions with Bonferroni and rank-biserial CIs (spec 4.3 step 4).

    Pairs are the combinations of the alphabetical condition list (group_a sorts first); p_corrected
    = min(m * p_raw, 1) with m = number of pairs; r > 0 means group_b is higher. Columns are the
    authors' (``table_posthoc.csv``).
    """
    _need("posthoc", a1, ("generation_id", "condition", value))
    groups = _condition_groups(a1, value)
    pairs = list(itertools.combinations(groups, 2))
    rows = []
    for ga, gb in pairs:
        xa, xb = groups[ga], groups[gb]
        u, p = S.mann_whitney(xa, xb)
        r, lo, hi = S.rank_biserial_ci(xa, xb, n_boot=n_boot, seed=seed)
        rows.append({"group_a": ga, "group_b": gb, "U": u, "p_raw": p, "p_corrected": min(p * len(pairs), 1.0),
                     "rank_biserial_r": r, "r_ci_lo": lo, "r_ci_hi": hi, "n_a": xa.size, "n_b": xb.size})
    return pd.DataFrame(rows, columns=list(POSTHOC_COLUMNS))


def condition_effects(a1: pd.DataFrame, *, value: str = "ward_score", n_boot: int = S.N_BOOT,
                      seed: int = S.BOOT_SEED, alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
    """KW, then the post-hoc table only if KW p < ``alpha`` (spec 4.3); the post-hoc frame is empty otherwise."""
    kw = kruskal_by_condition(a1, value=value)
    if not kw["p"].iloc[0] < alpha:
        return kw, pd.DataFrame(columns=list(POSTHOC_COLUMNS))
    return kw, posthoc(a1, value=value, n_boot=n_boot, seed=seed)


# --------------------------------------------------------------------------------------------
# 4.4: power simulation
# --------------------------------------------------------------------------------------------
def _draw_simulation(rng: np.random.Generator, r: float, n: int, n_sims: int) -> tuple[np.ndarray, np.ndarray]:
    """The n_sims x (normal(0, 1, n), normal(mu, 1, n)) draws of one effect, in stream order."""
    mu = r * math.sqrt(math.pi)
    # one call consumes the stream exactly like the per-simulation calls (ziggurat draws concatenate)
    z = rng.standard_normal((n_sims, 2 * n))
    return z[:, :n], mu + z[:, n:]  # normal(mu, 1) = mu + 1.0 * standard_normal, exactly


def _hits(a: np.ndarray, b: np.ndarray, alpha_c: float) -> int:
    _, p = S.mann_whitney_batched(a, b)
    return int(np.count_nonzero(p < alpha_c))


def power_simulation(effects: Sequence[float], *, n_per_group: int, n_comparisons: int, n_sims: int = 2000,
                     alpha: float = 0.05, seed: int = S.BOOT_SEED, grid: Sequence[float] | None = None,
                     workers: int | None = None) -> tuple[pd.DataFrame, float]:
    """Monte-Carlo power of a two-sided MWU at the Bonferroni level, and the minimum detectable |r| (spec 4.4).

    For an effect r the samples are N(0,1) and N(r*sqrt(pi), 1), ``n_per_group`` each; a hit is
    p < alpha / n_comparisons (strict); power = hits / n_sims. One ``default_rng(seed)`` stream
    serves the observed effects (in order) and then the grid (default ``linspace(0.05, 0.95, 19)``).
    The draws are made in stream order on the calling thread; the batched MWU tests of the 2000
    simulations of an effect run on ``workers`` threads (default ``min(2, cpu_count)``), which
    changes no number.

    Returns
    -------
    (DataFrame, float)
        Rows ``kind`` ("observed" | "grid"), ``effect``, ``power``; observed effects are keyed by
        value as in the reference (a repeated |r| keeps its first position and the later power).
        The float is the first grid effect with power >= 0.80 (NaN if none: "not reached in grid").
    """
    if n_per_group < 1 or n_comparisons < 1 or n_sims < 1:
        raise ValueError(f"power_simulation: n_per_group, n_comparisons and n_sims must be >= 1; got "
                         f"{n_per_group}, {n_comparisons}, {n_sims}")
    alpha_c = alpha / n_comparisons
    grid_vals = np.linspace(0.05, 0.95, 19) if grid is None else np.asarray(grid, dtype=np.float64)
    plan = [("observed", float(r)) for r in effects] + [("grid", float(g)) for g in grid_vals]
    rng = np.random.default_rng(seed)
    n_workers = workers or min(2, os.cpu_count() or 1)
    hits: list[int] = []
    pending: deque[Future[int]] = deque()
    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        for _, r in plan:
            if len(pending) > n_workers:  # bound the draws held in memory (~10 MB each)
                hits.append(pending.popleft().result())
            pending.append(pool.submit(_hits, *_draw_simulation(rng, r, n_per_group, n_sims), alpha_c))
        hits.extend(f.result() for f in pending)
    powers = [h / n_sims for h in hits]
    observed: dict[float, float] = {}
    for (kind, r), pw in zip(plan, powers, strict=True):
        if kind == "observed":
            observed[r] = pw
    grid_power = powers[len(plan) - len(grid_vals):]
    rows = [{"kind": "observed", "effect": e, "power": p} for e, p in observed.items()]
    rows += [{"kind": "grid", "effect": float(g), "power": p} for g, p in zip(grid_vals, grid_power, strict=True)]
    mde = next((float(g) for g, p in zip(grid_vals, grid_power, strict=True) if p >= 0.80), float("nan"))
    out = pd.DataFrame(rows, columns=["kind", "effect", "power"])
    out.attrs.update(n_per_group=n_per_group, n_comparisons=n_comparisons, alpha_corrected=alpha_c,
                     n_sims=n_sims, seed=seed)
    return out, mde


# --------------------------------------------------------------------------------------------
# 4.5: extraction status
# --------------------------------------------------------------------------------------------
def extraction_status(r: pd.DataFrame, generations: pd.DataFrame, *, judges: Sequence[str] | None = None,
                      samples_per_condition: int = 30) -> pd.DataFrame:
    """Per (judge, model, condition): success / parse_error / api_error counts and rates (spec 4.5).

    The dataset holds successful extractions only, so a (generation, judge) with a score row is a
    success, one without is an api_error (which also covers 3 failed parse attempts), and
    parse_error is always 0. Generations are those with sample_index < ``samples_per_condition``.
    Columns are the authors' (``table_extraction_status.csv``), sorted by the three keys.
    """
    _need("extraction_status", r, ("generation_id", "judge"))
    _need("extraction_status", generations, ("generation_id", "model", "condition", "sample_index"))
    gens = generations.loc[generations["sample_index"].fillna(0) < samples_per_condition,
                           ["generation_id", "model", "condition"]]
    judges = sorted(set(judges) if judges is not None else set(ab.judge_config().judge_aliases) | set(r["judge"]))
    present = set(zip(r["judge"], r["generation_id"], strict=True))
    rows = []
    for j in judges:
        ok = np.fromiter(((j, g) in present for g in gens["generation_id"]), dtype=bool, count=len(gens))
        part = gens.assign(judge_model=j, success=ok.astype(np.int64))
        agg = part.groupby(["judge_model", "model", "condition"], sort=False)["success"].agg(["sum", "size"])
        rows.append(agg.reset_index())
    out = pd.concat(rows, ignore_index=True).rename(columns={"model": "subject_model", "condition": "prompt_variant",
                                                             "sum": "success", "size": "n_generations"})
    out["parse_error"] = 0
    out["api_error"] = out["n_generations"] - out["success"]
    n = out["n_generations"].astype(np.float64).where(out["n_generations"] > 0)
    out["success_rate"] = out["success"] / n
    out["parse_error_rate"] = out["parse_error"] / n
    out["api_error_rate"] = out["api_error"] / n
    keys = ["judge_model", "subject_model", "prompt_variant"]
    order = sorted(range(len(out)), key=lambda i: tuple(out.loc[i, k] for k in keys))
    out = out.iloc[order].reset_index(drop=True)
    return out[[*keys, "success", "parse_error", "api_error", "n_generations", "success_rate", "parse_error_rate",
                "api_error_rate"]]


# --------------------------------------------------------------------------------------------
# 4.6 - 4.7: tokens and length adjustment
# --------------------------------------------------------------------------------------------
def token_covariate(a1: pd.DataFrame, tokens: pd.DataFrame) -> pd.DataFrame:
    """Inner join of the per-generation Ward mean with the completion tokens (spec 4.6 step 1).

    Returns the authors' ``table_token_covariate.csv`` frame in generation_id order: generation_id,
    subject_model, prompt_variant, completion_tokens, ward_score (judge mean).
    """
    _need("token_covariate", a1, ("generation_id", "model", "condition", "ward_score"))
    _need("token_covariate", tokens, ("generation_id", "model", "condition", "completion_tokens"))
    j = a1[["generation_id", "model", "condition", "ward_score"]].merge(
        tokens[["generation_id", "model", "condition", "completion_tokens"]],
        on=["generation_id", "model", "condition"], how="inner")
    j = _by_generation_id(j).rename(columns={"model": "subject_model", "condition": "prompt_variant"})
    j["completion_tokens"] = j["completion_tokens"].astype(np.int64)
    return j[["generation_id", "subject_model", "prompt_variant", "completion_tokens", "ward_score"]]


def token_covariate_stats(joined: pd.DataFrame, *, n_boot: int = 5_000, seed: int = S.BOOT_SEED,
                          flag_margin: float = 0.15) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Spearman rho(completion_tokens, Ward) overall and per condition, bootstrap CIs and the flag (spec 4.6).

    Returns
    -------
    (overall, per_condition) : DataFrame, DataFrame
        ``overall``: one row ``n``, ``rho``, ``rho_ci_lo``, ``rho_ci_hi``, ``p``, ``median_rho``,
        ``threshold``. ``per_condition``: the authors' columns prompt_variant (alphabetical; fewer
        than 3 rows skipped), n, rho, rho_ci_lo, rho_ci_hi, p, token_confounded (rho > median + 0.15).
        The flag is informational: nothing is excluded.
    """
    _need("token_covariate_stats", joined, ("generation_id", "prompt_variant", "completion_tokens", "ward_score"))
    joined = _by_generation_id(joined)

    def one(part: pd.DataFrame) -> dict[str, float]:
        x = part["completion_tokens"].to_numpy(dtype=np.float64)
        y = part["ward_score"].to_numpy(dtype=np.float64)
        rho, lo, hi, p = S.spearman_boot_ci(x, y, n_boot=n_boot, seed=seed)
        return {"n": len(part), "rho": rho, "rho_ci_lo": lo, "rho_ci_hi": hi, "p": p}

    overall = one(joined)
    per = []
    for c in sorted(joined["prompt_variant"].unique()):
        part = joined.loc[joined["prompt_variant"] == c]
        if len(part) < 3:
            continue
        per.append({"prompt_variant": c, **one(part)})
    per_df = pd.DataFrame(per, columns=["prompt_variant", "n", "rho", "rho_ci_lo", "rho_ci_hi", "p"])
    rhos = per_df["rho"].to_numpy(dtype=np.float64)
    median = float(np.nanmedian(rhos)) if np.any(~np.isnan(rhos)) else float("nan")
    threshold = median + flag_margin
    per_df["token_confounded"] = per_df["rho"] > threshold
    overall.update(median_rho=median, threshold=threshold)
    return pd.DataFrame([overall]), per_df


def length_adjusted(joined: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Ward per 100 completion tokens per generation (spec 4.7): W / tokens * 100, rows with tokens <= 0 dropped.

    Returns the authors' ``table_length_adjusted.csv`` frame (generation_id order) and the number of
    dropped rows.
    """
    _need("length_adjusted", joined, ("generation_id", "subject_model", "prompt_variant", "completion_tokens",
                                      "ward_score"))
    keep = joined["completion_tokens"] > 0
    la = joined.loc[keep, ["generation_id", "subject_model", "prompt_variant", "ward_score", "completion_tokens"]]
    la = la.assign(ward_per_100=la["ward_score"] / la["completion_tokens"] * 100)
    return _by_generation_id(la), int((~keep).sum())


def length_adjusted_per_model(la: pd.DataFrame, *, n_boot: int = S.N_BOOT,
                              seed: int = S.BOOT_SEED) -> pd.DataFrame:
    """Per-model BOOT-MEAN of ward_per_100 and of the raw Ward mean (spec 4.7 output 2; authors' columns)."""
    frame = la.rename(columns={"subject_model": "model"})
    w = model_scores(frame, value="ward_score", n_boot=n_boot, seed=seed)
    a = model_scores(frame, value="ward_per_100", n_boot=n_boot, seed=seed)
    return pd.DataFrame({
        "subject_model": w["model"], "n": w["n"], "mean_ward": w["estimate"], "ward_ci_lo": w["ci_low"],
        "ward_ci_hi": w["ci_high"], "mean_ward_per_100": a["estimate"], "ward_per_100_ci_lo": a["ci_low"],
        "ward_per_100_ci_hi": a["ci_high"],
    })


def divergence(raw: pd.DataFrame, adjusted: pd.DataFrame, *, alpha: float = 0.05,
               only_flipped: bool = True) -> pd.DataFrame:
    """Raw vs length-adjusted post-hoc: sign flips of r or flips of Bonferroni significance (spec 4.7 step 5).

    Returns the authors' ``table_length_adjusted_divergence.csv`` columns; only flipped rows unless
    ``only_flipped=False``.
    """
    m = raw.merge(adjusted, on=["group_a", "group_b"], suffixes=("_raw", "_adj"))
    out = pd.DataFrame({
        "group_a": m["group_a"], "group_b": m["group_b"],
        "p_raw_metric": m["p_corrected_raw"], "r_raw_metric": m["rank_biserial_r_raw"],
        "p_adj_metric": m["p_corrected_adj"], "r_adj_metric": m["rank_biserial_r_adj"],
    })
    out["sign_flip"] = np.sign(out["r_raw_metric"]) != np.sign(out["r_adj_metric"])
    out["sig_flip"] = (out["p_raw_metric"] < alpha) != (out["p_adj_metric"] < alpha)
    out["flipped"] = out["sign_flip"] | out["sig_flip"]
    if only_flipped:
        out = out.loc[out["flipped"]]
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# 4.8: departure rates
# --------------------------------------------------------------------------------------------
def departure_rates(a1: pd.DataFrame, *, by: Literal["pooled", "model", "model_condition"] = "pooled"
                    ) -> pd.DataFrame:
    """Per-dimension departure rates: mean over generations of the judge-mean labels (spec A4, A5, 4.8).

    Parameters
    ----------
    by : {"pooled", "model", "model_condition"}
        ``pooled`` gives r_d sorted by rate descending (the authors' ``table_departure_freq.csv``:
        dimension, departure_rate); ``model`` gives r_{m,d} long (model, dimension, departure_rate,
        n) in model then dimension order; ``model_condition`` adds condition.
    """
    _need("departure_rates", a1, DIM_COLUMNS)
    if by == "pooled":
        rates = a1[list(DIM_COLUMNS)].astype(np.float64).mean()
        out = pd.DataFrame({"dimension": list(DIMENSIONS), "departure_rate": rates.to_numpy()})
        order = np.argsort(-out["departure_rate"].to_numpy(), kind="stable")
        return out.iloc[order].reset_index(drop=True)
    if by not in ("model", "model_condition"):
        raise ValueError(f"departure_rates: by must be 'pooled', 'model' or 'model_condition'; got {by!r}")
    keys = ["model"] if by == "model" else ["model", "condition"]
    g = a1.groupby(keys, sort=True)
    means = g[list(DIM_COLUMNS)].mean()
    n = g.size()
    long = means.stack().rename("departure_rate").reset_index()
    long = long.rename(columns={f"level_{len(keys)}": "dimension"})
    long["dimension"] = long["dimension"].str.removeprefix("dim_")
    long["n"] = long.set_index(keys).index.map(n).to_numpy()
    return long[[*keys, "dimension", "departure_rate", "n"]]


# --------------------------------------------------------------------------------------------
# 7.1: human baseline, and its comparison with the models (beyond the authors' code)
# --------------------------------------------------------------------------------------------
def human_baseline(human_rows: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """Human baseline per-dimension departure rates and mean Ward score (spec 7.1).

    Per generation the 10 labels are averaged over the judges present (last record per judge kept,
    see :func:`analysis.data.human_rows`); per dimension those means are averaged over generations
    (NaN ignored). The mean Ward score is 10 x the mean of the 10 rates.

    Returns
    -------
    (DataFrame, float)
        ``dimension`` (dimension order), ``departure_rate``, ``n`` (generations); the mean Ward score.
    """
    _need("human_baseline", human_rows, ("generation_id", "judge", *DIM_COLUMNS))
    h = human_rows.drop_duplicates(["judge", "generation_id"], keep="last")
    if len(h) == 0:
        return pd.DataFrame(columns=["dimension", "departure_rate", "n"]), float("nan")
    per_gen = h.groupby("generation_id", sort=True)[list(DIM_COLUMNS)].mean()
    rates = np.array([np.nanmean(per_gen[c].to_numpy(dtype=np.float64)) for c in DIM_COLUMNS])
    out = pd.DataFrame({"dimension": list(DIMENSIONS), "departure_rate": rates,
                        "n": [int(per_gen[c].notna().sum()) for c in DIM_COLUMNS]})
    return out, float(10 * np.mean(rates))


def human_vs_models(a1: pd.DataFrame, human_rows: pd.DataFrame, *, condition: str = "baseline",
                    n_boot: int = S.N_BOOT, seed: int = S.BOOT_SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human baseline vs every model under the same prompt (issue 3; **beyond the authors' code**).

    The paper's Table 6 sets the human baseline-only rates against model rates pooled over all six
    conditions; the authors compute no baseline-only model rates and no test. This adds both.

    Returns
    -------
    (rates, tests) : DataFrame, DataFrame
        ``rates``: long table ``group`` ("human" or the model id), ``condition``, ``dimension``,
        ``departure_rate``, ``n`` (generations); models in config order, restricted to ``condition``.
        ``tests``: per model, two-sided MWU of the human per-generation Ward means (group_a) against
        the model's per-generation means under ``condition`` (group_b): ``model``, ``n_human``,
        ``n_model``, ``mean_human``, ``mean_model``, ``U``, ``p``, ``p_bonferroni`` (x number of
        models), ``rank_biserial_r`` (> 0: the model departs more than humans), ``r_ci_lo``,
        ``r_ci_hi`` (RB bootstrap, B = ``n_boot``, fresh seed per model, generation_id order).
    """
    _need("human_vs_models", a1, ("generation_id", "model", "condition", "ward_score", *DIM_COLUMNS))
    hb, _ = human_baseline(human_rows)
    h_gen = S.per_generation(human_rows.drop_duplicates(["judge", "generation_id"], keep="last"))
    sub = _by_generation_id(a1.loc[a1["condition"] == condition])
    models = model_order(sub["model"])
    rates = [hb.assign(group="human", condition=condition)]
    for m in models:
        part = sub.loc[sub["model"] == m]
        rates.append(pd.DataFrame({"group": m, "condition": condition, "dimension": list(DIMENSIONS),
                                   "departure_rate": part[list(DIM_COLUMNS)].astype(np.float64).mean().to_numpy(),
                                   "n": len(part)}))
    rates_df = pd.concat(rates, ignore_index=True)[["group", "condition", "dimension", "departure_rate", "n"]]
    xh = h_gen["ward_score"].to_numpy(dtype=np.float64)
    tests = []
    for m in models:
        xm = sub.loc[sub["model"] == m, "ward_score"].to_numpy(dtype=np.float64)
        u, p = S.mann_whitney(xh, xm)
        r, lo, hi = S.rank_biserial_ci(xh, xm, n_boot=n_boot, seed=seed)
        tests.append({"model": m, "n_human": xh.size, "n_model": xm.size, "mean_human": float(np.mean(xh)),
                      "mean_model": float(np.mean(xm)), "U": u, "p": p, "p_bonferroni": min(p * len(models), 1.0),
                      "rank_biserial_r": r, "r_ci_lo": lo, "r_ci_hi": hi})
    tests_df = pd.DataFrame(tests, columns=["model", "n_human", "n_model", "mean_human", "mean_model", "U", "p",
                                            "p_bonferroni", "rank_biserial_r", "r_ci_lo", "r_ci_hi"])
    tests_df.attrs["note"] = "beyond the authors' code: no test compares humans with models there (spec 7.1)"
    return rates_df, tests_df


# --------------------------------------------------------------------------------------------
# the whole main analysis
# --------------------------------------------------------------------------------------------
@dataclass
class MainResults:
    """Every quantity of spec section 4 and 7.1 (frames documented on the producing functions)."""

    model_scores: pd.DataFrame
    cell_scores: pd.DataFrame
    reliability: pd.DataFrame
    self_judge_triggered: bool
    kw: pd.DataFrame
    posthoc: pd.DataFrame
    power: pd.DataFrame | None
    mde: float
    extraction_status: pd.DataFrame
    token_covariate: pd.DataFrame
    token_overall: pd.DataFrame
    token_per_condition: pd.DataFrame
    length_adjusted: pd.DataFrame
    n_length_dropped: int
    length_per_model: pd.DataFrame
    length_agreement: tuple[float, float]
    length_kw: pd.DataFrame
    length_posthoc: pd.DataFrame
    divergence: pd.DataFrame
    departure_pooled: pd.DataFrame
    departure_per_model: pd.DataFrame
    human_rates: pd.DataFrame
    human_mean: float
    human_vs_model_rates: pd.DataFrame
    human_vs_model_tests: pd.DataFrame
    params: dict[str, object] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


Progress = Callable[[str, float], None]


def run_main(inputs: Inputs, *, n_boot: int = S.N_BOOT, seed: int = S.BOOT_SEED, n_boot_tokens: int = 5_000,
             n_sims: int = 2000, progress: Progress | None = None) -> MainResults:
    """Run spec section 4 (4.1-4.9) and 7.1 on the loaded inputs, in the authors' order.

    ``progress(step, seconds)`` is called after each step (used by the CLI and the benchmark).
    """
    timings: dict[str, float] = {}
    t_last = time.perf_counter()

    def done(step: str) -> None:
        nonlocal t_last
        now = time.perf_counter()
        timings[step] = now - t_last
        t_last = now
        if progress is not None:
            progress(step, timings[step])

    a1, r = inputs.A1, inputs.R
    ms = model_scores(a1, n_boot=n_boot, seed=seed)
    cells = cell_scores(a1)
    done("4.1 per-model bootstrap CIs")
    rel = reliability(r)
    trig = bool(len(rel)) and self_judge_rule(*(float(rel.iloc[0][k]) for k in ("alpha_same", "alpha_cross",
                                                                                 "delta_self")))
    done("4.2/4.9 reliability (KALPHA-STRAT)")
    kw, ph = condition_effects(a1, n_boot=n_boot, seed=seed)
    done("4.3 Kruskal-Wallis + post-hoc")
    power, mde = None, float("nan")
    if len(ph):
        n_min = int(min(ph["n_a"].min(), ph["n_b"].min()))
        power, mde = power_simulation(ph["rank_biserial_r"].abs().tolist(), n_per_group=n_min,
                                      n_comparisons=len(ph), n_sims=n_sims, seed=seed)
    done("4.4 power simulation")
    status = extraction_status(r, inputs.generations)
    done("4.5 extraction status")
    joined = token_covariate(a1, inputs.tokens)
    tok_all, tok_cond = token_covariate_stats(joined, n_boot=n_boot_tokens, seed=seed)
    done("4.6 token covariate")
    la, n_drop = length_adjusted(joined)
    la_model = length_adjusted_per_model(la, n_boot=n_boot, seed=seed)
    agree = (S.spearman(la_model["mean_ward"], la_model["mean_ward_per_100"]) if len(la_model) >= 2
             else (float("nan"), float("nan")))
    la_frame = la.rename(columns={"subject_model": "model", "prompt_variant": "condition"})
    # spec 4.7: the adjusted post-hoc table is written whenever non-empty; its pair lines are printed
    # only if its KW p < 0.05 (the summary writer applies that rule)
    la_kw = kruskal_by_condition(la_frame, value="ward_per_100")
    la_ph = posthoc(la_frame, value="ward_per_100", n_boot=n_boot, seed=seed)
    div = divergence(ph, la_ph) if len(ph) and len(la_ph) else divergence(
        pd.DataFrame(columns=list(POSTHOC_COLUMNS)), pd.DataFrame(columns=list(POSTHOC_COLUMNS)))
    done("4.7 length-adjusted")
    dep = departure_rates(a1)
    dep_m = departure_rates(a1, by="model")
    done("4.8 departure rates")
    hr, hmean = human_baseline(inputs.human)
    hv_rates, hv_tests = (human_vs_models(a1, inputs.human, n_boot=n_boot, seed=seed) if len(inputs.human)
                          else (pd.DataFrame(), pd.DataFrame()))
    done("7.1 human baseline + comparison")
    return MainResults(
        model_scores=ms, cell_scores=cells, reliability=rel, self_judge_triggered=trig, kw=kw, posthoc=ph,
        power=power, mde=mde, extraction_status=status, token_covariate=joined, token_overall=tok_all,
        token_per_condition=tok_cond, length_adjusted=la, n_length_dropped=n_drop, length_per_model=la_model,
        length_agreement=agree, length_kw=la_kw, length_posthoc=la_ph, divergence=div, departure_pooled=dep,
        departure_per_model=dep_m, human_rates=hr, human_mean=hmean, human_vs_model_rates=hv_rates,
        human_vs_model_tests=hv_tests,
        params={"n_boot": n_boot, "seed": seed, "n_boot_tokens": n_boot_tokens, "n_sims": n_sims,
                "power_seed": seed, "level": 0.95, "bonferroni_alpha": 0.05, "token_flag_margin": 0.15},
        timings=timings,
    )
