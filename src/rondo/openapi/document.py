"""Reading the document: a dict, a JSON file, or a URL fetched once, each within bounds.

YAML is not read (no parser dependency); convert it to JSON first. Swagger 2.0 is refused with
a message saying so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from .errors import OpenAPIError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
FETCH_TIMEOUT = 30.0


def load(source: Any, *, max_bytes: int = MAX_DOCUMENT_BYTES,
         timeout: float = FETCH_TIMEOUT) -> dict[str, Any]:
    """The document as a dict, checked to be OpenAPI 3.0 or 3.1 with `paths`."""
    if isinstance(source, Mapping):
        doc = source if isinstance(source, dict) else dict(source)
    elif isinstance(source, str) and "://" in source:
        doc = _decode(fetch(source, max_bytes=max_bytes, timeout=timeout), source)
    elif isinstance(source, (str, os.PathLike)):
        doc = _decode(_read_file(Path(source), max_bytes), str(source))
    else:
        raise OpenAPIError(
            f"an OpenAPI document is a dict, a path or an http(s) URL, not {type(source).__name__}"
        )
    return check(doc)


def check(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise OpenAPIError("the OpenAPI document must be a JSON object")
    if "swagger" in doc:
        raise OpenAPIError(
            f"Swagger {doc.get('swagger')} documents are not supported: convert to OpenAPI 3 first"
        )
    version = doc.get("openapi")
    if not isinstance(version, str) or not version.startswith(("3.0", "3.1")):
        raise OpenAPIError(f"unsupported OpenAPI version {version!r} (3.0.x or 3.1.x)")
    paths = doc.get("paths", {})
    if not isinstance(paths, dict):
        raise OpenAPIError("'paths' must be an object")
    return doc


def _decode(raw: bytes, where: str) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise OpenAPIError(f"{where} is not JSON ({exc}); YAML documents must be converted "
                           "to JSON first") from None
    except RecursionError:
        raise OpenAPIError(f"{where} is nested too deeply to read") from None


def _read_file(path: Path, max_bytes: int) -> bytes:
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise OpenAPIError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise OpenAPIError(f"{path} is larger than {max_bytes} bytes")
    return raw


def fetch(url: str, *, max_bytes: int = MAX_DOCUMENT_BYTES, timeout: float = FETCH_TIMEOUT) -> bytes:
    """GET the document once: http(s) only, no redirects, at most `max_bytes`, `timeout` s."""
    import httpx

    if not url.startswith(("http://", "https://")):
        raise OpenAPIError(f"a document URL must be http(s), got {url.split(':', 1)[0]!r}")
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client, \
                client.stream("GET", url, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                where = response.headers.get("location")
                extra = f" (redirect to {where!r} not followed)" if where else ""
                raise OpenAPIError(f"fetching {url}: HTTP {response.status_code}{extra}")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise OpenAPIError(f"{url}: document larger than {max_bytes} bytes")
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        raise OpenAPIError(f"fetching {url}: {type(exc).__name__}: {exc}") from None
    return b"".join(chunks)
