"""The shared statistical primitives the ablations use, from :mod:`analysis.stats`.

Until ``analysis.stats`` (owned by the main-analysis package) is present in this checkout, minimal
private stand-ins with the same names and definitions (spec 3.5-3.7) are used. They go away once
``analysis.stats`` has landed; nothing outside this module refers to them.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pandas as pd
from scipy import stats as _st

if importlib.util.find_spec("analysis.stats") is not None:  # pragma: no cover - depends on the checkout
    from analysis.stats import (
        average_ranks,
        kalpha_stratified,
        kendall_tau_b,
        spearman,
        spearman_guarded,
    )
else:  # pragma: no cover - TEMPORARY stand-ins until analysis.stats is merged; delete this branch then
    import krippendorff

    def average_ranks(a: object) -> np.ndarray:
        """Mid-ranks along the last axis (``scipy.stats.rankdata(method="average")``)."""
        return _st.rankdata(np.asarray(a, dtype=np.float64), method="average", axis=-1)

    def spearman(x: object, y: object) -> tuple[float, float]:
        """Unguarded Spearman rho and t-based p (spec 3.5)."""
        xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if xa.size < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
            return float("nan"), float("nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = _st.spearmanr(xa, ya)
        return float(res.statistic), float(res.pvalue)

    def _shared(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        keys = sorted(set(a.dropna().index) & set(b.dropna().index))
        return a.loc[keys].to_numpy(dtype=np.float64), b.loc[keys].to_numpy(dtype=np.float64)

    def spearman_guarded(a: pd.Series, b: pd.Series) -> float:
        """SP-guarded rho (spec 3.5)."""
        xa, xb = _shared(a, b)
        if xa.size < 3 or np.unique(xa).size < 2 or np.unique(xb).size < 2:
            return float("nan")
        return float(_st.spearmanr(xa, xb).statistic)

    def kendall_tau_b(a: pd.Series, b: pd.Series) -> float:
        """Guarded tau-b (spec 3.6)."""
        xa, xb = _shared(a, b)
        if xa.size < 3 or np.ptp(xa) == 0 or np.ptp(xb) == 0:
            return float("nan")
        return float(_st.kendalltau(xa, xb, variant="b").statistic)

    def _kalpha(rows: pd.DataFrame, value: str, level: str, item: str, rater: str) -> float:
        mat = rows.pivot_table(index=rater, columns=item, values=value, aggfunc="mean").to_numpy(dtype=float)
        obs = mat[~np.isnan(mat)]
        if obs.size == 0 or np.all(obs == obs[0]):
            return 1.0
        if not np.any((~np.isnan(mat)).sum(axis=0) >= 2):
            return float("nan")
        return float(krippendorff.alpha(reliability_data=mat, level_of_measurement=level))

    def kalpha_stratified(rows: pd.DataFrame, value: str, level: str, *, subject: str = "model",
                          rater: str = "judge", item: str = "generation_id") -> dict[str, float | int]:
        """KALPHA-STRAT (spec 3.7); only the keys the ablations read are exact."""
        same = (rows[rater].astype(str) == rows[subject].astype(str)).to_numpy()
        cross = rows.loc[~same]
        return {
            "all": _kalpha(rows, value, level, item, rater),
            "cross_model": _kalpha(cross, value, level, item, rater) if len(cross) else float("nan"),
            "n_all": len(rows), "n_cross": len(cross), "n_same": int(same.sum()),
        }

__all__ = ["average_ranks", "kalpha_stratified", "kendall_tau_b", "spearman", "spearman_guarded"]
