"""RFC 6570 URI templates, the subset resource templates need: match a URI, list variables.

Supported expressions: `{var}` (one path segment: no `/`, `?`, `#` in the URI, and after
percent-decoding no `/`, `\\`, `..`, or control character) and `{+var}` (reserved expansion:
may span segments, so `/` is allowed, but after decoding still no `..` segment and no control
character). Lists (`{a,b}`) are not supported on purpose: they are ambiguous to reverse.

Matching is linear in the URI's length, with no regular expression: the URI must start with the
template's first literal and end with its last; in between, each variable ends at the *first*
occurrence of the literal that follows it, except the last `{+var}`, which ends at the *last*
occurrence (so `{+dir}/{name}` puts every `/` but the final one in `dir`). Two variables must be
separated by a literal. A refused value makes the URI not match (the client gets "Resource not
found"), so a handler never sees `../etc/passwd` or a NUL byte.
"""

from __future__ import annotations

import re

# Patterns compiled on first use (`re` keeps them): a server without templates never needs them.
_EXPR = r"\{([+#]?)([A-Za-z0-9_.]+)\}"
_SEGMENT_STOPS = "/?#"
# Control characters (C0, DEL, C1): a decoded value carrying one is refused.
_CONTROL = r"[\x00-\x1f\x7f-\x9f]"


class UriTemplate:
    __slots__ = ("template", "variables", "_head", "_tail", "_parts", "_last_plus")

    def __init__(self, template: str) -> None:
        if "{" not in template:
            raise ValueError(f"{template!r} has no template variables")
        self.template = template
        variables: list[str] = []
        # (variable name, reserved?, literal that follows it)
        parts: list[tuple[str, bool, str]] = []
        pos = 0
        head = ""
        for m in re.finditer(_EXPR, template):
            literal = template[pos : m.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"unsupported URI template expression in {template!r}")
            if not variables:
                head = literal
            else:
                if not literal:
                    raise ValueError(
                        f"variables must be separated by a literal in {template!r} (ambiguous)")
                parts[-1] = (parts[-1][0], parts[-1][1], literal)
            op, name = m.group(1), m.group(2)
            if name in variables:
                raise ValueError(f"variable {name!r} appears twice in {template!r}")
            variables.append(name)
            parts.append((name, bool(op), ""))
            pos = m.end()
        tail = template[pos:]
        if "{" in tail or "}" in tail:
            raise ValueError(f"unsupported URI template expression in {template!r}")
        self.variables = tuple(variables)
        self._head = head
        self._tail = tail
        self._parts = tuple(parts)
        plus = [i for i, p in enumerate(parts) if p[1]]
        self._last_plus = plus[-1] if plus else -1

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variables, or None when the URI does not match (or a value is refused)."""
        head, tail = self._head, self._tail
        if len(uri) < len(head) + len(tail) + len(self._parts):
            return None
        if not uri.startswith(head) or not uri.endswith(tail):
            return None
        pos, end = len(head), len(uri) - len(tail)
        raw: list[tuple[str, bool, str]] = []
        last = len(self._parts) - 1
        for i, (name, plus, literal) in enumerate(self._parts):
            if i == last:
                stop = end
            elif i == self._last_plus:
                stop = uri.rfind(literal, pos + 1, end)
            else:
                stop = uri.find(literal, pos + 1, end)
            if stop <= pos:
                return None
            value = uri[pos:stop]
            if not plus and any(c in value for c in _SEGMENT_STOPS):
                return None
            raw.append((name, plus, value))
            pos = stop + len(literal)
        if pos != end:
            return None
        from urllib.parse import unquote  # only when a template matches: keeps start-up light

        out: dict[str, str] = {}
        for name, plus, value in raw:
            decoded = unquote(value) if "%" in value else value
            if not _acceptable(decoded, plus):
                return None
            out[name] = decoded
        return out

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"


def _acceptable(value: str, plus: bool) -> bool:
    """Refuse what would let a value escape its place: control characters, `..` segments and,
    for a simple `{var}`, any separator at all."""
    if re.search(_CONTROL, value):
        return False
    if plus:
        return ".." not in value.replace("\\", "/").split("/")
    return "/" not in value and "\\" not in value and value not in (".", "..")
