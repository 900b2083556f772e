"""Client ID metadata documents at the facade: a client named by an https URL is fetched (with
the SSRF rules), kept, and signs in like a registered one; anything unusable is refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rondo.auth.facade.cimd import public, ttl_of
from tests.helpers.components import module
from tests.helpers.facade_world import World, run, s256

module("cryptography", "auth")
URL = "https://app.example.com/oauth/client.json"


class Documents:
    def __init__(self) -> None:
        self.fetches = 0
        self.doc: Any = {"client_id": URL, "client_name": "Metadata App",
                         "redirect_uris": ["http://127.0.0.1:9999/callback"],
                         "grant_types": ["authorization_code", "refresh_token"],
                         "token_endpoint_auth_method": "none"}
        self.status = 200
        self.body: bytes | None = None

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.fetches += 1
        if self.body is not None:
            return httpx.Response(self.status, content=self.body)
        return httpx.Response(self.status, json=self.doc, headers={"cache-control": "max-age=600"})


def world(docs: Documents, addresses: list[str] | None = None) -> World:
    async def resolver(host: str, port: int) -> list[str]:
        return addresses if addresses is not None else ["93.184.215.14"]

    return World(cimd_transport=httpx.MockTransport(docs.handle), cimd_resolver=resolver)


def test_a_metadata_client_signs_in_without_registering() -> None:
    docs = Documents()
    w = world(docs)

    async def go() -> None:
        meta = (await w.http.get("/.well-known/oauth-authorization-server")).json()
        assert meta["client_id_metadata_document_supported"] is True
        client = {"client_id": URL, "redirect_uris": docs.doc["redirect_uris"]}
        page = await w.http.get("/authorize", params=w.authorize_params(client, "m" * 43))
        assert page.status_code == 200 and "Metadata App" in page.text and URL in page.text
        tokens = await w.sign_in(client)
        assert (await w.call("whoami", tokens["access_token"])).json()["result"]["content"][0]["text"] == (
            "alice alice@example.com")
        assert (await w.refresh(tokens)).status_code == 200
        assert docs.fetches == 1  # kept for its max-age

    run(go())


@pytest.mark.parametrize("change", ["other_id", "bad_redirect", "secret_client", "not_json", "status",
                                    "huge", "no_redirects"])
def test_an_unusable_document_is_refused_and_not_fetched_again_at_once(change: str) -> None:
    docs = Documents()
    if change == "other_id":
        docs.doc["client_id"] = "https://evil.example.com/client.json"
    elif change == "bad_redirect":
        docs.doc["redirect_uris"] = ["http://evil.example.com/cb"]
    elif change == "secret_client":
        docs.doc["token_endpoint_auth_method"] = "client_secret_basic"
    elif change == "not_json":
        docs.body = b"<html>"
    elif change == "status":
        docs.status = 302
        docs.body = b""
    elif change == "huge":
        docs.body = b'{"client_id": "' + b"x" * 20000 + b'"}'
    else:
        docs.doc.pop("redirect_uris")
    w = world(docs)

    async def go() -> None:
        client = {"client_id": URL, "redirect_uris": ["http://127.0.0.1:9999/callback"]}
        for _ in range(3):
            page = await w.http.get("/authorize", params=w.authorize_params(client, "m" * 43))
            assert page.status_code == 400 and "location" not in page.headers
        assert docs.fetches == 1

    run(go())


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1",
                                     "::ffff:192.168.0.1", "fd00::1", "0.0.0.0"])
def test_a_metadata_host_on_a_private_address_is_never_fetched(address: str) -> None:
    docs = Documents()
    w = world(docs, [address])

    async def go() -> None:
        client = {"client_id": URL, "redirect_uris": ["http://127.0.0.1:9999/callback"]}
        page = await w.http.get("/authorize", params=w.authorize_params(client, "m" * 43))
        assert page.status_code == 400
        assert docs.fetches == 0

    run(go())
    assert not public(address)


@pytest.mark.parametrize("url", ["http://app.example.com/c.json", "https://app.example.com/",
                                 "https://user@app.example.com/c.json", "https://app.example.com"])
def test_only_https_urls_with_a_path_name_clients(url: str) -> None:
    docs = Documents()
    w = world(docs)

    async def go() -> None:
        page = await w.http.get("/authorize", params={
            "client_id": url, "response_type": "code", "redirect_uri": "http://127.0.0.1:9999/callback",
            "code_challenge": s256("m" * 43), "code_challenge_method": "S256"})
        assert page.status_code == 400
        assert docs.fetches == 0

    run(go())


def test_the_document_lifetime_is_bounded() -> None:
    assert [ttl_of(""), ttl_of("max-age=5"), ttl_of("public, max-age=600"), ttl_of("max-age=999999"),
            ttl_of("no-store")] == [3600, 60, 600, 86400, 60]


def test_cimd_can_be_turned_off() -> None:
    w = World(client_metadata_documents=False)

    async def go() -> None:
        meta = (await w.http.get("/.well-known/oauth-authorization-server")).json()
        assert "client_id_metadata_document_supported" not in meta

    run(go())
