"""Exact, vectorised replicas of the reference's sequential loops (permutation streams, batched rank correlations).

The reference computes every permutation null with a Python loop::

    rng = np.random.default_rng(seed)
    for _ in range(B):
        null.append(scipy.stats.spearmanr(x, rng.permutation(y))[0])

This module reproduces such loops bit for bit, but in NumPy batches.

Why :class:`PermutationStream` is exact
---------------------------------------
``Generator.permutation(a)`` of a 1-D array of length ``n`` copies ``a`` and runs NumPy's
Fisher-Yates shuffle: for ``i = n-1, ..., 1`` it draws ``j = random_interval(i)`` and swaps
positions ``i`` and ``j``. ``random_interval(i)`` (``numpy/random/src/distributions``) computes the
smallest bit mask ``m >= i`` and repeats ``v = next_uint32() & m`` until ``v <= i`` (masked rejection).
``next_uint32`` of PCG64 splits each 64-bit output word into its low then its high 32-bit half and
keeps the unused half in the *bit generator state* (``has_uint32``/``uinteger``), so the sequence of
32-bit values continues seamlessly across calls. Successive permutations therefore consume one flat
stream of 32-bit values, which we obtain in bulk from ``bit_generator.random_raw`` (low half first).

Drawing ``B`` permutations then reduces to finding, for every slot ``i``, the next acceptable
32-bit value; we compute "next accepted position" arrays with a reversed ``minimum.accumulate``,
compose them into the per-permutation jump ``J[t]`` (start position of the next permutation) and
follow the chain ``t_{k+1} = J[t_k]`` by pointer doubling. ``tests/test_ablation_exact.py`` checks
equality with the sequential ``rng.permutation`` loop (values *and* the final generator state) for
random seeds, lengths and pre-consumed generators.

Why the batched correlations are exact
--------------------------------------
``scipy.stats.spearmanr(u, v)`` ranks both inputs and calls ``np.corrcoef``; element ``[1, 0]`` is
``((d_uv * (1/(n-1))) / sd_v) / sd_u`` with ``d_uv`` the dot product of the centred mid-ranks and
``sd_w = sqrt(d_ww * (1/(n-1)))``. Mid-ranks are multiples of 1/2 with mean ``(n+1)/2``, so every
centring, product and sum is exact in binary floating point and only the final three roundings
matter; :func:`spearman_rows` performs exactly those. ``scipy.stats.kendalltau`` (tau-b) returns
``clip(cmd / sqrt(tot - xtie) / sqrt(tot - ytie), -1, 1)`` with integer ``cmd`` (concordant minus
discordant pairs) and tie-pair counts; :func:`kendall_rows` does the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from ._stats import average_ranks

__all__ = [
    "PermutationStream",
    "buffered_mean",
    "fresh_permutations",
    "grouped_mean",
    "kendall_rows",
    "perm_kendall",
    "perm_spearman",
    "spearman_rows",
]

_NUMPY_BUFSIZE = 8192  # NumPy's default ufunc buffer size (np.getbufsize())
_CHUNK_PERMS = 16_384  # permutations per vectorised batch (keeps the work arrays in cache)


# --------------------------------------------------------------------------------------------
# the permutation stream
# --------------------------------------------------------------------------------------------
def _mask(i: int) -> int:
    m = i
    for s in (1, 2, 4, 8, 16, 32):
        m |= m >> s
    return m


class PermutationStream:
    """Successive ``Generator.permutation`` index arrays, drawn in vectorised batches.

    ``PermutationStream(seed).draw(B, n)`` returns the ``(B, n)`` index matrix ``P`` such that
    ``y[P[k]]`` equals the k-th of ``B`` sequential calls ``rng.permutation(y)`` on
    ``rng = np.random.default_rng(seed)`` (for any 1-D ``y`` of length ``n``). Further ``draw`` calls
    continue the same stream, exactly as further ``rng.permutation`` calls would (of any length).

    Parameters
    ----------
    seed : int or numpy.random.Generator
        A seed for a fresh ``default_rng`` (the reference's usage), or a PCG64-based Generator whose
        stream is continued (the Generator then belongs to the stream: it is advanced by whole
        64-bit words ahead of what the permutations consumed and must not be used afterwards).

    Attributes
    ----------
    consumed : int
        Number of 32-bit values the drawn permutations used (the sequential loop leaves its
        generator ``consumed // 2`` words further on, with ``consumed % 2`` half-words buffered).

    Notes
    -----
    Exactness is argued in the module docstring and tested against the sequential loop.
    """

    def __init__(self, seed: int | np.random.Generator) -> None:
        if isinstance(seed, np.random.Generator):
            bitgen = seed.bit_generator
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            bitgen = np.random.default_rng(int(seed)).bit_generator
        else:
            raise TypeError(f"PermutationStream: seed must be an int or a numpy Generator; got {type(seed).__name__}")
        if not isinstance(bitgen, np.random.PCG64):
            raise TypeError(f"PermutationStream: needs a PCG64 bit generator (NumPy's default); got "
                            f"{type(bitgen).__name__}. Use np.random.default_rng(seed).")
        self._bitgen = bitgen
        state = bitgen.state
        self._buf = np.empty(0, dtype=np.uint32)
        if state.get("has_uint32"):  # a buffered high half is the next 32-bit value
            self._buf = np.array([state["uinteger"]], dtype=np.uint32)
            state = dict(state)
            state["has_uint32"], state["uinteger"] = 0, 0
            bitgen.state = state
        self.consumed = 0

    def _extend(self, n_values: int) -> None:
        words = self._bitgen.random_raw((n_values + 1) // 2)
        halves = np.empty(2 * words.size, dtype=np.uint32)
        halves[0::2] = words & np.uint64(0xFFFFFFFF)
        halves[1::2] = words >> np.uint64(32)
        self._buf = np.concatenate([self._buf, halves])

    def draw(self, count: int, n: int) -> np.ndarray:
        """The next ``count`` permutations of length ``n`` as a ``(count, n)`` int64 index matrix."""
        count, n = int(count), int(n)
        if count < 0 or n < 0:
            raise ValueError(f"PermutationStream.draw: count and n must be >= 0; got count={count}, n={n}")
        if count == 0 or n < 2:  # NumPy draws nothing to shuffle 0 or 1 element
            return np.tile(np.arange(n, dtype=np.int64), (count, 1))
        if count > _CHUNK_PERMS:
            return np.concatenate([self.draw(min(_CHUNK_PERMS, count - k), n) for k in range(0, count, _CHUNK_PERMS)])
        slots = [(i, _mask(i)) for i in range(n - 1, 0, -1)]
        per_perm = sum((m + 1) / (i + 1) for i, m in slots)  # expected 32-bit values per permutation
        need = int(count * per_perm * 1.05) + 64 * n
        while True:
            if self._buf.size < need:
                self._extend(need - self._buf.size)
            out = self._try_draw(count, n, slots)
            if out is not None:
                return out
            need = 2 * self._buf.size

    def _try_draw(self, count: int, n: int, slots: list[tuple[int, int]]) -> np.ndarray | None:
        u = self._buf
        L = u.size
        n_slots = len(slots)
        fail = L + 1  # absorbing "ran out of values" position; positions > fail also mean failure
        size = L + n_slots + 2  # room for the +1 steps of always-accepting slots past the end
        itype = np.int32 if size < 2**31 - 1 else np.int64
        masked: dict[int, np.ndarray] = {}
        step: list[np.ndarray | None] = []  # per slot: t -> (next accepted position >= t) + 1; None = t + 1
        for i, m in slots:
            if m not in masked:
                masked[m] = u & np.uint32(m) if m > 255 else (u & np.uint32(m)).astype(np.uint8)
            if m == i:
                step.append(None)
                continue
            ok = masked[m] <= i
            acc = np.flatnonzero(ok).astype(itype)
            ext = np.full(acc.size + n_slots + 2, fail, dtype=itype)  # accepted position + 1, then "ran out"
            ext[:acc.size] = acc + 1
            before = np.empty(size, dtype=itype)  # number of accepted positions before t
            before[0] = 0
            np.cumsum(ok, out=before[1:L + 1])
            before[L + 1:] = acc.size + 1
            nxt = ext[before]
            step.append(nxt)
        # jump[t]: start of the next permutation when one starts at t (> L: the buffer ran out)
        jump = np.arange(L + 2, dtype=itype)  # + n_slots trivial steps stays < size
        for a in step:
            jump = jump + 1 if a is None else a[jump]
        np.minimum(jump, fail, out=jump)
        jump[L:] = fail
        # the chain of start positions t_{k+1} = jump[t_k]: sequential, on a memoryview (no copy)
        jm = memoryview(jump)
        starts_l = [0] * count
        t = 0
        for k in range(1, count):
            t = jm[t]
            starts_l[k] = t
        end = jm[t]
        if end > L:
            return None
        starts = np.asarray(starts_l, dtype=itype)
        # accepted values per slot, then NumPy's Fisher-Yates swaps (i <-> j for i = n-1, ..., 1), done on the
        # transposed (n, count) layout with flat take/put, which is much cheaper than 2-D fancy indexing
        perm_t = np.repeat(np.arange(n, dtype=np.int64), count).reshape(n, count)
        flat = perm_t.reshape(-1)
        base = np.arange(count, dtype=np.int64)
        p = starts
        for (i, m), a in zip(slots, step, strict=True):
            if a is not None:
                p = a[p] - 1  # the accepted position
            where_j = masked[m][p].astype(np.int64) * count + base
            tmp = perm_t[i].copy()
            perm_t[i] = flat.take(where_j)
            flat.put(where_j, tmp)
            p = p + 1
        perm = np.ascontiguousarray(perm_t.T)
        self._buf = self._buf[end:]
        self.consumed += int(end)
        return perm

_PREFIX_CACHE: dict[tuple[int, int], tuple[PermutationStream, np.ndarray]] = {}
_PREFIX_CACHE_MAX_ELEMS = 4_000_000  # ~32 MB of int64 per (seed, n)


def fresh_permutations(seed: int, count: int, n: int) -> np.ndarray:
    """The first ``count`` permutations (length ``n``) of a fresh ``default_rng(seed)``, as a read-only array.

    The reference starts a new seed-0 generator for every dimension-LOO and judge null and one
    seed-0 stream for the prompt matrix, so they all share a prefix of the same stream; it is
    drawn once per process and extended on demand (up to ~4 M indices per (seed, n), beyond which
    nothing is cached).
    """
    key = (int(seed), int(n))
    if int(count) * int(n) > _PREFIX_CACHE_MAX_ELEMS:
        return PermutationStream(int(seed)).draw(count, n)
    stream, perms = _PREFIX_CACHE.get(key, (None, None))
    if stream is None or perms is None:
        stream, perms = PermutationStream(int(seed)), np.empty((0, int(n)), dtype=np.int64)
    if perms.shape[0] < count:
        perms = np.concatenate([perms, stream.draw(count - perms.shape[0], n)])
        perms.setflags(write=False)
        _PREFIX_CACHE[key] = (stream, perms)
    return perms[:count]


# --------------------------------------------------------------------------------------------
# batched rank correlations (bit-exact replicas of scipy)
# --------------------------------------------------------------------------------------------
def _centred_ranks(a: np.ndarray) -> np.ndarray:
    r = average_ranks(a)
    return r - (a.shape[-1] + 1) / 2.0


def spearman_rows(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``scipy.stats.spearmanr(first[k], second[k]).statistic`` for every row k, bit for bit.

    Parameters
    ----------
    first, second : array_like, shape (..., n)
        Broadcast against each other along the leading axes (e.g. a ``(B, n)`` batch of permuted
        vectors against one ``(n,)`` reference).

    Returns
    -------
    ndarray
        rho = clip(((d_fs * r) / sd_s) / sd_f, -1, 1), r = 1/(n-1), d the dot product of centred
        mid-ranks and sd_w = sqrt(d_ww * r) (the ``np.corrcoef`` arithmetic). NaN where a row is
        constant, as scipy returns.
    """
    f = np.asarray(first, dtype=np.float64)
    s = np.asarray(second, dtype=np.float64)
    n = f.shape[-1]
    if s.shape[-1] != n:
        raise ValueError(f"spearman_rows: last axes differ ({n} vs {s.shape[-1]}); pass vectors of equal length")
    cf, cs = _centred_ranks(f), _centred_ranks(s)
    inv = np.true_divide(1, n - 1)
    d_fs = np.einsum("...i,...i->...", cf, cs)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd_f = np.sqrt(np.einsum("...i,...i->...", cf, cf) * inv)
        sd_s = np.sqrt(np.einsum("...i,...i->...", cs, cs) * inv)
        rho = ((d_fs * inv) / sd_s) / sd_f
    const = (np.ptp(f, axis=-1) == 0) | (np.ptp(s, axis=-1) == 0)
    rho = np.clip(rho, -1.0, 1.0)
    return np.where(const, np.nan, rho)


def perm_spearman(x: np.ndarray, y: np.ndarray, perms: np.ndarray, *,
                  permute: Literal["first", "second"]) -> np.ndarray:
    """rho of every permutation draw: ``spearmanr(x[p], y)`` (permute="first") or ``spearmanr(x, y[p])``.

    Equal, bit for bit, to ``spearman_rows`` on the permuted batch: mid-ranks are permutation
    equivariant (ranks(y[p]) = ranks(y)[p]) and the dot products are exact, so the ranks are computed
    once and gathered.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if permute not in ("first", "second"):
        raise ValueError(f"perm_spearman: permute must be 'first' or 'second'; got {permute!r}")
    n = x.size
    if y.size != n or perms.shape[-1] != n:
        raise ValueError(f"perm_spearman: x, y and the permutations need equal length; got {n}, {y.size}, "
                         f"{perms.shape[-1]}")
    cx, cy = _centred_ranks(x), _centred_ranks(y)
    inv = np.true_divide(1, n - 1)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.full(perms.shape[0], np.nan)
    sd_x = np.sqrt(np.dot(cx, cx) * inv)
    sd_y = np.sqrt(np.dot(cy, cy) * inv)
    if permute == "second":
        d = cy[perms] @ cx
    else:
        d = cx[perms] @ cy
    # spearmanr(first, second) = ((d * inv) / sd_second) / sd_first
    return np.clip(((d * inv) / sd_y) / sd_x, -1.0, 1.0)


def perm_kendall(x: np.ndarray, y: np.ndarray, perms: np.ndarray, *,
                 permute: Literal["first", "second"]) -> np.ndarray:
    """tau-b of every permutation draw: ``kendalltau(x[p], y)`` (permute="first") or ``kendalltau(x, y[p])``."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if permute not in ("first", "second"):
        raise ValueError(f"perm_kendall: permute must be 'first' or 'second'; got {permute!r}")
    iu, ju = np.triu_indices(n, 1)
    fixed, moved = (y, x) if permute == "first" else (x, y)
    # sign(moved[p_i] - moved[p_j]) from small integer ranks (2 x mid-rank), gathered per draw
    rank2 = (2 * average_ranks(moved)).astype(np.int16 if n < 16_000 else np.int64)
    rp = rank2[perms]
    a, b = rp[:, iu], rp[:, ju]
    s_m = (a > b).view(np.int8) - (a < b).view(np.int8)
    s_f = np.sign(fixed[iu] - fixed[ju]).astype(np.int8)
    cmd = np.einsum("ij,j->i", s_m, s_f, dtype=np.int64 if iu.size > 32_000 else np.int32)
    tot = n * (n - 1) // 2
    xt, yt = int(_tie_pairs(x)), int(_tie_pairs(y))
    if xt == tot or yt == tot:
        return np.full(perms.shape[0], np.nan)
    tau = cmd / np.sqrt(tot - xt) / np.sqrt(tot - yt)
    return np.minimum(1.0, np.maximum(-1.0, tau))


def _tie_pairs(a: np.ndarray) -> np.ndarray:
    """Number of tied pairs sum t(t-1)/2 per row."""
    srt = np.sort(a, axis=-1)
    eq = srt[..., 1:] == srt[..., :-1]
    # a run of t equal values has t-1 adjacent equalities and contributes t(t-1)/2 pairs:
    # count, for every position, the length of the equality run ending there
    run = np.zeros(eq.shape, dtype=np.int64)
    if eq.shape[-1]:
        run[..., 0] = eq[..., 0]
        for k in range(1, eq.shape[-1]):
            run[..., k] = np.where(eq[..., k], run[..., k - 1] + 1, 0)
    return run.sum(axis=-1)


def kendall_rows(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``scipy.stats.kendalltau(first[k], second[k]).statistic`` (tau-b) for every row k, bit for bit.

    tau_b = clip(cmd / sqrt(tot - xtie) / sqrt(tot - ytie), -1, 1) with cmd = sum over pairs i<j of
    sign(x_i - x_j) sign(y_i - y_j) (an integer), tot = n(n-1)/2 and xtie, ytie the tied-pair counts.
    NaN where a row is constant.
    """
    f = np.asarray(first, dtype=np.float64)
    s = np.asarray(second, dtype=np.float64)
    n = f.shape[-1]
    if s.shape[-1] != n:
        raise ValueError(f"kendall_rows: last axes differ ({n} vs {s.shape[-1]}); pass vectors of equal length")
    iu, ju = np.triu_indices(n, 1)
    sf = np.sign(f[..., iu] - f[..., ju]).astype(np.int8)
    ss = np.sign(s[..., iu] - s[..., ju]).astype(np.int8)
    cmd = np.einsum("...k,...k->...", sf, ss, dtype=np.int64)
    tot = n * (n - 1) // 2
    xt, yt = _tie_pairs(f), _tie_pairs(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = cmd / np.sqrt(tot - xt) / np.sqrt(tot - yt)
    tau = np.minimum(1.0, np.maximum(-1.0, tau))
    const = (xt == tot) | (yt == tot)
    return np.where(const, np.nan, tau)


# --------------------------------------------------------------------------------------------
# summation orders of the reference
# --------------------------------------------------------------------------------------------
def buffered_mean(x: np.ndarray) -> float:
    """Mean as the reference's buffered NumPy reduction computes it: pairwise sums of 8192-blocks, added in order.

    The reference's null means equal ``(sum(x[:8192]) + sum(x[8192:])) / n`` with NumPy's pairwise
    ``sum`` per block (its ufunc buffer size), which differs from ``np.mean`` (one pairwise sum) in
    the last bits for 10,000 draws. Checked against ``table_ablation_prompt_null.csv`` (30/30 bitwise).
    """
    a = np.asarray(x, dtype=np.float64).ravel()
    if a.size == 0:
        return float("nan")
    total = np.sum(a[:_NUMPY_BUFSIZE])
    for k in range(_NUMPY_BUFSIZE, a.size, _NUMPY_BUFSIZE):
        total = total + np.sum(a[k:k + _NUMPY_BUFSIZE])
    return float(total / a.size)


def grouped_mean(values: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group means with Kahan-compensated summation in row order, as pandas' ``groupby().mean()`` computes them.

    Parameters
    ----------
    values : ndarray, shape (N,) or (N, K)
        Rows in the order the reference sums them (generation_id order for A1 tables).
    codes : ndarray of int, shape (N,)
        Group code of each row, 0..n_groups-1.
    n_groups : int

    Returns
    -------
    ndarray, shape (n_groups,) or (n_groups, K)
        sum / count per group, with the running sum updated by Kahan's algorithm
        (``y = v - c; t = s + y; c = (t - s) - y; s = t``), which pandas' cython ``group_mean``
        uses. NaN for empty groups. The reported ablation means match this bit for bit
        (``table_ablation_prompt.csv``: 60/60 cells), whereas plain summation does not.
    """
    v = np.asarray(values, dtype=np.float64)
    squeeze = v.ndim == 1
    if squeeze:
        v = v[:, None]
    codes = np.asarray(codes, dtype=np.int64)
    if codes.shape[0] != v.shape[0]:
        raise ValueError(f"grouped_mean: {v.shape[0]} value rows but {codes.shape[0]} codes")
    # position of each row within its group (stable), then step through positions for all groups at once
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    within = np.empty(codes.size, dtype=np.int64)
    within[order] = np.arange(codes.size) - np.repeat(starts, counts)
    K = v.shape[1]
    s = np.zeros((n_groups, K))
    c = np.zeros((n_groups, K))
    grid = np.zeros((int(counts.max()) if counts.size else 0, n_groups, K))
    have = np.zeros(grid.shape[:2], dtype=bool)
    grid[within, codes] = v
    have[within, codes] = True
    for k in range(grid.shape[0]):
        h = have[k][:, None]
        y = grid[k] - c
        t = s + y
        c = np.where(h, (t - s) - y, c)
        s = np.where(h, t, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = s / counts[:, None]
    out[counts == 0] = np.nan
    return out[:, 0] if squeeze else out


def cumulative_offsets(sizes: Sequence[int]) -> np.ndarray:
    """[0, s0, s0+s1, ...] as int64."""
    return np.concatenate([[0], np.cumsum(np.asarray(sizes, dtype=np.int64))])
