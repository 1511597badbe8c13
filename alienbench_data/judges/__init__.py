"""The fixed AlienBench judge panel: backends, reply parsing, retries, journal and runner.

Provider SDKs (``openai``, ``anthropic``, ``google-genai``) are the optional extra ``judges`` and
are imported only when a provider backend is used. :class:`ReplayJudge` answers from a dataset's
existing judgments and needs none of them.
"""

from ._base import (
    Judge,
    JudgeCallError,
    JudgeError,
    JudgeReply,
    MissingCredentialsError,
    TransientJudgeError,
)
from ._journal import Journal, JournalError
from ._parse import FeatureLabel, ParseError, parse_reply, render_reply
from ._providers import DEFAULT_TIMEOUT, AnthropicJudge, GoogleJudge, OpenAIJudge, provider_panel
from ._replay import ReplayJudge, ReplayMissError
from ._retry import RETRY_STATUSES, RetryPolicy, call_with_retries
from ._runner import (
    JudgeResult,
    JudgingFailure,
    JudgingReport,
    completed_judgments,
    journal_key,
    judge_one,
    run_judging,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "RETRY_STATUSES",
    "AnthropicJudge",
    "FeatureLabel",
    "GoogleJudge",
    "Journal",
    "JournalError",
    "Judge",
    "JudgeCallError",
    "JudgeError",
    "JudgeReply",
    "JudgeResult",
    "JudgingFailure",
    "JudgingReport",
    "MissingCredentialsError",
    "OpenAIJudge",
    "ParseError",
    "ReplayJudge",
    "ReplayMissError",
    "RetryPolicy",
    "TransientJudgeError",
    "call_with_retries",
    "completed_judgments",
    "journal_key",
    "judge_one",
    "parse_reply",
    "provider_panel",
    "render_reply",
    "run_judging",
]
