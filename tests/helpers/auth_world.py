"""An in-memory protected MCP server and authorization server for the client auth unit tests,
as one httpx.MockTransport. Every knob makes one thing misbehave; `log` records every request
(method, URL, form or JSON body, headers) so tests assert on what the client really sent."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from tests.helpers.asgi_body import read_body

MCP = "https://mcp.test/mcp"
ISSUER = "https://as.test"
REDIRECT = "http://127.0.0.1:4000/callback"


@dataclass
class Seen:
    method: str
    url: str
    form: dict[str, str]
    body: Any
    headers: httpx.Headers


AS_PATHS = ("/.well-known/oauth-authorization-server", "/authorize", "/token", "/register")


@dataclass
class World:
    issuer: str = ISSUER
    resource: str = MCP  # what the resource metadata claims
    mcp_url: str = MCP  # where the protected server really is
    scopes_supported: list[str] | None = None  # in the resource metadata
    as_scopes: list[str] | None = None  # in the authorization server metadata
    challenge_scope: str | None = "mcp:use"
    tool_scope: str | None = None  # scope a tools/call needs (403 insufficient_scope without it)
    metadata_issuer: str | None = None  # override the issuer the AS metadata claims
    iss_supported: bool = True
    iss_value: str | None = "correct"  # "correct", None (omit) or a literal value
    registration: bool = True
    cimd: bool = False
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    refresh: bool = True
    expires_in: int = 3600
    always_401: bool = False
    prm_huge: bool = False
    prm_slow: bool = False
    prm_in_header: bool = True
    dpop: bool = False  # the AS binds tokens to DPoP proofs; the server then wants the DPoP scheme
    dpop_nonce: str | None = None  # both servers demand this nonce in proofs (RFC 9449 §8, §9)
    dpop_tokens: set[str] = field(default_factory=set)
    log: list[Seen] = field(default_factory=list)
    valid: dict[str, list[str]] = field(default_factory=dict)  # access token -> scopes
    refresh_tokens: dict[str, list[str]] = field(default_factory=dict)
    codes: dict[str, tuple[str, str, list[str], str]] = field(default_factory=dict)
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def seen(self, path: str) -> list[Seen]:
        return [s for s in self.log if urlsplit(s.url).path == path]

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()} if b"=" in body and not body.startswith(b"{") else {}
        parsed = json.loads(body) if body.startswith(b"{") else None
        self.log.append(Seen(request.method, str(request.url), form, parsed, httpx.Headers(request.headers)))
        url = request.url
        if url.host == "idp.test":  # an enterprise IdP: RFC 8693 token exchange for an ID-JAG
            ok = form.get("subject_token") == "user-id-token" and form.get("audience") == self.issuer
            return httpx.Response(200, json={"access_token": "id-jag-for-" + form.get("resource", ""),
                                             "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                                             "token_type": "N_A"}) if ok else httpx.Response(400, json={"error": "invalid_grant"})
        if url.path in AS_PATHS:  # routed by path, so both can share one origin on loopback
            return await self.auth_server(request, url, form, parsed)
        return self.resource_server(request, parsed)

    # -- the protected MCP server ------------------------------------------------------------

    def challenge(self, status: int, scope: str | None, error: str | None = None) -> httpx.Response:
        parts = []
        if error:
            parts.append(f'error="{error}"')
        if scope:
            parts.append(f'scope="{scope}"')
        if self.prm_in_header:
            origin = self.mcp_url.rsplit("/mcp", 1)[0]
            parts.append(f'resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"')
        return httpx.Response(status, headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)},
                              json={"error": error or "invalid_token"})

    def resource_server(self, request: httpx.Request, message: Any) -> httpx.Response:
        path = request.url.path
        if path.startswith("/.well-known/oauth-protected-resource"):
            if path != "/.well-known/oauth-protected-resource/mcp":
                return httpx.Response(404)
            if self.prm_huge:
                return httpx.Response(200, content=b'{"resource": "' + b"x" * 2_000_000 + b'"}')
            if self.prm_slow:
                return httpx.Response(200, content=_drip())
            doc: dict[str, Any] = {"resource": self.resource, "authorization_servers": [self.issuer]}
            if self.scopes_supported is not None:
                doc["scopes_supported"] = self.scopes_supported
            return httpx.Response(200, json=doc)
        auth = request.headers.get("authorization", "")
        if self.dpop and auth.startswith("DPoP "):
            token = auth.removeprefix("DPoP ")
            claims = check_proof(request, token)
            if claims is None or token not in self.dpop_tokens:
                return self.challenge(401, self.challenge_scope)
            if self.dpop_nonce and claims.get("nonce") != self.dpop_nonce:
                return httpx.Response(401, headers={"WWW-Authenticate": 'DPoP error="use_dpop_nonce"',
                                                    "DPoP-Nonce": self.dpop_nonce})
            auth = "Bearer " + token
        token = auth.removeprefix("Bearer ")
        if token in self.dpop_tokens and not request.headers.get("dpop"):
            return self.challenge(401, self.challenge_scope)  # a bound token without its proof
        if self.always_401 or not auth.startswith("Bearer ") or token not in self.valid:
            return self.challenge(401, self.challenge_scope)
        if self.tool_scope and message and message.get("method") == "tools/call" and self.tool_scope not in self.valid[token]:
            return self.challenge(403, self.tool_scope, "insufficient_scope")
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": (message or {}).get("id"),
                                         "result": {"ok": True, "scopes": self.valid[token]}})

    # -- the authorization server ------------------------------------------------------------

    async def auth_server(self, request: httpx.Request, url: httpx.URL, form: dict[str, str], body: Any) -> httpx.Response:
        path = url.path
        if path == "/.well-known/oauth-authorization-server":
            doc: dict[str, Any] = {
                "issuer": self.metadata_issuer or self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": self.auth_methods,
                "grant_types_supported": ["authorization_code", "client_credentials"] + (["refresh_token"] if self.refresh else []),
                "authorization_response_iss_parameter_supported": self.iss_supported,
                "client_id_metadata_document_supported": self.cimd,
            }
            if self.as_scopes is not None:
                doc["scopes_supported"] = self.as_scopes
            if self.dpop:
                doc["dpop_signing_alg_values_supported"] = ["ES256"]
            if self.registration:
                doc["registration_endpoint"] = f"{self.issuer}/register"
            return httpx.Response(200, json=doc)
        if path == "/register" and self.registration:
            n = next(self.counter)
            out = {"client_id": f"client-{n}", **({"client_secret": f"secret-{n}"} if self.auth_methods != ["none"] else {})}
            return httpx.Response(201, json={**body, **out})
        if path == "/authorize":
            q = dict(url.params)
            code = f"code-{next(self.counter)}"
            self.codes[code] = (q["code_challenge"], q["resource"], (q.get("scope") or "").split(), q["client_id"])
            back = {"code": code, "state": q["state"]}
            if self.iss_value == "correct":
                back["iss"] = self.issuer
            elif self.iss_value is not None:
                back["iss"] = self.iss_value
            return httpx.Response(302, headers={"Location": q["redirect_uri"] + "?" + urlencode(back)})
        if path == "/token":
            grant = form.get("grant_type")
            proof = check_proof(request, None) if self.dpop and request.headers.get("dpop") else None
            if proof is not None and self.dpop_nonce and proof.get("nonce") != self.dpop_nonce:
                return httpx.Response(400, headers={"DPoP-Nonce": self.dpop_nonce}, json={"error": "use_dpop_nonce"})
            if grant == "authorization_code":
                challenge, resource, scopes, _client = self.codes.pop(form.get("code", ""), ("", "", [], ""))
                digest = base64.urlsafe_b64encode(hashlib.sha256(form.get("code_verifier", "").encode()).digest()).rstrip(b"=").decode()
                if digest != challenge or form.get("resource") != resource:
                    return httpx.Response(400, json={"error": "invalid_grant"})
            elif grant == "refresh_token":
                scopes = self.refresh_tokens.get(form.get("refresh_token", ""), None)  # type: ignore[assignment]
                if scopes is None:
                    return httpx.Response(400, json={"error": "invalid_grant"})
            elif grant == "client_credentials":
                scopes = (form.get("scope") or "").split()
            elif grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                if form.get("assertion") not in ("good-jwt", "id-jag-for-" + self.resource):
                    return httpx.Response(400, json={"error": "invalid_grant"})
                scopes = (form.get("scope") or "").split()
            else:
                return httpx.Response(400, json={"error": "unsupported_grant_type"})
            n = next(self.counter)
            access = f"access-{n}"
            self.valid[access] = scopes
            answer: dict[str, Any] = {"access_token": access, "token_type": "DPoP" if proof else "Bearer",
                                      "expires_in": self.expires_in, "scope": " ".join(scopes)}
            if proof is not None:
                self.dpop_tokens.add(access)
            if self.refresh and grant in ("authorization_code", "refresh_token"):
                answer["refresh_token"] = f"refresh-{n}"
                self.refresh_tokens[f"refresh-{n}"] = scopes
            return httpx.Response(200, json=answer)
        return httpx.Response(404)


def check_proof(request: httpx.Request, token: str | None) -> dict[str, Any] | None:
    """A DPoP proof's claims when it is valid for this request (and token), else None."""
    import jwt

    proof = request.headers.get("dpop", "")
    try:
        header = jwt.get_unverified_header(proof)
        key = jwt.PyJWK(header["jwk"], algorithm="ES256")
        claims = jwt.decode(proof, key.key, algorithms=["ES256"])
    except (jwt.PyJWTError, KeyError):
        return None
    url = request.url
    if header.get("typ") != "dpop+jwt" or "d" in header["jwk"] or claims.get("htm") != request.method:
        return None
    if claims.get("htu") != f"{url.scheme}://{url.host}{url.path}" or not claims.get("jti"):
        return None
    if token is not None:
        ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        if claims.get("ath") != ath:
            return None
    return dict(claims)


async def _drip() -> AsyncIterator[bytes]:
    for _ in range(30):  # one byte a second, far longer than any client should wait
        yield b" "
        await asyncio.sleep(1)


def asgi(world: World) -> Any:
    """The same world as an ASGI app, for real sockets (uvicorn on loopback)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        host = dict(scope["headers"]).get(b"host", b"").decode()
        query = ("?" + scope["query_string"].decode()) if scope["query_string"] else ""
        request = httpx.Request(scope["method"], f"http://{host}{scope['path']}{query}",
                                headers=[(k.decode(), v.decode()) for k, v in scope["headers"]], content=body)
        response = await world.handle(request)
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": [(k.encode(), v.encode()) for k, v in response.headers.items()
                                if k.lower() not in ("content-length", "transfer-encoding")]})
        async for chunk in response.aiter_bytes():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


def rpc(method: str = "tools/list", id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {}}
