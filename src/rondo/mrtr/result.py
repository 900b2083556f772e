"""The input_required outcome a tool, prompt or resource handler may return."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class InputRequired:
    """End this round: ask the client for `input_requests` and/or hand it `state` to echo.

    `input_requests` maps keys you choose to requests built with `rondo.elicit`,
    `rondo.sampling` or `rondo.roots`. `state` is any JSON value: under a `StatePolicy` the
    framework seals it and gives it back verified as `ctx.state` on the retry. At least one of
    the two must be given.
    """

    __slots__ = ("input_requests", "state")

    def __init__(
        self, input_requests: Mapping[str, Mapping[str, Any]] | None = None, state: Any = None
    ) -> None:
        self.input_requests: dict[str, Any] = dict(input_requests) if input_requests else {}
        self.state = state

    def __repr__(self) -> str:
        return f"InputRequired(input_requests={list(self.input_requests)!r}, state={self.state!r})"


class AskInterrupt(BaseException):
    """Raised by `ctx.ask` when an answer is missing: it unwinds the handler to end the round.

    A BaseException so that a handler's `except Exception` cannot swallow it by accident.
    `AskInterrupt(missing)`: no `__init__` of its own, so raising one costs what a builtin
    exception does (a Python-level `__init__` with `super()` made it several times dearer).
    """

    @property
    def missing(self) -> dict[str, Any]:
        """The questions still open, as `ctx.ask` found them."""
        found: dict[str, Any] = self.args[0] if self.args else {}
        return found

    def __str__(self) -> str:
        return "input required"
