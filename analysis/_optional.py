"""Import an optional part of the toolkit: None when that module is absent, other import errors raise."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["optional_module"]


def optional_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            return None
        raise
