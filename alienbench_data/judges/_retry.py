"""API retries with exponential backoff (a transport option: it never changes what is recorded)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ._base import TransientJudgeError

__all__ = ["RETRY_STATUSES", "RetryPolicy", "call_with_retries"]

T = TypeVar("T")

#: HTTP statuses that are retried (rate limits and server errors); timeouts and dropped
#: connections are retried as well.
RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff schedule for transient failures.

    ``delays[k]`` is the wait in seconds before retry ``k + 1``. The default waits 1, 2, 4, 8, 16
    and 32 s (judge-config.md §1), i.e. the first call plus up to 6 retries; after the last retry
    the error is raised.
    """

    delays: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)

    @property
    def max_calls(self) -> int:
        return len(self.delays) + 1


def call_with_retries(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[TransientJudgeError, float], None] | None = None,
) -> T:
    """Call ``fn`` and retry it on :class:`TransientJudgeError` following ``policy``.

    Parameters
    ----------
    fn
        A zero-argument callable making one request.
    policy
        The backoff schedule.
    sleep
        Called with each wait in seconds (inject a no-op or a recorder in tests).
    on_retry
        Optional callback ``(error, wait)`` before each wait.

    Raises
    ------
    TransientJudgeError
        The last transient error when every retry failed. Any other exception propagates at once.
    """
    for delay in (*policy.delays, None):
        try:
            return fn()
        except TransientJudgeError as exc:
            if delay is None:
                raise
            if on_retry is not None:
                on_retry(exc, delay)
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover
