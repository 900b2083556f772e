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

ROOT = Path(__file__).resolve().parents[1].parent
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


ASKING_APP = '''
import asyncio
from dataclasses import dataclass

import rondo
from rondo import roots, sampling

server = rondo.Server("asking", state=rondo.StatePolicy(secret=b"k" * 32))


@dataclass
class Trip:
    city: str
    nights: int = 1


@server.tool
def book(trip: Trip, note: str = "") -> str:
    """Book a trip (a nested object in the form)."""
    return f"{trip.city} for {trip.nights} nights{note}"


@server.tool
async def haiku(topic: str, ctx: rondo.Context) -> str:
    """Ask the client's model for a haiku."""
    reply = await ctx.ask("poem", sampling.create_message(f"A haiku about {topic}", 60))
    return reply.text


@server.tool
async def folders(ctx: rondo.Context) -> str:
    """Which folders may I use?"""
    listed = await ctx.ask("roots", roots.list())
    return ", ".join(root.uri for root in listed)


@server.tool
async def steps(n: int, ctx: rondo.Context) -> str:
    """Count, reporting progress and logging."""
    await ctx.log("info", "counting", logger="steps")
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return f"{n} steps"
'''


async def _drive(http: httpx.AsyncClient, tool: str, arguments: dict[str, Any],
                 respond: Any) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """Call `tool` as the page does, answering each question with `respond(question)`."""
    path, headers = _api("call")
    call = asyncio.ensure_future(http.post(path, json={"name": tool, "arguments": arguments},
                                           headers=headers))
    asked: list[Any] = []
    events: list[Any] = []
    deadline = time.monotonic() + 15
    while not call.done() and time.monotonic() < deadline:
        path, headers = _api("pending")
        got = (await http.post(path, json={"since": events[-1]["seq"] if events else 0},
                               headers=headers)).json()
        events.extend(got["events"])
        for question in got["questions"]:
            if question["id"] not in [q["id"] for q in asked]:
                asked.append(question)
                path, headers = _api("answer")
                await http.post(path, json={"id": question["id"], "response": respond(question)},
                                headers=headers)
        await asyncio.sleep(0.02)
    result = (await call).json()
    path, headers = _api("pending")
    events.extend((await http.post(path, json={"since": events[-1]["seq"] if events else 0},
                                   headers=headers)).json()["events"])
    return result, asked, events


def _asking_app(tmp_path: Path) -> Path:
    path = tmp_path / "asking.py"
    path.write_text(ASKING_APP)
    return path


def test_sampling_roots_progress_and_logs_reach_the_page(tmp_path: Path) -> None:
    server = load_server(str(_asking_app(tmp_path)))

    async def go() -> list[Any]:
        async with server.started(), Bridge(server) as bridge:
            transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:5555") as http:
                return [
                    await _drive(http, "haiku", {"topic": "rain"}, lambda q: {
                        "role": "assistant", "content": {"type": "text", "text": "soft rain"},
                        "model": "typed-by-hand", "stopReason": "endTurn"}),
                    await _drive(http, "folders", {}, lambda q: {"roots": [
                        {"uri": "file:///work/a"}, {"uri": "file:///work/b"}]}),
                    await _drive(http, "steps", {"n": 3}, lambda q: {}),
                ]

    (poem, sampled, _), (listed, rooted, _), (counted, _, events) = asyncio.run(go())
    assert sampled[0]["kind"] == "sample" and sampled[0]["maxTokens"] == 60
    assert sampled[0]["messages"][0]["content"]["text"] == "A haiku about rain"
    assert poem["content"][0]["text"] == "soft rain"
    assert rooted[0]["kind"] == "roots" and listed["content"][0]["text"] == "file:///work/a, file:///work/b"
    assert counted["content"][0]["text"] == "3 steps"
    assert [(e["progress"], e["message"]) for e in events if e["kind"] == "progress"] == [
        (1, "step 1"), (2, "step 2"), (3, "step 3")]
    assert any(e["kind"] == "log" and e["data"] == "counting" for e in events)


def test_a_task_with_a_question_in_the_middle(tmp_path: Path) -> None:
    server = load_server(str(ROOT / "examples" / "deploy.py"))

    def person(question: dict[str, Any]) -> dict[str, Any]:
        if "environment" in question["message"]:
            return {"action": "accept", "content": {"env": "staging"}}
        return {"action": "accept", "content": {"switch": True}}

    async def go() -> tuple[dict[str, Any], list[Any], list[Any]]:
        async with server.started(), Bridge(server) as bridge:
            transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:5555") as http:
                return await _drive(http, "deploy", {"service": "api"}, person)

    result, asked, events = asyncio.run(go())
    assert [q["message"] for q in asked] == ["Deploy to which environment?",
                                             "New version is warm. Switch traffic over?"]
    statuses = [e["status"] for e in events if e["kind"] == "task"]
    assert statuses[0] == "working" and "input_required" in statuses and statuses[-1] == "completed"
    assert result["content"][0]["text"].startswith("api is")


def test_a_command_or_url_target_is_driven_as_a_client_would() -> None:
    from rondo.cli.dev import is_served_elsewhere

    assert is_served_elsewhere("http://127.0.0.1:8000/mcp")
    assert is_served_elsewhere("python app.py --stdio") and is_served_elsewhere("npx some-server")
    assert not is_served_elsewhere("app.py") and not is_served_elsewhere("app.py:server")

    async def go() -> dict[str, Any]:
        command = [sys.executable, str(ROOT / "examples" / "preferences.py"), "--stdio"]
        async with Bridge(command) as bridge:
            transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:5555") as http:
                result, asked, _ = await _drive(http, "favorite_color", {"user": "flo"}, lambda q: {
                    "action": "accept", "content": {"color": "red"}})
                assert asked[0]["message"] == "Which color do you like, flo?"
                return result

    assert asyncio.run(go())["content"][0]["text"] == "flo likes red."


def test_a_changed_server_file_is_loaded_again_and_a_broken_one_is_reported(tmp_path: Path) -> None:
    import contextlib

    from rondo.cli.dev import Reloader

    app = tmp_path / "growing.py"
    app.write_text("import rondo\nserver = rondo.Server('growing', state=None)\n\n\n"
                   "@server.tool\ndef one() -> str:\n    '''One.'''\n    return '1'\n")
    server = load_server(str(app))

    async def go() -> tuple[list[str], list[str], list[str], Any]:
        running = contextlib.AsyncExitStack()
        await running.enter_async_context(server.started())
        async with Bridge(server) as bridge:
            reloader = Reloader(str(app), bridge, running)
            transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:5555") as http:
                async def tools() -> list[str]:
                    path, headers = _api("offer")
                    return [t["name"] for t in (await http.post(path, json={}, headers=headers)).json()["tools"]]

                before = await tools()
                assert await reloader.check() is False  # nothing changed
                app.write_text(app.read_text() + "\n\n@server.tool\ndef two() -> str:\n    '''Two.'''\n    return '2'\n")
                reloader.seen = -1  # as if the clock moved (mtime granularity)
                assert await reloader.check() is True
                after = await tools()
                app.write_text("import rondo\ndef broken(:\n")
                reloader.seen = -1
                assert await reloader.check() is False
                still = await tools()
                path, headers = _api("pending")
                events = (await http.post(path, json={}, headers=headers)).json()["events"]
            await reloader.running.aclose()
        return before, after, still, events

    before, after, still, events = asyncio.run(go())
    assert before == ["one"] and after == ["one", "two"] and still == ["one", "two"]
    reloads = [e for e in events if e["kind"] == "reload"]
    assert reloads[0]["ok"] is True and reloads[1]["ok"] is False
    assert "SyntaxError" in reloads[1]["error"]


def test_tasks_are_listed_and_one_can_be_cancelled_from_the_page() -> None:
    server = load_server(str(ROOT / "examples" / "deploy.py"))

    async def go() -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
        async with server.started(), Bridge(server) as bridge:
            transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:5555") as http:
                path, headers = _api("call")
                call = asyncio.ensure_future(http.post(path, json={
                    "name": "deploy", "arguments": {"service": "api"}}, headers=headers))
                listed: list[Any] = []
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    path, headers = _api("pending")
                    got = (await http.post(path, json={}, headers=headers)).json()
                    for question in got["questions"]:
                        if "environment" in question["message"]:
                            path, headers = _api("answer")
                            await http.post(path, json={"id": question["id"], "response": {
                                "action": "accept", "content": {"env": "staging"}}}, headers=headers)
                    if got["tasks"]:
                        listed = got["tasks"]
                        break
                    await asyncio.sleep(0.02)
                path, headers = _api("cancel_task")
                cancelled = (await http.post(path, json={"taskId": listed[0]["taskId"]},
                                             headers=headers)).json()
                return (await call).json(), listed, cancelled

    result, listed, cancelled = asyncio.run(go())
    assert listed[0]["status"] in ("working", "input_required") and len(listed[0]["taskId"]) == 32
    assert cancelled == {"ok": True}
    assert "cancelled" in result["failed"]


def test_a_browser_is_opened_only_where_there_is_a_screen() -> None:
    from rondo.cli.dev import has_display

    assert has_display({}, "darwin") and has_display({}, "win32")
    assert not has_display({}, "linux")
    assert has_display({"DISPLAY": ":0"}, "linux") and has_display({"WAYLAND_DISPLAY": "w"}, "linux")
