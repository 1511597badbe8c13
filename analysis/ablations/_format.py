"""Writers shared by the ablations: CSVs in the reference's format, text tables, plain files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["fmt_table", "write_csv", "write_text"]


def fmt_table(df: pd.DataFrame | pd.Series, digits: int, **kwargs: object) -> str:
    """``df.round(digits).to_string()``, the reference's console layout of a table."""
    return df.round(digits).to_string(**kwargs)


def write_csv(df: pd.DataFrame, path: Path, *, index: bool) -> Path:
    """Write with pandas' defaults (floats as shortest repr, NaN as an empty field, bools as True/False)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=index, lineterminator="\n")
    return path


def write_text(text: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
