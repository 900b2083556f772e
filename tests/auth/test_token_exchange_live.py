"""RFC 8693 token exchange end to end against a real STS on loopback (tests/authserver: the
oauth2-mock-server-based AS, whose /token answers the token-exchange grant, verifying the
subject token with its own keys and minting RS256 JWTs with `aud` = the target and `act` = the
exchanging client).

1. A gateway-style tool calls a protected HTTP API (a loopback server that verifies the JWT's
   signature, issuer and audience) with an exchanged token; every outbound HTTP request of
   this process is recorded: the client's token goes out once, as `subject_token` in the
   body of the exchange request to the STS, and nowhere else (no header, no other host).
2. `rondo.proxy(upstream_auth=TokenExchange.upstream_auth(...))` in front of a protected
   rondo server: the relayed call carries the caller's exchanged token, the proxy's own listing
   its client-credentials token, and the client's token never reaches the upstream.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

import rondo
from rondo.auth import JwtVerifier, ResourceServer, TokenExchange
from rondo.auth.errors import InvalidToken
from rondo.client import ClientCredentials
from tests.authserver.fixture import AuthServer
from tests.helpers.loopback import free_port, served

pytestmark = pytest.mark.slow
SECRET = "gateway-secret-0123456789"
GATEWAY = "http://127.0.0.1:9/mcp"  # served in-process (httpx.ASGITransport): never a socket


class Outbound:
    """Every HTTP request this process sends over a socket (httpx's network transports)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[tuple[str, str, dict[str, str], bytes]] = []
        real_async = httpx.AsyncHTTPTransport.handle_async_request
        real_sync = httpx.HTTPTransport.handle_request
        sent = self.sent

        async def handle_async(transport: Any, request: httpx.Request) -> httpx.Response:
            body = await request.aread()
            sent.append((request.method, str(request.url), dict(request.headers), body))
            return await real_async(transport, request)

        def handle_sync(transport: Any, request: httpx.Request) -> httpx.Response:
            body = request.read()
            sent.append((request.method, str(request.url), dict(request.headers), body))
            return real_sync(transport, request)

        monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", handle_async)
        monkeypatch.setattr(httpx.HTTPTransport, "handle_request", handle_sync)

    def carrying(self, secret: str) -> list[tuple[str, str, dict[str, str], bytes]]:
        return [entry for entry in self.sent
                if secret in entry[1] or any(secret in v for v in entry[2].values())
                or secret.encode() in entry[3]]


def protected_api(issuer: str, audience: str, seen: list[dict[str, str]]) -> Any:
    """An HTTP API that accepts only this issuer's JWTs naming it in `aud` (RS256, JWKS)."""
    verifier = JwtVerifier(issuer, audience)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        seen.append(headers)
        status, body = 401, {"error": "invalid_token"}
        auth = headers.get("authorization", "")
        if auth.startswith("Bearer "):
            try:
                who = await verifier.verify(auth[7:])
                status, body = 200, {"sub": who.subject, "aud": who.claims["aud"],
                                     "act": who.claims.get("act")}
            except InvalidToken:
                pass
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})

    return app


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": arguments or {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}


def headers(name: str, token: str) -> dict[str, str]:
    return {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
            "Authorization": f"Bearer {token}"}


def claims(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def test_a_gateway_tool_calls_a_protected_api_with_an_exchanged_token_only(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with AuthServer.start() as authority:
        authority.wait_ready()
        port = free_port()
        api_url = f"http://127.0.0.1:{port}/"
        api_seen: list[dict[str, str]] = []
        authority.sts(clients={"gateway": SECRET}, targets=[api_url])
        exchange = TokenExchange(issuer=authority.issuer, client_id="gateway",
                                 client_secret=SECRET)  # the endpoint from its metadata
        server = rondo.Server("gateway", state=None, auth=ResourceServer(
            resource=GATEWAY, issuer=authority.issuer, required_scopes=["mcp"]))

        @server.tool
        async def profile(ctx: rondo.Context, target: str = api_url) -> dict[str, Any]:
            """The caller's profile at the accounts API."""
            sent = await exchange.headers(ctx, resource=target)
            async with httpx.AsyncClient(timeout=10) as http:
                answer = await http.get(target + "profile", headers=sent)
            answer.raise_for_status()
            return dict(answer.json())

        client_token = authority.mint(aud=GATEWAY, scope="mcp files:read")
        revoked_token = authority.mint(aud=GATEWAY, scope="mcp", sub="mallory")
        authority.revoke(revoked_token)
        outbound = Outbound(monkeypatch)

        async def go() -> list[dict[str, Any]]:
            transport = httpx.ASGITransport(app=server.asgi(allowed_hosts=None))
            results = []
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as http:
                for name, arguments, token in (
                        ("profile", {}, client_token), ("profile", {}, client_token),
                        ("profile", {"target": "http://127.0.0.1:1/"}, client_token),
                        ("profile", {}, revoked_token)):
                    answer = await http.post("/mcp", json=call(name, arguments),
                                             headers=headers(name, token))
                    assert answer.status_code == 200, answer.text
                    results.append(answer.json()["result"])
            return results

        with served(protected_api(authority.issuer, api_url, api_seen), port=port):
            first, second, elsewhere, revoked = asyncio.run(go())
        exchanges = authority.exchanges()
    # The API accepted the exchanged token: its audience, the user, the gateway as actor.
    for result in (first, second):
        assert result["structuredContent"] == {"sub": "alice", "aud": api_url,
                                               "act": {"sub": "gateway"}}
    assert exchanges == 3  # cached for the second call; then one refused target, one revoked
    assert elsewhere["isError"] and "invalid_target" in elsewhere["content"][0]["text"]
    assert revoked["isError"] and "invalid_grant" in revoked["content"][0]["text"]
    # The client's token left this process once per exchange, to the STS's token endpoint, in
    # the form body as subject_token, never in a header.
    carrying = outbound.carrying(client_token)
    assert [(method, url) for method, url, _, _ in carrying] == [
        ("POST", f"{authority.issuer}/token")] * 2
    for _, _, sent_headers, body in carrying:
        assert parse_qs(body.decode())["subject_token"] == [client_token]
        assert not any(client_token in value for value in sent_headers.values())
    assert len(api_seen) == 2
    for seen in api_seen:
        assert client_token not in json.dumps(seen)
        assert claims(seen["authorization"][7:])["aud"] == api_url
    for text in (caplog.text, json.dumps([first, second, elsewhere, revoked])):
        assert client_token not in text and SECRET not in text and revoked_token not in text


def test_a_proxy_relays_each_call_with_the_callers_exchanged_token(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with AuthServer.start() as authority:
        authority.wait_ready()
        port = free_port()
        up_url = f"http://127.0.0.1:{port}/mcp"
        authority.sts(clients={"gateway": SECRET}, targets=[up_url])
        upstream = rondo.Server("tools", state=None, auth=ResourceServer(
            resource=up_url, issuer=authority.issuer))

        @upstream.tool
        def whoami(ctx: rondo.Context) -> str:
            """Who the upstream's verified token names, and who acts for them."""
            act = ctx.auth.claims.get("act") or {}
            return f"{ctx.auth.subject} via {act.get('sub')}"

        seen: list[str] = []
        inner = upstream.asgi(allowed_hosts=None)

        async def recording(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append(dict(scope["headers"]).get(b"authorization", b"").decode())
            await inner(scope, receive, send)

        exchange = TokenExchange(token_endpoint=f"{authority.issuer}/token", client_id="gateway",
                                 client_secret=SECRET)
        own = ClientCredentials("gateway", client_secret=SECRET,
                                token_endpoint_auth_method="client_secret_post")
        front = rondo.proxy(
            up_url, upstream_auth=exchange.upstream_auth(resource=up_url, otherwise=own),
            auth=ResourceServer(resource=GATEWAY, issuer=authority.issuer),
            state=rondo.StatePolicy(secret=b"a proxy state secret of 32 bytes!"))
        client_token = authority.mint(aud=GATEWAY, scope="mcp")
        revoked_token = authority.mint(aud=GATEWAY, scope="mcp", sub="mallory")
        authority.revoke(revoked_token)
        outbound = Outbound(monkeypatch)

        async def go() -> list[str]:
            async with front.started():
                listed = len(seen)
                transport = httpx.ASGITransport(app=front.asgi(allowed_hosts=None))
                async with httpx.AsyncClient(transport=transport,
                                             base_url="http://127.0.0.1:9") as http:
                    texts = []
                    for _ in range(2):
                        answer = await http.post("/mcp", json=call("whoami"),
                                                 headers=headers("whoami", client_token))
                        texts.append(answer.json()["result"]["content"][0]["text"])
                    # The STS refuses this caller's token: the relay never happens, and the
                    # client reads why (no token in it).
                    before = len(seen)
                    refused = (await http.post("/mcp", json=call("whoami"),
                                               headers=headers("whoami", revoked_token))).json()
                    assert refused["result"]["isError"] is True
                    assert "refused the exchange (invalid_grant)" in refused["result"]["content"][0]["text"]
                    assert revoked_token not in json.dumps(refused) and len(seen) == before
                assert listed >= 1 and len(seen) > listed
                return texts

        with served(recording, port=port):
            texts = asyncio.run(go())
        exchanges = authority.exchanges()
    assert texts == ["alice via gateway"] * 2
    assert exchanges == 2  # the second relay used the cached token; then the refused one
    assert client_token not in json.dumps(seen)
    relayed = [claims(h[7:]) for h in seen if h.startswith("Bearer ") and "act" in claims(h[7:])]
    assert len(relayed) == 2 and {c["aud"] for c in relayed} == {up_url}
    assert {c["sub"] for c in relayed} == {"alice"}
    own_tokens = [claims(h[7:]) for h in seen if h.startswith("Bearer ") and "act" not in claims(h[7:])]
    assert own_tokens and all(c.get("client_id") == "gateway" and "sub" not in c
                              for c in own_tokens)
    # Out of this process, the client's token went only to the STS, as subject_token.
    assert {(m, u) for m, u, _, _ in outbound.carrying(client_token)} == {
        ("POST", f"{authority.issuer}/token")}
