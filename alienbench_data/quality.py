"""Per-generation quality columns and flags (documented in the dataset card).

The release records no finish_reason, so truncation is inferred from completion_tokens against
the max_tokens the call used and from whether the text ends mid-sentence. Rules are simple and
public so users can recompute or replace them.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["REASONING_TOKENS_PER_WORD", "add_quality_columns", "ends_mid_sentence", "word_count"]

# Median completion tokens per visible word above which a model's token counts are taken to
# include hidden reasoning (Gemini and Qwen: 3.3-4.2; every other model: 1.3-2.4).
REASONING_TOKENS_PER_WORD = 2.8
# A reasoning model whose count lands within 2% below its cap ran out of budget mid-thought.
_BUDGET_FRACTION = 0.98
# Visible text shorter than this that ends mid-sentence is an early stop for reasoning models.
_EARLY_STOP_CHARS = 500

_CLOSERS = ".!?…\"'”’)]}"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FOLLOWUP = re.compile(
    r"(would you like (me )?to|let me know if you(?:'d| would)? (?:like|want)|"
    r"i can also (?:expand|describe|write)|shall i )",
    re.IGNORECASE,
)
_PASTE_ZWSP = "\u200b"


def ends_mid_sentence(text: str) -> bool:
    """True when the text, ignoring trailing whitespace and markdown emphasis, lacks closing
    punctuation (``. ! ? …`` or a closing quote/bracket)."""
    s = text.rstrip().rstrip("*_`~ ")
    return not s or s[-1] not in _CLOSERS


def word_count(text: str) -> int:
    """Whitespace-separated words of the visible text."""
    return len(text.split())


def _tail(text: str, n: int = 300) -> str:
    return text.rstrip()[-n:]


def add_quality_columns(gen: pd.DataFrame) -> pd.DataFrame:
    """Add response_chars, response_words, the boolean quality columns and ``quality_flags``.

    Expects columns: model, source, condition_set, response, completion_tokens, max_tokens.
    ``tokens_include_reasoning`` is decided per model from its main-study (or, failing that,
    all) rows, so a submitted model is judged by the same rule as the released ones.
    """
    out = gen.copy()
    text = out["response"].astype(str)
    out["response_chars"] = text.str.len().astype("int32")
    out["response_words"] = text.map(word_count).astype("int32")
    mid = text.map(ends_mid_sentence)
    ct = out["completion_tokens"].astype("float64")
    mx = out["max_tokens"].astype("float64")
    llm = out["source"].eq("llm")

    ratio = ct / out["response_words"].clip(lower=1)
    basis = out["condition_set"].eq("main")
    per_model = {}
    for model, grp in ratio.groupby(out["model"]):
        main_part = grp[basis.loc[grp.index]]
        per_model[model] = float(np.median(main_part if len(main_part) else grp))
    reasoning = llm & out["model"].map(per_model).gt(REASONING_TOKENS_PER_WORD)

    hit = llm & ~reasoning & mx.notna() & (ct >= mx)
    budget = llm & reasoning & mx.notna() & (ct >= _BUDGET_FRACTION * mx) & (ct <= mx)
    likely = llm & (hit | budget | mid)
    early_nonreasoning = ~reasoning & mx.notna() & (ct < 0.95 * mx)
    early_reasoning = reasoning & out["response_chars"].lt(_EARLY_STOP_CHARS)
    early = llm & mid & ~hit & ~budget & (early_nonreasoning | early_reasoning)
    exceed = llm & ~reasoning & mx.notna() & (ct > mx)

    out["hit_max_tokens"] = hit.astype(bool)
    out["likely_truncated"] = likely.astype(bool)
    out["early_stop"] = early.astype(bool)
    out["tokens_include_reasoning"] = reasoning.astype(bool)

    cjk = text.map(lambda t: bool(_CJK.search(t)))
    follow = text.map(lambda t: bool(_FOLLOWUP.search(_tail(t))))
    paste = ~llm & text.map(lambda t: _PASTE_ZWSP in t or bool(_FOLLOWUP.search(_tail(t))))

    # Flag order is fixed (the QUALITY_FLAGS order of the card), so rows compare equal across builds.
    named = [("hit_max_tokens", hit), ("likely_truncated", likely), ("early_stop", early),
             ("reasoning_budget_exhausted", budget), ("tokens_include_reasoning", reasoning),
             ("tokens_exceed_max", exceed), ("cjk_code_switch", cjk), ("followup_offer", follow),
             ("suspected_llm_paste", paste)]
    masks = [(name, mask.to_numpy(dtype=bool)) for name, mask in named]
    flags = [[name for name, mask in masks if mask[i]] for i in range(len(out))]
    out["quality_flags"] = flags
    return out


def paste_evidence(text: str) -> str:
    """Why a human response is suspected of being pasted chatbot output ('' if not)."""
    reasons = []
    if _PASTE_ZWSP in text:
        reasons.append(f"{text.count(_PASTE_ZWSP)} zero-width spaces (U+200B) joining paragraphs")
    m = _FOLLOWUP.search(_tail(text))
    if m:
        reasons.append(f"ends with a chatbot follow-up offer ({m.group(0).strip()!r})")
    return "; ".join(reasons)
