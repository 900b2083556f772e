"""`HttpLimits` and `uvicorn_options` by their first import path; they live in
`rondo.transport.serve` (`serve/limits.py`) with the rest of what couples to uvicorn."""

from __future__ import annotations

from .serve.limits import HttpLimits, uvicorn_options

__all__ = ["HttpLimits", "uvicorn_options"]
