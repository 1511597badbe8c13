"""Publish one version of a dataset folder to the Hugging Face Hub: one adds-only commit, then a tag.

``publish(DIR, repo_id=..., version=None)`` sends exactly what one version adds:

* the version's new data files (manifest entries whose ``added_in_version`` is that version),
* its manifest ``manifests/v<version>.json``,
* ``README.md`` (the dataset card). The card is the **only** path that may replace a file already
  on the Hub: it describes the newest version, so each version's commit updates it. Every other
  path must be new; released data files and manifests are never rewritten.

Order of operations (nothing is sent before step 2, nothing is committed before step 6):

1. Verify the folder offline: the manifest chain (``verify_chain``), every file of the version
   (``verify_files``), and that README.md lists exactly this version's data files. Any problem
   refuses the publish.
2. Read the head commit of ``main`` and the tags (``list_repo_refs``). A missing repo is created
   (``create_repo(exist_ok=True)``) only when publishing a first version.
3. Refuse if tag ``v<version>`` exists.
4. List the files at that head (``list_repo_tree``, what ``list_repo_files`` reads) and refuse if any
   planned path other than README.md exists, naming it. A first version needs a repo holding nothing
   but README.md/.gitattributes (the Hub creates ``.gitattributes`` in every new repo); a later
   version needs the previous version's manifest and every earlier data file on the Hub, with the
   same content as the local copies (the hash chain), and no later version there.
5. One ``create_commit`` with only ``CommitOperationAdd`` and ``parent_commit=<that head>``: if
   anybody committed in between, the Hub rejects it (HTTP 412) and nothing is written.
6. ``create_tag(tag="v<version>", revision=<new commit>, exist_ok=False)``.

``dry_run=True`` stops after step 1: it prints the plan (each file's path, size and sha256, as
``CommitOperationAdd`` computes them locally, and the tag) and sends nothing; it works with
``HF_HUB_OFFLINE=1`` and without a token. The token comes only from ``token=`` or ``HF_TOKEN`` and is
never printed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .errors import AlienbenchError, DatasetError, OfflineError, Problem
from .manifest import (
    MANIFEST_DIR,
    Manifest,
    list_versions,
    manifest_path,
    parse_version,
    read_manifest,
    verify_chain,
    verify_files,
)

__all__ = [
    "CARD_PATH",
    "ChainOrderError",
    "HeadMovedError",
    "PlannedFile",
    "PublishConflictError",
    "PublishError",
    "PublishResult",
    "plan_version",
    "publish",
]

CARD_PATH = "README.md"
#: Paths that may already exist on the Hub before a first version: the card and the Hub's own
#: ``.gitattributes`` (created with every repo). Only README.md is ever replaced by a publish.
_PREEXISTING_OK = frozenset({CARD_PATH, ".gitattributes"})
_REPO_TYPE = "dataset"
_PROBE_TIMEOUT = 3.0


class PublishError(AlienbenchError):
    """Publishing was refused or failed; the message says what was (not) sent and what to do."""


class PublishConflictError(PublishError):
    """The Hub already holds a path or tag this version would create (it was published already)."""


class ChainOrderError(PublishError):
    """The Hub does not hold the previous version this one chains to (or holds a different one)."""


class HeadMovedError(PublishError):
    """``main`` moved between reading its head and committing (the Hub answered 412); nothing committed."""


@dataclass(frozen=True)
class PlannedFile:
    """One file of the commit: its path in the repo, size, sha256, role and the verified bytes."""

    path: str
    size: int
    sha256: str
    role: str  # "card" | "data" | "manifest"
    data: bytes = field(repr=False, compare=False)


@dataclass(frozen=True)
class PublishResult:
    """What ``publish`` planned and, unless a dry run, did."""

    repo_id: str
    version: str
    tag: str
    endpoint: str
    manifest_sha256: str
    files: tuple[PlannedFile, ...]
    dry_run: bool
    commit_oid: str | None = None
    parent_commit: str | None = None
    commit_url: str | None = None
    created_repo: bool = False

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


# -- step 1: the offline plan ----------------------------------------------------------------------

def _pick_version(root: Path, version: str | None) -> str:
    versions = list_versions(root)
    if not versions:
        raise DatasetError(Problem(str(root / MANIFEST_DIR), None, None, "no manifest found",
                                   "is this a dataset folder? build one with `alienbench build --out DIR`"),
                           context="publish")
    if version is None:
        return versions[-1]
    v = version.removeprefix("v")
    try:
        parse_version(v)
    except ValueError as exc:
        raise PublishError(f"publish: version {version!r} is not MAJOR.MINOR.PATCH (e.g. 1.1.0)") from exc
    if v not in versions:
        raise PublishError(f"publish: version {v} is not in {root} (it has {', '.join(versions)}); "
                           "pass one of those, or omit --version to publish the current one")
    return v


def _card_data_files(text: str) -> list[str] | None:
    """Data file paths the card's ``configs:`` list, or None if it cannot tell (no configs, globs)."""
    from huggingface_hub import DatasetCard

    try:
        configs = DatasetCard(text).data.to_dict().get("configs")
    except Exception:  # malformed YAML: reported by the caller as "cannot read"
        return None
    if not isinstance(configs, list):
        return None
    paths: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, str):
            paths.append(value)
        elif isinstance(value, list):
            for v in value:
                collect(v)
        elif isinstance(value, dict):
            collect(value.get("path"))

    for cfg in configs:
        if isinstance(cfg, dict):
            collect(cfg.get("data_files"))
    if any(ch in p for p in paths for ch in "*?["):
        return None
    return paths


def _check_card(text: str, manifest: Manifest) -> list[Problem]:
    listed = _card_data_files(text)
    if listed is None:
        return []
    want = {f.path for f in manifest.files}
    missing, extra = sorted(want - set(listed)), sorted(set(listed) - want)
    if not missing and not extra:
        return []
    what = "; ".join(s for s in (f"missing {', '.join(missing)}" if missing else "",
                                 f"not in v{manifest.version}: {', '.join(extra)}" if extra else "") if s)
    return [Problem(CARD_PATH, None, "configs", f"the card does not describe v{manifest.version} ({what})",
                    f"publish the version the card describes, or re-render the card for v{manifest.version} "
                    "(alienbench build / the append step writes it)")]


def plan_version(data_dir: str | os.PathLike[str], version: str | None = None) -> tuple[Manifest, list[PlannedFile]]:
    """Verify the folder and return the version's manifest and the files its commit adds (offline).

    Raises :class:`DatasetError` (tampered or missing files, broken chain, stale card) or
    :class:`PublishError` (unknown version). Files are read once; the bytes returned are the bytes
    that were hashed and will be uploaded.
    """
    root = Path(data_dir)
    if not root.is_dir():
        raise PublishError(f"publish: no dataset folder at {root}; build one with `alienbench build --out {root}`")
    v = _pick_version(root, version)
    problems = verify_chain(root)
    if problems:
        raise DatasetError(problems, context=f"publish: {root} fails the manifest chain check; nothing was sent")
    manifest = read_manifest(root, v)
    problems = verify_files(root, manifest)
    order = list_versions(root)
    for f in manifest.files:
        if f.added_in_version not in order or parse_version(f.added_in_version) > parse_version(v):
            problems.append(Problem(str(manifest_path(Path("."), v)), None, "files",
                                    f"{f.path} says added_in_version={f.added_in_version!r}, not a version <= {v}",
                                    "restore the released manifest"))
        elif manifest.previous_version is None and f.added_in_version != v:
            problems.append(Problem(str(manifest_path(Path("."), v)), None, "files",
                                    f"{f.path} was added in {f.added_in_version} but v{v} is a first version"))
    card = root / CARD_PATH
    if not card.is_file():
        problems.append(Problem(CARD_PATH, None, None, "the dataset card is missing",
                                "rebuild the folder with `alienbench build` (it writes README.md)"))
    if problems:
        raise DatasetError(problems, context=f"publish: {root} v{v} is not publishable; nothing was sent")

    files: list[PlannedFile] = []
    card_bytes = card.read_bytes()
    problems = _check_card(card_bytes.decode("utf-8", errors="replace"), manifest)
    files.append(PlannedFile(CARD_PATH, len(card_bytes), _sha256(card_bytes), "card", card_bytes))
    for f in sorted(manifest.files, key=lambda f: f.path):
        if f.added_in_version != v:
            continue
        data = (root / f.path).read_bytes()
        digest = _sha256(data)
        if digest != f.sha256 or len(data) != f.bytes:  # changed since verify_files read it
            problems.append(Problem(f.path, None, "sha256", "changed while publishing",
                                    "restore the released file and retry"))
        files.append(PlannedFile(f.path, len(data), digest, "data", data))
    mpath = manifest_path(Path("."), v).as_posix()
    mbytes = (root / mpath).read_bytes()
    files.append(PlannedFile(mpath, len(mbytes), _sha256(mbytes), "manifest", mbytes))
    if problems:
        raise DatasetError(problems, context=f"publish: {root} v{v} is not publishable; nothing was sent")
    return manifest, files


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _operations(files: list[PlannedFile]) -> list[Any]:
    """``CommitOperationAdd`` per file; checks its locally computed size/sha256 against the plan."""
    from huggingface_hub import CommitOperationAdd

    ops = []
    for f in files:
        op = CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=f.data)
        if op.upload_info.size != f.size or op.upload_info.sha256.hex() != f.sha256:
            raise PublishError(f"publish: huggingface_hub computed a different size/sha256 for {f.path}; "
                               "nothing was sent")
        ops.append(op)
    return ops


def _print_plan(out: TextIO, *, repo_id: str, endpoint: str, manifest: Manifest, files: list[PlannedFile],
                dry_run: bool) -> None:
    v = manifest.version
    width = max(len(f.path) for f in files)
    total = sum(f.size for f in files)
    chain = (f"chains to v{manifest.previous_version} (manifest sha256 {manifest.previous_manifest_sha256})"
             if manifest.previous_version else "first version")
    p = out.write
    p(f"AlienBench publish plan{' (dry run)' if dry_run else ''}\n")
    p(f"  repo:    datasets/{repo_id} at {endpoint}\n")
    p(f"  version: v{v}, manifest sha256 {manifest.sha256}, {chain}\n")
    p(f"  commit:  one commit \"AlienBench v{v}\" on main, adds only, parent = the head of main read "
      "before committing\n")
    p(f"  files:   {len(files)} files, {total} bytes (sha256 computed locally by CommitOperationAdd)\n")
    for f in files:
        note = "  [card: the only path that may replace a file already on the Hub]" if f.role == "card" else ""
        p(f"    {f.path:<{width}}  {f.size:>10} bytes  sha256 {f.sha256}{note}\n")
    p(f"  tag:     v{v} -> the new commit (created with exist_ok=False: never moved or overwritten)\n")
    need = (f"manifests/v{manifest.previous_version}.json and every earlier data file on main, unchanged"
            if manifest.previous_version else "a new or empty repo (created if absent)")
    p(f"  checks:  folder verified offline; on the Hub: tag v{v} absent, no planned path except README.md "
      f"present, {need}\n")


# -- steps 2-6: talking to the Hub -----------------------------------------------------------------

def _transport_errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for mod in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError):
            errs.append(__import__(mod).TransportError)
    return tuple(errs)


def _resolve_endpoint(endpoint: str | None) -> str:
    from huggingface_hub import constants

    return (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _offline_requested() -> bool:
    from huggingface_hub import constants

    env = (os.environ.get("HF_HUB_OFFLINE") or "").strip().lower()
    return bool(constants.HF_HUB_OFFLINE) or env in ("1", "true", "yes", "on")


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 400 else text[:400] + "..."


@contextlib.contextmanager
def _hub_call(what: str, *, state: str = "nothing was committed") -> Iterator[None]:
    """Turn huggingface_hub / transport errors into PublishError / OfflineError naming the step."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        yield
    except AlienbenchError:
        raise
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        fix = {401: "check the token (HF_TOKEN) is valid",
               403: "use a token with write access to this namespace"}.get(status or 0, "see the Hub's message")
        raise PublishError(f"publish: {what} failed (HTTP {status}: {_short(exc)}); {state}. Fix: {fix}.") from exc
    except _transport_errors() as exc:
        raise OfflineError(f"publish: {what} failed, the Hub is unreachable ({type(exc).__name__}: {_short(exc)}); "
                           f"{state}. Check the network or --endpoint and retry.") from exc


def _remote_matches(entry: Any, data: bytes | None, sha256: str) -> bool:
    """Does a Hub tree entry hold exactly this content? LFS: sha256; regular: git blob oid."""
    from huggingface_hub.utils.sha import git_hash

    if getattr(entry, "lfs", None) is not None:
        return entry.lfs.sha256 == sha256
    if data is None:
        return False
    return entry.blob_id == git_hash(data)


def _check_remote(root: Path, manifest: Manifest, files: list[PlannedFile], remote: dict[str, Any],
                  head: str) -> None:
    """Steps 4: refuse existing paths, a non-empty repo for a first version, or a broken chain."""
    v = manifest.version
    where = f"on the Hub at main@{head[:12]}"
    clashes = [f.path for f in files if f.path != CARD_PATH and f.path in remote]
    if clashes:
        raise PublishConflictError(
            f"publish: {len(clashes)} path(s) of v{v} already exist {where}: {', '.join(clashes[:5])}"
            f"{' ...' if len(clashes) > 5 else ''}. v{v} was already published, or publishing would overwrite "
            "a released file. Nothing was committed. Released files are never replaced: append a new "
            "version instead (new files + a chained manifest)."
        )
    remote_versions = sorted((p[len(MANIFEST_DIR) + 2:-5] for p in remote
                              if p.startswith(f"{MANIFEST_DIR}/v") and p.endswith(".json")),
                             key=lambda s: parse_version(s) if _is_version(s) else (-1, -1, -1))
    remote_versions = [s for s in remote_versions if _is_version(s)]
    later = [s for s in remote_versions if parse_version(s) > parse_version(v)]
    if later:
        raise ChainOrderError(f"publish: the Hub already holds v{later[-1]} ({where}), later than v{v}; "
                              f"publishing v{v} now would fork the version chain. Nothing was committed.")
    if manifest.previous_version is None:
        other = sorted(set(remote) - _PREEXISTING_OK)
        if other:
            raise PublishConflictError(
                f"publish: v{v} is a first version but the repo is not empty {where}: it holds "
                f"{', '.join(other[:5])}{' ...' if len(other) > 5 else ''}. Nothing was committed. Publish to a "
                "new repo, or publish the version that chains onto what the repo holds."
            )
        return
    prev = manifest.previous_version
    prev_rel = manifest_path(Path("."), prev).as_posix()
    if prev_rel not in remote:
        raise ChainOrderError(
            f"publish: v{v} chains to v{prev}, but {prev_rel} is not {where}. Publish v{prev} first "
            f"(from a folder whose current version is v{prev}), then v{v}. Nothing was committed."
        )
    if remote_versions and remote_versions[-1] != prev:
        raise ChainOrderError(f"publish: the Hub's latest version is v{remote_versions[-1]} but v{v} chains to "
                              f"v{prev}. Nothing was committed.")
    prev_bytes = (root / prev_rel).read_bytes()
    if not _remote_matches(remote[prev_rel], prev_bytes, _sha256(prev_bytes)):
        raise ChainOrderError(
            f"publish: {prev_rel} {where} differs from the local one (manifest sha256 "
            f"{manifest.previous_manifest_sha256[:16]}... expected): this folder's v{v} does not chain onto the "
            f"published v{prev}. Nothing was committed. Append v{v} to a copy of the published dataset "
            f"(snapshot of tag v{prev}) instead."
        )
    missing, differ = [], []
    for f in sorted(manifest.files, key=lambda f: f.path):
        if f.added_in_version == v:
            continue
        entry = remote.get(f.path)
        if entry is None:
            missing.append(f.path)
        elif getattr(entry, "lfs", None) is None and entry.size != f.bytes:
            differ.append(f.path)
        elif not _remote_matches(entry, None if entry.lfs is not None else (root / f.path).read_bytes(), f.sha256):
            differ.append(f.path)
    if missing or differ:
        parts = ([f"missing: {', '.join(missing[:5])}"] if missing else []) + (
            [f"different content: {', '.join(differ[:5])}"] if differ else [])
        raise ChainOrderError(f"publish: earlier data files of v{v} are not on the Hub as released ({where}; "
                              f"{'; '.join(parts)}). Nothing was committed. Publish the earlier versions first "
                              "from folders that hold exactly the released files.")


def _is_version(s: str) -> bool:
    try:
        parse_version(s)
    except ValueError:
        return False
    return True


def publish(
    data_dir: str | os.PathLike[str],
    *,
    repo_id: str,
    version: str | None = None,
    dry_run: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
    out: TextIO = sys.stdout,
) -> PublishResult:
    """Publish ONE version of the dataset folder ``data_dir`` as ONE adds-only Hub commit + tag.

    The commit adds the version's new data files, its manifest and README.md; README.md (the
    dataset card) is the only path allowed to replace a file already on the Hub. See the module
    docstring for the full sequence of checks.

    Parameters
    ----------
    data_dir : path
        A dataset folder as ``alienbench build`` writes it.
    repo_id : str
        Hub dataset repo, ``namespace/name``.
    version : str, optional
        Version to publish (``"1.1.0"`` or ``"v1.1.0"``); default the folder's current (highest) one.
    dry_run : bool
        Print the plan (every file's path, size, sha256, and the tag) and send nothing; needs no
        token and works offline.
    endpoint : str, optional
        Hub URL; default ``$HF_ENDPOINT`` or https://huggingface.co.
    token : str, optional
        Write token; default ``$HF_TOKEN``. No other source is used, and it is never printed.
    out : text stream
        Where the plan and progress go.

    Raises
    ------
    DatasetError
        The folder fails verification (tampered file, broken chain, stale card); nothing sent.
    PublishConflictError
        A planned path (other than README.md) or the tag already exists on the Hub.
    ChainOrderError
        The previous version is not on the Hub (or differs), or a later one is.
    HeadMovedError
        ``main`` moved while publishing; nothing committed, re-run.
    OfflineError
        The Hub is unreachable or ``HF_HUB_OFFLINE`` is set (use ``dry_run``).
    PublishError
        Any other refusal or Hub error, with what was (not) done and the fix.
    """
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise PublishError(f"publish: repo id {repo_id!r} must be 'namespace/name', e.g. 'my-org/alienbench'")
    root = Path(data_dir)
    manifest, files = plan_version(root, version)
    v = manifest.version
    tag = f"v{v}"
    endpoint_url = _resolve_endpoint(endpoint)
    _print_plan(out, repo_id=repo_id, endpoint=endpoint_url, manifest=manifest, files=files, dry_run=dry_run)
    ops = _operations(files)
    result = PublishResult(repo_id=repo_id, version=v, tag=tag, endpoint=endpoint_url,
                           manifest_sha256=manifest.sha256, files=tuple(files), dry_run=dry_run)
    if dry_run:
        out.write("dry run: nothing was sent\n")
        return result

    tok = token if token else os.environ.get("HF_TOKEN")
    if not tok:
        raise PublishError("publish: no Hugging Face token. Set HF_TOKEN to a write token for the repo's namespace "
                           "(or pass token=...); --dry-run needs none. Nothing was sent.")
    if _offline_requested():
        raise OfflineError("publish: HF_HUB_OFFLINE is set, so nothing can be sent. Unset it to publish, or use "
                           "--dry-run to print the plan offline.")
    from .loader import _hub_reachable

    if not _hub_reachable(endpoint_url, _PROBE_TIMEOUT):
        raise OfflineError(f"publish: the Hub at {endpoint_url} is unreachable (no connection within "
                           f"{_PROBE_TIMEOUT:g} s). Nothing was sent. Check the network or --endpoint and retry.")

    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=endpoint_url, token=tok)
    created = False
    try:
        with _hub_call("reading the repo's branches and tags"):
            refs = api.list_repo_refs(repo_id, repo_type=_REPO_TYPE)
    except PublishError as exc:
        if not isinstance(exc.__cause__, RepositoryNotFoundError):
            raise
        if manifest.previous_version is not None:
            raise ChainOrderError(
                f"publish: datasets/{repo_id} does not exist (or the token cannot see it), but v{v} chains to "
                f"v{manifest.previous_version}: publish v{manifest.previous_version} first. Nothing was sent."
            ) from exc.__cause__
        with _hub_call(f"creating datasets/{repo_id}"):
            api.create_repo(repo_id, repo_type=_REPO_TYPE, exist_ok=True)
        created = True
        out.write(f"created dataset repo {repo_id}\n")
        with _hub_call("reading the repo's branches and tags"):
            refs = api.list_repo_refs(repo_id, repo_type=_REPO_TYPE)
    heads = {b.name: b.target_commit for b in refs.branches}
    if "main" not in heads:
        raise PublishError(f"publish: datasets/{repo_id} has no main branch; nothing was committed")
    head = heads["main"]
    existing_tags = {t.name: t.target_commit for t in refs.tags}
    if tag in existing_tags:
        raise PublishConflictError(
            f"publish: tag {tag} already exists on datasets/{repo_id} (-> {existing_tags[tag][:12]}): v{v} was "
            "already published. Nothing was committed; tags are never moved. Append a new version to publish "
            "changes."
        )
    with _hub_call(f"listing the files at main@{head[:12]}"):
        remote = {e.path: e for e in api.list_repo_tree(repo_id, recursive=True, revision=head,
                                                         repo_type=_REPO_TYPE) if isinstance(e, RepoFile)}
    _check_remote(root, manifest, files, remote, head)

    description = (f"Adds {len(files) - 1} file(s) of AlienBench v{v} (manifest sha256 {manifest.sha256}"
                   + (f", previous v{manifest.previous_version} {manifest.previous_manifest_sha256}"
                      if manifest.previous_version else "") + "). Adds only; README.md is the dataset card.")
    try:
        with _hub_call("the commit"):
            info = api.create_commit(repo_id, repo_type=_REPO_TYPE, operations=ops,
                                     commit_message=f"AlienBench v{v}", commit_description=description,
                                     parent_commit=head)
    except PublishError as exc:
        cause = exc.__cause__
        if isinstance(cause, HfHubHTTPError) and cause.response is not None and cause.response.status_code == 412:
            raise HeadMovedError(
                f"publish: main of datasets/{repo_id} moved after its head was read (expected parent "
                f"{head[:12]}); the Hub rejected the commit, nothing was committed. Re-run publish: it "
                "re-reads the head and re-checks every path against it."
            ) from cause
        raise
    new_oid = info.oid
    if not new_oid or new_oid == head:
        raise PublishError(f"publish: the Hub created no new commit for v{v} (head still {head[:12]}); nothing "
                           "to tag. Check the repo state.")
    out.write(f"committed {new_oid} (parent {head}): {len(files)} file(s) added\n")

    manual = (f"tag it by hand: hf repos tag create {repo_id} {tag} --revision {new_oid} --repo-type dataset")
    with _hub_call(f"checking the files of commit {new_oid[:12]}", state=f"the commit {new_oid} landed untagged; "
                   + manual):
        after = {e.path: e for e in api.list_repo_tree(repo_id, recursive=True, revision=new_oid,
                                                        repo_type=_REPO_TYPE) if isinstance(e, RepoFile)}
    bad = [f.path for f in files if f.path not in after or not _remote_matches(after[f.path], f.data, f.sha256)]
    if bad:
        raise PublishError(f"publish: commit {new_oid} does not hold {', '.join(bad[:5])} as uploaded; it was left "
                           "untagged. Inspect the repo before tagging.")
    try:
        with _hub_call(f"creating tag {tag}", state=f"the commit {new_oid} landed untagged; " + manual):
            api.create_tag(repo_id, repo_type=_REPO_TYPE, tag=tag, revision=new_oid, exist_ok=False,
                           tag_message=f"AlienBench v{v} (manifest sha256 {manifest.sha256})")
    except PublishError as exc:
        cause = exc.__cause__
        if isinstance(cause, HfHubHTTPError) and cause.response is not None and cause.response.status_code == 409:
            raise PublishConflictError(
                f"publish: tag {tag} was created by someone else while publishing; commit {new_oid} landed "
                "untagged. Inspect the repo: the tag must point at the commit that added "
                f"manifests/v{v}.json."
            ) from cause
        raise
    out.write(f"tagged {tag} -> {new_oid}\n")
    return PublishResult(repo_id=repo_id, version=v, tag=tag, endpoint=endpoint_url,
                         manifest_sha256=manifest.sha256, files=tuple(files), dry_run=False, commit_oid=new_oid,
                         parent_commit=head, commit_url=str(getattr(info, "commit_url", "") or "") or None,
                         created_repo=created)
