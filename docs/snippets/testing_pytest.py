# file: docs/snippets/testing_pytest.py
"""A pytest module for a server: run it with `pytest docs/snippets/testing_pytest.py`."""
import asyncio

import pytest

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest

server = rondo.Server("booking", state=None)


@server.tool
async def book(city: str, ctx: rondo.Context) -> str:
    """Book a room, asking how many nights."""
    answer = await ctx.ask("nights", elicit.form(
        f"How many nights in {city}?",
        {"type": "object", "properties": {"nights": {"type": "integer", "minimum": 1}},
         "required": ["nights"]},
    ))
    return f"{answer.content['nights']} nights in {city}" if answer.accepted else "not booked"


def run(coro):
    """Each test runs its own event loop: no pytest plugin needed."""
    return asyncio.run(coro)


def test_the_tool_list() -> None:
    async def go():
        async with Client(server) as client:  # in memory: no process, no socket
            return await client.list_tools()

    (tool,) = run(go())
    assert tool.name == "book" and tool.input_schema["required"] == ["city"]


def test_a_user_who_answers() -> None:
    asked: list[ElicitRequest] = []

    def user(request: ElicitRequest) -> dict:
        asked.append(request)  # assert on what was asked, below
        return {"action": "accept", "content": {"nights": 3}}

    async def go():
        async with Client(server, on_elicit=user) as client:
            return await client.call_tool("book", {"city": "Oslo"})

    assert run(go()).text == "3 nights in Oslo"
    (question,) = asked
    assert question.message == "How many nights in Oslo?"
    assert question.requested_schema["properties"]["nights"]["minimum"] == 1


def test_the_question_itself_without_answering() -> None:
    async def go():
        async with Client(server, on_elicit=lambda r: {"action": "decline"}) as client:
            pending = await client.call_tool("book", {"city": "Rome"}, manual=True)
            questions = pending.input_requests  # the paused call: what the server asks for
            done = await client.resume(pending, {"nights": {"action": "decline"}})
            return questions, done

    questions, done = run(go())
    assert questions["nights"]["params"]["message"] == "How many nights in Rome?"
    assert done.text == "not booked"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_both_eras(protocol: str) -> None:
    async def go():
        async with Client(server, protocol=protocol,
                          on_elicit=lambda r: {"action": "accept", "content": {"nights": 1}}) as client:
            return await client.call_tool("book", {"city": "Lima"})

    assert run(go()).text == "1 nights in Lima"


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
