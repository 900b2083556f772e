"""A protected rondo server for end-to-end auth checks with real clients.

    python tests/authserver/protected_app.py PORT ISSUER

Serves http://127.0.0.1:PORT/mcp; tokens from ISSUER with `aud` naming that URL. Tools:
`whoami` (mcp:use), `greet` (asks the user's name: one MRTR round), `write` (needs files:write
as well: the step-up case).
"""

from __future__ import annotations

import sys

import rondo
from rondo import elicit
from rondo.auth import ResourceServer

port, issuer = int(sys.argv[1]), sys.argv[2]
auth = ResourceServer(
    resource=f"http://127.0.0.1:{port}/mcp",
    issuer=issuer,
    scopes_supported=["mcp:use"],
    required_scopes=["mcp:use"],
)
server = rondo.Server("protected-e2e", auth=auth, state=rondo.StatePolicy(secret=b"e2e" * 11))


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Who the token says I am."""
    return f"{ctx.auth.subject} via {ctx.auth.client_id}"


@server.tool
def greet(ctx: rondo.Context) -> str:
    """Greet the user by the name they give."""
    answer = ctx.ask("name", elicit.form(
        "Your name?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    ))
    return f"hello {answer.content['name']} ({ctx.auth.subject})" if answer.accepted else "no name"


@server.tool(scopes=["files:write"])
def write(path: str) -> str:
    """Write a file (needs files:write)."""
    return f"wrote {path}"


if __name__ == "__main__":
    server.run_http(port=port)
