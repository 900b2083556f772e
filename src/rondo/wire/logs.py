"""Named loggers that import `logging` on their first use, not at import time.

`logging` (with threading, traceback, string, weakref) costs a stdio server several
milliseconds of cold start, and most modules only log when something goes wrong. A module
writes `log = logger("rondo.x")` and uses it like a `logging.Logger`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

# Set by `default_to_stderr()` while `logging` is not loaded yet: configure it on first use.
_stderr_pending = False


class _LazyLogger:
    """Forwards every attribute to `logging.getLogger(name)`, resolved on first access."""

    __slots__ = ("_name", "_logger")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        logger = self._logger
        if logger is None:
            import logging

            if _stderr_pending:
                default_to_stderr()
            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)

    def __repr__(self) -> str:
        return f"<lazy logger {self._name!r}>"


def logger(name: str) -> logging.Logger:
    """The logger `name`, as a stand-in that imports `logging` when first used."""
    return _LazyLogger(name)  # type: ignore[return-value]


def default_to_stderr() -> None:
    """What a stdio server wants: unless the application configured logging itself, warnings
    and errors go to stderr as `LEVEL:name:message` (`logging.basicConfig`). Done now when
    `logging` is loaded (the application may have set it up); otherwise put off until a rondo
    logger is first used or this is called again, since until then nothing has been logged."""
    global _stderr_pending
    if "logging" not in sys.modules:
        _stderr_pending = True
        return
    _stderr_pending = False
    import logging

    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
