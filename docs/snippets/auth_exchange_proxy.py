# file: docs/snippets/auth_exchange_proxy.py
import rondo
from rondo.auth import ResourceServer, TokenExchange
from rondo.client import ClientCredentials

UPSTREAM = "https://tools.internal.example.com/mcp"
exchange = TokenExchange(issuer="https://sso.example.com/realms/tools",
                         client_id="gateway", client_secret="from-your-vault")
front = rondo.proxy(
    UPSTREAM,
    auth=ResourceServer(resource="https://mcp.example.com/mcp",
                        issuer="https://sso.example.com/realms/tools"),
    state=rondo.StatePolicy(secret=b"a shared secret of 32 bytes or more!"),
    # Relayed calls: the caller's token exchanged for one whose audience is the upstream.
    # The proxy's own requests (connecting, listing): its client-credentials token.
    upstream_auth=exchange.upstream_auth(
        resource=UPSTREAM,
        otherwise=ClientCredentials("gateway", client_secret="from-your-vault")),
)
assert isinstance(front, rondo.Server)  # nothing is fetched until the proxy starts

try:  # an httpx.Auth means nothing to a stdio upstream: refused at construction
    rondo.proxy(["python", "upstream.py"], upstream_auth=exchange.upstream_auth(resource=UPSTREAM))
except ValueError as exc:
    assert "http(s) upstream" in str(exc)
else:
    raise AssertionError("accepted upstream_auth for a command line")
