"""The replay judge: answers from judgments already in a dataset, through the normal parse path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..config import JudgeConfig, canonical_json, judge_config, sha256_text
from ._base import Judge, JudgeError, JudgeReply
from ._parse import FeatureLabel, render_reply

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ReplayJudge", "ReplayMissError"]


class ReplayMissError(JudgeError):
    """The replay dataset holds no judgment for this prompt and judge (not retried)."""


def _is_null(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (ImportError, TypeError, ValueError):  # pragma: no cover - non-scalar values
        return False


def _opt_int(value: Any) -> int | None:
    return None if _is_null(value) else int(value)


def _opt_float(value: Any) -> float | None:
    return None if _is_null(value) else float(value)


def _opt_str(value: Any) -> str | None:
    return None if _is_null(value) else str(value)


class ReplayJudge(Judge):
    """Answer judge calls from a dataset's existing ``judgments`` and ``scores``.

    A call is looked up by the sha256 of the exact prompt it carries (``judge_prompt_sha256``:
    canonical JSON of ``{"system", "user"}``, see :meth:`JudgeConfig.prompt_sha256`) and the judge
    alias. The reply is a JSON text rebuilt from the 10 judgment rows, so it goes through the same
    parse and validation path as a provider's reply. Usage (resolved judge model, tokens, duration)
    is the one recorded with the replayed judgment; the route is ``replay``.

    Parameters
    ----------
    judgments
        Frame with at least ``judge``, ``judge_prompt_sha256``, ``feature``, ``is_departure``,
        ``feature_described``, ``reasoning``, ``judge_model_resolved``.
    scores
        Frame with at least ``judge``, ``judge_prompt_sha256``, ``judge_model_resolved``,
        ``judge_prompt_tokens``, ``judge_completion_tokens``, ``judge_duration_seconds``; optional
        (``None``) to replay without usage.
    config
        The judge configuration (its dimension ids define the reply).

    Raises
    ------
    ReplayMissError
        From :meth:`complete` when the dataset has no complete judgment for the prompt and judge,
        or when it holds two different judgments for the same prompt and judge.
    """

    route = "replay"
    is_replay = True

    def __init__(
        self,
        judgments: pd.DataFrame,
        scores: pd.DataFrame | None = None,
        *,
        config: JudgeConfig | None = None,
    ) -> None:
        self._config = config or judge_config()
        dims = self._config.dimension_ids
        needed = {"judge", "judge_prompt_sha256", "feature", "is_departure", "feature_described", "reasoning"}
        missing = needed - set(judgments.columns)
        if missing:
            raise ValueError(
                f"ReplayJudge: judgments frame lacks column(s) {sorted(missing)} "
                "(fix: pass the dataset's 'judgments' config as loaded)"
            )
        grouped: dict[tuple[str, str], dict[str, dict[str, FeatureLabel]]] = {}
        resolved: dict[tuple[str, str], str | None] = {}
        cols = ["judge", "judge_prompt_sha256", "generation_id", "feature", "is_departure",
                "feature_described", "reasoning"]
        has_gid = "generation_id" in judgments.columns
        has_res = "judge_model_resolved" in judgments.columns
        frame = judgments[[c for c in cols if c in judgments.columns]
                          + (["judge_model_resolved"] if has_res else [])]
        for row in frame.itertuples(index=False):
            key = (str(row.judge), str(row.judge_prompt_sha256))
            gid = str(row.generation_id) if has_gid else ""
            grouped.setdefault(key, {}).setdefault(gid, {})[str(row.feature)] = FeatureLabel(
                is_departure=bool(row.is_departure),
                feature_described=_opt_str(row.feature_described),
                reasoning=_opt_str(row.reasoning),
            )
            if has_res:
                resolved[key] = _opt_str(row.judge_model_resolved)
        self._replies: dict[tuple[str, str], str] = {}
        self._problems: dict[tuple[str, str], str] = {}
        for key, by_gid in grouped.items():
            texts = set()
            for gid, labels in by_gid.items():
                if set(labels) != set(dims):
                    self._problems[key] = (
                        f"generation {gid} has judgments for {len(labels)} of {len(dims)} features"
                    )
                    break
                texts.add(render_reply({d: labels[d] for d in dims}))
            else:
                if len(texts) > 1:
                    self._problems[key] = (
                        f"{len(by_gid)} generations share this prompt with different judgments"
                    )
                else:
                    self._replies[key] = texts.pop()
        self._usage: dict[tuple[str, str], dict[str, Any]] = {}
        if scores is not None:
            for row in scores.to_dict("records"):
                key = (str(row["judge"]), str(row["judge_prompt_sha256"]))
                self._usage[key] = {
                    "model_resolved": _opt_str(row.get("judge_model_resolved")),
                    "prompt_tokens": _opt_int(row.get("judge_prompt_tokens")),
                    "completion_tokens": _opt_int(row.get("judge_completion_tokens")),
                    "duration_seconds": _opt_float(row.get("judge_duration_seconds")),
                }
        for key, res in resolved.items():
            self._usage.setdefault(key, {"model_resolved": res})

    def __len__(self) -> int:
        return len(self._replies)

    def complete(self, judge: str, system_prompt: str, user_prompt: str) -> JudgeReply:
        prompt_sha = sha256_text(canonical_json({"system": system_prompt, "user": user_prompt}))
        key = (judge, prompt_sha)
        if key in self._problems:
            raise ReplayMissError(
                f"replay judge {judge}: cannot replay prompt {prompt_sha[:12]}: {self._problems[key]}"
            )
        text = self._replies.get(key)
        if text is None:
            raise ReplayMissError(
                f"replay judge {judge}: the replay dataset has no judgment for prompt sha256 "
                f"{prompt_sha[:12]}... (fix: the response text must be byte-identical to a judged "
                "response in the replay dataset, or judge with the providers instead of --replay)"
            )
        usage = self._usage.get(key, {})
        return JudgeReply(
            text=text,
            model_resolved=usage.get("model_resolved"),
            route=self.route,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            duration_seconds=usage.get("duration_seconds"),
        )
