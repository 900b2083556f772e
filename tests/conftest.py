"""Shared fixtures. Keep this small: helpers with more logic live in their own module
in tests/helpers (`tests.helpers.wire_schema`, `tests.helpers.redis_server`) and tests import them directly."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests check behaviour, not speed: a busy 2-core machine must not fail them on
# hypothesis's per-example deadline (speed is measured by benchmarks/, never by tests).
settings.register_profile("rondo", deadline=None)
settings.load_profile("rondo")

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The interpreter running the tests (the venv's), for subprocess servers and snippets."""
    return sys.executable


@pytest.fixture
def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    from tests.helpers.loopback import free_port

    return free_port()


@pytest.fixture(scope="session")
def wire_valid() -> Callable[..., None]:
    """`wire_valid(message, era="2026-07-28", method=None)`: assert a message is schema-valid."""
    from tests.helpers.wire_schema import validate

    return validate
