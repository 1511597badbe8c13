"""publish: one adds-only Hub commit + tag per version, checked against the stub Hub (tests/hub_stub.py)."""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from alienbench_data.errors import DatasetError, OfflineError
from alienbench_data.publish import (
    ChainOrderError,
    HeadMovedError,
    PublishConflictError,
    PublishError,
    plan_version,
    publish,
)
from tests.hub_stub import (
    GITATTRIBUTES,
    HubStub,
    RecordedRequest,
    StubHTTPError,
    append_version,
    closed_port_url,
    isolate_hf,
    make_dataset,
    serve_isolated,
)

REPO = "alienbench-org/alienbench"
TOKEN = "hf_stub_token"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubStub]:
    yield from serve_isolated(monkeypatch, tmp_path / "hf_home")


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "ds")


def _local_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _commit_ops(req: RecordedRequest) -> tuple[dict, list[dict]]:
    lines = req.ndjson()
    assert lines[0]["key"] == "header"
    return lines[0]["value"], lines[1:]


def _publish(root: Path, hub: HubStub, **kw: object):
    out = io.StringIO()
    result = publish(root, repo_id=REPO, endpoint=hub.url, out=out, **kw)  # type: ignore[arg-type]
    return result, out.getvalue()


# -- first version ------------------------------------------------------------------------------------

def test_first_version_is_one_adds_only_commit_then_tag(ds: Path, hub: HubStub) -> None:
    result, text = _publish(ds, hub)

    repo = hub.repo(REPO)
    history = repo.history()
    assert [c.title for c in history] == ["AlienBench v1.0.0", "initial commit"]
    ours, initial = history
    assert result.commit_oid == ours.oid == repo.branches["main"]
    assert result.parent_commit == initial.oid and ours.parents == (initial.oid,)
    assert repo.tags == {"v1.0.0": ours.oid}
    assert result.created_repo and len(hub.of_kind("create_repo")) == 1

    commits = hub.of_kind("commit")
    assert len(commits) == 1
    header, ops = _commit_ops(commits[0])
    assert header["summary"] == "AlienBench v1.0.0" and header["parentCommit"] == initial.oid
    assert {op["key"] for op in ops} == {"file"}  # adds only: no deletions, no copies
    local = _local_files(ds)
    assert {op["value"]["path"] for op in ops} == set(local)  # README.md + data files + manifest
    # the Hub holds exactly the local bytes, plus its own .gitattributes
    assert hub.files_at(REPO, "v1.0.0") == {**local, ".gitattributes": GITATTRIBUTES}

    tags = hub.of_kind("tag")
    assert len(tags) == 1 and tags[0].json()["tag"] == "v1.0.0"
    assert tags[0].path.endswith(f"/tag/{ours.oid}")  # the tag names the new commit, not "main"
    # order: head read -> commit -> tag
    kinds = [r.kind for r in hub.requests]
    assert kinds.index("refs") < kinds.index("commit") < kinds.index("tag")
    assert f"tagged v1.0.0 -> {ours.oid}" in text


def test_token_is_sent_but_never_printed(ds: Path, hub: HubStub, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "hf_SECRET_do_not_print_123"
    hub.require_token = secret
    monkeypatch.setenv("HF_TOKEN", secret)
    result, text = _publish(ds, hub)
    assert result.commit_oid
    assert all(r.headers.get("authorization") == f"Bearer {secret}" for r in hub.writes())
    assert secret not in text and secret not in repr(result)


def test_missing_token_refused_before_any_request(ds: Path, hub: HubStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(PublishError, match="HF_TOKEN"):
        _publish(ds, hub)
    assert hub.requests == []


def test_existing_empty_repo_is_used_not_recreated(ds: Path, hub: HubStub) -> None:
    hub.create_repo(REPO)
    result, _ = _publish(ds, hub)
    assert not result.created_repo and hub.of_kind("create_repo") == []
    assert hub.repo(REPO).tags == {"v1.0.0": result.commit_oid}


def test_first_version_refused_on_a_non_empty_repo(ds: Path, hub: HubStub) -> None:
    hub.create_repo(REPO)
    hub.commit(REPO, {"data/other.csv": b"a,b\n"})
    with pytest.raises(PublishConflictError, match=r"not empty.*data/other\.csv"):
        _publish(ds, hub)
    assert hub.writes() == []


# -- publishing twice ----------------------------------------------------------------------------------

def test_publishing_again_refuses_and_sends_no_commit(ds: Path, hub: HubStub) -> None:
    first, _ = _publish(ds, hub)
    hub.requests.clear()
    with pytest.raises(PublishConflictError, match=r"tag v1\.0\.0 already exists") as err:
        _publish(ds, hub)
    assert "Nothing was committed" in str(err.value)
    assert hub.writes() == [] and hub.of_kind("preupload") == []
    assert hub.repo(REPO).branches["main"] == first.commit_oid


def test_existing_path_refused_even_without_the_tag(ds: Path, hub: HubStub) -> None:
    """The paths check stands on its own: if v1.0.0's files are there but untagged, refuse, naming a path."""
    first, _ = _publish(ds, hub)
    del hub.repo(REPO).tags["v1.0.0"]
    hub.requests.clear()
    with pytest.raises(PublishConflictError, match=r"already exist.*manifests/v1\.0\.0\.json"):
        _publish(ds, hub)
    assert hub.writes() == []
    assert hub.repo(REPO).branches["main"] == first.commit_oid


def test_tag_existing_on_another_commit_refused_before_commit(ds: Path, hub: HubStub) -> None:
    repo = hub.create_repo(REPO)
    repo.tags["v1.0.0"] = repo.branches["main"]
    with pytest.raises(PublishConflictError, match=r"tag v1\.0\.0 already exists"):
        _publish(ds, hub)
    assert hub.writes() == [] and len(repo.commits) == 1


# -- the second version ----------------------------------------------------------------------------

def test_second_version_is_an_adds_only_commit_on_the_first(ds: Path, hub: HubStub) -> None:
    first, _ = _publish(ds, hub)
    v1_files = hub.files_at(REPO, "v1.0.0")
    append_version(ds, "1.1.0")
    hub.requests.clear()

    second, text = _publish(ds, hub)

    repo = hub.repo(REPO)
    assert second.version == "1.1.0" and second.parent_commit == first.commit_oid
    assert repo.commits[second.commit_oid].parents == (first.commit_oid,)
    assert repo.tags == {"v1.0.0": first.commit_oid, "v1.1.0": second.commit_oid}
    assert hub.of_kind("create_repo") == []

    (commit,) = hub.of_kind("commit")
    header, ops = _commit_ops(commit)
    assert header["parentCommit"] == first.commit_oid and header["summary"] == "AlienBench v1.1.0"
    assert {op["key"] for op in ops} == {"file"}
    touched = {op["value"]["path"] for op in ops}
    assert touched == {"README.md", "manifests/v1.1.0.json", "data/scores/main/v1.1.0-model-b.parquet"}
    assert touched - {"README.md"} == touched - set(v1_files)  # only README.md existed before

    now = hub.files_at(REPO, "v1.1.0")
    assert {p: b for p, b in now.items() if p in v1_files and p != "README.md"} == {
        p: b for p, b in v1_files.items() if p != "README.md"}  # released files untouched
    assert now["README.md"] != v1_files["README.md"]  # the card is the one replaced path
    assert hub.files_at(REPO, "v1.0.0") == v1_files  # the old tag still serves the old version
    assert "chains to v1.0.0" in text


def test_unchanged_card_is_not_recommitted(ds: Path, hub: HubStub) -> None:
    """huggingface_hub drops an add whose content equals the Hub's: then the commit carries no README.md."""
    _publish(ds, hub)
    append_version(ds, "1.1.0")
    hub.commit(REPO, {"README.md": (ds / "README.md").read_bytes()}, message="card updated on the Hub")
    hub.requests.clear()
    second, _ = _publish(ds, hub)
    _, ops = _commit_ops(hub.of_kind("commit")[0])
    assert {op["value"]["path"] for op in ops} == {"manifests/v1.1.0.json", "data/scores/main/v1.1.0-model-b.parquet"}
    assert hub.repo(REPO).tags["v1.1.0"] == second.commit_oid


def test_second_version_before_the_first_refused(ds: Path, hub: HubStub) -> None:
    append_version(ds, "1.1.0")
    with pytest.raises(ChainOrderError, match=r"publish v1\.0\.0 first"):
        _publish(ds, hub)
    assert hub.writes() == []  # the repo is not even created for a non-first version
    hub.create_repo(REPO)
    with pytest.raises(ChainOrderError, match=r"manifests/v1\.0\.0\.json is not on the Hub"):
        _publish(ds, hub)
    assert hub.writes() == []


def test_second_version_must_chain_onto_the_published_first(tmp_path: Path, hub: HubStub) -> None:
    published = make_dataset(tmp_path / "a", seed=1)
    _publish(published, hub)
    other = append_version(make_dataset(tmp_path / "b", seed=2), "1.1.0")  # a different v1.0.0
    hub.requests.clear()
    with pytest.raises(ChainOrderError, match=r"manifests/v1\.0\.0\.json .* differs from the local one"):
        _publish(other, hub)
    assert hub.writes() == []


def test_publishing_an_older_version_after_a_later_one_refused(tmp_path: Path, hub: HubStub) -> None:
    root = make_dataset(tmp_path / "ds")
    _publish(root, hub)
    append_version(root, "1.1.0")
    _publish(root, hub)
    older = make_dataset(tmp_path / "old")
    append_version(older, "1.0.5", model="org/model-c")
    hub.requests.clear()
    with pytest.raises(ChainOrderError, match=r"already holds v1\.1\.0"):
        _publish(older, hub)
    assert hub.writes() == []


def test_version_whose_card_is_not_current_refused(ds: Path, hub: HubStub) -> None:
    append_version(ds, "1.1.0")
    with pytest.raises(DatasetError, match=r"README.md \[configs\]: the card does not describe v1\.0\.0"):
        _publish(ds, hub, version="1.0.0")
    with pytest.raises(PublishError, match="not in"):
        _publish(ds, hub, version="2.0.0")
    assert hub.requests == []


# -- concurrency -----------------------------------------------------------------------------------

def test_head_moved_before_commit_gives_clear_error_and_no_tag(ds: Path, hub: HubStub) -> None:
    moved: list[str] = []

    def concurrent_writer(stub: HubStub, req: RecordedRequest) -> None:
        if req.kind == "preupload" and not moved:  # after publish read the head, before it commits
            moved.append(stub.commit(REPO, {"notes.txt": b"someone else"}, message="concurrent"))

    hub.hooks.append(concurrent_writer)
    with pytest.raises(HeadMovedError, match=r"nothing was committed\. Re-run publish") as err:
        _publish(ds, hub)
    assert isinstance(err.value, PublishError)
    repo = hub.repo(REPO)
    assert repo.branches["main"] == moved[0]  # only the other writer's commit landed
    assert [c.title for c in repo.history()] == ["concurrent", "initial commit"]
    assert repo.tags == {} and hub.of_kind("tag") == []
    (commit,) = hub.of_kind("commit")
    assert commit.ndjson()[0]["value"]["parentCommit"] == repo.commits[moved[0]].parents[0]


def test_tag_race_after_commit_reported_as_untagged_commit(ds: Path, hub: HubStub) -> None:
    def someone_tags_first(stub: HubStub, req: RecordedRequest) -> None:
        if req.kind == "tag":
            repo = stub.repo(REPO)
            repo.tags.setdefault("v1.0.0", repo.history()[-1].oid)

    hub.hooks.append(someone_tags_first)
    with pytest.raises(PublishConflictError, match="created by someone else") as err:
        _publish(ds, hub)
    new = hub.repo(REPO).branches["main"]
    assert f"commit {new} landed untagged" in str(err.value)


def test_tag_failure_after_commit_says_how_to_finish(ds: Path, hub: HubStub) -> None:
    def tag_endpoint_down(stub: HubStub, req: RecordedRequest) -> None:
        if req.kind == "tag":
            raise StubHTTPError(500, "internal error")

    hub.hooks.append(tag_endpoint_down)
    with pytest.raises(PublishError, match="HTTP 500") as err:
        _publish(ds, hub)
    new = hub.repo(REPO).branches["main"]
    assert f"hf repos tag create {REPO} v1.0.0 --revision {new} --repo-type dataset" in str(err.value)
    assert hub.repo(REPO).tags == {}


# -- refusals before any request -------------------------------------------------------------------

def test_tampered_data_file_refused_before_any_request(ds: Path, hub: HubStub) -> None:
    f = ds / "data/scores/main/v1.0.0-release.parquet"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=r"data/scores/main/v1\.0\.0-release\.parquet \[sha256\]") as err:
        _publish(ds, hub)
    assert "nothing was sent" in str(err.value)
    assert hub.requests == []


def test_tampered_manifest_refused_before_any_request(ds: Path, hub: HubStub) -> None:
    m = ds / "manifests/v1.0.0.json"
    m.write_text(m.read_text().replace('"rows": 12', '"rows": 13'))
    with pytest.raises(DatasetError, match="manifest_sha256"):
        _publish(ds, hub)
    assert hub.requests == []


def test_missing_card_refused(ds: Path, hub: HubStub) -> None:
    (ds / "README.md").unlink()
    with pytest.raises(DatasetError, match=r"README\.md: the dataset card is missing"):
        _publish(ds, hub)
    assert hub.requests == []


def test_bad_repo_id_refused(ds: Path) -> None:
    with pytest.raises(PublishError, match="namespace/name"):
        publish(ds, repo_id="alienbench", dry_run=True, out=io.StringIO())


# -- dry run ---------------------------------------------------------------------------------------

def _expected_plan(root: Path, version: str) -> dict[str, tuple[int, str]]:
    from alienbench_data.manifest import read_manifest

    m = read_manifest(root, version)
    paths = ["README.md", f"manifests/v{version}.json"] + [f.path for f in m.files if f.added_in_version == version]
    return {p: ((root / p).stat().st_size, hashlib.sha256((root / p).read_bytes()).hexdigest()) for p in paths}


def test_dry_run_lists_every_file_and_sends_nothing(ds: Path, hub: HubStub) -> None:
    result, text = _publish(ds, hub, dry_run=True)
    assert hub.requests == []
    assert result.dry_run and result.commit_oid is None
    expected = _expected_plan(ds, "1.0.0")
    assert {f.path: (f.size, f.sha256) for f in result.files} == expected
    for path, (size, sha) in expected.items():
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(path + " "))
        assert f"{size} bytes" in line and sha in line
    assert "tag:     v1.0.0" in text and "dry run: nothing was sent" in text
    assert "README.md" in text and "only path that may replace" in text


def test_dry_run_works_offline_without_server_or_token(ds: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_hf(monkeypatch, tmp_path / "hf", endpoint=closed_port_url(), offline=True, token=None)
    append_version(ds, "1.1.0")
    out = io.StringIO()
    t0 = time.perf_counter()
    result = publish(ds, repo_id=REPO, dry_run=True, out=out)
    assert time.perf_counter() - t0 < 5
    assert result.version == "1.1.0" and result.tag == "v1.1.0"
    assert {f.path: (f.size, f.sha256) for f in result.files} == _expected_plan(ds, "1.1.0")
    assert "v1.0.0-release" not in out.getvalue()  # v1.1.0 adds only its own files


def test_real_publish_with_offline_mode_refused(ds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with HubStub() as stub:
        isolate_hf(monkeypatch, tmp_path / "hf", endpoint=stub.url, offline=True)
        with pytest.raises(OfflineError, match=r"HF_HUB_OFFLINE.*--dry-run"):
            publish(ds, repo_id=REPO, endpoint=stub.url, out=io.StringIO())
        assert stub.requests == []


def test_unreachable_endpoint_fails_fast(ds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = closed_port_url()
    isolate_hf(monkeypatch, tmp_path / "hf", endpoint=url)
    t0 = time.perf_counter()
    with pytest.raises(OfflineError, match=r"unreachable.*Nothing was sent"):
        publish(ds, repo_id=REPO, endpoint=url, out=io.StringIO())
    assert time.perf_counter() - t0 < 5


def test_plan_version_reads_current_version(ds: Path) -> None:
    append_version(ds, "1.1.0")
    manifest, files = plan_version(ds)
    assert manifest.version == "1.1.0"
    assert [f.role for f in files] == ["card", "data", "manifest"]


# -- CLI -------------------------------------------------------------------------------------------

def test_cli_publish_dry_run_and_refusal(ds: Path, hub: HubStub, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from alienbench_data.commands import _cmd_publish

    args = argparse.Namespace(dir=str(ds), repo=REPO, dry_run=True, endpoint=hub.url, version=None)
    assert _cmd_publish(args) == 0
    assert "dry run: nothing was sent" in capsys.readouterr().out
    args.dry_run = False
    assert _cmd_publish(args) == 0
    assert _cmd_publish(args) == 1  # second time: refused, message on stderr
    assert "already exists" in capsys.readouterr().err
