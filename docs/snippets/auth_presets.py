# file: docs/snippets/auth_presets.py
from rondo.auth.facade import providers

VAULT = {"github": "gh-secret", "google": "g-secret", "entra": "e-secret",
         "auth0": "a-secret", "keycloak": "k-secret", "oidc": "o-secret"}

# GitHub: OAuth 2.0 (not OpenID): opaque tokens, the user from GET /user (subject: numeric id).
github = providers.github(client_id="Iv1.8a61f9b3a7aba766", client_secret=VAULT["github"])
assert github.userinfo_url == "https://api.github.com/user" and github.subject_claim == "id"

# Google: offline access and consent for a refresh token; a Workspace domain enforced on `hd`.
google = providers.google(client_id="1234.apps.googleusercontent.com",
                          client_secret=VAULT["google"], hosted_domain="example.com")
assert google.extra_authorize_params == {"access_type": "offline", "prompt": "consent",
                                         "hd": "example.com"}

# Entra ID: one tenant (its id); the audience of the access token is chosen by scope.
entra = providers.entra(tenant="72f988bf-86f1-41af-91ab-2d7cd011db47", client_id="app-id",
                        client_secret=VAULT["entra"], scopes=["api://mcp-files/.default"])
assert entra.issuer == "https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0"

# Auth0: the tenant's domain; `audience` (your API's identifier) for a JWT access token.
auth0 = providers.auth0(domain="tenant.eu.auth0.com", client_id="abc",
                        client_secret=VAULT["auth0"], audience="https://api.example.com/mcp")
assert auth0.issuer == "https://tenant.eu.auth0.com/"  # Auth0's issuer ends with "/"

# Keycloak: the realm is the issuer.
keycloak = providers.keycloak("https://sso.example.com", realm="tools", client_id="mcp-facade",
                              client_secret=VAULT["keycloak"])
assert keycloak.token_url == "https://sso.example.com/realms/tools/protocol/openid-connect/token"

# Any OpenID provider: endpoints from its discovery document when the facade starts.
generic = providers.oidc("https://idp.example.com", client_id="mcp", client_secret=VAULT["oidc"])
assert generic.token_url is None and generic.scopes == ("openid", "email", "profile")

# Misconfiguration fails here, at start-up, never at a user's sign-in.
for wrong, why in ((lambda: providers.github(client_id="x", client_secret=""), "client_secret"),
                   (lambda: providers.entra(tenant="common", client_id="x", client_secret="s"),
                    "multi-tenant"),
                   (lambda: providers.entra(tenant="72f988bf-86f1-41af-91ab-2d7cd011db47",
                                            client_id="x", client_secret="s",
                                            scopes=["api://a/.default", "api://b/.default"]),
                    "one resource per request"),
                   (lambda: providers.auth0(domain="https://tenant.auth0.com", client_id="x",
                                            client_secret="s"), "host name"),
                   (lambda: providers.keycloak("https://sso.example.com", realm="a/b",
                                               client_id="x", client_secret="s"), "realm")):
    try:
        wrong()
    except ValueError as exc:
        assert why in str(exc), exc
    else:
        raise AssertionError(f"accepted: {why}")
assert "gh-secret" not in repr(github)  # secrets stay out of reprs and logs
