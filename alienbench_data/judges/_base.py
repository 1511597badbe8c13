"""The judge backend interface: one call in, the raw reply text and its usage out."""

from __future__ import annotations

import abc
from dataclasses import dataclass

from ..errors import AlienbenchError

__all__ = [
    "Judge",
    "JudgeCallError",
    "JudgeError",
    "JudgeReply",
    "MissingCredentialsError",
    "TransientJudgeError",
]


@dataclass(frozen=True)
class JudgeReply:
    """What one judge call returned.

    Attributes
    ----------
    text
        The raw reply text exactly as the provider returned it (OpenAI ``choices[0].message.content``,
        Anthropic: all text blocks concatenated, Google: ``response.text``).
    model_resolved
        The model id the provider reports having used (e.g. ``gpt-5.4-2026-03-05``).
    route
        How the call was served: ``openai``, ``anthropic``, ``vertex``, ``replay``, ...
    prompt_tokens, completion_tokens
        Usage as reported by the provider, ``None`` when not reported.
    duration_seconds
        Wall time of the call (for replay: the duration recorded with the replayed judgment).
    """

    text: str
    model_resolved: str | None
    route: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    duration_seconds: float | None = None


class JudgeError(AlienbenchError):
    """A judge call failed."""


class TransientJudgeError(JudgeError):
    """A failure worth retrying with backoff: HTTP 429/500/502/503/504, a timeout, a dropped connection.

    ``status`` is the HTTP status when there was one, ``None`` for timeouts and connection errors.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class JudgeCallError(JudgeError):
    """A failure that retrying the same request will not fix (bad request, auth, empty reply, ...).

    ``fatal`` marks failures that will hit every call of this judge (authentication, unknown
    model): the runner then stops calling that judge.
    """

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


class MissingCredentialsError(JudgeError):
    """A provider's key or project is not set in the environment; raised before any call."""


class Judge(abc.ABC):
    """A judge backend: answers one (judge alias, system prompt, user prompt) call.

    Implementations translate provider failures into :class:`TransientJudgeError` (retried by the
    runner with backoff) or :class:`JudgeCallError` (not retried). They never retry themselves and
    never parse the reply: parsing and the parse-attempt loop live in the runner, so every backend,
    including :class:`~alienbench_data.judges.ReplayJudge`, goes through the same path.
    """

    #: Value recorded in ``scores.judge_route`` for calls served by this backend.
    route: str = ""
    #: ``True`` for backends answering from recorded judgments. Their journal entries are kept
    #: apart from live ones: a replayed answer never counts as a completed live call.
    is_replay: bool = False

    @abc.abstractmethod
    def complete(self, judge: str, system_prompt: str, user_prompt: str) -> JudgeReply:
        """Send one call and return the reply.

        Parameters
        ----------
        judge
            The panel alias, e.g. ``"openai/gpt-5.4"``.
        system_prompt, user_prompt
            The exact texts to send (the runner renders them from the judge configuration).
        """

    def check_ready(self) -> None:  # noqa: B027 - optional hook, no-op by default
        """Raise :class:`MissingCredentialsError` if the backend cannot make calls (checked before any)."""
