"""The shared statistical primitives the ablations use (from :mod:`analysis.stats`)."""

from __future__ import annotations

from analysis.stats import average_ranks, kalpha_stratified, kendall_tau_b, spearman, spearman_guarded

__all__ = ["average_ranks", "kalpha_stratified", "kendall_tau_b", "spearman", "spearman_guarded"]
