"""A stub of the Hugging Face Hub HTTP API on 127.0.0.1, for tests that must not touch the network.

It implements the endpoints ``huggingface_hub`` 2.x calls for an adds-only publish
(``create_repo``, ``list_repo_refs``, ``list_repo_tree``/``list_repo_files``, ``create_commit`` with
``parent_commit``, ``create_tag``) and for ``snapshot_download``/``hf_hub_download`` (repo info at a
revision, tree listing, ``HEAD``/``GET`` on ``resolve``), over an in-memory git-like store: commits
with parents and full trees, branches and tags. Every request is recorded.

Endpoints (``{t}`` is ``models``/``datasets``/``spaces``; revisions arrive URL-quoted)::

    POST /api/repos/create                              create a repo (409 if it exists)
    POST /api/validate-yaml                             README.md metadata check (always valid)
    GET  /api/{t}/{repo}[/revision/{rev}]               repo info: sha + siblings
    GET  /api/{t}/{repo}/refs                           branches and tags
    GET  /api/{t}/{repo}/tree/{rev}[/{path}]            tree listing (?recursive=true)
    GET  /api/{t}/{repo}/commits/{rev}                  commit history, newest first
    POST /api/{t}/{repo}/preupload/{rev}                upload modes: always "regular" (no LFS)
    POST /api/{t}/{repo}/commit/{rev}                   ndjson commit; 412 if parentCommit != head
    POST /api/{t}/{repo}/tag/{rev}                      create a tag (409 if it exists)
    HEAD|GET [/{t}]/{repo}/resolve/{rev}/{path}         file download with X-Repo-Commit, ETag, ...

Errors carry the same status codes and ``X-Error-Code`` headers as the Hub (``RepoNotFound``,
``RevisionNotFound``, ``EntryNotFound``), so ``huggingface_hub`` raises its usual exception types.
A parent-commit mismatch answers ``412`` with the Hub's message "A commit has happened since.
Please refresh and try again.".

Point a client at it with ``HfApi(endpoint=stub.url)`` or ``snapshot_download(..., endpoint=stub.url)``.
``huggingface_hub`` reads ``HF_ENDPOINT``, ``HF_HUB_OFFLINE`` and the cache paths into
``huggingface_hub.constants`` at import time, so setting the environment variables in a test is not
enough: :func:`isolate_hf` sets both the variables and the constants (and disables the telemetry
lookup that would otherwise call huggingface.co from inside ``build_hf_headers``).

The module also builds small synthetic dataset folders (:func:`make_dataset`,
:func:`append_version`) laid out exactly like ``alienbench build`` output.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

__all__ = [
    "GITATTRIBUTES",
    "Commit",
    "HubStub",
    "RecordedRequest",
    "Repo",
    "StubHTTPError",
    "append_version",
    "closed_port_url",
    "git_blob_oid",
    "hub",
    "isolate_hf",
    "make_dataset",
    "serve_isolated",
]

#: Content of the ``.gitattributes`` the Hub puts in the initial commit of every new repo (abridged).
GITATTRIBUTES = (
    b"*.arrow filter=lfs diff=lfs merge=lfs -text\n"
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
    b"*.zst filter=lfs diff=lfs merge=lfs -text\n"
)
COMMIT_CONFLICT_MESSAGE = "A commit has happened since. Please refresh and try again."
_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
_URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob (what the Hub reports as ``oid``/``blobId`` for non-LFS files)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass(frozen=True)
class Commit:
    """One commit: a full snapshot of the tree plus its parents."""

    oid: str
    parents: tuple[str, ...]
    tree: dict[str, bytes]
    title: str
    message: str
    date: str


@dataclass
class Repo:
    """A repo of the in-memory store: commits by oid, branch heads and tags."""

    repo_type: str
    repo_id: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    created_at: str = field(default_factory=_now)

    def resolve(self, revision: str) -> str | None:
        """Branch, tag, or (full or abbreviated, >= 7 hex digits) commit oid -> commit oid."""
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        if revision in self.commits:
            return revision
        if len(revision) >= 7:
            hits = [oid for oid in self.commits if oid.startswith(revision)]
            if len(hits) == 1:
                return hits[0]
        return None

    def history(self, revision: str = "main") -> list[Commit]:
        """First-parent history from ``revision``, newest first."""
        out = []
        oid = self.resolve(revision)
        while oid is not None:
            c = self.commits[oid]
            out.append(c)
            oid = c.parents[0] if c.parents else None
        return out


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as the stub received it (path unquoted per segment, query parsed)."""

    method: str
    path: str
    raw_path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def ndjson(self) -> list[Any]:
        return [json.loads(line) for line in self.body.splitlines() if line.strip()]

    @property
    def kind(self) -> str:
        """Short name of the Hub operation, e.g. ``"commit"``, ``"tag"``, ``"resolve"``, ``"refs"``."""
        parts = self.path.strip("/").split("/")
        if parts[:2] == ["api", "repos"]:
            return "create_repo"
        if parts[:2] == ["api", "validate-yaml"]:
            return "validate_yaml"
        if parts and parts[0] == "api" and len(parts) >= 4:
            return parts[4] if len(parts) > 4 else "info"
        if "resolve" in parts:
            return "resolve"
        return "unknown"


class StubHTTPError(Exception):
    """Raise from a route or a hook to answer with this status, Hub-style error body and headers."""

    def __init__(self, status: int, message: str, code: str | None = None,
                 headers: dict[str, str] | None = None, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, headers or {}
        self.body = body or {}


class HubStub:
    """A threaded stub Hub on ``127.0.0.1:<free port>``; use as a context manager.

    Attributes
    ----------
    url : str
        The endpoint, e.g. ``http://127.0.0.1:40123``.
    requests : list[RecordedRequest]
        Every request received, in order.
    hooks : list[Callable[[HubStub, RecordedRequest], None]]
        Called (under the store lock) before each request is handled; a hook may change the store,
        e.g. commit behind the client's back to simulate a concurrent writer, or raise
        :class:`StubHTTPError` to make that request fail.
    require_token : str | None
        If set, write requests must send ``Authorization: Bearer <require_token>`` (else 401).
    """

    def __init__(self, *, require_token: str | None = None) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[RecordedRequest] = []
        self.hooks: list[Callable[[HubStub, RecordedRequest], None]] = []
        self.require_token = require_token
        self.served_overrides: dict[tuple[str, str], bytes] = {}
        self._lock = threading.RLock()
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> HubStub:
        stub = self

        class Handler(_Handler):
            hub = stub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="hub-stub", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> HubStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        assert self._server is not None, "HubStub: call start() first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- store helpers for tests -----------------------------------------------------------------------
    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.repos[(repo_type, repo_id)]

    def create_repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        """Create a repo with the Hub's initial commit (``.gitattributes``)."""
        with self._lock:
            if (repo_type, repo_id) in self.repos:
                raise ValueError(f"HubStub: {repo_type} repo {repo_id} exists")
            repo = Repo(repo_type, repo_id)
            self.repos[(repo_type, repo_id)] = repo
            self._make_commit(repo, "main", {".gitattributes": GITATTRIBUTES}, "initial commit", "")
            return repo

    def commit(self, repo_id: str, files: dict[str, bytes], *, deletes: tuple[str, ...] = (),
               message: str = "side commit", repo_type: str = "dataset", branch: str = "main") -> str:
        """Commit directly to the store (as another client would); returns the new oid."""
        with self._lock:
            repo = self.repo(repo_id, repo_type)
            tree = dict(repo.commits[repo.branches[branch]].tree)
            for p in deletes:
                tree.pop(p)
            tree.update(files)
            return self._make_commit(repo, branch, tree, message, "")

    def files_at(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        repo = self.repo(repo_id, repo_type)
        oid = repo.resolve(revision)
        if oid is None:
            raise KeyError(f"HubStub: no revision {revision!r} in {repo_id}")
        return dict(repo.commits[oid].tree)

    def corrupt(self, repo_id: str, path: str, data: bytes, repo_type: str = "dataset") -> None:
        """Serve ``data`` instead of the stored content of ``path`` from now on (a bad mirror)."""
        self.served_overrides[(f"{repo_type}:{repo_id}", path)] = data

    def of_kind(self, *kinds: str) -> list[RecordedRequest]:
        """Recorded requests of these operation kinds (see :attr:`RecordedRequest.kind`)."""
        return [r for r in self.requests if r.kind in kinds]

    def writes(self) -> list[RecordedRequest]:
        """Recorded requests that change state (repo create, commit, tag)."""
        return self.of_kind("create_repo", "commit", "tag")

    # -- internals -------------------------------------------------------------------------------
    def _make_commit(self, repo: Repo, branch: str, tree: dict[str, bytes], title: str, message: str) -> str:
        self._counter += 1
        parent = repo.branches.get(branch)
        digest = hashlib.sha1(json.dumps(
            [parent, sorted((p, git_blob_oid(b)) for p, b in tree.items()), title, message, self._counter]
        ).encode()).hexdigest()
        repo.commits[digest] = Commit(digest, (parent,) if parent else (), dict(tree), title, message, _now())
        repo.branches[branch] = digest
        return digest


class _Handler(BaseHTTPRequestHandler):
    hub: HubStub
    protocol_version = "HTTP/1.1"
    server_version = "HubStub/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing ----------------------------------------------------------------------------------
    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              *, content_type: str = "application/json", head: bool = False,
              content_length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if content_length is None else content_length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None, *, head: bool = False) -> None:
        self._send(status, json.dumps(obj).encode(), headers, head=head)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        split = urlsplit(self.path)
        segments = [unquote(s) for s in split.path.split("/")]
        req = RecordedRequest(
            method=method,
            path="/".join(segments),
            raw_path=self.path,
            query=parse_qs(split.query),
            headers={k: v for k, v in self.headers.items()},
            body=self._read_body() if method in ("POST", "PUT", "DELETE") else b"",
        )
        hub = self.hub
        with hub._lock:
            hub.requests.append(req)
            try:
                for hook in list(hub.hooks):
                    hook(hub, req)
                self._route(req, [s for s in split.path.split("/")[1:]])
            except StubHTTPError as err:
                headers = dict(err.headers)
                if err.code:
                    headers["X-Error-Code"] = err.code
                headers["X-Error-Message"] = err.message
                self._json(err.status, {"error": err.message, **err.body}, headers, head=method == "HEAD")

    # -- routing -----------------------------------------------------------------------------------
    def _route(self, req: RecordedRequest, raw: list[str]) -> None:
        m = req.method
        if raw[:3] == ["api", "repos", "create"] and m == "POST":
            return self._create_repo(req)
        if raw[:2] == ["api", "validate-yaml"] and m == "POST":
            return self._json(200, {"errors": [], "warnings": []})
        if len(raw) >= 4 and raw[0] == "api" and raw[1] in _TYPES:
            repo_type = _TYPES[raw[1]]
            repo_id = f"{unquote(raw[2])}/{unquote(raw[3])}"
            rest = raw[4:]
            return self._repo_api(req, repo_type, repo_id, rest)
        # resolve: [/{datasets|spaces}]/{ns}/{name}/resolve/{rev}/{path...}
        if "resolve" in raw and m in ("GET", "HEAD"):
            i = raw.index("resolve")
            prefix = raw[:i]
            repo_type = "model"
            if len(prefix) == 3 and prefix[0] in ("datasets", "spaces"):
                repo_type = _TYPES[prefix[0]]
                prefix = prefix[1:]
            if len(prefix) == 2 and len(raw) > i + 2:
                repo_id = f"{unquote(prefix[0])}/{unquote(prefix[1])}"
                revision = unquote(raw[i + 1])
                path = "/".join(unquote(s) for s in raw[i + 2:])
                return self._resolve(req, repo_type, repo_id, revision, path)
        raise StubHTTPError(404, f"HubStub: no route for {m} {req.path}")

    def _check_token(self, req: RecordedRequest) -> None:
        want = self.hub.require_token
        if want is None:
            return
        got = req.headers.get("authorization") or req.headers.get("Authorization") or ""
        if got != f"Bearer {want}":
            raise StubHTTPError(401, "Invalid credentials in Authorization header")

    def _get_repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.hub.repos.get((repo_type, repo_id))
        if repo is None:
            raise StubHTTPError(404, "Repository not found", "RepoNotFound")
        return repo

    def _rev(self, repo: Repo, revision: str) -> str:
        oid = repo.resolve(revision)
        if oid is None:
            raise StubHTTPError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return oid

    def _repo_url(self, repo: Repo) -> str:
        return f"{self.hub.url}/{_URL_PREFIX[repo.repo_type]}{repo.repo_id}"

    def _create_repo(self, req: RecordedRequest) -> None:
        self._check_token(req)
        body = req.json() or {}
        name = body.get("name")
        if not name:
            raise StubHTTPError(400, "name is required")
        org = body.get("organization") or "stub-user"
        repo_type = body.get("type") or "model"
        if repo_type not in _URL_PREFIX:
            raise StubHTTPError(400, f"invalid repo type {repo_type!r}")
        repo_id = f"{org}/{name}"
        existing = self.hub.repos.get((repo_type, repo_id))
        if existing is not None:
            # like the Hub, the 409 body carries the url (create_repo(exist_ok=True) returns it)
            raise StubHTTPError(409, f"You already created this {repo_type} repo",
                            body={"url": self._repo_url(existing)})
        repo = self.hub.create_repo(repo_id, repo_type)
        self._json(200, {"url": self._repo_url(repo), "name": repo_id, "id": repo_id})

    def _repo_api(self, req: RecordedRequest, repo_type: str, repo_id: str, rest: list[str]) -> None:
        repo = self._get_repo(repo_type, repo_id)
        m = req.method
        op = rest[0] if rest else ""
        revision = unquote(rest[1]) if len(rest) > 1 else "main"
        if m == "GET" and op in ("", "revision"):
            return self._info(repo, revision)
        if m == "GET" and op == "refs":
            return self._json(200, {
                "branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": o}
                             for b, o in sorted(repo.branches.items())],
                "converts": [],
                "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": o}
                         for t, o in sorted(repo.tags.items())],
                "pullRequests": [],
            })
        if m == "GET" and op == "tree":
            path = "/".join(unquote(s) for s in rest[2:])
            return self._tree(req, repo, revision, path)
        if m == "GET" and op == "commits":
            oid = self._rev(repo, revision)
            return self._json(200, [
                {"id": c.oid, "title": c.title, "message": c.message, "date": c.date,
                 "authors": [{"user": "stub-user"}]}
                for c in repo.history(oid)
            ])
        if m == "POST" and op == "preupload":
            return self._preupload(req, repo, revision)
        if m == "POST" and op == "commit":
            return self._commit(req, repo, revision)
        if m == "POST" and op == "tag":
            return self._tag(req, repo, revision)
        raise StubHTTPError(404, f"HubStub: no route for {m} {req.path}")

    def _info(self, repo: Repo, revision: str) -> None:
        oid = self._rev(repo, revision)
        c = repo.commits[oid]
        self._json(200, {
            "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": oid,
            "private": False,
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "createdAt": repo.created_at,
            "lastModified": c.date,
            "siblings": [{"rfilename": p, "size": len(b), "blobId": git_blob_oid(b)}
                         for p, b in sorted(c.tree.items())],
        })

    def _tree(self, req: RecordedRequest, repo: Repo, revision: str, path: str) -> None:
        oid = self._rev(repo, revision)
        tree = repo.commits[oid].tree
        recursive = (req.query.get("recursive", ["false"])[0]).lower() in ("true", "1")
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        if prefix and not any(p.startswith(prefix) for p in tree):
            raise StubHTTPError(404, f"{path} does not exist on {revision}", "EntryNotFound",
                            {"X-Repo-Commit": oid})
        entries: dict[str, dict[str, Any]] = {}
        for p, data in sorted(tree.items()):
            if not p.startswith(prefix):
                continue
            rel = p[len(prefix):].split("/")
            for depth in range(1, len(rel)):
                d = prefix + "/".join(rel[:depth])
                if recursive or depth == 1:
                    entries.setdefault(d, {"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(),
                                           "size": 0, "path": d})
                if not recursive:
                    break
            if recursive or len(rel) == 1:
                entries[p] = {"type": "file", "oid": git_blob_oid(data), "size": len(data), "path": p}
        self._json(200, list(entries.values()))

    def _preupload(self, req: RecordedRequest, repo: Repo, revision: str) -> None:
        self._check_token(req)
        oid = self._rev(repo, revision)
        tree = repo.commits[oid].tree
        files = (req.json() or {}).get("files", [])
        self._json(200, {
            "files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                       "oid": git_blob_oid(tree[f["path"]]) if f["path"] in tree else None}
                      for f in files],
            "commitOid": oid,
        })

    def _commit(self, req: RecordedRequest, repo: Repo, revision: str) -> None:
        self._check_token(req)
        if req.query.get("create_pr"):
            raise StubHTTPError(400, "HubStub: pull requests are not supported")
        if revision not in repo.branches:
            raise StubHTTPError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        lines = req.ndjson()
        if not lines or lines[0].get("key") != "header":
            raise StubHTTPError(400, "first ndjson line must be the header")
        header = lines[0]["value"]
        head = repo.branches[revision]
        parent = header.get("parentCommit")
        if parent is not None and parent != head:
            raise StubHTTPError(412, COMMIT_CONFLICT_MESSAGE)
        tree = dict(repo.commits[head].tree)
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value", {})
            path = value.get("path", "")
            if not path or path.startswith("/") or ".." in path.split("/"):
                raise StubHTTPError(400, f"invalid path {path!r}")
            if key == "file":
                if value.get("encoding") != "base64":
                    raise StubHTTPError(400, "HubStub: only base64 file content is supported")
                tree[path] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if path not in tree:
                    raise StubHTTPError(404, "A file with this name doesn't exist", "EntryNotFound")
                del tree[path]
            elif key == "deletedFolder":
                folder = path.rstrip("/") + "/"
                for p in [p for p in tree if p.startswith(folder)]:
                    del tree[p]
            elif key == "lfsFile":
                raise StubHTTPError(400, "HubStub: LFS files are not supported (preupload answers 'regular')")
            else:
                raise StubHTTPError(400, f"unknown commit operation {key!r}")
        oid = self.hub._make_commit(repo, revision, tree, header.get("summary", ""),
                                    header.get("description", ""))
        self._json(200, {"success": True, "commitOid": oid, "commitUrl": f"{self._repo_url(repo)}/commit/{oid}",
                         "hookOutput": "", "pullRequestUrl": None})

    def _tag(self, req: RecordedRequest, repo: Repo, revision: str) -> None:
        self._check_token(req)
        body = req.json() or {}
        tag = body.get("tag")
        if not tag or "/" in tag or " " in tag:
            raise StubHTTPError(400, f"invalid tag name {tag!r}")
        oid = self._rev(repo, revision)
        if tag in repo.tags:
            raise StubHTTPError(409, f"Tag {tag} already exists")
        repo.tags[tag] = oid
        self._json(200, {"success": True})

    def _resolve(self, req: RecordedRequest, repo_type: str, repo_id: str, revision: str, path: str) -> None:
        head = req.method == "HEAD"
        repo = self._get_repo(repo_type, repo_id)
        oid = self._rev(repo, revision)
        tree = repo.commits[oid].tree
        if path not in tree:
            raise StubHTTPError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": oid})
        stored = tree[path]
        data = self.hub.served_overrides.get((f"{repo_type}:{repo_id}", path), stored)
        headers = {"X-Repo-Commit": oid, "ETag": f'"{git_blob_oid(stored)}"', "Accept-Ranges": "bytes"}
        rng = req.headers.get("Range") or req.headers.get("range")
        if rng and rng.startswith("bytes=") and not head:
            start_s, _, end_s = rng[len("bytes="):].partition("-")
            start = int(start_s or 0)
            end = int(end_s) if end_s else len(data) - 1
            part = data[start:end + 1]
            headers["Content-Range"] = f"bytes {start}-{start + len(part) - 1}/{len(data)}"
            return self._send(206, part, headers, content_type="application/octet-stream")
        self._send(200, data, headers, content_type="application/octet-stream", head=head,
                   content_length=len(data))


# -- pytest helpers ---------------------------------------------------------------------------------

def closed_port_url() -> str:
    """An ``http://127.0.0.1:<port>`` URL on which nothing listens (connection refused at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def isolate_hf(monkeypatch: pytest.MonkeyPatch, home: Path, *, endpoint: str | None = None,
               offline: bool = False, token: str | None = "hf_stub_token") -> None:
    """Point ``huggingface_hub`` at a private cache (and optionally an endpoint) for one test.

    Sets ``HF_HOME``, ``HF_HUB_CACHE``, ``HF_ENDPOINT``, ``HF_HUB_OFFLINE`` and ``HF_TOKEN`` in the
    environment *and* the matching ``huggingface_hub.constants`` (which were read at import), and
    disables telemetry so no request goes to huggingface.co to detect an agent harness.
    """
    from huggingface_hub import constants

    home = Path(home)
    cache = home / "hub"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    if endpoint is None:
        monkeypatch.delenv("HF_ENDPOINT", raising=False)
    else:
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    if token is None:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    else:
        monkeypatch.setenv("HF_TOKEN", token)


def serve_isolated(monkeypatch: pytest.MonkeyPatch, home: Path, **stub_kwargs: Any) -> Iterator[HubStub]:
    """Run a :class:`HubStub` with ``huggingface_hub`` isolated to it; the body of a ``hub`` fixture::

        @pytest.fixture
        def hub(monkeypatch, tmp_path):
            yield from serve_isolated(monkeypatch, tmp_path / "hf_home")
    """
    with HubStub(**stub_kwargs) as stub:
        isolate_hf(monkeypatch, home, endpoint=stub.url)
        yield stub


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubStub]:
    """A running :class:`HubStub`, ``HF_ENDPOINT`` pointing at it, a private cache and a dummy token.

    Available to a module via ``pytest_plugins = ["tests.hub_stub"]`` or a conftest import; test
    modules that also import names from this module define their own two-line fixture with
    :func:`serve_isolated` instead (importing first would stop pytest rewriting asserts here).
    """
    yield from serve_isolated(monkeypatch, tmp_path / "hf_home")


# -- synthetic dataset folders ----------------------------------------------------------------------

def _score_rows(model: str, n: int, version: str, seed: int) -> list[dict[str, Any]]:
    from alienbench_data.schema import DIM_COLUMNS

    rows = []
    for i in range(n):
        labels = {c: (i * 7 + j * 3 + seed) % 2 for j, c in enumerate(DIM_COLUMNS)}
        rows.append({
            "generation_id": f"{model.replace('/', '-')}-{seed}-{i:04d}",
            "model": model,
            "condition": "baseline",
            "judge": "judge/alpha",
            "judge_model_resolved": "judge/alpha-2026",
            "judge_route": "stub",
            "judge_config_sha256": "0" * 64,
            "judge_prompt_sha256": hashlib.sha256(f"{model}{i}{seed}".encode()).hexdigest(),
            "ward_score": sum(labels.values()),
            **labels,
            "n_parse_attempts": 1,
            "judge_prompt_tokens": 100 + i,
            "judge_completion_tokens": 50 + i,
            "judge_duration_seconds": 1.5,
            "score_source": "release_scores",
            "added_in_version": version,
        })
    return rows


def _write_scores(root: Path, rel: str, rows: list[dict[str, Any]]) -> None:
    import pandas as pd

    from alienbench_data.io import write_parquet
    from alienbench_data.schema import FEATURES

    write_parquet(pd.DataFrame(rows), FEATURES["scores"], root / rel)


def _entry(root: Path, rel: str, rows: int, split: str, version: str) -> Any:
    from alienbench_data.io import sha256_file
    from alienbench_data.manifest import FileEntry

    p = root / rel
    return FileEntry(path=rel, sha256=sha256_file(p), bytes=p.stat().st_size, rows=rows, config="scores",
                     split=split, added_in_version=version)


def _write_card(root: Path, manifest: Any) -> None:
    """A minimal card in the layout ``alienbench build`` writes: every data file listed explicitly."""
    lines = ["---", "pretty_name: AlienBench (synthetic test data)", "license: other", "configs:",
             "- config_name: scores", "  data_files:"]
    for split in ("main", "paraphrase", "human"):
        files = manifest.files_of("scores", split)
        if files:
            lines += [f"  - split: {split}", "    path:"] + [f"    - {f.path}" for f in files]
    lines += ["  default: true", "---", "", f"# AlienBench v{manifest.version} (synthetic)", ""]
    (root / "README.md").write_text("\n".join(lines), encoding="utf-8")


def make_dataset(root: Path, *, rows: int = 12, seed: int = 0, version: str = "1.0.0") -> Path:
    """Write a small first-version dataset folder (``scores`` main + human) at ``root``."""
    from alienbench_data.manifest import Manifest

    root = Path(root)
    rels = {"main": f"data/scores/main/v{version}-release.parquet",
            "human": f"data/scores/human/v{version}-release.parquet"}
    models = {"main": "org/model-a", "human": "human/prolific-baseline"}
    entries = []
    for split, rel in rels.items():
        n = rows if split == "main" else max(1, rows // 3)
        _write_scores(root, rel, _score_rows(models[split], n, version, seed))
        entries.append(_entry(root, rel, n, split, version))
    m = Manifest(version=version, files=tuple(entries), previous_version=None, previous_manifest_sha256=None,
                 judge_config_sha256="0" * 64, benchmark_sha256="1" * 64, models=("org/model-a",),
                 notes=("synthetic test data",), source={"repository": "test", "seed": seed})
    m.write(root)
    _write_card(root, m)
    return root


def append_version(root: Path, version: str = "1.1.0", *, rows: int = 5, model: str = "org/model-b") -> Path:
    """Append a version to a folder the way a submission would: new data file + chained manifest + card."""
    from alienbench_data.manifest import Manifest, current_manifest

    root = Path(root)
    prev = current_manifest(root)
    rel = f"data/scores/main/v{version}-{model.split('/')[-1]}.parquet"
    _write_scores(root, rel, _score_rows(model, rows, version, seed=99))
    m = Manifest(version=version, files=(*prev.files, _entry(root, rel, rows, "main", version)),
                 previous_version=prev.version, previous_manifest_sha256=prev.sha256,
                 judge_config_sha256=prev.judge_config_sha256, benchmark_sha256=prev.benchmark_sha256,
                 models=(*prev.models, model), notes=(f"added {model}",), source=prev.source)
    m.write(root)
    _write_card(root, m)
    return root
