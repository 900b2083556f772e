"""What rondo knows about a question (an input request), learnt once per distinct question.

Most handlers ask the same few questions on every call, so the kind a question belongs to, its
digest and whether it passed validation are kept by its canonical encoding: a pure function of
what the question says, never of which dict object holds it, so a question changed between
calls is looked at afresh. Imported with the first question asked, not at start-up.
"""

from __future__ import annotations

from binascii import b2a_base64
from hashlib import sha256
from typing import Any

import msgspec

from ..kinds import Kind, kind_for

_canonical = msgspec.json.Encoder(order="sorted").encode
_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")

# Bounded in entries and in bytes: a question built fresh on every call (a sampling request
# carrying a conversation) is not kept at all, and the table never holds more than ~2 MiB.
_LIMIT = 512
_MAX_KEPT = 4096
_known: dict[bytes, Question] = {}


class NotAQuestion(ValueError):
    """`kind_for` refused the request: no kind of input request looks like it."""


class Question:
    """A question's kind, its digest, and whether `kind.validate_request` accepted it."""

    __slots__ = ("kind", "digest", "checked")

    def __init__(self, kind: Kind, digest: str) -> None:
        self.kind = kind
        self.digest = digest
        self.checked = False


def digest_of_encoding(canonical: bytes) -> str:
    """Base64url of the first 12 bytes of SHA-256 over the canonical question (16 characters)."""
    text: bytes = b2a_base64(sha256(canonical).digest()[:12], newline=False)
    return text.translate(_TO_URLSAFE).decode()


def question(request: Any) -> Question:
    """The facts of `request`; `NotAQuestion` when it is no input request at all. A request
    JSON cannot carry fails here as the canonical encoding fails (TypeError, OverflowError...)."""
    if type(request) is dict:
        try:
            encoded: bytes | None = _canonical(request)
        except Exception:
            encoded = None  # said below, by the path every other request takes
        if encoded is not None:
            known = _known.get(encoded)
            if known is not None:
                return known
            learnt = Question(_kind(request), digest_of_encoding(encoded))
            if len(encoded) <= _MAX_KEPT:
                if len(_known) >= _LIMIT:
                    _known.clear()
                _known[encoded] = learnt
            return learnt
    # Not a plain dict (or not encodable): nothing kept, each fact found as it always was.
    kind = _kind(request)
    return Question(kind, digest_of_encoding(_canonical(request)))


def _kind(request: Any) -> Kind:
    try:
        return kind_for(request)
    except ValueError as exc:
        raise NotAQuestion(str(exc)) from None
