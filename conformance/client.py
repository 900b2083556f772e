"""rondo's client under the MCP conformance runner.

The runner starts `python conformance/client.py URL` with MCP_CONFORMANCE_SCENARIO,
MCP_CONFORMANCE_PROTOCOL_VERSION and (for some scenarios) MCP_CONFORMANCE_CONTEXT set. Each
scenario below drives the mock server the way a real host would; exit 0 means "done", not
"passed" (the runner judges the wire).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from rondo.client import (  # noqa: E402
    Client,
    ClientCredentials,
    ClientError,
    ElicitRequest,
    EnterpriseAuth,
    HeadlessRedirect,
    JwtBearer,
    OAuth,
    SampleRequest,
    form_defaults,
)
from rondo.client.skills import SkillsClient  # noqa: E402

Scenario = Callable[[str, str, dict[str, Any]], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


def accept_defaults(request: ElicitRequest) -> dict[str, Any]:
    """Accept a form with its schema defaults (what SEP-1034 asks a client to pre-fill)."""
    return {"action": "accept", "content": form_defaults(request.requested_schema or {})}


def sample(request: SampleRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "conformance"}


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Placeholder arguments of the right JSON type for every property of a tool."""
    stubs = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
    props = schema.get("properties") or {}
    return {k: stubs[p["type"]] for k, p in props.items() if isinstance(p, dict) and p.get("type") in stubs}


@scenario("initialize")
async def initialize(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version, name="rondo-conformance") as client:
        await client.list_tools()


@scenario("sep-2640-client-no-prefetch")
async def skills_no_prefetch(url: str, version: str, context: dict[str, Any]) -> None:
    """A host connects and lists the server's skills, as at start-up: the catalog is read,
    no skill file is (the check counts every resources/read of a listed file)."""
    async with Client(url, protocol=version) as client:
        skills = SkillsClient(client)
        if await skills.supported():
            for entry in await skills.list_skills():
                print(f"skill {entry['frontmatter'].get('name')}: {entry['uri']}", file=sys.stderr)


@scenario("sep-2640-client-verify-digest", "sep-2640-client-verify-size",
          "sep-2640-client-verify-frontmatter")
async def skills_verify(url: str, version: str, context: dict[str, Any]) -> None:
    """A host loads the first skill when the model needs it and then reads its other files;
    a SKILL.md that fails verification stops it there (SkillVerificationError, exit 1)."""
    async with Client(url, protocol=version) as client:
        skills = SkillsClient(client)
        entries = await skills.list_skills()
        if entries:
            skill = await skills.load(entries[0])
            for path in skill.files:
                if path != "SKILL.md":
                    await skill.read(path)


@scenario("tools_call")
async def tools_call(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        tools = {t.name for t in await client.list_tools()}
        if "add_numbers" in tools:
            await client.call_tool("add_numbers", {"a": 5, "b": 3})


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version, on_elicit=accept_defaults) as client:
        await client.list_tools()
        await client.call_tool("test_client_elicitation_defaults", {})


@scenario("sse-retry")
async def sse_retry(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        await client.list_tools()
        await client.call_tool("test_reconnection", {})


@scenario("request-metadata")
async def request_metadata(url: str, version: str, context: dict[str, Any]) -> None:
    # Every handler installed, so every capability shows up in `_meta`.
    async with Client(url, protocol=version, on_elicit=accept_defaults, on_sample=sample,
                      on_roots=[{"uri": "file:///tmp", "name": "tmp"}]) as client:
        await client.discover()
        await client.list_tools()


@scenario("sep-2322-client-request-state")
async def request_state(url: str, version: str, context: dict[str, Any]) -> None:
    def confirm(request: ElicitRequest) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirmed": True}}

    async with Client(url, protocol=version, on_elicit=confirm) as client:
        await client.list_tools()
        # Pause the first call by hand so an unrelated call runs between its rounds: the
        # unrelated call must carry no inputResponses or requestState.
        pending = await client.call_tool("test_mrtr_echo_state", {}, manual=True)
        await client.call_tool("test_mrtr_unrelated", {})
        await client.resume(pending)
        await client.call_tool("test_mrtr_no_state", {})
        await client.call_tool("test_mrtr_no_result_type", {})


@scenario("http-standard-headers")
async def standard_headers(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool.name, {})
        for resource in await client.list_resources():
            await client.read_resource(resource.uri)
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt.name, {})


@scenario("http-custom-headers")
async def custom_headers(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        await client.list_tools()
        for call in context.get("toolCalls", []):
            await client.call_tool(call["name"], call.get("arguments") or {})


@scenario("http-invalid-tool-headers")
async def invalid_tool_headers(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        for tool in await client.list_tools():  # the invalid ones are already dropped
            await client.call_tool(tool.name, stub_arguments(tool.input_schema))


@scenario("json-schema-ref-no-deref")
async def ref_no_deref(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        await client.list_tools()


@scenario("json-schema-2020-12-preservation")
async def schema_preservation(url: str, version: str, context: dict[str, Any]) -> None:
    async with Client(url, protocol=version) as client:
        tools = {t.name: t for t in await client.list_tools()}
        source = tools.get("json_schema_2020_12_tool")
        if source is not None and "json_schema_echo" in tools:
            await client.call_tool("json_schema_echo", {"schema": source.input_schema})


# The conformance authorization servers approve at once, so the redirect is read headlessly;
# the client ID metadata document URL is the one the suite expects (it is never fetched).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


async def use_tools(client: Client) -> None:
    for tool in await client.list_tools():
        await client.call_tool(tool.name, {})


async def sign_in(url: str, version: str, context: dict[str, Any]) -> None:
    """Every auth/* scenario with a user: authorization code + PKCE, identity by preference."""
    oauth = OAuth(redirect=HeadlessRedirect(REDIRECT_URI), client_metadata_url=CIMD_URL,
                  client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                  client_issuer=context.get("issuer"), client_name="rondo-conformance", dpop=True)
    async with Client(url, protocol=version, auth=oauth) as client:
        await use_tools(client)


@scenario("auth/client-credentials-basic", "auth/client-credentials-jwt")
async def client_credentials(url: str, version: str, context: dict[str, Any]) -> None:
    if "private_key_pem" in context:
        auth = ClientCredentials(context["client_id"], private_key=context["private_key_pem"],
                                 signing_algorithm=context.get("signing_algorithm", "ES256"))
    else:
        auth = ClientCredentials(context["client_id"], client_secret=context["client_secret"])
    async with Client(url, protocol=version, auth=auth) as client:
        await use_tools(client)


@scenario("auth/wif-jwt-bearer")
async def workload_identity(url: str, version: str, context: dict[str, Any]) -> None:
    auth = JwtBearer(context["valid_jwt"], client_id=context["client_id"])
    async with Client(url, protocol=version, auth=auth) as client:
        await use_tools(client)


@scenario("auth/enterprise-managed-authorization")
async def enterprise_managed(url: str, version: str, context: dict[str, Any]) -> None:
    auth = EnterpriseAuth(id_token=context["idp_id_token"], idp_token_endpoint=context["idp_token_endpoint"],
                          idp_client_id=context["idp_client_id"], client_id=context["client_id"],
                          client_secret=context["client_secret"])
    async with Client(url, protocol=version, auth=auth) as client:
        await use_tools(client)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: client.py SERVER_URL", file=sys.stderr)
        return 2
    url = argv[-1]
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "2026-07-28"
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    run = SCENARIOS.get(name) or (sign_in if name.startswith("auth/") else None)
    if run is None:
        print(f"scenario {name!r} is not supported by this client", file=sys.stderr)
        return 1
    try:
        asyncio.run(run(url, version, context))
    except ClientError as exc:  # a refusal the scenario may want (a wrong iss, a foreign resource)
        print(f"client.py: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
