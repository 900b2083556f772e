"""A rondo server protected by rondo.auth itself, for the end-to-end sign-in test.

    python tests/helpers/rondo_protected_server.py ISSUER PORT

`ResourceServer` verifies the AS's JWTs (JWKS from its metadata), serves RFC 9728 metadata and
answers 401/403 challenges; `write_note` needs `files:write` and asks for a title (MRTR).
"""

from __future__ import annotations

import sys

import rondo
from rondo import elicit
from rondo.auth import ResourceServer

NOTE = elicit.form("Title?", {"type": "object", "properties": {"title": {"type": "string"}},
                              "required": ["title"]})


def build(issuer: str, port: int) -> rondo.Server:
    resource = f"http://127.0.0.1:{port}/mcp"
    auth = ResourceServer(resource=resource, issuer=issuer, scopes_supported=["mcp:use", "files:write"],
                          required_scopes=["mcp:use"])
    server = rondo.Server("rondo-protected", "1.0.0", auth=auth)

    @server.tool
    def whoami(ctx: rondo.Context) -> str:
        """Who the verified token says the caller is."""
        return f"sub={ctx.auth.subject}"

    @server.tool(scopes=["files:write"])
    def write_note(text: str, ctx: rondo.Context) -> str:
        """Needs files:write; asks for a title (an MRTR round) first."""
        answer = ctx.ask("title", NOTE)
        return f"wrote {answer.content['title']}: {text}" if answer.accepted else "no note"

    return server


if __name__ == "__main__":
    issuer, port = sys.argv[1], int(sys.argv[2])
    build(issuer, port).run_http(host="127.0.0.1", port=port)
