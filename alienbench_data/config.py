"""The fixed benchmark protocol and judge panel, shipped as data files in the package.

``resources/judge_config.json`` holds the exact judge prompt (system prompt, user template,
the 10 dimension definitions), the three judges and their call parameters.
``resources/benchmark.json`` holds the models, prompt conditions, paraphrases, generation
parameters and the seed rule. Both are identified by the sha256 of their canonical JSON, so a
changed prompt can never silently reuse old judgments.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = [
    "Benchmark",
    "JudgeConfig",
    "benchmark",
    "canonical_json",
    "generation_seed",
    "judge_config",
    "sha256_text",
]


def canonical_json(obj: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no whitespace, UTF-8 (used for every content hash)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def sha256_text(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def _read_resource(name: str) -> dict[str, Any]:
    with resources.files("alienbench_data.resources").joinpath(name).open(encoding="utf-8") as fh:
        return json.load(fh)


@dataclass(frozen=True)
class JudgeConfig:
    """The fixed judge panel. ``sha256`` identifies it (canonical JSON of the whole file)."""

    raw: dict[str, Any]

    @property
    def sha256(self) -> str:
        return sha256_text(canonical_json(self.raw))

    @property
    def system_prompt(self) -> str:
        return self.raw["system_prompt"]

    @property
    def user_prompt_template(self) -> str:
        return self.raw["user_prompt_template"]

    @property
    def dimension_ids(self) -> tuple[str, ...]:
        return tuple(d["id"] for d in self.raw["dimensions"])

    @property
    def judges(self) -> list[dict[str, Any]]:
        return list(self.raw["judges"])

    @property
    def judge_aliases(self) -> tuple[str, ...]:
        return tuple(j["alias"] for j in self.raw["judges"])

    @property
    def call(self) -> dict[str, Any]:
        return dict(self.raw["call"])

    def dimensions_block(self) -> str:
        """The text substituted for ``{dimensions}``: 4 lines per dimension, no trailing newline."""
        return "\n".join(
            f'{i}. "{d["id"]}": {d["label"]}\n'
            f"   Earth default: {d['earth_default']}\n"
            f"   Departure examples: {d['departure_examples']}\n"
            f"   Boundary rule: {d['boundary_rule']}"
            for i, d in enumerate(self.raw["dimensions"], 1)
        )

    def render_user_prompt(self, description: str) -> str:
        """Substitute the response verbatim (no trimming, no escaping) and the dimensions block."""
        # str.replace, not str.format: the template holds literal JSON braces.
        tmpl = self.user_prompt_template
        head, sep, tail = tmpl.partition("{description}")
        if not sep:
            raise ValueError("judge config: user_prompt_template has no {description} placeholder")
        # The response is inserted last so braces or '{dimensions}' inside it stay literal.
        return head.replace("{dimensions}", self.dimensions_block()) + description + tail.replace(
            "{dimensions}", self.dimensions_block()
        )

    def prompt_sha256(self, description: str) -> str:
        """sha256 of the exact prompt a judge saw for one generation.

        Defined as the sha256 of the canonical JSON ``{"system": <system prompt>, "user":
        <rendered user message>}`` (sorted keys, no whitespace, UTF-8). All three judges receive
        the same text, so the value depends only on the generation's response.
        """
        return sha256_text(
            canonical_json({"system": self.system_prompt, "user": self.render_user_prompt(description)})
        )


@dataclass(frozen=True)
class Benchmark:
    """The fixed generation protocol (models, conditions, paraphrases, parameters)."""

    raw: dict[str, Any]

    @property
    def sha256(self) -> str:
        return sha256_text(canonical_json(self.raw))

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(self.raw["models"])

    @property
    def condition_ids(self) -> tuple[str, ...]:
        return tuple(c["id"] for c in self.raw["conditions"])

    @property
    def paraphrase_ids(self) -> tuple[str, ...]:
        return tuple(p["id"] for p in self.raw["paraphrases"])

    def condition_text(self, condition: str) -> str:
        for c in self.raw["conditions"] + self.raw["paraphrases"]:
            if c["id"] == condition:
                return c["text"]
        raise KeyError(condition)

    @property
    def generation(self) -> dict[str, Any]:
        return dict(self.raw["generation"])

    def max_tokens(self, model: str) -> int:
        gen = self.raw["generation"]
        return int(gen.get("model_overrides", {}).get(model, {}).get("max_tokens", gen["max_tokens"]))


@lru_cache(maxsize=1)
def judge_config() -> JudgeConfig:
    return JudgeConfig(_read_resource("judge_config.json"))


@lru_cache(maxsize=1)
def benchmark() -> Benchmark:
    return Benchmark(_read_resource("benchmark.json"))


def generation_seed(model: str, condition: str, sample_index: int) -> int:
    """The per-sample seed: first 4 bytes (big-endian) of sha256("model|condition|i") mod 2^31."""
    digest = hashlib.sha256(f"{model}|{condition}|{sample_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31
