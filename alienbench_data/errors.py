"""Errors that say what is wrong, where (file, line/row, field) and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["AlienbenchError", "DatasetError", "OfflineError", "Problem", "ReleaseError"]


class AlienbenchError(Exception):
    """Base class of every error this package raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One problem found in an input: where it is and what to do about it."""

    file: str
    line: int | None  # 1-based line (JSONL) or 0-based row (parquet); None when not row-specific
    field: str | None
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f" [{self.field}]"
        text = f"{where}: {self.message}"
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


class _ProblemsError(AlienbenchError):
    def __init__(self, problems: list[Problem] | Problem, *, context: str = "") -> None:
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        head = f"{context}: " if context else ""
        shown = "\n  ".join(str(p) for p in self.problems[:20])
        more = f"\n  ... and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        super().__init__(f"{head}{len(self.problems)} problem(s)\n  {shown}{more}")


class ReleaseError(_ProblemsError):
    """The raw release tree given to ``build`` is malformed; nothing was written."""


class DatasetError(_ProblemsError):
    """A built dataset folder fails validation or checksum verification."""


class OfflineError(AlienbenchError, ConnectionError):
    """The Hugging Face Hub is needed but unreachable."""


def rel(path: Path | str, root: Path | str | None = None) -> str:
    """Path shown in messages: relative to root when possible."""
    p = Path(path)
    if root is not None:
        try:
            return str(p.relative_to(root))
        except ValueError:
            pass
    return str(p)
