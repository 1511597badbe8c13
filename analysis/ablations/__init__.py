"""The paper's three ablations, reproduced bit for bit and extended (spec sections 8-10, issue 4).

* :mod:`.prompt` -- prompt-paraphrase sensitivity (spec 8), plus the labelled sensitivity analyses
  without the truncated Gemini paraphrases and with an N = 10 baseline;
* :mod:`.features` -- leave-one-feature-out, exhaustive subset search, min-k null (spec 9);
* :mod:`.judges` -- single judge, leave-one-judge-out, size sweep, same-family check (spec 10).

:func:`run_all` runs the three and writes every file (used by ``alienbench reproduce``);
``alienbench ablation prompt|features|judges|all`` runs one (:mod:`.cli`). ``CHECKS`` plugs the
comparisons with the authors' reported files into ``reproduce --check`` (:mod:`analysis.check`).

The permutation nulls follow the reference's random streams exactly, vectorised
(:mod:`._exact`): see its docstring for why the batched draws equal the sequential loops.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ._checks import CHECKS
from ._data import AblationInputs, load_ablation_inputs
from .cli import run
from .features import FeatureAblation, feature_ablation, write_feature_outputs
from .judges import JudgeAblation, judge_ablation, write_judge_outputs
from .prompt import PromptAblation, prompt_ablation, sensitivity_runs, write_prompt_outputs

__all__ = [
    "CHECKS",
    "AblationInputs",
    "FeatureAblation",
    "JudgeAblation",
    "PromptAblation",
    "feature_ablation",
    "judge_ablation",
    "load_ablation_inputs",
    "prompt_ablation",
    "run",
    "run_all",
    "sensitivity_runs",
]


def run_all(inputs_or_data_dir: object, out_dir: str | Path) -> dict[str, Any]:
    """Run the three ablations and write all their files into ``out_dir``.

    Parameters
    ----------
    inputs_or_data_dir : analysis.data.Inputs, AblationInputs, path or None
        Loaded inputs (``alienbench reproduce`` passes its ``Inputs``) or a built dataset folder.
    out_dir : path
        Results folder.

    Returns
    -------
    dict
        ``prompt`` (:class:`PromptAblation`, None without a paraphrase split), ``prompt_sensitivity``
        (label -> PromptAblation),
        ``features`` (:class:`FeatureAblation`), ``judges`` (:class:`JudgeAblation`), ``paths``
        (file name -> path written) and ``timings`` (seconds per ablation).
    """
    src = load_ablation_inputs(inputs_or_data_dir)
    timings: dict[str, float] = {}
    paths: dict[str, Path] = {}

    prompt: PromptAblation | None = None
    sens: dict[str, PromptAblation] = {}
    if len(src.paraphrase):  # the paraphrase split is optional in a dataset
        t0 = time.perf_counter()
        prompt = prompt_ablation(src)
        sens = sensitivity_runs(src)
        paths.update(write_prompt_outputs(prompt, out_dir, sensitivity=sens))
        timings["prompt"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    features = feature_ablation(src)
    paths.update(write_feature_outputs(features, out_dir))
    timings["features"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    judges = judge_ablation(src)
    paths.update(write_judge_outputs(judges, out_dir))
    timings["judges"] = time.perf_counter() - t0
    return {"prompt": prompt, "prompt_sensitivity": sens, "features": features, "judges": judges,
            "paths": paths, "timings": timings}
