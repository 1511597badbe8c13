"""Analysis inputs from a built AlienBench dataset: the working table R and the per-generation table A1.

Everything is read through :func:`alienbench_data.load` (manifest-listed, checksummed parquet), never
from the raw release tree (spec 1.4 and 2). Column names follow the dataset schema (``model``,
``condition``, ``judge``); the writers map them to the authors' names (``subject_model``,
``prompt_variant``, ``judge_model``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import alienbench_data as ab
from alienbench_data.loader import resolve_data_dir

from .stats import per_generation

__all__ = [
    "DIMENSIONS",
    "DIM_COLUMNS",
    "Inputs",
    "load_inputs",
    "model_order",
    "token_table",
    "working_table",
]

DIMENSIONS: tuple[str, ...] = tuple(ab.DIMENSIONS)
DIM_COLUMNS: tuple[str, ...] = tuple(ab.DIM_COLUMNS)
R_COLUMNS: tuple[str, ...] = ("generation_id", "judge", "model", "condition", "ward_score", *DIM_COLUMNS)


def model_order(models: object) -> tuple[str, ...]:
    """Config model order, then any other (submitted) model alphabetically; only models present."""
    present = set(pd.unique(pd.Series(models, dtype=object)))
    config = [m for m in ab.benchmark().models if m in present]
    return (*config, *sorted(present - set(config)))


def _order_index(values: pd.Series, order: tuple[str, ...]) -> np.ndarray:
    pos = {v: i for i, v in enumerate(order)}
    return values.map(lambda v: pos.get(v, len(pos))).to_numpy()


def working_table(scores: pd.DataFrame, generations: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table R (spec 1.4): one row per (judge, generation) score record, duplicates kept.

    Columns: generation_id, judge, model, condition, ward_score (int), dim_<d> (0/1 int, missing -> 0).
    Rows: judge-major (judge alphabetical), then model in config order, condition in config order,
    then sample_index (the release's file-line order); no statistic depends on this order.
    """
    missing = [c for c in ("generation_id", "judge", "model", "condition", "ward_score") if c not in scores.columns]
    if missing:
        raise KeyError(f"working_table: score rows lack {missing}; load them with alienbench_data.load('scores', ...)")
    r = scores.reindex(columns=list(R_COLUMNS)).copy()
    for c in DIM_COLUMNS:
        r[c] = r[c].fillna(0).astype(np.int64)
    r["ward_score"] = r["ward_score"].astype(np.int64)
    key = pd.DataFrame({
        "j": r["judge"].to_numpy(dtype=object),
        "m": _order_index(r["model"], model_order(r["model"])),
        "c": _order_index(r["condition"], tuple(ab.benchmark().condition_ids)),
        "s": np.zeros(len(r), dtype=np.int64),
        "g": r["generation_id"].to_numpy(dtype=object),
    })
    if generations is not None and "sample_index" in generations.columns:
        si = generations.set_index("generation_id")["sample_index"]
        key["s"] = r["generation_id"].map(si).fillna(0).astype(np.int64).to_numpy()
    order = np.lexsort([key["g"].to_numpy(), key["s"].to_numpy(), key["c"].to_numpy(), key["m"].to_numpy(),
                        key["j"].to_numpy()])
    return r.iloc[order].reset_index(drop=True)


def token_table(generations: pd.DataFrame) -> pd.DataFrame:
    """Token input (spec 1.3): generation_id, model, condition, completion_tokens of every generation record."""
    t = generations[["generation_id", "model", "condition", "completion_tokens"]].copy()
    return t.loc[t["completion_tokens"].notna()].reset_index(drop=True)


@dataclass(frozen=True)
class Inputs:
    """Everything the main analysis reads, loaded once.

    Attributes
    ----------
    R : DataFrame
        Main-study working table (spec 1.4).
    A1 : DataFrame
        Per-generation judge means of R, sorted by generation_id (spec 2): generation_id, model,
        condition, ward_score, dim_*, n_judges.
    tokens : DataFrame
        generation_id, model, condition, completion_tokens of the main generations.
    generations : DataFrame
        The main-split generation rows as loaded.
    human : DataFrame
        Human-baseline score rows (last row per (judge, generation) kept, spec 7.1).
    paraphrase : DataFrame or None
        Paraphrase-split score rows (for the ablations), when present.
    data_dir : Path
        The dataset folder.
    dataset_version, manifest_sha256 : str
        Identity of the loaded dataset version.
    """

    R: pd.DataFrame
    A1: pd.DataFrame
    tokens: pd.DataFrame
    generations: pd.DataFrame
    human: pd.DataFrame
    paraphrase: pd.DataFrame | None
    data_dir: Path
    dataset_version: str
    manifest_sha256: str
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def models(self) -> tuple[str, ...]:
        """Models present in R: config order, then submitted models alphabetically."""
        return model_order(self.R["model"])

    @property
    def conditions(self) -> tuple[str, ...]:
        """Conditions present in R, in config order."""
        present = set(self.R["condition"].unique())
        return tuple(c for c in ab.benchmark().condition_ids if c in present)

    @property
    def judges(self) -> tuple[str, ...]:
        """Judges present in R, alphabetical."""
        return tuple(sorted(self.R["judge"].unique()))


def human_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """Human score rows with the last record per (judge, generation) kept (spec 7.1 'last wins')."""
    h = scores.loc[scores["model"] == "human/prolific-baseline"]
    return h.drop_duplicates(["judge", "generation_id"], keep="last").reset_index(drop=True)


def load_inputs(data_dir: str | os.PathLike[str] | None = None, *, verify: bool = True,
                version: str | None = None) -> Inputs:
    """Load R, A1, the token table and the human rows from a built dataset folder.

    Parameters
    ----------
    data_dir : path, optional
        Dataset folder (default ``$ALIENBENCH_DATA`` or ``./alienbench``).
    verify : bool
        Verify every file's sha256 against the manifest (keyword-only).
    version : str, optional
        An earlier dataset version to load.
    """
    root = resolve_data_dir(data_dir)
    manifest = ab.manifest_of(root, version)
    kw = {"data_dir": root, "verify": verify, "version": version}
    scores = ab.load("scores", "main", **kw)
    gens = ab.load("generations", "main", **kw)
    human = ab.load("scores", "human", **kw) if manifest.files_of("scores", "human") else scores.iloc[:0]
    para = ab.load("scores", "paraphrase", **kw) if manifest.files_of("scores", "paraphrase") else None
    R = working_table(scores, gens)
    A1 = per_generation(R)
    return Inputs(R=R, A1=A1, tokens=token_table(gens), generations=gens, human=human_rows(human),
                  paraphrase=para, data_dir=Path(root), dataset_version=manifest.version,
                  manifest_sha256=manifest.sha256)
