"""Reanalysis beyond the paper: subsets, length normalisation by visible words, regression adjustment.

Issue 3, "Reanalysis, beyond the paper". Every function takes and returns tidy DataFrames, so a
user can recompute a result on a subset (one judge, no truncated generations, no suspected human
pastes) in a few lines::

    import alienbench_data as ab
    from analysis import reanalysis as ra

    scores = ab.load("scores", "main", data_dir=DIR)
    gens = ab.load("generations", "main", data_dir=DIR)
    table = ra.generation_table(scores, gens, judges=["openai/gpt-5.4"], exclude_flags=("likely_truncated",))
    ra.raw_ranking(table)                               # per-model mean, BOOT-MEAN CI, rank
    ra.length_normalised(table, unit="words")           # Ward per 100 visible words, with ranks
    rows = ra.judge_table(scores, gens, exclude_flags=("likely_truncated",))
    ra.length_regression(rows, length="words")          # length-adjusted marginal means and ranks

Why this exists (data audit, sections 1 and 5): ``completion_tokens`` includes hidden reasoning
tokens for Gemini and Qwen (3.3-4.2 tokens per visible word against 1.3-2.4 for the others), so the
paper's "Ward per 100 completion tokens" (spec 4.7) mostly measures token accounting. About 71 % of
the main generations are likely truncated at the 800-token cap. This module normalises by the
visible word count (``response_words``) and adjusts by regression on log length, and reports how
each adjusted ranking differs from the raw ranking.

Conventions (spec section 0 and 2): the per-generation panel score is the mean of ``ward_score``
over the judges present (A1); per-model values are means over generations (A2); every bootstrap is
BOOT-MEAN (spec 3.1: B = 10,000, seed 1234, a fresh generator per call) over generations in
``generation_id`` order. Ranks: 1 = highest estimate; ties share the lowest rank (``method="min"``).
``rank_change = raw_rank - rank`` (positive: the model moves up after adjustment).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np
import pandas as pd

from alienbench_data.schema import DIM_COLUMNS, DIMENSIONS, HUMAN_MODEL, QUALITY_FLAGS
from analysis.stats import boot_mean_ci, per_generation, spearman

__all__ = [
    "BOOL_FLAGS",
    "LengthUnit",
    "RegressionMethod",
    "generation_table",
    "human_baseline_sensitivity",
    "judge_table",
    "length_normalised",
    "length_regression",
    "length_regression_coefficients",
    "rank_agreement",
    "raw_ranking",
    "resolve_inputs",
    "subset_sensitivity",
    "write_reanalysis",
]

LengthUnit = Literal["words", "tokens"]
RegressionMethod = Literal["ols_cluster", "mixedlm"]

#: Boolean quality columns of the ``generations`` config usable in ``exclude_flags``.
BOOL_FLAGS: tuple[str, ...] = ("hit_max_tokens", "likely_truncated", "early_stop", "tokens_include_reasoning")
_LENGTH_COLUMN: dict[str, str] = {"words": "response_words", "tokens": "completion_tokens"}
_KEYS = ["generation_id", "model", "condition"]


# --------------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------------


def resolve_inputs(inputs: Any) -> SimpleNamespace:
    """Normalise the ``inputs`` accepted by :func:`write_reanalysis`, ``draw_all`` and ``leaderboard``.

    Parameters
    ----------
    inputs
        One of

        * a dataset folder (``str`` or ``os.PathLike``): loaded with ``alienbench_data.load``;
        * a mapping or any object with the attributes ``scores`` and ``generations`` (the ``main``
          split), and optionally ``human_scores`` and ``human_generations`` (the ``human`` split);
        * an ``analysis.data.Inputs`` (``R`` is used as the scores, ``human`` as the human scores and
          the human generations are loaded from its ``data_dir``).

    Returns
    -------
    types.SimpleNamespace
        ``scores``, ``generations``, ``human_scores``, ``human_generations`` (the last two may be
        ``None``).
    """
    if isinstance(inputs, (str, os.PathLike)):
        import alienbench_data as ab

        d = Path(inputs)
        return SimpleNamespace(
            scores=ab.load("scores", "main", data_dir=d),
            generations=ab.load("generations", "main", data_dir=d),
            human_scores=ab.load("scores", "human", data_dir=d),
            human_generations=ab.load("generations", "human", data_dir=d),
        )

    def get(*names: str) -> Any:
        for name in names:
            value = inputs.get(name) if isinstance(inputs, Mapping) else getattr(inputs, name, None)
            if value is not None:
                return value
        return None

    # ``analysis.data.Inputs`` names the main score rows ``R`` and the human score rows ``human``.
    scores, generations = get("scores", "R"), get("generations")
    if scores is None:
        raise ValueError(
            f"resolve_inputs: inputs of type {type(inputs).__name__} has no 'scores'; pass a dataset folder, "
            "a mapping or an object with 'scores' and 'generations' (main split) DataFrames"
        )
    human_scores, human_generations = get("human_scores", "human"), get("human_generations")
    data_dir = get("data_dir")
    if human_scores is not None and human_generations is None and data_dir is not None:
        import alienbench_data as ab

        if ab.manifest_of(Path(data_dir)).files_of("generations", "human"):
            human_generations = ab.load("generations", "human", data_dir=Path(data_dir))
    return SimpleNamespace(
        scores=scores,
        generations=generations,
        human_scores=human_scores,
        human_generations=human_generations,
    )


def _known_flags(generations: pd.DataFrame | None) -> list[str]:
    flags = set(BOOL_FLAGS) | set(QUALITY_FLAGS)
    if generations is not None and "quality_flags" in generations:
        for v in generations["quality_flags"]:
            if v is not None:
                flags.update(str(f) for f in v)
    return sorted(flags)


def _flag_mask(generations: pd.DataFrame, flags: Iterable[str], *, func: str) -> np.ndarray:
    """True for generations carrying any of ``flags`` (a boolean column or a ``quality_flags`` entry)."""
    mask = np.zeros(len(generations), dtype=bool)
    known = _known_flags(generations)
    listed = generations["quality_flags"] if "quality_flags" in generations else None
    for flag in flags:
        if flag not in known:
            raise ValueError(f"{func}: unknown flag {flag!r} in exclude_flags; known flags: {', '.join(known)}")
        if flag in generations.columns and flag in BOOL_FLAGS:
            mask |= generations[flag].fillna(False).to_numpy(dtype=bool)
        if listed is not None:
            mask |= np.fromiter((v is not None and flag in list(v) for v in listed), dtype=bool, count=len(listed))
    return mask


def _select(
    scores: pd.DataFrame,
    generations: pd.DataFrame | None,
    *,
    judges: Sequence[str] | None,
    exclude_flags: Sequence[str],
    exclude_generations: Iterable[str] | None,
    func: str,
) -> pd.DataFrame:
    if isinstance(exclude_flags, str):
        exclude_flags = (exclude_flags,)
    rows = scores
    if judges is not None:
        if isinstance(judges, str):
            judges = [judges]
        present = sorted(set(scores["judge"]))
        bad = [j for j in judges if j not in present]
        if bad:
            raise ValueError(f"{func}: judge(s) {bad} not in the scores; available judges: {present}")
        rows = rows[rows["judge"].isin(list(judges))]
    if exclude_flags:
        if generations is None:
            raise ValueError(f"{func}: exclude_flags={tuple(exclude_flags)} needs the generations table; pass it")
        drop = generations.loc[_flag_mask(generations, exclude_flags, func=func), "generation_id"]
        rows = rows[~rows["generation_id"].isin(drop)]
    if exclude_generations is not None:
        rows = rows[~rows["generation_id"].isin(list(exclude_generations))]
    return rows


def generation_table(
    scores: pd.DataFrame,
    generations: pd.DataFrame | None = None,
    *,
    judges: Sequence[str] | None = None,
    exclude_flags: Sequence[str] = (),
    exclude_generations: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Per-generation panel scores (spec A1) on a chosen subset, joined with the length columns.

    Parameters
    ----------
    scores
        Judge-level rows (``scores`` config): generation_id, model, condition, judge, ward_score,
        dim_* columns.
    generations
        The ``generations`` config of the same split. Needed for ``exclude_flags`` and for the
        length columns; without it the result has no length columns.
    judges
        Keep only these judge aliases (e.g. one judge). Default: all judges.
    exclude_flags
        Drop generations carrying any of these flags: a boolean column (``likely_truncated``,
        ``hit_max_tokens``, ``early_stop``, ``tokens_include_reasoning``) or a ``quality_flags``
        entry (``suspected_llm_paste``, ``cjk_code_switch``, ...).
    exclude_generations
        generation_ids to drop.

    Returns
    -------
    pandas.DataFrame
        One row per generation, sorted by generation_id (the bootstrap resampling order): generation_id,
        model, condition, ward_score (judge mean, float), the dim_* judge means, n_judges and, when
        ``generations`` is given, completion_tokens, response_words, added_in_version.

    Notes
    -----
    W̄_g = mean of ward_score over the judge rows of g; duplicates count twice and missing judges are
    not imputed (spec 1.3, A1).
    """
    rows = _select(
        scores,
        generations,
        judges=judges,
        exclude_flags=exclude_flags,
        exclude_generations=exclude_generations,
        func="generation_table",
    )
    dims = [c for c in DIM_COLUMNS if c in rows.columns]
    table = per_generation(rows, ["ward_score", *dims], keys=("model", "condition"))
    if generations is not None:
        cols = [c for c in ("completion_tokens", "response_words", "added_in_version") if c in generations.columns]
        meta = generations[["generation_id", *cols]].drop_duplicates("generation_id")
        table = table.merge(meta, on="generation_id", how="left", validate="one_to_one")
    return table.sort_values("generation_id", kind="mergesort").reset_index(drop=True)


def judge_table(
    scores: pd.DataFrame,
    generations: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    exclude_flags: Sequence[str] = (),
    exclude_generations: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Judge-level rows (one per generation x judge) joined with the generation's length columns.

    The input of :func:`length_regression` (fit on the 5,400 judge rows, clustered by generation).
    Same subset options as :func:`generation_table`. Columns: generation_id, model, condition,
    judge, ward_score (float), completion_tokens, response_words; sorted by (generation_id, judge).
    """
    rows = _select(
        scores,
        generations,
        judges=judges,
        exclude_flags=exclude_flags,
        exclude_generations=exclude_generations,
        func="judge_table",
    )
    out = rows[[*_KEYS, "judge", "ward_score"]].astype({"ward_score": "float64"})
    meta = generations[["generation_id", "completion_tokens", "response_words"]].drop_duplicates("generation_id")
    out = out.merge(meta, on="generation_id", how="left", validate="many_to_one")
    return out.sort_values(["generation_id", "judge"], kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# Rankings
# --------------------------------------------------------------------------------------------------


def _rank(values: pd.Series) -> pd.Series:
    """1 = highest; ties share the lowest rank; NaN stays NaN (nullable Int64)."""
    return values.rank(ascending=False, method="min").astype("Int64")


def _boot_per_model(table: pd.DataFrame, value: str, *, n_boot: int, seed: int) -> pd.DataFrame:
    recs = []
    for model, grp in table.sort_values("generation_id", kind="mergesort").groupby("model", sort=True):
        est, lo, hi = boot_mean_ci(grp[value].to_numpy(dtype=float), n_boot=n_boot, seed=seed)
        recs.append({"model": model, "n": int(grp[value].notna().sum()), "estimate": est, "ci_low": lo, "ci_high": hi})
    return pd.DataFrame.from_records(recs, columns=["model", "n", "estimate", "ci_low", "ci_high"])


def raw_ranking(table: pd.DataFrame, *, n_boot: int = 10_000, seed: int = 1234) -> pd.DataFrame:
    """Per-model overall Ward score with BOOT-MEAN CI and its rank (spec 4.1 on any subset).

    Parameters
    ----------
    table
        A :func:`generation_table` (one row per generation, column ``ward_score``).

    Returns
    -------
    pandas.DataFrame
        model (alphabetical), n (generations), estimate (M_m = mean of W̄_g), ci_low, ci_high, rank.
    """
    out = _boot_per_model(table, "ward_score", n_boot=n_boot, seed=seed)
    out["rank"] = _rank(out["estimate"])
    return out


def _with_raw(out: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    raw = table.groupby("model", sort=True)["ward_score"].mean()
    out["raw_estimate"] = out["model"].map(raw).astype(float)
    out["rank"] = _rank(out["estimate"])
    out["raw_rank"] = _rank(out["raw_estimate"])
    out["rank_change"] = (out["raw_rank"] - out["rank"]).astype("Int64")
    return out


def length_normalised(
    table: pd.DataFrame,
    *,
    unit: LengthUnit = "words",
    n_boot: int = 10_000,
    seed: int = 1234,
) -> pd.DataFrame:
    """Ward score per 100 visible words (or per 100 completion tokens), per model, with BOOT-MEAN CIs.

    Parameters
    ----------
    table
        A :func:`generation_table` built with ``generations`` (needs ``response_words`` /
        ``completion_tokens``).
    unit
        ``"words"``: per 100 visible words (``response_words``); ``"tokens"``: per 100
        ``completion_tokens`` (spec 4.7; includes hidden reasoning for Gemini and Qwen).

    Returns
    -------
    pandas.DataFrame
        One row per model (alphabetical): model, unit, n, n_dropped, estimate, ci_low, ci_high,
        raw_estimate, rank, raw_rank, rank_change.

    Notes
    -----
    For each generation, per_100 = W̄_g / length_g x 100 (a mean of ratios, as spec 4.7); rows with
    length <= 0 or missing are dropped and counted in ``n_dropped``. The CI is BOOT-MEAN over the
    model's per_100 values in generation_id order. With ``unit="tokens"`` on the full release this
    reproduces ``table_length_adjusted_per_model.csv`` (mean_ward_per_100 and its CI).
    """
    if unit not in _LENGTH_COLUMN:
        raise ValueError(f"length_normalised: unit={unit!r} is not one of {sorted(_LENGTH_COLUMN)}")
    col = _LENGTH_COLUMN[unit]
    if col not in table.columns:
        raise ValueError(
            f"length_normalised: table has no {col!r} column; build it with generation_table(scores, generations)"
        )
    length = table[col].astype(float)
    ok = length > 0
    work = table.loc[ok, ["generation_id", "model", "ward_score"]].copy()
    work["per_100"] = table.loc[ok, "ward_score"].astype(float) / length[ok] * 100.0
    out = _boot_per_model(work, "per_100", n_boot=n_boot, seed=seed)
    dropped = (~ok).groupby(table["model"]).sum()
    out.insert(1, "unit", unit)
    out.insert(3, "n_dropped", out["model"].map(dropped).fillna(0).astype(int))
    return _with_raw(out, table)


def rank_agreement(adjusted: pd.DataFrame, *, label: str = "") -> pd.DataFrame:
    """How an adjusted ranking differs from the raw ranking.

    Parameters
    ----------
    adjusted
        Output of :func:`length_normalised` or :func:`length_regression` (columns model, estimate,
        raw_estimate, rank_change).
    label
        Free text identifying the comparison (e.g. ``"per_100_words"``).

    Returns
    -------
    pandas.DataFrame
        One row: label, n_models, spearman_rho, spearman_p (unguarded Spearman between the adjusted
        and raw per-model estimates, t-based p; spec 3.5), n_rank_changed, max_abs_rank_change.
    """
    ok = adjusted.dropna(subset=["estimate", "raw_estimate"])
    if len(ok) >= 3:
        rho, p = spearman(ok["estimate"].to_numpy(float), ok["raw_estimate"].to_numpy(float))
    else:
        rho, p = math.nan, math.nan
    change = ok["rank_change"].astype("float64").abs()
    return pd.DataFrame(
        {
            "label": [label],
            "n_models": [len(ok)],
            "spearman_rho": [float(rho)],
            "spearman_p": [float(p)],
            "n_rank_changed": [int((change > 0).sum())],
            "max_abs_rank_change": [int(change.max()) if len(ok) else 0],
        }
    )


# --------------------------------------------------------------------------------------------------
# Regression adjustment
# --------------------------------------------------------------------------------------------------

_FORMULA = "ward_score ~ C(model) + C(condition) + log_length"


@dataclass(frozen=True)
class _Fit:
    result: Any
    params: pd.Series
    cov: pd.DataFrame
    contrasts: pd.DataFrame  # one row per model: L_m (columns = fixed-effect names)
    mean_log_length: float
    data: pd.DataFrame
    use_t: bool
    df: float
    method: str
    length: str


def _prepare(rows: pd.DataFrame, length: str, func: str) -> pd.DataFrame:
    if length not in _LENGTH_COLUMN:
        raise ValueError(f"{func}: length={length!r} is not one of {sorted(_LENGTH_COLUMN)}")
    col = _LENGTH_COLUMN[length]
    missing = [c for c in (*_KEYS, "ward_score", col) if c not in rows.columns]
    if missing:
        raise ValueError(f"{func}: rows lack columns {missing}; build them with judge_table(scores, generations)")
    data = rows[[*_KEYS, "ward_score", col]].copy()
    data = data[data[col].astype(float) > 0]
    if data.empty:
        raise ValueError(f"{func}: no rows with a positive {col}")
    data["ward_score"] = data["ward_score"].astype(float)
    data["log_length"] = np.log(data[col].astype(float))
    for c in ("model", "condition"):
        data[c] = pd.Categorical(data[c].astype(str), categories=sorted(set(data[c].astype(str))))
    return data.reset_index(drop=True)


def _fit(rows: pd.DataFrame, *, length: str, method: str, func: str) -> _Fit:
    import statsmodels.formula.api as smf

    data = _prepare(rows, length, func)
    groups = pd.factorize(data["generation_id"], sort=True)[0]
    if method == "ols_cluster":
        result = smf.ols(_FORMULA, data=data).fit(cov_type="cluster", cov_kwds={"groups": groups})
        params, cov = result.params, result.cov_params()
        use_t, df = bool(result.use_t), float(result.df_resid)
    elif method == "mixedlm":
        if data["generation_id"].duplicated().sum() == 0:
            raise ValueError(
                f"{func}: method='mixedlm' needs several judge rows per generation (a random intercept per "
                "generation is not identified with one row each); pass judge_table rows or use 'ols_cluster'"
            )
        import warnings

        from statsmodels.tools.sm_exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = smf.mixedlm(_FORMULA, data=data, groups=data["generation_id"]).fit(reml=True)
        names = list(result.fe_params.index)
        params, cov = result.fe_params, result.cov_params().loc[names, names]
        use_t, df = False, math.inf
    else:
        raise ValueError(f"{func}: method={method!r} is not one of ['mixedlm', 'ols_cluster']")

    # Estimated marginal means: average the design rows of every condition at the mean log length
    # (generation-level mean, so it does not depend on the number of judges per generation).
    mean_log = float(data.drop_duplicates("generation_id")["log_length"].mean())
    models = list(data["model"].cat.categories)
    conditions = list(data["condition"].cat.categories)
    grid = pd.DataFrame(
        {
            "model": pd.Categorical(np.repeat(models, len(conditions)), categories=models),
            "condition": pd.Categorical(np.tile(conditions, len(models)), categories=conditions),
            "log_length": mean_log,
            "ward_score": 0.0,
        }
    )
    x_grid = _design_rows(result, grid)[list(params.index)]
    contrasts = x_grid.groupby(grid["model"].to_numpy(), sort=True).mean().loc[models]
    return _Fit(result, params, cov, contrasts, mean_log, data, use_t, df, method, length)


def _design_rows(result: Any, grid: pd.DataFrame) -> pd.DataFrame:
    """The fixed-effect design matrix of ``grid`` under the fitted formula (patsy or formulaic engine)."""
    spec = getattr(result.model.data, "model_spec", None) or getattr(result.model.data, "design_info", None)
    if spec is None:  # pragma: no cover - depends on the statsmodels version
        raise RuntimeError("length_regression: cannot find the formula design of the fitted statsmodels model")
    if hasattr(spec, "get_model_matrix"):  # formulaic
        return pd.DataFrame(spec.get_model_matrix(grid))
    import patsy

    (x,) = patsy.build_design_matrices([spec], grid, return_type="dataframe")
    return x


def _interval(
    est: np.ndarray, se: np.ndarray, *, level: float, use_t: bool, df: float
) -> tuple[np.ndarray, np.ndarray]:
    import scipy.stats

    q = scipy.stats.t.ppf(0.5 + level / 2, df) if use_t else scipy.stats.norm.ppf(0.5 + level / 2)
    return est - q * se, est + q * se


def length_regression(
    rows: pd.DataFrame,
    *,
    length: LengthUnit = "words",
    method: RegressionMethod = "ols_cluster",
    level: float = 0.95,
) -> pd.DataFrame:
    """Length-adjusted model scores: marginal means from ``score ~ model + condition + log(length)``.

    Parameters
    ----------
    rows
        Judge-level rows from :func:`judge_table` (recommended: the 5,400 rows of the release) or a
        :func:`generation_table` (one row per generation; only with ``"ols_cluster"``, where it is
        then heteroskedasticity-robust).
    length
        ``"words"`` (visible words, ``response_words``) or ``"tokens"`` (``completion_tokens``).
    method
        ``"ols_cluster"``: OLS with cluster-robust covariance clustered by generation_id
        (statsmodels ``cov_type="cluster"``, small-sample correction G/(G-1)·(N-1)/(N-K), normal
        intervals). ``"mixedlm"``: linear mixed model with a random intercept per generation
        (statsmodels MixedLM, REML); CIs from the fixed-effect covariance.
    level
        Confidence level of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per model (alphabetical): model, method, length, n (generations), n_rows, estimate,
        se, ci_low, ci_high, raw_estimate (unadjusted M_m on the same rows), rank, raw_rank, rank_change.

    Notes
    -----
    Model: y_{g,j} = a + b_model(g) + c_condition(g) + d·log(length_g) + e_{g,j}. The adjusted score of
    model m is the estimated marginal mean L_m·β with L_m = the mean over conditions (equal weights)
    of the design row (m, condition, log length = mean log length over generations); its variance is
    L_m V L_mᵀ. With every judge present, OLS on the judge rows has the same point estimates as OLS
    on the per-generation means; clustering by generation accounts for the three correlated judge rows.
    Marginal means shift by c when every score shifts by c, so the rankings are location invariant.
    """
    return _marginal_means(_fit(rows, length=length, method=method, func="length_regression"), level=level)


def _marginal_means(fit: _Fit, *, level: float) -> pd.DataFrame:
    L = fit.contrasts.to_numpy(float)
    est = L @ fit.params.to_numpy(float)
    se = np.sqrt(np.einsum("ij,jk,ik->i", L, fit.cov.to_numpy(float), L))
    lo, hi = _interval(est, se, level=level, use_t=fit.use_t, df=fit.df)
    data = fit.data
    n_gen = data.groupby("model", observed=True)["generation_id"].nunique()
    n_rows = data.groupby("model", observed=True).size()
    models = list(fit.contrasts.index)
    out = pd.DataFrame(
        {
            "model": models,
            "method": fit.method,
            "length": fit.length,
            "n": [int(n_gen[m]) for m in models],
            "n_rows": [int(n_rows[m]) for m in models],
            "estimate": est,
            "se": se,
            "ci_low": lo,
            "ci_high": hi,
        }
    )
    # Raw M_m on the same generations: mean over generations of the judge mean (spec A1, A2).
    gen = data.groupby(["generation_id", "model"], observed=True)["ward_score"].mean().reset_index()
    return _with_raw(out, gen)


def length_regression_coefficients(
    rows: pd.DataFrame,
    *,
    length: LengthUnit = "words",
    method: RegressionMethod = "ols_cluster",
    level: float = 0.95,
) -> pd.DataFrame:
    """Fixed-effect coefficients of the :func:`length_regression` model.

    Returns
    -------
    pandas.DataFrame
        One row per term (patsy names, e.g. ``Intercept``, ``C(model)[T.openai/gpt-5.4]``,
        ``log_length``): term, method, length, estimate, se, ci_low, ci_high, p, n_rows, n_clusters.
        ``log_length`` is the change in Ward points per e-fold increase in length, within model and
        condition.
    """
    return _coefficients(_fit(rows, length=length, method=method, func="length_regression_coefficients"), level=level)


def _coefficients(fit: _Fit, *, level: float) -> pd.DataFrame:
    import scipy.stats

    est = fit.params.to_numpy(float)
    se = np.sqrt(np.diag(fit.cov.to_numpy(float)))
    lo, hi = _interval(est, se, level=level, use_t=fit.use_t, df=fit.df)
    z = est / se
    p = 2 * (scipy.stats.t.sf(np.abs(z), fit.df) if fit.use_t else scipy.stats.norm.sf(np.abs(z)))
    return pd.DataFrame(
        {
            "term": list(fit.params.index),
            "method": fit.method,
            "length": fit.length,
            "estimate": est,
            "se": se,
            "ci_low": lo,
            "ci_high": hi,
            "p": p,
            "n_rows": len(fit.data),
            "n_clusters": int(fit.data["generation_id"].nunique()),
        }
    )


# --------------------------------------------------------------------------------------------------
# Subset sensitivity and the human baseline
# --------------------------------------------------------------------------------------------------


def default_scenarios(scores: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """The subsets :func:`subset_sensitivity` runs by default: all rows, no truncated rows, no early
    stops, no reasoning-token models, and each judge alone."""
    scen: dict[str, dict[str, Any]] = {
        "all": {},
        "exclude_likely_truncated": {"exclude_flags": ("likely_truncated",)},
        "exclude_hit_max_tokens": {"exclude_flags": ("hit_max_tokens",)},
        "exclude_early_stop": {"exclude_flags": ("early_stop",)},
    }
    for judge in sorted(set(scores["judge"])):
        scen[f"judge={judge}"] = {"judges": [judge]}
    return scen


def subset_sensitivity(
    scores: pd.DataFrame,
    generations: pd.DataFrame,
    scenarios: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    n_boot: int = 10_000,
    seed: int = 1234,
) -> pd.DataFrame:
    """The raw leaderboard recomputed on subsets, with each model's rank change against all data.

    Parameters
    ----------
    scenarios
        name -> keyword arguments of :func:`generation_table` (``judges``, ``exclude_flags``,
        ``exclude_generations``). Default: :func:`default_scenarios`.

    Returns
    -------
    pandas.DataFrame
        One row per (scenario, model): scenario, model, n, estimate, ci_low, ci_high, rank,
        raw_estimate (all data, all judges), raw_rank (rank of raw_estimate among the models present
        in the subset), rank_change. A model with no generation
        left in a subset has n = 0 and NaN estimates (e.g. every Ministral generation hits the
        800-token cap, so ``exclude_likely_truncated`` removes that model entirely).
    """
    scenarios = default_scenarios(scores) if scenarios is None else scenarios
    full = generation_table(scores, generations)
    raw = full.groupby("model", sort=True)["ward_score"].mean()
    models = list(raw.index)
    frames = []
    for name, kwargs in scenarios.items():
        sub = generation_table(scores, generations, **kwargs)
        res = raw_ranking(sub, n_boot=n_boot, seed=seed).set_index("model").reindex(models)
        res["n"] = res["n"].fillna(0).astype(int)
        res = res.reset_index()
        res.insert(0, "scenario", name)
        res["rank"] = _rank(res["estimate"])
        res["raw_estimate"] = res["model"].map(raw).astype(float)
        # Rank on all data among the models still present, so a model dropping out shifts no one.
        res["raw_rank"] = _rank(res["raw_estimate"].where(res["estimate"].notna()))
        res["rank_change"] = (res["raw_rank"] - res["rank"]).astype("Int64")
        frames.append(res)
    return pd.concat(frames, ignore_index=True)[
        ["scenario", "model", "n", "estimate", "ci_low", "ci_high", "rank", "raw_estimate", "raw_rank", "rank_change"]
    ]


def human_baseline_sensitivity(
    human_scores: pd.DataFrame,
    human_generations: pd.DataFrame,
    *,
    n_boot: int = 10_000,
    seed: int = 1234,
) -> pd.DataFrame:
    """Human baseline (spec 7.1) with and without the responses flagged ``suspected_llm_paste``.

    Returns
    -------
    pandas.DataFrame
        Rows ``all`` and ``exclude_suspected_llm_paste``: scenario, model, n, estimate (mean W̄_g),
        ci_low, ci_high (BOOT-MEAN), then rate_<dimension> for the 10 dimensions (mean of the judge
        means d̄_g). The audit (section 3) flags three suspected chatbot pastes; the paper claims two
        exclusions that the shipped tables do not apply.
    """
    recs = []
    for name, flags in (("all", ()), ("exclude_suspected_llm_paste", ("suspected_llm_paste",))):
        table = generation_table(human_scores, human_generations, exclude_flags=flags)
        est, lo, hi = boot_mean_ci(table["ward_score"].to_numpy(float), n_boot=n_boot, seed=seed)
        rec = {"scenario": name, "model": HUMAN_MODEL, "n": len(table), "estimate": est, "ci_low": lo, "ci_high": hi}
        for d, c in zip(DIMENSIONS, DIM_COLUMNS, strict=True):
            rec[f"rate_{d}"] = float(table[c].mean()) if c in table else math.nan
        recs.append(rec)
    return pd.DataFrame.from_records(recs)


# --------------------------------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------------------------------


def _fmt(x: float, nd: int = 3) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def write_reanalysis(
    inputs: Any,
    out_dir: str | os.PathLike[str],
    *,
    n_boot: int = 10_000,
    seed: int = 1234,
    fits: Sequence[tuple[RegressionMethod, LengthUnit]] = (
        ("ols_cluster", "words"),
        ("ols_cluster", "tokens"),
        ("mixedlm", "words"),
    ),
) -> list[Path]:
    """Write the reanalysis tables and a short text summary; called by ``reproduce``.

    Files (in ``out_dir``): ``reanalysis_length_per_model.csv`` (per 100 words and per 100 tokens),
    ``reanalysis_regression_per_model.csv`` (length-adjusted marginal means for each of ``fits``),
    ``reanalysis_regression_coefficients.csv``, ``reanalysis_rank_agreement.csv``,
    ``reanalysis_subsets.csv`` (:func:`subset_sensitivity`), ``reanalysis_human_baseline.csv``
    (when the human split is available) and ``reanalysis_summary.txt``.

    Parameters
    ----------
    inputs
        See :func:`resolve_inputs`.
    fits
        (method, length) pairs of :func:`length_regression` to run. A MixedLM fit takes a few
        seconds on the release (statsmodels loops over the 1,800 generations), so only the
        visible-word model is fitted both ways by default.

    Returns
    -------
    list[pathlib.Path]
        The files written.
    """
    frames = resolve_inputs(inputs)
    if frames.generations is None:
        raise ValueError("write_reanalysis: inputs has no 'generations' (main split); lengths come from it")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = generation_table(frames.scores, frames.generations)
    rows = judge_table(frames.scores, frames.generations)

    per_len = [length_normalised(table, unit=u, n_boot=n_boot, seed=seed) for u in ("words", "tokens")]
    regs, coefs = [], []
    for method, length in fits:
        fit = _fit(rows, length=length, method=method, func="write_reanalysis")
        regs.append(_marginal_means(fit, level=0.95))
        coefs.append(_coefficients(fit, level=0.95))
    agreement = pd.concat(
        [rank_agreement(d, label=f"per_100_{d['unit'].iat[0]}") for d in per_len]
        + [rank_agreement(r, label=f"regression_{r['method'].iat[0]}_log_{r['length'].iat[0]}") for r in regs],
        ignore_index=True,
    )
    subsets = subset_sensitivity(frames.scores, frames.generations, n_boot=n_boot, seed=seed)
    written: list[Path] = []

    def save(df: pd.DataFrame, name: str) -> None:
        path = out / name
        df.to_csv(path, index=False, lineterminator="\n")
        written.append(path)

    save(pd.concat(per_len, ignore_index=True), "reanalysis_length_per_model.csv")
    save(pd.concat(regs, ignore_index=True), "reanalysis_regression_per_model.csv")
    save(pd.concat(coefs, ignore_index=True), "reanalysis_regression_coefficients.csv")
    save(agreement, "reanalysis_rank_agreement.csv")
    save(subsets, "reanalysis_subsets.csv")
    human = None
    if frames.human_scores is not None and frames.human_generations is not None and len(frames.human_scores):
        human = human_baseline_sensitivity(frames.human_scores, frames.human_generations, n_boot=n_boot, seed=seed)
        save(human, "reanalysis_human_baseline.csv")

    lines = ["AlienBench reanalysis: length adjustment and subsets (beyond the paper)", ""]
    lines.append(
        "completion_tokens includes hidden reasoning for Gemini and Qwen, and ~71% of generations are likely "
        "truncated; per 100 visible words and a regression on log(length) are the length adjustments used here."
    )
    for d in per_len:
        lines += ["", f"Ward per 100 {d['unit'].iat[0]} (BOOT-MEAN 95% CI), ranked:"]
        for r in d.sort_values(["rank", "model"]).itertuples():
            lines.append(
                f"  {r.rank:>2} {r.model}: {_fmt(r.estimate)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] "
                f"(raw rank {r.raw_rank}, change {int(r.rank_change):+d}, n={r.n})"
            )
    for reg in regs:
        lines += ["", f"Length-adjusted score ({reg['method'].iat[0]}, log {reg['length'].iat[0]}; 95% CI), ranked:"]
        for r in reg.sort_values(["rank", "model"]).itertuples():
            lines.append(
                f"  {r.rank:>2} {r.model}: {_fmt(r.estimate, 2)} [{_fmt(r.ci_low, 2)}, {_fmt(r.ci_high, 2)}] "
                f"(raw {_fmt(r.raw_estimate, 2)}, raw rank {r.raw_rank}, change {int(r.rank_change):+d})"
            )
    for coef in coefs:
        c = coef.set_index("term").loc["log_length"]
        lines.append(
            f"  log-length slope ({c['method']}, {c['length']}): {_fmt(c['estimate'])} "
            f"[{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}] Ward points per e-fold length"
        )
    lines += ["", "Rank agreement with the raw ranking (Spearman rho between per-model estimates):"]
    for r in agreement.itertuples():
        lines.append(
            f"  {r.label}: rho={_fmt(r.spearman_rho)}, p={_fmt(r.spearman_p, 4)}, "
            f"{r.n_rank_changed} of {r.n_models} models change rank (max |change| {r.max_abs_rank_change})"
        )
    lines += [
        "",
        "Subsets (raw leaderboard recomputed; models with no generation left are listed with n=0). Dropping capped",
        "or truncated rows keeps only the short responses of the models that usually hit the cap: a selected,",
        "not a length-neutral, sample.",
    ]
    for name, grp in subsets.groupby("scenario", sort=False):
        ok = grp.dropna(subset=["estimate"])
        rho = (
            spearman(ok["estimate"].to_numpy(float), ok["raw_estimate"].to_numpy(float))[0]
            if len(ok) >= 3
            else math.nan
        )
        empty = ", ".join(grp.loc[grp["n"] == 0, "model"]) or "none"
        lines.append(
            f"  {name}: {int(grp['n'].sum())} generations, rho vs all = {_fmt(rho)}, "
            f"{int((ok['rank_change'].astype('float64') != 0).sum())} models change rank; empty: {empty}"
        )
    if human is not None:
        lines += ["", "Human baseline (mean Ward, BOOT-MEAN 95% CI):"]
        for r in human.itertuples():
            lines.append(f"  {r.scenario}: {_fmt(r.estimate)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] (n={r.n})")
    path = out / "reanalysis_summary.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(path)
    return written
