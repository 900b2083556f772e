"""Unexpected exceptions: logged whole on the server, reported to the client by reference.

The text of an exception the handler did not mean to show (a path in an `OSError`, a secret in
a message) never reaches the client: it gets "internal error" and a short correlation id, and
the server log carries the same id with the traceback, so an operator can find one from the
other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..wire.errors import McpError, internal_error

if TYPE_CHECKING:
    import logging


def reference() -> str:
    """A fresh correlation id: 12 hex digits, unguessable and short enough to read out."""
    import secrets  # only on a failure: keeps start-up light

    return secrets.token_hex(6)


def log_failure(log: logging.Logger, what: str, exc: BaseException | None = None) -> str:
    """Log an unexpected failure with its traceback under a new reference; return the reference."""
    ref = reference()
    log.error("%s [ref %s]", what, ref, exc_info=exc if exc is not None else True)
    return ref


def masked_internal_error(log: logging.Logger, what: str,
                          exc: BaseException | None = None) -> McpError:
    """The JSON-RPC -32603 for an unexpected failure, naming the logged reference."""
    return internal_error(f"Internal error (reference {log_failure(log, what, exc)})")
