"""The tidy schema of the AlienBench dataset: configs, splits, columns and their types.

This module is the contract between the data package, the analysis package and the
submission tool. Column names are stable; new columns may be added, never renamed.

Configs (tables) and splits
---------------------------
* ``generations`` (PK ``generation_id``): one row per subject response.
* ``judgments`` (PK ``generation_id, judge, feature``): one row per judge label.
* ``scores`` (PK ``generation_id, judge``): one row per (generation, judge) with the Ward score
  and the 10 labels as ``dim_<feature>`` int8 columns.
* ``participants`` (PK ``participant_id``): human background fields, split ``human`` only.

Splits: ``main`` (10 models x 6 conditions x sample_index < 30, plus submitted models),
``paraphrase`` (10 models x 5 paraphrases x sample_index < 10) and ``human`` (100 Prolific
responses to the baseline prompt).
"""

from __future__ import annotations

import datasets

__all__ = [
    "CONDITIONS",
    "CONFIGS",
    "DIMENSIONS",
    "DIM_COLUMNS",
    "FEATURES",
    "HUMAN_MODEL",
    "PARAPHRASES",
    "PRIMARY_KEYS",
    "QUALITY_FLAGS",
    "SPLITS",
    "SPLITS_OF",
]

DIMENSIONS: tuple[str, ...] = (
    "symmetry",
    "sensory_organs",
    "locomotion",
    "body_plan",
    "skin_covering",
    "reproduction",
    "metabolism",
    "communication",
    "habitat",
    "cognition",
)
DIM_COLUMNS: tuple[str, ...] = tuple(f"dim_{d}" for d in DIMENSIONS)

CONDITIONS: tuple[str, ...] = (
    "baseline",
    "departure_primed",
    "constrained_no_light",
    "constrained_high_gravity",
    "constrained_ammonia",
    "detailed_description",
)
PARAPHRASES: tuple[str, ...] = (
    "baseline",
    "baseline_para_a",
    "baseline_para_b",
    "baseline_para_c",
    "baseline_para_d",
    "baseline_para_e",
)
HUMAN_MODEL = "human/prolific-baseline"

SPLITS: tuple[str, ...] = ("main", "paraphrase", "human")
CONFIGS: tuple[str, ...] = ("generations", "judgments", "scores", "participants")
SPLITS_OF: dict[str, tuple[str, ...]] = {
    "generations": SPLITS,
    "judgments": SPLITS,
    "scores": SPLITS,
    "participants": ("human",),
}

QUALITY_FLAGS: dict[str, str] = {
    "hit_max_tokens": "completion_tokens >= the max_tokens the call used (cut at the token limit)",
    "likely_truncated": "hit_max_tokens, or the text ends mid-sentence (no closing punctuation)",
    "early_stop": "ends mid-sentence well below the token limit (provider stopped early)",
    "reasoning_budget_exhausted": (
        "Gemini paraphrase rows run with max_tokens=800 instead of 4000 (the shadow config lost "
        "model_overrides): hidden reasoning used the budget, the visible text is a fragment"
    ),
    "tokens_include_reasoning": (
        "completion_tokens includes hidden reasoning tokens (Gemini, Qwen): not a visible length"
    ),
    "tokens_exceed_max": "completion_tokens above max_tokens for a model without hidden reasoning",
    "cjk_code_switch": "stray CJK characters inside English text",
    "followup_offer": "ends with a chatbot follow-up offer ('Would you like me to ...')",
    "suspected_llm_paste": "human response that looks like pasted chatbot output",
}

_S = datasets.Value("string")
_B = datasets.Value("bool")
_I8 = datasets.Value("int8")
_I16 = datasets.Value("int16")
_I32 = datasets.Value("int32")
_I64 = datasets.Value("int64")
_F32 = datasets.Value("float32")
_F64 = datasets.Value("float64")

FEATURES: dict[str, datasets.Features] = {
    "generations": datasets.Features(
        {
            "generation_id": _S,
            "source": _S,  # "llm" | "human"
            "model": _S,
            "model_resolved": _S,
            "condition": _S,
            "condition_set": _S,  # "main" | "paraphrase" | "human"
            "paraphrase_of": _S,  # "baseline" for paraphrase rows, else null
            "prompt_text": _S,
            "prompt_sha256": _S,
            "sample_index": _I16,
            "seed": _I64,
            "temperature": _F64,
            "max_tokens": _I32,
            "prompt_tokens": _I32,
            "completion_tokens": _I32,
            "duration_seconds": _F64,
            "response": _S,
            "response_chars": _I32,
            "response_words": _I32,
            "hit_max_tokens": _B,
            "likely_truncated": _B,
            "early_stop": _B,
            "tokens_include_reasoning": _B,
            "in_paraphrase_reference": _B,
            "quality_flags": datasets.Sequence(_S),
            "added_in_version": _S,
        }
    ),
    "judgments": datasets.Features(
        {
            "generation_id": _S,
            "model": _S,
            "condition": _S,
            "judge": _S,
            "judge_model_resolved": _S,
            "judge_prompt_sha256": _S,
            "feature": _S,
            "is_departure": _B,
            "feature_described": _S,
            "reasoning": _S,
            "added_in_version": _S,
        }
    ),
    "scores": datasets.Features(
        {
            "generation_id": _S,
            "model": _S,
            "condition": _S,
            "judge": _S,
            "judge_model_resolved": _S,
            "judge_route": _S,  # anthropic | bedrock | vertex | openai | replay | ...
            "judge_config_sha256": _S,
            "judge_prompt_sha256": _S,
            "ward_score": _I8,
            **{c: _I8 for c in DIM_COLUMNS},
            "n_parse_attempts": _I8,
            "judge_prompt_tokens": _I32,
            "judge_completion_tokens": _I32,
            "judge_duration_seconds": _F64,
            "score_source": _S,  # "release_scores" | "recomputed_from_extractions" | "submission"
            "added_in_version": _S,
        }
    ),
    "participants": datasets.Features(
        {
            "participant_id": _S,
            "generation_id": _S,
            "biology_background": _S,
            "prior_exposure": _B,
            "suspected_llm_paste": _B,
            "paste_evidence": _S,
            "excluded_in_paper": _B,  # null: the paper's two exclusions are not identified
        }
    ),
}

PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "generations": ("generation_id",),
    "judgments": ("generation_id", "judge", "feature"),
    "scores": ("generation_id", "judge"),
    "participants": ("participant_id",),
}

# Row order inside every data file (deterministic builds).
SORT_KEYS: dict[str, tuple[str, ...]] = {
    "generations": ("model", "condition", "sample_index", "generation_id"),
    "judgments": ("model", "condition", "generation_id", "judge", "feature_order"),
    "scores": ("model", "condition", "generation_id", "judge"),
    "participants": ("participant_id",),
}
