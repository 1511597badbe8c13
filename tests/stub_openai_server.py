"""A local stub of the provider APIs for offline tests: real HTTP on 127.0.0.1, real SDKs.

Serves
  * OpenAI-compatible ``POST /v1/chat/completions`` (judges and generation),
  * Anthropic ``POST /v1/messages``,
  * Vertex AI ``POST .../models/<model>:generateContent`` (google-genai),
  * ``POST /token`` (an OAuth token endpoint, so google-auth credentials files work offline).

Every request is recorded (path, headers, parsed JSON body) and counted per key (api, model,
sha256 of the user text). By default a judge request (its system prompt is the judge system
prompt) gets a valid extraction whose labels are derived from the sha256 of the user text, and
any other request gets a short creature description. Tests script failures per request with
:meth:`StubServer.enqueue`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = (
    "symmetry", "sensory_organs", "locomotion", "body_plan", "skin_covering",
    "reproduction", "metabolism", "communication", "habitat", "cognition",
)
JUDGE_SYSTEM_PREFIX = "You are a precise scientific analyst"


def default_labels(user_text: str) -> dict[str, bool]:
    """Deterministic labels for a judge prompt: bit i of sha256(user text)."""
    digest = hashlib.sha256(user_text.encode("utf-8")).digest()
    return {d: bool(digest[i] & 1) for i, d in enumerate(DIMENSIONS)}


def judge_json(
    labels: dict[str, Any] | None = None,
    *,
    user_text: str = "",
    drop: str | None = None,
    string_bools: bool = False,
    fence: bool = False,
    as_array: bool = False,
) -> str:
    """A judge reply in the benchmark's format, optionally broken in one of the ways judges break it."""
    labels = labels if labels is not None else default_labels(user_text)
    obj: dict[str, Any] = {}
    for d in DIMENSIONS:
        if d == drop:
            continue
        v = labels[d]
        obj[d] = {
            "feature_described": f"stub {d}",
            "is_departure": (str(v).lower() if string_bools else v),
            "reasoning": f"stub reasoning for {d}",
        }
    text = json.dumps([obj] if as_array else obj, indent=2)
    return f"```json\n{text}\n```" if fence else text


@dataclass
class Action:
    """How the stub answers one request.

    ``status`` != 200 sends an error body; ``content`` replaces the default reply text (``""`` sends
    an empty reply); ``raw`` sends these bytes as the body verbatim (malformed JSON); ``delay``
    sleeps first (a client timeout shorter than it makes a timeout).
    """

    status: int = 200
    content: str | None = None
    raw: bytes | None = None
    delay: float = 0.0
    message: str = "stub error"


@dataclass
class Recorded:
    api: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    key: str
    user_text: str | None
    system_text: str | None
    status: int = 0


@dataclass
class StubServer:
    """The stub. Use as a context manager; ``base_url`` is ``http://127.0.0.1:<port>``."""

    delay: float = 0.0
    resolved: dict[str, str] = field(default_factory=dict)
    responder: Callable[[Recorded], Action | None] | None = None
    requests: list[Recorded] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    ok_counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._queue: deque[Action] = deque()
        self._keyed: dict[str, deque[Action]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> StubServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        stub = self

        class Handler(_Handler):
            server_stub = stub

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    # -- scripting ---------------------------------------------------------------------------
    def enqueue(self, *actions: Action, key: str | None = None) -> None:
        """Answer the next requests (of ``key`` only, when given) with these actions, in order."""
        with self._lock:
            if key is None:
                self._queue.extend(actions)
            else:
                self._keyed.setdefault(key, deque()).extend(actions)

    def _next_action(self, rec: Recorded) -> Action:
        with self._lock:
            keyed = self._keyed.get(rec.key)
            if keyed:
                return keyed.popleft()
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            action = self.responder(rec)
            if action is not None:
                return action
        return Action(delay=self.delay)

    @staticmethod
    def key(api: str, model: str, user_text: str) -> str:
        return f"{api}|{model}|{hashlib.sha256(user_text.encode('utf-8')).hexdigest()}"

    def judge_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.system_text and r.system_text.startswith(JUDGE_SYSTEM_PREFIX)]


def _user_and_system(api: str, body: Any) -> tuple[str | None, str | None, str]:
    if not isinstance(body, dict):
        return None, None, ""
    if api == "openai":
        msgs = body.get("messages") or []
        user = next((m.get("content") for m in reversed(msgs) if m.get("role") == "user"), None)
        system = next((m.get("content") for m in msgs if m.get("role") == "system"), None)
        return user, system, str(body.get("model"))
    if api == "anthropic":
        msgs = body.get("messages") or []
        user = msgs[-1].get("content") if msgs else None
        if isinstance(user, list):
            user = "".join(b.get("text", "") for b in user)
        return user, body.get("system"), str(body.get("model"))
    if api == "google":
        contents = body.get("contents") or []
        user = "".join(p.get("text", "") for c in contents for p in c.get("parts", []))
        sys_parts = (body.get("systemInstruction") or {}).get("parts", [])
        system = "".join(p.get("text", "") for p in sys_parts) or None
        return user, system, ""
    return None, None, ""


class _Handler(BaseHTTPRequestHandler):
    server_stub: StubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self) -> None:
        stub = self.server_stub
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path
        if path.startswith("/token"):
            self._send(200, json.dumps({"access_token": "stub-access-token", "expires_in": 3600,
                                        "token_type": "Bearer"}).encode())
            return
        if path.endswith("/chat/completions"):
            api = "openai"
        elif path.endswith("/messages"):
            api = "anthropic"
        elif ":generateContent" in path:
            api = "google"
        else:
            self._send(404, b'{"error": {"message": "unknown path"}}')
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        user, system, model = _user_and_system(api, body)
        if api == "google":
            model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        key = StubServer.key(api, model, user or "")
        rec = Recorded(api=api, path=path, headers={k.lower(): v for k, v in self.headers.items()},
                       body=body, raw=raw, key=key, user_text=user, system_text=system)
        with stub._lock:
            stub.requests.append(rec)
            stub.counts[key] += 1
        action = stub._next_action(rec)
        if action.delay:
            time.sleep(action.delay)
        rec.status = action.status
        if action.raw is not None:
            self._send(action.status, action.raw)
            return
        if action.status != 200:
            self._send(action.status, _error_body(api, action.status, action.message))
            return
        if action.content is not None:
            content = action.content
        elif system and system.startswith(JUDGE_SYSTEM_PREFIX):
            content = judge_json(user_text=user or "")
        else:
            digest = hashlib.sha256((user or "").encode()).hexdigest()[:8]
            content = f"The stub creature {digest} drifts over glass dunes. It has three lungs."
        resolved = stub.resolved.get(model, f"{model}-stub")
        with stub._lock:
            stub.ok_counts[key] += 1
        self._send(200, _ok_body(api, content, resolved, user or ""))


def _error_body(api: str, status: int, message: str) -> bytes:
    if api == "google":
        names = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        return json.dumps({"error": {"code": status, "message": message,
                                     "status": names.get(status, "UNKNOWN")}}).encode()
    if api == "anthropic":
        return json.dumps({"type": "error", "error": {"type": "api_error", "message": message}}).encode()
    return json.dumps({"error": {"message": message, "type": "stub_error", "code": status}}).encode()


def _ok_body(api: str, content: str, resolved: str, user: str) -> bytes:
    n_in = max(1, len(user) // 4)
    n_out = max(1, len(content) // 4)
    if api == "openai":
        return json.dumps({
            "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": resolved,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
        }).encode()
    if api == "anthropic":
        blocks = [{"type": "text", "text": content[: len(content) // 2]},
                  {"type": "text", "text": content[len(content) // 2:]}]
        return json.dumps({
            "id": "msg_stub", "type": "message", "role": "assistant", "model": resolved,
            "content": blocks, "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": n_in, "output_tokens": n_out},
        }).encode()
    return json.dumps({
        "candidates": [{"content": {"role": "model", "parts": [{"text": content}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": n_in, "candidatesTokenCount": n_out,
                          "totalTokenCount": n_in + n_out},
        "modelVersion": resolved,
    }).encode()


def google_credentials_file(path: Any, stub: StubServer) -> str:
    """Write a service-account credentials file whose token endpoint is the stub; returns its path.

    google-auth signs a JWT with the (freshly generated, throwaway) key and exchanges it at
    ``token_uri``, which the stub answers, so Vertex calls work offline with the real auth path.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    info = {"type": "service_account", "project_id": "stub-project", "private_key_id": "stub",
            "private_key": pem, "client_email": "stub@stub-project.iam.gserviceaccount.com",
            "client_id": "1", "token_uri": stub.base_url + "/token"}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(info, fh)
    return str(path)


def stub_env(stub: StubServer, tmp_path: Any, *, key_suffix: str = "") -> dict[str, str]:
    """Environment pointing all three provider SDKs at the stub (keys are dummy values)."""
    return {
        "OPENAI_API_KEY": "sk-stub-openai" + key_suffix,
        "OPENAI_BASE_URL": stub.openai_base_url,
        "ANTHROPIC_API_KEY": "sk-ant-stub" + key_suffix,
        "ANTHROPIC_BASE_URL": stub.base_url,
        "GOOGLE_CLOUD_PROJECT": "stub-project",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
        "GOOGLE_VERTEX_BASE_URL": stub.base_url + "/",
        "GOOGLE_APPLICATION_CREDENTIALS": google_credentials_file(tmp_path / "adc.json", stub),
        "OPENROUTER_API_KEY": "sk-or-stub" + key_suffix,
        "OPENROUTER_BASE_URL": stub.openai_base_url,
    }
