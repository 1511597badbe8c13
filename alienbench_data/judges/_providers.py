"""Provider backends for the fixed judge panel, through the official SDKs.

The SDKs are an optional extra (``pip install alienbench[judges]``) and are imported only when a
backend is constructed. Keys are read from the environment only, are never logged and never
written anywhere; base URLs can be overridden from the environment (used by the tests to point a
backend at a local stub server).

=========  ==========================  ===================================================
provider   key / project (env)         base URL override (env)
=========  ==========================  ===================================================
openai     ``OPENAI_API_KEY``          ``OPENAI_BASE_URL``
anthropic  ``ANTHROPIC_API_KEY``       ``ANTHROPIC_BASE_URL``
google     ``GOOGLE_CLOUD_PROJECT``,   ``GOOGLE_VERTEX_BASE_URL`` (read by the SDK)
           ``GOOGLE_CLOUD_LOCATION``
           (default ``us-central1``),
           application default
           credentials
=========  ==========================  ===================================================
"""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..config import JudgeConfig, judge_config
from ._base import Judge, JudgeCallError, JudgeReply, MissingCredentialsError, TransientJudgeError
from ._retry import RETRY_STATUSES

__all__ = ["DEFAULT_TIMEOUT", "AnthropicJudge", "GoogleJudge", "OpenAIJudge", "provider_panel"]

#: Statuses that will fail every call of a judge (auth, permission, unknown model).
_FATAL_STATUSES = frozenset({401, 403, 404})

#: Per-request timeout in seconds; a timed-out request is retried with backoff.
DEFAULT_TIMEOUT = 600.0


def _import_sdk(module: str, extra_hint: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise JudgeCallError(
            f"judges: the {extra_hint} SDK ({module}) is not installed "
            "(fix: pip install 'alienbench[judges]', or use --replay to answer from a dataset)"
        ) from exc


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def _require_env(name: str, judge: str) -> str:
    value = _env(name)
    if value is None:
        raise MissingCredentialsError(
            f"judge {judge}: environment variable {name} is not set (fix: export {name}=..., or use "
            "--replay to answer from a dataset's judgments)"
        )
    return value


def _status_error(judge: str, status: int, detail: str) -> Exception:
    msg = f"judge {judge}: HTTP {status}: {detail[:500]}"
    if status in RETRY_STATUSES:
        return TransientJudgeError(msg, status=status)
    return JudgeCallError(msg, fatal=status in _FATAL_STATUSES)


def _nonempty(judge: str, text: str | None) -> str:
    if text is None or not text.strip():
        raise JudgeCallError(f"judge {judge}: empty reply (not retried; nothing is recorded)")
    return text


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Timeout and connection error classes of whichever HTTP libraries the SDK uses."""
    found: list[type[BaseException]] = [TimeoutError, ConnectionError]
    for module, names in (("httpx", ("TransportError",)), ("httpx2", ("TransportError",)),
                          ("requests", ("ConnectionError", "Timeout"))):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        found.extend(getattr(mod, n) for n in names if isinstance(getattr(mod, n, None), type))
    return tuple(found)


class OpenAIJudge(Judge):
    """OpenAI Chat Completions (``openai`` SDK): system + user message, ``max_completion_tokens``.

    Parameters
    ----------
    model_id
        The model id sent (``gpt-5.4`` for the panel).
    config
        The judge configuration supplying temperature and the output-token limit.
    base_url
        Endpoint; default ``$OPENAI_BASE_URL``, else the SDK's default.
    api_key_env
        Name of the environment variable holding the key.
    timeout
        Per-request timeout in seconds.
    """

    route = "openai"

    def __init__(
        self,
        model_id: str,
        *,
        config: JudgeConfig | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.model_id = model_id
        self._call = (config or judge_config()).call
        self._base_url = base_url
        self._api_key_env = api_key_env
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def check_ready(self) -> None:
        _require_env(self._api_key_env, self.model_id)

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                openai = _import_sdk("openai", "OpenAI")
                self._client = openai.OpenAI(
                    api_key=_require_env(self._api_key_env, self.model_id),
                    base_url=self._base_url or _env("OPENAI_BASE_URL"),
                    max_retries=0,  # retries are ours, with the benchmark's schedule
                    timeout=self._timeout,
                )
            return self._client

    def complete(self, judge: str, system_prompt: str, user_prompt: str) -> JudgeReply:
        openai = _import_sdk("openai", "OpenAI")
        client = self._get_client()
        start = time.monotonic()
        try:
            resp = client.chat.completions.create(
                model=self.model_id,
                messages=[
                    {"role": "system", "content": system_prompt},
                    {"role": "user", "content": user_prompt},
                ],
                temperature=self._call["temperature"],
                max_completion_tokens=self._call["max_output_tokens"],
            )
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise TransientJudgeError(f"judge {judge}: {type(exc).__name__}: {exc}") from None
        except openai.APIStatusError as exc:
            raise _status_error(judge, exc.status_code, str(exc.message)) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise TransientJudgeError(f"judge {judge}: malformed response body: {exc}") from None
        duration = time.monotonic() - start
        choices = getattr(resp, "choices", None)
        if not choices:
            raise JudgeCallError(f"judge {judge}: reply has no choices (not retried; nothing is recorded)")
        text = _nonempty(judge, choices[0].message.content)
        usage = getattr(resp, "usage", None)
        return JudgeReply(
            text=text,
            model_resolved=getattr(resp, "model", None) or self.model_id,
            route=self.route,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            duration_seconds=duration,
        )


class AnthropicJudge(Judge):
    """Anthropic Messages API (``anthropic`` SDK): ``system=`` plus one user message.

    The reply text is the concatenation of all text blocks. If the API rejects ``temperature``
    (HTTP 400 mentioning it) the call is repeated without it and that choice is kept for the run,
    as the benchmark's client did. The optional AWS Bedrock failover of the original client is not
    implemented (no released judgment used it).
    """

    route = "anthropic"
    #: Anthropic's "overloaded" status, retried like a 503.
    _EXTRA_RETRY = frozenset({529})

    def __init__(
        self,
        model_id: str,
        *,
        config: JudgeConfig | None = None,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.model_id = model_id
        self._call = (config or judge_config()).call
        self._base_url = base_url
        self._api_key_env = api_key_env
        self._timeout = timeout
        self._client: Any = None
        self._send_temperature = True
        self._lock = threading.Lock()

    def check_ready(self) -> None:
        _require_env(self._api_key_env, self.model_id)

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                anthropic = _import_sdk("anthropic", "Anthropic")
                self._client = anthropic.Anthropic(
                    api_key=_require_env(self._api_key_env, self.model_id),
                    base_url=self._base_url or _env("ANTHROPIC_BASE_URL"),
                    max_retries=0,
                    timeout=self._timeout,
                )
            return self._client

    def complete(self, judge: str, system_prompt: str, user_prompt: str) -> JudgeReply:
        anthropic = _import_sdk("anthropic", "Anthropic")
        client = self._get_client()
        kwargs: dict[str, Any] = {
            "model": self.model_id,
            "system": system_prompt,
            "messages": [{"role": "user", "content": user_prompt}],
            "max_tokens": self._call["max_output_tokens"],
        }
        start = time.monotonic()
        while True:
            # Sent through extra_body: recent SDK releases dropped the typed keyword.
            if self._send_temperature:
                kwargs["extra_body"] = {"temperature": self._call["temperature"]}
            else:
                kwargs.pop("extra_body", None)
            try:
                resp = client.messages.create(**kwargs)
                break
            except anthropic.APIConnectionError as exc:
                raise TransientJudgeError(f"judge {judge}: {type(exc).__name__}: {exc}") from None
            except (anthropic.APIResponseValidationError, json.JSONDecodeError) as exc:
                raise TransientJudgeError(f"judge {judge}: malformed response body: {exc}") from None
            except anthropic.APIStatusError as exc:
                status = exc.status_code
                if status == 400 and self._send_temperature and "temperature" in str(exc.message).lower():
                    self._send_temperature = False
                    continue
                if status in self._EXTRA_RETRY:
                    raise TransientJudgeError(
                        f"judge {judge}: HTTP {status}: overloaded", status=status
                    ) from None
                raise _status_error(judge, status, str(exc.message)) from None
        duration = time.monotonic() - start
        text = "".join(
            block.text for block in (resp.content or []) if getattr(block, "type", None) == "text"
        )
        text = _nonempty(judge, text)
        usage = getattr(resp, "usage", None)
        return JudgeReply(
            text=text,
            model_resolved=getattr(resp, "model", None) or self.model_id,
            route=self.route,
            prompt_tokens=getattr(usage, "input_tokens", None),
            completion_tokens=getattr(usage, "output_tokens", None),
            duration_seconds=duration,
        )


class GoogleJudge(Judge):
    """Gemini through Vertex AI (``google-genai`` SDK).

    ``system_instruction`` holds the system prompt, the user prompt is ``contents``, with
    ``response_mime_type="application/json"``. The first call sends ``thinking_budget=0``; if the
    model rejects it (HTTP 400 mentioning thinking or the budget) the call is repeated without a
    thinking config and that choice is cached for the rest of the run.

    Parameters
    ----------
    model_id
        The model id sent (``gemini-3.1-pro-preview``).
    project, location
        Vertex project and region; default ``$GOOGLE_CLOUD_PROJECT`` and ``$GOOGLE_CLOUD_LOCATION``
        (region default ``us-central1``). Credentials are Google application default credentials
        unless ``credentials`` is given.
    base_url
        Endpoint override; default ``$GOOGLE_VERTEX_BASE_URL`` (read by the SDK).
    """

    route = "vertex"

    def __init__(
        self,
        model_id: str,
        *,
        config: JudgeConfig | None = None,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        base_url: str | None = None,
        thinking_budget_first_try: int | None = 0,
        response_mime_type: str = "application/json",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.model_id = model_id
        self._call = (config or judge_config()).call
        self._project = project
        self._location = location
        self._credentials = credentials
        self._base_url = base_url
        self._response_mime_type = response_mime_type
        self._thinking_budget = thinking_budget_first_try
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def check_ready(self) -> None:
        if not (self._project or _env("GOOGLE_CLOUD_PROJECT")):
            _require_env("GOOGLE_CLOUD_PROJECT", self.model_id)

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                genai = _import_sdk("google.genai", "Google GenAI")
                types = _import_sdk("google.genai.types", "Google GenAI")
                project = self._project or _require_env("GOOGLE_CLOUD_PROJECT", self.model_id)
                location = self._location or _env("GOOGLE_CLOUD_LOCATION") or "us-central1"
                http_options = types.HttpOptions(
                    base_url=self._base_url, timeout=int(self._timeout * 1000),
                    retry_options=types.HttpRetryOptions(attempts=1),
                )
                self._client = genai.Client(
                    vertexai=True, project=project, location=location,
                    credentials=self._credentials, http_options=http_options,
                )
            return self._client

    def _config(self, system_prompt: str, thinking_budget: int | None) -> Any:
        types = _import_sdk("google.genai.types", "Google GenAI")
        kwargs: dict[str, Any] = {
            "system_instruction": system_prompt,
            "temperature": self._call["temperature"],
            "max_output_tokens": self._call["max_output_tokens"],
            "response_mime_type": self._response_mime_type,
        }
        if thinking_budget is not None:
            kwargs["thinking_config"] = types.ThinkingConfig(thinking_budget=thinking_budget)
        return types.GenerateContentConfig(**kwargs)

    def complete(self, judge: str, system_prompt: str, user_prompt: str) -> JudgeReply:
        errors = _import_sdk("google.genai.errors", "Google GenAI")
        transport_errors = _transport_errors()
        client = self._get_client()
        start = time.monotonic()
        while True:
            budget = self._thinking_budget
            try:
                resp = client.models.generate_content(
                    model=self.model_id, contents=user_prompt, config=self._config(system_prompt, budget)
                )
                break
            except errors.APIError as exc:
                status = int(getattr(exc, "code", 0) or 0)
                detail = f"{getattr(exc, 'status', '')} {getattr(exc, 'message', '') or exc}"
                if status == 400 and budget is not None and (
                    "thinking" in detail.lower() or "budget" in detail.lower()
                ):
                    with self._lock:
                        self._thinking_budget = None  # cached for the rest of the run
                    continue
                raise _status_error(judge, status, detail) from None
            except transport_errors as exc:  # timeouts, dropped connections
                raise TransientJudgeError(f"judge {judge}: {type(exc).__name__}: {exc}") from None
            except json.JSONDecodeError as exc:
                raise TransientJudgeError(f"judge {judge}: malformed response body: {exc}") from None
        duration = time.monotonic() - start
        text = _nonempty(judge, getattr(resp, "text", None))
        usage = getattr(resp, "usage_metadata", None)
        return JudgeReply(
            text=text,
            model_resolved=getattr(resp, "model_version", None) or self.model_id,
            route=self.route,
            prompt_tokens=getattr(usage, "prompt_token_count", None),
            completion_tokens=getattr(usage, "candidates_token_count", None),
            duration_seconds=duration,
        )


def provider_panel(
    config: JudgeConfig | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    overrides: Mapping[str, Judge] | None = None,
) -> dict[str, Judge]:
    """One provider backend per panel alias, built from the judge configuration.

    Parameters
    ----------
    config
        The judge configuration (default: the package's fixed panel).
    timeout
        Per-request timeout in seconds.
    overrides
        Backends to use instead for some aliases.

    Returns
    -------
    dict
        ``{alias: Judge}`` in panel order.
    """
    cfg = config or judge_config()
    panel: dict[str, Judge] = {}
    for entry in cfg.judges:
        alias, provider = entry["alias"], entry["provider"]
        if overrides and alias in overrides:
            panel[alias] = overrides[alias]
        elif provider == "openai":
            panel[alias] = OpenAIJudge(entry["model_id"], config=cfg, timeout=timeout)
        elif provider == "anthropic":
            panel[alias] = AnthropicJudge(entry["model_id"], config=cfg, timeout=timeout)
        elif provider == "google":
            panel[alias] = GoogleJudge(
                entry["model_id"], config=cfg, timeout=timeout,
                thinking_budget_first_try=entry.get("thinking_budget_first_try", 0),
                response_mime_type=entry.get("response_mime_type", "application/json"),
            )
        else:
            raise JudgeCallError(
                f"provider_panel: judge {alias} has unknown provider {provider!r} "
                "(fix: use openai, anthropic or google in the judge configuration)"
            )
    return panel
