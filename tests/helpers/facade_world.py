"""A facade in front of a scripted identity provider, all in process, for the facade's tests.

    world = World()                         # a rondo server with the facade, a fake provider
    client = await world.register()         # RFC 7591
    tokens = await world.sign_in(client)    # /authorize, consent, provider, /callback, /token
    await world.call("whoami", tokens["access_token"])

The provider is an `httpx.MockTransport` handler: `world.provider.mode` makes it go down
("down"), hang ("slow"), or answer garbage ("garbage"); `world.clock` is the facade's clock.
`run(coro)` runs a test's coroutine with a 30 s bound; `FakeHttp` stands in for the facade's
bounded HTTP to the provider (`UpstreamHttp`) where a preset's identity reader is tested alone.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

import rondo
from rondo.auth.facade import Facade, MemoryStore, Upstream, UpstreamError

ISSUER = "https://mcp.example.com"
RESOURCE = "https://mcp.example.com/mcp"
SECRET = b"a facade test secret of at least 32 bytes!"
UPSTREAM_SECRET = "upstream-client-secret-XYZ"


def run(coro: Any) -> Any:
    """A test's coroutine, run to its end within 30 s (a hang fails instead of stalling)."""
    return asyncio.run(asyncio.wait_for(coro, 30))


class FakeHttp:
    """The facade's bounded HTTP (`UpstreamHttp`), answering from a table of URL -> JSON;
    records each GET as (url, headers). A URL not in the table answers 404."""

    def __init__(self, docs: dict[str, Any]) -> None:
        self.docs = docs
        self.gets: list[tuple[str, dict[str, str]]] = []

    async def get_json(self, url: str, *, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        self.gets.append((url, dict(headers or {})))
        if url not in self.docs:
            raise UpstreamError(f"{url} answered HTTP 404")
        if not isinstance(self.docs[url], dict):
            raise UpstreamError(f"{url} sent JSON that is not an object")
        return dict(self.docs[url])

    async def get_json_array(self, url: str, *,
                             headers: Mapping[str, str] | None = None) -> list[Any]:
        self.gets.append((url, dict(headers or {})))
        if url not in self.docs:
            raise UpstreamError(f"{url} answered HTTP 404")
        if not isinstance(self.docs[url], list):
            raise UpstreamError(f"{url} sent JSON that is not an array")
        return list(self.docs[url])


class Clock:
    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Provider:
    """Scripted provider: hands out codes for `next_user`, exchanges them, answers userinfo."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.next_user = "alice"
        self.codes: dict[str, str] = {}
        self.access: dict[str, str] = {}
        self.refreshes = 0
        self.token_calls = 0
        self.expires_in = 3600
        self.seen_forms: list[dict[str, str]] = []
        self.revoked: list[str] = []

    def code_for(self, params: dict[str, str]) -> str:
        code = "upcode-" + os.urandom(8).hex()
        self.codes[code] = self.next_user
        return code

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if self.mode == "down":
            raise httpx.ConnectError("refused", request=request)
        if self.mode == "slow":
            await asyncio.sleep(30)
        if self.mode == "garbage":
            return httpx.Response(200, content=b"<html>not json" * 10)
        if self.mode == "huge":
            return httpx.Response(200, content=b'{"a":"' + b"x" * (1024 * 1024) + b'"}')
        path = request.url.path
        if self.mode == "userinfo-500" and path == "/userinfo":
            return httpx.Response(500, json={"error": "server_error"})
        if self.mode == "no-access-token" and path == "/token":
            return httpx.Response(200, json={"token_type": "Bearer"})
        if self.mode == "error-200" and path == "/token":  # GitHub answers errors with 200
            return httpx.Response(200, json={"error": "bad_verification_code"})
        if self.mode == "not-an-object" and path == "/token":
            return httpx.Response(200, json=["access_token"])
        if path == "/token":
            self.token_calls += 1
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            self.seen_forms.append(form)
            auth = request.headers.get("authorization", "")
            expected = base64.b64encode(f"facade-client:{UPSTREAM_SECRET}".encode()).decode()
            if auth != f"Basic {expected}":
                return httpx.Response(401, json={"error": "invalid_client"})
            if form.get("grant_type") == "refresh_token":
                self.refreshes += 1
                user = form.get("refresh_token", "").removeprefix("uprt-").split("-")[0]
            else:
                user = self.codes.pop(form.get("code", ""), "")
            if not user:
                return httpx.Response(400, json={"error": "invalid_grant"})
            token = f"upat-{user}-{os.urandom(6).hex()}"
            self.access[token] = user
            return httpx.Response(200, json={"access_token": token, "token_type": "Bearer",
                                             "expires_in": self.expires_in,
                                             "refresh_token": f"uprt-{user}-{os.urandom(4).hex()}"})
        if path == "/revoke":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            self.revoked.append(form.get("token", ""))
            return httpx.Response(200)  # RFC 7009: an empty 200
        if path == "/userinfo":
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            user = self.access.get(token)
            if user is None:
                return httpx.Response(401, json={"error": "invalid_token"})
            return httpx.Response(200, json={"sub": user, "name": user.title(),
                                             "email": f"{user}@example.com"})
        return httpx.Response(404)


def upstream() -> Upstream:
    return Upstream(client_id="facade-client", client_secret=UPSTREAM_SECRET,
                    authorize_url="https://idp.example.com/authorize",
                    token_url="https://idp.example.com/token",
                    userinfo_url="https://idp.example.com/userinfo",
                    revocation_url="https://idp.example.com/revoke",
                    scopes=("openid", "profile", "email"), timeout=1.0, name="Example IdP")


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class World:
    def __init__(self, **options: Any) -> None:
        self.clock = Clock()
        self.provider = Provider()
        options.setdefault("store", MemoryStore(clock=self.clock))
        self.facade = Facade(issuer=ISSUER, resource=RESOURCE, upstream=upstream(), secret=SECRET,
                             scopes_supported=["mcp"], clock=self.clock,
                             upstream_transport=httpx.MockTransport(self.provider.handle),
                             **options)
        self.server = rondo.Server("facaded", auth=self.facade.resource_server(), state=rondo.StatePolicy(
            secret=b"a shared secret of 32 bytes or more!"))
        facade = self.facade

        @self.server.tool
        def whoami(ctx: rondo.Context) -> str:
            """Who signed in upstream."""
            return f"{ctx.auth.subject} {ctx.auth.claims['upstream']['email']}"

        @self.server.tool
        async def upstream_token(ctx: rondo.Context) -> str:
            """The provider's access token (only the test provider's, never a client's)."""
            return await facade.upstream_token(ctx.auth)

        @self.server.tool
        def confirm(ctx: rondo.Context) -> str:
            """An MRTR round: ask, then answer."""
            answer = ctx.ask("ok", rondo.elicit.form("Sure?", {
                "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}))
            return f"{ctx.auth.subject} said {answer.content['ok']}"

        self.app = self.server.asgi(allowed_hosts=None)
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app, client=("10.0.0.7", 5000)),
                                      base_url=ISSUER)

    async def register(self, **over: Any) -> dict[str, Any]:
        body = {"redirect_uris": ["http://127.0.0.1:9999/callback"], "client_name": "Test Client",
                "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                **over}
        response = await self.http.post("/register", json=body)
        assert response.status_code == 201, response.text
        return dict(response.json())

    def authorize_params(self, client: dict[str, Any], verifier: str, **over: str) -> dict[str, str]:
        return {"response_type": "code", "client_id": client["client_id"],
                "redirect_uri": client["redirect_uris"][0], "code_challenge": s256(verifier),
                "code_challenge_method": "S256", "resource": RESOURCE, "state": "client-state-1",
                "scope": "mcp offline_access", **over}

    async def consent(self, page: httpx.Response, decision: str = "approve",
                      browser: httpx.AsyncClient | None = None) -> httpx.Response:
        assert page.status_code == 200 and "Allow access?" in page.text, page.text
        fields = dict(re.findall(r'name="(request|csrf)" value="([^"]+)"', page.text))
        fields = {k: html.unescape(v) for k, v in fields.items()}
        return await (browser or self.http).post("/consent", data={**fields, "decision": decision})

    async def provider_signs_in(self, upstream_redirect: httpx.Response,
                                browser: httpx.AsyncClient | None = None) -> httpx.Response:
        """The browser at the provider: it signs the user in and comes back to /callback."""
        assert upstream_redirect.status_code == 302, upstream_redirect.text
        location = upstream_redirect.headers["location"]
        assert location.startswith("https://idp.example.com/authorize?")
        params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        code = self.provider.code_for(params)
        return await (browser or self.http).get("/callback", params={"code": code, "state": params["state"]})

    async def code_for(self, client: dict[str, Any], verifier: str, **over: str) -> str:
        page = await self.http.get("/authorize", params=self.authorize_params(client, verifier, **over))
        if page.status_code == 200:
            page = await self.consent(page)
        back = await self.provider_signs_in(page)
        assert back.status_code == 302, back.text
        query = parse_qs(urlsplit(back.headers["location"]).query)
        assert query["state"] == ["client-state-1"] and query["iss"] == [ISSUER], query
        return query["code"][0]

    async def sign_in(self, client: dict[str, Any] | None = None) -> dict[str, Any]:
        client = client or await self.register()
        verifier = "v" * 20 + os.urandom(16).hex()
        code = await self.code_for(client, verifier)
        response = await self.token({"grant_type": "authorization_code", "code": code,
                                     "redirect_uri": client["redirect_uris"][0],
                                     "code_verifier": verifier, "client_id": client["client_id"],
                                     "resource": RESOURCE})
        assert response.status_code == 200, response.text
        return {**response.json(), "client": client}

    async def token(self, form: dict[str, str]) -> httpx.Response:
        return await self.http.post("/token", data=form)

    async def refresh(self, tokens: dict[str, Any], refresh_token: str | None = None) -> httpx.Response:
        return await self.token({"grant_type": "refresh_token", "client_id": tokens["client"]["client_id"],
                                 "refresh_token": refresh_token or tokens["refresh_token"]})

    async def call(self, name: str, access_token: str, **extra: Any) -> httpx.Response:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": name, "arguments": {}, **extra,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}}}
        return await self.http.post("/mcp", json=message, headers={
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
            "Authorization": f"Bearer {access_token}"})
