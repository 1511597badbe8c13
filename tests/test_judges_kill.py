"""Kill -9 a real judging run mid-way and resume it: no completed call is repeated, no duplicate row.

The run is a separate Python process running :func:`run_judging` with real SDK clients over real
HTTP to a local stub whose replies are slow; it is killed with SIGKILL and resumed. The stub (in
this process) counts requests per (model, prompt) across both runs. The three panel aliases are
served through the OpenAI SDK here (one SDK import keeps the test fast); the CLI and the other
SDKs are covered by other tests.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from alienbench_data.config import judge_config
from alienbench_data.judges import Journal, OpenAIJudge, completed_judgments, run_judging
from alienbench_data.schema import PRIMARY_KEYS
from alienbench_data.submit import build_tables, read_submission
from tests.helpers.submission_data import make_records, write_jsonl
from tests.stub_openai_server import StubServer, stub_env

ROOT = Path(__file__).resolve().parents[1]
CFG = judge_config()
API = {"openai/gpt-5.4": ("openai", "gpt-5.4"), "anthropic/claude-opus-4.6": ("openai", "claude-opus-4-6"),
       "google/gemini-3.1-pro-preview": ("openai", "gemini-3.1-pro-preview")}


def complete_lines(path: Path) -> list[dict]:
    data = path.read_bytes() if path.exists() else b""
    return [json.loads(x) for x in data[: data.rfind(b"\n") + 1].splitlines() if x.strip()]


def stub_key(entry: dict, responses: dict[str, str]) -> str:
    api, model = API[entry["judge"]]
    return StubServer.key(api, model, CFG.render_user_prompt(responses[entry["generation_id"]]))


RUNNER = """
import sys
from alienbench_data.judges import OpenAIJudge, run_judging
from alienbench_data.submit import read_submission
# The provider SDKs are an optional extra: importing the package must not load them.
assert not {"openai", "anthropic", "google.genai"} & set(sys.modules), "SDK imported eagerly"
sub = read_submission(sys.argv[1])
models = {"openai/gpt-5.4": "gpt-5.4", "anthropic/claude-opus-4.6": "claude-opus-4-6",
          "google/gemini-3.1-pro-preview": "gemini-3.1-pro-preview"}
panel = {alias: OpenAIJudge(model, timeout=20) for alias, model in models.items()}
gens = [g for g in sub.generations if g.sample_index < int(sys.argv[3])]
rep = run_judging(gens, panel, journal=sys.argv[2], concurrency=2, progress=False)
sys.exit(0 if rep.complete else 1)
"""
N_PER_CONDITION = 4  # 24 generations x 3 judges = 72 calls


@pytest.mark.slow
def test_kill_9_mid_run_then_resume(tmp_path, monkeypatch):
    subfile = write_jsonl(tmp_path / "sub.jsonl", make_records("acme/killable"))
    sub = read_submission(subfile)
    gens = [g for g in sub.generations if g.sample_index < N_PER_CONDITION]
    n_calls = len(gens) * 3
    responses = {g.generation_id: g.response for g in gens}
    journal = tmp_path / "journal.jsonl"
    with StubServer(delay=0.05) as stub:
        env = {**os.environ, **stub_env(stub, tmp_path), "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-c", RUNNER, str(subfile), str(journal), str(N_PER_CONDITION)]
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(complete_lines(journal)) < 15:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        err1 = proc.stderr.read().decode()
        assert f"{n_calls} judge calls" in err1

        done_before = complete_lines(journal)
        assert 15 <= len(done_before) < n_calls, "kill it mid-run"
        counts_before = Counter(stub.counts)
        assert sum(counts_before.values()) > len(done_before) - 1
        # A write torn by the kill leaves a partial last line; make sure there is one.
        with open(journal, "ab") as fh:
            fh.write(b'{"key": "torn-by-kill", "kind": "judgm')

        # Resume (in this process, to save a second interpreter start).
        for k, v in stub_env(stub, tmp_path).items():
            monkeypatch.setenv(k, v)
        panel = {alias: OpenAIJudge(model, timeout=20) for alias, (_, model) in API.items()}
        out = io.StringIO()
        rep = run_judging(gens, panel, journal=journal, concurrency=4, progress=False, stream=out)
        assert rep.complete and rep.n_already_done == len(done_before)
        assert f"{len(done_before)} already in the journal" in out.getvalue()
        assert "removed a torn last line" in out.getvalue()

    # No completed call was repeated ...
    for entry in done_before:
        k = stub_key(entry, responses)
        assert stub.counts[k] == counts_before[k], f"{entry['judge']} {entry['generation_id']} repeated"
    # ... and the rerun made exactly the missing calls.
    assert sum(stub.counts.values()) - sum(counts_before.values()) == n_calls - len(done_before)

    lines = complete_lines(journal)
    assert len(lines) == n_calls and len({e["key"] for e in lines}) == n_calls
    assert journal.read_bytes().endswith(b"\n") and b"torn-by-kill" not in journal.read_bytes()
    with Journal(journal) as jr:
        entries = completed_judgments(jr, gens, CFG.judge_aliases)
    assert len(entries) == n_calls
    small = replace(sub, generations=tuple(gens))
    tables = build_tables(small, entries)
    for name, df in tables.items():
        assert not df.duplicated(list(PRIMARY_KEYS[name])).any(), name
    assert len(tables["scores"]) == n_calls and len(tables["judgments"]) == 10 * n_calls
