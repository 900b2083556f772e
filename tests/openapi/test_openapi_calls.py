"""Generated tools calling a real FastAPI app in-process: arguments to requests, answers to
results, errors with bounded, credential-free excerpts, bounds, redirects, and the
confirmation round before every unsafe call (with the sealed digest of the exact request)."""

from __future__ import annotations

import json
import warnings

import pytest

import rondo
from rondo.openapi import Route, from_fastapi
from tests.helpers.helpers_core import INVALID_PARAMS, Client, accept
from tests.helpers.openapi_app import TOKEN, make_app

FORM_CAPS = {"elicitation": {"form": {}}}
SERVICE = {"authorization": f"Bearer {TOKEN}"}


def build(**options):
    app = make_app()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # this document needs no skipping
        server = from_fastapi(app, **options)
    return app, server


def confirmed(client, name, arguments, *, answer=True):
    """Run the confirmation round: returns (asked question, final result)."""
    first = client.tool(name, arguments)
    assert first["resultType"] == "input_required"
    (key, question), = first["inputRequests"].items()
    assert key == "confirm" and question["method"] == "elicitation/create"
    retry = client.tool(name, arguments, ) if False else client.result("tools/call", {
        "name": name, "arguments": arguments,
        "inputResponses": {"confirm": accept({"confirm": answer})},
        "requestState": first["requestState"]})
    return question["params"]["message"], retry, first["requestState"]


def test_path_query_and_header_arguments_reach_the_app():
    _, server = build()
    client = Client(server, caps=FORM_CAPS)
    one = client.tool("get_item", {"item_id": 2, "x-trace": "t1"})
    assert one["structuredContent"] == {"id": 2, "name": "lamp", "price": 35.5, "tags": []}
    listed = client.tool("list_items", {"ids": [1, 2], "limit": 1})
    assert [i["id"] for i in listed["structuredContent"]] == [1]
    tagged = client.tool("list_items", {"tag": "home"})
    assert [i["name"] for i in tagged["structuredContent"]] == ["kettle"]


def test_not_found_is_a_tool_error_with_status_and_excerpt():
    _, server = build()
    result = Client(server).tool("get_item", {"item_id": 99})
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        'HTTP 404 Not Found from GET /items/{item_id}: {"detail":"no item 99"}')


def test_unsafe_call_asks_with_the_exact_request_and_runs_once_accepted():
    app, server = build(headers=SERVICE)
    client = Client(server, caps=FORM_CAPS)
    shown, result, _ = confirmed(client, "create_item", {"name": "mug", "price": 4.5})
    assert shown.splitlines()[2:] == [
        "POST http://fastapi.local/items",
        'body: {"name":"mug","price":4.5}',
    ]
    assert result["structuredContent"] == {"id": 3, "name": "mug", "price": 4.5, "tags": []}
    assert 3 in app.state.items


def test_a_declined_confirmation_sends_nothing():
    app, server = build(headers=SERVICE)
    client = Client(server, caps=FORM_CAPS)
    _, result, _ = confirmed(client, "delete_item", {"item_id": 1}, answer=False)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("not sent: the user did not confirm DELETE")
    assert app.state.deleted == [] and 1 in app.state.items


def test_state_from_another_request_is_refused_and_a_fresh_call_asks_again():
    app, server = build(headers=SERVICE)
    client = Client(server, caps=FORM_CAPS)
    first = client.tool("delete_item", {"item_id": 1})
    # The accepted answer and state for item 1, replayed with item 2: the state binds the call.
    error = client.error("tools/call", {
        "name": "delete_item", "arguments": {"item_id": 2},
        "inputResponses": {"confirm": accept({"confirm": True})},
        "requestState": first["requestState"]})
    assert error["code"] == INVALID_PARAMS
    again = client.tool("delete_item", {"item_id": 2})
    assert again["resultType"] == "input_required"
    assert "DELETE http://fastapi.local/items/2" in again["inputRequests"]["confirm"]["params"]["message"]
    assert app.state.deleted == []


def test_an_answer_without_the_sealed_digest_is_asked_again():
    app, server = build(headers=SERVICE)
    client = Client(server, caps=FORM_CAPS)
    # An accepted answer with no requestState: nothing binds it to a request, so no send.
    result = client.result("tools/call", {
        "name": "delete_item", "arguments": {"item_id": 1},
        "inputResponses": {"confirm": accept({"confirm": True})}})
    assert result["resultType"] == "input_required"
    assert app.state.deleted == []


def test_a_changed_request_behind_the_same_arguments_is_asked_again():
    # Two replicas sharing keys but configured with different API base URLs: the state from one
    # opens on the other (same server, tool, arguments), but the request it would send is not
    # the one the user saw, so the user is asked again and nothing is sent.
    keys = rondo.StatePolicy()
    app, first_replica = build(headers=SERVICE, state=keys)
    other_app, second_replica = build(headers=SERVICE, state=keys,
                                      base_url="http://fastapi.local/v2")
    first = Client(first_replica, caps=FORM_CAPS).tool("delete_item", {"item_id": 1})
    retry = Client(second_replica, caps=FORM_CAPS).result("tools/call", {
        "name": "delete_item", "arguments": {"item_id": 1},
        "inputResponses": {"confirm": accept({"confirm": True})},
        "requestState": first["requestState"]})
    assert retry["resultType"] == "input_required"
    assert "DELETE http://fastapi.local/v2/items/1" in \
        retry["inputRequests"]["confirm"]["params"]["message"]
    assert app.state.deleted == [] and other_app.state.deleted == []


def test_clients_without_elicitation_are_refused_or_run_as_configured():
    app, server = build(headers=SERVICE)
    refused = Client(server, caps={}).tool("delete_item", {"item_id": 1})
    assert refused["isError"] is True
    assert "cannot ask its user (no elicitation capability); nothing was sent" in \
        refused["content"][0]["text"]
    assert app.state.deleted == []
    app, server = build(headers=SERVICE, unconfirmed="run")
    ran = Client(server, caps={}).tool("delete_item", {"item_id": 1})
    assert ran["structuredContent"] == {"deleted": 1} and app.state.deleted == [1]


def test_confirmation_can_be_turned_off_by_route_and_on_for_a_get():
    app, server = build(headers=SERVICE, routes=[Route(methods=["POST"], confirm=False),
                                                 Route(pattern="^/whoami$", confirm=True)])
    client = Client(server, caps=FORM_CAPS)
    created = client.tool("create_item", {"name": "cup", "price": 1})
    assert created["structuredContent"]["name"] == "cup"
    assert client.tool("whoami")["resultType"] == "input_required"


def test_the_client_token_is_never_forwarded_and_the_auth_hook_is():
    seen = []

    def hook(ctx: rondo.Context) -> dict[str, str]:
        seen.append(ctx.request_method)
        return {"Authorization": f"Bearer {TOKEN}"}

    app, server = build(auth_headers=hook)
    client = Client(server, caps=FORM_CAPS)
    who = client.tool("whoami", {"session": "abc"})
    assert who["structuredContent"] == {"session": "abc", "authorization": f"Bearer {TOKEN}"}
    _, created, _ = confirmed(client, "create_item", {"name": "pen", "price": 2})
    assert created["structuredContent"]["name"] == "pen" and seen == ["tools/call"] * 2


def test_without_credentials_the_api_answers_401_and_the_error_says_so():
    _, server = build(unconfirmed="run")
    result = Client(server, caps={}).tool("create_item", {"name": "x", "price": 1})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("HTTP 401 Unauthorized from POST /items")


def test_credentials_echoed_by_the_api_are_blanked_from_the_excerpt():
    _, server = build(headers=SERVICE)
    result = Client(server).tool("leak")
    text = result["content"][0]["text"]
    assert TOKEN not in text
    assert text == 'HTTP 500 Internal Server Error from GET /leak: {"detail":"crashed while ' \
                   'handling [redacted]"}'


def test_form_and_multipart_bodies():
    _, server = build(unconfirmed="run")
    client = Client(server, caps={})
    login = client.tool("login", {"username": "ada", "remember": True})
    assert login["structuredContent"] == {"user": "ada", "remember": True}
    upload = client.tool("upload", {"note": "n1", "file": "hello file"})
    assert upload["structuredContent"] == {"note": "n1", "size": 10, "text": "hello file"}


@pytest.mark.parametrize("name", ["../items", "..", ".", "a/b", "%2e%2e", "%252e%252e",
                                  "a%2Fb", "a%252Fb", "a\\b"])
def test_path_arguments_that_would_leave_their_segment_are_refused(name):
    _, server = build()
    result = Client(server).tool("read_file", {"name": name})
    assert result["isError"] is True
    assert "would leave its path segment" in result["content"][0]["text"]


def test_ordinary_path_values_are_escaped_and_arrive_intact():
    _, server = build()
    result = Client(server).tool("read_file", {"name": "my file?#.txt"})
    assert result["content"][0]["text"] == "file my file?#.txt"


def test_timeouts_and_response_size_are_bounded():
    _, server = build(timeout=0.2, max_response_bytes=1000)
    client = Client(server)
    slow = client.tool("slow", {"seconds": 5})
    assert slow["isError"] is True
    assert slow["content"][0]["text"] == "GET http://fastapi.local/slow timed out after 0.2 s"
    assert client.tool("big", {"size": 1000})["content"][0]["text"] == "x" * 1000
    big = client.tool("big", {"size": 1001})
    assert big["isError"] is True
    assert big["content"][0]["text"] == "the response is larger than 1000 bytes (1001)"


def test_redirects_within_the_origin_are_followed_and_others_refused():
    _, server = build()
    client = Client(server)
    home = client.tool("away", {"to": "/items/1"})
    assert '"kettle"' in home["content"][0]["text"]
    out = client.tool("away", {"to": "http://169.254.169.254/latest/meta-data"})
    assert out["isError"] is True
    assert out["content"][0]["text"].startswith("refused a redirect to another host "
                                                "(http://169.254.169.254)")


def test_unknown_and_missing_arguments_are_tool_errors():
    _, server = build()
    client = Client(server)
    unknown = client.tool("get_item", {"item_id": 1, "evil": "x"})
    assert unknown["isError"] is True and unknown["content"][0]["text"] == \
        "get_item: unknown argument 'evil'"
    missing = client.tool("get_item", {})
    assert missing["isError"] is True and "item_id" in missing["content"][0]["text"]


def test_header_arguments_cannot_inject_lines():
    _, server = build()
    result = Client(server).tool("get_item", {"item_id": 1, "x-trace": "a\r\nX-Evil: 1"})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "get_item: header 'x-trace' must not contain line breaks"


def test_safe_reads_as_resources_and_templates():
    _, server = build(routes=[Route(kind="template", pattern=r"^/items/\{item_id\}$",
                                    methods=["GET"]),
                              Route(kind="resource", pattern="^/whoami$")], name="shop")
    assert "get_item" not in server.tools and "whoami" not in server.tools
    client = Client(server)
    read = client.result("resources/read", {"uri": "openapi://shop/items/2"})
    assert json.loads(read["contents"][0]["text"]) == {"id": 2, "name": "lamp", "price": 35.5,
                                                       "tags": []}
    missing = client.error("resources/read", {"uri": "openapi://shop/items/9"})
    assert missing["code"] == INVALID_PARAMS
    assert missing["message"] == ('HTTP 404 Not Found from GET /items/{item_id}: '
                                  '{"detail":"no item 9"}')
    who = client.result("resources/read", {"uri": "openapi://shop/whoami"})
    assert who["contents"][0]["text"] == '{"session":null,"authorization":null}'


def test_a_legacy_client_is_asked_over_its_session_and_the_call_runs():
    import asyncio

    from rondo.client import Client as RondoClient

    app, server = build(headers=SERVICE)
    asked = []

    def yes(request):
        asked.append(request.message)
        return {"action": "accept", "content": {"confirm": True}}

    async def main():
        async with RondoClient(server, protocol="2025-11-25", on_elicit=yes) as client:
            return await client.call_tool("delete_item", {"item_id": 1})

    result = asyncio.run(main())
    assert result.structured_content == {"deleted": 1} and app.state.deleted == [1]
    assert asked == ["Send this request?\n\nDELETE http://fastapi.local/items/1"]


def test_an_accepted_confirmation_replays_only_without_once():
    def replay(state_policy):
        app, server = build(headers=SERVICE, state=state_policy)
        client = Client(server, caps=FORM_CAPS)
        first = client.tool("delete_item", {"item_id": 1})
        retry = {"name": "delete_item", "arguments": {"item_id": 1},
                 "inputResponses": {"confirm": accept({"confirm": True})},
                 "requestState": first["requestState"]}
        assert client.result("tools/call", retry)["structuredContent"] == {"deleted": 1}
        return app, client.call("tools/call", retry)

    app, again = replay(rondo.StatePolicy(once=True))
    assert again["error"]["code"] == INVALID_PARAMS and app.state.deleted == [1]
    app, again = replay(rondo.StatePolicy())  # the default: the API's own 404 this time
    assert again["result"]["isError"] is True and app.state.deleted == [1]
    assert again["result"]["content"][0]["text"].startswith("HTTP 404")


def test_the_mcp_clients_own_token_is_not_forwarded_over_http():
    import asyncio

    from tests.helpers.helpers_core import asgi_client, http_headers, http_messages, request

    _, server = build()
    message = request("tools/call", {"name": "whoami", "arguments": {}})

    async def main():
        async with asgi_client(server.asgi()) as http:
            headers = http_headers(message, authorization="Bearer the-mcp-clients-token",
                                   cookie="session=mcp-cookie")
            return await http.post("/mcp", json=message, headers=headers)

    answer = http_messages(asyncio.run(main()), "tools/call")[0]
    assert answer["result"]["structuredContent"] == {"session": None, "authorization": None}
