"""rondo.auth.facade: an OAuth authorization server in front of an identity provider that has
no dynamic client registration (GitHub, Google, Entra ID, Auth0, a company Keycloak).

MCP clients register with the facade (RFC 7591, or a client ID metadata document), consent on
its own page, and get its own short-lived tokens; the facade signs the user in upstream with
one fixed registration (`Upstream`). Nothing here is imported unless a server configures it.
See docs/auth.md, "Sign-in through your identity provider".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...wire.lazy import lazy_exports

_EXPORTS = {
    "Upstream": "rondo.auth.facade.upstream",
    "UpstreamTokens": "rondo.auth.facade.upstream",
    "Identity": "rondo.auth.facade.upstream",
    "IdentityReader": "rondo.auth.facade.upstream",
    "UpstreamHttp": "rondo.auth.facade.upstream",
    "UpstreamError": "rondo.auth.facade.upstream",
    "userinfo_identity": "rondo.auth.facade.upstream",
    "Facade": "rondo.auth.facade.facade",
    "FacadeVerifier": "rondo.auth.facade.facade",
    "FleetMisconfigured": "rondo.auth.facade.facade",
    "Store": "rondo.auth.facade.store",
    "MemoryStore": "rondo.auth.facade.store",
    "FileStore": "rondo.auth.facade.store",
    "StoreFull": "rondo.auth.facade.store",
    "RedisStore": "rondo.auth.facade.redis_store",
}

if TYPE_CHECKING:
    from .facade import Facade as Facade
    from .facade import FacadeVerifier as FacadeVerifier
    from .facade import FleetMisconfigured as FleetMisconfigured
    from .redis_store import RedisStore as RedisStore
    from .store import FileStore as FileStore
    from .store import MemoryStore as MemoryStore
    from .store import Store as Store
    from .store import StoreFull as StoreFull
    from .upstream import Identity as Identity
    from .upstream import IdentityReader as IdentityReader
    from .upstream import Upstream as Upstream
    from .upstream import UpstreamError as UpstreamError
    from .upstream import UpstreamHttp as UpstreamHttp
    from .upstream import UpstreamTokens as UpstreamTokens
    from .upstream import userinfo_identity as userinfo_identity

__getattr__ = lazy_exports("rondo.auth.facade", globals(), _EXPORTS)

__all__ = list(_EXPORTS)
