"""Shared pieces of the auth tests: a protected server, and requests through its ASGI app."""

from __future__ import annotations

from typing import Any

import rondo
from rondo import elicit
from tests.helpers.helpers_core import asgi_client, http_headers, request

RESOURCE = "http://127.0.0.1:8000/mcp"
METADATA_URL = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


def protected_server(auth: Any, *, state: Any = None) -> rondo.Server:
    """Tools: `whoami` (no extra scope), `write` (files:write), `ask_name` (MRTR); a resource
    needing files:read; a prompt needing admin."""
    kwargs: dict[str, Any] = {"auth": auth}
    kwargs["state"] = state if state is not None else rondo.StatePolicy(secret=b"k" * 32)
    server = rondo.Server("protected", **kwargs)

    @server.tool
    def whoami(ctx: rondo.Context) -> dict[str, Any]:
        """Who the token says I am."""
        p = ctx.auth
        return {"subject": p.subject, "client_id": p.client_id, "scopes": sorted(p.scopes),
                "issuer": p.issuer, "custom": p.claims.get("custom")}

    @server.tool(scopes=["files:write"])
    def write(path: str) -> str:
        """Write a file."""
        return f"wrote {path}"

    @server.tool
    def ask_name(ctx: rondo.Context) -> str:
        """Ask for a name (one MRTR round)."""
        answer = ctx.ask("name", elicit.form(
            "Your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        ))
        return f"hello {answer.content['name']}" if answer.accepted else "no name"

    @server.resource("files://readme", scopes=["files:read"])
    def readme() -> str:
        return "read me"

    @server.prompt(scopes=["admin"])
    def audit() -> str:
        """An admin prompt."""
        return "audit everything"

    return server


ELICIT = {"elicitation": {"form": {}}}


def call(name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    params.update(kw)
    return request("tools/call", params, caps=ELICIT)


async def post(app: Any, message: dict[str, Any], token: str | None = None, *,
               authorization: str | bytes | None = None, extra: list[tuple[str, Any]] | None = None,
               path: str = "/mcp") -> Any:
    headers = list(http_headers(message).items())
    if authorization is not None:
        headers.append(("authorization", authorization))
    elif token is not None:
        headers.append(("authorization", f"Bearer {token}"))
    if extra:
        headers.extend(extra)
    async with asgi_client(app) as client:
        return await client.post(path, json=message, headers=headers)


def challenge_params(response: Any) -> dict[str, str]:
    """The parameters of a Bearer WWW-Authenticate header, as a dict."""
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer "), value
    out: dict[str, str] = {}
    for part in value[len("Bearer "):].split(", "):
        key, _, quoted = part.partition("=")
        assert quoted.startswith('"') and quoted.endswith('"'), value
        out[key] = quoted[1:-1]
    return out
