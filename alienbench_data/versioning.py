"""Append-only versions: add new rows as new files, chain the manifests, swap in atomically.

A new version is staged in a sibling folder: every released file is hard-linked (or, across
file systems, copied) unchanged, the new data files, the new manifest and the regenerated card
are written, and the staged folder is renamed into place. Released files are verified against
the manifest before and after; any refusal leaves the dataset untouched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from . import card as card_mod
from .build import data_file_path
from .config import judge_config
from .errors import AlienbenchError, DatasetError, Problem
from .io import DIR_MODE, sha256_file, swap_dir_into_place, write_parquet
from .manifest import FileEntry, Manifest, current_manifest, parse_version, verify_chain, verify_files
from .schema import DIM_COLUMNS, DIMENSIONS, FEATURES, PRIMARY_KEYS, SPLITS_OF

__all__ = ["RefusedError", "append_version", "dataset_lock", "next_version"]


class RefusedError(AlienbenchError):
    """An append was refused; the dataset was not changed."""


def next_version(version: str, part: str = "minor") -> str:
    major, minor, patch = parse_version(version)
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    if part == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ValueError(f"next_version: part={part!r}; use 'major', 'minor' or 'patch'")


@contextlib.contextmanager
def dataset_lock(root: Path) -> Iterator[None]:
    """Exclusive lock beside the dataset folder (two appends never interleave)."""
    lock = root.parent / f".{root.name}.lock"
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        pid = lock.read_text().strip() if lock.exists() else ""
        alive = False
        if pid.isdigit():
            try:
                os.kill(int(pid), 0)
                alive = True
            except OSError:
                alive = False
        if alive:
            raise RefusedError(f"append_version: {root} is locked by process {pid}; wait for it to finish") from None
        lock.unlink(missing_ok=True)  # stale lock of a killed run
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield
    finally:
        lock.unlink(missing_ok=True)


def _check_new_tables(tables: Mapping[str, Mapping[str, pd.DataFrame]], manifest: Manifest,
                      root: Path) -> list[Problem]:
    problems: list[Problem] = []
    for config, splits in tables.items():
        if config not in FEATURES:
            problems.append(Problem(config, None, None, f"unknown config {config!r}"))
            continue
        for split, df in splits.items():
            where = f"{config}/{split}"
            if split not in SPLITS_OF[config]:
                problems.append(Problem(where, None, None, f"{config} has no split {split!r}"))
            missing = [c for c in FEATURES[config] if c not in df.columns and c != "added_in_version"]
            if missing:
                problems.append(Problem(where, None, ",".join(missing), "missing columns"))
            dup = df.duplicated(list(PRIMARY_KEYS[config]))
            for i in list(df.index[dup])[:5]:
                problems.append(Problem(where, int(i), ",".join(PRIMARY_KEYS[config]), "duplicate key"))
    if problems:
        return problems

    gens = pd.concat(list(tables.get("generations", {}).values()) or [pd.DataFrame(columns=["generation_id"])])
    scores = pd.concat(list(tables.get("scores", {}).values()) or [pd.DataFrame(columns=["generation_id"])])
    judg = pd.concat(list(tables.get("judgments", {}).values()) or [pd.DataFrame(columns=["generation_id"])])
    if gens.empty:
        return [Problem("generations", None, None, "nothing to append")]

    existing_models = set(manifest.models)
    for f in manifest.files_of("generations"):
        existing_models |= set(pd.read_parquet(root / f.path, columns=["model"])["model"])
    clash = sorted(set(gens["model"]) & existing_models)
    if clash:
        problems.append(Problem("generations", None, "model", f"model {clash[0]!r} is already in the dataset",
                                "submit under a new model name"))
    existing_ids: set[str] = set()
    for f in manifest.files_of("generations"):
        existing_ids |= set(pd.read_parquet(root / f.path, columns=["generation_id"])["generation_id"])
    reused = gens["generation_id"].isin(existing_ids)
    for i in list(gens.index[reused])[:5]:
        problems.append(Problem("generations", int(i), "generation_id", "id already in the dataset"))

    judges = judge_config().judge_aliases
    if scores.empty:
        problems.append(Problem("scores", None, None, "no judge scores: every generation must be judged"))
        return problems
    per_gen = scores.groupby("generation_id")["judge"].agg(lambda s: set(s))
    for gid in gens["generation_id"]:
        got = per_gen.get(gid, set())
        if set(judges) - got:
            problems.append(Problem("scores", None, "judge", f"generation {gid} lacks judges "
                                    f"{sorted(set(judges) - got)}: judging is incomplete",
                                    "finish the run (it resumes from its journal) before appending"))
            if len(problems) > 20:
                break
    orphans = ~scores["generation_id"].isin(gens["generation_id"])
    for i in list(scores.index[orphans])[:5]:
        problems.append(Problem("scores", int(i), "generation_id", "references no appended generation"))
    bad_sum = scores["ward_score"] != scores[list(DIM_COLUMNS)].sum(axis=1)
    for i in list(scores.index[bad_sum])[:5]:
        problems.append(Problem("scores", int(i), "ward_score", "does not equal the sum of the labels"))
    wrong_cfg = scores["judge_config_sha256"] != manifest.judge_config_sha256
    for i in list(scores.index[wrong_cfg])[:5]:
        problems.append(Problem("scores", int(i), "judge_config_sha256",
                                "judged with another judge configuration than the dataset's"))
    if not judg.empty:
        n = judg.groupby(["generation_id", "judge"]).size()
        if (n != len(DIMENSIONS)).any() or len(n) != len(scores):
            problems.append(Problem("judgments", None, "feature",
                                    "judgments must hold 10 feature rows per scored (generation, judge)"))
    return problems


def append_version(
    data_dir: Path | str,
    tables: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    tag: str,
    note: str,
    version: str | None = None,
    models: tuple[str, ...] | None = None,
) -> Manifest:
    """Add ``tables`` (config -> split -> rows) to the dataset as a new version.

    Refuses (``RefusedError``/``DatasetError``, dataset untouched) when a released file fails its
    checksum, the manifest chain is broken, the judge configuration differs from the dataset's,
    a model or generation id is already present, or judging is incomplete.

    Parameters
    ----------
    tag : str
        File-name tag of the new data files (e.g. a model slug): ``v<version>-<tag>.parquet``.
    note : str
        One line recorded in the manifest and the card's version table.
    version : str, optional
        Defaults to the next minor version.
    models : tuple of str, optional
        Models this version adds (default: the models of the appended generations).
    """
    root = Path(data_dir)
    with dataset_lock(root):
        manifest = current_manifest(root)
        problems = verify_chain(root) + verify_files(root, manifest)
        if problems:
            raise DatasetError(problems, context="append_version: refused, the released files do not match "
                               "their manifest (tampered or corrupted); nothing was changed")
        if manifest.judge_config_sha256 != judge_config().sha256:
            raise RefusedError(
                f"append_version: the dataset was judged with judge configuration {manifest.judge_config_sha256[:12]}"
                f"... but this package has {judge_config().sha256[:12]}...; scores would not be comparable. "
                "Use the alienbench version that built this dataset."
            )
        problems = _check_new_tables(tables, manifest, root)
        if problems:
            raise DatasetError(problems, context="append_version: refused; nothing was changed")
        new_version = version or next_version(manifest.version)
        if parse_version(new_version) <= parse_version(manifest.version):
            raise RefusedError(f"append_version: version {new_version} is not after the current {manifest.version}")
        safe_tag = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in tag)
        tables = {c: {s: df.assign(added_in_version=new_version) for s, df in sp.items()} for c, sp in tables.items()}
        new_models = models or tuple(sorted(pd.concat(list(tables["generations"].values()))["model"].unique()))

        stage = Path(tempfile.mkdtemp(prefix=f".{root.name}.stage-", dir=root.parent))
        os.chmod(stage, DIR_MODE)
        try:
            _link_tree(root, stage)
            entries = []
            for config, splits in tables.items():
                for split, df in splits.items():
                    rel_path = data_file_path(config, split, new_version, safe_tag)
                    if (stage / rel_path).exists():
                        raise RefusedError(f"append_version: {rel_path} already exists; released files are never "
                                           "rewritten")
                    write_parquet(df.reset_index(drop=True), FEATURES[config], stage / rel_path)
                    entries.append(FileEntry(rel_path, sha256_file(stage / rel_path),
                                             (stage / rel_path).stat().st_size, len(df), config, split, new_version))
            new_manifest = replace(
                manifest,
                version=new_version,
                files=tuple(manifest.files) + tuple(entries),
                previous_version=manifest.version,
                previous_manifest_sha256=manifest.sha256,
                models=tuple(sorted(set(manifest.models) | set(new_models))),
                notes=(note,),
            )
            new_manifest.write(stage)
            card_mod.write_card(stage, new_manifest)
            after = verify_files(stage, manifest) + verify_chain(stage)
            if after:
                raise DatasetError(after, context="append_version: staged copy failed verification; nothing changed")
            swap_dir_into_place(stage, root)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        after = verify_files(root, manifest)
        if after:  # pragma: no cover - would mean the file system changed our files under us
            raise DatasetError(after, context="append_version: released files changed during the swap")
        return new_manifest


def _link_tree(src: Path, dst: Path) -> None:
    """Reproduce ``src`` in ``dst``: hard links for files (identical bytes, same inode)."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        target = dst / rel
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.name == "README.md":
            continue  # regenerated for the new version
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
