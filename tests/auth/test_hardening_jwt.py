"""Issue 37 defects 3 and 4: an algorithm naming a key of another type is a 401 invalid_token
(it was an uncaught TypeError, HTTP 500, a traceback per request), and a key replaced under the
same `kid` is fetched again once, rate-limited, instead of refusing valid tokens until restart."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from rondo.auth import InvalidToken, JwtVerifier

ISS = "https://as.test"
AUD = "https://mcp.test/mcp"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
RSA_KEY_2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
EC384_KEY = ec.generate_private_key(ec.SECP384R1())
ED_KEY = ed25519.Ed25519PrivateKey.generate()


def jwk(private: Any, kid: str) -> dict[str, Any]:
    """A public JWK without `alg`, as Microsoft Entra ID publishes them."""
    public = private.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        entry = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        entry = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        entry = OKPAlgorithm.to_jwk(public, as_dict=True)
    return {**entry, "kid": kid, "use": "sig"}


def token(private: Any, alg: str, kid: str) -> str:
    claims = {"iss": ISS, "aud": AUD, "sub": "alice", "exp": int(time.time()) + 600}
    return jwt.encode(claims, private, algorithm=alg, headers={"kid": kid})


def forged(alg: str, kid: str) -> str:
    """A token whose header names `alg` but which is signed by whatever we have: the key-type
    check must refuse it before any signature code runs."""
    signer = {"RS": RSA_KEY, "PS": RSA_KEY, "ES": EC_KEY, "Ed": ED_KEY}[alg[:2]]
    return token(signer, alg, kid)


class FakeFetcher:
    """Serves a JWKS that the test can replace; counts fetches."""

    def __init__(self, keys: list[dict[str, Any]]) -> None:
        self.keys = keys
        self.fetches = 0

    async def json(self, url: str, **kw: Any) -> dict[str, Any]:
        self.fetches += 1
        return {"keys": list(self.keys)}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def verifier(keys: list[dict[str, Any]], clock: Clock | None = None) -> tuple[JwtVerifier, FakeFetcher]:
    v = JwtVerifier(ISS, AUD, jwks_uri=ISS + "/jwks", jwks_min_refresh=10.0)
    fetcher = FakeFetcher(keys)
    jwks = v.keys[ISS]
    jwks.fetcher = fetcher  # type: ignore[assignment]
    if clock is not None:
        jwks._clock = clock
    return v, fetcher


@pytest.mark.parametrize(("alg", "published"), [
    ("RS256", EC_KEY), ("RS256", ED_KEY), ("PS256", EC_KEY),
    ("ES256", RSA_KEY), ("ES256", ED_KEY), ("EdDSA", RSA_KEY), ("EdDSA", EC_KEY),
])
def test_an_algorithm_naming_a_key_of_another_type_is_invalid_token(alg: str, published: Any) -> None:
    v, _ = verifier([jwk(published, "k1")])
    with pytest.raises(InvalidToken, match="algorithm does not match its key") as caught:
        asyncio.run(v.verify(forged(alg, "k1")))
    assert "key type" in caught.value.reason


def test_es256_naming_a_p384_key_is_invalid_token_not_a_crash() -> None:
    v, _ = verifier([jwk(EC384_KEY, "k1")])
    with pytest.raises(InvalidToken, match="The access token is invalid") as caught:
        asyncio.run(v.verify(token(EC_KEY, "ES256", "k1")))
    assert caught.value.reason == "InvalidKeyError"  # PyJWT's own check of the curve


def test_the_mismatch_answers_401_invalid_token_over_http_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    from rondo.auth import ResourceServer
    from tests.helpers.auth_helpers import call, challenge_params, post, protected_server

    v, _ = verifier([jwk(EC_KEY, "k1")])
    app = protected_server(ResourceServer(resource=AUD, issuer=ISS, verifier=v)).asgi()
    response = asyncio.run(post(app, call("whoami"), token=forged("RS256", "k1")))
    assert response.status_code == 401  # before: an uncaught TypeError, HTTP 500
    assert challenge_params(response)["error"] == "invalid_token"
    assert not [r for r in caplog.records if r.exc_info]


def test_a_key_replaced_under_the_same_kid_is_fetched_again_once() -> None:
    clock = Clock()
    v, fetcher = verifier([jwk(RSA_KEY, "k1")], clock)
    assert asyncio.run(v.verify(token(RSA_KEY, "RS256", "k1"))).subject == "alice"
    assert fetcher.fetches == 1
    fetcher.keys = [jwk(RSA_KEY_2, "k1")]  # the authorization server restarted with a new key
    clock.now += 1  # well inside the JWKS ttl: before the fix this was 401 until restart
    assert asyncio.run(v.verify(token(RSA_KEY_2, "RS256", "k1"))).subject == "alice"
    assert fetcher.fetches == 2
    # And the new key is kept: no further fetch for the next token.
    assert asyncio.run(v.verify(token(RSA_KEY_2, "RS256", "k1"))).subject == "alice"
    assert fetcher.fetches == 2


def test_bad_signatures_under_a_known_kid_fetch_at_most_once_per_min_refresh() -> None:
    clock = Clock()
    v, fetcher = verifier([jwk(RSA_KEY, "k1")], clock)
    for _ in range(20):
        with pytest.raises(InvalidToken, match="signature is invalid"):
            asyncio.run(v.verify(token(RSA_KEY_2, "RS256", "k1")))
    assert fetcher.fetches == 2  # the first fetch, then one refetch for all twenty
    clock.now += 10.0
    with pytest.raises(InvalidToken, match="signature is invalid"):
        asyncio.run(v.verify(token(RSA_KEY_2, "RS256", "k1")))
    assert fetcher.fetches == 3


# -- a token over the header limit --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_token_over_the_header_limit_gets_431_not_401(http: str, free_port: int) -> None:
    import socket
    import threading

    import msgspec
    import uvicorn

    from rondo.auth import ResourceServer
    from rondo.transport.serve import HttpLimits, uvicorn_options
    from tests.helpers.auth_helpers import call, protected_server
    from tests.helpers.helpers_core import http_headers

    v, _ = verifier([jwk(RSA_KEY, "k1")])
    app = protected_server(ResourceServer(resource=AUD, issuer=ISS, verifier=v)).asgi()
    limits = HttpLimits(max_header_bytes=8192)
    config = uvicorn.Config(app, host="127.0.0.1", port=free_port, log_level="error", lifespan="off",
                            **uvicorn_options(limits, http=http))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        message = call("whoami")
        body = msgspec.json.encode(message)
        lines = b"".join(f"{k}: {v}\r\n".encode() for k, v in http_headers(message).items())
        head = (b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n" + lines +
                b"authorization: Bearer " + b"a" * 12_000 + b"\r\ncontent-length: %d\r\n\r\n" % len(body))
        with socket.create_connection(("127.0.0.1", free_port), timeout=5) as sock:
            sock.sendall(head + body)  # the whole block in one write: its end is in the last read
            reply = sock.recv(65536)
        assert reply.split(b" ", 2)[1] == b"431", reply[:200]
    finally:
        server.should_exit = True
        thread.join(10)
