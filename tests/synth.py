"""Small synthetic release trees in the authors' upstream layout, made by the tests themselves.

``make_release(root)`` writes config.yaml and data/{generations,extractions,scores} for a few
fake models with the benchmark's real prompt texts and judge aliases, random labels, a human
cell, rows beyond the caps and a quarantine folder, so every selection rule is exercised.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import yaml

from alienbench_data.config import benchmark, generation_seed, judge_config
from alienbench_data.schema import DIMENSIONS, HUMAN_MODEL

MODELS = ("acme/model-a", "beta/model-b")
CALL_PREFIX = {"anthropic": "msg_", "openai": "chatcmpl-", "google": ""}


def _dir(model: str) -> str:
    return model.replace("/", "__")


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def _response(rng: random.Random, model: str, cond: str, i: int) -> str:
    words = ["glassy", "six-limbed", "radial", "ammonia", "drifter", "spore", "hive", "luminous", "crystal"]
    body = " ".join(rng.choice(words) for _ in range(rng.randint(20, 60)))
    end = rng.choice([".", ".", ".", "", "!"])
    return f"The {model.split('/')[1]} creature #{i} of {cond}: {body}{end}"


def make_release(root: Path, *, models: tuple[str, ...] = MODELS, n_main: int = 30, n_para: int = 10,
                 extra: int = 2, n_human: int = 5, seed: int = 7, with_scores: bool = True) -> Path:
    """Write a synthetic release to ``root`` and return it."""
    rng = random.Random(seed)
    bench = benchmark()
    jc = judge_config()
    conditions = bench.raw["conditions"]
    paraphrases = bench.raw["paraphrases"]
    cfg = {
        "models": list(models),
        "judge_models": list(jc.judge_aliases),
        "samples_per_condition": n_main,
        "prompt_ablation_samples_per_condition": n_para,
        "temperature": 1.0,
        "max_tokens": 800,
        "model_overrides": {},
        "prompt_variants": [{"id": c["id"], "label": c["label"], "text": c["text"]} for c in conditions],
        "prompt_paraphrases": [{"id": c["id"], "label": c["label"], "text": c["text"]} for c in paraphrases],
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    data = root / "data"
    ts = 1_777_000_000.0

    cells: list[tuple[str, str, str, int]] = []
    for m in models:
        cells += [(m, c["id"], c["text"], n_main) for c in conditions]
        cells += [(m, p["id"], p["text"], n_para) for p in paraphrases if p["id"] != "baseline"]
    for model, cond, text, cap in cells:
        rows = []
        for i in range(cap + extra):
            ts += 1.0
            rows.append({
                "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "model": model,
                "model_resolved": model + "-20260101",
                "call_id": f"gen-{rng.getrandbits(48):x}",
                "prompt_variant": cond,
                "prompt_text": text,
                "response": _response(rng, model, cond, i),
                "temperature": 1.0,
                "seed": generation_seed(model, cond, i),
                "timestamp": ts,
                "prompt_tokens": 20,
                "completion_tokens": rng.choice([800, rng.randint(100, 799)]),
                "duration_seconds": 10.5,
                "sample_index": i,
            })
        rng.shuffle(rows)  # file order is not sample order
        _write_jsonl(data / "generations" / _dir(model) / cond / "responses.jsonl", rows)
    human = []
    for i in range(n_human):
        pid = f"{rng.getrandbits(96):024x}"
        human.append({
            "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "model": HUMAN_MODEL, "model_resolved": HUMAN_MODEL, "call_id": pid,
            "prompt_variant": "baseline", "prompt_text": conditions[0]["text"],
            "response": f"A creature with {i + 2} legs and fur that walks on land and eats plants.",
            "temperature": None, "seed": None, "timestamp": 1_777_976_000.0 + 60 * i,
            "prompt_tokens": 15, "completion_tokens": 40 + i, "duration_seconds": None,
            "prolific_id": pid, "biology_background": rng.choice(["None", "Undergraduate"]),
            "prior_exposure": rng.choice(["Yes", "No"]),
        })
    _write_jsonl(data / "generations" / _dir(HUMAN_MODEL) / "baseline" / "responses.jsonl", human)

    for judge in jc.judge_aliases:
        provider = judge.split("/")[0]
        for path in sorted((data / "generations").glob("*/*/responses.jsonl")):
            gens = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            model, cond = gens[0]["model"], gens[0]["prompt_variant"]
            ext, sc = [], []
            for g in gens:
                cap = n_main if cond in {c["id"] for c in conditions} else n_para
                if g.get("sample_index", 0) >= cap and rng.random() < 0.7:
                    continue  # most rows beyond the cap are unjudged
                labels = {d: rng.random() < 0.45 for d in DIMENSIONS}
                call = CALL_PREFIX[provider] + f"{rng.getrandbits(64):x}"
                common = {"generation_id": g["id"], "judge_model": judge,
                          "judge_model_resolved": judge.split("/")[1], "judge_call_id": call,
                          "subject_model": model, "prompt_variant": cond, "timestamp": 1_778_000_000.0}
                ext.append({**common, "features": {d: {"feature_described": f"{d} thing", "is_departure": v,
                                                        "reasoning": "Because."} for d, v in labels.items()},
                            "parse_error": False, "raw_response": None, "prompt_tokens": 2200,
                            "completion_tokens": 600, "n_parse_attempts": 1, "duration_seconds": 9.0})
                if g.get("sample_index", 0) < cap:
                    sc.append({**common, "ward_score": sum(labels.values()),
                               "per_dimension": {d: int(v) for d, v in labels.items()}})
            rel = Path(_dir(judge)) / _dir(model) / cond
            _write_jsonl(data / "extractions" / rel / "features.jsonl", ext)
            main_cell = model != HUMAN_MODEL and cond in {c["id"] for c in conditions}
            if with_scores and main_cell:
                _write_jsonl(data / "scores" / rel / "ward_scores.jsonl", sc)
    # things the build must ignore
    _write_jsonl(data / "_quarantine" / "broken-run" / "generations" / "x" / "responses.jsonl", [{"junk": 1}])
    (data / "generations" / "stray__model" / "baseline").mkdir(parents=True, exist_ok=True)
    (data / "generations" / "stray__model" / "baseline" / "responses.jsonl").write_text("")
    return root
