"""Feature (dimension) ablation (spec 9) on synthetic score rows.

Independent references: pandas two-step means, ``math.comb`` / ``itertools``, hand-built tie-break
cases, and the reference's sequential loops (``rng.permutation`` + ``scipy.stats``) for both nulls.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import alienbench_data as ab
from analysis.ablations._data import generation_table
from analysis.ablations.features import (
    best_subset_indices,
    feature_ablation,
    full_means,
    leave_one_out,
    min_k_null,
    min_k_summary,
    rank_preserving_subsets,
    subset_masks,
    subset_means,
    subset_search,
    write_feature_outputs,
)

DIMS = tuple(ab.DIMENSIONS)


def score_rows(seed: int = 0, n_models: int = 6, n_gen: int = 12, judges: tuple[str, ...] = ("j1", "j2", "j3"),
               drop_some: bool = False) -> pd.DataFrame:
    """Random 0/1 labels, models with different departure propensities per dimension."""
    rng = np.random.default_rng(seed)
    rows = []
    base = rng.random((n_models, len(DIMS)))
    for m in range(n_models):
        for g in range(n_gen):
            gid = f"g{rng.integers(0, 10**9):09d}-{m}-{g}"
            for j in judges:
                if drop_some and rng.random() < 0.1 and j != judges[0]:
                    continue  # a missing judge row
                dims = (rng.random(len(DIMS)) < base[m]).astype(np.int8)
                rows.append({"generation_id": gid, "model": f"p{m}/model-{m}", "condition": "baseline", "judge": j,
                             "ward_score": int(dims.sum()), **dict(zip(ab.DIM_COLUMNS, dims.tolist(), strict=True))})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return score_rows()


def test_subset_masks_enumerate_all_subsets_in_combination_order() -> None:
    masks, sizes = subset_masks(10)
    assert masks.shape == (1023, 10)
    assert [int((sizes == k).sum()) for k in range(1, 11)] == [math.comb(10, k) for k in range(1, 11)]
    want = [c for k in range(1, 11) for c in itertools.combinations(range(10), k)]
    assert [tuple(np.flatnonzero(m)) for m in masks] == want


@pytest.mark.parametrize("drop_some", [False, True])
def test_subset_means_equal_pandas_two_step_means(drop_some: bool) -> None:
    r = score_rows(seed=3, drop_some=drop_some)
    gt = generation_table(r)
    masks, _ = subset_masks(10)
    got = subset_means(gt, masks)
    for s in (0, 17, 500, 1022):
        cols = [ab.DIM_COLUMNS[i] for i in np.flatnonzero(masks[s])]
        w = r[cols].sum(axis=1)
        want = w.groupby([r["model"], r["generation_id"]]).mean().groupby(level=0).mean()
        np.testing.assert_allclose(got[s].to_numpy(), want.sort_index().to_numpy(), rtol=0, atol=1e-12)


def test_full_means_sorted_descending(rows: pd.DataFrame) -> None:
    f = full_means(generation_table(rows))
    assert (np.diff(f.to_numpy()) <= 0).all()
    want = rows.groupby(["model", "generation_id"])["ward_score"].mean().groupby(level=0).mean()
    np.testing.assert_allclose(f.sort_index().to_numpy(), want.sort_index().to_numpy(), rtol=0, atol=1e-12)


def sequential_loo_null(x: np.ndarray, y: np.ndarray, n_perm: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(0)  # a fresh seed-0 generator per dimension
    null = np.array([stats.spearmanr(rng.permutation(x), y).statistic for _ in range(n_perm)])
    lo, hi = np.percentile(null, [2.5, 97.5])
    return float(np.mean(null)), float(lo), float(hi)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_models=st.integers(3, 9))
def test_leave_one_out_rows_and_null_equal_sequential(seed: int, n_models: int) -> None:
    r = score_rows(seed=seed, n_models=n_models, n_gen=6)
    gt = generation_table(r)
    loo = leave_one_out(gt, n_perm=400)
    assert len(loo) == 10 and list(loo["dropped_dimension"]) == list(DIMS)
    p = subset_means(gt, 1.0 - np.eye(10))
    f = full_means(gt).reindex(p.index).to_numpy()
    for d in range(10):
        x = p[d].to_numpy()
        row = loo.iloc[d]
        if np.ptp(x) == 0 or np.ptp(f) == 0:
            assert np.isnan(row["null_rho_hi95"])
            continue
        mean, lo, hi = sequential_loo_null(x, f, 400)
        assert (row["null_rho_lo95"], row["null_rho_hi95"]) == (lo, hi)
        assert row["null_rho_mean"] == pytest.approx(mean, abs=1e-15)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert row["spearman_rho"] == pytest.approx(stats.spearmanr(x, f).statistic, abs=1e-15)
        # equal N per model and all judges present: MAD equals the pooled departure rate (spec 9.1)
        assert row["mad_vs_full"] == pytest.approx(row["departure_rate"], abs=1e-12)
        ranks_x, ranks_f = stats.rankdata(x), stats.rankdata(f)
        assert row["rank_changes"] == int((ranks_x != ranks_f).sum())
        assert row["rank_preserved"] == bool((ranks_x == ranks_f).all())


def test_best_subset_tie_break_uses_the_running_minimum_over_all_subsets() -> None:
    rho = np.array([0.90, 0.95, 0.95, 0.95])
    tau = np.array([0.8, 0.9, 0.9, np.nan])
    mad = np.array([0.10, 0.50, 0.30, 0.20])
    # subset 0 (not a best one) sets the running min MAD to 0.10, so the later ties never win
    assert best_subset_indices(rho, tau, mad) == (1, 1)
    # without that low-MAD subset first, a tie with a lower MAD than all scanned so far replaces the best
    assert best_subset_indices(rho[1:], tau[1:], mad[1:]) == (2, 0)
    assert best_subset_indices(np.array([np.nan]), np.array([np.nan]), np.array([1.0])) == (None, None)


def test_subset_search_table(rows: pd.DataFrame) -> None:
    gt = generation_table(rows)
    s = subset_search(gt)
    t = s.table
    assert list(t["k"]) == list(range(1, 11)) and list(t["n_subsets"]) == [math.comb(10, k) for k in range(1, 11)]
    assert t["best_rho"].iloc[-1] == pytest.approx(1.0) and t["min_mad"].iloc[-1] == 0.0
    ps = s.per_subset
    for k in (1, 4):
        sub = ps.loc[ps["k"] == k]
        row = t.loc[t["k"] == k].iloc[0]
        assert row["best_rho"] == sub["rho"].max() and row["best_tau"] == sub["tau"].max()
        assert row["n_rho_above_thresh"] == int((sub["rho"] >= 0.9).sum())
        assert row["n_tau_above_thresh"] == int((sub["tau"] >= 0.8).sum())
    # per-subset rho / tau equal scipy on the subset's means
    p = subset_means(gt, subset_masks(10)[0])
    f = full_means(gt).reindex(p.index).to_numpy()
    for i in (0, 9, 100, 700):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert ps["rho"].iat[i] == stats.spearmanr(p[i].to_numpy(), f).statistic
            assert ps["tau"].iat[i] == stats.kendalltau(p[i].to_numpy(), f).statistic
    hit = t.loc[t["best_rho"] >= 0.9, "k"]
    assert s.min_k_rho == (int(hit.min()) if len(hit) else -1)


def test_rank_preserving_subsets_at_smallest_k(rows: pd.DataFrame) -> None:
    s = subset_search(generation_table(rows))
    rp = rank_preserving_subsets(s)
    ps = s.per_subset
    k_min = int(ps.loc[ps["rank_preserved"], "k"].min())
    assert (rp["k"] == k_min).all()
    assert list(rp["subset"]) == list(ps.loc[ps["rank_preserved"] & (ps["k"] == k_min), "subset"])
    assert list(rp.columns) == ["subset", "k"]


def sequential_min_k(v: np.ndarray, n_draws: int, seed: int, n_dims: int, rt: float, tt: float) -> np.ndarray:
    """The reference's loop with its early stop, literally."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_draws):
        kr = kt = None
        for k in range(1, n_dims + 1):
            mr = mt = -np.inf
            for _ in range(math.comb(n_dims, k)):
                p = rng.permutation(v)
                if np.ptp(p) == 0:
                    continue
                mr = max(mr, stats.spearmanr(p, v).statistic)
                mt = max(mt, stats.kendalltau(p, v).statistic)
            if kr is None and mr >= rt:
                kr = k
            if kt is None and mt >= tt:
                kt = k
            if kr is not None and kt is not None:
                break
        out.append((kr or n_dims + 1, kt or n_dims + 1))
    return np.array(out)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n=st.integers(4, 9), n_dims=st.integers(2, 5),
       rt=st.sampled_from([0.5, 0.8, 0.9]), tt=st.sampled_from([0.4, 0.6, 0.8]), ties=st.booleans())
def test_min_k_null_equals_sequential_loop(seed: int, n: int, n_dims: int, rt: float, tt: float, ties: bool) -> None:
    v = np.sort(np.random.default_rng(seed % 997).integers(0, 4 if ties else 10**6, n).astype(float))[::-1]
    got = min_k_null(v, n_draws=25, seed=seed, n_dims=n_dims, rho_thresh=rt, tau_thresh=tt)
    want = sequential_min_k(v, 25, seed, n_dims, rt, tt)
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert list(got.columns) == ["min_k_rho_null", "min_k_tau_null"]


def test_min_k_summary_hand_values() -> None:
    null = pd.DataFrame({"min_k_rho_null": [1, 2, 3, 11, 11], "min_k_tau_null": [11, 11, 11, 11, 2]})
    s = min_k_summary(null, 2, -1).set_index("criterion")
    assert s.loc["rho", "p_value"] == 2 / 5 and s.loc["rho", "null_median"] == 3.0
    assert s.loc["rho", "null_p5"] == pytest.approx(1 + 0.2 * 1)  # type 7: h = 4 * 0.05 = 0.2
    assert np.isnan(s.loc["tau", "p_value"])  # observed never reached


def test_feature_ablation_files(rows: pd.DataFrame, tmp_path) -> None:
    res = feature_ablation(rows, n_perm=300, n_null=20)
    paths = write_feature_outputs(res, tmp_path)
    loo = pd.read_csv(paths["table_ablation_dimensions_loo.csv"])
    assert list(loo.columns) == ["dropped_dimension", "departure_rate", "spearman_rho", "null_rho_mean",
                                 "null_rho_lo95", "null_rho_hi95", "rho_above_null_hi95", "mad_vs_full",
                                 "rank_changes", "rank_preserved"]
    assert len(pd.read_csv(paths["table_ablation_dimensions_null_min_k.csv"])) == 20
    tex = paths["tab_ablation_dimensions.tex"].read_text(encoding="utf-8")
    assert tex.count("\\\\\n") >= 22 and "observed min $k=" in tex


def test_run_all_without_a_paraphrase_split(rows: pd.DataFrame, tmp_path) -> None:
    from analysis.ablations import AblationInputs, run_all

    gens = rows[["generation_id", "model", "condition"]].drop_duplicates().assign(
        sample_index=0, in_paraphrase_reference=False, quality_flags=[[]] * rows["generation_id"].nunique())
    res = run_all(AblationInputs(R=rows, paraphrase=rows.iloc[:0], generations=gens), tmp_path)
    assert res["prompt"] is None and "prompt" not in res["timings"]
    assert (tmp_path / "table_ablation_dimensions_loo.csv").is_file()
    assert (tmp_path / "table_ablation_judges_sizesweep.csv").is_file()
    assert not (tmp_path / "table_ablation_prompt.csv").exists()
