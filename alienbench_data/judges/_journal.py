"""An append-only JSONL journal that never loses a completed (paid) call.

Each completed call is written as one JSON line with ``flush`` + ``fsync`` as soon as it arrives.
On reopening, completed keys are known and skipped by the caller. A torn last line (the process
was killed in the middle of a write) is cut off and the file repaired; the first entry for a key
wins, so a key can never yield two rows.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import AlienbenchError

try:  # POSIX advisory lock: two runs must not share one journal
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["Journal", "JournalError"]


class JournalError(AlienbenchError):
    """The journal file is unreadable or in use by another run."""


class Journal:
    """Keyed append-only JSONL journal.

    Parameters
    ----------
    path
        The journal file; created (with its folder) when absent.
    key_field
        The field of each entry holding its unique key.

    Notes
    -----
    Use as a context manager. Opening takes an exclusive advisory lock (released by the OS even on
    ``kill -9``), repairs a torn last line and loads the completed entries into :attr:`entries`.
    :meth:`append` is thread-safe and durable when it returns.
    """

    def __init__(self, path: str | os.PathLike[str], *, key_field: str = "key") -> None:
        self.path = Path(path)
        self.key_field = key_field
        self.entries: dict[str, dict[str, Any]] = {}
        self.repaired_bytes = 0
        self.duplicate_lines = 0
        self._fd: int | None = None
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Journal:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> Journal:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise JournalError(
                    f"journal {self.path} is in use by another run (fix: wait for it to finish, or "
                    "use a different --journal)"
                ) from None
        self._fd = fd
        if created:
            _fsync_dir(self.path.parent)
        try:
            self._load()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # also releases the lock
            self._fd = None

    # -- reading ---------------------------------------------------------------------------
    def _load(self) -> None:
        assert self._fd is not None
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            # Torn last line: the process died mid-write. Everything before it is intact.
            cut = data.rfind(b"\n") + 1
            self.repaired_bytes = len(data) - cut
            os.ftruncate(self._fd, cut)
            os.fsync(self._fd)
            data = data[:cut]
        self.entries = {}
        for lineno, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JournalError(
                    f"journal {self.path}:{lineno}: not valid JSON ({exc.msg}); only the last line can "
                    "be torn by a crash, so this file was edited (fix: restore it or move it away)"
                ) from None
            if not isinstance(entry, dict) or not isinstance(entry.get(self.key_field), str):
                raise JournalError(
                    f"journal {self.path}:{lineno}: entry has no string field {self.key_field!r} "
                    "(fix: restore the file or move it away)"
                )
            key = entry[self.key_field]
            if key in self.entries:
                self.duplicate_lines += 1  # first wins; never two rows for one key
                continue
            self.entries[key] = entry

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(list(self.entries.values()))

    # -- writing ---------------------------------------------------------------------------
    def append(self, entry: Mapping[str, Any]) -> bool:
        """Write one entry durably (write, fsync) unless its key is already journaled.

        Returns
        -------
        bool
            ``True`` if written, ``False`` if the key was already present.
        """
        key = entry.get(self.key_field)
        if not isinstance(key, str):
            raise JournalError(f"Journal.append: entry needs a string {self.key_field!r} field")
        line = (json.dumps(entry, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                raise JournalError(f"Journal.append: journal {self.path} is not open")
            if key in self.entries:
                return False
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
            self.entries[key] = dict(entry)
        return True


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
