"""RFC 6570 URI templates, the subset resource templates need: match a URI, list variables.

Supported expressions: `{var}` (one path segment's worth: no `/`, `?`, `#`), `{+var}` (reserved
expansion: anything), and `{var1,var2}` lists joined by commas are not supported on purpose —
they are ambiguous to reverse. Values are percent-decoded after matching.
"""

from __future__ import annotations

import re

_EXPR = re.compile(r"\{([+#]?)([A-Za-z0-9_.]+)\}")


class UriTemplate:
    __slots__ = ("template", "variables", "_regex")

    def __init__(self, template: str) -> None:
        if "{" not in template:
            raise ValueError(f"{template!r} has no template variables")
        self.template = template
        variables: list[str] = []
        pattern: list[str] = []
        pos = 0
        for m in _EXPR.finditer(template):
            literal = template[pos : m.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"unsupported URI template expression in {template!r}")
            pattern.append(re.escape(literal))
            op, name = m.group(1), m.group(2)
            if name in variables:
                raise ValueError(f"variable {name!r} appears twice in {template!r}")
            variables.append(name)
            pattern.append(f"(?P<{name}>.+?)" if op else f"(?P<{name}>[^/?#]+)")
            pos = m.end()
        tail = template[pos:]
        if "{" in tail or "}" in tail:
            raise ValueError(f"unsupported URI template expression in {template!r}")
        pattern.append(re.escape(tail))
        self.variables = tuple(variables)
        self._regex = re.compile("".join(pattern) + r"\Z")

    def match(self, uri: str) -> dict[str, str] | None:
        m = self._regex.match(uri)
        if m is None:
            return None
        from urllib.parse import unquote  # only when a template matches: keeps start-up light

        return {k: unquote(v) for k, v in m.groupdict().items()}

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"
