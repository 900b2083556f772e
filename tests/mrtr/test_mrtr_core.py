"""Multi Round-Trip Requests on the 2026-07-28 wire, from the outside (spec digest §4-§5).

Placement, admission against this request's capabilities, the builders, answer validation,
`ctx.ask` across rounds (answers sealed in the state, pinned to the question), the explicit
style, state-only rounds, sealed-state refusals, and replicas that share nothing but keys.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo import InputRequired, StatePolicy, elicit, roots, sampling
from tests.helpers.helpers_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_CAPABILITY,
    Client,
    accept,
    roots_answer,
    sampled,
    text_of,
)

KEYS = [("k1", b"0123456789abcdef0123456789abcdef")]


def name_form(message: str = "What is your name?") -> dict[str, Any]:
    return elicit.form(
        message,
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )


COLOR = elicit.form(
    "Pick a color",
    {"type": "object", "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
     "required": ["color"]},
)


class Counter:
    """How many times each handler body ran (it re-runs from the top every round)."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}

    def hit(self, name: str) -> None:
        self.runs[name] = self.runs.get(name, 0) + 1


def make_server(name: str = "mrtr", state: Any = "keys", counter: Counter | None = None) -> rondo.Server:
    policy = StatePolicy(keys=KEYS) if state == "keys" else state
    server = rondo.Server(name, state=policy)
    seen = counter or Counter()
    server.counter = seen  # type: ignore[attr-defined]

    @server.tool
    def hello(ctx: rondo.Context) -> str:
        """Ask a name (sync)."""
        seen.hit("hello")
        answer = ctx.ask("name", name_form())
        return f"Hello {answer.content['name']}" if answer.accepted else f"no name ({answer.action})"

    @server.tool
    async def ahello(ctx: rondo.Context) -> str:
        """Ask a name (async)."""
        seen.hit("ahello")
        answer = await ctx.ask("name", name_form())
        return f"Hello {answer.content['name']}" if answer.accepted else f"no name ({answer.action})"

    @server.tool
    def two_steps(topic: str, ctx: rondo.Context) -> str:
        """Two questions, one per round."""
        seen.hit("two_steps")
        first = ctx.ask("name", name_form())
        second = ctx.ask("color", COLOR)
        return f"{topic}: {first.content['name']} likes {second.content['color']}"

    @server.tool
    def reworded(wording: str, ctx: rondo.Context) -> str:
        """The question's text depends on a module-level switch (see the test)."""
        seen.hit("reworded")
        answer = ctx.ask("name", name_form(QUESTION["text"]))
        return answer.content["name"]

    @server.tool
    def everything(ctx: rondo.Context) -> str:
        """One round asking every kind at once."""
        answers = ctx.ask_all({
            "name": name_form(),
            "page": elicit.url("Sign in", "https://example.com/login"),
            "llm": sampling.create_message(["Say hi"], 20),
            "roots": roots.list(),
        })
        return ",".join(f"{k}={type(v).__name__}" for k, v in sorted(answers.items()))

    @server.tool
    def needs(kind: str, ctx: rondo.Context) -> str:
        """Ask for one kind chosen by argument."""
        request = REQUESTS[kind]()
        ctx.ask("q", request)
        return "answered"

    @server.tool
    def careful(ctx: rondo.Context) -> str:
        """Ask only for what the client declared."""
        caps = ctx.client_capabilities
        if "elicitation" in caps:
            return ctx.ask("name", name_form()).content["name"]
        return "cannot ask"

    @server.tool
    def explicit(ctx: rondo.Context) -> Any:
        """The explicit style: read the response, else return InputRequired with state."""
        seen.hit("explicit")
        answer = elicit.response(ctx, "color", COLOR)
        if answer is elicit.MISSING:
            return InputRequired({"color": COLOR}, state={"step": 1})
        return f"{answer.action}:{answer.content and answer.content['color']} state={ctx.state}"

    @server.tool
    def countdown(n: int, ctx: rondo.Context) -> Any:
        """State-only rounds: come back n times."""
        seen.hit("countdown")
        left = n if ctx.state is None else ctx.state
        if left > 0:
            return InputRequired(state=left - 1)
        return "liftoff"

    @server.tool
    def typed(ctx: rondo.Context) -> int:
        """Has an output schema; the interim result must skip it."""
        return len(ctx.ask("name", name_form()).content["name"])

    @server.tool
    def empty(ctx: rondo.Context) -> Any:
        """Broken: neither input requests nor state."""
        return InputRequired()

    @server.tool
    def bad_request(ctx: rondo.Context) -> Any:
        """Broken: an input request that is not one."""
        return InputRequired({"x": {"method": "ping", "params": {}}})

    @server.tool
    def raw_state(ctx: rondo.Context) -> Any:
        """Under state=None, hands out and reads back a plain string."""
        if ctx.state is None:
            return InputRequired(state="plain-text-state")
        return f"got {ctx.state!r}"

    @server.tool
    def swallow(ctx: rondo.Context) -> str:
        """`except Exception` must not swallow the round's end."""
        try:
            ctx.ask("name", name_form())
        except Exception:  # noqa: BLE001 - the point of the test
            return "swallowed"
        return "asked"

    @server.prompt
    def poem(subject: str, ctx: rondo.Context) -> str:
        """A prompt that asks."""
        answer = ctx.ask("name", name_form())
        return f"A poem about {subject} for {answer.content['name']}"

    @server.prompt
    async def apoem(ctx: rondo.Context) -> str:
        """An async prompt that asks."""
        answer = await ctx.ask("name", name_form())
        return f"For {answer.content['name']}"

    @server.resource("mem://secret", mime_type="text/plain")
    def secret(ctx: rondo.Context) -> str:
        answer = ctx.ask("name", name_form())
        return f"secret for {answer.content['name']}"

    @server.resource("mem://users/{user}", mime_type="text/plain")
    async def user_page(user: str, ctx: rondo.Context) -> str:
        answer = await ctx.ask("name", name_form(f"Who is asking about {user}?"))
        return f"{user} seen by {answer.content['name']}"

    @server.completion
    def complete(ref: Any, argument: Any, context: Any) -> Any:
        return InputRequired({"name": name_form()})

    return server


QUESTION = {"text": "What is your name?"}
REQUESTS = {
    "form": lambda: name_form(),
    "url": lambda: elicit.url("Open this", "https://example.com/x"),
    "sampling": lambda: sampling.create_message(["hi"], 10),
    "sampling_tools": lambda: sampling.create_message(
        ["hi"], 10, tools=[{"name": "t", "inputSchema": {"type": "object"}}]),
    "sampling_context": lambda: sampling.create_message(["hi"], 10, include_context="thisServer"),
    "roots": lambda: roots.list(),
}


def answer_all(key: str, request: dict[str, Any]) -> Any:
    method = request["method"]
    if method == "sampling/createMessage":
        return sampled("hello there")
    if method == "roots/list":
        return roots_answer("file:///work")
    if request["params"].get("mode") == "url":
        return {"action": "accept"}
    props = request["params"]["requestedSchema"]["properties"]
    if "color" in props:
        return accept({"color": "blue"})
    return accept({"name": "Ada"})


@pytest.fixture
def server() -> rondo.Server:
    return make_server()


@pytest.fixture
def client(server) -> Client:
    return Client(server)


def first_round(client: Client, method: str, params: dict, **kw: Any) -> dict[str, Any]:
    result = client.result(method, params, **kw)
    assert result["resultType"] == "input_required", result
    return result


# -- the basic loop -------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["hello", "ahello"])
def test_ask_then_answer_sync_and_async(client, server, tool):
    interim = first_round(client, "tools/call", {"name": tool})
    assert interim["inputRequests"] == {"name": name_form()}
    assert isinstance(interim["requestState"], str)
    assert set(interim) <= {"resultType", "inputRequests", "requestState", "_meta"}
    response, rounds = client.flow("tools/call", {"name": tool}, answer_all)
    assert text_of(response["result"]) == "Hello Ada" and len(rounds) == 1
    assert response["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("prompts/get", {"name": "poem", "arguments": {"subject": "owls"}}, "A poem about owls for Ada"),
        ("prompts/get", {"name": "apoem"}, "For Ada"),
        ("resources/read", {"uri": "mem://secret"}, "secret for Ada"),
        ("resources/read", {"uri": "mem://users/bob"}, "bob seen by Ada"),
    ],
)
def test_prompts_and_resources_may_ask(client, method, params, expected):
    interim = first_round(client, method, params)
    assert "ttlMs" not in interim and "cacheScope" not in interim
    response, rounds = client.flow(method, params, answer_all)
    assert text_of(response["result"]) == expected and len(rounds) == 1
    if method == "resources/read":
        assert "ttlMs" in response["result"] and "cacheScope" in response["result"]


def test_interim_result_skips_output_schema(client):
    interim = first_round(client, "tools/call", {"name": "typed"})
    assert "structuredContent" not in interim and "content" not in interim
    response, _ = client.flow("tools/call", {"name": "typed"}, answer_all)
    assert response["result"]["structuredContent"] == 3


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_come_back_as_values(client, action):
    response, _ = client.flow("tools/call", {"name": "hello"}, lambda k, r: {"action": action})
    assert text_of(response["result"]) == f"no name ({action})"


def test_ask_interrupt_is_not_an_exception(client):
    interim = first_round(client, "tools/call", {"name": "swallow"})
    assert "name" in interim["inputRequests"]


# -- several rounds -----------------------------------------------------------------------------


def test_answers_are_carried_across_rounds(server, client):
    params = {"name": "two_steps", "arguments": {"topic": "art"}}
    response, interim = client.flow("tools/call", params, answer_all)
    assert text_of(response["result"]) == "art: Ada likes blue"
    assert [list(r["inputRequests"]) for r in interim] == [["name"], ["color"]]
    assert interim[0]["requestState"] != interim[1]["requestState"]
    assert server.counter.runs["two_steps"] == 3  # re-runs from the top every round


def test_round_three_needs_only_the_latest_answer(client):
    """The client answers only what the last round asked; earlier answers ride in the state."""
    params = {"name": "two_steps", "arguments": {"topic": "t"}}
    r1 = first_round(client, "tools/call", params)
    r2 = first_round(client, "tools/call", {**params, "requestState": r1["requestState"],
                                            "inputResponses": {"name": accept({"name": "Bo"})}})
    assert list(r2["inputRequests"]) == ["color"]
    final = client.result("tools/call", {**params, "requestState": r2["requestState"],
                                         "inputResponses": {"color": accept({"color": "red"})}})
    assert text_of(final) == "t: Bo likes red"


def test_reworded_question_is_asked_again(client):
    QUESTION["text"] = "What is your name?"
    params = {"name": "reworded", "arguments": {"wording": "a"}}
    r1 = first_round(client, "tools/call", params)
    QUESTION["text"] = "What should we call you?"
    try:
        r2 = client.result("tools/call", {**params, "requestState": r1["requestState"],
                                          "inputResponses": {"name": accept({"name": "Ada"})}})
    finally:
        QUESTION["text"] = "What is your name?"
    assert r2["resultType"] == "input_required"
    assert r2["inputRequests"]["name"]["params"]["message"] == "What should we call you?"


def test_retry_without_the_needed_answer_asks_again(client):
    r1 = first_round(client, "tools/call", {"name": "hello"})
    r2 = client.result("tools/call", {"name": "hello", "requestState": r1["requestState"]})
    assert r2["resultType"] == "input_required" and r2["inputRequests"] == r1["inputRequests"]
    r3 = client.result("tools/call", {"name": "hello", "requestState": r1["requestState"],
                                      "inputResponses": {"other": accept({"name": "x"})}})
    assert r3["resultType"] == "input_required"


def test_unknown_answer_keys_are_ignored(client):
    r1 = first_round(client, "tools/call", {"name": "hello"})
    final = client.result("tools/call", {
        "name": "hello", "requestState": r1["requestState"],
        "inputResponses": {"name": accept({"name": "Ada"}), "junk": {"whatever": 1}},
    })
    assert text_of(final) == "Hello Ada"


def test_state_only_rounds(server, client):
    response, interim = client.flow("tools/call", {"name": "countdown", "arguments": {"n": 3}},
                                    answer_all)
    assert text_of(response["result"]) == "liftoff"
    assert len(interim) == 3
    assert all(set(r) == {"resultType", "requestState", "_meta"} for r in interim)


def test_explicit_style_with_user_state(client):
    r1 = first_round(client, "tools/call", {"name": "explicit"})
    assert r1["inputRequests"] == {"color": COLOR}
    final = client.result("tools/call", {"name": "explicit", "requestState": r1["requestState"],
                                         "inputResponses": {"color": accept({"color": "red"})}})
    assert text_of(final) == "accept:red state={'step': 1}"


def test_state_is_sealed_not_plain(client):
    r1 = first_round(client, "tools/call", {"name": "explicit"})
    assert "step" not in r1["requestState"]  # not readable JSON on the wire


# -- answers that are wrong -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"action": "yes"},
        {},
        {"action": "accept", "content": {"name": 5}},
        {"action": "accept", "content": {}},
        {"action": "accept", "content": "Ada"},
    ],
)
def test_malformed_answer_is_invalid_params_naming_the_key(server, client, bad):
    r1 = first_round(client, "tools/call", {"name": "hello"})
    error = client.error("tools/call", {"name": "hello", "requestState": r1["requestState"],
                                        "inputResponses": {"name": bad}})
    assert error["code"] == INVALID_PARAMS and "'name'" in error["message"]


@pytest.mark.parametrize(
    ("kind", "bad"),
    [
        ("sampling", {"role": "assistant"}),
        ("sampling", {"content": {"type": "text", "text": "x"}}),
        ("roots", {"roots": [{"uri": "https://not-a-file"}]}),
        ("roots", {"roots": "file:///x"}),
        ("url", {"action": "maybe"}),
    ],
)
def test_malformed_answers_of_every_kind(client, kind, bad):
    params = {"name": "needs", "arguments": {"kind": kind}}
    r1 = first_round(client, "tools/call", params)
    error = client.error("tools/call", {**params, "requestState": r1["requestState"],
                                        "inputResponses": {"q": bad}})
    assert error["code"] == INVALID_PARAMS and "'q'" in error["message"]


@pytest.mark.parametrize(
    "extra",
    [
        {"inputResponses": []},
        {"inputResponses": "x"},
        {"inputResponses": {"name": "accept"}},
        {"inputResponses": {"name": None}},
        {"requestState": 5},
        {"requestState": {"a": 1}},
        {"requestState": None},
    ],
)
@pytest.mark.parametrize("state", ["keys", None])
def test_broken_retry_envelope_is_refused_before_the_handler_runs(extra, state):
    counter = Counter()
    client = Client(make_server(state=state, counter=counter))
    error = client.error("tools/call", {"name": "hello", **extra})
    assert error["code"] == INVALID_PARAMS
    assert counter.runs.get("hello", 0) == 0


# -- sealed state refusals ----------------------------------------------------------------------


def test_tampered_state_is_invalid_params(client):
    token = first_round(client, "tools/call", {"name": "hello"})["requestState"]
    for forged in (token[:-2] + ("AA" if token[-2:] != "AA" else "BB"), token + "x", "", "nonsense"):
        error = client.error("tools/call", {"name": "hello", "requestState": forged,
                                            "inputResponses": {"name": accept({"name": "Ada"})}})
        assert error["code"] == INVALID_PARAMS


def test_state_for_other_arguments_is_refused(client):
    params = {"name": "two_steps", "arguments": {"topic": "a"}}
    token = first_round(client, "tools/call", params)["requestState"]
    error = client.error("tools/call", {"name": "two_steps", "arguments": {"topic": "b"},
                                        "requestState": token,
                                        "inputResponses": {"name": accept({"name": "Ada"})}})
    assert error["code"] == INVALID_PARAMS


def test_state_for_another_tool_or_method_is_refused(client):
    token = first_round(client, "tools/call", {"name": "hello"})["requestState"]
    assert client.error("tools/call", {"name": "ahello", "requestState": token})["code"] == INVALID_PARAMS
    assert client.error("resources/read", {"uri": "mem://secret", "requestState": token})["code"] == INVALID_PARAMS


def test_state_from_another_server_name_is_refused():
    a = Client(make_server("alpha"))
    b = Client(make_server("beta"))
    token = first_round(a, "tools/call", {"name": "hello"})["requestState"]
    assert b.error("tools/call", {"name": "hello", "requestState": token})["code"] == INVALID_PARAMS


def test_expired_state_is_refused():
    now = [1_000_000.0]
    policy = StatePolicy(keys=KEYS, ttl=60, clock=lambda: now[0])
    client = Client(make_server(state=policy))
    token = first_round(client, "tools/call", {"name": "hello"})["requestState"]
    now[0] += 3600
    error = client.error("tools/call", {"name": "hello", "requestState": token,
                                        "inputResponses": {"name": accept({"name": "Ada"})}})
    assert error["code"] == INVALID_PARAMS


def test_two_replicas_share_nothing_but_keys():
    """Rounds alternate between two Server instances (two replicas): no state between rounds."""
    counters = Counter()
    replicas = [Client(make_server(counter=counters)), Client(make_server(counter=counters))]
    params = {"name": "two_steps", "arguments": {"topic": "x"}}
    extra: dict[str, Any] = {}
    for round_no in range(3):
        result = replicas[round_no % 2].result("tools/call", {**params, **extra})
        if result["resultType"] == "complete":
            break
        extra = {"requestState": result["requestState"],
                 "inputResponses": {k: answer_all(k, r) for k, r in result["inputRequests"].items()}}
    assert text_of(result) == "x: Ada likes blue" and round_no == 2


def test_a_replica_with_other_keys_refuses():
    a = Client(make_server())
    b = Client(make_server(state=StatePolicy(keys=[("k2", b"x" * 32)])))
    token = first_round(a, "tools/call", {"name": "hello"})["requestState"]
    assert b.error("tools/call", {"name": "hello", "requestState": token})["code"] == INVALID_PARAMS


# -- state=None ------------------------------------------------------------------------------------


def test_state_none_hands_the_raw_string_to_the_handler():
    client = Client(make_server(state=None))
    r1 = first_round(client, "tools/call", {"name": "raw_state"})
    assert r1["requestState"] == "plain-text-state"
    final = client.result("tools/call", {"name": "raw_state", "requestState": "anything at all"})
    assert text_of(final) == "got 'anything at all'"


def test_state_none_single_question_still_works():
    client = Client(make_server(state=None))
    response, interim = client.flow("tools/call", {"name": "hello"}, answer_all)
    assert text_of(response["result"]) == "Hello Ada"
    assert "requestState" not in interim[0]


def test_state_none_cannot_carry_answers_across_rounds():
    client = Client(make_server(state=None))
    params = {"name": "two_steps", "arguments": {"topic": "x"}}
    error = client.error("tools/call", {**params, "inputResponses": {"name": accept({"name": "A"})}})
    assert error["code"] == INTERNAL_ERROR


# -- placement and admission ----------------------------------------------------------------------


def test_only_three_methods_may_answer_input_required(client):
    params = {"ref": {"type": "ref/prompt", "name": "poem"}, "argument": {"name": "subject", "value": ""}}
    assert client.error("completion/complete", params)["code"] == INTERNAL_ERROR


def test_ctx_ask_from_anywhere_else_is_internal_error():
    """A completion hook that kept a Context from a tool call and asks on it."""
    server = rondo.Server("leak", state=None)
    kept: dict[str, Any] = {}

    @server.tool
    def keep(ctx: rondo.Context) -> str:
        """Keep the context."""
        kept["ctx"] = ctx
        return "kept"

    @server.prompt
    def p() -> str:
        """P."""
        return "x"

    @server.completion
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        kept["ctx"].ask("name", name_form())
        return []

    client = Client(server)
    client.tool("keep")
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    assert client.error("completion/complete", params)["code"] == INTERNAL_ERROR


def test_empty_input_required_is_internal_error(client):
    assert client.error("tools/call", {"name": "empty"})["code"] == INTERNAL_ERROR


def test_invalid_input_request_is_internal_error(client):
    assert client.error("tools/call", {"name": "bad_request"})["code"] == INTERNAL_ERROR


@pytest.mark.parametrize(
    ("kind", "caps", "required"),
    [
        ("form", {}, {"elicitation": {"form": {}}}),
        ("form", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("url", {}, {"elicitation": {"url": {}}}),
        ("url", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("url", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ("sampling", {"elicitation": {}}, {"sampling": {}}),
        ("sampling_tools", {}, {"sampling": {"tools": {}}}),
        ("sampling_tools", {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("sampling_context", {"sampling": {}}, {"sampling": {"context": {}}}),
        ("roots", {"sampling": {}}, {"roots": {}}),
    ],
)
def test_admission_checks_this_requests_capabilities(client, kind, caps, required):
    response = client.call("tools/call", {"name": "needs", "arguments": {"kind": kind}}, caps=caps)
    error = response["error"]
    assert error["code"] == MISSING_CAPABILITY
    assert error["data"] == {"requiredCapabilities": required}


@pytest.mark.parametrize(
    ("kind", "caps"),
    [
        ("form", {"elicitation": {}}),
        ("form", {"elicitation": {"form": {}}}),
        ("url", {"elicitation": {"url": {}}}),
        ("sampling", {"sampling": {}}),
        ("sampling_tools", {"sampling": {"tools": {}}}),
        ("roots", {"roots": {}}),
    ],
)
def test_admission_passes_declared_capabilities(client, kind, caps):
    result = client.result("tools/call", {"name": "needs", "arguments": {"kind": kind}}, caps=caps)
    assert result["resultType"] == "input_required"


def test_missing_capabilities_are_merged_into_one_object(client):
    error = client.error("tools/call", {"name": "everything"}, caps={"elicitation": {"form": {}}})
    assert error["code"] == MISSING_CAPABILITY
    assert error["data"]["requiredCapabilities"] == {
        "elicitation": {"url": {}}, "sampling": {}, "roots": {},
    }
    merged = client.error("tools/call", {"name": "needs", "arguments": {"kind": "sampling_tools"}},
                          caps={})
    assert merged["data"]["requiredCapabilities"] == {"sampling": {"tools": {}}}


def test_capabilities_are_read_per_request(client):
    """The retry may declare other capabilities; the server re-evaluates every time."""
    r1 = first_round(client, "tools/call", {"name": "two_steps", "arguments": {"topic": "x"}})
    error = client.error("tools/call", {"name": "two_steps", "arguments": {"topic": "x"},
                                        "requestState": r1["requestState"],
                                        "inputResponses": {"name": accept({"name": "A"})}},
                         caps={})
    assert error["code"] == MISSING_CAPABILITY


def test_handler_can_ask_only_for_what_is_supported(client):
    assert text_of(client.tool("careful", caps={})) == "cannot ask"
    response, _ = client.flow("tools/call", {"name": "careful"}, answer_all)
    assert text_of(response["result"]) == "Ada"


def test_every_kind_in_one_round(client):
    interim = first_round(client, "tools/call", {"name": "everything"})
    assert sorted(interim["inputRequests"]) == ["llm", "name", "page", "roots"]
    response, _ = client.flow("tools/call", {"name": "everything"}, answer_all)
    assert text_of(response["result"]) == (
        "llm=SamplingResult,name=ElicitResult,page=ElicitResult,roots=RootList"
    )


# -- the builders ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Shipping:
    city: str
    express: bool = False


def test_builders_make_the_wire_shapes():
    assert name_form("Hi?") == {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Hi?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
    }
    from_class = elicit.form("Ship where?", Shipping)["params"]["requestedSchema"]
    assert from_class["properties"]["city"] == {"type": "string"}
    assert from_class["required"] == ["city"]
    assert elicit.url("Go", "https://example.com/a") == {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Go", "url": "https://example.com/a"},
    }
    assert sampling.create_message("Hi", 5) == {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                   "maxTokens": 5},
    }
    assert roots.list() == {"method": "roots/list", "params": {}}


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (lambda: elicit.url("Go", "ftp://example.com"), "^url: must use http or https, not 'ftp'"),
        (lambda: elicit.url("Go", "https://user:pw@example.com"), "^url: must not carry user info"),
        (lambda: elicit.form("", {"type": "object", "properties": {}}), "^message: must not be empty"),
        (lambda: elicit.form("Nested?", {"type": "object", "properties": {"a": {"type": "object"}}}),
         "^requestedSchema.properties.a.type: a form field cannot be a nested object"),
        (lambda: sampling.create_message([], 5), "^messages: must hold at least one message"),
        (lambda: sampling.create_message("hi", 0), "^maxTokens: must be a positive integer"),
    ],
)
def test_builders_refuse_what_the_wire_forbids(build, needle):
    with pytest.raises(ValueError, match=needle):
        build()


def test_async_sleep_between_rounds_does_not_matter():
    """Nothing is kept between rounds, so time between them (under the TTL) changes nothing."""
    client = Client(make_server())

    async def later() -> None:
        await asyncio.sleep(0.01)

    r1 = first_round(client, "tools/call", {"name": "ahello"})
    asyncio.run(later())
    final = client.result("tools/call", {"name": "ahello", "requestState": r1["requestState"],
                                         "inputResponses": {"name": accept({"name": "Z"})}})
    assert text_of(final) == "Hello Z"



# -- hypothesis: no answer a client can send makes the server fail -----------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_answers = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"action": st.sampled_from(["accept", "decline", "cancel", "ok"]) | _json},
        optional={"content": st.fixed_dictionaries({}, optional={"name": _json, "color": _json}) | _json,
                  "role": _json, "model": _json, "roots": _json},
    ),
)
_FUZZ = Client(make_server())
_FUZZ_STATE = {
    tool: first_round(_FUZZ, "tools/call", {"name": "needs", "arguments": {"kind": tool}})["requestState"]
    for tool in ("form", "url", "sampling", "roots")
}


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(sorted(_FUZZ_STATE)), answer=_answers)
def test_arbitrary_answers_never_crash_the_server(kind, answer):
    params = {"name": "needs", "arguments": {"kind": kind}, "requestState": _FUZZ_STATE[kind],
              "inputResponses": {"q": answer}}
    response = _FUZZ.call("tools/call", params)
    if "error" in response:
        assert response["error"]["code"] == INVALID_PARAMS, response
        assert "'q'" in response["error"]["message"]
    else:
        assert text_of(response["result"]) == "answered"
