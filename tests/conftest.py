"""Shared fixtures: the authors' release (when present), a dataset built from it, synthetic trees."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/synth.py and other test helpers

from synth import make_release  # noqa: E402


def _release_path() -> Path:
    env = os.environ.get("ALIENBENCH_RELEASE")
    return Path(env) if env else ROOT.parent / "shared" / "alienbench-release"


@pytest.fixture(autouse=True)
def _isolated_hf_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the user's Hugging Face cache or the network."""
    home = tmp_path_factory.getbasetemp() / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(home / "datasets"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(scope="session")
def release_dir() -> Path:
    path = _release_path()
    if not (path / "data").is_dir():
        pytest.skip(f"the authors' release is not at {path} (set ALIENBENCH_RELEASE)")
    return path


@pytest.fixture(scope="session")
def reported_dir(release_dir: Path) -> Path:
    """The authors' reported tables (read only to compare)."""
    return release_dir / "results"


@pytest.fixture(scope="session")
def built_dataset(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset folder built once per session from the real release. Do not modify it."""
    from alienbench_data.build import build

    out = tmp_path_factory.mktemp("built") / "alienbench"
    build(release_dir, out)
    return out


@pytest.fixture(scope="session")
def synthetic_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic release (2 models, full design). Do not modify it; copy it first."""
    return make_release(tmp_path_factory.mktemp("synth") / "release")


@pytest.fixture(scope="session")
def synthetic_dataset(synthetic_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from alienbench_data.build import build

    out = tmp_path_factory.mktemp("synth-built") / "alienbench"
    build(synthetic_release, out)
    return out
