"""Load AlienBench tables from a local dataset folder or a pinned Hub revision.

``load`` reads exactly the files the manifest lists (never a glob), verifies their sha256 first,
and builds pandas frames or in-memory ``datasets`` objects straight from the parquet bytes: no
conversion cache is involved, so rows can never be stale after the folder changed. For the Hub,
``snapshot_download`` materialises the pinned revision in a folder named by its commit hash.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Literal, overload
from urllib.parse import urlparse

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import AlienbenchError, DatasetError, OfflineError, Problem
from .io import sha256_file
from .manifest import Manifest, current_manifest, list_versions, read_manifest
from .schema import CONFIGS, FEATURES, SPLITS_OF

__all__ = ["DEFAULT_DATA_DIR", "load", "manifest_of", "resolve_data_dir"]

DEFAULT_DATA_DIR = "alienbench"
_verified: dict[tuple[str, int, int, int], str] = {}  # (path, size, mtime_ns, inode) -> sha256


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    """``data_dir``, else ``$ALIENBENCH_DATA``, else ``./alienbench``."""
    return Path(data_dir or os.environ.get("ALIENBENCH_DATA") or DEFAULT_DATA_DIR)


def manifest_of(data_dir: str | os.PathLike[str] | None = None, version: str | None = None) -> Manifest:
    root = resolve_data_dir(data_dir)
    if not root.is_dir():
        raise AlienbenchError(
            f"load: no dataset folder at {root!s}. Build it with `alienbench build --out {root}` "
            "(from the authors' release), or pass data_dir=... / set ALIENBENCH_DATA."
        )
    if version is None:
        return current_manifest(root)
    v = version.removeprefix("v")
    if v not in list_versions(root):
        raise AlienbenchError(f"load: version {version!r} not in {root}; available: "
                              f"{', '.join(list_versions(root)) or 'none'}")
    return read_manifest(root, v)


def _verify(path: Path, sha256: str, rel_path: str) -> None:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    digest = _verified.get(key)
    if digest is None:
        digest = sha256_file(path)
        _verified[key] = digest
    if digest != sha256:
        raise DatasetError(
            Problem(rel_path, None, "sha256", f"content hash {digest[:12]}... does not match the manifest "
                    f"({sha256[:12]}...)", "the file was modified; restore it, or rebuild the dataset"),
            context="load: checksum verification failed",
        )


def _read_split(root: Path, manifest: Manifest, config: str, split: str, verify: bool) -> pa.Table:
    files = manifest.files_of(config, split)
    tables = []
    for f in files:
        path = root / f.path
        if not path.is_file():
            raise DatasetError(Problem(f.path, None, None, "listed in the manifest but missing",
                                       "restore the file or rebuild the dataset"), context="load")
        if verify:
            _verify(path, f.sha256, f.path)
        tables.append(pq.read_table(path))
    if not tables:
        return FEATURES[config].arrow_schema.empty_table()
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _hub_reachable(endpoint: str, timeout: float) -> bool:
    """Can we open a TCP connection to the Hub endpoint within ``timeout`` seconds (DNS included)?"""
    url = urlparse(endpoint)
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme == "https" else 80)
    ok: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                ok.append(True)
        except OSError:
            ok.append(False)

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout)
    return bool(ok and ok[0])


def _snapshot(repo_id: str, revision: str | None, *, timeout: float = 1.5) -> Path:
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    if not revision:
        raise AlienbenchError(
            f"load: repo_id={repo_id!r} needs a pinned revision, e.g. revision='v1.0.0' (a tag) or a commit "
            "hash; an unpinned revision could change under you."
        )
    try:  # a snapshot already cached for this exact revision works offline
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        pass
    # huggingface_hub reads HF_ENDPOINT / HF_HUB_OFFLINE once, at import: honour their current values.
    endpoint = (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
    offline = constants.HF_HUB_OFFLINE or (os.environ.get("HF_HUB_OFFLINE") or "").strip().lower() in (
        "1", "true", "yes", "on")
    if offline or not _hub_reachable(endpoint, timeout):
        why = ("offline mode is on (HF_HUB_OFFLINE)" if offline
               else f"the Hugging Face Hub ({endpoint}) is not reachable")
        raise OfflineError(
            f"load: {why} and revision {revision!r} of {repo_id!r} is not in the local cache. Either connect "
            "(and unset HF_HUB_OFFLINE) and retry, or build the dataset locally with "
            "`alienbench build --out alienbench` and call load(config, data_dir='alienbench')."
        )
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, endpoint=endpoint))
    except RevisionNotFoundError as exc:
        raise AlienbenchError(f"load: {repo_id!r} has no revision {revision!r}; pass a published tag such as "
                              "'v1.0.0' or a commit hash") from exc
    except RepositoryNotFoundError as exc:
        raise AlienbenchError(f"load: no dataset repo {repo_id!r} on {endpoint} (or it is private: set HF_TOKEN)"
                              ) from exc


@overload
def load(config: str = ..., split: str | None = ..., *, data_dir: str | os.PathLike[str] | None = ...,
         repo_id: str | None = ..., revision: str | None = ..., version: str | None = ...,
         as_: Literal["pandas"] = ..., verify: bool = ...) -> pd.DataFrame: ...
@overload
def load(config: str = ..., split: str | None = ..., *, data_dir: str | os.PathLike[str] | None = ...,
         repo_id: str | None = ..., revision: str | None = ..., version: str | None = ...,
         as_: Literal["datasets"], verify: bool = ...) -> object: ...


def load(
    config: str = "scores",
    split: str | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    repo_id: str | None = None,
    revision: str | None = None,
    version: str | None = None,
    as_: Literal["pandas", "datasets"] = "pandas",
    verify: bool = True,
) -> pd.DataFrame | object:
    """Load one config of the AlienBench dataset.

    Parameters
    ----------
    config : {"generations", "judgments", "scores", "participants"}
    split : {"main", "paraphrase", "human"} or None
        None returns every split: one DataFrame with a ``split`` column (pandas) or a
        ``datasets.DatasetDict``.
    data_dir : path, optional
        A built dataset folder (default ``$ALIENBENCH_DATA`` or ``./alienbench``).
    repo_id, revision : str, optional
        Load from the Hub instead, at a pinned tag or commit (offline: fails fast with advice).
    version : str, optional
        Load an earlier version of the folder (e.g. ``"1.0.0"``, the authors' release only).
    as_ : {"pandas", "datasets"}
    verify : bool
        Check every file's sha256 against the manifest before reading (cached per file state).
    """
    if config not in CONFIGS:
        raise ValueError(f"load: unknown config {config!r}; choose one of {', '.join(CONFIGS)}")
    splits = SPLITS_OF[config]
    if split is not None and split not in splits:
        raise ValueError(f"load: config {config!r} has no split {split!r}; choose one of {', '.join(splits)}")
    if as_ not in ("pandas", "datasets"):
        raise ValueError(f"load: as_={as_!r} is not supported; use 'pandas' or 'datasets'")
    if repo_id is not None:
        if data_dir is not None:
            raise ValueError("load: pass either data_dir or repo_id, not both")
        root = _snapshot(repo_id, revision)
    else:
        root = resolve_data_dir(data_dir)
    manifest = manifest_of(root, version)
    wanted = [split] if split else [s for s in splits if manifest.files_of(config, s)]
    tables = {s: _read_split(root, manifest, config, s, verify) for s in wanted}

    if as_ == "datasets":
        import datasets

        dss = {s: datasets.Dataset(t, split=datasets.NamedSplit(s)) for s, t in tables.items()}
        return dss[split] if split else datasets.DatasetDict(dss)
    if split:
        return tables[split].to_pandas()
    frames = [t.to_pandas().assign(split=s) for s, t in tables.items()]
    return pd.concat(frames, ignore_index=True) if frames else tables[wanted[0]].to_pandas()
