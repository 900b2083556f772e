"""`HttpLimits` and `uvicorn_options` without a server: what is refused at start-up, the
connection cap's defaults, the parser fallback, and the protocol classes uvicorn imports by name
(rebuilt when the limits change). tests/transport/test_hardening_http_limits.py drives them for real."""

from __future__ import annotations

import json
import sys

import pytest

from rondo.transport.serve import limits as limits_module
from rondo.transport.serve.limits import (
    DESCRIPTOR_RESERVE,
    ENV_LIMITS,
    HttpLimits,
    descriptor_limit,
    guarded_protocol,
    limits_from_env,
    uvicorn_options,
)


@pytest.fixture(autouse=True)
def own_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn_options records the limits in the environment: restore it after each test."""
    monkeypatch.setenv(ENV_LIMITS, "")


@pytest.mark.parametrize(("field", "value"), [
    ("max_header_bytes", 0), ("max_header_bytes", 1.5), ("max_headers", -1), ("max_headers", "50"),
])
def test_bad_header_bounds_are_refused_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"HttpLimits.{field} must be a positive integer"):
        HttpLimits(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0, -5, 2.0, "8"])
def test_a_bad_connection_cap_is_refused(value: object) -> None:
    with pytest.raises(ValueError, match="max_connections must be a positive integer"):
        HttpLimits(max_connections=value)  # type: ignore[arg-type]


def test_the_default_cap_follows_the_descriptor_limit_and_has_a_floor_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ceiling = descriptor_limit()
    assert ceiling is not None  # Linux
    assert HttpLimits().connection_cap() == max(16, ceiling - DESCRIPTOR_RESERVE)
    assert HttpLimits(max_connections=12).connection_cap() == 12
    monkeypatch.setitem(sys.modules, "resource", None)  # a platform without it: import fails
    assert descriptor_limit() is None
    assert HttpLimits().connection_cap() == 1000
    assert HttpLimits(max_connections=10**9).connection_cap() == 10**9  # nothing to check against


def test_without_httptools_the_options_pick_h11_and_carry_the_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "httptools", None)
    chosen = HttpLimits(header_timeout=2.5, max_connections=20, max_header_bytes=4096)
    options = uvicorn_options(chosen)
    assert options["http"] == "rondo.transport.serve.limits:GuardedH11"
    assert options["limit_concurrency"] == 21 and options["timeout_keep_alive"] == 5.0
    assert options["h11_max_incomplete_event_size"] == 8192
    assert json.loads(limits_module.os.environ[ENV_LIMITS])["header_timeout"] == 2.5
    assert limits_from_env() == chosen  # what a uvicorn worker process reads back


def test_the_protocol_classes_are_built_per_limits_and_unknown_names_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    uvicorn_options(HttpLimits(max_headers=7), http="h11")
    first = limits_module.GuardedH11
    assert first.__name__ == "GuardedH11Protocol"
    assert limits_module.GuardedH11 is first  # built once per set of limits
    uvicorn_options(HttpLimits(max_headers=8), http="h11")
    assert limits_module.GuardedH11 is not first
    with pytest.raises(AttributeError, match="GuardedSpdy"):
        limits_module.GuardedSpdy  # noqa: B018
    with pytest.raises(ValueError, match="unknown HTTP parser 'spdy'"):
        guarded_protocol("spdy", HttpLimits())
