"""Per-generation quality flags on hand-made rows (each rule from the card, checked by hand)."""

from __future__ import annotations

import pandas as pd
import pytest

from alienbench_data.quality import add_quality_columns, ends_mid_sentence, paste_evidence


@pytest.mark.parametrize(("text", "mid"), [
    ("It glows.", False), ("It glows!  \n", False), ("It *glows.*", False), ("He said \"go.\"", False),
    ("It glo", True), ("## Habitat\n\n", True), ("", True), ("A list:", True), ("(see above)", False),
])
def test_ends_mid_sentence(text: str, mid: bool) -> None:
    assert ends_mid_sentence(text) is mid


def _rows(*rows: dict) -> pd.DataFrame:
    base = {"source": "llm", "condition_set": "main", "max_tokens": 800}
    return add_quality_columns(pd.DataFrame([{**base, **r} for r in rows]))


def _text(words: int, end: str = ".") -> str:
    return " ".join(["word"] * words) + end


def test_hit_cap_truncation_and_early_stop() -> None:
    # model a: ~1.6 tokens per word (no hidden reasoning)
    out = _rows(
        {"model": "a", "response": _text(500), "completion_tokens": 800},           # at the cap
        {"model": "a", "response": _text(300, ""), "completion_tokens": 480},       # stopped mid-sentence early
        {"model": "a", "response": _text(300), "completion_tokens": 480},           # clean finish
        {"model": "a", "response": _text(500), "completion_tokens": 913},           # above the cap
    )
    assert out["hit_max_tokens"].tolist() == [True, False, False, True]
    assert out["early_stop"].tolist() == [False, True, False, False]
    assert out["likely_truncated"].tolist() == [True, True, False, True]
    assert "tokens_exceed_max" in out.loc[3, "quality_flags"] and "tokens_exceed_max" not in out.loc[0, "quality_flags"]
    assert not out["tokens_include_reasoning"].any()


def test_reasoning_models_and_exhausted_budget() -> None:
    # model r: 2000 tokens for 400 visible words -> hidden reasoning
    out = _rows(
        {"model": "r", "response": _text(400), "completion_tokens": 2000, "max_tokens": 4000},
        {"model": "r", "response": _text(18, ""), "completion_tokens": 796, "condition_set": "paraphrase"},
        {"model": "r", "response": _text(10, ""), "completion_tokens": 2317, "max_tokens": 4000},
    )
    assert out["tokens_include_reasoning"].all()
    assert not out["hit_max_tokens"].any()  # counts include reasoning: the cap rule does not apply
    assert ["reasoning_budget_exhausted" in f for f in out["quality_flags"]] == [False, True, False]
    assert out["early_stop"].tolist() == [False, False, True]  # short visible text, mid-sentence


def test_text_flags_and_human_paste() -> None:
    out = _rows(
        {"model": "a", "response": "It eats 极高 rocks.", "completion_tokens": 10},
        {"model": "a", "response": "It eats rocks. Would you like me to expand on it?", "completion_tokens": 20},
        {"model": "h", "source": "human", "condition_set": "human", "max_tokens": None,
         "response": "Para one.\u200b\nPara two.", "completion_tokens": 6},
        {"model": "h", "source": "human", "condition_set": "human", "max_tokens": None,
         "response": "A blob with legs.", "completion_tokens": 5},
    )
    flags = out["quality_flags"].tolist()
    assert "cjk_code_switch" in flags[0]
    assert "followup_offer" in flags[1] and "suspected_llm_paste" not in flags[1]  # only humans paste
    assert flags[2] == ["suspected_llm_paste"] and flags[3] == []
    assert not out.loc[2:, "likely_truncated"].any()  # human rows get no truncation flags
    assert "U+200B" in paste_evidence("a\u200bb") and paste_evidence("plain text.") == ""
