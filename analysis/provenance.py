"""Provenance of a results folder: dataset identity, code identity, package versions, parameters, UTC date.

Written as ``provenance.json`` beside the results by ``alienbench reproduce``.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as _md
import json
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import alienbench_data as ab

__all__ = ["PACKAGES", "git_state", "package_versions", "provenance", "write_provenance"]

PACKAGES = ("alienbench", "numpy", "scipy", "pandas", "pyarrow", "statsmodels", "krippendorff", "matplotlib",
            "datasets", "tqdm")
_REPO = Path(__file__).resolve().parent.parent


def package_versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed distribution versions (None when a package is not installed); plus Python."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for p in packages:
        try:
            out[p] = _md.version(p)
        except _md.PackageNotFoundError:
            out[p] = ab.__version__ if p == "alienbench" else None
    return out


def git_state(repo: Path = _REPO) -> dict[str, Any]:
    """Commit, branch and dirty flag of the checkout holding this code (all None outside git)."""
    def git(*args: str) -> str | None:
        try:
            res = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10,
                                 check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return res.stdout.strip() if res.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "branch": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "dirty": None if status is None else bool(status)}


def provenance(*, data_dir: str | Path, dataset_version: str, manifest_sha256: str,
               parameters: Mapping[str, Any], timings: Mapping[str, float] | None = None,
               extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance record of one run.

    Parameters
    ----------
    data_dir, dataset_version, manifest_sha256
        The loaded dataset folder and the identity of its manifest (``alienbench_data.manifest_of``).
    parameters
        Every parameter that changes a number (B, seeds, simulation counts, levels).
    timings
        Seconds per step (informational).
    """
    manifest = ab.manifest_of(data_dir, dataset_version)
    return {
        "tool": "alienbench reproduce",
        "created_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dataset": {
            "data_dir": str(Path(data_dir).resolve()),
            "version": dataset_version,
            "manifest_sha256": manifest_sha256,
            "judge_config_sha256": manifest.judge_config_sha256,
            "benchmark_sha256": manifest.benchmark_sha256,
            "models": list(manifest.models),
        },
        "code": git_state(),
        "packages": package_versions(),
        "platform": {"system": platform.system(), "machine": platform.machine(), "argv": sys.argv},
        "parameters": dict(parameters),
        "timings_seconds": {k: round(v, 3) for k, v in (timings or {}).items()},
        **(dict(extra) if extra else {}),
    }


def write_provenance(record: Mapping[str, Any], out_dir: str | Path) -> Path:
    """Write ``provenance.json`` (sorted keys, UTF-8) into ``out_dir``."""
    path = Path(out_dir) / "provenance.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n",
                    encoding="utf-8")
    return path
