"""``alienbench submit`` and ``scripts/submit.py``: exit codes, messages, a full run against the stub."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

from alienbench_data.cli import main
from tests.helpers.submission_data import make_records, write_jsonl
from tests.stub_openai_server import StubServer, stub_env

ROOT = Path(__file__).resolve().parents[1]


def test_validate_only_needs_no_dataset_and_makes_no_call(tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    assert main(["submit", "--generations", str(path), "--validate-only"]) == 0
    err = capsys.readouterr().err
    assert "valid submission of acme/test-model: 180 generations" in err and "540 judge calls" in err


def test_invalid_file_exits_1_with_line_and_field(tmp_path, capsys):
    recs = make_records()
    recs[2]["response"] = ""
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    assert main(["submit", "--generations", str(path), "--validate-only"]) == 1
    assert "s.jsonl:3 [response]: is empty" in capsys.readouterr().err


def test_usage_errors_exit_2(tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    assert main(["submit", "--generations", str(path)]) == 2
    assert "--data DIR is required" in capsys.readouterr().err
    assert main(["submit", "--generations", str(path), "--judge-only", "--concurrency", "0"]) == 2


def test_missing_dataset_folder_exits_1(tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    assert main(["submit", "--data", str(tmp_path / "nope"), "--generations", str(path)]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_script_is_the_same_command(tmp_path, monkeypatch, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    monkeypatch.setattr(sys, "argv", ["scripts/submit.py", "--generations", str(path), "--validate-only"])
    with pytest.raises(SystemExit) as info:
        runpy.run_path(str(ROOT / "scripts" / "submit.py"), run_name="__main__")
    assert info.value.code == 0
    assert "540 judge calls" in capsys.readouterr().err


@pytest.mark.slow
def test_judge_only_run_with_all_three_provider_sdks(tmp_path, monkeypatch, capsys):
    secret = "-SECRET-cli-42"
    path = write_jsonl(tmp_path / "s.jsonl", make_records())
    with StubServer() as stub:
        for k, v in stub_env(stub, tmp_path, key_suffix=secret).items():
            monkeypatch.setenv(k, v)
        rc = main(["submit", "--generations", str(path), "--judge-only", "--concurrency", "6",
                   "--no-progress", "--timeout", "10"])
    err = capsys.readouterr().err
    assert rc == 0, err
    journal = tmp_path / "s.jsonl.judge-journal.jsonl"
    entries = [json.loads(x) for x in journal.read_text().splitlines()]
    assert len(entries) == 540 and len({e["key"] for e in entries}) == 540
    assert {e["judge_route"] for e in entries} == {"openai", "anthropic", "vertex"}
    assert {r.api for r in stub.requests} == {"openai", "anthropic", "google"} and len(stub.judge_requests()) == 540
    assert "not appended (--judge-only)" in err
    assert secret not in journal.read_text() and secret not in err


def test_generate_then_validate(tmp_path, monkeypatch, capsys):
    out = tmp_path / "gen.jsonl"
    with StubServer() as stub:
        for k, v in stub_env(stub, tmp_path).items():
            monkeypatch.setenv(k, v)
        rc = main(["submit", "--generate", "acme/model-x", "--generations", str(out), "--validate-only",
                   "--concurrency", "8", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert len(stub.requests) == 180 and not stub.judge_requests()
    assert "Generating 6 conditions x 30 samples = 180 calls" in err
    assert "valid submission of acme/model-x: 180 generations" in err
