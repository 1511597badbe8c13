"""File I/O helpers: atomic writes, deterministic parquet, hashing."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["atomic_write_bytes", "atomic_write_text", "sha256_file", "to_arrow", "write_parquet"]

# Fixed writer options: the same rows give the same bytes on every machine with the same pyarrow.
_PARQUET_OPTS = dict(
    compression="zstd",
    compression_level=9,
    row_group_size=1 << 20,
    write_statistics=True,
    use_dictionary=True,
    data_page_version="1.0",
    write_page_index=False,
    store_schema=True,
)


def sha256_file(path: Path | str, *, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()
DIR_MODE = 0o777 & ~_umask()


@contextlib.contextmanager
def _temp_beside(path: Path) -> Iterator[Path]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, FILE_MODE)  # mkstemp creates 0600; published files follow the umask
    try:
        yield tmp_path
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Write to a temp file beside ``path``, fsync, then rename over it (never half-written)."""
    path = Path(path)
    with _temp_beside(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    _fsync_dir(path.parent)


def atomic_write_text(path: Path | str, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def to_arrow(df: pd.DataFrame, features: datasets.Features) -> pa.Table:
    """Convert a frame to an Arrow table with exactly the declared columns and types.

    The schema carries the ``huggingface`` metadata key, so ``datasets`` reads the declared
    features back from the parquet file itself.
    """
    missing = [c for c in features if c not in df.columns]
    if missing:
        raise ValueError(f"to_arrow: columns {missing} are missing from the frame; add them first")
    schema = features.arrow_schema
    arrays = []
    for field in schema:
        col = df[field.name]
        values = col.tolist() if col.dtype == object or pa.types.is_list(field.type) else col
        arrays.append(pa.array(values, type=field.type, from_pandas=True))
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(df: pd.DataFrame, features: datasets.Features, path: Path | str) -> None:
    """Write ``df`` with the declared types embedded; atomic and byte-deterministic."""
    table = to_arrow(df, features)
    path = Path(path)
    with _temp_beside(path) as tmp:
        pq.write_table(table, tmp, **_PARQUET_OPTS)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    _fsync_dir(path.parent)


def swap_dir_into_place(new: Path, target: Path) -> None:
    """Replace folder ``target`` by ``new`` with renames; a crash leaves either the old or the new folder."""
    if not target.exists():
        os.replace(new, target)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
