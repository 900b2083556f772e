"""The one-line hint at registration for a tool the model would see half-described: no
docstring (or `description=`), or parameters without type hints (any value accepted).

It is a Python warning of its own class, so `Server(warn_undocumented=False)` or
`warnings.filterwarnings("ignore", category=rondo.server.undocumented.UndocumentedToolWarning)`
turns it off.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any


class UndocumentedToolWarning(UserWarning):
    """A tool registered without a description or without parameter annotations."""


def warn_undocumented(name: str, fn: Callable[..., Any], description: str | None,
                      context_param: str | None, explicit_schema: bool, depth: int = 3) -> None:
    problems = []
    if not description:
        problems.append("no docstring (or description=...), so the model is not told what it does")
    if not explicit_schema:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = []  # type: ignore[assignment]
        bare = [p.name for p in params if p.annotation is p.empty and p.name != context_param
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if bare:
            problems.append(f"no type hints on {', '.join(bare)}, so any value is accepted")
    if problems:
        warnings.warn(
            f"rondo: tool {name!r} has {' and '.join(problems)}; add them, or pass "
            "Server(warn_undocumented=False)",
            UndocumentedToolWarning,
            stacklevel=depth,
        )
