# file: docs/snippets/auth_providers.py
from rondo.auth import IntrospectionVerifier, JwtVerifier, ResourceServer

MCP = "https://mcp.example.com/mcp"

# Keycloak: the realm is the issuer; map the audience with an "audience" client scope.
keycloak = ResourceServer(resource=MCP, issuer="https://sso.example.com/realms/tools")

# Auth0: the issuer ends with "/"; the API identifier you created is the token's aud.
auth0 = ResourceServer(resource=MCP, issuer="https://tenant.eu.auth0.com/",
                       audience="https://api.example.com/mcp")

# Entra ID (v2 tokens): issuer per tenant, aud is the app id URI; scopes arrive in `scp`.
entra = ResourceServer(
    resource=MCP,
    issuer="https://login.microsoftonline.com/7f9c0000-0000-0000-0000-000000000000/v2.0",
    audience="api://mcp-files",
)

# Opaque tokens, or revocation that must bite within seconds: RFC 7662 introspection.
opaque = ResourceServer(
    resource=MCP,
    issuer="https://sso.example.com/realms/tools",
    verifier=IntrospectionVerifier("https://sso.example.com/realms/tools", MCP,
                                   client_id="mcp-files", client_secret="from-your-vault",
                                   cache_ttl=10),
)

# Tuning the JWT checks: algorithms, clock skew, how keys are fetched and cached.
tuned = ResourceServer(
    resource=MCP,
    issuer="https://sso.example.com/realms/tools",
    verifier=JwtVerifier("https://sso.example.com/realms/tools", MCP, algorithms=["ES256"],
                         leeway=10, jwks_ttl=600, timeout=3),
)

assert auth0.audiences == (MCP, "https://api.example.com/mcp")
assert entra.metadata()["authorization_servers"] == [entra.issuers[0]]
assert keycloak.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

# Misconfiguration fails at start-up, never at request time.
for wrong in ({"issuer": "https://sso.example.com"},                 # no resource URL
              {"resource": MCP},                                     # no issuer
              {"resource": MCP, "issuer": "http://sso.example.com"},  # http outside loopback
              {"resource": MCP, "issuer": "https://sso.example.com",
               "scopes_supported": ["offline_access"]}):              # not a resource scope
    try:
        ResourceServer(**wrong)
    except ValueError:
        pass
    else:
        raise AssertionError(f"accepted {wrong}")
try:
    JwtVerifier("https://sso.example.com", MCP, algorithms=["HS256"])
except ValueError:
    pass
else:
    raise AssertionError("HS256 accepted")
