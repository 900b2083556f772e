# file: docs/snippets/auth_principal.py
import asyncio
import time

import httpx

import rondo
from rondo import elicit
from rondo.auth import Principal, ResourceServer, principal_of


class DemoVerifier:
    cache_ttl = 60.0

    async def verify(self, token: str) -> Principal:  # the token is the user's name, here
        return Principal.from_claims({"sub": token, "iss": "https://sso.example.com",
                                      "client_id": "notes-app", "exp": time.time() + 60})


server = rondo.Server(
    "notes",
    auth=ResourceServer(resource="https://mcp.example.com/mcp", issuer="https://sso.example.com",
                        verifier=DemoVerifier()),
    state=rondo.StatePolicy(secret=b"a shared secret of 32 bytes or more!"),
)


@server.tool
def share(note: str, ctx: rondo.Context) -> str:
    """Share a note after the user confirms."""
    who = ctx.auth  # a rondo.auth.Principal: subject, client_id, scopes, issuer, claims
    answer = ctx.ask("ok", elicit.form(f"Share {note!r}, {who.subject}?", {
        "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}))
    assert principal_of(ctx) == who.binding  # what state (and, later, tasks) are bound to
    return f"{who.subject} shared {note}" if answer.content["ok"] else "kept"


def message(**extra: object) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "share", "arguments": {"note": "n1"}, **extra,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}}}


async def main() -> None:
    transport = httpx.ASGITransport(app=server.asgi(allowed_hosts=None))
    base = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "share"}
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as http:
        first = await http.post("/mcp", json=message(), headers={**base, "Authorization": "Bearer alice"})
        state = first.json()["result"]["requestState"]
        retry = message(requestState=state, inputResponses={"ok": {"action": "accept", "content": {"ok": True}}})
        # The state was sealed for alice: bob's token cannot use it (the usual -32602).
        stolen = await http.post("/mcp", json=retry, headers={**base, "Authorization": "Bearer bob"})
        assert stolen.status_code == 400 and stolen.json()["error"]["code"] == -32602
        done = await http.post("/mcp", json=retry, headers={**base, "Authorization": "Bearer alice"})
        assert done.json()["result"]["content"][0]["text"] == "alice shared n1"


asyncio.run(main())
