"""The YAML frontmatter of a `SKILL.md`, parsed without a YAML library.

Agent Skills frontmatter is small: `name`, `description`, `license`, `compatibility`,
`allowed-tools`, and a `metadata` mapping. This reads the YAML that such files use: block
mappings nested by indentation, block sequences (`- item`), flow sequences of scalars
(`[a, b]`), plain scalars (resolved by YAML 1.2's core schema: null, booleans, integers, floats,
else strings; a plain scalar may continue on more-indented lines), single- and double-quoted
strings, literal (`|`) and folded (`>`) block scalars with `-`/`+` chomping, and `#` comments.
Anything else (anchors, aliases, tags, flow mappings, complex keys, documents) is refused with
`FrontmatterError` naming the line: a manifest is never half-read.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_FRONTMATTER = 64 * 1024
_OPEN = re.compile(r"^---[ \t]*$")
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-/]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


class FrontmatterError(ValueError):
    """The SKILL.md has no frontmatter, or frontmatter this parser will not guess at."""


def split(text: str) -> tuple[str, str]:
    """(frontmatter YAML, body) of a SKILL.md; `FrontmatterError` if it has no frontmatter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or not _OPEN.match(lines[0].rstrip("\r")):
        raise FrontmatterError("SKILL.md must begin with '---' and YAML frontmatter")
    for i in range(1, len(lines)):
        if _OPEN.match(lines[i].rstrip("\r")):
            head = "\n".join(line.rstrip("\r") for line in lines[1:i])
            if len(head) > MAX_FRONTMATTER:
                raise FrontmatterError(f"frontmatter is over {MAX_FRONTMATTER} bytes")
            return head, "\n".join(lines[i + 1:])
    raise FrontmatterError("SKILL.md frontmatter has no closing '---'")


def parse(text: str) -> dict[str, Any]:
    """The frontmatter of a SKILL.md as a JSON-ready dict (must be a mapping)."""
    head, _ = split(text)
    lines = [(n + 2, raw) for n, raw in enumerate(head.split("\n"))]
    parser = _Parser(lines)
    value = parser.block(0)
    parser.skip_blank()
    if parser.i < len(parser.lines):
        parser.fail("unexpected indentation")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterError("frontmatter must be a mapping of fields")
    return value


def _strip_comment(s: str) -> str:
    # A '#' starts a comment at the start or after whitespace, outside quotes.
    quote = ""
    i = 0
    while i < len(s):
        ch = s[i]
        if quote:
            if quote == '"' and ch == "\\":
                i += 1  # an escaped character, a quote included
            elif ch == quote:
                if quote == "'" and s[i + 1: i + 2] == "'":
                    i += 1  # '' is an escaped single quote
                else:
                    quote = ""
        elif ch in "'\"" and (i == 0 or s[i - 1] in " \t[,:"):
            quote = ch
        elif ch == "#" and (i == 0 or s[i - 1] in " \t"):
            return s[:i].rstrip()
        i += 1
    return s.rstrip()


def _indent(s: str) -> int:
    if "\t" in s[: len(s) - len(s.lstrip(" \t"))]:
        return -1
    return len(s) - len(s.lstrip(" "))


def plain(s: str) -> Any:
    """A plain scalar under YAML 1.2's core schema."""
    if s in ("", "~", "null", "Null", "NULL"):
        return None
    if s in ("true", "True", "TRUE"):
        return True
    if s in ("false", "False", "FALSE"):
        return False
    if _INT.match(s):
        return int(s)
    if _OCT.match(s):
        return int(s[2:], 8)
    if _HEX.match(s):
        return int(s[2:], 16)
    if _FLOAT.match(s) and any(c.isdigit() for c in s):
        return float(s)
    if s in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"):
        return float("inf")
    if s in ("-.inf", "-.Inf", "-.INF"):
        return float("-inf")
    if s in (".nan", ".NaN", ".NAN"):
        raise FrontmatterError("NaN is not a JSON value")
    return s


class _Parser:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.i = 0

    def fail(self, why: str) -> None:
        number = self.lines[min(self.i, len(self.lines) - 1)][0] if self.lines else 1
        raise FrontmatterError(f"SKILL.md line {number}: {why}")

    def skip_blank(self) -> None:
        while self.i < len(self.lines) and not _strip_comment(self.lines[self.i][1]).strip():
            self.i += 1

    def peek_indent(self) -> int | None:
        self.skip_blank()
        if self.i >= len(self.lines):
            return None
        indent = _indent(self.lines[self.i][1])
        if indent < 0:
            self.fail("tabs may not indent YAML")
        return indent

    def block(self, min_indent: int) -> Any:
        indent = self.peek_indent()
        if indent is None or indent < min_indent:
            return None
        body = _strip_comment(self.lines[self.i][1]).strip()
        if body == "-" or body.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            here = self.peek_indent()
            if here is None or here < indent:
                return out
            if here > indent:
                self.fail("unexpected indentation")
            raw = self.lines[self.i][1]
            body = _strip_comment(raw).strip()
            if body.startswith(("- ", "? ", "&", "*", "!", "{", "[", "'", '"')) or body == "-":
                self.fail("only `key: value` fields are supported here")
            match = _KEY.match(body)
            if not match:
                self.fail("expected `key: value`")
            assert match is not None
            key, rest = match.group(1), match.group(2)
            if key in out:
                self.fail(f"duplicate key {key!r}")
            self.i += 1
            out[key] = self.value(rest, indent, raw)

    def sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while True:
            here = self.peek_indent()
            if here is None or here < indent:
                return out
            if here > indent:
                self.fail("unexpected indentation")
            raw = self.lines[self.i][1]
            body = _strip_comment(raw).strip()
            if not (body == "-" or body.startswith("- ")):
                return out
            rest = body[1:].strip()
            self.i += 1
            if _KEY.match(rest) and not rest.startswith(("'", '"')):
                self.fail("mappings inside sequences are not supported")
            out.append(self.value(rest or None, indent, raw))

    def value(self, rest: str | None, indent: int, raw: str) -> Any:
        if rest is None or rest == "":
            child = self.peek_indent()
            if child is not None and child > indent:
                return self.block(indent + 1)
            # `key:` then a sequence at the same indentation is YAML too.
            if child == indent and self.i < len(self.lines):
                body = _strip_comment(self.lines[self.i][1]).strip()
                if body == "-" or body.startswith("- "):
                    return self.sequence(indent)
            return None
        rest = _strip_comment(rest) if not rest.startswith(("|", ">")) else rest.split(" #")[0].strip()
        head = rest[:1]
        if head in ("|", ">"):
            return self.block_scalar(rest, indent)
        if head in ("&", "*", "!", "{", "%", "@", "`"):
            self.fail(f"YAML {head!r} is not supported in skill frontmatter")
        if head == '"':
            return self.quoted(rest, '"', indent)
        if head == "'":
            return self.quoted(rest, "'", indent)
        if head == "[":
            return self.flow_sequence(rest)
        text = rest
        # A plain scalar may continue on more-indented lines (folded with spaces).
        while self.i < len(self.lines):
            line = self.lines[self.i][1]
            stripped = _strip_comment(line).strip()
            if not stripped:
                break
            if _indent(line) <= indent:
                break
            if _KEY.match(stripped) or stripped.startswith("- "):
                break
            text += " " + stripped
            self.i += 1
        if ": " in text or text.endswith(":"):
            self.fail("a plain value may not contain ': ' (quote it)")
        return plain(text)

    def quoted(self, first: str, quote: str, indent: int) -> str:
        text = first
        while not _closed(text, quote):
            if self.i >= len(self.lines):
                self.fail("unterminated quoted string")
            text += "\n" + self.lines[self.i][1].strip()
            self.i += 1
        end = _closing(text, quote)
        if text[end + 1:].strip():
            self.fail("text after a quoted string")
        inner = text[1:end]
        inner = re.sub(r"[ \t]*\n[ \t]*", lambda m: " ", inner)  # line folding (no blank lines)
        if quote == "'":
            return inner.replace("''", "'")
        try:
            # Escapes pair up left to right, so an escaped backslash before a quote stays one.
            value = json.loads('"' + _LENIENT_QUOTE.sub(_unquote, inner) + '"')
        except json.JSONDecodeError:
            self.fail("a double-quoted string has an escape JSON does not know")
        assert isinstance(value, str)
        return value

    def flow_sequence(self, text: str) -> list[Any]:
        if not text.endswith("]"):
            self.fail("a flow sequence must close on its line")
        inner = text[1:-1].strip()
        if not inner:
            return []
        items = []
        for part in inner.split(","):
            part = part.strip()
            if not part or part[0] in "[{&*!" or '"' in part[1:-1] or "'" in part[1:-1]:
                self.fail("only flow sequences of simple scalars are supported")
            if part[0] in "'\"":
                items.append(part[1:-1].replace("''", "'") if part[0] == "'" else json.loads(part))
            else:
                items.append(plain(part))
        return items

    def block_scalar(self, header: str, indent: int) -> str:
        style, flags = header[0], header[1:].strip()
        if flags not in ("", "-", "+"):
            self.fail("block scalar indentation indicators are not supported")
        lines: list[str] = []
        block_indent: int | None = None
        while self.i < len(self.lines):
            line = self.lines[self.i][1]
            if line.strip():
                here = _indent(line)
                if here < 0:
                    self.fail("tabs may not indent YAML")
                if here <= indent:
                    break
                if block_indent is None:
                    block_indent = here
                elif here < block_indent:
                    break
                lines.append(line[block_indent:])
            else:
                lines.append("")
            self.i += 1
        while lines and lines[-1] == "" and flags != "+":
            lines.pop()
        text = "\n".join(lines) if style == "|" else _fold(lines)
        if not lines:
            return ""
        return text if flags == "-" else text + "\n"


def _fold(lines: list[str]) -> str:
    out = ""
    prev: str | None = None
    for line in lines:
        if prev is None:
            out = line
        elif line == "":
            out += "\n"
        elif prev == "":
            out += line
        elif line.startswith(" ") or prev.startswith(" "):
            out += "\n" + line
        else:
            out += " " + line
        prev = line
    return out


def _closing(text: str, quote: str) -> int:
    i = 1
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and text[i + 1: i + 2] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


def _closed(text: str, quote: str) -> bool:
    return _closing(text, quote) != -1


_LENIENT_QUOTE = re.compile(r"\\(.)", re.S)


def _unquote(match: re.Match[str]) -> str:
    """`\\'` is not a YAML escape, but SKILL.md writers use it: read it as a quote."""
    return "'" if match.group(1) == "'" else match.group(0)


def render(frontmatter: dict[str, Any]) -> str:
    """YAML for a frontmatter of strings, numbers, booleans, null, lists and mappings: every
    string double-quoted (JSON strings are YAML), so `parse(render(x)) == x`."""
    return "".join(_render(frontmatter, 0))


def _render(value: dict[str, Any], indent: int) -> list[str]:
    out: list[str] = []
    pad = " " * indent
    for key, item in value.items():
        if not isinstance(key, str) or not _KEY.match(f"{key}:"):
            raise ValueError(f"frontmatter key {key!r} is not a plain YAML key")
        if isinstance(item, dict):
            out.append(f"{pad}{key}:\n" if item else f"{pad}{key}: null\n")
            if not item:
                raise ValueError(f"frontmatter mapping {key!r} is empty (write null)")
            out.extend(_render(item, indent + 2))
        elif isinstance(item, list):
            if not item:
                out.append(f"{pad}{key}: []\n")
            else:
                out.append(f"{pad}{key}:\n")
                out.extend(f"{pad}  - {_scalar(x)}\n" for x in item)
        else:
            out.append(f"{pad}{key}: {_scalar(item)}\n")
    return out


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and value == value and value not in (float("inf"), float("-inf")):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise ValueError(f"frontmatter value {value!r} cannot be written as YAML here")
