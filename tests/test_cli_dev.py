"""`rondo dev`: the page's endpoint refuses anything but its own page (loopback Host, its own
Origin, the per-run secret), and drives a server through a whole flow with a question answered
as the page answers it; the command prints a URL that serves the page."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from rondo.cli.dev import Bridge, DevApp
from rondo.fleet.loader import load_server

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cret-for-this-run"


async def _with_app(go: Any) -> Any:
    server = load_server(str(ROOT / "examples" / "preferences.py"))
    async with server.started(), Bridge(server) as bridge:
        transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:5555") as http:
            return await go(http)


def _api(op: str, **headers: str) -> tuple[str, dict[str, str]]:
    return f"/api/{op}", {"x-rondo-dev-secret": SECRET, "origin": "http://127.0.0.1:5555", **headers}


@pytest.mark.parametrize(("headers", "host", "why"), [
    ({"x-rondo-dev-secret": ""}, None, "secret is missing or wrong"),
    ({"x-rondo-dev-secret": SECRET + "x"}, None, "secret is missing or wrong"),
    ({"origin": "https://evil.example"}, None, "another origin"),
    ({"origin": "http://127.0.0.1:6666"}, None, "another origin"),
    ({}, "evil.example:5555", "loopback names only"),  # DNS rebinding: another name, same socket
])
def test_the_endpoint_refuses_anything_but_its_own_page(headers: dict[str, str], host: str | None,
                                                       why: str) -> None:
    async def go(http: httpx.AsyncClient) -> httpx.Response:
        path, sent = _api("offer", **headers)
        if host:
            sent["host"] = host
        return await http.post(path, json={}, headers=sent)

    refused = asyncio.run(_with_app(go))
    assert refused.status_code == 403 and why in refused.json()["error"]


def test_the_page_itself_is_served_on_loopback_with_a_strict_policy() -> None:
    async def go(http: httpx.AsyncClient) -> tuple[httpx.Response, httpx.Response]:
        return await http.get("/"), await http.get("/", headers={"host": "evil.example"})

    page, elsewhere = asyncio.run(_with_app(go))
    assert page.status_code == 200 and "<title>rondo dev</title>" in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    assert re.findall(r"https?://", page.text) == []  # nothing fetched from anywhere else
    assert "<script src" not in page.text and "<link" not in page.text
    assert elsewhere.status_code == 403


def test_a_flow_with_a_question_answered_as_the_page_answers_it() -> None:
    async def go(http: httpx.AsyncClient) -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
        path, headers = _api("offer")
        offer = (await http.post(path, json={}, headers=headers)).json()
        path, headers = _api("call")
        call = asyncio.ensure_future(http.post(path, json={"name": "favorite_color",
                                                            "arguments": {"user": "ann"}}, headers=headers))
        path, headers = _api("pending")
        deadline = time.monotonic() + 10
        questions: list[Any] = []
        while not questions and time.monotonic() < deadline:
            questions = (await http.post(path, json={}, headers=headers)).json()["questions"]
            await asyncio.sleep(0.02)
        (question,) = questions
        path, headers = _api("answer")
        answered = await http.post(path, json={"id": question["id"], "response": {
            "action": "accept", "content": {"color": "green"}}}, headers=headers)
        assert answered.json() == {"ok": True}
        return offer, questions, (await call).json()

    offer, questions, result = asyncio.run(_with_app(go))
    assert [t["name"] for t in offer["tools"]] == ["favorite_color", "profile", "connect_calendar"]
    assert offer["templates"][0]["uriTemplate"] == "prefs://{user}/color"
    assert questions[0]["message"] == "Which color do you like, ann?"
    assert questions[0]["schema"]["properties"]["color"]["enum"] == ["red", "green", "blue"]
    assert result["content"][0]["text"] == "ann likes green." and result["isError"] is False


def test_bad_api_use_is_a_400_or_404_not_a_traceback() -> None:
    async def go(http: httpx.AsyncClient) -> list[httpx.Response]:
        out = []
        for op, body in (("nothing", {}), ("call", {"name": 3}), ("answer", {"id": "q9", "response": {}})):
            path, headers = _api(op)
            out.append(await http.post(path, json=body, headers=headers))
        path, headers = _api("call")
        out.append(await http.post(path, content=b"[1]", headers=headers))
        return out

    missing, wrong, unknown, listed = asyncio.run(_with_app(go))
    assert missing.status_code == 404
    assert wrong.status_code == 400 and "tool name" in wrong.json()["error"]
    assert unknown.status_code == 400 and "pending question" in unknown.json()["error"]
    assert listed.status_code == 400


def test_the_command_prints_a_url_with_the_secret_that_serves_the_page() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "dev",
                             str(ROOT / "examples" / "preferences.py"), "--no-browser"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"rondo dev: preferences at (http://127\.0\.0\.1:(\d+)/)#secret=(\S+)", line)
        assert found, line
        page = httpx.get(found.group(1), timeout=10)
        assert page.status_code == 200 and "rondo dev" in page.text
        offer = httpx.post(found.group(1) + "api/offer", json={}, timeout=10,
                           headers={"x-rondo-dev-secret": found.group(3)})
        assert offer.json()["server"]["name"] == "preferences"
        stolen = httpx.post(found.group(1) + "api/offer", json={}, timeout=10)
        assert stolen.status_code == 403
    finally:
        proc.terminate()
        proc.wait(10)
