"""The conformance fixture: every tool, resource and prompt the official runner expects.

Written with rondo's public API only, exactly as a user would. Run:
    python conformance/server.py --port 3000     # serves http://127.0.0.1:3000/mcp
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import rondo
from rondo import InputRequired, ToolError, elicit, roots, sampling
from rondo.content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    audio,
    embedded,
    image,
    text,
    user,
)
from rondo.legacy import close_stream
from rondo.skills import Skills, declare

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = rondo.Server(
    "rondo-conformance",
    "1.0.0",
    instructions="Fixture server for the MCP conformance runner.",
)


def name_form(message: str, field: str) -> dict[str, Any]:
    return elicit.form(
        message,
        {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]},
    )


CONFIRM = elicit.form(
    "Please confirm",
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
)

# -- plain tools -------------------------------------------------------------------------------


@server.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> ImageContent:
    """Returns a PNG image."""
    return image(PNG, "image/png")


@server.tool
def test_audio_content() -> AudioContent:
    """Returns a WAV sound."""
    return audio(WAV, "audio/wav")


@server.tool
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return embedded(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool
def test_multiple_content_types() -> list[ContentBlock]:
    """Returns text, an image and a resource."""
    return [
        text("Multiple content types test:"),
        image(PNG, "image/png"),
        embedded(
            "test://mixed-content-resource",
            text='{"test":"data","value":123}',
            mime_type="application/json",
        ),
    ]


@server.tool
def test_error_handling() -> str:
    """Always fails with a tool error."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
async def test_tool_with_progress(ctx: rondo.Context) -> str:
    """Reports progress three times, then answers with the progress token."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step != 100:
            await asyncio.sleep(0.05)
    return str(ctx.progress_token)


@server.tool
async def test_tool_with_logging(ctx: rondo.Context) -> str:
    """Logs three messages while it runs."""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(message)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool
async def test_reconnection(ctx: rondo.Context) -> str:
    """Ends its SSE stream mid-call; the result arrives when the client resumes (2025-11-25)."""
    close_stream(ctx)  # SSE polling: the client reconnects with Last-Event-ID
    await asyncio.sleep(0.1)
    return "Reconnection test completed successfully"


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Echoes its arguments; its input schema uses JSON Schema 2020-12 keywords."""
    return json.dumps(arguments, sort_keys=True)


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    }
)
def test_header_param(region: str) -> str:
    """Echoes a header-mirrored parameter."""
    return f"Region: {region}"


# -- tools that ask the client (MRTR on 2026-07-28, server requests on 2025-11-25) -------------


@server.tool
async def test_sampling(prompt: str, ctx: rondo.Context) -> str:
    """Asks the client's model to answer `prompt`."""
    answer = await ctx.ask("sample", sampling.create_message([prompt], 100))
    return f"LLM response: {answer.text}"


@server.tool
async def test_elicitation(message: str, ctx: rondo.Context) -> str:
    """Asks the user for a username and an email."""
    request = elicit.form(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    answer = await ctx.ask("user_info", request)
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
async def test_elicitation_sep1034_defaults(ctx: rondo.Context) -> str:
    """Asks for a form whose fields all have defaults."""
    request = elicit.form(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "default": True},
            },
            "required": [],
        },
    )
    answer = await ctx.ask("defaults", request)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
async def test_elicitation_sep1330_enums(ctx: rondo.Context) -> str:
    """Asks for a form with every kind of enum field."""
    request = elicit.form(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
            "required": [],
        },
    )
    answer = await ctx.ask("enums", request)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@server.tool
def test_input_required_result_elicitation(ctx: rondo.Context) -> str:
    """Asks for the user's name."""
    answer = ctx.ask("user_name", name_form("What is your name?", "name"))
    if not answer.accepted:
        return "No name given."
    return f"Hello, {answer.content['name']}!"


@server.tool
def test_input_required_result_sampling(ctx: rondo.Context) -> str:
    """Asks the client's model a question."""
    answer = ctx.ask(
        "capital_question", sampling.create_message(["What is the capital of France?"], 100)
    )
    return f"Sampling result: {answer.text}"


@server.tool
def test_input_required_result_list_roots(ctx: rondo.Context) -> str:
    """Asks the client for its roots."""
    found = ctx.ask("client_roots", roots.list())
    return f"Found {len(found)} root(s)"


@server.tool
def test_input_required_result_request_state(ctx: rondo.Context) -> Any:
    """The explicit style: ask, carry a state, and check it on the retry."""
    answer = elicit.response(ctx, "confirm", CONFIRM)
    if answer is elicit.MISSING or ctx.state != {"step": "confirm"}:
        return InputRequired(input_requests={"confirm": CONFIRM}, state={"step": "confirm"})
    return f"state-ok: confirmed={answer.content.get('ok') if answer.content else None}"


@server.tool
def test_input_required_result_multiple_inputs(ctx: rondo.Context) -> str:
    """Asks for a name, a sampled greeting and the roots in one round."""
    answers = ctx.ask_all(
        {
            "user_name": name_form("What is your name?", "name"),
            "greeting": sampling.create_message(["Generate a greeting"], 50),
            "client_roots": roots.list(),
        }
    )
    name = answers["user_name"].content["name"] if answers["user_name"].accepted else "?"
    return f"Name: {name}; Greeting: {answers['greeting'].text}; Roots: {len(answers['client_roots'])}"


@server.tool
def test_input_required_result_multi_round(ctx: rondo.Context) -> str:
    """Asks two questions, one round after the other."""
    first = ctx.ask("step1", name_form("Step 1: What is your name?", "name"))
    second = ctx.ask("step2", name_form("Step 2: What is your favorite color?", "color"))
    name = first.content["name"] if first.accepted else "someone"
    color = second.content["color"] if second.accepted else "no color"
    return f"Multi-round complete for {name} who likes {color}"


@server.tool
def test_input_required_result_tampered_state(ctx: rondo.Context) -> str:
    """Asks for a confirmation; its request state must come back untouched."""
    answer = ctx.ask("confirm", CONFIRM)
    return f"Confirmed: {answer.accepted}"


@server.tool
def test_input_required_result_capabilities(ctx: rondo.Context) -> str:
    """Asks only for what the client declared it can answer."""
    caps = ctx.client_capabilities
    wanted: dict[str, Any] = {}
    if "sampling" in caps:
        wanted["sample_input"] = sampling.create_message(["Sample request"], 50)
    if "elicitation" in caps:
        wanted["user_input"] = name_form("What is your name?", "name")
    if not wanted:
        wanted["sample_input"] = sampling.create_message(["Sample request"], 50)
    answers = ctx.ask_all(wanted)
    return f"Received {len(answers)} answer(s)"


@server.tool
def test_missing_capability(ctx: rondo.Context) -> str:
    """Needs sampling: a client without it gets -32021."""
    answer = ctx.ask("sample", sampling.create_message(["Say hello"], 20))
    return f"Success: {answer.text}"


@server.tool
def test_streaming_elicitation(ctx: rondo.Context) -> str:
    """Asks a yes/no question."""
    answer = ctx.ask("confirm", CONFIRM)
    return f"Streaming elicitation answered: {answer.action}"


@server.tool
def test_logging_tool(ctx: rondo.Context) -> str:
    """Logs a message (sent only if the request asked for logs)."""
    ctx.info("test_logging_tool ran")
    return "Logged"


@server.tool
def test_trigger_tool_change() -> str:
    """Tells listening clients that the tool list changed."""
    server.notify_tools_changed()
    return "Tool list change notified"


@server.tool
def test_trigger_prompt_change() -> str:
    """Tells listening clients that the prompt list changed."""
    server.notify_prompts_changed()
    return "Prompt list change notified"


# -- the skills extension (io.modelcontextprotocol/skills) -------------------------------------
# One skill from a directory (with subdirectories, for resources/directory/read) and one
# declared in code.
SKILLS_DIR = Path(__file__).resolve().parent / "skills"
server.extension(Skills(SKILLS_DIR, skills=[declare(
    "release-notes", "Write release notes from a list of merged changes.",
    "# Release notes\n\nGroup the changes by kind; see templates/NOTES.md.\n",
    files={"templates/NOTES.md": "## Added\n\n## Fixed\n"})]))


# -- the tasks extension (io.modelcontextprotocol/tasks) --------------------------------------


@server.tool
def greet(name: str) -> str:
    """Says hello; never a task."""
    return f"Hello, {name}!"


@server.tool(task="optional")
async def slow_compute(seconds: float, label: str, ctx: rondo.Context) -> str:
    """Sleeps `seconds` as a task (0 answers at once, no task)."""
    if seconds <= 0:
        return f"{label}: done at once"
    await ctx.start_task(f"computing {label}")
    await asyncio.sleep(seconds)
    return f"{label}: done after {seconds:g} s"


@server.tool(task="required")
async def failing_job(ctx: rondo.Context) -> str:
    """A task whose tool reports an error after about a second."""
    await ctx.start_task()
    await asyncio.sleep(1)
    raise ToolError("the job failed")


@server.tool(task="required")
async def protocol_error_job(ctx: rondo.Context) -> str:
    """A task that ends in a protocol error."""
    await ctx.start_task()
    raise rondo.McpError(-32603, "the job hit an internal error")


@server.tool(task="optional")
async def confirm_delete(filename: str, ctx: rondo.Context) -> str:
    """A task that asks for confirmation while it runs."""
    await ctx.start_task(f"about to delete {filename}")
    answer = await ctx.ask("confirm", elicit.form(
        f"Delete {filename}?",
        {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]},
    ))
    if answer.accepted and answer.content["confirm"]:
        return f"Deleted {filename}."
    return f"Kept {filename}."


@server.tool(task="optional")
async def multi_input(ctx: rondo.Context) -> str:
    """A task that asks two questions at once."""
    await ctx.start_task()
    answers = await ctx.ask_all({
        "name": name_form("Your name?", "name"),
        "confirm": elicit.form("Go ahead?", {"type": "object", "properties": {
            "confirm": {"type": "boolean"}}, "required": ["confirm"]}),
    })
    name = answers["name"].content.get("name") if answers["name"].accepted else "nobody"
    return f"{name} answered both questions."


@server.tool(task="required")
async def test_tool_with_task(ctx: rondo.Context) -> str:
    """Asks for a name (MRTR, before the task), then greets as a task."""
    answer = await ctx.ask("user_name", name_form("What is your name?", "name"))
    name = answer.content["name"] if answer.accepted else "stranger"
    await ctx.start_task(f"greeting {name}")
    await asyncio.sleep(0.2)
    return f"Hello, {name}, from a task!"


# -- resources -----------------------------------------------------------------------------


@server.resource("test://static-text", name="static-text", mime_type="text/plain",
                 description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png",
                 description="A static binary resource")
def static_binary() -> bytes:
    import base64

    return base64.b64decode(PNG)


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain",
                 description="A resource clients can subscribe to")
def watched_resource() -> str:
    return "Watched resource content"


@server.resource("test://template/{id}/data", name="template", mime_type="application/json",
                 description="Data for an id")
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts -------------------------------------------------------------------------------


@server.prompt
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
    """A prompt that embeds a resource."""
    return [
        user(embedded(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")),
        user("Please process the embedded resource above."),
    ]


@server.prompt
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [user(image(PNG, "image/png")), user("Please analyze the image above.")]


@server.prompt
def test_input_required_result_prompt(ctx: rondo.Context) -> str:
    """A prompt that asks the user for context first."""
    answer = ctx.ask("user_context", name_form("What context should the prompt use?", "context"))
    context = answer.content["context"] if answer.accepted else "none"
    return f"Prompt with context: {context}"


@server.completion
def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    server.run_http(host=args.host, port=args.port)


if __name__ == "__main__":
    main()
