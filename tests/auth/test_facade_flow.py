"""The authorization facade in process: registration, consent, PKCE, the provider's sign-in,
tokens, refresh rotation with a grace window, revocation, and every refusal on the way."""

from __future__ import annotations

import asyncio
import logging
import re
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from rondo.auth.facade import FileStore
from tests.helpers.components import module
from tests.helpers.facade_world import ISSUER, RESOURCE, UPSTREAM_SECRET, World, run

module("cryptography", "auth")


def error_of(response: httpx.Response) -> dict[str, list[str]]:
    assert response.status_code == 302, response.text
    return parse_qs(urlsplit(response.headers["location"]).query)


def test_metadata_points_clients_at_the_facade() -> None:
    async def go() -> None:
        w = World()
        prm = (await w.http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert prm["authorization_servers"] == [ISSUER] and prm["resource"] == RESOURCE
        meta = (await w.http.get("/.well-known/oauth-authorization-server")).json()
        assert meta["issuer"] == ISSUER
        assert meta["code_challenge_methods_supported"] == ["S256"]
        assert meta["registration_endpoint"] == ISSUER + "/register"
        assert meta["authorization_response_iss_parameter_supported"] is True
        assert (await w.http.get("/.well-known/openid-configuration")).json() == meta
        unauthorized = await w.call("whoami", "nope")
        assert unauthorized.status_code == 401
        assert "resource_metadata=" in unauthorized.headers["www-authenticate"]

    run(go())


def test_full_sign_in_calls_a_tool_that_reads_the_upstream_identity() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 300
        assert tokens["scope"] == "mcp"  # offline_access is not a resource scope
        answer = await w.call("whoami", tokens["access_token"])
        assert answer.json()["result"]["content"][0]["text"] == "alice alice@example.com"
        # The token is an RS256 JWT for the resource, verifiable with the published JWKS.
        jwk = (await w.http.get("/jwks")).json()["keys"][0]
        key = jwt.PyJWK(jwk).key
        claims = jwt.decode(tokens["access_token"], key, algorithms=["RS256"], audience=RESOURCE,
                            issuer=ISSUER, options={"verify_exp": False, "verify_iat": False})
        assert claims["sub"] == "alice" and claims["client_id"] == tokens["client"]["client_id"]
        # The provider's token is kept (sealed) and handed to tools that ask for it.
        up = (await w.call("upstream_token", tokens["access_token"])).json()["result"]["content"][0]["text"]
        assert up.startswith("upat-alice-") and w.provider.access[up] == "alice"
        # ... and the provider was sent the facade's own PKCE verifier and fixed callback.
        first = w.provider.seen_forms[0]
        assert first["redirect_uri"] == ISSUER + "/callback" and len(first["code_verifier"]) >= 43

    run(go())


def test_an_mrtr_round_completes_for_the_signed_in_user() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        first = (await w.call("confirm", tokens["access_token"])).json()["result"]
        state = first["requestState"]
        done = await w.call("confirm", tokens["access_token"], requestState=state,
                            inputResponses={"ok": {"action": "accept", "content": {"ok": True}}})
        assert done.json()["result"]["content"][0]["text"] == "alice said True"

    run(go())


def test_consent_is_asked_once_per_user_and_client() -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        await w.sign_in(client)
        started_here = {"sec-fetch-site": "none"}  # the user opened the link (not another site)
        again = await w.http.get("/authorize", params=w.authorize_params(client, "x" * 43),
                                 headers=started_here)
        assert again.status_code == 302  # remembered: straight to the provider
        for site in ("cross-site", "same-site", None):  # redirected here by a site, or unknown
            headers = {"sec-fetch-site": site} if site else {}
            page = await w.http.get("/authorize", params=w.authorize_params(client, "x" * 43), headers=headers)
            assert page.status_code == 200 and "Allow access?" in page.text, site
        assert again.headers["location"].startswith("https://idp.example.com/authorize?")
        other = await w.register(client_name="Other Client")
        page = await w.http.get("/authorize", params=w.authorize_params(other, "x" * 43))
        assert page.status_code == 200 and "Other Client" in page.text  # a new client: asked
        assert page.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "http://127.0.0.1:9999/callback" in page.text  # where tokens will go
        # A fresh browser (no cookie) is asked even for the known client.
        fresh = httpx.AsyncClient(transport=w.http._transport, base_url=ISSUER)
        asked = await fresh.get("/authorize", params=w.authorize_params(client, "x" * 43),
                                headers=started_here)
        assert asked.status_code == 200 and "Allow access?" in asked.text

    run(go())


def test_denied_consent_goes_back_with_access_denied() -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        page = await w.http.get("/authorize", params=w.authorize_params(client, "y" * 43))
        back = error_of(await w.consent(page, "deny"))
        assert back["error"] == ["access_denied"] and back["state"] == ["client-state-1"]
        assert back["iss"] == [ISSUER]

    run(go())


def test_consent_form_needs_its_browser_cookie_and_is_single_use() -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        page = await w.http.get("/authorize", params=w.authorize_params(client, "y" * 43))
        other = httpx.AsyncClient(transport=w.http._transport, base_url=ISSUER)
        stolen = await w.consent(page, browser=other)  # another browser posts the form: CSRF
        assert stolen.status_code == 400 and "location" not in stolen.headers
        page = await w.http.get("/authorize", params=w.authorize_params(client, "y" * 43))
        fields = dict(re.findall(r'name="(request|csrf)" value="([^"]+)"', page.text))
        ok = await w.http.post("/consent", data={**fields, "decision": "approve"})
        assert ok.status_code == 302
        again = await w.http.post("/consent", data={**fields, "decision": "approve"})
        assert again.status_code == 400
        forged = await w.http.post("/consent", data={**fields, "csrf": "A" * 43, "decision": "approve"})
        assert forged.status_code == 400

    run(go())


def test_the_callback_must_come_back_to_the_browser_that_consented() -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        page = await w.http.get("/authorize", params=w.authorize_params(client, "z" * 43))
        upstream = await w.consent(page)
        victim = httpx.AsyncClient(transport=w.http._transport, base_url=ISSUER)
        hijacked = await w.provider_signs_in(upstream, browser=victim)
        assert hijacked.status_code == 400 and "location" not in hijacked.headers
        # The flow was consumed by that attempt: the real browser cannot finish it either.
        replay = await w.provider_signs_in(upstream)
        assert replay.status_code == 400
        unknown = await w.http.get("/callback", params={"code": "c", "state": "s" * 43})
        assert unknown.status_code == 400

    run(go())


@pytest.mark.parametrize(("over", "error"), [
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": "short"}, "invalid_request"),
    ({"resource": "https://other.example.com/mcp"}, "invalid_target"),
    ({"scope": "mcp admin"}, "invalid_scope"),
])
def test_authorize_refusals_redirect_with_the_rfc_error(over: dict[str, str], error: str) -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        back = error_of(await w.http.get("/authorize", params=w.authorize_params(client, "q" * 43, **over)))
        assert back["error"] == [error] and back["state"] == ["client-state-1"]

    run(go())


@pytest.mark.parametrize("over", [
    {"client_id": "unknown-client-id-000"},
    {"redirect_uri": "http://127.0.0.1:9999/callback/"},  # one character off: exact match only
    {"redirect_uri": "https://evil.example.com/callback"},
])
def test_unknown_client_or_redirect_is_never_redirected_to(over: dict[str, str]) -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        page = await w.http.get("/authorize", params=w.authorize_params(client, "q" * 43, **over))
        assert page.status_code == 400 and "location" not in page.headers

    run(go())


def test_codes_are_single_use_bound_and_short_lived() -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        other = await w.register()
        verifier = "k" * 50
        base = {"grant_type": "authorization_code", "client_id": client["client_id"],
                "redirect_uri": client["redirect_uris"][0], "code_verifier": verifier}

        async def refused(form: dict[str, str], error: str = "invalid_grant") -> None:
            response = await w.token(form)
            assert response.status_code == 400 and response.json()["error"] == error, response.text
            assert response.headers["cache-control"] == "no-store"

        await refused({**base, "code": await w.code_for(client, verifier), "code_verifier": "w" * 50})
        await refused({**base, "code": await w.code_for(client, verifier), "client_id": other["client_id"]})
        await refused({**base, "code": await w.code_for(client, verifier),
                       "redirect_uri": "http://127.0.0.1:9999/other"})
        await refused({**base, "code": "A" * 43})  # forged
        code = await w.code_for(client, verifier)
        w.clock.now += 61  # past code_ttl
        await refused({**base, "code": code})
        code = await w.code_for(client, verifier)
        await refused({**base, "code": code, "resource": "https://other.example.com/mcp"}, "invalid_target")
        # A good exchange, then a replay of the same code: refused, and its tokens revoked.
        code = await w.code_for(client, verifier)
        good = (await w.token({**base, "code": code})).json()
        assert (await w.call("whoami", good["access_token"])).status_code == 200
        await refused({**base, "code": code})
        w.clock.now += 11  # past verify_ttl: the cached verification lapses
        assert (await w.call("whoami", good["access_token"])).status_code == 401

    run(go())


def test_confidential_clients_must_authenticate() -> None:
    async def go() -> None:
        w = World()
        client = await w.register(token_endpoint_auth_method="client_secret_basic")
        assert len(client["client_secret"]) >= 43
        verifier = "c" * 43
        code = await w.code_for(client, verifier)
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        bad = await w.http.post("/token", data=form, auth=(client["client_id"], "wrong"))
        assert bad.status_code == 401 and bad.json()["error"] == "invalid_client"
        assert bad.headers["www-authenticate"].startswith("Basic")
        none = await w.http.post("/token", data={**form, "client_id": client["client_id"]})
        assert none.status_code == 401
        ok = await w.http.post("/token", data=form, auth=(client["client_id"], client["client_secret"]))
        assert ok.status_code == 200 and "refresh_token" in ok.json()

    run(go())


def test_refresh_rotates_and_fifty_concurrent_refreshes_in_the_grace_window_all_succeed() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        answers = await asyncio.gather(*(w.refresh(tokens) for _ in range(50)))
        assert [a.status_code for a in answers] == [200] * 50
        successors = {a.json()["refresh_token"] for a in answers}
        assert len(successors) == 1  # one new family member, whoever won the race
        successor = successors.pop()
        assert successor != tokens["refresh_token"]
        assert len({a.json()["access_token"] for a in answers}) == 50
        w.clock.now += 10  # still inside the 30 s grace window
        assert (await w.refresh(tokens)).json()["refresh_token"] == successor
        follow = await w.refresh(tokens, successor)
        assert follow.status_code == 200
        # After the window the old token is a stolen copy: the whole family is revoked.
        w.clock.now += 31
        reuse = await w.refresh(tokens)
        assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
        newest = await w.refresh(tokens, follow.json()["refresh_token"])
        assert newest.status_code == 400 and newest.json()["error"] == "invalid_grant"
        w.clock.now += 11
        assert (await w.call("whoami", follow.json()["access_token"])).status_code == 401

    run(go())


def test_refresh_refusals() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        other = await w.sign_in()
        wrong_client = await w.token({"grant_type": "refresh_token", "client_id": other["client"]["client_id"],
                                      "refresh_token": tokens["refresh_token"]})
        assert wrong_client.json()["error"] == "invalid_grant"
        wider = await w.token({"grant_type": "refresh_token", "client_id": tokens["client"]["client_id"],
                               "refresh_token": tokens["refresh_token"], "scope": "mcp admin"})
        assert wider.json()["error"] == "invalid_scope"
        unknown = await w.token({"grant_type": "password", "client_id": tokens["client"]["client_id"]})
        assert unknown.json()["error"] == "unsupported_grant_type"
        repeated = await w.http.post("/token", content=b"grant_type=refresh_token&grant_type=x",
                                     headers={"content-type": "application/x-www-form-urlencoded"})
        assert repeated.status_code == 400 and repeated.json()["error"] == "invalid_request"
        big = await w.http.post("/token", content=b"a=" + b"x" * 20000,
                                headers={"content-type": "application/x-www-form-urlencoded"})
        assert big.status_code == 400 and big.json()["error"] == "invalid_request"

    run(go())


def test_revocation_ends_the_family() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        client_id = tokens["client"]["client_id"]
        revoked = await w.http.post("/revoke", data={"token": tokens["refresh_token"], "client_id": client_id})
        assert revoked.status_code == 200
        assert (await w.refresh(tokens)).json()["error"] == "invalid_grant"
        w.clock.now += 11
        assert (await w.call("whoami", tokens["access_token"])).status_code == 401
        # Revoking by access token works too, and an unknown token is still a 200 (RFC 7009).
        second = await w.sign_in(tokens["client"])
        assert (await w.http.post("/revoke", data={"token": second["access_token"],
                                                   "client_id": client_id})).status_code == 200
        assert (await w.refresh(second)).json()["error"] == "invalid_grant"
        assert (await w.http.post("/revoke", data={"token": "nope", "client_id": client_id})).status_code == 200

    run(go())


@pytest.mark.parametrize("mode", ["down", "slow", "garbage", "huge", "userinfo-500", "no-access-token",
                                  "error-200", "not-an-object"])
def test_a_failing_provider_ends_the_sign_in_with_temporarily_unavailable(
        mode: str, caplog: pytest.LogCaptureFixture) -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        page = await w.http.get("/authorize", params=w.authorize_params(client, "p" * 43))
        upstream = await w.consent(page)
        w.provider.mode = mode
        loop = asyncio.get_running_loop()
        started = loop.time()
        back = error_of(await w.provider_signs_in(upstream))
        assert loop.time() - started < 3  # the Upstream timeout is 1 s
        assert back["error"] == ["temporarily_unavailable"] and back["state"] == ["client-state-1"]

    with caplog.at_level(logging.DEBUG, logger="rondo"):
        run(go())
    logged = caplog.text
    assert "sign-in at the provider failed" in logged
    assert UPSTREAM_SECRET not in logged and "upcode-" not in logged


def test_provider_tokens_are_sealed_at_rest_and_refreshed_when_stale(tmp_path) -> None:  # type: ignore[no-untyped-def]
    async def go() -> None:
        store = FileStore(tmp_path / "store")
        w = World(store=store)
        w.provider.expires_in = 60
        tokens = await w.sign_in()
        first = (await w.call("upstream_token", tokens["access_token"])).json()["result"]["content"][0]["text"]
        on_disk = b"".join(p.read_bytes() for p in (tmp_path / "store").iterdir() if p.is_file())
        assert first.encode() not in on_disk and b"uprt-" not in on_disk  # encrypted at rest
        assert tokens["refresh_token"].encode() not in on_disk  # refresh tokens kept by digest
        w.clock.now += 45  # the provider's token now expires within 30 s
        calls = await asyncio.gather(*(w.call("upstream_token", tokens["access_token"]) for _ in range(5)))
        fresh = {c.json()["result"]["content"][0]["text"] for c in calls}
        assert len(fresh) == 1 and fresh != {first}
        assert w.provider.refreshes == 1  # concurrent callers shared one refresh

    run(go())


def test_registration_is_validated_and_bounded() -> None:
    async def go() -> None:
        w = World(registrations_per_minute=6)
        for bad, error in (({"redirect_uris": ["http://evil.example.com/cb"]}, "invalid_redirect_uri"),
                           ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
                           ({"redirect_uris": ["https://a.example.com/cb#x"]}, "invalid_redirect_uri"),
                           ({"redirect_uris": []}, "invalid_redirect_uri"),
                           ({"redirect_uris": ["https://a.example.com/cb"],
                             "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
                           ({"redirect_uris": ["https://a.example.com/cb"], "grant_types": ["implicit"]},
                            "invalid_client_metadata")):
            response = await w.http.post("/register", json=bad)
            assert response.status_code == 400 and response.json()["error"] == error, bad
        # Six refused above already count: the flood bound is per address, per minute.
        flood = await w.http.post("/register", json={"redirect_uris": ["https://a.example.com/cb"]})
        assert flood.status_code == 429 and flood.json()["error"] == "temporarily_unavailable"
        w.clock.now += 61
        ok = await w.http.post("/register", json={"redirect_uris": ["com.example.app:/cb"]})
        assert ok.status_code == 201
        not_json = await w.http.post("/register", content=b"{not json")
        assert not_json.status_code == 400 and not_json.json()["error"] == "invalid_client_metadata"

    run(go())


def test_a_fleet_worker_refuses_a_memory_store(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rondo.auth.facade import FleetMisconfigured

    monkeypatch.setenv("RONDO_FLEET", "1")
    with pytest.raises(FleetMisconfigured, match="memory store"):
        World()
    World(store=FileStore(tmp_path / "shared"))  # a shared store starts


def test_workers_sharing_a_store_refresh_the_provider_token_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two facades (two workers) on one file store: concurrent calls on both for a stale provider
    token cause one refresh at the provider; the rest wait for its result."""
    from rondo.auth.facade import Facade
    from tests.helpers.facade_world import ISSUER, RESOURCE, SECRET, upstream

    async def go() -> None:
        store = FileStore(tmp_path / "shared")
        w = World(store=store)
        w.provider.expires_in = 60
        tokens = await w.sign_in()
        other = Facade(issuer=ISSUER, resource=RESOURCE, upstream=upstream(), secret=SECRET, store=store,
                       clock=w.clock, upstream_transport=httpx.MockTransport(w.provider.handle))
        principal = await other.resource_server().verifier.verify(tokens["access_token"])
        w.clock.now += 45
        results = await asyncio.gather(*(f.upstream_token(principal) for f in (w.facade, other) * 5))
        assert len(set(results)) == 1 and w.provider.refreshes == 1

    run(go())


def test_nothing_secret_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """Every path that logs (refusals, a replayed code, a reused refresh token, a refused
    provider refresh) at DEBUG: no token, code, secret or provider token in any record."""
    secrets: list[str] = [UPSTREAM_SECRET]

    async def go() -> None:
        w = World()
        client = await w.register(token_endpoint_auth_method="client_secret_post")
        secrets.append(client["client_secret"])
        verifier = "s" * 60
        code = await w.code_for(client, verifier)
        secrets.extend([code, verifier])
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                "client_id": client["client_id"], "client_secret": client["client_secret"]}
        tokens = (await w.token(form)).json()
        secrets.extend([tokens["access_token"], tokens["refresh_token"]])
        up = await w.call("upstream_token", tokens["access_token"])
        secrets.extend(w.provider.access)
        assert up.status_code == 200
        rt = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
              "client_id": client["client_id"], "client_secret": client["client_secret"]}
        secrets.append((await w.token(rt)).json()["refresh_token"])
        w.clock.now += 40
        await w.token(rt)  # reuse after the window: logged
        await w.token(form)  # replayed code: logged, grant revoked
        await w.call("whoami", "forged.token.value")
        bad = await w.register()
        page = await w.http.get("/authorize", params=w.authorize_params(bad, "p" * 43))
        w.provider.mode = "garbage"
        await w.provider_signs_in(await w.consent(page))

    with caplog.at_level(logging.DEBUG):
        run(go())
    logged = caplog.text + " ".join(str(r.args) for r in caplog.records)
    assert "replayed" in logged and "reused after the grace" in logged  # the paths did log
    leaked = [s for s in secrets if s and s in logged]
    assert leaked == []


def test_browser_clients_get_cors_on_the_json_endpoints_only() -> None:
    async def go() -> None:
        w = World()
        for path in ("/token", "/register", "/revoke", "/.well-known/oauth-authorization-server", "/jwks"):
            pre = await w.http.options(path, headers={"origin": "https://app.example.com",
                                                      "access-control-request-method": "POST"})
            assert pre.status_code == 204 and pre.headers["access-control-allow-origin"] == "*", path
        token = await w.token({"grant_type": "password"})
        assert token.headers["access-control-allow-origin"] == "*"
        consent = await w.http.options("/consent")
        assert "access-control-allow-origin" not in consent.headers  # the cookie-bound pages: none

    run(go())


def test_authorize_is_bounded_per_address() -> None:
    async def go() -> None:
        w = World(authorizations_per_minute=3)
        client = await w.register()
        answers = [await w.http.get("/authorize", params=w.authorize_params(client, "b" * 43)) for _ in range(4)]
        assert [a.status_code for a in answers] == [200, 200, 200, 302]
        assert error_of(answers[3])["error"] == ["temporarily_unavailable"]
        w.clock.now += 61
        assert (await w.http.get("/authorize", params=w.authorize_params(client, "b" * 43))).status_code == 200

    run(go())


def test_refresh_keeps_the_family_alive_and_checks_the_resource() -> None:
    async def go() -> None:
        w = World(refresh_ttl=100)
        tokens = await w.sign_in()
        wrong = await w.token({"grant_type": "refresh_token", "client_id": tokens["client"]["client_id"],
                               "refresh_token": tokens["refresh_token"], "resource": "https://other.example.com/mcp"})
        assert wrong.json()["error"] == "invalid_target"
        current = tokens["refresh_token"]
        for _ in range(3):  # 3 x 60 s: longer than refresh_ttl, but each refresh extends the family
            w.clock.now += 60
            answer = await w.refresh(tokens, current)
            assert answer.status_code == 200, answer.text
            current = answer.json()["refresh_token"]
        up = await w.call("upstream_token", answer.json()["access_token"])
        assert up.json()["result"]["content"][0]["text"].startswith("upat-alice-")
        w.clock.now += 101  # unused past refresh_ttl: gone
        assert (await w.refresh(tokens, current)).json()["error"] == "invalid_grant"

    run(go())


def test_a_consent_page_loaded_twice_keeps_the_first_form_valid() -> None:
    async def go() -> None:
        w = World()
        client = await w.register()
        first = await w.http.get("/authorize", params=w.authorize_params(client, "d" * 43))
        second = await w.http.get("/authorize", params=w.authorize_params(client, "d" * 43))
        assert second.status_code == 200
        approved = await w.consent(first)  # the older page still works in the same browser
        assert approved.status_code == 302
        assert approved.headers["location"].startswith("https://idp.example.com/authorize?")

    run(go())


def test_revoking_a_family_revokes_the_providers_token_not_ours() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        up = (await w.call("upstream_token", tokens["access_token"])).json()["result"]["content"][0]["text"]
        await w.http.post("/revoke", data={"token": tokens["refresh_token"],
                                           "client_id": tokens["client"]["client_id"]})
        assert len(w.provider.revoked) == 1
        assert w.provider.revoked[0].startswith("uprt-alice-")  # the provider's own refresh token
        assert tokens["refresh_token"] not in w.provider.revoked and up not in w.provider.revoked
        # A provider that is down when a family is revoked: the family is revoked all the same.
        second = await w.sign_in(tokens["client"])
        w.provider.mode = "down"
        assert (await w.http.post("/revoke", data={"token": second["refresh_token"],
                                                   "client_id": tokens["client"]["client_id"]})).status_code == 200
        assert (await w.refresh(second)).json()["error"] == "invalid_grant"

    run(go())


def test_an_issuer_with_a_path_serves_everything_under_it() -> None:
    import rondo
    from rondo.auth.facade import Facade
    from tests.helpers.facade_world import SECRET, upstream

    facade = Facade(issuer="https://login.example.com/tenant-a", resource="https://login.example.com/mcp",
                    upstream=upstream(), secret=SECRET)
    server = rondo.Server("pathed", auth=facade.resource_server(), state=None)
    app = server.asgi(allowed_hosts=None)

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="https://login.example.com") as http:
            meta = (await http.get("/.well-known/oauth-authorization-server/tenant-a")).json()
            assert meta["issuer"] == "https://login.example.com/tenant-a"
            assert meta["token_endpoint"] == "https://login.example.com/tenant-a/token"
            assert (await http.get("/.well-known/oauth-authorization-server")).status_code == 404
            reg = await http.post("/tenant-a/register", json={"redirect_uris": ["https://app.example.com/cb"],
                                                              "token_endpoint_auth_method": "none"})
            assert reg.status_code == 201
            page = await http.get("/tenant-a/authorize", params={
                "client_id": reg.json()["client_id"], "response_type": "code",
                "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                "code_challenge_method": "S256"})
            assert page.status_code == 200 and 'action="/tenant-a/consent"' in page.text

    run(go())
