"""Era negotiation: probe with `server/discover`, fall back to the 2025-11-25 handshake.

Only positive evidence makes a server modern: a discover result listing a version we speak,
or `-32022` naming one. Everything else a legacy server might do (another error code, an HTTP
error without a JSON-RPC body, silence until the probe timeout) means legacy. Transport
failures are not era evidence and propagate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from rondo.client.errors import ClientError, HttpError, RequestTimeout
from rondo.wire.errors import UNSUPPORTED_VERSION, McpError
from rondo.wire.meta import LEGACY_VERSIONS, MODERN_VERSIONS

Json = dict[str, Any]


@dataclass(frozen=True)
class Era:
    modern: bool
    version: str | None  # the modern version chosen; None for legacy (initialize decides)
    discover: Json | None = None


def supported_from(error: McpError) -> list[str]:
    """`data.supported` of a -32022 error, or [] when it is missing or malformed."""
    data = error.data if isinstance(error.data, dict) else {}
    supported = data.get("supported")
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def mutual_modern(versions: list[str]) -> str | None:
    """The newest modern version in `versions` that this client speaks."""
    return next((v for v in MODERN_VERSIONS if v in versions), None)


async def choose_era(discover: Callable[[str], Awaitable[Json]], *, timeout: float | None) -> Era:
    version = MODERN_VERSIONS[0]
    for attempt in range(2):
        try:
            result = await asyncio.wait_for(discover(version), timeout)
        except McpError as exc:
            if exc.code != UNSUPPORTED_VERSION:
                return Era(False, None)
            supported = supported_from(exc)
            mutual = mutual_modern(supported)
            if mutual == version:  # it lists what it just refused: resending the same is futile
                raise ClientError(
                    f"server refused protocol version {version} although it lists it as supported"
                ) from exc
            if mutual is not None and attempt == 0:
                version = mutual
                continue
            if supported and not any(v in LEGACY_VERSIONS for v in supported):
                raise ClientError(
                    f"server speaks only {', '.join(supported)}; this client speaks "
                    f"{', '.join((*MODERN_VERSIONS, *LEGACY_VERSIONS))}"
                ) from exc
            return Era(False, None)
        except (HttpError, RequestTimeout, TimeoutError):
            return Era(False, None)
        offered = result.get("supportedVersions")
        chosen = mutual_modern(offered) if isinstance(offered, list) else None
        if chosen is None:
            return Era(False, None)
        return Era(True, chosen, result)
    return Era(False, None)


def check_legacy_version(version: Any) -> str:
    if version not in LEGACY_VERSIONS:
        raise ClientError(f"server chose protocol version {version!r}, which this client does not speak")
    return str(version)
