"""Tool arguments to the HTTP request an operation describes, and a digest of that request.

The URL is the base URL's origin and path plus the operation's path with encoded parameters;
it is checked to stay under the base (same scheme, host, port and path prefix) before anything
is sent. The digest covers what the user is asked to confirm: method, URL, the headers the
arguments set and the body, never credentials (those come from the client or the auth hook).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from .operations import FORM, MULTIPART, Operation
from .serialize import cookie_value, header_value, path_value, query_pairs

PREVIEW_CHARS = 2000


@dataclass
class Prepared:
    method: str
    url: httpx.URL
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    data: dict[str, Any] | None = None
    files: list[tuple[str, Any]] | None = None
    shown_body: Any = None  # what the confirmation shows and the digest covers

    def digest(self) -> str:
        canonical = msgspec.json.encode(
            [self.method, str(self.url), sorted(self.headers.items()), self.shown_body],
            order="sorted")
        return hashlib.sha256(canonical).hexdigest()

    def describe(self) -> str:
        """The exact request, for a person: method and URL, headers set, body (bounded)."""
        lines = [f"{self.method} {self.url}"]
        lines += [f"{k}: {v}" for k, v in sorted(self.headers.items()) if k != "content-type"]
        if self.shown_body is not None:
            body = self.shown_body if isinstance(self.shown_body, str) else \
                msgspec.json.encode(self.shown_body).decode()
            if len(body) > PREVIEW_CHARS:
                body = body[:PREVIEW_CHARS] + f"... ({len(body)} characters)"
            lines.append(f"body: {body}")
        return "\n".join(lines)


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def prepare(op: Operation, arguments: dict[str, Any], base: httpx.URL) -> Prepared:
    """The request for `arguments`; ValueError says which argument is wrong and why."""
    known = op.arguments()  # from the outline: the schemas may not be translated yet
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise ValueError(f"unknown argument{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}")
    path = op.path
    query: list[tuple[str, str | int | float | bool | None]] = []
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for param in op.params:
        if param.arg not in arguments:
            if param.required:
                raise ValueError(f"missing required argument {param.arg!r}")
            continue
        value = arguments[param.arg]
        if param.location == "path":
            path = path.replace("{" + param.name + "}", path_value(param, value))
        elif param.location == "query":
            query.extend(query_pairs(param, value))
        elif param.location == "header":
            if value is not None:
                headers[param.name.lower()] = header_value(param, value)
        elif value is not None:
            cookies.append(cookie_value(param, value))
    if cookies:
        headers["cookie"] = "; ".join(cookies)
    base_path = base.raw_path.decode("ascii").split("?", 1)[0].rstrip("/")
    url = httpx.URL(f"{base.scheme}://{base.netloc.decode('ascii')}{base_path}{path}")
    if query:
        url = url.copy_merge_params(query)
    if origin(url) != origin(base) or not url.raw_path.decode("ascii").startswith(base_path + "/"):
        raise ValueError("the arguments would send the request outside the API's base URL")
    prepared = Prepared(op.method, url, headers)
    if op.body is not None:
        _body(op, arguments, prepared)
    return prepared


def _body(op: Operation, arguments: dict[str, Any], prepared: Prepared) -> None:
    body = op.body
    assert body is not None
    kind = body.media_type.split(";")[0].strip().lower()
    if body.fields is not None:
        value: Any = {prop: arguments[arg] for arg, prop in body.fields.items() if arg in arguments}
        if not value and not body.required:
            return
    else:
        assert body.arg is not None
        if body.arg not in arguments:
            return
        value = arguments[body.arg]
    prepared.shown_body = value
    if kind in (FORM, MULTIPART):
        if not isinstance(value, dict):
            raise ValueError(f"the {kind} body must be an object")
        fields = {k: v if isinstance(v, (str, list)) else _text(v) for k, v in value.items()}
        if kind == FORM:
            prepared.data = fields
            return
        parts: list[tuple[str, Any]] = []
        for key, field_value in fields.items():
            for item in field_value if isinstance(field_value, list) else [field_value]:
                text = item if isinstance(item, str) else _text(item)
                if key in body.binary:
                    parts.append((key, (key, text.encode(), "application/octet-stream")))
                else:
                    parts.append((key, (None, text)))
        prepared.files = parts  # (None, text): a plain field; always multipart, even without files
        return
    if kind.endswith("json"):
        prepared.content = msgspec.json.encode(value)
    elif isinstance(value, str):
        prepared.content = value.encode()
    else:
        raise ValueError(f"the {kind} body must be a string")
    prepared.headers["content-type"] = body.media_type


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return ""
    return msgspec.json.encode(value).decode()
