"""Sending a prepared request within bounds, and its response as a tool result.

Bounds on every call: one deadline for the whole exchange (connect, redirects, body), a cap on
the body read. Redirects are never followed blindly: one to another origin is refused (SSRF),
one on the same origin is followed for GET and HEAD only, at most `MAX_REDIRECTS` times.
A non-2xx answer is a tool error with the status and a bounded excerpt of the body, with any
credential the request carried blanked out of it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec

from rondo import ToolError, ToolResult

from .operations import Operation
from .request import Prepared, origin

MAX_REDIRECTS = 5
EXCERPT_CHARS = 1000
_SECRET_HINTS = ("auth", "token", "key", "secret", "cookie", "session", "password")


class StatusError(ToolError):
    """A non-2xx answer: a tool error that also knows the status (resources map 404)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0
    max_response_bytes: int = 10 * 1024 * 1024

    def __post_init__(self) -> None:
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise ValueError("timeout must be a positive number of seconds")
        if not (isinstance(self.max_response_bytes, int) and self.max_response_bytes > 0):
            raise ValueError("max_response_bytes must be a positive integer")


async def send(client: httpx.AsyncClient, prepared: Prepared, extra_headers: dict[str, str],
               limits: Limits) -> tuple[httpx.Response, bytes, list[str]]:
    """The response, its body (bounded) and the credential values the request carried."""
    request = client.build_request(
        prepared.method, prepared.url, headers={**prepared.headers, **extra_headers},
        content=prepared.content, data=prepared.data, files=prepared.files,
        timeout=limits.timeout)
    start = origin(prepared.url)
    try:
        async with asyncio.timeout(limits.timeout):
            for _ in range(MAX_REDIRECTS + 1):
                response = await client.send(request, stream=True, follow_redirects=False)
                try:
                    secrets = _secrets(response.request)
                    if not response.is_redirect:
                        return response, await _read(response, limits.max_response_bytes), secrets
                    following = response.next_request
                    if following is None:
                        raise ToolError(f"HTTP {response.status_code} without a usable Location")
                    if origin(following.url) != start:
                        raise ToolError(
                            f"refused a redirect to another host ({following.url.scheme}://"
                            f"{following.url.host}): the API may only redirect within its origin")
                    if request.method not in ("GET", "HEAD"):
                        raise ToolError(f"refused to follow a redirect of a {request.method}")
                    request = following
                finally:
                    await response.aclose()
            raise ToolError(f"more than {MAX_REDIRECTS} redirects")
    except TimeoutError:
        raise ToolError(f"{prepared.method} {_shown(prepared.url)} timed out after "
                        f"{limits.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"{prepared.method} {_shown(prepared.url)} failed: "
                        f"{type(exc).__name__}") from None


async def _read(response: httpx.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ToolError(f"the response is larger than {limit} bytes ({declared})")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise ToolError(f"the response is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _shown(url: httpx.URL) -> str:
    """The URL without query or credentials (error messages stay free of secrets)."""
    return f"{url.scheme}://{url.host}{f':{url.port}' if url.port else ''}{url.path}"


def _secrets(request: httpx.Request) -> list[str]:
    found: list[str] = []
    for name, value in request.headers.items():
        if any(hint in name.lower() for hint in _SECRET_HINTS) and value:
            found.append(value)
            found.extend(part for part in value.replace(";", " ").replace("=", " ").split()
                         if len(part) >= 8)
    if request.url.password:
        found.append(request.url.password)
    return sorted(set(found), key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


def result(op: Operation, response: httpx.Response, body: bytes, secrets: list[str]) -> Any:
    """A 2xx answer as content (and structured content when the operation declares JSON)."""
    status = response.status_code
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not 200 <= status < 300:
        text = redact(body[: EXCERPT_CHARS * 4].decode("utf-8", "replace"), secrets)
        if len(text) > EXCERPT_CHARS:
            text = text[:EXCERPT_CHARS] + f"... ({len(body)} bytes)"
        reason = response.reason_phrase or ""
        raise StatusError(f"HTTP {status} {reason} from {op.method} {op.path}"
                          + (f": {text}" if text else ""), status)
    if not body:
        return f"HTTP {status} (no content)"
    is_json = kind == "application/json" or kind.endswith("+json")
    if is_json:
        try:
            value = msgspec.json.decode(body)
        except msgspec.DecodeError:
            is_json = False
    if kind.startswith("text/") or is_json or not kind:
        text = body.decode("utf-8", "replace")
    else:
        text = f"{len(body)} bytes of {kind}"
    if is_json and op.output_schema is not None:
        return ToolResult([text], structured=value)
    return text
