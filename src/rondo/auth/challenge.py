"""The `Authorization` request header and the `WWW-Authenticate` challenges (RFC 6750 §3)."""

from __future__ import annotations

import re

from .errors import InvalidToken

# RFC 6750 §2.1 b64token.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class BadRequest(Exception):
    """A malformed authorization request (not a bad token): 400 `invalid_request`."""


def bearer_token(values: list[bytes] | None, max_length: int) -> str | None:
    """The bearer token of a request: None when it carries none (no header, another scheme);
    InvalidToken for a malformed one; BadRequest for more than one Authorization header."""
    if not values:
        return None
    if len(values) > 1:
        raise BadRequest("more than one Authorization header")
    raw = values[0]
    if len(raw) > max_length + 16:
        raise InvalidToken("The access token is too long", reason=f"{len(raw)} bytes")
    try:
        text = raw.decode("ascii").strip(" \t")
    except UnicodeDecodeError:
        raise InvalidToken("The access token is malformed", reason="non-ASCII header") from None
    scheme, _, rest = text.partition(" ")
    if scheme.lower() != "bearer":  # the scheme is case-insensitive (RFC 9110 §11.1)
        return None
    token = rest.strip(" ")
    if not token or not _B64TOKEN.fullmatch(token):
        raise InvalidToken("The access token is malformed", reason="not a b64token")
    return token


def _quoted(value: str) -> str:
    # Our own texts only (never a token or client input); drop what a quoted-string cannot hold.
    return '"' + "".join(c for c in value if c not in '"\\' and 0x20 <= ord(c) < 0x7F) + '"'


def www_authenticate(
    metadata_url: str,
    scopes: tuple[str, ...] = (),
    *,
    error: str | None = None,
    description: str | None = None,
) -> bytes:
    params: list[str] = []
    if error is not None:
        params.append(f"error={_quoted(error)}")
    if scopes:
        params.append(f"scope={_quoted(' '.join(s for s in scopes if s != 'offline_access'))}")
    params.append(f"resource_metadata={_quoted(metadata_url)}")
    if description is not None:
        params.append(f"error_description={_quoted(description)}")
    return ("Bearer " + ", ".join(params)).encode("ascii")
