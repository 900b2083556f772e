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


@pytest.mark.parametrize("kwargs", [{"timeout": 0}, {"timeout": "1"}, {"max_bytes": 10}])
def test_a_fetcher_refuses_nonsense_limits(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Fetcher(**kwargs)


@pytest.mark.parametrize("kwargs", [
    {"audiences": ()},
    {"client_id": "rs"},
    {"client_secret": "s"},
    {"cache_ttl": 301},
    {"cache_ttl": -1},
])
def test_introspection_misconfiguration_fails_at_construction(kwargs: dict[str, Any]) -> None:
    options: dict[str, Any] = {"audiences": AUD, **kwargs}
    with pytest.raises(ValueError):
        IntrospectionVerifier(ISS, **options)


@pytest.mark.parametrize("kwargs", [
    {"issuers": ()},
    {"audiences": ()},
    {"algorithms": ("HS256",)},
    {"algorithms": ()},
    {"leeway": 301},
    {"issuers": (ISS, "https://other.example.com"), "jwks_uri": ISS + "/jwks"},
])
def test_jwt_misconfiguration_fails_at_construction(kwargs: dict[str, Any]) -> None:
    options: dict[str, Any] = {"issuers": ISS, "audiences": AUD, **kwargs}
    with pytest.raises(ValueError):
        JwtVerifier(**options)


NOW = 1_000_000.0


def _introspect(answer: dict[str, Any]) -> Any:
    verifier = IntrospectionVerifier(ISS, AUD, endpoint=ISS + "/introspect", clock=lambda: NOW)

    async def json(url: str, **_: Any) -> dict[str, Any]:
        assert url == ISS + "/introspect"
        return answer

    verifier._fetcher.json = json  # type: ignore[method-assign]
    return asyncio.run(verifier.verify("t0ken"))


@pytest.mark.parametrize(("answer", "reason"), [
    ({"active": False}, "inactive"),
    ({"active": "yes"}, "inactive"),
    ({"active": True, "iss": "https://evil.example.com"}, "untrusted iss"),
    ({"active": True, "aud": "https://other.example.com/mcp"}, "audience mismatch"),
    ({"active": True, "aud": [3]}, "audience mismatch"),
    ({"active": True, "exp": NOW - 31}, "expired"),
    ({"active": True, "nbf": NOW + 31}, "nbf"),
])
def test_every_inactive_or_foreign_introspection_answer_is_refused(answer: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidToken) as refused:
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
        with pytest.raises(AuthorizationDenied):
            asyncio.run(run)
