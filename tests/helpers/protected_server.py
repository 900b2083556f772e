"""A protected rondo server for the live client auth tests: an ASGI wrapper that acts as an
OAuth resource server in front of `server.asgi()`.

    python tests/helpers/protected_server.py ISSUER PORT

It serves RFC 9728 metadata at the path-suffixed well-known URL, verifies JWT access tokens
with the authorization server's JWKS (PyJWT): issuer, expiry and the RFC 8707 audience (this
server's URL), and answers 401 (no/invalid token, `scope="mcp:use"`) or 403
`insufficient_scope` (the `write_note` tool needs `files:write` too). `POST /_control/forget`
makes it refuse every token issued so far (the client must refresh). Test use only.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import httpx
import jwt
import uvicorn

import rondo
from rondo import elicit

server = rondo.Server("protected", "1.0.0")
NOTE = elicit.form("Title?", {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]})


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Who the token says the caller is."""
    return f"sub={(ctx.auth or {}).get('sub')}"


@server.tool
def write_note(text: str, ctx: rondo.Context) -> str:
    """Needs files:write; asks for a title (an MRTR round) first."""
    answer = ctx.ask("title", NOTE)
    return f"wrote {answer.content['title']}: {text}" if answer.accepted else "no note"


def make_app(issuer: str, resource: str) -> Any:
    inner = server.asgi()
    keys = jwt.PyJWKSet.from_dict(httpx.get(f"{issuer}/jwks", timeout=10).json())
    prm_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    forgotten_before = [0.0]

    async def send_json(send: Any, status: int, body: Any, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), *headers]})
        await send({"type": "http.response.body", "body": data})

    def challenge(status: int, scope: str, error: str | None = None) -> list[tuple[bytes, bytes]]:
        parts = ([f'error="{error}"'] if error else []) + [f'scope="{scope}"', f'resource_metadata="{prm_url}"']
        return [(b"www-authenticate", ("Bearer " + ", ".join(parts)).encode())]

    def verify(header: str) -> dict[str, Any] | None:
        if not header.startswith("Bearer "):
            return None
        token = header[7:]
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            key = next(k for k in keys.keys if k.key_id == kid)
            claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=resource, issuer=issuer)
        except (jwt.PyJWTError, StopIteration):
            return None
        return claims if claims.get("iat", 0) > forgotten_before[0] else None

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await inner(scope, receive, send)
        path = scope["path"]
        if path == "/.well-known/oauth-protected-resource/mcp":
            return await send_json(send, 200, {"resource": resource, "authorization_servers": [issuer],
                                               "scopes_supported": ["mcp:use"]})
        if path == "/_control/forget":
            forgotten_before[0] = int(time.time())  # iat has whole seconds: wait one before new ones
            return await send_json(send, 200, {})
        headers = dict(scope["headers"])
        claims = verify(headers.get(b"authorization", b"").decode("latin-1"))
        if claims is None:
            return await send_json(send, 401, {"error": "invalid_token"}, challenge(401, "mcp:use"))
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        granted = str(claims.get("scope", "")).split()
        try:
            rpc = json.loads(body) if body else {}
        except ValueError:
            rpc = {}
        needs = ["mcp:use"]
        if isinstance(rpc, dict) and rpc.get("method") == "tools/call" and (rpc.get("params") or {}).get("name") == "write_note":
            needs = ["mcp:use", "files:write"]
        if not set(needs) <= set(granted):
            return await send_json(send, 403, {"error": "insufficient_scope"},
                                   challenge(403, " ".join(needs), "insufficient_scope"))
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await inner({**scope, "auth": {"sub": claims.get("sub"), "scopes": granted}}, replay, send)

    return app


if __name__ == "__main__":
    issuer, port = sys.argv[1], int(sys.argv[2])
    uvicorn.run(make_app(issuer, f"http://127.0.0.1:{port}/mcp"), host="127.0.0.1", port=port, log_level="warning")
