# file: docs/snippets/auth_exchange.py
import asyncio
import time
from urllib.parse import parse_qs

import httpx

import rondo
from rondo.auth import ExchangeRefused, Principal, ResourceServer, TokenExchange

API = "https://api.example.com/"


class DemoVerifier:  # stands in for your authorization server's tokens
    cache_ttl = 60.0

    async def verify(self, token: str) -> Principal:
        return Principal.from_claims({"sub": "alice", "iss": "https://sso.example.com",
                                      "scope": "mcp", "exp": time.time() + 600})


def sts(request: httpx.Request) -> httpx.Response:  # the STS, played in-process for this page
    form = parse_qs(request.content.decode())
    if form["resource"] != [API]:
        return httpx.Response(400, json={"error": "invalid_target"})
    return httpx.Response(200, json={"access_token": "for-the-api", "token_type": "Bearer",
                                     "issued_token_type": form["requested_token_type"][0],
                                     "expires_in": 300})


exchange = TokenExchange(
    token_endpoint="https://sso.example.com/token",  # or issuer=... (found in its metadata)
    client_id="gateway", client_secret="from-your-vault",  # this server's client at the STS
    transport=httpx.MockTransport(sts),  # (this page only: a real STS needs no transport)
)
server = rondo.Server("gateway", state=None, auth=ResourceServer(
    resource="https://mcp.example.com/mcp", issuer="https://sso.example.com",
    verifier=DemoVerifier()))
seen_by_api: list[str] = []


def api(request: httpx.Request) -> httpx.Response:  # the upstream API
    seen_by_api.append(request.headers["authorization"])
    return httpx.Response(200, json={"balance": 42})


@server.tool
async def balance(ctx: rondo.Context) -> int:
    """Ask the accounts API, as the caller, with a token whose audience is the API."""
    headers = await exchange.headers(ctx, resource=API)  # cached until shortly before expiry
    async with httpx.AsyncClient(transport=httpx.MockTransport(api)) as http:
        answer = await http.get(API + "balance", headers=headers)
    return int(answer.json()["balance"])


@server.tool
async def elsewhere(ctx: rondo.Context) -> str:
    """A target the STS refuses: ExchangeRefused, whose message is safe to show."""
    try:
        await exchange.token(ctx, resource="https://other.example.com/")
    except ExchangeRefused as exc:
        return f"refused: {exc.error}"
    return "exchanged"


def call(name: str) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}


async def main() -> None:
    transport = httpx.ASGITransport(app=server.asgi(allowed_hosts=None))
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as http:
        for name, expected in (("balance", "42"), ("balance", "42"), ("elsewhere", "refused: invalid_target")):
            answer = await http.post("/mcp", json=call(name), headers={
                "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                "Mcp-Name": name, "Authorization": "Bearer the-clients-token"})
            assert answer.json()["result"]["content"][0]["text"] == expected
    # The API saw the exchanged token, twice, and never the client's; one exchange was cached.
    assert seen_by_api == ["Bearer for-the-api", "Bearer for-the-api"]
    assert exchange.exchanges == 2  # balance once (then cached), elsewhere once


asyncio.run(main())
