"""Inputs of the three ablations and the per-model aggregates they share (spec 1.3, 2, 8-10).

All per-model means follow the reference's aggregation exactly: judges are averaged within a
generation (an exact integer sum divided by the number of judge rows, duplicates counted), the
per-generation table is in generation_id order, and generations are averaged per group with
pandas' Kahan-compensated ``groupby().mean()`` (:func:`._exact.grouped_mean`). That makes the means
bit-identical to the reported tables, so ties between models (which decide ranks) are the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import alienbench_data as ab

from ._exact import grouped_mean

__all__ = [
    "AblationInputs",
    "GenerationTable",
    "generation_table",
    "load_ablation_inputs",
]

DIMENSIONS: tuple[str, ...] = tuple(ab.DIMENSIONS)
DIM_COLUMNS: tuple[str, ...] = tuple(ab.DIM_COLUMNS)
_GEN_COLUMNS = ("generation_id", "model", "condition", "sample_index", "in_paraphrase_reference", "quality_flags")


@dataclass(frozen=True)
class AblationInputs:
    """Score and generation rows the ablations read.

    Attributes
    ----------
    R : DataFrame
        Main-study score rows (one per generation x judge; ``model``, ``condition``, ``judge``,
        ``ward_score``, ``dim_*``), the input of the feature and judge ablations.
    paraphrase : DataFrame
        Paraphrase-split score rows (5 paraphrases, sample_index < 10).
    generations : DataFrame
        Main and paraphrase generation rows: generation_id, model, condition, sample_index,
        in_paraphrase_reference, quality_flags.
    data_dir : Path or None
        The dataset folder they came from.
    """

    R: pd.DataFrame
    paraphrase: pd.DataFrame
    generations: pd.DataFrame
    data_dir: Path | None = None


def _gen_subset(g: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in _GEN_COLUMNS if c in g.columns]
    return g[cols]


def load_ablation_inputs(source: object = None) -> AblationInputs:
    """Ablation inputs from a dataset folder, an ``analysis.data.Inputs`` or an :class:`AblationInputs`.

    Parameters
    ----------
    source : path, Inputs, AblationInputs or None
        A built dataset folder (None: ``$ALIENBENCH_DATA`` or ``./alienbench``), or inputs already
        loaded by the main analysis (their paraphrase generations are then read from its
        ``data_dir``).
    """
    if isinstance(source, AblationInputs):
        return source
    if hasattr(source, "R") and hasattr(source, "data_dir"):  # analysis.data.Inputs
        data_dir = Path(source.data_dir)
        has_para = bool(ab.manifest_of(data_dir).files_of("scores", "paraphrase"))
        para = source.paraphrase
        if para is None:
            para = ab.load("scores", "paraphrase", data_dir=data_dir) if has_para else source.R.iloc[:0]
        gens = _gen_subset(source.generations)
        if has_para:
            gens = pd.concat([gens, _gen_subset(ab.load("generations", "paraphrase", data_dir=data_dir))],
                             ignore_index=True)
        return AblationInputs(R=source.R, paraphrase=para, generations=gens, data_dir=data_dir)
    if source is not None and not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"load_ablation_inputs: source must be a dataset folder path, analysis.data.Inputs or "
                        f"AblationInputs; got {type(source).__name__}")
    from alienbench_data.loader import resolve_data_dir

    root = resolve_data_dir(source)
    manifest = ab.manifest_of(root)
    scores = ab.load("scores", "main", data_dir=root)
    gens = _gen_subset(ab.load("generations", "main", data_dir=root))
    para = scores.iloc[:0]
    if manifest.files_of("scores", "paraphrase"):  # a dataset without the paraphrase split: no prompt ablation
        para = ab.load("scores", "paraphrase", data_dir=root)
        gens = pd.concat([gens, _gen_subset(ab.load("generations", "paraphrase", data_dir=root))], ignore_index=True)
    return AblationInputs(R=scores, paraphrase=para, generations=gens, data_dir=Path(root))


@dataclass(frozen=True)
class GenerationTable:
    """Per-generation judge sums in generation_id order (the reference's A1 order).

    Attributes
    ----------
    generation_id, model, condition : ndarray of str, shape (G,)
    judges : tuple of str
        Judges present, alphabetical (column order of ``ward_by_judge``).
    dim_sums : ndarray, shape (G, 10)
        Sum over judge rows of each dim_<d> (dimension order).
    n_rows : ndarray, shape (G,)
        Number of judge rows of the generation (a duplicated row counts twice).
    ward_by_judge, n_by_judge : ndarray, shape (G, n_judges)
        Sum of ward_score and number of rows per (generation, judge).
    """

    generation_id: np.ndarray
    model: np.ndarray
    condition: np.ndarray
    judges: tuple[str, ...]
    dim_sums: np.ndarray
    n_rows: np.ndarray
    ward_by_judge: np.ndarray
    n_by_judge: np.ndarray

    @property
    def ward_sums(self) -> np.ndarray:
        return self.ward_by_judge.sum(axis=1)

    def models(self) -> tuple[str, ...]:
        """Models present, alphabetical."""
        return tuple(sorted(set(self.model.tolist())))

    def group_means(self, per_generation: np.ndarray, keys: tuple[str, ...] = ("model",)) -> pd.DataFrame | pd.Series:
        """Kahan group means (pandas ``groupby().mean()``) of per-generation values over ``keys``.

        ``per_generation`` has shape (G,) or (G, K); the result is indexed by the sorted key
        combinations present (a Series for one key and 1-D input).
        """
        key_arrays = [getattr(self, k) for k in keys]
        frame = pd.DataFrame({k: a for k, a in zip(keys, key_arrays, strict=True)})
        codes, uniques = pd.MultiIndex.from_frame(frame).factorize(sort=True) if len(keys) > 1 else \
            pd.factorize(key_arrays[0], sort=True)
        means = grouped_mean(per_generation, codes, len(uniques))
        index = uniques if len(keys) > 1 else pd.Index(uniques, name=keys[0])
        if isinstance(index, pd.MultiIndex):
            index = index.set_names(list(keys))
        if means.ndim == 1:
            return pd.Series(means, index=index)
        return pd.DataFrame(means, index=index)


def generation_table(scores: pd.DataFrame) -> GenerationTable:
    """Per-generation sums of the score rows, sorted by generation_id (code-point order).

    Raises
    ------
    KeyError
        If a needed column is missing.
    ValueError
        If a generation's rows disagree on model or condition.
    """
    need = ["generation_id", "model", "condition", "judge", "ward_score", *DIM_COLUMNS]
    missing = [c for c in need if c not in scores.columns]
    if missing:
        raise KeyError(f"generation_table: score rows lack {missing}; load them with "
                       "alienbench_data.load('scores', split)")
    gid = scores["generation_id"].to_numpy(dtype=object)
    codes, uniq = pd.factorize(gid, sort=True)
    G = len(uniq)
    first = np.full(G, -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    model = scores["model"].to_numpy(dtype=object)
    cond = scores["condition"].to_numpy(dtype=object)
    if G and ((model != model[first][codes]).any() or (cond != cond[first][codes]).any()):
        bad = uniq[np.flatnonzero((model != model[first][codes]) | (cond != cond[first][codes]))[0] % G]
        raise ValueError(f"generation_table: generation {bad!r} has rows with different model/condition; "
                         "fix the score rows so each generation belongs to one cell")
    judges = tuple(sorted(set(scores["judge"].tolist())))
    jcode = pd.Index(judges).get_indexer(scores["judge"].to_numpy(dtype=object))
    dims = scores[list(DIM_COLUMNS)].fillna(0).to_numpy(dtype=np.float64)
    dim_sums = np.zeros((G, dims.shape[1]))
    np.add.at(dim_sums, codes, dims)
    n_rows = np.bincount(codes, minlength=G).astype(np.float64)
    flat = codes * len(judges) + jcode
    ward = scores["ward_score"].to_numpy(dtype=np.float64)
    wj = np.bincount(flat, weights=ward, minlength=G * len(judges)).reshape(G, len(judges))
    nj = np.bincount(flat, minlength=G * len(judges)).reshape(G, len(judges)).astype(np.float64)
    return GenerationTable(generation_id=np.asarray(uniq, dtype=object), model=model[first], condition=cond[first],
                           judges=judges, dim_sums=dim_sums, n_rows=n_rows, ward_by_judge=wj, n_by_judge=nj)
