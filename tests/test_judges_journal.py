"""The journal: durable appends, resume, torn-line repair, first-wins dedup, one run at a time."""

from __future__ import annotations

import json

import pytest

from alienbench_data.judges import Journal, JournalError


def test_append_then_reopen_returns_entries(tmp_path):
    path = tmp_path / "sub" / "j.jsonl"
    with Journal(path) as jr:
        assert jr.append({"key": "a", "v": 1}) is True
        assert jr.append({"key": "b", "v": 2}) is True
        assert jr.append({"key": "a", "v": 3}) is False  # already journaled: not written again
    lines = path.read_text().splitlines()
    assert [json.loads(x)["key"] for x in lines] == ["a", "b"]
    with Journal(path) as jr:
        assert set(jr.entries) == {"a", "b"} and jr.entries["a"]["v"] == 1
        assert jr.repaired_bytes == 0


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    path = tmp_path / "j.jsonl"
    good = json.dumps({"key": "a", "v": 1}) + "\n"
    path.write_text(good + '{"key": "b", "v": ')  # killed mid-write
    with Journal(path) as jr:
        assert set(jr.entries) == {"a"}
        assert jr.repaired_bytes == len('{"key": "b", "v": ')
        jr.append({"key": "b", "v": 2})
    assert path.read_text() == good + json.dumps({"key": "b", "v": 2}) + "\n"
    with Journal(path) as jr:
        assert set(jr.entries) == {"a", "b"}


def test_torn_only_line_leaves_an_empty_journal(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"key": "a"')
    with Journal(path) as jr:
        assert len(jr) == 0
    assert path.read_bytes() == b""


def test_duplicate_keys_keep_the_first_entry(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(json.dumps({"key": "a", "v": v}) for v in (1, 2)) + "\n")
    with Journal(path) as jr:
        assert jr.entries["a"]["v"] == 1 and jr.duplicate_lines == 1


def test_corruption_before_the_last_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"key": "a"}\nGARBAGE\n{"key": "b"}\n')
    with pytest.raises(JournalError, match=r"j.jsonl:2"):
        Journal(path).open()
    path.write_text('{"nokey": 1}\n')
    with pytest.raises(JournalError, match="no string field 'key'"):
        Journal(path).open()


def test_a_second_run_cannot_use_the_same_journal(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path), pytest.raises(JournalError, match="in use by another run"):
        Journal(path).open()
    with Journal(path):  # released on close
        pass


def test_custom_key_field_and_closed_journal(tmp_path):
    path = tmp_path / "g.jsonl"
    jr = Journal(path, key_field="id").open()
    jr.append({"id": "x"})
    jr.close()
    with pytest.raises(JournalError, match="not open"):
        jr.append({"id": "y"})
    with pytest.raises(JournalError, match="string 'id'"):
        Journal(path, key_field="id").open().append({"other": 1})
