"""API retry schedule (judge-config.md §1: waits of 1, 2, 4, 8, 16 and 32 s on 429/5xx/timeouts)."""

from __future__ import annotations

import pytest

from alienbench_data.judges import (
    RETRY_STATUSES,
    JudgeCallError,
    RetryPolicy,
    TransientJudgeError,
    call_with_retries,
)


def failing(n_fail: int, exc: Exception):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= n_fail:
            raise exc
        return "ok"

    return fn, calls


def test_default_schedule_is_1_2_4_8_16_32_then_gives_up():
    waits: list[float] = []
    fn, calls = failing(100, TransientJudgeError("429", status=429))
    with pytest.raises(TransientJudgeError):
        call_with_retries(fn, sleep=waits.append)
    assert waits == [1, 2, 4, 8, 16, 32]
    assert len(calls) == 7 == RetryPolicy().max_calls


def test_success_after_two_transient_errors_waits_twice():
    waits: list[float] = []
    fn, calls = failing(2, TransientJudgeError("503", status=503))
    assert call_with_retries(fn, sleep=waits.append) == "ok"
    assert waits == [1, 2] and len(calls) == 3


def test_non_transient_errors_are_not_retried():
    waits: list[float] = []
    fn, calls = failing(5, JudgeCallError("400"))
    with pytest.raises(JudgeCallError):
        call_with_retries(fn, sleep=waits.append)
    assert waits == [] and len(calls) == 1


def test_retry_statuses_are_the_benchmarks():
    assert frozenset({429, 500, 502, 503, 504}) == RETRY_STATUSES


def test_custom_policy_and_callback():
    seen = []
    fn, _ = failing(1, TransientJudgeError("t"))
    call_with_retries(fn, policy=RetryPolicy(delays=(0.5,)), sleep=lambda s: None,
                      on_retry=lambda e, w: seen.append(w))
    assert seen == [0.5]
