"""What a test does when a real component (redis-server, nginx, a Python extra) is missing.

A missing component FAILS the test: the integration tier must not go quiet because set-up
could not install something. Only the fast tier may skip, and only because
`scripts/test.sh --fast` says so with `RONDO_ALLOW_MISSING_COMPONENTS=1` (it sets up no
servers); the closing summary counts those skips.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType

import pytest

ALLOW_ENV = "RONDO_ALLOW_MISSING_COMPONENTS"


def missing(what: str, how: str) -> None:
    """Fail (or, in the fast tier only, skip) because `what` is not available; `how` installs it."""
    message = f"{what} is missing ({how}); scripts/setup.sh installs it"
    if os.environ.get(ALLOW_ENV) == "1":
        pytest.skip(message + f" [{ALLOW_ENV}=1]")
    pytest.fail(message, pytrace=False)


def binary(name: str, package: str) -> str:
    """The path of executable `name`, or a failure naming the Debian package that has it."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} (not on PATH)", f"apt-get install -y {package}")
        raise AssertionError("unreachable")  # pytest.skip/fail raise; keeps type checkers honest
    return path


def module(name: str, extra: str) -> ModuleType:
    """Import `name`, or fail naming the rondo extra that provides it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(f"the Python module {name!r}", f"pip install 'rondo-mcp[{extra}]'")
        raise
