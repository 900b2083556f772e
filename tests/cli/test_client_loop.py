"""The input_required driver (rondo.client.loop): pure, with the transport call injected."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rondo.client.errors import InputRequiredError
from rondo.client.loop import Unanswerable, drive, read_interim, result_type, retry_params

ASK = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}


class Server:
    """Scripted results, recording what the driver sent."""

    def __init__(self, *results: dict[str, Any], repeat_last: bool = False) -> None:
        self.results = list(results)
        self.repeat_last = repeat_last
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(params)
        if len(self.results) == 1 and self.repeat_last:
            return self.results[0]
        return self.results.pop(0)


async def answer_yes(requests: dict[str, Any]) -> dict[str, Any]:
    return {key: {"action": "accept", "content": {}} for key in requests}


class Sleeps:
    def __init__(self) -> None:
        self.pauses: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.pauses.append(seconds)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_complete_result_needs_no_retry() -> None:
    server = Server({"resultType": "complete", "content": []})
    assert run(drive(server, {"name": "t"}, answer=answer_yes)) == {"resultType": "complete", "content": []}
    assert len(server.sent) == 1


def test_missing_result_type_is_complete() -> None:
    server = Server({"content": [{"type": "text", "text": "old server"}]})
    assert result_type(server.results[0]) == "complete"
    run(drive(server, {"name": "t"}, answer=answer_yes))
    assert len(server.sent) == 1


def test_retry_repeats_params_with_answers_and_exact_state() -> None:
    state = '{"a": 1}  \u00e9\\n'
    server = Server(
        {"resultType": "input_required", "inputRequests": {"k1": ASK, "k2": ASK}, "requestState": state},
        {"resultType": "complete", "content": []},
    )
    params = {"name": "t", "arguments": {"x": [1, 2]}}
    run(drive(server, params, answer=answer_yes))
    first, retry = server.sent
    assert first == params
    assert retry["name"] == "t" and retry["arguments"] == {"x": [1, 2]}
    assert set(retry["inputResponses"]) == {"k1", "k2"}
    assert retry["requestState"] is state or retry["requestState"] == state


def test_no_state_means_none_sent() -> None:
    server = Server({"resultType": "input_required", "inputRequests": {"k": ASK}}, {"resultType": "complete"})
    run(drive(server, {"name": "t"}, answer=answer_yes))
    assert "requestState" not in server.sent[1]


def test_state_only_rounds_are_paced_and_reset_after_a_question() -> None:
    only_state = {"resultType": "input_required", "requestState": "s"}
    asking = {"resultType": "input_required", "inputRequests": {"k": ASK}, "requestState": "s"}
    server = Server(*[only_state] * 5, asking, only_state, {"resultType": "complete"})
    sleeps = Sleeps()
    run(drive(server, {}, answer=answer_yes, sleep=sleeps))
    assert sleeps.pauses == [0.05, 0.1, 0.2, 0.25, 0.25, 0.05]
    assert all("inputResponses" not in p for p in server.sent[1:6])
    assert server.sent[6]["inputResponses"] == {"k": {"action": "accept", "content": {}}}


def test_round_cap_keeps_the_last_result() -> None:
    endless = {"resultType": "input_required", "inputRequests": {"k": ASK}, "requestState": "again"}
    server = Server(endless, repeat_last=True)
    with pytest.raises(InputRequiredError, match=r"^server still asked for input after 3 rounds \(cap 3\)$") as caught:
        run(drive(server, {}, answer=answer_yes, max_rounds=3))
    assert caught.value.reason == "rounds"
    assert caught.value.rounds == 3 and len(server.sent) == 4
    assert caught.value.last_result == endless


def test_deadline_bounds_the_whole_exchange() -> None:
    endless = {"resultType": "input_required", "requestState": "again"}
    server = Server(endless, repeat_last=True)
    with pytest.raises(InputRequiredError, match=r"^input_required exchange passed its 0\.3 s deadline$") as caught:
        run(drive(server, {}, answer=answer_yes, max_rounds=10_000, deadline=0.3))
    assert caught.value.reason == "deadline"
    assert caught.value.last_result == endless


def test_unanswerable_request_stops_before_any_retry() -> None:
    async def refuse(requests: dict[str, Any]) -> dict[str, Any]:
        raise Unanswerable("no handler for sampling")

    server = Server({"resultType": "input_required", "inputRequests": {"k": ASK}})
    with pytest.raises(InputRequiredError, match="^no handler for sampling$") as caught:
        run(drive(server, {}, answer=refuse))
    assert caught.value.reason == "unanswerable"
    assert len(server.sent) == 1


@pytest.mark.parametrize(("bad", "needle"), [
    ({"resultType": "input_required"}, "has neither inputRequests nor requestState"),
    ({"resultType": "input_required", "requestState": 7}, "requestState must be a string"),
    ({"resultType": "input_required", "inputRequests": []}, "inputRequests must be an object"),
    ({"resultType": "input_required", "inputRequests": {"k": {"params": {}}}},
     r"inputRequests\['k'\] is not an input request"),
])
def test_malformed_interim_results_are_refused(bad: dict[str, Any], needle: str) -> None:
    with pytest.raises(InputRequiredError, match="^server sent a malformed input_required result: .*" + needle) as caught:
        run(drive(Server(bad), {}, answer=answer_yes))
    assert caught.value.reason == "malformed"
    with pytest.raises(ValueError, match=needle):
        read_interim(bad)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(params=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
       state=st.none() | st.text(),
       responses=st.none() | st.dictionaries(st.text(min_size=1, max_size=5), st.just({"action": "decline"}), max_size=3))
def test_retry_params_keep_the_original_and_echo_the_state(params: dict[str, Any], state: str | None,
                                                          responses: dict[str, Any] | None) -> None:
    out = retry_params(params, responses, state)
    for key, value in params.items():
        if key not in ("inputResponses", "requestState"):
            assert out[key] == value
    assert out.get("requestState") == state
    assert ("requestState" in out) == (state is not None)
    assert out.get("inputResponses") == (responses or None)
