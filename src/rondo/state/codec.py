"""The token format: canonical binding, sealing, and opening with a reason for every refusal.

Signed (the default, readable):   s1.<key id>.<base64url claims JSON>.<base64url HMAC-SHA256>
Encrypted (`encrypt=True`):        e1.<key id>.<base64url nonce>.<base64url AES-256-GCM output>

The claims carry the method, the audience (server name), the expiry, the optional one-time id
and the data. The principal and the salient params are never written into the token: they enter
the MAC (or the GCM associated data) as one canonical JSON document, recomputed from the request
on open. So a token is only as readable as its data, and any other principal or params fail the
same check a flipped byte does.
"""

from __future__ import annotations

import binascii
import math
import os
import re
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

from .keys import Key, Keyring

MAX_TOKEN_CHARS = 16 * 1024
DEFAULT_TTL = 300
MAX_TTL = 900
DEFAULT_LEEWAY = 10  # seconds of clock skew tolerated between nodes
MAX_LEEWAY = 60
UNBOUND_PARAMS = frozenset({"_meta", "requestState", "inputResponses"})
_UNBOUND = tuple(UNBOUND_PARAMS)

_SIGNED = b"s1"
_SEALED = b"e1"
_NONCE_BYTES = 12
_B64_TEXT = re.compile(rb"[A-Za-z0-9_-]*")


class Rejected(Exception):
    """Why a token was refused: logged at debug level, never sent to the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ReplayStore(Protocol):
    """Where one-time token ids are consumed. Add a backend by implementing `consume`."""

    def consume(self, token_id: str, ttl: float) -> bool:
        """Record `token_id` as used for at least `ttl` seconds; True only the first time."""
        ...


class Claims(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    m: str  # the originating method
    a: str  # the audience: the server's name
    e: int  # expiry, unix seconds
    j: str | None = None  # one-time id (`once=True`)
    d: Any = None  # the handler's data


_canonical_encoder = msgspec.json.Encoder(order="sorted")
_claims_encoder = msgspec.json.Encoder()
_claims_decoder = msgspec.json.Decoder(Claims)


def canonical(value: Any) -> bytes:
    """Sorted keys, no whitespace, `1` and `1.0` kept distinct (msgspec writes floats as floats)."""
    try:
        return _canonical_encoder.encode(value)
    except UnicodeEncodeError:
        # Lone surrogates: possible when a transport decoded "\ud800" with the stdlib. Still
        # deterministic, and seal and open of one value always take the same path.
        import json  # only for this rare case: keeps the stdlib json out of start-up

        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8", "surrogatepass")


def new_token_id() -> str:
    """A fresh one-time token id (128 random bits)."""
    return _b64(os.urandom(16)).decode("ascii")


def binding(params: Mapping[str, Any], principal: str | None) -> bytes:
    """What the MAC binds besides the claims: the principal and the salient params.

    The MAC input is `<token head> "\n" <binding>`. Canonical JSON never contains a raw newline
    (both encoders escape control characters), so that split point is unambiguous.
    """
    # A copy less three keys: cheaper than a comprehension over every key.
    salient = params.copy() if type(params) is dict else dict(params)
    pop = salient.pop
    for name in _UNBOUND:
        pop(name, None)
    try:
        return _canonical_encoder.encode([principal, salient])
    except UnicodeEncodeError:
        return canonical([principal, salient])  # the rare path, said there


_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")


def _b64(raw: bytes) -> bytes:
    """Unpadded base64url (binascii directly: the base64 module's wrappers cost more)."""
    return binascii.b2a_base64(raw, newline=False).translate(_TO_URLSAFE).rstrip(b"=")


def _unb64(text: bytes) -> bytes:
    """Decode unpadded base64url; only for text a MAC has already vouched for."""
    return binascii.a2b_base64(text.translate(_FROM_URLSAFE) + b"=" * (-len(text) % 4))


def _b64decode_strict(text: bytes) -> bytes | None:
    """Decode unpadded base64url, refusing any text that is not the one canonical encoding."""
    if len(text) % 4 == 1 or not _B64_TEXT.fullmatch(text):
        return None
    raw = _unb64(text)
    return raw if _b64(raw) == text else None


def check_ttl(ttl: Any) -> float:
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise TypeError(f"ttl must be a number of seconds, not {type(ttl).__name__}")
    if not 0 < ttl <= MAX_TTL:
        raise ValueError(f"ttl must be more than 0 and at most {MAX_TTL} seconds, got {ttl}")
    return ttl


def check_leeway(leeway: Any) -> float:
    if isinstance(leeway, bool) or not isinstance(leeway, (int, float)):
        raise TypeError(f"leeway must be a number of seconds, not {type(leeway).__name__}")
    if not 0 <= leeway <= MAX_LEEWAY:
        raise ValueError(f"leeway must be 0 to {MAX_LEEWAY} seconds, got {leeway}")
    return leeway


def check_principal(principal: Any) -> str | None:
    if principal is not None and not isinstance(principal, str):
        raise TypeError(
            f"principal must be a str or None (anonymous), not {type(principal).__name__}"
        )
    return principal


def seal_token(
    data: Any,
    method: str,
    audience: str,
    params: Mapping[str, Any],
    principal: str | None,
    keyring: Keyring,
    *,
    ttl: float,
    encrypt: bool,
    once: bool,
    now: float,
    token_id: str | None = None,
) -> str:
    if once and token_id is None:
        token_id = new_token_id()
    elif not once:
        token_id = None
    return seal(data, method, audience, params, principal, keyring, ttl, encrypt, token_id, now)


def seal(
    data: Any,
    method: str,
    audience: str,
    params: Mapping[str, Any],
    principal: str | None,
    keyring: Keyring,
    ttl: float,
    encrypt: bool,
    token_id: str | None,
    now: float,
) -> str:
    """`seal_token` with its options settled (`token_id` None: reusable), all positional: the
    per-round path of `StatePolicy.seal_for`."""
    claims = Claims(method, audience, math.ceil(now + ttl), token_id, data)  # m, a, e, j, d
    try:
        payload = _claims_encoder.encode(claims)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError) as exc:
        raise TypeError(f"request state must be JSON-encodable: {exc}") from None
    bound = binding(params, principal)
    key = keyring.signing_key
    kid = keyring.signing_kid
    if encrypt:
        nonce = os.urandom(_NONCE_BYTES)
        head = _SEALED + b"." + kid
        sealed = key.aead().encrypt(nonce, payload, head + b"\n" + bound)
        token = head + b"." + _b64(nonce) + b"." + _b64(sealed)
    else:
        head = _SIGNED + b"." + kid + b"." + _b64(payload)
        token = head + b"." + _b64(key.mac(head + b"\n" + bound))
    if len(token) > MAX_TOKEN_CHARS:
        raise ValueError(
            f"sealed request state is {len(token)} bytes, over the {MAX_TOKEN_CHARS}-byte limit: "
            "keep state small (ids and choices, not documents)"
        )
    return token.decode("ascii")


_compare_digest: Any = None


def _load_compare() -> Any:
    # hmac is loaded with the first token opened, not at start-up; then kept, not re-imported.
    global _compare_digest
    from hmac import compare_digest

    _compare_digest = compare_digest
    return compare_digest


def open_token(
    token: Any,
    method: str,
    audience: str,
    params: Mapping[str, Any],
    principal: str | None,
    keyring: Keyring,
    now: float,
    leeway: float,
    replay_store: ReplayStore | None,
) -> Any:
    """The data a valid token carries; raises `Rejected` with the real reason otherwise.
    (Positional on the per-round path of `StatePolicy.open_for`.)"""
    if not isinstance(token, str):
        raise Rejected(f"not a string but {type(token).__name__}")
    if len(token) > MAX_TOKEN_CHARS:
        raise Rejected(f"{len(token)} characters, over the {MAX_TOKEN_CHARS} limit")
    try:
        raw = token.encode("ascii")
    except UnicodeEncodeError:
        raise Rejected("contains non-ASCII characters") from None
    parts = raw.split(b".")
    if len(parts) != 4:
        raise Rejected(f"malformed: {len(parts)} dot-separated parts, expected 4")
    form, kid, middle, last = parts
    if form not in (_SIGNED, _SEALED):
        raise Rejected(f"unknown format {form[:8]!r}")
    key = keyring.lookup_token_kid(kid)
    if key is None:
        raise Rejected(f"unknown key id {kid[:40].decode('ascii')!r}")
    try:
        bound = binding(params, principal)
    except Exception as exc:  # params the canonical encoding cannot express
        raise Rejected(f"request params cannot be bound: {exc}") from None
    if form == _SIGNED:
        head = raw[: len(raw) - len(last) - 1]
        if not (_compare_digest or _load_compare())(_b64(key.mac(head + b"\n" + bound)), last):
            raise Rejected(_why_signature_fails(middle, method, audience))
        try:
            payload = _unb64(middle)
        except binascii.Error:
            raise Rejected("claims are not base64url") from None
    else:
        payload = _decrypt(key, kid, middle, last, bound)
    try:
        claims = _claims_decoder.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise Rejected(f"claims do not decode: {exc}") from None
    return _check_claims(claims, method, audience, now, leeway, replay_store)


def _decrypt(key: Key, kid: bytes, nonce_text: bytes, sealed_text: bytes, bound: bytes) -> bytes:
    nonce = _b64decode_strict(nonce_text)
    sealed = _b64decode_strict(sealed_text)
    if nonce is None or sealed is None or len(nonce) != _NONCE_BYTES:
        raise Rejected("malformed encrypted token")
    try:
        aead = key.aead()
    except ImportError:
        raise Rejected("encrypted token, but the `cryptography` package is not installed") from None
    from cryptography.exceptions import InvalidTag

    try:
        return bytes(aead.decrypt(nonce, sealed, _SEALED + b"." + kid + b"\n" + bound))
    except InvalidTag:
        raise Rejected(
            "decryption failed: the token was altered, or was issued for other params or "
            "another principal"
        ) from None


def _why_signature_fails(claims_text: bytes, method: str, audience: str) -> str:
    """Best diagnosis of a bad MAC, from the (unauthenticated) claims: for the log only."""
    base = "signature does not verify"
    try:
        claims_text.decode("ascii")
        if not _B64_TEXT.fullmatch(claims_text):
            return f"{base}: the token was altered (claims are not base64url)"
        payload = _unb64(claims_text)
        claims = _claims_decoder.decode(payload)
    except Exception:
        return f"{base}: the token was altered (claims do not decode)"
    if claims.m != method:
        return f"{base}: issued for method {claims.m!r}, not {method!r}"
    if claims.a != audience:
        return f"{base}: issued for audience {claims.a!r}, not {audience!r}"
    return f"{base}: the token was altered, or was issued for other params or another principal"


def _check_claims(
    claims: Claims,
    method: str,
    audience: str,
    now: float,
    leeway: float,
    replay_store: ReplayStore | None,
) -> Any:
    if claims.e + leeway < now:
        raise Rejected(f"expired {now - claims.e:.0f} s ago")
    if claims.e > now + MAX_TTL + leeway:
        raise Rejected("expiry is further ahead than the longest allowed ttl")
    if claims.m != method:
        raise Rejected(f"issued for method {claims.m!r}, not {method!r}")
    if claims.a != audience:
        raise Rejected(f"issued for audience {claims.a!r}, not {audience!r}")
    if claims.j is not None:
        if replay_store is None:
            raise Rejected("one-time token, but no replay store is configured")
        if not replay_store.consume(claims.j, claims.e + leeway - now):
            raise Rejected("one-time token already used")
    return claims.d
