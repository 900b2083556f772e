"""What goes wrong with a document, and the warning for an operation left out."""

from __future__ import annotations


class OpenAPIError(ValueError):
    """The document cannot be used at all (unreadable, too large, not OpenAPI 3, a bad server URL).

    Raised while building, never at call time."""


class Unsupported(Exception):
    """One operation uses something the generator does not handle; it is skipped with a
    warning naming the feature, and the rest of the document is served."""


class OperationSkipped(UserWarning):
    """An operation left out of the server, with the reason (`Unsupported`'s message)."""
