"""GitHub's REST description (npm @octokit/openapi, pinned in tests/peers/openapi; installed by
scripts/setup.sh): 1,223 operations nobody here wrote, built into one server whose tool count
and a sample of schemas are checked against the document itself. Calls go to a local stand-in
(httpx.MockTransport), never to api.github.com."""

from __future__ import annotations

import asyncio
import json
import re
import warnings
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator

from rondo.client import Client
from rondo.openapi import from_openapi

DOCUMENT = (Path(__file__).resolve().parents[1] / "peers" / "openapi" / "node_modules" / "@octokit"
            / "openapi" / "generated" / "api.github.com.json")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
pytestmark = pytest.mark.slow  # the integration tier, where a skip (peers missing) fails the lane

if not DOCUMENT.exists():
    pytest.skip("tests/peers/openapi is not installed: run bash scripts/setup.sh",
                allow_module_level=True)


@pytest.fixture(scope="module")
def github():
    doc = json.loads(DOCUMENT.read_text())
    seen: list[httpx.Request] = []

    def standin(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"full_name": "octo/hello", "id": 1})

    client = httpx.AsyncClient(base_url="https://api.github.com",
                               transport=httpx.MockTransport(standin))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing in this document is skipped
        server = from_openapi(DOCUMENT, client, unconfirmed="run")
        asyncio.run(_list(server))  # the first tools/list translates every tool's schemas
    return doc, server, seen


async def _list(server):
    async with Client(server) as mcp:
        return await mcp.list_tools()


def _operations(doc):
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item, item[method]




def _deref(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        target = doc
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def test_every_operation_is_a_tool_with_a_valid_unique_name(github):
    doc, server, _ = github
    operations = list(_operations(doc))
    assert len(operations) == 1223
    assert len(server.tools) == len(operations)
    ids = {op["operationId"] for *_, op in operations}

    for name in server.tools:
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", name)
    assert {re.sub(r"[^A-Za-z0-9_.-]+", "_", i) for i in ids} == set(server.tools)


def test_a_sample_of_schemas_matches_the_document(github):
    doc, server, _ = github
    for _path, _method, item, op in list(_operations(doc))[::25]:  # 49 operations, every kind
        tool = server.tools[re.sub(r"[^A-Za-z0-9_.-]+", "_", op["operationId"])]
        schema = tool.wire["inputSchema"]
        Draft202012Validator.check_schema(schema)
        params = [_deref(doc, p) for p in [*item.get("parameters", []), *op.get("parameters", [])]]
        expected = [p["name"] for p in params]
        body_required: list[str] = []
        if "requestBody" in op:
            content = _deref(doc, op["requestBody"])["content"]
            media = next(iter(content))
            body = _deref(doc, content[media].get("schema", {}))
            if media == "application/json" and body.get("properties") and not any(
                    k in body for k in ("allOf", "oneOf", "anyOf")) and \
                    body.get("additionalProperties") in (None, False):
                # a body property named like a parameter gets the `_body` suffix
                renamed = {k: f"{k}_body" if k in expected else k for k in body["properties"]}
                expected += list(renamed.values())
                if _deref(doc, op["requestBody"]).get("required"):
                    body_required = [renamed[k] for k in body.get("required", [])]
            else:
                expected.append("body")
                if _deref(doc, op["requestBody"]).get("required"):
                    body_required = ["body"]
        assert list(schema["properties"]) == expected, op["operationId"]
        required = [p["name"] for p in params if p.get("required")] + body_required
        assert sorted(schema.get("required", [])) == sorted(required), op["operationId"]
        assert tool.wire["description"].startswith(op["summary"])


def test_create_commit_status_in_detail(github):
    doc, server, _ = github
    schema = server.tools["repos_create-commit-status"].wire["inputSchema"]
    assert schema["required"] == ["owner", "repo", "sha", "state"]
    op = doc["paths"]["/repos/{owner}/{repo}/statuses/{sha}"]["post"]
    body = op["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert schema["properties"]["state"]["enum"] == body["state"]["enum"]
    # 3.0 nullable became a null type
    assert schema["properties"]["target_url"]["type"] == ["string", "null"]
    output = server.tools["repos_create-commit-status"].wire["outputSchema"]
    Draft202012Validator.check_schema(output)
    assert output["type"] == "object"
    assert output["properties"]["creator"] == {"$ref": "#/$defs/nullable-simple-user"}
    assert output["$defs"]["nullable-simple-user"]["type"] == ["object", "null"]


def test_calls_reach_the_stand_in_with_encoded_paths(github):
    _, server, seen = github

    async def main():
        async with Client(server) as client:
            got = await client.call_tool("repos_get", {"owner": "octo", "repo": "hello"})
            assert got.structured_content == {"full_name": "octo/hello", "id": 1}
            ref = await client.call_tool("git_get-ref",
                                         {"owner": "octo", "repo": "hello", "ref": "heads/main"})
            assert not ref.is_error
            bad = await client.call_tool("git_get-ref",
                                         {"owner": "octo", "repo": "hello", "ref": "../../admin"})
            assert bad.is_error and "would leave its path segment" in bad.text
            sneaky = await client.call_tool("repos_get", {"owner": "..", "repo": "x"})
            assert sneaky.is_error

    seen.clear()
    asyncio.run(main())
    assert [str(r.url) for r in seen] == ["https://api.github.com/repos/octo/hello",
                                          "https://api.github.com/repos/octo/hello/git/ref/heads/main"]


def test_the_build_is_lazy_a_call_translates_its_own_schemas_a_listing_each_once(monkeypatch):
    from rondo.openapi import build as build_module
    from rondo.openapi.schemas import Translator

    made: list[Translator] = []

    class Counting(Translator):
        def __init__(self, doc):
            super().__init__(doc)
            made.append(self)

    monkeypatch.setattr(build_module, "Translator", Counting)
    client = httpx.AsyncClient(base_url="https://api.github.com", transport=httpx.MockTransport(
        lambda request: httpx.Response(200, json={"full_name": "octo/hello", "id": 1})))
    server = from_openapi(DOCUMENT, client, unconfirmed="run")
    [tr] = made
    assert len(server.tools) == 1223
    assert tr.roots == 0 and tr.built == {}  # building translated no schema at all

    def filled():
        return [n for n, t in server.tools.items() if "properties" in t.wire["inputSchema"]]

    async def main():
        async with Client(server) as mcp:
            got = await mcp.call_tool("repos_get", {"owner": "octo", "repo": "hello"})
            assert got.structured_content == {"full_name": "octo/hello", "id": 1}
            assert filled() == ["repos_get"]
            assert tr.roots == 3  # owner, repo and the output
            tool = server.tools["repos_get"].wire
            own = set(tool["outputSchema"].get("$defs", {})) | set(
                tool["inputSchema"].get("$defs", {}))
            assert set(tr.built) == own  # only what this tool's schemas refer to
            assert len(own) < 20
            listed = await mcp.list_tools()
            assert len(listed) == 1223 and len(filled()) == 1223
            assert set(tr.built.values()) == {1}  # each shared schema translated once
            assert len(tr.built) > 500
            roots = tr.roots
            await mcp.list_tools(refresh=True)
            assert tr.roots == roots

    asyncio.run(main())
