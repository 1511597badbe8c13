"""The checksummed manifest of a dataset version, and the hash chain between versions.

Layout inside a dataset folder::

    manifests/v1.0.0.json      one immutable manifest per version
    manifests/v1.1.0.json      ... records the sha256 of v1.0.0's manifest

A manifest lists every data file (path, sha256, bytes, rows, config, split, version that added
it). ``manifest_sha256`` is the sha256 of the canonical JSON of the manifest without that key;
the next version stores it as ``previous_manifest_sha256``. The current version is the highest
semantic version present.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import canonical_json, sha256_text
from .errors import DatasetError, Problem
from .io import atomic_write_text, sha256_file

__all__ = [
    "MANIFEST_DIR",
    "FileEntry",
    "Manifest",
    "current_manifest",
    "list_versions",
    "manifest_path",
    "parse_version",
    "read_manifest",
    "verify_chain",
    "verify_files",
]

MANIFEST_DIR = "manifests"
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def parse_version(version: str) -> tuple[int, int, int]:
    m = _VERSION_RE.match(version)
    if not m:
        raise ValueError(f"parse_version: {version!r} is not a semantic version MAJOR.MINOR.PATCH")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def manifest_path(root: Path, version: str) -> Path:
    return Path(root) / MANIFEST_DIR / f"v{version}.json"


@dataclass(frozen=True)
class FileEntry:
    path: str  # POSIX path relative to the dataset root
    sha256: str
    bytes: int
    rows: int
    config: str
    split: str
    added_in_version: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "rows": self.rows,
            "config": self.config,
            "split": self.split,
            "added_in_version": self.added_in_version,
        }


@dataclass(frozen=True)
class Manifest:
    version: str
    files: tuple[FileEntry, ...]
    previous_version: str | None
    previous_manifest_sha256: str | None
    judge_config_sha256: str
    benchmark_sha256: str
    models: tuple[str, ...]
    notes: tuple[str, ...] = ()
    source: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {
            "dataset": "alienbench",
            "version": self.version,
            "previous_version": self.previous_version,
            "previous_manifest_sha256": self.previous_manifest_sha256,
            "judge_config_sha256": self.judge_config_sha256,
            "benchmark_sha256": self.benchmark_sha256,
            "models": list(self.models),
            "notes": list(self.notes),
            "source": self.source,
            "files": [f.to_dict() for f in sorted(self.files, key=lambda f: f.path)],
        }

    @property
    def sha256(self) -> str:
        return sha256_text(canonical_json(self.body()))

    def to_json(self) -> str:
        return json.dumps({**self.body(), "manifest_sha256": self.sha256}, indent=2, ensure_ascii=False) + "\n"

    def files_of(self, config: str, split: str | None = None) -> list[FileEntry]:
        return [f for f in sorted(self.files, key=lambda f: f.path)
                if f.config == config and (split is None or f.split == split)]

    def rows(self, config: str, split: str) -> int:
        return sum(f.rows for f in self.files_of(config, split))

    def write(self, root: Path) -> Path:
        path = manifest_path(root, self.version)
        atomic_write_text(path, self.to_json())
        return path

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Manifest:
        return cls(
            version=d["version"],
            files=tuple(FileEntry(**f) for f in d["files"]),
            previous_version=d.get("previous_version"),
            previous_manifest_sha256=d.get("previous_manifest_sha256"),
            judge_config_sha256=d["judge_config_sha256"],
            benchmark_sha256=d["benchmark_sha256"],
            models=tuple(d.get("models", ())),
            notes=tuple(d.get("notes", ())),
            source=d.get("source", {}),
        )


def list_versions(root: Path) -> list[str]:
    mdir = Path(root) / MANIFEST_DIR
    if not mdir.is_dir():
        return []
    versions = []
    for p in mdir.glob("v*.json"):
        v = p.stem[1:]
        if _VERSION_RE.match(v):
            versions.append(v)
    return sorted(versions, key=parse_version)


def read_manifest(root: Path, version: str) -> Manifest:
    path = manifest_path(root, version)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        m = Manifest.from_dict(d)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DatasetError(
            Problem(str(path), None, None, f"unreadable manifest ({exc})",
                    "rebuild with `alienbench build` or restore the file"),
            context="read_manifest",
        ) from exc
    if d.get("manifest_sha256") != m.sha256:
        raise DatasetError(
            Problem(str(path), None, "manifest_sha256",
                    f"stored {d.get('manifest_sha256')!r} but content hashes to {m.sha256!r}",
                    "the manifest was edited; restore it from the published version"),
            context="read_manifest",
        )
    if m.version != version:
        raise DatasetError(Problem(str(path), None, "version",
                                   f"file name says {version} but content says {m.version}"),
                           context="read_manifest")
    return m


def current_manifest(root: Path) -> Manifest:
    versions = list_versions(root)
    if not versions:
        raise DatasetError(
            Problem(str(Path(root) / MANIFEST_DIR), None, None, "no manifest found",
                    "is this a dataset folder? build one with `alienbench build --out DIR`"),
            context="current_manifest",
        )
    return read_manifest(root, versions[-1])


def verify_files(root: Path, manifest: Manifest, *, configs: set[str] | None = None) -> list[Problem]:
    """Check every listed data file exists with the recorded sha256 and size."""
    problems = []
    for f in manifest.files:
        if configs is not None and f.config not in configs:
            continue
        p = Path(root) / f.path
        if not p.is_file():
            problems.append(Problem(f.path, None, None, "listed in the manifest but missing",
                                    "restore it from the published dataset"))
            continue
        size = p.stat().st_size
        if size != f.bytes:
            problems.append(Problem(f.path, None, "bytes", f"size {size} != manifest {f.bytes}",
                                    "the file was changed; restore the released file"))
            continue
        digest = sha256_file(p)
        if digest != f.sha256:
            problems.append(Problem(f.path, None, "sha256", f"sha256 {digest[:12]}... != manifest "
                                    f"{f.sha256[:12]}...", "the file was changed; restore the released file"))
    return problems


def verify_chain(root: Path) -> list[Problem]:
    """Each version's manifest must record its predecessor's hash and keep its files unchanged."""
    problems: list[Problem] = []
    versions = list_versions(root)
    prev: Manifest | None = None
    for v in versions:
        try:
            m = read_manifest(root, v)
        except DatasetError as exc:
            problems.extend(exc.problems)
            prev = None
            continue
        where = str(manifest_path(Path("."), v))
        if prev is None:
            if m.previous_manifest_sha256 is not None and v == versions[0]:
                problems.append(Problem(where, None, "previous_manifest_sha256",
                                        "first version must not point to a predecessor"))
        else:
            if m.previous_manifest_sha256 != prev.sha256 or m.previous_version != prev.version:
                problems.append(Problem(where, None, "previous_manifest_sha256",
                                        f"does not match v{prev.version}'s manifest hash",
                                        "the chain is broken; restore the released manifests"))
            old = {f.path: f for f in prev.files}
            new = {f.path: f for f in m.files}
            for path, f in old.items():
                if path not in new:
                    problems.append(Problem(where, None, "files",
                                            f"{path} of v{prev.version} dropped from v{v}"))
                elif new[path] != f:
                    problems.append(Problem(where, None, "files",
                                            f"{path} of v{prev.version} rewritten in v{v}",
                                            "released files are never rewritten; add new files"))
        prev = m
    return problems
