"""The fixed judge prompt and protocol against the values published in judge-config.md."""

from __future__ import annotations

import hashlib

from alienbench_data.config import benchmark, canonical_json, generation_seed, judge_config


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_system_prompt_matches_published_hash() -> None:
    # judge-config.md section 2
    jc = judge_config()
    assert len(jc.system_prompt) == 210
    assert _sha(jc.system_prompt) == "bd14b1c065d7ffa63d50e34a50043470b51035c4c1e8856b67081da0490d6929"


def test_user_template_matches_published_hash() -> None:
    # judge-config.md section 3: 1473 characters, 1475 bytes, one final newline
    t = judge_config().user_prompt_template
    assert len(t) == 1473 and len(t.encode()) == 1475 and t.endswith("}\n") and not t.endswith("\n\n")
    assert _sha(t) == "daafb9c38e4b0812924ae73f2fe9549d0f0f817e2f47151205334f3ab2ff2a16"


def test_dimensions_block_rendered_from_data_matches_published_hash() -> None:
    # judge-config.md section 4
    block = judge_config().dimensions_block()
    assert len(block) == 4637 and len(block.encode()) == 4649
    assert _sha(block) == "5d1a81380e95acf4be825ae9e1a1aef6553467743ae67d870c2a8c034c6146ff"


def test_assembled_user_message_check_values() -> None:
    # judge-config.md section 4: the empty-description check value
    u = judge_config().render_user_prompt("")
    assert len(u) == 6085
    assert _sha(u) == "68bbe2ca4da7ae1492476bd8bb0501cc2378c56b215fc460639c354632121f5b"


def test_description_is_inserted_verbatim_even_with_braces() -> None:
    jc = judge_config()
    desc = "  {dimensions} and {description} {0} }{ \n"
    u = jc.render_user_prompt(desc)
    assert desc in u
    assert u.count(jc.dimensions_block()) == 1


def test_prompt_hash_is_canonical_json_of_system_and_user() -> None:
    jc = judge_config()
    want = hashlib.sha256(canonical_json({"system": jc.system_prompt, "user": jc.render_user_prompt("x")})).hexdigest()
    assert jc.prompt_sha256("x") == want
    assert jc.prompt_sha256("x") != jc.prompt_sha256("x ")


def test_condition_texts_match_published_hashes() -> None:
    # judge-config.md sections 6 and 7
    want = {
        "baseline": "f85bbf179c6c4ca2aaf043f4b7a8532e1e2e892da89332c12c567c7f6e74ad1c",
        "departure_primed": "e5b83c36a72e163481bb5c23924ccab3cc434149776f30f0f237c2c6d03bb5f9",
        "constrained_no_light": "9094cb3b6ff4ef4069db59b8071a0ebafa7a3e41380484b010821cec2da510ce",
        "constrained_high_gravity": "89af96e01d5068a0fba203bb0c6400960ef4253498b9759cdeba0b0746d8d1fe",
        "constrained_ammonia": "ee5ba16be46b58ac52dca27edd42a800c67804b831dbea007f5cbdd6398d4a42",
        "detailed_description": "bc941ceb38bba28d7795f4bb1d52238efd10390dde7527e6b439d5bf30901947",
        "baseline_para_a": "61cfd608a2c31bf1d7079c622d12f114cad0e8d984cea3cf1c57c37cec89b031",
        "baseline_para_b": "075905b12da1b320b69e7fd0c617431ff2160df4a2fc25f6b301abe7993d4c65",
        "baseline_para_c": "e4e09f0ef0fee2d812db5123f468707bf082d624c4ed680fabb7e07818e0d747",
        "baseline_para_d": "14dda93496b62718ec62d855b38b6ffa58b91cd4ead4c2a827dc3750fe42be84",
        "baseline_para_e": "d85443168cb9657d64225268e2d478d4a900f874810274458419a68a18d043f8",
    }
    b = benchmark()
    for cid, digest in want.items():
        assert _sha(b.condition_text(cid)) == digest, cid


def test_seed_rule_example() -> None:
    # judge-config.md section 5: 'openai/gpt-5.4|baseline|18' -> 1685787450
    assert generation_seed("openai/gpt-5.4", "baseline", 18) == 1685787450


def test_max_tokens_override() -> None:
    b = benchmark()
    assert b.max_tokens("google/gemini-3.1-pro-preview") == 4000
    assert b.max_tokens("openai/gpt-5.4") == 800


def test_config_hash_changes_with_any_prompt_byte() -> None:
    from alienbench_data.config import JudgeConfig

    jc = judge_config()
    raw = dict(jc.raw)
    raw["system_prompt"] = raw["system_prompt"] + " "
    assert JudgeConfig(raw).sha256 != jc.sha256
