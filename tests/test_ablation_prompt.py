"""Prompt-paraphrase ablation (spec 8) on synthetic inputs.

Independent references: hand-derived rho / MAD / counts, pandas groupby for the means, and the
reference's sequential loop (``rng.permutation`` + ``scipy.stats.spearmanr``) for the null.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import alienbench_data as ab
from analysis.ablations._data import AblationInputs
from analysis.ablations.prompt import (
    prompt_ablation,
    prompt_mad_matrix,
    prompt_means,
    prompt_n_matrix,
    prompt_null,
    prompt_rho_matrix,
    prompt_rows,
    prompt_stability,
    sensitivity_runs,
    truncated_paraphrase_models,
    write_prompt_outputs,
)

PARA = tuple(ab.PARAPHRASES)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def synthetic_inputs(seed: int = 0, models: tuple[str, ...] = ("a/m1", "b/m2", "c/m3", "d/m4", "e/m5"),
                     judges: tuple[str, ...] = ("j/x", "k/y", "l/z"), truncated: str | None = "c/m3") -> AblationInputs:
    """Main baseline (30 per model, plus another condition) and paraphrases (10 per model) with random labels."""
    rng = np.random.default_rng(seed)
    gens, main, para = [], [], []
    for m_i, m in enumerate(models):
        for cond, n in (("baseline", 30), ("departure_primed", 30), *((p, 10) for p in PARA[1:])):
            for s in range(n):
                gid = f"{rng.integers(0, 16**8):08x}-{m_i}-{cond}-{s}"
                split = "paraphrase" if cond.startswith("baseline_para") else "main"
                flags = ["reasoning_budget_exhausted"] if (split == "paraphrase" and m == truncated) else []
                gens.append({"generation_id": gid, "model": m, "condition": cond, "sample_index": s,
                             "in_paraphrase_reference": cond == "baseline", "quality_flags": flags})
                p_dep = 0.2 + 0.12 * m_i + (0.1 if cond != "baseline" else 0.0)
                for j in judges:
                    dims = (rng.random(10) < p_dep).astype(np.int8)
                    labels = {c: int(v) for c, v in zip(ab.DIM_COLUMNS, dims, strict=True)}
                    row = {"generation_id": gid, "model": m, "condition": cond, "judge": j,
                           "ward_score": int(dims.sum()), **labels}
                    (para if split == "paraphrase" else main).append(row)
    return AblationInputs(R=pd.DataFrame(main), paraphrase=pd.DataFrame(para), generations=pd.DataFrame(gens))


@pytest.fixture(scope="module")
def inputs() -> AblationInputs:
    return synthetic_inputs()


# --------------------------------------------------------------------------------------------
# means and matrices
# --------------------------------------------------------------------------------------------
def test_means_equal_a_pandas_two_step_mean(inputs: AblationInputs) -> None:
    rows = prompt_rows(inputs)
    got = prompt_means(rows)
    per_gen = rows.groupby(["model", "condition", "generation_id"])["ward_score"].mean()
    want = per_gen.groupby(["model", "condition"]).mean().unstack()[list(PARA)]
    assert list(got.columns) == list(PARA) and list(got.index) == sorted(got.index)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=1e-12)


def test_rows_select_the_reference_baseline_and_the_sensitivity_filters(inputs: AblationInputs) -> None:
    rows = prompt_rows(inputs)
    base = rows.loc[rows["condition"] == "baseline"]
    assert base["generation_id"].nunique() == 5 * 30  # the main baseline cell, N = 30 (spec 13.2)
    assert "departure_primed" not in set(rows["condition"])
    n10 = prompt_rows(inputs, baseline_max_index=10)
    assert n10.loc[n10["condition"] == "baseline", "generation_id"].nunique() == 5 * 10
    assert (n10.groupby("condition")["generation_id"].nunique() == 50).all()
    no_c = prompt_rows(inputs, exclude_models=["c/m3"])
    assert "c/m3" not in set(no_c["model"]) and len(no_c) == len(rows) * 4 // 5


def test_truncated_models_come_from_the_quality_flag(inputs: AblationInputs) -> None:
    assert truncated_paraphrase_models(inputs) == ("c/m3",)
    assert truncated_paraphrase_models(synthetic_inputs(truncated=None)) == ()


def _means(values: dict[str, list[float]]) -> pd.DataFrame:
    df = pd.DataFrame(values, index=[f"m{i}" for i in range(len(next(iter(values.values()))))])
    df.index.name = "subject_model"
    return df


def test_rho_n_mad_hand_derived() -> None:
    means = _means({"baseline": [1.0, 2, 3, 4, 5], "baseline_para_a": [2.0, 1, 3, 4, 5],
                    "baseline_para_b": [1.0, 2, np.nan, np.nan, np.nan]})
    rho, n, mad = prompt_rho_matrix(means), prompt_n_matrix(means), prompt_mad_matrix(means)
    # one swapped neighbour pair among 5: rho = 1 - 6 * 2 / (5 * 24) = 0.9
    assert rho.loc["baseline", "baseline_para_a"] == pytest.approx(0.9, abs=1e-15)
    assert rho.loc["baseline", "baseline"] == 1.0 and rho.loc["baseline_para_b", "baseline_para_b"] == 1.0
    assert np.isnan(rho.loc["baseline", "baseline_para_b"])  # only 2 paired models
    assert n.loc["baseline", "baseline_para_b"] == 2.0 and n.loc["baseline", "baseline_para_a"] == 5.0
    assert n.to_numpy().dtype == np.float64
    assert mad.loc["baseline", "baseline_para_a"] == pytest.approx((1 + 1) / 5, abs=1e-15)
    assert mad.loc["baseline", "baseline_para_b"] == 0.0 and mad.loc["baseline", "baseline"] == 0.0


@FAST
@given(vals=st.lists(st.lists(st.integers(0, 30), min_size=3, max_size=3), min_size=3, max_size=9))
def test_mad_is_symmetric_with_zero_diagonal(vals: list[list[int]]) -> None:
    arr = np.array(vals, dtype=float) / 3
    means = _means({c: arr[:, i] for i, c in enumerate(PARA[:3])})
    mad = prompt_mad_matrix(means).to_numpy()
    np.testing.assert_array_equal(mad, mad.T)
    assert (np.diag(mad) == 0).all() and (mad >= 0).all()
    rho = prompt_rho_matrix(means).to_numpy()
    # symmetric up to the last bit: spearmanr(x, y) divides by sd_y then sd_x, so (y, x) may differ by 1 ulp
    np.testing.assert_allclose(rho, rho.T, rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------------
# the permutation null: vectorised == the reference's sequential loop
# --------------------------------------------------------------------------------------------
def sequential_null(means: pd.DataFrame, n_perm: int, seed: int) -> pd.DataFrame:
    """The reference's loop, literally: one generator, a outer, b inner, skip diagonal / < 3 models."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in means.columns:
        for b in means.columns:
            ok = means[a].notna() & means[b].notna()
            x, y = means.loc[ok, a].to_numpy(), means.loc[ok, b].to_numpy()
            if a == b or ok.sum() < 3:
                rows.append((a, b, np.nan, np.nan, np.nan, np.nan))
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obs = stats.spearmanr(x, y).statistic
                null = np.array([stats.spearmanr(x, rng.permutation(y)).statistic for _ in range(n_perm)])
            lo, hi = np.percentile(null, [2.5, 97.5])
            rows.append((a, b, np.mean(null), lo, hi, np.mean(np.abs(null) >= abs(obs))))
    return pd.DataFrame(rows, columns=["pair_a", "pair_b", "null_mean", "null_lo95", "null_hi95", "p_value"])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), data_seed=st.integers(0, 1000), n_models=st.integers(3, 8),
       holes=st.booleans())
def test_vectorised_null_equals_sequential_loop(seed: int, data_seed: int, n_models: int, holes: bool) -> None:
    rng = np.random.default_rng(data_seed)
    vals = rng.integers(0, 20, (n_models, 4)) / 2  # ties are common
    means = _means({c: vals[:, i] for i, c in enumerate(PARA[:4])})
    if holes:  # unequal pair sizes and a pair with < 3 models (consumes no draws)
        means.iloc[: n_models - 2, 3] = np.nan
        means.iloc[0, 2] = np.nan
    got = prompt_null(means, n_perm=300, seed=seed)
    want = sequential_null(means, 300, seed)
    for c in ("null_lo95", "null_hi95", "p_value"):
        np.testing.assert_array_equal(got[c].to_numpy(), want[c].to_numpy(), err_msg=c)
    np.testing.assert_allclose(got["null_mean"], want["null_mean"], rtol=0, atol=1e-15)


def test_null_table_layout_and_bars() -> None:
    means = _means({"baseline": [1.0, 2, 3, 4, 5, 6], "baseline_para_a": [1.1, 2.1, 3.1, 4.1, 5.1, 6.1],
                    "baseline_para_b": [6.0, 5, 4, 3, 2, 1]})
    null = prompt_null(means, n_perm=200, seed=0)
    assert list(null.columns) == ["pair_a", "pair_b", "rho_obs", "mad", "null_mean", "null_lo95", "null_hi95",
                                  "p_value", "n_models", "rho_above_stable_bar", "mad_below_stable_bar",
                                  "both_bars_pass"]
    assert len(null) == 9
    diag = null.loc[null["pair_a"] == null["pair_b"]]
    assert diag[["null_mean", "p_value"]].isna().all().all() and not diag["both_bars_pass"].any()
    ab_row = null.loc[(null["pair_a"] == "baseline") & (null["pair_b"] == "baseline_para_a")].iloc[0]
    assert ab_row["rho_obs"] == pytest.approx(1.0) and ab_row["mad"] == pytest.approx(0.1)
    assert ab_row["both_bars_pass"]  # rho 1 >= 0.9 and MAD 0.1 <= 1
    neg = null.loc[(null["pair_a"] == "baseline") & (null["pair_b"] == "baseline_para_b")].iloc[0]
    assert neg["rho_obs"] == pytest.approx(-1.0) and not neg["rho_above_stable_bar"]
    # |rho_obs| = 1 is the extreme: only draws reaching |rho| = 1 count (2 of 720 orders for 6 models)
    assert neg["p_value"] < 0.05


def test_stability_counts_ordered_vs_unordered() -> None:
    means = _means({"baseline": [1.0, 2, 3, 4, 5, 6], "baseline_para_a": [1.1, 2.1, 3.1, 4.1, 5.1, 6.1],
                    "baseline_para_b": [6.0, 5, 4, 3, 2, 1]})
    null = prompt_null(means, n_perm=200, seed=0)
    o = prompt_stability(null, unit="ordered").set_index("criterion")
    u = prompt_stability(null, unit="unordered").set_index("criterion")
    assert o["n"].iloc[0] == 6 and u["n"].iloc[0] == 3
    # (baseline, para_a) meets both bars; the bars are symmetric, so ordered counts = 2 x unordered
    assert u.loc["both_bars", "count"] == 1 and o.loc["both_bars", "count"] == 2
    assert o.loc["rho_bar", "count"] == 2 * u.loc["rho_bar", "count"]
    with pytest.raises(ValueError, match="prompt_stability: unit"):
        prompt_stability(null, unit="pairs")  # type: ignore[arg-type]


def test_whole_run_and_files(inputs: AblationInputs, tmp_path) -> None:
    res = prompt_ablation(inputs, n_perm=200)
    sens = sensitivity_runs(inputs, n_perm=200)
    assert set(sens) == {"no_truncated", "baseline_n10", "no_truncated_baseline_n10"}
    assert "c/m3" not in sens["no_truncated"].means.index and len(sens["no_truncated"].means) == 4
    assert (sens["baseline_n10"].means.drop(columns="baseline") == res.means.drop(columns="baseline")).all().all()
    assert not (sens["baseline_n10"].means["baseline"] == res.means["baseline"]).all()
    paths = write_prompt_outputs(res, tmp_path, sensitivity=sens)
    for name in ("table_ablation_prompt.csv", "table_ablation_prompt_null.csv", "summary_ablation_prompt.txt",
                 "tab_ablation_prompt.tex", "table_ablation_prompt_sensitivity_no_truncated_null.csv"):
        assert paths[name].is_file()
    text = paths["summary_ablation_prompt.txt"].read_text(encoding="utf-8")
    # the reproduction comes first and unchanged; the sensitivity analyses follow, labelled
    assert text.index("# Prompt Paraphrase Sensitivity") == 0
    assert text.index("Beyond the paper") > text.index("Off-diagonal pairs clearing both bars jointly")
    assert "without c/m3" in text and "How the conclusions change" in text
