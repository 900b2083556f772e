"""A test verifier for the fleet apps: a bearer token `user-NAME` verifies as the user NAME
(the point is the principal, not the token format), and the resource server around it."""

from __future__ import annotations

from rondo.auth import ResourceServer
from rondo.auth.errors import InvalidToken
from rondo.auth.principal import Principal


class Tokens:
    cache_ttl = 0.0

    async def verify(self, token: str) -> Principal:
        if not token.startswith("user-"):
            raise InvalidToken()
        return Principal.from_claims({"sub": token[5:], "iss": "https://as.example"})


def user_auth() -> ResourceServer:
    return ResourceServer(resource="http://127.0.0.1/mcp", issuer="https://as.example",
                          verifier=Tokens())
