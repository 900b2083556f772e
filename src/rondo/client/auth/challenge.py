"""`WWW-Authenticate` parsing (RFC 9110 §11.6.1): challenges, each a scheme and its parameters.

Only what a client acts on is kept: the scheme (lower-cased) and auth-params (names
lower-cased, the first occurrence wins). token68 values are skipped. Malformed text ends the
parse of that header value; it never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_SCHEME = re.compile(rf"[ \t,]*({_TOKEN})")
_PARAM = re.compile(rf'[ \t]*({_TOKEN})[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"|{_TOKEN})[ \t]*(?:,|$)')
_TOKEN68 = re.compile(r"[ \t]*[A-Za-z0-9\-._~+/]+=*[ \t]*(?:,|$)")
_UNQUOTE = re.compile(r"\\(.)")
MAX_HEADER = 8192  # longer header values are not parsed at all


@dataclass(frozen=True)
class Challenge:
    scheme: str
    params: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str | None:
        return self.params.get(name)

    @property
    def scopes(self) -> list[str] | None:
        raw = self.params.get("scope")
        return None if raw is None else raw.split()


def parse_challenges(values: Iterable[str]) -> list[Challenge]:
    out: list[Challenge] = []
    for value in values:
        if len(value) <= MAX_HEADER:
            out.extend(_parse_one(value))
    return out


def bearer_challenge(values: Iterable[str], schemes: tuple[str, ...] = ("bearer",)) -> Challenge | None:
    """The first challenge among the header values whose scheme is one of `schemes`."""
    for challenge in parse_challenges(values):
        if challenge.scheme in schemes:
            return challenge
    return None


def _parse_one(text: str) -> list[Challenge]:
    out: list[Challenge] = []
    pos = 0
    while pos < len(text):
        scheme = _SCHEME.match(text, pos)
        if scheme is None:
            break
        pos = scheme.end()
        params: dict[str, str] = {}
        if pos < len(text) and text[pos] not in " \t,":
            break  # a scheme must be followed by space, a comma or the end
        while pos < len(text):
            param = _PARAM.match(text, pos)
            if param is not None:
                name, raw = param.group(1).lower(), param.group(2)
                value = _UNQUOTE.sub(r"\1", raw[1:-1]) if raw.startswith('"') else raw
                params.setdefault(name, value)
                pos = param.end()
                continue
            token68 = _TOKEN68.match(text, pos)
            if token68 is not None and not params:
                pos = token68.end()
                continue
            break  # the next challenge starts here
        out.append(Challenge(scheme.group(1).lower(), params))
    return out
