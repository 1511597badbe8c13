"""Shared, memoised results for the analysis tests (one reproduce run per test session).

Kept out of conftest.py (owned by the lead); the lead may turn ``reproduced_once`` into a session
fixture there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_CACHE: dict[str, object] = {}


def reproduced_once(built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    """``analysis.reproduce.reproduce`` on the built release (no figures/ablations), run once per session."""
    from analysis.reproduce import reproduce

    key = str(built_dataset)
    if key not in _CACHE:
        out = tmp_path_factory.mktemp("reproduced")
        _CACHE[key] = reproduce(built_dataset, out, check=False, figures=False, ablations=False, say=lambda s: None)
    return _CACHE[key]
