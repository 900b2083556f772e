"""Edges of the authorization parts that the live tests do not reach: misconfiguration at
construction, every refusal of an introspection answer, and redirect handlers that misbehave."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from rondo.auth.errors import InvalidToken, VerifierUnavailable
from rondo.auth.fetch import Fetcher
from rondo.auth.introspection import IntrospectionVerifier
from rondo.auth.jwt_verifier import JwtVerifier
from rondo.client.auth.errors import AuthorizationDenied
from rondo.client.auth.redirect import HeadlessRedirect, RedirectHandler

ISS = "https://as.example.com"
AUD = "https://mcp.example.com/mcp"


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"timeout": 0}, "timeout must be a positive number"),
    ({"timeout": "1"}, "timeout must be a positive number"),
    ({"max_bytes": 10}, "max_bytes must be an integer of at least 1024"),
])
def test_a_fetcher_refuses_nonsense_limits(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        Fetcher(**kwargs)


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"audiences": ()}, "needs at least one audience"),
    ({"client_id": "rs"}, "give both client_id and client_secret, or neither"),
    ({"client_secret": "s"}, "give both client_id and client_secret, or neither"),
    ({"cache_ttl": 301}, "cache_ttl must be between 0 and 300 seconds"),
    ({"cache_ttl": -1}, "cache_ttl must be between 0 and 300 seconds"),
])
def test_introspection_misconfiguration_fails_at_construction(kwargs: dict[str, Any], needle: str) -> None:
    options: dict[str, Any] = {"audiences": AUD, **kwargs}
    with pytest.raises(ValueError, match=needle):
        IntrospectionVerifier(ISS, **options)


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"issuers": ()}, "needs at least one issuer"),
    ({"audiences": ()}, "needs at least one audience"),
    ({"algorithms": ("HS256",)}, r"must be asymmetric JWS algorithms \(refused: \['HS256'\]\)"),
    ({"algorithms": ()}, r"must be asymmetric JWS algorithms \(refused: \[\]\)"),
    ({"leeway": 301}, "leeway must be between 0 and 300 seconds"),
    ({"issuers": (ISS, "https://other.example.com"), "jwks_uri": ISS + "/jwks"},
     "jwks_uri can only be given with a single issuer"),
])
def test_jwt_misconfiguration_fails_at_construction(kwargs: dict[str, Any], needle: str) -> None:
    options: dict[str, Any] = {"issuers": ISS, "audiences": AUD, **kwargs}
    with pytest.raises(ValueError, match=needle):
        JwtVerifier(**options)


NOW = 1_000_000.0


def _introspect(answer: dict[str, Any]) -> Any:
    verifier = IntrospectionVerifier(ISS, AUD, endpoint=ISS + "/introspect", clock=lambda: NOW)

    async def json(url: str, **_: Any) -> dict[str, Any]:
        assert url == ISS + "/introspect"
        return answer

    verifier._fetcher.json = json  # type: ignore[method-assign]
    return asyncio.run(verifier.verify("t0ken"))


@pytest.mark.parametrize(("answer", "reason", "message"), [
    ({"active": False}, "inactive", "is not active"),
    ({"active": "yes"}, "inactive", "is not active"),
    ({"active": True, "iss": "https://evil.example.com"}, "untrusted iss",
     "was not issued by a trusted authorization server"),
    ({"active": True, "aud": "https://other.example.com/mcp"}, "audience mismatch",
     "was not issued for this resource"),
    ({"active": True, "aud": [3]}, "audience mismatch", "was not issued for this resource"),
    ({"active": True, "exp": NOW - 31}, "expired", "has expired"),
    ({"active": True, "nbf": NOW + 31}, "nbf", "is not valid yet"),
])
def test_every_inactive_or_foreign_introspection_answer_is_refused(
        answer: dict[str, Any], reason: str, message: str) -> None:
    with pytest.raises(InvalidToken, match=f"^The access token {message}$") as refused:
        _introspect(answer)
    assert reason in str(refused.value.reason)
    assert "t0ken" not in str(refused.value)


def test_an_active_introspection_answer_becomes_the_principal() -> None:
    principal = _introspect({"active": True, "sub": "alice", "aud": [AUD], "scope": "a b",
                             "exp": NOW + 60, "nbf": NOW - 5})
    assert principal.subject == "alice" and principal.issuer == ISS
    assert principal.scopes >= {"a", "b"}


def test_introspection_without_an_advertised_endpoint_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    import rondo.auth.introspection as introspection

    async def metadata(fetcher: Any, issuer: str) -> dict[str, Any]:
        return {"issuer": issuer}

    monkeypatch.setattr(introspection, "as_metadata", metadata)
    verifier = IntrospectionVerifier(ISS, AUD)
    with pytest.raises(VerifierUnavailable, match="no introspection_endpoint"):
        asyncio.run(verifier.verify("t0ken"))


def test_a_redirect_handler_that_returns_no_url_is_a_denial() -> None:
    async def nothing(url: str) -> Any:
        return None

    handler = RedirectHandler("http://127.0.0.1:9/callback", nothing)
    with pytest.raises(AuthorizationDenied, match="no callback URL"):
        asyncio.run(handler.authorize("https://as.example.com/authorize"))


@pytest.mark.parametrize("respond", ["refuse", "ok", "redirect"])
def test_headless_redirect_needs_a_redirect(respond: str) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if respond == "refuse":
            raise httpx.ConnectError("no", request=request)
        if respond == "ok":
            return httpx.Response(200, text="consent page")
        return httpx.Response(302, headers={"location": "/callback?code=c&state=s"})

    headless = HeadlessRedirect(transport=httpx.MockTransport(handle))
    run = headless.authorize("https://as.example.com/authorize?x=1")
    if respond == "redirect":
        assert asyncio.run(run) == "https://as.example.com/callback?code=c&state=s"
    else:
        expected = ("unreachable: ConnectError" if respond == "refuse"
                    else "answered HTTP 200 without a redirect")
        with pytest.raises(AuthorizationDenied, match=f"^authorization endpoint {expected}$"):
            asyncio.run(run)
