"""The exact vectorised machinery of the ablations (analysis/ablations/_exact.py).

Independent references: NumPy's own sequential ``Generator.permutation`` loop (values and the
generator state afterwards), ``scipy.stats.spearmanr`` / ``kendalltau`` called per draw, a pure-Python
Kahan loop (pandas' groupby-mean algorithm) and ``math.fsum``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from analysis.ablations._exact import (
    PermutationStream,
    buffered_mean,
    fresh_permutations,
    grouped_mean,
    kendall_rows,
    perm_kendall,
    perm_spearman,
    spearman_rows,
)

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _sequential(seed: int | np.random.Generator, sizes: list[tuple[int, int]]) -> tuple[list[np.ndarray], dict]:
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out = [np.array([rng.permutation(n) for _ in range(count)]).reshape(count, n) for count, n in sizes]
    return out, rng.bit_generator.state


def _expected_state(seed: int, consumed: int) -> dict:
    """State of default_rng(seed) after ``consumed`` 32-bit values (PCG64 low half first, high half buffered)."""
    rng = np.random.default_rng(seed)
    rng.bit_generator.advance(consumed // 2)
    state = rng.bit_generator.state
    if consumed % 2:
        word = int(rng.bit_generator.random_raw())
        state = rng.bit_generator.state
        state["has_uint32"], state["uinteger"] = 1, word >> 32
    return state


def _norm(state: dict) -> dict:
    state = dict(state)
    if not state["has_uint32"]:
        state["uinteger"] = 0
    return state


# --------------------------------------------------------------------------------------------
# permutation stream == sequential rng.permutation
# --------------------------------------------------------------------------------------------
@FAST
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40),
       counts=st.lists(st.integers(0, 700), min_size=1, max_size=4))
def test_stream_equals_sequential_permutation_loop(seed: int, n: int, counts: list[int]) -> None:
    ref, ref_state = _sequential(seed, [(c, n) for c in counts])
    stream = PermutationStream(seed)
    got = [stream.draw(c, n) for c in counts]
    for a, b in zip(ref, got, strict=True):
        np.testing.assert_array_equal(a, b)
    # the sequential loop leaves its generator exactly `consumed` 32-bit values further on
    assert _norm(_expected_state(seed, stream.consumed)) == _norm(ref_state)


@FAST
@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.tuples(st.integers(1, 300), st.integers(2, 15)),
                                                       min_size=2, max_size=5))
def test_stream_with_changing_lengths(seed: int, sizes: list[tuple[int, int]]) -> None:
    ref, _ = _sequential(seed, sizes)
    stream = PermutationStream(seed)
    for (count, n), want in zip(sizes, ref, strict=True):
        np.testing.assert_array_equal(stream.draw(count, n), want)


def test_stream_applies_to_any_array_like_numpy_permutation_of_values() -> None:
    y = np.array([4.9, 1.0, 4.9, 2.5, 7.0, 0.1, 3.3, 3.3, 8.0, 2.0])
    rng = np.random.default_rng(0)
    want = np.array([rng.permutation(y) for _ in range(500)])
    np.testing.assert_array_equal(y[PermutationStream(0).draw(500, y.size)], want)


def test_stream_continues_a_used_generator_including_its_buffered_half_word() -> None:
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    a.integers(0, 7)  # leaves a buffered 32-bit half in the bit generator
    b.integers(0, 7)
    assert a.bit_generator.state["has_uint32"] == 1
    want = np.array([a.permutation(10) for _ in range(300)])
    np.testing.assert_array_equal(PermutationStream(b).draw(300, 10), want)


def test_large_draw_is_chunked_but_identical() -> None:
    rng = np.random.default_rng(1)
    want = np.array([rng.permutation(10) for _ in range(40_000)])
    np.testing.assert_array_equal(PermutationStream(1).draw(40_000, 10), want)


def test_fresh_permutations_is_a_cached_prefix_of_the_stream() -> None:
    long = fresh_permutations(123, 3000, 7)
    short = fresh_permutations(123, 1000, 7)
    np.testing.assert_array_equal(long[:1000], short)
    rng = np.random.default_rng(123)
    np.testing.assert_array_equal(long, np.array([rng.permutation(7) for _ in range(3000)]))
    assert not long.flags.writeable


@pytest.mark.parametrize("bad", [True, 1.5, "0", None])
def test_stream_rejects_non_integer_seeds(bad: object) -> None:
    with pytest.raises(TypeError, match="PermutationStream: seed"):
        PermutationStream(bad)  # type: ignore[arg-type]


def test_stream_rejects_other_bit_generators() -> None:
    with pytest.raises(TypeError, match="PCG64"):
        PermutationStream(np.random.Generator(np.random.MT19937(0)))


def test_stream_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="count"):
        PermutationStream(0).draw(-1, 5)


# --------------------------------------------------------------------------------------------
# batched correlations == scipy, bit for bit
# --------------------------------------------------------------------------------------------
def _vec(n: int) -> st.SearchStrategy[np.ndarray]:
    # few distinct values so that ties are common
    return st.lists(st.integers(0, 6), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=float) / 3)


@FAST
@given(data=st.data(), n=st.integers(3, 12), seed=st.integers(0, 10_000))
def test_perm_correlations_equal_scipy_per_draw(data: st.DataObject, n: int, seed: int) -> None:
    x, y = data.draw(_vec(n)), data.draw(_vec(n))
    perms = PermutationStream(seed).draw(60, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for permute in ("first", "second"):
            if permute == "first":
                rho = [stats.spearmanr(x[p], y).statistic for p in perms]
                tau = [stats.kendalltau(x[p], y).statistic for p in perms]
            else:
                rho = [stats.spearmanr(x, y[p]).statistic for p in perms]
                tau = [stats.kendalltau(x, y[p]).statistic for p in perms]
            np.testing.assert_array_equal(perm_spearman(x, y, perms, permute=permute), np.array(rho, dtype=float))
            np.testing.assert_array_equal(perm_kendall(x, y, perms, permute=permute), np.array(tau, dtype=float))


@FAST
@given(data=st.data(), n=st.integers(3, 12), rows=st.integers(1, 20))
def test_row_correlations_equal_scipy(data: st.DataObject, n: int, rows: int) -> None:
    a = np.array([data.draw(_vec(n)) for _ in range(rows)])
    b = data.draw(_vec(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(spearman_rows(a, b), [stats.spearmanr(r, b).statistic for r in a])
        np.testing.assert_array_equal(spearman_rows(b, a), [stats.spearmanr(b, r).statistic for r in a])
        np.testing.assert_array_equal(kendall_rows(a, b), [stats.kendalltau(r, b).statistic for r in a])


@FAST
@given(x=st.lists(st.floats(-100, 100, allow_nan=False), min_size=3, max_size=15, unique=True))
def test_rank_correlation_of_a_ranking_with_itself_is_one(x: list[float]) -> None:
    v = np.sort(np.array(x))
    ident = np.arange(v.size)[None, :]
    assert perm_spearman(v, v, ident, permute="first")[0] == pytest.approx(1.0, abs=1e-15)
    assert perm_kendall(v, v, ident, permute="first")[0] == pytest.approx(1.0, abs=1e-15)
    rev = ident[:, ::-1]
    assert perm_spearman(v, v, rev, permute="first")[0] == pytest.approx(-1.0, abs=1e-15)


def test_known_values_hand_derived() -> None:
    # n = 10 without ties: rho = 1 - 6 sum d^2 / 990; swapping two neighbours gives d^2 sum 2
    x = np.arange(10.0)
    p = np.array([[1, 0, 2, 3, 4, 5, 6, 7, 8, 9]])
    assert perm_spearman(x, x, p, permute="first")[0] == pytest.approx(1 - 12 / 990, abs=1e-15)
    # one discordant pair out of 45: tau = 43/45
    assert perm_kendall(x, x, p, permute="first")[0] == pytest.approx(43 / 45, abs=1e-15)
    # tau-b with a tie in y: 5 concordant of 6 pairs, one tied in y -> 5 / sqrt(6 * 5)
    tau = kendall_rows(np.array([1.0, 2, 3, 4]), np.array([1.0, 1, 2, 3]))
    assert tau == pytest.approx(5 / math.sqrt(30), abs=1e-15)
    # Spearman with ties by hand: ranks (1, 2, 3, 4) vs (1.5, 1.5, 3, 4): sum d^2-free Pearson = 4.5 / sqrt(5 * 4.5)
    assert spearman_rows(np.array([1.0, 2, 3, 4]), np.array([1.0, 1, 2, 3])) == pytest.approx(
        4.5 / math.sqrt(5 * 4.5), abs=1e-15)


def test_constant_inputs_give_nan() -> None:
    p = PermutationStream(0).draw(5, 4)
    assert np.isnan(perm_spearman(np.ones(4), np.arange(4.0), p, permute="second")).all()
    assert np.isnan(perm_kendall(np.ones(4), np.arange(4.0), p, permute="second")).all()
    assert np.isnan(spearman_rows(np.ones(4), np.arange(4.0)))


# --------------------------------------------------------------------------------------------
# summation orders
# --------------------------------------------------------------------------------------------
def _kahan(values: list[float]) -> float:
    s = c = 0.0
    for v in values:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


@FAST
@given(vals=st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=200),
       groups=st.integers(1, 6), seed=st.integers(0, 1000))
def test_grouped_mean_equals_a_python_kahan_loop(vals: list[float], groups: int, seed: int) -> None:
    codes = np.random.default_rng(seed).integers(0, groups, len(vals))
    got = grouped_mean(np.array(vals), codes, groups)
    for g in range(groups):
        members = [v for v, c in zip(vals, codes, strict=True) if c == g]
        if members:
            assert got[g] == _kahan(members) / len(members)
            assert got[g] == pytest.approx(math.fsum(members) / len(members), abs=1e-12)
        else:
            assert np.isnan(got[g])


def test_grouped_mean_2d_matches_columns() -> None:
    rng = np.random.default_rng(5)
    v = rng.integers(0, 30, (50, 3)) / 3
    codes = rng.integers(0, 4, 50)
    both = grouped_mean(v, codes, 4)
    for j in range(3):
        np.testing.assert_array_equal(both[:, j], grouped_mean(v[:, j], codes, 4))


@FAST
@given(vals=st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=8192))
def test_buffered_mean_is_numpy_mean_below_one_buffer(vals: list[float]) -> None:
    assert buffered_mean(np.array(vals)) == np.mean(vals)


def test_buffered_mean_sums_numpy_buffers_in_order() -> None:
    x = np.random.default_rng(0).normal(size=20_000)
    want = (np.sum(x[:8192]) + np.sum(x[8192:16384]) + np.sum(x[16384:])) / x.size
    assert buffered_mean(x) == want
    assert buffered_mean(x) == pytest.approx(math.fsum(x) / x.size, abs=1e-15)
    assert np.isnan(buffered_mean(np.array([])))
