"""Answers carried in the sealed state are authoritative: only the questions the state says were
asked last round take new answers; without any state (a stateless client's first try), a
supplied answer is read as is."""

from __future__ import annotations

import rondo
from rondo import elicit
from tests.helpers.helpers_core import Client, accept, text_of

KEYS = rondo.StatePolicy(keys=[("k", b"c" * 32)])


def form(field: str) -> dict:
    return elicit.form(f"{field}?", {"type": "object", "properties": {field: {"type": "string"}},
                                     "required": [field]})


def make_server() -> rondo.Server:
    server = rondo.Server("carry", state=KEYS)

    @server.tool
    def two(ctx: rondo.Context) -> str:
        first = ctx.ask("first", form("a"))
        second = ctx.ask("second", form("b"))
        return f"{first.content['a']} {second.content['b']}"

    return server


def test_a_new_answer_cannot_override_a_carried_one():
    client = Client(make_server())
    r1 = client.tool("two", {})
    assert set(r1["inputRequests"]) == {"first"}
    r2 = client.result("tools/call", {
        "name": "two", "arguments": {},
        "inputResponses": {"first": accept({"a": "one"})}, "requestState": r1["requestState"]})
    assert set(r2["inputRequests"]) == {"second"}
    # Round 3 answers `second` and also slips in a different answer to `first`.
    r3 = client.result("tools/call", {
        "name": "two", "arguments": {},
        "inputResponses": {"first": accept({"a": "forged"}), "second": accept({"b": "two"})},
        "requestState": r2["requestState"]})
    assert text_of(r3) == "one two"


def test_without_state_supplied_answers_are_read():
    client = Client(make_server())
    result = client.result("tools/call", {
        "name": "two", "arguments": {},
        "inputResponses": {"first": accept({"a": "x"}), "second": accept({"b": "y"})}})
    assert text_of(result) == "x y"


def test_an_answer_to_a_question_not_asked_last_round_is_asked_again():
    client = Client(make_server())
    r1 = client.tool("two", {})
    # The client answers `second`, which was not asked yet, alongside `first`.
    r2 = client.result("tools/call", {
        "name": "two", "arguments": {},
        "inputResponses": {"first": accept({"a": "one"}), "second": accept({"b": "early"})},
        "requestState": r1["requestState"]})
    assert r2["resultType"] == "input_required" and set(r2["inputRequests"]) == {"second"}
