"""The key that signs the facade's access tokens (RS256 by default): made once and shared by
every facade on one store (sealed with the secret), adopted again when the store lost it, or
given (`signing_key`, RSA or P-256); and the facade's own verification path, which accepts only
what that key signed with the claims the facade issues."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rondo.auth.facade import Facade, MemoryStore
from rondo.auth.facade import access_tokens as facade_module
from rondo.auth.facade.keys import pem_of
from tests.helpers.facade_world import ISSUER, RESOURCE, SECRET, World, upstream


def make(store: MemoryStore, secret: bytes = SECRET, **options: Any) -> Facade:
    return Facade(issuer=ISSUER, resource=RESOURCE, upstream=upstream(), secret=secret,
                  store=store, **options)


def claims(**over: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "iat": now, "exp": now + 60,
            "gid": "g" * 32, **over}


@pytest.fixture(autouse=True)
def fresh_process_cache() -> Any:
    """Each facade below makes its own key unless the store already has one (as separate
    processes would)."""
    saved = dict(facade_module._GENERATED)
    facade_module._GENERATED.clear()
    yield
    facade_module._GENERATED.clear()
    facade_module._GENERATED.update(saved)


def test_facades_sharing_a_store_sign_with_one_rs256_key() -> None:
    async def go() -> None:
        store = MemoryStore()
        first, second = make(store), make(store)
        a = await first._signer()
        facade_module._GENERATED.clear()  # the second one is "another process"
        b = await second._signer()
        assert a.alg == "RS256" and a.kid == b.kid and pem_of(a.key) == pem_of(b.key)
        token = a.sign(claims())
        assert (await second._decode_access(token) or {}).get("sub") == "alice"
        # The JWKS both publish names that one key, usable by any JWT library.
        key = jwt.PyJWK(b.jwk).key
        assert jwt.decode(token, key, algorithms=["RS256"], audience=RESOURCE)["gid"] == "g" * 32
        # Kept sealed: the store holds no PEM.
        sealed = await store.get("signing-key:v1")
        assert sealed is not None and b"PRIVATE KEY" not in sealed

    asyncio.run(go())


def test_a_facade_with_another_secret_on_the_same_store_fails_loudly() -> None:
    async def go() -> None:
        store = MemoryStore()
        await make(store)._signer()
        with pytest.raises(RuntimeError, match="sealed with another secret"):
            await make(store, secret=b"another secret, also 32 bytes long!!")._signer()

    asyncio.run(go())


def test_a_store_that_lost_the_key_is_healed_by_the_next_unknown_kid() -> None:
    async def go() -> None:
        now = [1000.0]
        store = MemoryStore()
        first = make(store, clock=lambda: now[0])
        old = await first._signer()
        await store.delete("signing-key:v1")  # Redis flushed, say
        facade_module._GENERATED.clear()
        second = make(store, clock=lambda: now[0])
        new = await second._signer()  # makes and stores another key
        assert new.kid != old.kid
        token = new.sign(claims(iat=int(now[0]), exp=int(now[0]) + 60))
        now[0] += 11  # the first facade read the store more than 10 s ago
        assert (await first._decode_access(token) or {}).get("sub") == "alice"
        assert (await first._signer()).kid == new.kid  # and now signs with the shared key

    asyncio.run(go())


def test_an_unknown_kid_reads_the_store_at_most_every_ten_seconds() -> None:
    async def go() -> None:
        now = [1000.0]
        store = MemoryStore()
        facade = make(store, clock=lambda: now[0])
        await facade._signer()
        reads = []
        real_get = store.get

        async def counting(key: str) -> bytes | None:
            reads.append(key)
            return await real_get(key)

        store.get = counting  # type: ignore[method-assign]
        stranger = jwt.encode(claims(iat=int(now[0]), exp=int(now[0]) + 60),
                              rsa.generate_private_key(public_exponent=65537, key_size=2048),
                              algorithm="RS256", headers={"kid": "someone-elses"})
        for _ in range(5):  # within 10 s of reading the key: no store read at all
            assert await facade._decode_access(stranger) is None
        assert reads == []
        now[0] += 11
        for _ in range(5):
            assert await facade._decode_access(stranger) is None
        assert reads == ["signing-key:v1"]  # one read, then quiet for another 10 s

    asyncio.run(go())


def test_a_given_signing_key_rsa_or_p256_is_used_and_others_refused() -> None:
    async def go() -> None:
        p256 = ec.generate_private_key(ec.SECP256R1())
        facade = make(MemoryStore(), signing_key=p256)
        signer = await facade._signer()
        token = signer.sign(claims())
        assert jwt.get_unverified_header(token)["alg"] == "ES256"
        assert (await facade._decode_access(token) or {}).get("sub") == "alice"
        pem = pem_of(rsa.generate_private_key(public_exponent=65537, key_size=3072)).decode()
        assert (await make(MemoryStore(), signing_key=pem)._signer()).alg == "RS256"

    asyncio.run(go())
    for wrong, message in [(rsa.generate_private_key(public_exponent=65537, key_size=1024),
                            "at least 2048 bits"),
                           (ec.generate_private_key(ec.SECP384R1()), "RSA .* or a P-256"),
                           (ed25519.Ed25519PrivateKey.generate(), "RSA .* or a P-256")]:
        with pytest.raises(ValueError, match=message):
            make(MemoryStore(), signing_key=wrong)


def _b64(doc: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=").decode()


def test_the_verification_path_refuses_what_the_facade_did_not_issue() -> None:
    async def go() -> None:
        facade = make(MemoryStore())
        signer = await facade._signer()
        good = signer.sign(claims())
        assert await facade._decode_access(good) is not None
        head, body, sig = good.split(".")
        public_pem = jwt.PyJWK(signer.jwk).key.public_bytes(
            encoding=__import__("cryptography.hazmat.primitives.serialization",
                                fromlist=["Encoding"]).Encoding.PEM,
            format=__import__("cryptography.hazmat.primitives.serialization",
                              fromlist=["PublicFormat"]).PublicFormat.SubjectPublicKeyInfo)
        import hashlib
        import hmac
        signed = f"{_b64({'alg': 'HS256', 'kid': signer.kid})}.{body}"
        confused = signed + "." + base64.urlsafe_b64encode(
            hmac.new(public_pem, signed.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
        refused = {
            "alg none": f"{_b64({'alg': 'none', 'kid': signer.kid})}.{body}.",
            "HS256 keyed with the public key": confused,
            "another kid": f"{_b64({'alg': 'RS256', 'kid': 'x'})}.{body}.{sig}",
            "crit header": f"{_b64({'alg': 'RS256', 'kid': signer.kid, 'crit': ['x']})}.{body}.{sig}",
            "payload swapped": f"{head}.{_b64(claims(sub='mallory'))}.{sig}",
            "signature cut": f"{head}.{body}.{sig[:-4]}",
            "padding in a part": f"{head}=.{body}.{sig}",
            "two parts": f"{head}.{body}",
            "wrong audience": signer.sign(claims(aud="https://other.example.com/mcp")),
            "wrong issuer": signer.sign(claims(iss="https://other.example.com")),
            "no gid": signer.sign({k: v for k, v in claims().items() if k != "gid"}),
            "expired": signer.sign(claims(exp=int(time.time()) - 60)),
            "exp not a number": signer.sign(claims(exp="soon")),
            "not an object": f"{head}.{_b64(claims())[:0]}{base64.urlsafe_b64encode(b'[1]').rstrip(b'=').decode()}.{sig}",
            "too long": signer.sign(claims(pad="x" * 9000)),
        }
        for why, token in refused.items():
            assert await facade._decode_access(token) is None, why

    asyncio.run(go())


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_single_character_change_to_a_token_is_accepted(data: st.DataObject) -> None:
    token = _TOKEN[0]
    at = data.draw(st.integers(0, len(token) - 1))
    char = data.draw(st.sampled_from("ABCDEFabcdef0123456789-_.=+/ "))
    mutated = token[:at] + char + token[at + 1:]
    if mutated == token:
        return
    assert asyncio.run(_FACADE[0]._decode_access(mutated)) is None


_FACADE = [make(MemoryStore())]
_TOKEN = [asyncio.run(_FACADE[0]._signer()).sign(claims(exp=int(time.time()) + 3600))]


def test_a_whole_sign_in_still_verifies_through_the_resource_server() -> None:
    async def go() -> None:
        w = World()
        tokens = await w.sign_in()
        assert jwt.get_unverified_header(tokens["access_token"])["alg"] == "RS256"
        answer = await w.call("whoami", tokens["access_token"])
        assert answer.json()["result"]["content"][0]["text"] == "alice alice@example.com"

    asyncio.run(go())


class Counting:
    """A store that records which reads the verifier makes; `many=False` hides `get_many` (a
    custom store implementing only the protocol)."""

    def __init__(self, inner: MemoryStore, many: bool) -> None:
        self.inner, self.shared, self.reads = inner, False, []  # type: ignore[var-annotated]
        if many:
            self.get_many = self._get_many

    async def get(self, key: str) -> bytes | None:
        self.reads.append(("get", key.split(":")[0]))
        return await self.inner.get(key)

    async def _get_many(self, keys: list[str]) -> list[bytes | None]:
        self.reads.append(("get_many", ",".join(k.split(":")[0] for k in keys)))
        return await self.inner.get_many(keys)

    def __getattr__(self, name: str) -> Any:  # put, add, take, delete, count
        if name == "get_many":
            raise AttributeError(name)
        return getattr(self.inner, name)


@pytest.mark.parametrize("many", [True, False], ids=["get_many", "protocol-only"])
def test_a_first_verification_reads_the_store_once_and_still_sees_revocation(many: bool) -> None:
    async def go() -> None:
        store = Counting(MemoryStore(), many)
        w = World(store=store)
        tokens = await w.sign_in()
        verifier = w.facade.resource_server().verifier
        store.reads.clear()
        assert (await verifier.verify(tokens["access_token"])).subject == "alice"
        assert store.reads == ([("get_many", "revoked,grant")] if many
                               else [("get", "revoked"), ("get", "grant")])
        gid = jwt.decode(tokens["access_token"], options={"verify_signature": False})["gid"]
        await w.facade.revoke_grant(gid)
        from rondo.auth.errors import InvalidToken

        with pytest.raises(InvalidToken, match="revoked"):
            await verifier.verify(tokens["access_token"])

    asyncio.run(go())
