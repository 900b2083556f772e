"""Serve an existing HTTP API over MCP: `from_openapi(document, client)` and `from_fastapi(app)`
build a `rondo.Server` whose tools call the API (docs/openapi.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build import from_openapi as from_openapi
    from .errors import OpenAPIError as OpenAPIError
    from .errors import OperationSkipped as OperationSkipped
    from .fastapi import from_fastapi as from_fastapi
    from .operations import Operation as Operation
    from .routes import Route as Route

_EXPORTS = {
    "from_openapi": ".build",
    "from_fastapi": ".fastapi",
    "OpenAPIError": ".errors",
    "OperationSkipped": ".errors",
    "Operation": ".operations",
    "Route": ".routes",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module 'rondo.openapi' has no attribute {name!r}")
