"""The stub Hub answers huggingface_hub the way the Hub does (so publish/load tests mean something)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from tests.hub_stub import GITATTRIBUTES, HubStub, git_blob_oid, serve_isolated

REPO = "org/stub-check"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubStub]:
    yield from serve_isolated(monkeypatch, tmp_path / "hf_home")


@pytest.fixture
def api(hub: HubStub) -> HfApi:
    return HfApi(endpoint=hub.url, token="hf_stub_token")


def test_repo_lifecycle_refs_tree_and_commits(hub: HubStub, api: HfApi) -> None:
    with pytest.raises(RepositoryNotFoundError):
        api.list_repo_refs(REPO, repo_type="dataset")
    url = api.create_repo(REPO, repo_type="dataset")
    assert url.repo_id == REPO and url.repo_type == "dataset"
    api.create_repo(REPO, repo_type="dataset", exist_ok=True)  # 409 swallowed
    with pytest.raises(HfHubHTTPError):
        api.create_repo(REPO, repo_type="dataset")
    assert api.list_repo_files(REPO, repo_type="dataset") == [".gitattributes"]

    head = api.list_repo_refs(REPO, repo_type="dataset").branches[0].target_commit
    info = api.create_commit(REPO, repo_type="dataset", commit_message="add", parent_commit=head, operations=[
        CommitOperationAdd("a/b.txt", b"hello"), CommitOperationAdd("c.txt", b"world")])
    assert info.oid != head and hub.repo(REPO).commits[info.oid].parents == (head,)
    assert sorted(api.list_repo_files(REPO, repo_type="dataset")) == [".gitattributes", "a/b.txt", "c.txt"]
    entries = {e.path: e for e in api.list_repo_tree(REPO, recursive=True, repo_type="dataset")}
    assert entries["a/b.txt"].blob_id == git_blob_oid(b"hello") and entries["a/b.txt"].size == 5
    assert type(entries["a"]).__name__ == "RepoFolder"
    assert [e.path for e in api.list_repo_tree(REPO, repo_type="dataset")] == [".gitattributes", "a", "c.txt"]
    assert api.dataset_info(REPO).sha == info.oid
    assert {s.rfilename for s in api.dataset_info(REPO, revision=head).siblings or []} == {".gitattributes"}
    assert [c.title for c in api.list_repo_commits(REPO, repo_type="dataset")] == ["add", "initial commit"]

    api.create_commit(REPO, repo_type="dataset", commit_message="rm", operations=[CommitOperationDelete("c.txt")])
    assert hub.files_at(REPO) == {".gitattributes": GITATTRIBUTES, "a/b.txt": b"hello"}


def test_stale_parent_commit_gets_the_hubs_412(hub: HubStub, api: HfApi) -> None:
    hub.create_repo(REPO)
    stale = hub.repo(REPO).branches["main"]
    hub.commit(REPO, {"x.txt": b"x"})
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(REPO, repo_type="dataset", commit_message="late", parent_commit=stale,
                          operations=[CommitOperationAdd("y.txt", b"y")])
    assert err.value.response.status_code == 412
    assert "A commit has happened since. Please refresh and try again." in str(err.value)
    assert "y.txt" not in hub.files_at(REPO)


def test_tags_are_never_overwritten(hub: HubStub, api: HfApi) -> None:
    hub.create_repo(REPO)
    first = hub.repo(REPO).branches["main"]
    api.create_tag(REPO, repo_type="dataset", tag="v1.0.0", revision=first)
    second = hub.commit(REPO, {"x.txt": b"x"})
    with pytest.raises(HfHubHTTPError) as err:
        api.create_tag(REPO, repo_type="dataset", tag="v1.0.0", revision=second)
    assert err.value.response.status_code == 409
    api.create_tag(REPO, repo_type="dataset", tag="v1.0.0", revision=second, exist_ok=True)
    assert hub.repo(REPO).tags == {"v1.0.0": first}
    assert [t.name for t in api.list_repo_refs(REPO, repo_type="dataset").tags] == ["v1.0.0"]


def test_downloads_and_their_errors(hub: HubStub, api: HfApi, tmp_path: Path) -> None:
    hub.create_repo(REPO)
    oid = hub.commit(REPO, {"d/f.bin": b"\x00\x01payload"})
    hub.repo(REPO).tags["v1"] = oid
    path = hf_hub_download(REPO, "d/f.bin", repo_type="dataset", revision="v1", endpoint=hub.url,
                           cache_dir=tmp_path / "c")
    assert Path(path).read_bytes() == b"\x00\x01payload" and oid in path
    heads = [r for r in hub.of_kind("resolve") if r.method == "HEAD"]
    assert heads, "hf_hub_download asks for metadata with HEAD first"
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(REPO, "nope.txt", repo_type="dataset", revision="v1", endpoint=hub.url,
                        cache_dir=tmp_path / "c")
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(REPO, "d/f.bin", repo_type="dataset", revision="v9", endpoint=hub.url,
                        cache_dir=tmp_path / "c")


def test_token_can_be_required(hub: HubStub) -> None:
    hub.require_token = "hf_right"
    with pytest.raises(HfHubHTTPError) as err:
        HfApi(endpoint=hub.url, token="hf_wrong").create_repo(REPO, repo_type="dataset")
    assert err.value.response.status_code == 401
    HfApi(endpoint=hub.url, token="hf_right").create_repo(REPO, repo_type="dataset")
