"""alienbench_data.load(repo_id=..., revision=...) against the stub Hub: pinned, verified, fast offline."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import alienbench_data
from alienbench_data.errors import AlienbenchError, DatasetError, OfflineError
from alienbench_data.publish import publish
from tests.hub_stub import HubStub, append_version, closed_port_url, isolate_hf, make_dataset, serve_isolated

REPO = "alienbench-org/alienbench"
OFFLINE_LIMIT_S = 2.0  # issue 2: "offline it fails in under 2 s"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubStub]:
    yield from serve_isolated(monkeypatch, tmp_path / "hf_home")


@pytest.fixture
def published(tmp_path: Path, hub: HubStub) -> Path:
    """A dataset folder whose v1.0.0 and v1.1.0 are on the stub Hub (tags v1.0.0, v1.1.0)."""
    root = make_dataset(tmp_path / "ds")
    publish(root, repo_id=REPO, endpoint=hub.url, out=io.StringIO())
    append_version(root, "1.1.0")
    publish(root, repo_id=REPO, endpoint=hub.url, out=io.StringIO())
    return root


def _expected(root: Path, version: str, split: str) -> pd.DataFrame:
    from alienbench_data.manifest import read_manifest

    m = read_manifest(root, version)
    tables = [pq.read_table(root / f.path) for f in m.files_of("scores", split)]
    return pa.concat_tables(tables).to_pandas()


def test_load_pinned_tag_returns_that_versions_rows(published: Path, hub: HubStub) -> None:
    v1 = alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.0.0")
    pd.testing.assert_frame_equal(v1, _expected(published, "1.0.0", "main"))
    v11 = alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.1.0")
    pd.testing.assert_frame_equal(v11, _expected(published, "1.1.0", "main"))
    assert len(v11) > len(v1) and set(v11["added_in_version"]) == {"1.0.0", "1.1.0"}
    # the downloads went through the stub's resolve endpoint at the tagged commits
    tags = hub.repo(REPO).tags
    resolved = {r.path.split("/resolve/")[1].split("/")[0] for r in hub.of_kind("resolve")}
    assert resolved == {tags["v1.0.0"], tags["v1.1.0"]}


def test_load_all_splits_and_datasets_object(published: Path, hub: HubStub) -> None:
    df = alienbench_data.load("scores", repo_id=REPO, revision="v1.0.0")
    assert set(df["split"]) == {"main", "human"}
    dd = alienbench_data.load("scores", repo_id=REPO, revision="v1.0.0", as_="datasets")
    assert dd["main"].num_rows == len(_expected(published, "1.0.0", "main"))  # type: ignore[index]


def test_load_by_commit_hash(published: Path, hub: HubStub) -> None:
    oid = hub.repo(REPO).tags["v1.0.0"]
    df = alienbench_data.load("scores", "main", repo_id=REPO, revision=oid)
    pd.testing.assert_frame_equal(df, _expected(published, "1.0.0", "main"))


def test_load_from_hub_verifies_checksums(published: Path, hub: HubStub) -> None:
    path = "data/scores/main/v1.0.0-release.parquet"
    good = hub.files_at(REPO, "v1.0.0")[path]
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF  # same size: only the sha256 check can notice
    hub.corrupt(REPO, path, bytes(bad))
    with pytest.raises(DatasetError, match=r"data/scores/main/v1\.0\.0-release\.parquet \[sha256\]"):
        alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.0.0")


def test_unpinned_revision_refused(hub: HubStub) -> None:
    with pytest.raises(AlienbenchError, match="pinned revision"):
        alienbench_data.load("scores", repo_id=REPO)
    assert hub.requests == []


def _assert_fast_offline_error(start: float, err: pytest.ExceptionInfo[OfflineError]) -> None:
    elapsed = time.perf_counter() - start
    assert elapsed < OFFLINE_LIMIT_S, f"offline failure took {elapsed:.2f} s"
    msg = str(err.value)
    assert "not in the local cache" in msg and "alienbench build" in msg and "data_dir=" in msg


def test_offline_mode_without_cache_fails_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with HubStub() as stub:  # reachable, but offline mode forbids using it
        isolate_hf(monkeypatch, tmp_path / "hf", endpoint=stub.url, offline=True)
        t0 = time.perf_counter()
        with pytest.raises(OfflineError) as err:
            alienbench_data.load("scores", repo_id=REPO, revision="v1.0.0")
        _assert_fast_offline_error(t0, err)
        assert "HF_HUB_OFFLINE" in str(err.value)
        assert stub.requests == []


def test_offline_mode_set_only_in_environment_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_HUB_OFFLINE=1 exported after huggingface_hub was imported still counts."""
    from huggingface_hub import constants

    with HubStub() as stub:
        isolate_hf(monkeypatch, tmp_path / "hf", endpoint=stub.url)
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        assert constants.HF_HUB_OFFLINE is False
        t0 = time.perf_counter()
        with pytest.raises(OfflineError) as err:
            alienbench_data.load("scores", repo_id=REPO, revision="v1.0.0")
        _assert_fast_offline_error(t0, err)
        assert stub.requests == []


def test_unreachable_endpoint_without_cache_fails_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = closed_port_url()
    isolate_hf(monkeypatch, tmp_path / "hf", endpoint=url)
    t0 = time.perf_counter()
    with pytest.raises(OfflineError) as err:
        alienbench_data.load("scores", repo_id=REPO, revision="v1.0.0")
    _assert_fast_offline_error(t0, err)
    assert url in str(err.value)


def test_cached_revision_loads_offline(published: Path, hub: HubStub, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    online = alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.0.0")
    hub.close()  # the Hub goes away ...
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    t0 = time.perf_counter()
    unreachable = alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.0.0")
    assert time.perf_counter() - t0 < OFFLINE_LIMIT_S
    pd.testing.assert_frame_equal(unreachable, online)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # ... and offline mode is on
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    offline = alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.0.0")
    pd.testing.assert_frame_equal(offline, online)
    # a revision that was never downloaded is not silently replaced by the cached one
    with pytest.raises(OfflineError):
        alienbench_data.load("scores", "main", repo_id=REPO, revision="v1.1.0")
