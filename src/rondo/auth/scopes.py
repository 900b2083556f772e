"""Scopes: validated at registration, required per component and per server, and the list
filter. Light (no JOSE import): `Server` calls `check_scopes` when a decorator has `scopes=`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .principal import Principal


class Registry(Protocol):
    """What rondo.auth reads of a `rondo.Server` (auth sits below the server layer, so it
    names the fields instead of importing the class)."""

    @property
    def tools(self) -> Mapping[str, Any]: ...
    @property
    def prompts(self) -> Mapping[str, Any]: ...
    @property
    def resources(self) -> Mapping[str, Any]: ...
    @property
    def templates(self) -> Mapping[str, Any]: ...
    @property
    def component_scopes(self) -> Mapping[tuple[str, str], tuple[str, ...]]: ...
    @property
    def method_scopes(self) -> Mapping[str, tuple[str, ...]]: ...
    @property
    def auth(self) -> Any: ...

# RFC 6749 §3.3 scope-token: printable ASCII but space, '"' and '\'.
_SCOPE_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F)) - {'"', "\\"}
OFFLINE = "offline_access"

Hierarchy = Mapping[str, Iterable[str]] | Callable[[frozenset[str]], Iterable[str]]


def check_scopes(scopes: Any, what: str) -> tuple[str, ...]:
    """A tuple of valid scope tokens, or ValueError (at start-up, not at request time)."""
    if isinstance(scopes, str) or not isinstance(scopes, Iterable):
        raise ValueError(f"{what}: scopes must be a list of strings, got {scopes!r}")
    out: list[str] = []
    for scope in scopes:
        if not isinstance(scope, str) or not scope or any(c not in _SCOPE_CHARS for c in scope):
            raise ValueError(f"{what}: {scope!r} is not a valid OAuth scope token")
        if scope == OFFLINE:
            raise ValueError(f"{what}: offline_access is not a resource scope (refresh tokens "
                             "are the client's business), so it is never required or advertised")
        if scope not in out:
            out.append(scope)
    return tuple(out)


def expander(hierarchy: Hierarchy | None) -> Callable[[frozenset[str]], frozenset[str]]:
    """Granted scopes -> granted plus everything they imply.

    A mapping `{"files:write": ["files:read"], "admin": ["files:write"]}` is applied
    transitively; a callable gets the granted set and returns the implied scopes.
    """
    if hierarchy is None:
        return lambda granted: granted
    if callable(hierarchy):
        fn = hierarchy

        def call(granted: frozenset[str]) -> frozenset[str]:
            return granted | frozenset(fn(granted))

        return call
    if not isinstance(hierarchy, Mapping):
        raise TypeError("scope_hierarchy must be a mapping or a callable")
    table = {k: check_scopes(v, f"scope_hierarchy[{k!r}]") for k, v in hierarchy.items()}
    closure: dict[str, frozenset[str]] = {}
    for top in table:
        seen: set[str] = set()
        todo = [top]
        while todo:
            s = todo.pop()
            for implied in table.get(s, ()):
                if implied not in seen:
                    seen.add(implied)
                    todo.append(implied)
        closure[top] = frozenset(seen)

    def expand(granted: frozenset[str]) -> frozenset[str]:
        extra = [closure[s] for s in granted if s in closure]
        return granted.union(*extra) if extra else granted

    return expand


def component_key(method: str, params: Mapping[str, Any], server: Registry) -> tuple[str, str] | None:
    """Which registered component a request addresses, as its key in `server.component_scopes`."""
    if method == "tools/call":
        name = params.get("name")
        return ("tool", name) if isinstance(name, str) else None
    if method == "prompts/get":
        name = params.get("name")
        return ("prompt", name) if isinstance(name, str) else None
    if method == "resources/read":
        uri = params.get("uri")
        if not isinstance(uri, str):
            return None
        if uri in server.resources:
            return ("resource", uri)
        for template in server.templates.values():
            if template.template is not None and template.template.match(uri) is not None:
                return ("resource", template.uri)
    return None


def required_for(server: Registry, base: tuple[str, ...], method: str,
                 params: Mapping[str, Any]) -> tuple[str, ...]:
    """Every scope a request needs: the server-wide ones, its method row's, its component's."""
    rows = server.method_scopes
    if rows:
        row = rows.get(method)
        if row:
            base = base + tuple(s for s in row if s not in base)
    table = server.component_scopes
    if not table:
        return base
    key = component_key(method, params, server)
    extra = table.get(key, ()) if key is not None else ()
    return base + tuple(s for s in extra if s not in base)


_LIST_KIND = {"tools": "tool", "prompts": "prompt", "resources": "resource",
              "resourceTemplates": "resource"}


def visible(server: Registry, auth: Any, kind: str, items: list[Any]) -> list[Any] | None:
    """The list-call hook: the items the caller's token may use, or None to show all.

    Only when the server's `ResourceServer` says `list_filter="hide"` and the request is
    authenticated; otherwise lists are the same for everyone.
    """
    from .principal import Principal

    rs = getattr(server, "auth", None)
    if rs is None or rs.list_filter != "hide" or not isinstance(auth, Principal):
        return None
    table = server.component_scopes
    tag = _LIST_KIND[kind]
    shown: list[Any] = []
    for item in items:
        key = (tag, item.name if tag in ("tool", "prompt") else item.uri)
        if auth.has_scopes(table.get(key, ())):
            shown.append(item)
    return shown


def principal_may(principal: Principal, needed: tuple[str, ...]) -> tuple[str, ...]:
    """The scopes of `needed` the principal lacks (empty: allowed)."""
    return principal.missing(needed)
