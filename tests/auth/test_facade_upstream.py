"""The upstream declaration (`rondo.auth.facade.Upstream`): what a provider preset builds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rondo.auth.facade import Identity, Upstream, UpstreamError, UpstreamTokens, userinfo_identity
from rondo.auth.facade.records import StoredTokens
from tests.helpers.facade_world import FakeHttp


def declared(**over: Any) -> Upstream:
    base: dict[str, Any] = {"client_id": "facade", "client_secret": "s3cret",
                            "authorize_url": "https://idp.example.com/authorize",
                            "token_url": "https://idp.example.com/token",
                            "userinfo_url": "https://idp.example.com/me"}
    return Upstream(**{**base, **over})


def test_a_declaration_keeps_its_secret_out_of_repr() -> None:
    up = declared()
    assert "s3cret" not in repr(up)
    tokens = UpstreamTokens(access_token="at-123", refresh_token="rt-456")
    assert "at-123" not in repr(tokens) and "rt-456" not in repr(tokens)
    stored = StoredTokens(access_token="at-123", refresh_token="rt-456", id_token="id-789")
    assert not any(t in repr(stored) for t in ("at-123", "rt-456", "id-789")), repr(stored)


@pytest.mark.parametrize(("over", "match"), [
    ({"client_id": ""}, "client_id"),
    ({"client_secret": None}, "needs a client_secret"),
    ({"token_url": None}, "authorize_url and token_url"),
    ({"userinfo_url": None}, "userinfo_url or an identity reader"),
    ({"token_url": "http://idp.example.com/token"}, "https"),
    ({"scopes": "openid"}, "tuple of strings"),
    ({"token_auth": "private_key_jwt"}, "unknown token_auth"),
    ({"timeout": 0}, "timeout"),
])
def test_misconfiguration_fails_at_construction(over: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        declared(**over)


def test_an_issuer_alone_is_enough_and_discovery_fills_the_endpoints() -> None:
    up = Upstream(client_id="facade", client_secret="x", issuer="https://sso.example.com/realms/t")
    filled = up.with_endpoints({"authorization_endpoint": "https://sso.example.com/a",
                                "token_endpoint": "https://sso.example.com/t",
                                "userinfo_endpoint": "https://sso.example.com/u",
                                "revocation_endpoint": 7})
    assert (filled.authorize_url, filled.token_url, filled.userinfo_url, filled.revocation_url) == (
        "https://sso.example.com/a", "https://sso.example.com/t", "https://sso.example.com/u", None)
    explicit = Upstream(client_id="facade", client_secret="x", issuer="https://sso.example.com",
                        token_url="https://other.example.com/t")
    assert explicit.with_endpoints({"token_endpoint": "https://sso.example.com/t"}).token_url == (
        "https://other.example.com/t")


def test_userinfo_identity_reads_the_subject_claim_and_sends_the_upstream_token() -> None:
    up = declared(subject_claim="id", userinfo_headers={"accept": "application/vnd.github+json"})
    http = FakeHttp({"https://idp.example.com/me": {"id": 42, "login": "octo"}})
    who = asyncio.run(userinfo_identity(http, UpstreamTokens(access_token="gho_x"), up))
    assert who == Identity(subject="42", claims={"id": 42, "login": "octo"})
    assert http.gets == [("https://idp.example.com/me", {
        "accept": "application/vnd.github+json", "authorization": "Bearer gho_x"})]


@pytest.mark.parametrize("doc", [{}, {"sub": ""}, {"sub": True}, {"sub": ["a"]}, {"sub": None}])
def test_userinfo_without_a_usable_subject_is_an_upstream_error(doc: dict[str, Any]) -> None:
    with pytest.raises(UpstreamError, match="no usable 'sub'"):
        asyncio.run(userinfo_identity(FakeHttp({"https://idp.example.com/me": doc}), UpstreamTokens(access_token="t"), declared()))


def test_a_protected_server_without_the_facade_never_imports_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys, time, rondo\n"
        "from rondo.auth import Principal, ResourceServer\n"
        "class V:\n"
        "    cache_ttl = 1.0\n"
        "    async def verify(self, token):\n"
        "        return Principal.from_claims({'sub': 'a', 'iss': 'https://sso.example.com'})\n"
        "rs = ResourceServer(resource='https://mcp.example.com/mcp', issuer='https://sso.example.com', verifier=V())\n"
        "rondo.Server('plain', auth=rs, state=None).asgi(allowed_hosts=None)\n"
        "print(sorted(m for m in sys.modules if m.startswith('rondo.auth.facade')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_bounded_http_takes_an_array_only_where_a_read_asks_for_one() -> None:
    import httpx

    from rondo.auth.facade.upstream_http import UpstreamClient

    answers = {"/object": (200, b'{"a": 1}'), "/array": (200, b'[{"a": 1}, 2]'),
               "/missing": (404, b'{"message": "Not Found"}'), "/text": (200, b"hello"),
               "/big": (200, b"[" + b"1," * 4000 + b"1]")}

    def handle(request: httpx.Request) -> httpx.Response:
        status, body = answers[request.url.path]
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    client = UpstreamClient(declared(max_bytes=4096), transport=httpx.MockTransport(handle))

    async def go() -> None:
        base = "https://idp.example.com"
        assert await client.get_json(base + "/object") == {"a": 1}
        assert await client.get_json_array(base + "/array") == [{"a": 1}, 2]
        with pytest.raises(UpstreamError, match="JSON that is not an object"):
            await client.get_json(base + "/array")  # the other reads are not loosened
        with pytest.raises(UpstreamError, match="JSON that is not an array"):
            await client.get_json_array(base + "/object")
        with pytest.raises(UpstreamError, match="answered HTTP 404"):
            await client.get_json_array(base + "/missing")  # an error body may be an object
        with pytest.raises(UpstreamError, match="without JSON"):
            await client.get_json_array(base + "/text")
        with pytest.raises(UpstreamError, match="more than 4096 bytes"):
            await client.get_json_array(base + "/big")  # the size cap holds for arrays too

    asyncio.run(go())
