"""Package attributes that import their module on first use (PEP 562 `__getattr__`).

The public packages (`rondo`, `rondo.auth`, `rondo.fleet`) name many things a given program never
touches; importing them all up front would cost every stdio server its cold start.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    exports: Mapping[str, str],
    modules: Iterable[str] = (),
) -> Callable[[str], Any]:
    """A module `__getattr__`: `exports` maps a name to the module defining it, `modules` names
    submodules given as attributes. The first lookup imports and caches it in `namespace`."""
    submodules = frozenset(modules)

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value  # later lookups never reach __getattr__
        return value

    return __getattr__
