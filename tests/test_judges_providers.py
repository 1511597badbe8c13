"""Provider backends through the real SDKs against a local stub server (real HTTP, no network).

Asserts the exact prompt bytes and parameters sent, retries on 429/5xx/timeouts, parse attempts,
the Google thinking-budget fallback, the Anthropic temperature fallback, what the journal records,
and that no API key value ever appears in the journal, the outputs or the logs.
"""

from __future__ import annotations

import json
import logging

import pytest

from alienbench_data.config import judge_config, sha256_text
from alienbench_data.judges import (
    AnthropicJudge,
    GoogleJudge,
    JudgeCallError,
    MissingCredentialsError,
    OpenAIJudge,
    ParseError,
    RetryPolicy,
    judge_one,
    provider_panel,
    run_judging,
)
from tests.stub_openai_server import Action, StubServer, judge_json, stub_env

CFG = judge_config()
SYSTEM = CFG.system_prompt


@pytest.fixture
def stub():
    with StubServer(resolved={"gpt-5.4": "gpt-5.4-2026-03-05"}) as s:
        yield s


@pytest.fixture
def env(stub, tmp_path, monkeypatch):
    values = stub_env(stub, tmp_path)
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return values


def no_sleep_recorder():
    waits: list[float] = []
    return waits, waits.append


def call(backend, alias, response="A creature.", **kw):
    waits, sleep = no_sleep_recorder()
    res = judge_one(backend, alias, SYSTEM, CFG.render_user_prompt(response), sleep=sleep, **kw)
    return res, waits


# -- OpenAI --------------------------------------------------------------------------------------
def test_openai_sends_the_exact_prompt_and_parameters(stub, env):
    res, waits = call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4", response="")
    (req,) = stub.requests
    body = req.body
    assert req.path == "/v1/chat/completions"
    assert body["model"] == "gpt-5.4"
    assert body["messages"] == [{"role": "system", "content": SYSTEM},
                                {"role": "user", "content": CFG.render_user_prompt("")}]
    # Check values from judge-config.md §2 and §4 (empty description), on the bytes received.
    assert sha256_text(body["messages"][0]["content"]) == (
        "bd14b1c065d7ffa63d50e34a50043470b51035c4c1e8856b67081da0490d6929")
    user = body["messages"][1]["content"]
    assert len(user) == 6085
    assert sha256_text(user) == "68bbe2ca4da7ae1492476bd8bb0501cc2378c56b215fc460639c354632121f5b"
    assert body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 8000
    assert "seed" not in body and "max_tokens" not in body
    assert req.headers["authorization"] == "Bearer " + env["OPENAI_API_KEY"]
    assert res.n_parse_attempts == 1 and waits == []
    assert res.reply.model_resolved == "gpt-5.4-2026-03-05" and res.reply.route == "openai"
    assert res.reply.prompt_tokens == len(user) // 4


def test_openai_retries_429_and_500_with_backoff(stub, env):
    stub.enqueue(Action(status=429), Action(status=500), Action(status=503))
    res, waits = call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert waits == [1, 2, 4]
    assert [r.status for r in stub.requests] == [429, 500, 503, 200]
    assert res.n_parse_attempts == 1


def test_openai_timeout_is_retried(stub, env):
    stub.enqueue(Action(delay=1.5))
    res, waits = call(OpenAIJudge("gpt-5.4", timeout=0.3), "openai/gpt-5.4")
    assert waits == [1] and len(stub.requests) == 2
    assert res.n_parse_attempts == 1


def test_openai_gives_up_after_the_last_retry(stub, env):
    stub.enqueue(*[Action(status=502)] * 7)
    with pytest.raises(Exception, match="HTTP 502"):
        call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert len(stub.requests) == 7


def test_openai_malformed_http_body_is_retried(stub, env):
    stub.enqueue(Action(raw=b'{"choices": [ this is not json'))
    _, waits = call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert waits == [1] and len(stub.requests) == 2


def test_invalid_replies_use_parse_attempts_with_the_identical_prompt(stub, env):
    user = CFG.render_user_prompt("A creature.")
    stub.enqueue(
        Action(content=judge_json(user_text=user, drop="habitat")),
        Action(content=judge_json(user_text=user, string_bools=True)),
    )
    res, waits = call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert res.n_parse_attempts == 3 and waits == []
    assert res.rejected[0][1].endswith("habitat")
    assert "is_departure must be a JSON boolean" in res.rejected[1][1]
    assert len({r.raw for r in stub.requests}) == 1 and len(stub.requests) == 3


def test_three_invalid_replies_fail_the_pair(stub, env):
    stub.enqueue(Action(content="not json"), Action(content="```json\n{}\n```"),
                 Action(content='{"symmetry": {"is_departure": "false"}}'))
    with pytest.raises(ParseError, match="no valid reply in 3 attempts"):
        call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert len(stub.requests) == 3


def test_empty_reply_is_an_error_and_not_retried(stub, env):
    stub.enqueue(Action(content="   "))
    with pytest.raises(JudgeCallError, match="empty reply"):
        call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert len(stub.requests) == 1


def test_auth_error_is_fatal_and_not_retried(stub, env):
    stub.enqueue(Action(status=401, message="bad key"))
    with pytest.raises(JudgeCallError) as info:
        call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4")
    assert info.value.fatal and len(stub.requests) == 1


def test_missing_key_is_reported_before_any_call(stub, env, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        OpenAIJudge("gpt-5.4").check_ready()
    assert stub.requests == []


# -- Anthropic -----------------------------------------------------------------------------------
def test_anthropic_sends_system_param_and_concatenates_text_blocks(stub, env):
    res, _ = call(AnthropicJudge("claude-opus-4-6", timeout=5), "anthropic/claude-opus-4.6")
    (req,) = stub.requests
    assert req.path == "/v1/messages"
    assert req.body["system"] == SYSTEM
    assert req.body["messages"] == [{"role": "user", "content": CFG.render_user_prompt("A creature.")}]
    assert req.body["temperature"] == 0.0 and req.body["max_tokens"] == 8000
    # The SDK sends the key as x-api-key or as a bearer token, depending on its version.
    sent = req.headers.get("x-api-key", "") + req.headers.get("authorization", "")
    assert env["ANTHROPIC_API_KEY"] in sent
    # The stub splits the JSON over two text blocks: it parses only if they are concatenated.
    assert res.n_parse_attempts == 1 and res.reply.route == "anthropic"
    assert res.reply.model_resolved == "claude-opus-4-6-stub"


def test_anthropic_drops_temperature_when_rejected_and_remembers(stub, env):
    backend = AnthropicJudge("claude-opus-4-6", timeout=5)
    stub.enqueue(Action(status=400, message="temperature is not supported for this model"))
    call(backend, "anthropic/claude-opus-4.6")
    call(backend, "anthropic/claude-opus-4.6", response="Another creature.")
    assert ["temperature" in r.body for r in stub.requests] == [True, False, False]


def test_anthropic_overloaded_529_is_retried(stub, env):
    stub.enqueue(Action(status=529))
    _, waits = call(AnthropicJudge("claude-opus-4-6", timeout=5), "anthropic/claude-opus-4.6")
    assert waits == [1]


# -- Google (Vertex) -----------------------------------------------------------------------------
def test_google_request_and_thinking_budget_fallback_cached(stub, env):
    backend = GoogleJudge("gemini-3.1-pro-preview", timeout=5)
    stub.enqueue(Action(status=400, message="Thinking budget 0 is not supported for this model"))
    res, waits = call(backend, "google/gemini-3.1-pro-preview")
    call(backend, "google/gemini-3.1-pro-preview", response="Another creature.")
    first, second, third = stub.requests
    assert "/projects/stub-project/locations/us-central1/" in first.path
    assert first.path.endswith("/models/gemini-3.1-pro-preview:generateContent")
    gc = first.body["generationConfig"]
    assert gc["temperature"] == 0.0 and gc["maxOutputTokens"] == 8000
    assert gc["responseMimeType"] == "application/json"
    thinking = gc["thinkingConfig"]
    assert 0 in thinking.values()  # thinking budget 0 on the first try
    assert "thinkingConfig" not in second.body["generationConfig"]  # retried without
    assert "thinkingConfig" not in third.body["generationConfig"]  # and the choice is cached
    assert first.system_text == SYSTEM
    assert first.user_text == CFG.render_user_prompt("A creature.")
    assert waits == [] and res.reply.route == "vertex"
    assert res.reply.model_resolved == "gemini-3.1-pro-preview-stub"


def test_google_server_error_is_retried(stub, env):
    stub.enqueue(Action(status=503), Action(status=429))
    _, waits = call(GoogleJudge("gemini-3.1-pro-preview", timeout=5), "google/gemini-3.1-pro-preview")
    assert waits == [1, 2]


def test_google_timeout_is_retried(stub, env):
    stub.enqueue(Action(delay=2.0))
    _, waits = call(GoogleJudge("gemini-3.1-pro-preview", timeout=0.5), "google/gemini-3.1-pro-preview")
    assert waits == [1]


# -- the full panel through the runner -----------------------------------------------------------
def test_panel_run_records_results_and_never_leaks_keys(stub, tmp_path, monkeypatch, capsys, caplog):
    secret = "-SECRET-7f3a9c"
    for k, v in stub_env(stub, tmp_path, key_suffix=secret).items():
        monkeypatch.setenv(k, v)
    caplog.set_level(logging.DEBUG)
    gens = [{"generation_id": f"g{i}", "response": f"Creature {i} has {i} eyes."} for i in range(3)]
    user0 = CFG.render_user_prompt(gens[0]["response"])
    stub.enqueue(Action(status=429), key=StubServer.key("openai", "gpt-5.4", user0))
    stub.enqueue(Action(content=judge_json(user_text=user0, drop="symmetry")),
                 key=StubServer.key("anthropic", "claude-opus-4-6", user0))
    journal = tmp_path / "journal.jsonl"
    waits: list[float] = []
    rep = run_judging(gens, provider_panel(timeout=5), journal=journal, concurrency=2,
                      sleep=waits.append, progress=True)
    assert rep.complete and rep.n_new == 9 and waits == [1]
    e = rep.entries[("g0", "anthropic/claude-opus-4.6")]
    assert e["n_parse_attempts"] == 2 and e["rejected_replies"][0]["error"].endswith("symmetry")
    o = rep.entries[("g0", "openai/gpt-5.4")]
    assert o["judge_model_resolved"] == "gpt-5.4-2026-03-05" and o["judge_route"] == "openai"
    assert o["judge_prompt_sha256"] == CFG.prompt_sha256(gens[0]["response"])
    assert o["judge_config_sha256"] == CFG.sha256
    expected = json.loads(judge_json(user_text=user0))
    assert {d: v["is_departure"] for d, v in o["labels"].items()} == {
        d: v["is_departure"] for d, v in expected.items()}
    # The keys were used (the stub saw them) ...
    seen = [r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in stub.requests]
    assert any(secret in s for s in seen)
    # ... but appear nowhere we write or print.
    out = capsys.readouterr()
    texts = {"journal": journal.read_text(), "stdout": out.out, "stderr": out.err,
             "logs": "\n".join(r.getMessage() for r in caplog.records),
             "entries": json.dumps(list(rep.entries.values()))}
    for where, text in texts.items():
        assert secret not in text, where
    assert "judge calls" in out.err  # the estimate was printed


def test_panel_run_fatal_error_stops_that_judge_only(stub, env, tmp_path):
    gens = [{"generation_id": f"g{i}", "response": f"Creature {i}."} for i in range(4)]

    def responder(rec):
        return Action(status=403, message="forbidden") if rec.api == "openai" else None

    stub.responder = responder
    rep = run_judging(gens, provider_panel(timeout=5), journal=tmp_path / "j.jsonl", concurrency=1,
                      sleep=lambda s: None, progress=False)
    assert not rep.complete
    assert {f.judge for f in rep.failures} == {"openai/gpt-5.4"} and len(rep.failures) == 4
    assert sum(r.api == "openai" for r in stub.requests) == 1  # the rest were skipped
    assert len(rep.entries) == 8


def test_run_refuses_missing_credentials_before_any_call(stub, env, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        run_judging([{"generation_id": "g", "response": "x"}], provider_panel(timeout=5),
                    journal=tmp_path / "j.jsonl", progress=False)
    assert stub.requests == []


def test_policy_is_injectable(stub, env):
    stub.enqueue(Action(status=500))
    _, waits = call(OpenAIJudge("gpt-5.4", timeout=5), "openai/gpt-5.4", policy=RetryPolicy(delays=(0.25,)))
    assert waits == [0.25]
