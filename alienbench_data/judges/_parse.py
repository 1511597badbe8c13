"""Parsing and validation of a judge reply, exactly as the benchmark did it (judge-config.md §1)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import judge_config
from ._base import JudgeError

__all__ = ["FeatureLabel", "ParseError", "parse_reply", "render_reply"]

# Step 2: a leading fence (``` optionally followed by "json", plus whitespace) at the start of any line.
_LEADING_FENCE = re.compile(r"^```(?:json)?\s*", re.MULTILINE)
# Step 3: a trailing fence (whitespace plus ```) at the end of any line.
_TRAILING_FENCE = re.compile(r"\s*```$", re.MULTILINE)


@dataclass(frozen=True)
class FeatureLabel:
    """One judge label: the 0/1 decision and the judge's free-text fields (``None`` when absent)."""

    is_departure: bool
    feature_described: str | None
    reasoning: str | None


class ParseError(JudgeError):
    """The reply is not a valid extraction; the runner asks the judge again (up to 3 attempts)."""


def _text_field(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _departure(value: Any, dim: str) -> bool:
    # bool first: in Python True is also an int.
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    raise ParseError(
        f"dimension {dim!r}: is_departure must be a JSON boolean or 0/1, got {json.dumps(value)}"
    )


def parse_reply(text: str, dimensions: Sequence[str] | None = None) -> dict[str, FeatureLabel]:
    """Parse and validate one judge reply.

    Parameters
    ----------
    text
        The raw reply text.
    dimensions
        The dimension ids that must all be present (default: the 10 Ward dimensions of the
        judge configuration).

    Returns
    -------
    dict
        ``{dimension id: FeatureLabel}`` in the order of ``dimensions``.

    Raises
    ------
    ParseError
        When the text is not JSON, not an object (or one-element array holding one), misses a
        dimension, or a dimension's ``is_departure`` is not a JSON boolean or the number 0 or 1.

    Notes
    -----
    The steps are those of the benchmark: trim; remove a leading code fence at the start of any
    line and a trailing fence at the end of any line; ``json.loads``; unwrap a one-element array
    holding an object; require every dimension id with an object value whose ``is_departure`` is a
    boolean or a number equal to 0 or 1. Strings such as ``"false"`` are rejected. Keys beyond the
    dimensions are ignored.
    """
    if dimensions is None:
        dimensions = judge_config().dimension_ids
    cleaned = text.strip()
    cleaned = _LEADING_FENCE.sub("", cleaned)
    cleaned = _TRAILING_FENCE.sub("", cleaned)
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict):
        raise ParseError(f"reply must be a JSON object, got {type(data).__name__}")
    missing = [d for d in dimensions if d not in data]
    if missing:
        raise ParseError(f"reply misses dimension(s) {', '.join(missing)}")
    labels: dict[str, FeatureLabel] = {}
    for dim in dimensions:
        entry = data[dim]
        if not isinstance(entry, dict):
            raise ParseError(f"dimension {dim!r}: value must be an object, got {type(entry).__name__}")
        if "is_departure" not in entry:
            raise ParseError(f"dimension {dim!r}: no is_departure key")
        labels[dim] = FeatureLabel(
            is_departure=_departure(entry["is_departure"], dim),
            feature_described=_text_field(entry.get("feature_described")),
            reasoning=_text_field(entry.get("reasoning")),
        )
    return labels


def render_reply(labels: dict[str, FeatureLabel] | dict[str, dict[str, Any]]) -> str:
    """A JSON reply text in the judge's output format (used by the replay backend and the tests)."""
    out: dict[str, dict[str, Any]] = {}
    for dim, lab in labels.items():
        if isinstance(lab, FeatureLabel):
            lab = {"feature_described": lab.feature_described, "is_departure": lab.is_departure,
                   "reasoning": lab.reasoning}
        out[dim] = {k: lab.get(k) for k in ("feature_described", "is_departure", "reasoning")}
    return json.dumps(out, ensure_ascii=False, indent=2)
