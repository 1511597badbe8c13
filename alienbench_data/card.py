"""The dataset card (README.md): YAML front matter with typed configs + generated prose.

The YAML lists every data file explicitly (no globs). Adding a version therefore changes the
card, which changes the cache key ``datasets`` derives for a local folder: a plain
``load_dataset("alienbench", cfg)`` cannot serve rows from before the change (the stale-cache
trap of hf-dataset-notes.md).
"""

from __future__ import annotations

from pathlib import Path
from string import Template

import pandas as pd
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from .config import benchmark, judge_config
from .io import atomic_write_text
from .manifest import Manifest, list_versions, read_manifest
from .schema import CONFIGS, DIMENSIONS, FEATURES, QUALITY_FLAGS, SPLITS_OF

__all__ = ["COLUMN_DOCS", "TEMPLATE_PATH", "render_card", "write_card"]

TEMPLATE_PATH = Path(__file__).resolve().parent.parent / "dataset_card" / "README.template.md"

COLUMN_DOCS: dict[str, str] = {
    "generation_id": "UUID of the subject response (the release's `id`)",
    "source": "`llm` or `human`",
    "model": "subject model id (OpenRouter id), `human/prolific-baseline` for people",
    "model_resolved": "upstream model snapshot the provider reported",
    "condition": "prompt condition id (6 main conditions; `baseline_para_a`..`e` for paraphrases)",
    "condition_set": "`main`, `paraphrase` or `human` (equals the split)",
    "paraphrase_of": "`baseline` for paraphrase rows, else null",
    "prompt_text": "exact prompt sent (one user message, no system prompt)",
    "prompt_sha256": "sha256 of prompt_text (UTF-8)",
    "sample_index": "0-29 main, 0-9 paraphrase; humans 0-99 assigned by submission order",
    "seed": "sha256('model|condition|sample_index')[:4] big-endian mod 2^31; null for humans",
    "temperature": "sampling temperature (1.0); null for humans",
    "max_tokens": "output-token limit of the call actually made (Gemini: 4000 main, 800 paraphrase)",
    "prompt_tokens": "provider-reported prompt tokens",
    "completion_tokens": "provider-reported completion tokens; includes hidden reasoning for Gemini/Qwen;"
                         " a tokenizer count for humans",
    "duration_seconds": "wall time of the call; null for humans",
    "response": "the response text, byte-exact (markdown kept)",
    "response_chars": "characters in response",
    "response_words": "whitespace-separated words in response",
    "hit_max_tokens": "completion_tokens >= max_tokens (models without hidden reasoning)",
    "likely_truncated": "hit_max_tokens, reasoning budget exhausted, or ends mid-sentence",
    "early_stop": "ends mid-sentence well below the limit",
    "tokens_include_reasoning": "this model's token counts include hidden reasoning",
    "in_paraphrase_reference": "main baseline row used as the paraphrase ablation's baseline column",
    "quality_flags": "list of quality flags (see Known issues)",
    "added_in_version": "dataset version that added the row",
    "judge": "judge alias (panel key)",
    "judge_model_resolved": "model id the judge's provider reported",
    "judge_prompt_sha256": "sha256 of the exact prompt this judge saw (see the judge section)",
    "feature": "one of the 10 Ward features",
    "is_departure": "true = departs from the Earth default",
    "feature_described": "what the judge says the creature has",
    "reasoning": "the judge's one-sentence justification",
    "judge_route": "how the call was served: anthropic, bedrock, vertex, openai (or replay)",
    "judge_config_sha256": "sha256 of the judge configuration (canonical JSON)",
    "ward_score": "Ward Departure Score of this judge: sum of the 10 labels (0-10)",
    "n_parse_attempts": "judge calls needed to get a valid JSON reply (max 3)",
    "judge_prompt_tokens": "judge call prompt tokens",
    "judge_completion_tokens": "judge call completion tokens",
    "judge_duration_seconds": "judge call wall time",
    "score_source": "`release_scores` (release score files, cross-checked), `recomputed_from_extractions`"
                    " (paraphrase/human: the release ships no score files) or `submission`",
    "participant_id": "pseudonymous participant number P001-P100",
    "biology_background": "self-reported biology background (4 levels)",
    "prior_exposure": "prior exposure to speculative biology",
    "suspected_llm_paste": "response looks like pasted chatbot output",
    "paste_evidence": "why it is suspected",
    "excluded_in_paper": "the paper excludes two responses but does not name them: null for all",
}
for _d in DIMENSIONS:
    COLUMN_DOCS[f"dim_{_d}"] = f"label of `{_d}` (0/1)"


def _dtype(feature: object) -> str:
    dtype = getattr(feature, "dtype", None)
    if dtype is not None and dtype != "list":
        return str(dtype)
    inner = getattr(feature, "feature", None)
    return f"list<{_dtype(inner)}>" if inner is not None else type(feature).__name__


def _md_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _column_tables() -> str:
    parts = []
    for config in CONFIGS:
        rows = [[f"`{name}`", _dtype(f), COLUMN_DOCS.get(name, "")] for name, f in FEATURES[config].items()]
        parts.append(f"### `{config}`\n\n" + _md_table(["column", "type", "meaning"], rows))
    return "\n\n".join(parts)


def _frames(root: Path, manifest: Manifest, config: str) -> dict[str, pd.DataFrame]:
    out = {}
    for split in SPLITS_OF[config]:
        files = manifest.files_of(config, split)
        if files:
            out[split] = pd.concat([pd.read_parquet(root / f.path) for f in files], ignore_index=True)
    return out


def _counts(gens: dict[str, pd.DataFrame], scores: dict[str, pd.DataFrame]) -> str:
    parts = []
    if "main" in gens:
        g = gens["main"]
        conds = [c for c in benchmark().condition_ids if c in set(g["condition"])]
        tab = g.pivot_table(index="model", columns="condition", values="generation_id", aggfunc="count",
                            fill_value=0).reindex(columns=conds, fill_value=0)
        s = scores.get("main")
        judges = s.groupby("model")["judge"].nunique() if s is not None else pd.Series(dtype=int)
        rows = [[f"`{m}`", *[int(tab.loc[m, c]) for c in conds], int(tab.loc[m].sum()),
                 int(judges.get(m, 0))] for m in tab.index]
        parts.append("**main** (generations per model x condition; judges per generation):\n\n"
                     + _md_table(["model", *conds, "total", "judges"], rows))
    if "paraphrase" in gens:
        g = gens["paraphrase"]
        tab = g.pivot_table(index="model", columns="condition", values="generation_id", aggfunc="count",
                            fill_value=0)
        rows = [[f"`{m}`", *[int(v) for v in tab.loc[m]], int(tab.loc[m].sum())] for m in tab.index]
        parts.append("**paraphrase**:\n\n" + _md_table(["model", *tab.columns, "total"], rows))
    totals = []
    for split in ("main", "paraphrase", "human"):
        if split in gens:
            n_s = len(scores.get(split, []))
            totals.append([split, len(gens[split]), n_s, n_s * len(DIMENSIONS)])
    parts.append("Totals:\n\n" + _md_table(["split", "generations", "scores", "judgments"], totals))
    return "\n\n".join(parts)


def _leaderboard(scores: dict[str, pd.DataFrame], gens: dict[str, pd.DataFrame]) -> str:
    s = scores.get("main")
    if s is None or not len(s):
        return ""
    per_gen = s.groupby(["model", "generation_id"])["ward_score"].mean()
    by_model = per_gen.groupby(level="model").agg(["mean", "std", "count"]).sort_values("mean", ascending=False)
    added = gens["main"].groupby("model")["added_in_version"].first()
    rows = [[i + 1, f"`{m}`", f"{r['mean']:.2f}", f"{r['std']:.2f}", int(r["count"]), added.get(m, "")]
            for i, (m, r) in enumerate(by_model.iterrows())]
    return ("### Leaderboard (main split)\n\nMean Ward score of the judge-averaged responses (SD over "
            "responses). `alienbench reproduce` adds bootstrap CIs, per-condition and length-adjusted "
            "rankings.\n\n" + _md_table(["rank", "model", "mean Ward", "SD", "n", "added in"], rows))


def _judge_section(manifest: Manifest) -> str:
    jc = judge_config()
    rows = [[f"`{j['alias']}`", j["provider"], f"`{j['model_id']}`"] for j in jc.judges]
    call = jc.call
    ex = jc.prompt_sha256("")
    return (
        f"Judge configuration sha256 (canonical JSON of `alienbench_data/resources/judge_config.json`): "
        f"`{manifest.judge_config_sha256}`.\n\n"
        + _md_table(["judge alias", "provider", "model id sent"], rows)
        + f"\n\nCalls: temperature {call['temperature']}, max output tokens {call['max_output_tokens']}, "
        f"no seed, up to {call['max_parse_attempts']} parse attempts; the reply must be a JSON object "
        "labelling all 10 features with a boolean `is_departure`.\n\n"
        "Every `scores` and `judgments` row carries `judge_prompt_sha256`: the sha256 of the canonical "
        'JSON `{"system": <system prompt>, "user": <user message>}` (sorted keys, no whitespace, UTF-8), '
        "where the user message is the template with the response substituted verbatim. "
        f"Check value for an empty response: `{ex}`.\n\n"
        "The 10 features: " + ", ".join(f"`{d}`" for d in DIMENSIONS) + "."
    )


def _conditions() -> tuple[str, str]:
    b = benchmark().raw
    cond = _md_table(["id", "label", "prompt"], [[f"`{c['id']}`", c["label"], c["text"]] for c in b["conditions"]])
    para = _md_table(["id", "label", "prompt"], [[f"`{c['id']}`", c["label"], c["text"]] for c in b["paraphrases"]])
    return cond, para


def _known_issues(gens: dict[str, pd.DataFrame], scores: dict[str, pd.DataFrame],
                  parts: dict[str, pd.DataFrame]) -> str:
    def n(split: str, col: str) -> int:
        g = gens.get(split)
        return int(g[col].sum()) if g is not None and col in g else 0

    def nflag(split: str, flag: str) -> int:
        g = gens.get(split)
        return int(g["quality_flags"].map(lambda f: flag in list(f)).sum()) if g is not None else 0

    def models_with(split: str, col: str) -> str:
        g = gens.get(split)
        if g is None:
            return ""
        return ", ".join(f"`{m}`" for m in sorted(g.loc[g[col].astype(bool), "model"].unique()))

    nm, npar = len(gens.get("main", [])), len(gens.get("paraphrase", []))
    human = gens.get("human")
    n_h = len(human) if human is not None else 0
    p = parts.get("human")
    n_paste = int(p["suspected_llm_paste"].sum()) if p is not None else 0
    s_all = pd.concat(list(scores.values())) if scores else pd.DataFrame()
    bedrock = int((s_all.get("judge_route", pd.Series(dtype=str)) == "bedrock").sum())
    retries = int((s_all.get("n_parse_attempts", pd.Series(dtype=float)) > 1).sum())
    budget_models = ""
    gp = gens.get("paraphrase")
    if gp is not None:
        budget_models = ", ".join(f"`{m}`" for m in sorted(
            gp.loc[gp["quality_flags"].map(lambda f: "reasoning_budget_exhausted" in list(f)), "model"].unique()))
    items = [
        f"**Responses cut at the token limit.** No finish_reason was recorded. {n('main', 'hit_max_tokens')} of "
        f"{nm} main and {n('paraphrase', 'hit_max_tokens')} of {npar} paraphrase responses reach "
        f"`max_tokens` (800); counting responses that end mid-sentence, {n('main', 'likely_truncated')} main and "
        f"{n('paraphrase', 'likely_truncated')} paraphrase responses are `likely_truncated`. They stay in the "
        "canonical set because the paper used them.",
        f"**Gemini paraphrase responses are truncated fragments.** The ablation's shadow config lost the "
        f"`max_tokens: 4000` override, so these calls ran with 800 and hidden reasoning used the budget: "
        f"{nflag('paraphrase', 'reasoning_budget_exhausted')} paraphrase rows ({budget_models}) carry "
        "`reasoning_budget_exhausted`. Their near-zero scores distort the paraphrase ablation.",
        f"**Token counts include hidden reasoning** for {models_with('main', 'tokens_include_reasoning')}: "
        f"{n('main', 'tokens_include_reasoning')} main and {n('paraphrase', 'tokens_include_reasoning')} "
        "paraphrase rows (`tokens_include_reasoning`). Per-token length adjustments are not comparable across "
        "models; `response_words` is a visible-length alternative.",
        f"**Early stops**: {n('main', 'early_stop')} main and {n('paraphrase', 'early_stop')} paraphrase "
        "responses end mid-sentence far below the limit (`early_stop`).",
        f"**Token counts above the limit** for models without hidden reasoning: "
        f"{nflag('main', 'tokens_exceed_max')} main rows (`tokens_exceed_max`).",
        f"**The paper's two excluded human responses are not excluded in the data.** The paper says two "
        f"suspicious responses were excluded, but the release and the authors' tables use all {n_h}; the two are "
        "not named, so `participants.excluded_in_paper` is null for everyone.",
        f"**Suspected pasted chatbot texts**: {n_paste} human responses (`suspected_llm_paste`, with "
        "`paste_evidence`: zero-width-space paragraph joins or a chatbot follow-up offer). Kept, flagged.",
        f"**Follow-up offers** ('Would you like me to...'): {nflag('main', 'followup_offer')} main, "
        f"{nflag('paraphrase', 'followup_offer')} paraphrase, {nflag('human', 'followup_offer')} human rows.",
        f"**Stray CJK tokens** in English text: {nflag('main', 'cjk_code_switch')} main rows "
        "(`cjk_code_switch`).",
        f"**Bedrock-routed judge calls**: {bedrock} Claude-judge rows went through the AWS Bedrock failover "
        "(`judge_route = bedrock`) although their `judge_model_resolved` reads the direct-API id.",
        f"**Parse retries**: {retries} judge row(s) needed more than one call (`n_parse_attempts`).",
        "**Not shipped**: main generations with sample_index 30-49 and paraphrase generations with "
        "sample_index >= 10 (an earlier, larger run; mostly unjudged), their stray judge records, the "
        "`_quarantine` folder (a broken Gemini run) and an empty stray folder. Human `completion_tokens` is "
        "a tokenizer count, not a word count.",
        "**Creature-name repetition** (\"Zorvath-9\", \"Veyth'zun\") across responses is real model "
        "behaviour, not duplication: no two responses are identical.",
    ]
    flags = _md_table(["flag", "meaning"], [[f"`{k}`", v] for k, v in QUALITY_FLAGS.items()])
    return "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1)) + "\n\nQuality flags:\n\n" + flags


def _versions(root: Path, manifest: Manifest) -> str:
    rows = []
    for v in list_versions(root):
        m = manifest if v == manifest.version else read_manifest(root, v)
        rows.append([f"v{v}", f"`{m.sha256[:16]}…`",
                     f"`{m.previous_manifest_sha256[:16]}…`" if m.previous_manifest_sha256 else "-",
                     " ".join(m.notes)])
    return _md_table(["version", "manifest sha256", "previous", "notes"], rows)


def render_card(root: Path, manifest: Manifest) -> str:
    """The full README.md of the dataset folder at ``root`` for ``manifest``."""
    data = CardData.collect(root, manifest)
    card_data = DatasetCardData(
        pretty_name="AlienBench",
        license="other",
        language=["en"],
        task_categories=["text-generation"],
        tags=["benchmark", "llm-as-a-judge", "creativity", "novelty"],
        size_categories=["10K<n<100K"],
    )
    meta = {}
    infos = {}
    for config in CONFIGS:
        splits = [s for s in SPLITS_OF[config] if manifest.files_of(config, s)]
        if not splits:
            continue
        meta[config] = {"data_files": [{"split": s, "path": [f.path for f in manifest.files_of(config, s)]}
                                       for s in splits]}
        if config == "scores":
            meta[config]["default"] = True
        sd = SplitDict()
        for s in splits:
            sd.add(SplitInfo(name=s, num_examples=manifest.rows(config, s)))
        infos[config] = DatasetInfo(features=FEATURES[config], splits=sd, config_name=config)
    MetadataConfigs(meta).to_dataset_card_data(card_data)
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    conds, paras = _conditions()
    body = Template(TEMPLATE_PATH.read_text(encoding="utf-8")).substitute(
        source=f"{manifest.source.get('repository', '?')}@{manifest.source.get('commit', '?')}",
        version=manifest.version,
        manifest_sha256=manifest.sha256,
        n_main_models=len(data.gens["main"]["model"].unique()) if "main" in data.gens else 0,
        column_tables=_column_tables(),
        counts=_counts(data.gens, data.scores) + "\n\n" + _leaderboard(data.scores, data.gens),
        judge_section=_judge_section(manifest),
        conditions_table=conds,
        paraphrase_table=paras,
        known_issues=_known_issues(data.gens, data.scores, data.parts),
        versions=_versions(root, manifest),
    )
    return str(DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n{body}"))


class CardData:
    def __init__(self, gens: dict[str, pd.DataFrame], scores: dict[str, pd.DataFrame],
                 parts: dict[str, pd.DataFrame]) -> None:
        self.gens, self.scores, self.parts = gens, scores, parts

    @classmethod
    def collect(cls, root: Path, manifest: Manifest) -> CardData:
        return cls(_frames(root, manifest, "generations"), _frames(root, manifest, "scores"),
                   _frames(root, manifest, "participants"))


def write_card(root: Path, manifest: Manifest, tables: object = None) -> Path:
    """Render and atomically write ``root/README.md``. ``tables`` is accepted for API symmetry."""
    del tables  # the card is rendered from the files on disk, exactly what users will load
    path = Path(root) / "README.md"
    atomic_write_text(path, render_card(Path(root), manifest))
    return path

