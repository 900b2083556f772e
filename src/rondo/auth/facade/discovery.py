"""What the facade publishes about itself: the RFC 8414 authorization server metadata (at both
well-known paths) and the JWKS with the public half of the key that signs its access tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..scopes import OFFLINE
from .access_tokens import current_signer
from .clients import GRANT_CODE, GRANT_REFRESH
from .web import Receive, Scope, Send, send_json

if TYPE_CHECKING:
    from .facade import Facade

_PUBLIC = [(b"cache-control", b"public, max-age=300"), (b"access-control-allow-origin", b"*")]


def metadata(facade: Facade) -> dict[str, Any]:
    """The RFC 8414 authorization server metadata."""
    doc: dict[str, Any] = {
        "issuer": facade.issuer,
        "authorization_endpoint": facade.issuer + "/authorize",
        "token_endpoint": facade.issuer + "/token",
        "registration_endpoint": facade.issuer + "/register",
        "revocation_endpoint": facade.issuer + "/revoke",
        "jwks_uri": facade.issuer + "/jwks",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": [GRANT_CODE, GRANT_REFRESH],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "authorization_response_iss_parameter_supported": True,
        "scopes_supported": [*facade.scopes_supported, OFFLINE],
    }
    if facade.cimd is not None:
        doc["client_id_metadata_document_supported"] = True
    return doc


async def metadata_endpoint(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] not in ("GET", "HEAD"):
        await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"GET")])
        return
    await send_json(send, 200, facade.metadata(), _PUBLIC)


async def jwks_endpoint(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    signer = await current_signer(facade)  # a store failure is a 503 (see Facade.__call__)
    await send_json(send, 200, {"keys": [signer.jwk]}, _PUBLIC)
