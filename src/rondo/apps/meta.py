"""The MCP Apps extension's names and metadata, as typed values that check their own shape.

One module for both halves: the server builds `_meta.ui` from these values, the client parses
what a server sent back into them, and both refuse the same malformed input. Wire names are
the extension's (`apps` 2026-01-26, `McpUiResourceMeta` and `McpUiToolMeta`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
SCHEME = "ui://"
# The flat tool key the extension deprecates ("will be removed before GA") but hosts still read;
# the official server helper mirrors it from `_meta.ui.resourceUri`, so rondo sends both.
LEGACY_RESOURCE_URI = "ui/resourceUri"
VISIBILITIES = ("model", "app")
MAX_DOMAINS = 64  # per CSP list: a policy is a header, not a database

# An origin as a CSP source: scheme, host (a `*.` wildcard label allowed first), optional port,
# nothing else: no path, query, quote, semicolon or space can reach the header a host builds.
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_HOST = rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\]"
_ORIGIN = re.compile(rf"^(?:https?|wss?)://(?:{_HOST})(?::(?P<port>[0-9]{{1,5}}))?$")
_DOMAIN = re.compile(r"^[\x21-\x7e]{1,253}$")  # host-defined format: printable, no spaces


class AppsError(ValueError):
    """A view or its metadata breaks the extension's rules (raised at registration or read)."""


def _origin(value: Any, where: str) -> str:
    found = _ORIGIN.match(value) if isinstance(value, str) else None
    if found is None:
        raise AppsError(f"{where}: {value!r} is not an origin (scheme://host[:port], with http, "
                        "https, ws or wss, no path; a leading '*.' label is allowed)")
    port = found.group("port")
    if port is not None and not 0 < int(port) < 65536:
        raise AppsError(f"{where}: {value!r} has a port out of range")
    return found.group(0)


def _origins(values: Any, where: str) -> tuple[str, ...]:
    if not isinstance(values, (list, tuple)):
        raise AppsError(f"{where} must be a list of origins, got {type(values).__name__}")
    if len(values) > MAX_DOMAINS:  # before looking at any: a huge list costs nothing
        raise AppsError(f"{where}: at most {MAX_DOMAINS} origins")
    return tuple(_origin(v, where) for v in values)


@dataclass(frozen=True)
class Csp:
    """The origins a view may reach beyond its own inline content (`_meta.ui.csp`): each an
    origin such as `https://api.example.com` or `https://*.example.com`. Empty lists declare
    nothing, and a host then blocks every outside origin."""

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field, wire in _CSP_FIELDS:
            object.__setattr__(self, field, _origins(getattr(self, field), f"csp.{wire}"))

    def wire(self) -> dict[str, list[str]]:
        return {wire: list(getattr(self, field)) for field, wire in _CSP_FIELDS
                if getattr(self, field)}

    @classmethod
    def parse(cls, value: Any) -> Csp:
        if not isinstance(value, Mapping):
            raise AppsError(f"csp must be an object, got {type(value).__name__}")
        return cls(**{field: value.get(wire, ()) for field, wire in _CSP_FIELDS})

    def allows(self, origin: str, kind: str = "resource") -> bool:
        """Whether `origin` (scheme://host[:port]) is declared for `kind` ("resource",
        "connect", "frame"), a `*.` entry covering any subdomain of its host."""
        return any(_matches(declared, origin)
                   for declared in getattr(self, f"{kind}_domains"))


_CSP_FIELDS = (("connect_domains", "connectDomains"), ("resource_domains", "resourceDomains"),
               ("frame_domains", "frameDomains"), ("base_uri_domains", "baseUriDomains"))


def _matches(declared: str, origin: str) -> bool:
    scheme, _, rest = declared.partition("://")
    oscheme, _, orest = origin.partition("://")
    if scheme.lower() != oscheme.lower():
        return False
    if rest.startswith("*."):
        return orest.lower().endswith(rest[1:].lower())
    return rest.lower() == orest.lower()


_PERMISSIONS = (("camera", "camera"), ("microphone", "microphone"),
                ("geolocation", "geolocation"), ("clipboard_write", "clipboardWrite"))


@dataclass(frozen=True)
class Permissions:
    """Browser features a view asks the host for (`_meta.ui.permissions`); a host may refuse."""

    camera: bool = False
    microphone: bool = False
    geolocation: bool = False
    clipboard_write: bool = False

    def __post_init__(self) -> None:
        for field, _ in _PERMISSIONS:
            if not isinstance(getattr(self, field), bool):
                raise AppsError(f"permissions.{field} must be a bool")

    def wire(self) -> dict[str, dict[str, Any]]:
        return {wire: {} for field, wire in _PERMISSIONS if getattr(self, field)}

    @classmethod
    def parse(cls, value: Any) -> Permissions:
        if not isinstance(value, Mapping):
            raise AppsError(f"permissions must be an object, got {type(value).__name__}")
        for _, wire in _PERMISSIONS:
            if wire in value and not isinstance(value[wire], Mapping):
                raise AppsError(f"permissions.{wire} must be an object ({{}}), got "
                                f"{type(value[wire]).__name__}")
        return cls(**{field: wire in value for field, wire in _PERMISSIONS})


@dataclass(frozen=True)
class ViewMeta:
    """A view resource's `_meta.ui`: its CSP, permissions, dedicated `domain` (in the format
    the host documents) and whether it prefers a border (None: the host decides)."""

    csp: Csp | None = None
    permissions: Permissions | None = None
    domain: str | None = None
    prefers_border: bool | None = None

    def __post_init__(self) -> None:
        if self.csp is not None and not isinstance(self.csp, Csp):
            object.__setattr__(self, "csp", Csp.parse(self.csp))
        if self.permissions is not None and not isinstance(self.permissions, Permissions):
            object.__setattr__(self, "permissions", Permissions.parse(self.permissions))
        if self.domain is not None and (not isinstance(self.domain, str)
                                        or not _DOMAIN.match(self.domain)):
            raise AppsError(f"domain must be a host name or origin without spaces, got "
                            f"{self.domain!r}")
        if self.prefers_border is not None and not isinstance(self.prefers_border, bool):
            raise AppsError(f"prefersBorder must be a bool, got {self.prefers_border!r}")

    def policy(self) -> str:
        """The Content-Security-Policy a host puts on this view's frame, built as the extension
        says: its restrictive default when the view declares no `csp`, else the declared
        origins and nothing more (no frames, no plugins, base URI 'self' unless declared)."""
        csp = self.csp
        if csp is None:
            return ("default-src 'none'; script-src 'self' 'unsafe-inline'; "
                    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                    "media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
                    "object-src 'none'; base-uri 'self'")

        res = csp.resource_domains
        directives = (
            ("default-src", ("'none'",)),
            ("script-src", ("'self'", "'unsafe-inline'", *res)),
            ("style-src", ("'self'", "'unsafe-inline'", *res)),
            ("connect-src", ("'self'", *csp.connect_domains)),
            ("img-src", ("'self'", "data:", *res)),
            ("font-src", ("'self'", *res)),
            ("media-src", ("'self'", "data:", *res)),
            ("frame-src", csp.frame_domains or ("'none'",)),
            ("object-src", ("'none'",)),
            ("base-uri", csp.base_uri_domains or ("'self'",)),
        )
        return "; ".join(" ".join((name, *sources)) for name, sources in directives)

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.csp is not None:
            out["csp"] = self.csp.wire()
        if self.permissions is not None:
            out["permissions"] = self.permissions.wire()
        if self.domain is not None:
            out["domain"] = self.domain
        if self.prefers_border is not None:
            out["prefersBorder"] = self.prefers_border
        return out

    @classmethod
    def parse(cls, value: Any) -> ViewMeta:
        """`_meta.ui` of a view resource as sent; fields the extension may add later are
        ignored, fields it defines must have its shape."""
        if not isinstance(value, Mapping):
            raise AppsError(f"_meta.ui must be an object, got {type(value).__name__}")
        csp = value.get("csp")
        permissions = value.get("permissions")
        return cls(csp=None if csp is None else Csp.parse(csp),
                   permissions=None if permissions is None else Permissions.parse(permissions),
                   domain=value.get("domain"), prefers_border=value.get("prefersBorder"))


def check_uri(uri: Any) -> str:
    if not isinstance(uri, str) or not uri.startswith(SCHEME) or len(uri) <= len(SCHEME) \
            or any(c.isspace() for c in uri) or "{" in uri:
        raise AppsError(f"a view's URI must be a fixed ui:// URI, got {uri!r}")
    return uri


def check_visibility(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise AppsError(f"visibility must be a list drawn from {list(VISIBILITIES)}, got {value!r}")
    found = tuple(value)
    if not found or not all(isinstance(item, str) for item in found) \
            or len(set(found)) != len(found) or not set(found) <= set(VISIBILITIES):
        raise AppsError(f"visibility must be a non-empty list drawn from {list(VISIBILITIES)} "
                        f"without repeats, got {list(found)!r}")
    return found


@dataclass(frozen=True)
class ToolLink:
    """A tool's `_meta.ui`: the view it renders in and who may call it (`visibility`:
    "model", the agent; "app", the view; both by default)."""

    resource_uri: str
    visibility: tuple[str, ...] = VISIBILITIES

    def __post_init__(self) -> None:
        check_uri(self.resource_uri)
        object.__setattr__(self, "visibility", check_visibility(self.visibility))

    @property
    def model_visible(self) -> bool:
        return "model" in self.visibility

    def wire(self) -> dict[str, Any]:
        """The tool's `_meta` entries: `ui` and the flat legacy key hosts still read."""
        ui: dict[str, Any] = {"resourceUri": self.resource_uri}
        if self.visibility != VISIBILITIES:
            ui["visibility"] = list(self.visibility)
        return {"ui": ui, LEGACY_RESOURCE_URI: self.resource_uri}

    @classmethod
    def parse(cls, meta: Any) -> ToolLink | None:
        """The link in a tool's `_meta` (None: the tool has no view). The nested form wins; a
        tool carrying only the flat legacy key is linked too."""
        if meta is None:
            return None
        if not isinstance(meta, Mapping):
            raise AppsError(f"a tool's _meta must be an object, got {type(meta).__name__}")
        ui = meta.get("ui")
        if ui is not None and not isinstance(ui, Mapping):
            raise AppsError(f"a tool's _meta.ui must be an object, got {type(ui).__name__}")
        uri = (ui or {}).get("resourceUri", meta.get(LEGACY_RESOURCE_URI))
        if uri is None:
            return None
        visibility = (ui or {}).get("visibility", VISIBILITIES)
        return cls(check_uri(uri), check_visibility(visibility))


def tool_visibility(meta: Any) -> tuple[str, ...]:
    """Who may call a tool, from its `_meta`: `_meta.ui.visibility` whether or not the tool has
    a view (a model-only tool need not name one), `("model", "app")` when it says nothing.
    What a host checks before sending a view's `tools/call`; `AppsError` for a wrong shape."""
    if meta is None:
        return VISIBILITIES
    if not isinstance(meta, Mapping):
        raise AppsError(f"a tool's _meta must be an object, got {type(meta).__name__}")
    ui = meta.get("ui")
    if ui is None:
        return VISIBILITIES
    if not isinstance(ui, Mapping):
        raise AppsError(f"a tool's _meta.ui must be an object, got {type(ui).__name__}")
    return check_visibility(ui.get("visibility", VISIBILITIES))


def supports(capabilities: Any) -> bool:
    """Whether a client's capabilities declare the extension with the HTML view type."""
    if not isinstance(capabilities, Mapping):
        return False
    extensions = capabilities.get("extensions")
    ui = extensions.get(EXTENSION) if isinstance(extensions, Mapping) else None
    if not isinstance(ui, Mapping):
        return False
    types = ui.get("mimeTypes")
    return isinstance(types, list) and any(same_mime(t) for t in types)


def same_mime(value: Any) -> bool:
    """`value` names the extension's HTML type (case and spaces around `;` aside)."""
    return isinstance(value, str) and value.replace(" ", "").lower() == MIME_TYPE
