"""Tests of analysis.reanalysis: subsets, per-100-words/tokens, regression adjustment (issue 3 reanalysis)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alienbench_data.schema import DIM_COLUMNS, DIMENSIONS
from analysis import reanalysis as ra

# --------------------------------------------------------------------------------------------------
# Synthetic data (independent of the release)
# --------------------------------------------------------------------------------------------------


def synthetic(
    n_models: int = 4,
    conditions: tuple[str, ...] = ("baseline", "constrained_ammonia", "departure_primed"),
    n_per: int = 5,
    judges: tuple[str, ...] = ("judge/a", "judge/b", "judge/c"),
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """scores (judge rows) and generations frames with the dataset's column names."""
    rng = np.random.default_rng(seed)
    gens, rows = [], []
    for m in range(n_models):
        model = f"prov{m % 3}/model-{m:02d}"
        p = 0.2 + 0.6 * (m + 1) / (n_models + 1)
        for c in conditions:
            for i in range(n_per):
                gid = f"g{rng.integers(0, 10**9):09d}-{m:02d}-{c[:3]}-{i:02d}"
                words = int(rng.integers(40, 700))
                tokens = int(words * rng.uniform(1.2, 4.0))
                flags = ["suspected_llm_paste"] if rng.random() < 0.15 else []
                gens.append(
                    {
                        "generation_id": gid,
                        "model": model,
                        "condition": c,
                        "completion_tokens": np.int32(tokens),
                        "response_words": np.int32(words),
                        "hit_max_tokens": bool(tokens > 1500),
                        "likely_truncated": bool(rng.random() < 0.3),
                        "early_stop": False,
                        "tokens_include_reasoning": False,
                        "quality_flags": np.array(flags, dtype=object),
                        "added_in_version": "1.0.0",
                    }
                )
                for j in judges:
                    dims = (rng.random(10) < p).astype(np.int8)
                    row = {"generation_id": gid, "model": model, "condition": c, "judge": j}
                    row.update(dict(zip(DIM_COLUMNS, dims, strict=True)))
                    row["ward_score"] = np.int8(dims.sum())
                    rows.append(row)
    return pd.DataFrame(rows), pd.DataFrame(gens)


def _design(rows: pd.DataFrame, length_col: str) -> tuple[np.ndarray, list[str]]:
    """The treatment-coded design matrix, built by hand (no patsy): intercept, model and condition
    dummies (first level alphabetical dropped), log length — in statsmodels' term order."""
    models = sorted(set(rows["model"]))
    conds = sorted(set(rows["condition"]))
    cols = [np.ones(len(rows))]
    names = ["Intercept"]
    for m in models[1:]:
        cols.append((rows["model"] == m).to_numpy(float))
        names.append(f"C(model)[T.{m}]")
    for c in conds[1:]:
        cols.append((rows["condition"] == c).to_numpy(float))
        names.append(f"C(condition)[T.{c}]")
    cols.append(np.log(rows[length_col].to_numpy(float)))
    names.append("log_length")
    return np.column_stack(cols), names


# --------------------------------------------------------------------------------------------------
# Inputs and subsets
# --------------------------------------------------------------------------------------------------


def test_resolve_inputs_accepts_mappings_objects_and_analysis_inputs_names():
    scores, gens = synthetic()
    f = ra.resolve_inputs({"scores": scores, "generations": gens})
    assert f.scores is scores and f.generations is gens and f.human_scores is None
    f = ra.resolve_inputs(SimpleNamespace(R=scores, generations=gens, human=scores.iloc[:0]))  # analysis.data.Inputs
    assert f.scores is scores and f.human_scores is not None and f.human_generations is None
    with pytest.raises(ValueError, match="resolve_inputs: inputs of type dict has no 'scores'"):
        ra.resolve_inputs({"generations": gens})


def test_generation_table_is_judge_mean_sorted_by_id():
    scores, gens = synthetic()
    table = ra.generation_table(scores, gens)
    assert list(table["generation_id"]) == sorted(scores["generation_id"].unique())
    hand = scores.groupby("generation_id")["ward_score"].apply(lambda s: s.astype(float).sum() / len(s))
    np.testing.assert_allclose(table.set_index("generation_id")["ward_score"], hand.loc[table["generation_id"]])
    assert (table["n_judges"] == 3).all()
    assert {"response_words", "completion_tokens"} <= set(table.columns)


def test_subset_options_drop_the_right_rows():
    scores, gens = synthetic()
    trunc = set(gens.loc[gens["likely_truncated"], "generation_id"])
    paste = {g for g, f in zip(gens["generation_id"], gens["quality_flags"], strict=True) if "suspected_llm_paste" in f}
    assert trunc and paste
    t1 = ra.generation_table(scores, gens, exclude_flags=("likely_truncated",))
    assert set(t1["generation_id"]) == set(gens["generation_id"]) - trunc
    t2 = ra.generation_table(scores, gens, exclude_flags=("suspected_llm_paste", "likely_truncated"))
    assert set(t2["generation_id"]) == set(gens["generation_id"]) - trunc - paste
    t3 = ra.generation_table(scores, gens, judges=["judge/b"])
    assert (t3["n_judges"] == 1).all()
    one = scores[scores["judge"] == "judge/b"].set_index("generation_id")["ward_score"]
    np.testing.assert_array_equal(t3.set_index("generation_id")["ward_score"], one.loc[t3["generation_id"]])
    t4 = ra.generation_table(scores, gens, exclude_generations=list(trunc))
    assert set(t4["generation_id"]) == set(t1["generation_id"])


def test_subset_option_errors_name_function_value_and_fix():
    scores, gens = synthetic()
    with pytest.raises(ValueError, match=r"generation_table: unknown flag 'truncated'.*known flags:.*likely_truncated"):
        ra.generation_table(scores, gens, exclude_flags=("truncated",))
    with pytest.raises(ValueError, match=r"generation_table: judge\(s\) \['nobody'\].*available judges"):
        ra.generation_table(scores, gens, judges=["nobody"])
    with pytest.raises(ValueError, match="needs the generations table"):
        ra.generation_table(scores, None, exclude_flags=("likely_truncated",))
    with pytest.raises(ValueError, match="unit='chars'"):
        ra.length_normalised(ra.generation_table(scores, gens), unit="chars")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="method='gls'"):
        ra.length_regression(ra.judge_table(scores, gens), method="gls")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# Per 100 words / tokens
# --------------------------------------------------------------------------------------------------


def _boot_loop(x: np.ndarray, n_boot: int, seed: int = 1234) -> tuple[float, float]:
    """BOOT-MEAN by its definition (spec 3.1): one rng.integers(0, n, n) call per replicate."""
    rng = np.random.default_rng(seed)
    reps = np.array([x[rng.integers(0, len(x), len(x))].mean() for _ in range(n_boot)])
    return float(np.quantile(reps, 0.025)), float(np.quantile(reps, 0.975))


@pytest.mark.parametrize(("unit", "col"), [("words", "response_words"), ("tokens", "completion_tokens")])
def test_per_100_equals_hand_computation(unit, col):
    scores, gens = synthetic(n_models=3, n_per=4)
    res = ra.length_normalised(ra.generation_table(scores, gens), unit=unit, n_boot=500).set_index("model")
    length = gens.set_index("generation_id")[col].astype(float)
    for model, grp in scores.groupby("model"):
        per_gen = grp.groupby("generation_id")["ward_score"].mean().sort_index()  # generation_id order
        x = (per_gen / length.loc[per_gen.index] * 100).to_numpy()
        assert res.at[model, "estimate"] == pytest.approx(x.mean(), rel=1e-12)
        lo, hi = _boot_loop(x, 500)
        assert res.at[model, "ci_low"] == pytest.approx(lo, abs=1e-12)
        assert res.at[model, "ci_high"] == pytest.approx(hi, abs=1e-12)
        assert res.at[model, "n"] == len(x)
        assert res.at[model, "raw_estimate"] == pytest.approx(per_gen.mean(), rel=1e-12)
    assert (res["unit"] == unit).all()


def test_per_100_drops_nonpositive_lengths_and_counts_them():
    scores, gens = synthetic(n_models=2, n_per=3)
    gid = gens["generation_id"].iat[0]
    gens.loc[gens["generation_id"] == gid, "response_words"] = 0
    res = ra.length_normalised(ra.generation_table(scores, gens), unit="words", n_boot=50).set_index("model")
    model = gens["model"].iat[0]
    assert res.at[model, "n_dropped"] == 1
    assert res.at[model, "n"] == 3 * 3 - 1
    assert res["n_dropped"].sum() == 1


def test_rank_columns_and_agreement():
    scores, gens = synthetic(n_models=5)
    res = ra.length_normalised(ra.generation_table(scores, gens), unit="words", n_boot=50)
    expected_rank = res["estimate"].rank(ascending=False, method="min").astype(int)
    assert list(res["rank"]) == list(expected_rank)
    assert list(res["rank_change"]) == list(res["raw_rank"] - res["rank"])
    agree = ra.rank_agreement(res, label="w")
    rho = scipy.stats.spearmanr(res["estimate"], res["raw_estimate"]).statistic
    assert agree.at[0, "spearman_rho"] == pytest.approx(rho, abs=1e-12)
    assert agree.at[0, "n_rank_changed"] == int((res["rank_change"] != 0).sum())


# --------------------------------------------------------------------------------------------------
# Regression: against numpy lstsq and the documented cluster-robust formula
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("length", ["words", "tokens"])
def test_ols_coefficients_equal_numpy_lstsq(length):
    scores, gens = synthetic(n_models=4, n_per=6, seed=3)
    rows = ra.judge_table(scores, gens)
    coef = ra.length_regression_coefficients(rows, length=length).set_index("term")
    X, names = _design(rows, "response_words" if length == "words" else "completion_tokens")
    beta = np.linalg.lstsq(X, rows["ward_score"].to_numpy(float), rcond=None)[0]
    assert sorted(coef.index) == sorted(names)
    np.testing.assert_allclose(coef.loc[names, "estimate"].to_numpy(), beta, rtol=1e-9, atol=1e-10)


def test_cluster_robust_se_equals_hand_formula_on_a_tiny_case():
    # 2 models x 2 conditions x 2 generations x 2 judges = 16 rows, 8 clusters; lengths vary by generation.
    recs = []
    lengths = [50, 80, 120, 60, 200, 90, 150, 70]
    k = 0
    ward = [3, 4, 5, 5, 2, 3, 6, 8, 7, 7, 1, 2, 4, 6, 9, 8]
    for m in ("a/m1", "b/m2"):
        for c in ("baseline", "departure_primed"):
            for g in range(2):
                gid = f"{m[-2:]}-{c[:3]}-{g}"
                for j in ("j1", "j2"):
                    recs.append(
                        {
                            "generation_id": gid,
                            "model": m,
                            "condition": c,
                            "judge": j,
                            "ward_score": float(ward[len(recs)]),
                            "response_words": lengths[k],
                            "completion_tokens": 2 * lengths[k],
                        }
                    )
                k += 1
    rows = pd.DataFrame(recs)
    coef = ra.length_regression_coefficients(rows, length="words").set_index("term")

    # statsmodels' documented cluster covariance (cov_type="cluster", use_correction=True):
    # V = c (X'X)^-1 [sum_g X_g' u_g u_g' X_g] (X'X)^-1,  c = G/(G-1) * (N-1)/(N-K)
    X, names = _design(rows, "response_words")
    y = rows["ward_score"].to_numpy(float)
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    u = y - X @ beta
    bread = np.linalg.inv(X.T @ X)
    meat = np.zeros((X.shape[1], X.shape[1]))
    for gid in rows["generation_id"].unique():
        sel = (rows["generation_id"] == gid).to_numpy()
        s = X[sel].T @ u[sel]
        meat += np.outer(s, s)
    n, kk, g = X.shape[0], X.shape[1], rows["generation_id"].nunique()
    V = g / (g - 1) * (n - 1) / (n - kk) * bread @ meat @ bread
    np.testing.assert_allclose(coef.loc[names, "estimate"].to_numpy(), beta, rtol=1e-10)
    np.testing.assert_allclose(coef.loc[names, "se"].to_numpy(), np.sqrt(np.diag(V)), rtol=1e-9)
    assert coef["n_clusters"].iat[0] == 8 and coef["n_rows"].iat[0] == 16

    # marginal means: L_m = mean over conditions of [1, d_m, d_c, mean log length]; se = sqrt(L V L')
    adj = ra.length_regression(rows, length="words").set_index("model")
    mean_log = np.log(np.array(lengths, float)).mean()
    for i, m in enumerate(("a/m1", "b/m2")):
        L = np.array([1.0, float(i == 1), 0.5, mean_log])
        assert adj.at[m, "estimate"] == pytest.approx(L @ beta, rel=1e-10)
        assert adj.at[m, "se"] == pytest.approx(math.sqrt(L @ V @ L), rel=1e-9)
        z = scipy.stats.norm.ppf(0.975)
        assert adj.at[m, "ci_low"] == pytest.approx(L @ beta - z * math.sqrt(L @ V @ L), rel=1e-9)
    assert adj.at["a/m1", "raw_estimate"] == pytest.approx(np.mean(ward[:8]))


def test_judge_level_and_generation_level_ols_agree_on_point_estimates():
    scores, gens = synthetic(n_models=4, n_per=5, seed=5)
    by_judge = ra.length_regression(ra.judge_table(scores, gens))
    by_gen = ra.length_regression(ra.generation_table(scores, gens))
    np.testing.assert_allclose(by_judge["estimate"], by_gen["estimate"], rtol=1e-10)
    assert list(by_judge["rank"]) == list(by_gen["rank"])
    assert (by_gen["n_rows"] == by_gen["n"]).all() and (by_judge["n_rows"] == 3 * by_judge["n"]).all()


@pytest.mark.filterwarnings("ignore:Random effects covariance is singular")
def test_mixedlm_equals_ols_with_complete_balanced_clusters():
    # Regressors constant within a generation and equal cluster sizes: GLS under a random intercept
    # equals OLS, so the two methods must give the same marginal means (up to the optimiser).
    scores, gens = synthetic(n_models=3, n_per=8, seed=7)
    rows = ra.judge_table(scores, gens)
    ols = ra.length_regression(rows, method="ols_cluster")
    mix = ra.length_regression(rows, method="mixedlm")
    np.testing.assert_allclose(mix["estimate"], ols["estimate"], atol=1e-5)
    assert (mix["ci_high"] > mix["ci_low"]).all()
    with pytest.raises(ValueError, match="mixedlm"):
        ra.length_regression(ra.generation_table(scores, gens), method="mixedlm")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.floats(min_value=-20, max_value=20, allow_nan=False), seed=st.integers(0, 2**16))
def test_shifting_every_score_shifts_estimates_and_keeps_rankings(c, seed):
    scores, gens = synthetic(n_models=4, n_per=4, seed=seed)
    shifted = scores.assign(ward_score=scores["ward_score"].astype(float) + c)
    a = ra.raw_ranking(ra.generation_table(scores, gens), n_boot=100)
    b = ra.raw_ranking(ra.generation_table(shifted, gens), n_boot=100)
    for col in ("estimate", "ci_low", "ci_high"):
        np.testing.assert_allclose(b[col], a[col] + c, atol=1e-9)
    assert list(a["rank"]) == list(b["rank"])
    ra_, rb_ = ra.length_regression(ra.judge_table(scores, gens)), ra.length_regression(ra.judge_table(shifted, gens))
    for col in ("estimate", "ci_low", "ci_high", "raw_estimate"):
        np.testing.assert_allclose(rb_[col], ra_[col] + c, atol=1e-8)
    np.testing.assert_allclose(rb_["se"], ra_["se"], rtol=1e-6, atol=1e-9)
    for col in ("rank", "raw_rank", "rank_change"):
        assert list(ra_[col]) == list(rb_[col])


# --------------------------------------------------------------------------------------------------
# Subset sensitivity
# --------------------------------------------------------------------------------------------------


def test_subset_sensitivity_all_is_identity_and_empty_models_are_nan():
    scores, gens = synthetic(n_models=4)
    only = gens["model"].iat[0]
    scen = {
        "all": {},
        "drop_one_model": {"exclude_generations": gens.loc[gens["model"] == only, "generation_id"]},
        "judge": {"judges": ["judge/a"]},
    }
    res = ra.subset_sensitivity(scores, gens, scen, n_boot=50)
    all_ = res[res["scenario"] == "all"]
    assert (all_["rank_change"] == 0).all()
    np.testing.assert_allclose(all_["estimate"], all_["raw_estimate"])
    dropped = res[(res["scenario"] == "drop_one_model")].set_index("model")
    assert dropped.at[only, "n"] == 0 and math.isnan(dropped.at[only, "estimate"])
    rest = dropped.drop(index=only)
    assert (rest["rank_change"] == 0).all()  # removing a model does not move the others
    assert sorted(res["scenario"].unique()) == ["all", "drop_one_model", "judge"]


# --------------------------------------------------------------------------------------------------
# Release (integration, compared with the authors' reported tables)
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset(built_dataset):
    """The dataset built once per session from the authors' release (tests/conftest.py)."""
    return Path(built_dataset)


@pytest.mark.release
def test_per_100_tokens_reproduces_reported_table(dataset, reported_dir):
    frames = ra.resolve_inputs(dataset)
    table = ra.generation_table(frames.scores, frames.generations)
    res = ra.length_normalised(table, unit="tokens").set_index("model")
    rep = pd.read_csv(reported_dir / "table_length_adjusted_per_model.csv").set_index("subject_model")
    assert sorted(res.index) == sorted(rep.index)
    for m in rep.index:
        assert res.at[m, "estimate"] == pytest.approx(rep.at[m, "mean_ward_per_100"], abs=1e-9)
        assert res.at[m, "raw_estimate"] == pytest.approx(rep.at[m, "mean_ward"], abs=1e-9)
        assert res.at[m, "ci_low"] == pytest.approx(rep.at[m, "ward_per_100_ci_lo"], abs=1e-9)
        assert res.at[m, "ci_high"] == pytest.approx(rep.at[m, "ward_per_100_ci_hi"], abs=1e-9)
    # spec 4.7.3: rho = 0.248, p = 0.4888 between mean_ward and mean_ward_per_100
    agree = ra.rank_agreement(res.reset_index())
    rho, p = scipy.stats.spearmanr(rep["mean_ward"], rep["mean_ward_per_100"])
    assert agree.at[0, "spearman_rho"] == pytest.approx(rho, abs=1e-12)
    assert agree.at[0, "spearman_p"] == pytest.approx(p, abs=1e-9)
    assert round(agree.at[0, "spearman_rho"], 3) == 0.248


@pytest.mark.release
def test_raw_ranking_reproduces_reported_overall_scores(dataset, reported_dir):
    frames = ra.resolve_inputs(dataset)
    res = ra.raw_ranking(ra.generation_table(frames.scores)).set_index("model")
    rep = pd.read_csv(reported_dir / "table_length_adjusted_per_model.csv").set_index("subject_model")
    for m in rep.index:
        assert res.at[m, "estimate"] == pytest.approx(rep.at[m, "mean_ward"], abs=1e-9)
        assert res.at[m, "ci_low"] == pytest.approx(rep.at[m, "ward_ci_lo"], abs=1e-9)
        assert res.at[m, "ci_high"] == pytest.approx(rep.at[m, "ward_ci_hi"], abs=1e-9)
        assert res.at[m, "n"] == rep.at[m, "n"]


@pytest.mark.release
def test_human_baseline_with_and_without_suspected_pastes(dataset):
    loaded = ra.resolve_inputs(dataset)
    # an analysis.data.Inputs-like object: human generations come from its data_dir
    frames = ra.resolve_inputs(SimpleNamespace(R=loaded.scores, human=loaded.human_scores, data_dir=dataset))
    assert frames.human_generations is not None and len(frames.human_generations) == 100
    res = ra.human_baseline_sensitivity(frames.human_scores, frames.human_generations, n_boot=200)
    all_, excl = res.iloc[0], res.iloc[1]
    assert all_["n"] == 100 and round(all_["estimate"], 3) == 1.927  # spec 7.1
    rates_pct = [round(100 * all_[f"rate_{d}"], 1) for d in DIMENSIONS]
    assert rates_pct == [15.7, 47.7, 27.0, 28.0, 22.7, 6.0, 24.3, 6.7, 9.7, 5.0]  # spec 7.1
    assert excl["n"] == 97  # the audit's three suspected pastes are flagged
    assert all_["estimate"] == pytest.approx(sum(all_[f"rate_{d}"] for d in DIMENSIONS), abs=1e-12)


@pytest.mark.release
@pytest.mark.slow
def test_write_reanalysis_on_release(dataset, tmp_path):
    paths = ra.write_reanalysis(dataset, tmp_path, n_boot=200)
    names = {p.name for p in paths}
    assert {
        "reanalysis_length_per_model.csv",
        "reanalysis_regression_per_model.csv",
        "reanalysis_regression_coefficients.csv",
        "reanalysis_rank_agreement.csv",
        "reanalysis_subsets.csv",
        "reanalysis_human_baseline.csv",
        "reanalysis_summary.txt",
    } == names
    per = pd.read_csv(tmp_path / "reanalysis_length_per_model.csv")
    assert len(per) == 20 and set(per["unit"]) == {"words", "tokens"}
    subsets = pd.read_csv(tmp_path / "reanalysis_subsets.csv")
    # every Ministral generation hits the 800-token cap (data audit section 1)
    row = subsets[
        (subsets["scenario"] == "exclude_hit_max_tokens") & (subsets["model"] == "mistralai/ministral-14b-2512")
    ]
    assert int(row["n"].iat[0]) == 0
    summary = (tmp_path / "reanalysis_summary.txt").read_text()
    assert "per 100 words" in summary.lower() or "per_100_words" in summary
