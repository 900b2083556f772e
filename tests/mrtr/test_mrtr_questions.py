"""What rondo learns of a question (kind, digest, validated) is kept by what the question says,
never by which dict holds it: one dict object changed between calls is looked at afresh."""

from __future__ import annotations

import pytest

import rondo
from rondo import elicit
from rondo.mrtr import questions
from tests.helpers.helpers_core import Client, accept, text_of

KEYS = rondo.StatePolicy(keys=[("k", b"q" * 32)])


def test_one_question_object_reworded_between_rounds_is_asked_again() -> None:
    question = elicit.form("Color?", {"type": "object", "properties": {"c": {"type": "string"}}})
    server = rondo.Server("questions", state=KEYS)

    @server.tool
    def pick(ctx: rondo.Context) -> str:
        answer = ctx.ask("c", question)
        return str(answer.content["c"])

    client = Client(server)
    r1 = client.tool("pick", {})
    assert r1["inputRequests"]["c"]["params"]["message"] == "Color?"
    question["params"]["message"] = "Colour?"  # the very same dict, changed in place
    r2 = client.result("tools/call", {
        "name": "pick", "arguments": {},
        "inputResponses": {"c": accept({"c": "red"})}, "requestState": r1["requestState"]})
    # The answer was given to another question: not taken, the new wording is asked.
    assert r2["resultType"] == "input_required"
    assert r2["inputRequests"]["c"]["params"]["message"] == "Colour?"
    r3 = client.result("tools/call", {
        "name": "pick", "arguments": {},
        "inputResponses": {"c": accept({"c": "blue"})}, "requestState": r2["requestState"]})
    assert text_of(r3) == "blue"


def test_a_question_made_invalid_in_place_is_refused_not_remembered_as_valid() -> None:
    question = elicit.form("Color?", {"type": "object", "properties": {"c": {"type": "string"}}})
    server = rondo.Server("questions-bad", state=KEYS)

    @server.tool
    def pick(ctx: rondo.Context) -> str:
        return str(ctx.ask("c", question).content["c"])

    client = Client(server)
    assert client.tool("pick", {})["resultType"] == "input_required"  # validated, remembered
    question["params"]["requestedSchema"]["properties"]["c"] = {"type": "object"}
    error = client.call("tools/call", {"name": "pick", "arguments": {}})["error"]
    assert error["code"] == -32603
    assert error["message"].startswith("input request 'c' is invalid: requestedSchema.properties")


def test_facts_follow_content_and_large_questions_are_not_kept() -> None:
    small = elicit.form("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
    assert questions.question(small) is questions.question({**small})  # equal content: one entry
    other = {**small, "params": {**small["params"], "message": "Surname?"}}
    assert questions.question(other).digest != questions.question(small).digest
    big = elicit.form("x" * (questions._MAX_KEPT + 1), {"type": "object", "properties": {}})
    assert questions.question(big) is not questions.question(big)
    assert questions.question(big).digest == questions.question(big).digest
    with pytest.raises(questions.NotAQuestion, match="^'tools/list' is not an input request method$"):
        questions.question({"method": "tools/list"})
    with pytest.raises(TypeError, match="Encoding objects of type object is unsupported"):  # not JSON: the encoding says so
        questions.question({"method": "elicitation/create", "params": {"x": object()}})
